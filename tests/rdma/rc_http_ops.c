/* rc_http_ops.c - the control ops of rdma/rc_client.h over HTTP, for the
 * tests against hipobj-server (see rc_http_ops.h). */
#include "rc_http_ops.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../server/harness.h"
#include "src/base/error.h"

/* The signed request: the engine's x-amz-rdma-* headers plus
 * Content-Length: 0, all in SignedHeaders (harness.c signs every header
 * of .hdrs besides host, x-amz-date and x-amz-content-sha256). */
struct wire {
  char lines[20][512];
  const char *hdrs[21];
};

static void build(const struct rdma_header *h, size_t n, struct wire *w) {
  cr_assert_leq(n, 19);
  size_t k = 0;
  for (size_t i = 0; i < n; i++, k++) {
    snprintf(w->lines[k], sizeof w->lines[k], "%s: %s", h[i].name, h[i].value);
    w->hdrs[k] = w->lines[k];
  }
  snprintf(w->lines[k], sizeof w->lines[k], "Content-Length: 0");
  w->hdrs[k] = w->lines[k];
  w->hdrs[k + 1] = NULL;
}

/* "<Code>X</Code>" of an error body (xml_text's buffer is not
 * thread-safe, READY answers arrive on several threads). */
static void element(const char *body, const char *el, char *out, size_t n) {
  char open[32], close_[32];
  snprintf(open, sizeof open, "<%s>", el);
  snprintf(close_, sizeof close_, "</%s>", el);
  const char *a = body ? strstr(body, open) : NULL;
  const char *b = a ? strstr(a, close_) : NULL;
  out[0] = '\0';
  if (a && b)
    snprintf(out, n, "%.*s", (int)(b - a - strlen(open)), a + strlen(open));
}

static void to_answer(int rc, struct http_resp *r,
                      struct rdma_control_answer *ans) {
  if (rc != 0 || r->status == 0) {
    ans->http_status = 0;
    ans->transport_status = rc != 0 ? HIPOBJ_E_CONNECT : HIPOBJ_E_NETWORK;
    snprintf(ans->reason, sizeof ans->reason, "%s",
             rc != 0 ? "cannot connect" : "connection closed, no answer");
    return;
  }
  ans->http_status = r->status;
  /* Header lines after the status line, CRLF-terminated. */
  const char *p = strstr(r->head, "\r\n");
  while (p && p[2]) {
    p += 2;
    const char *e = strstr(p, "\r\n");
    size_t len = e ? (size_t)(e - p) : strlen(p);
    hbuf_append(&ans->headers, p, len);
    hbuf_putc(&ans->headers, '\n');
    p = e;
  }
  element(r->body, "Code", ans->s3_code, sizeof ans->s3_code);
  element(r->body, "Message", ans->s3_message, sizeof ans->s3_message);
}

static int post(struct http_ops *h, const char *path,
                const struct rdma_header *hdrs, size_t n,
                struct rdma_control_answer *ans) {
  struct wire w;
  build(hdrs, n, &w);
  struct http_resp r;
  int rc = http_send(h->url,
                     &(struct sreq){.method = "POST",
                                    .target = path,
                                    .hdrs = w.hdrs,
                                    .payload_hash = h->unsigned_payload
                                                        ? "UNSIGNED-PAYLOAD"
                                                        : NULL},
                     &r);
  to_answer(rc, &r, ans);
  if (rc == 0)
    resp_free(&r);
  return 0;
}

static int op_call(void *ctx, const char *path, const struct rdma_header *hdrs,
                   size_t n, unsigned timeout_ms,
                   struct rdma_control_answer *ans) {
  struct http_ops *h = ctx;
  (void)timeout_ms; /* http_send has its own 15 s bound */
  atomic_fetch_add(
      !strcmp(path, RDMA_PATH_PREPARE) ? &h->prepares : &h->cancels, 1);
  return post(h, path, hdrs, n, ans);
}

struct pending {
  struct http_ops *h;
  char path[64];
  struct rdma_header hv[16];
  char names[16][48], values[16][400];
  size_t n;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done, abandoned, refs;
  struct rdma_control_answer ans;
  void (*answered)(void *);
  void *arg;
};

static void unref(struct pending *p) {
  pthread_mutex_lock(&p->lock);
  int last = --p->refs == 0;
  pthread_mutex_unlock(&p->lock);
  if (last) {
    hbuf_free(&p->ans.headers);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p);
  }
}

static void *ready_main(void *arg) {
  struct pending *p = arg;
  struct http_ops *h = p->h;
  struct rdma_control_answer a = {.headers = HBUF_INIT};
  post(h, p->path, p->hv, p->n, &a);
  pthread_mutex_lock(&p->lock);
  p->ans = a;
  p->done = 1;
  if (!p->abandoned)
    p->answered(p->arg);
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
  unref(p);
  atomic_fetch_sub(&h->threads, 1);
  return NULL;
}

static int op_ready_start(void *ctx, const char *path,
                          const struct rdma_header *hdrs, size_t n,
                          unsigned timeout_ms, void (*answered)(void *),
                          void *arg, void **pending) {
  struct http_ops *h = ctx;
  (void)timeout_ms;
  struct pending *p = calloc(1, sizeof *p);
  cr_assert_not_null(p);
  cr_assert_leq(n, 16);
  p->h = h;
  snprintf(p->path, sizeof p->path, "%s", path);
  for (size_t i = 0; i < n; i++) {
    snprintf(p->names[i], sizeof p->names[i], "%s", hdrs[i].name);
    snprintf(p->values[i], sizeof p->values[i], "%s", hdrs[i].value);
    p->hv[i] = (struct rdma_header){p->names[i], p->values[i]};
  }
  p->n = n;
  p->ans.headers = (struct hbuf)HBUF_INIT;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->cond, NULL);
  p->refs = 2;
  p->answered = answered;
  p->arg = arg;
  atomic_fetch_add(&h->readies, 1);
  atomic_fetch_add(&h->threads, 1);
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, ready_main, p), 0);
  pthread_detach(th);
  *pending = p;
  return 0;
}

static int op_ready_wait(void *ctx, void *pending, unsigned timeout_ms,
                         struct rdma_control_answer *ans) {
  (void)ctx;
  struct pending *p = pending;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += timeout_ms / 1000 + 1;
  pthread_mutex_lock(&p->lock);
  while (!p->done && pthread_cond_timedwait(&p->cond, &p->lock, &ts) == 0)
    ;
  if (p->done) {
    ans->http_status = p->ans.http_status;
    ans->transport_status = p->ans.transport_status;
    memcpy(ans->reason, p->ans.reason, sizeof ans->reason);
    memcpy(ans->s3_code, p->ans.s3_code, sizeof ans->s3_code);
    memcpy(ans->s3_message, p->ans.s3_message, sizeof ans->s3_message);
    hbuf_append(&ans->headers, p->ans.headers.data ? p->ans.headers.data : "",
                p->ans.headers.len);
  } else {
    p->abandoned = 1;
    ans->transport_status = HIPOBJ_E_TIMEOUT;
    snprintf(ans->reason, sizeof ans->reason, "READY timed out");
  }
  pthread_mutex_unlock(&p->lock);
  unref(p);
  return 0;
}

static void op_ready_abort(void *ctx, void *pending) {
  (void)ctx;
  struct pending *p = pending;
  pthread_mutex_lock(&p->lock);
  p->abandoned = 1; /* the thread ends when the server answers */
  pthread_mutex_unlock(&p->lock);
  unref(p);
}

void http_ops_init(struct http_ops *h, const char *url) {
  h->url = url;
  h->ops = (struct rdma_control_ops){op_call, op_ready_start, op_ready_wait,
                                     op_ready_abort, h};
}

void http_ops_drain(struct http_ops *h) {
  for (int i = 0; i < 400 && atomic_load(&h->threads) > 0; i++)
    usleep(50 * 1000);
  cr_expect_eq(atomic_load(&h->threads), 0, "READY threads still running");
}
