/* rc_harness.c - the in-process client/server pair of the hipobj-rc-v2
 * tests (see rc_harness.h): control ops that call the server engine
 * directly, READY on its own thread, and a memory object store backend. */
#include "rc_harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rdma/mr.h"
#include "rdma/qp.h"
#include "src/base/crc64nvme.h"
#include "src/base/error.h"

/* ---- object store backend ---------------------------------------------------
 */

static struct h_object *find_locked(struct harness *h, const char *b,
                                    const char *k) {
  for (size_t i = 0; i < h->nobjects; i++)
    if (!strcmp(h->objects[i].bucket, b) && !strcmp(h->objects[i].key, k))
      return &h->objects[i];
  return NULL;
}

static void store_locked(struct harness *h, const char *b, const char *k,
                         const void *data, size_t len) {
  struct h_object *o = find_locked(h, b, k);
  if (!o) {
    cr_assert_lt(h->nobjects, H_MAX_OBJECTS);
    o = &h->objects[h->nobjects++];
    snprintf(o->bucket, sizeof o->bucket, "%s", b);
    snprintf(o->key, sizeof o->key, "%s", k);
  }
  free(o->data);
  o->data = malloc(len ? len : 1);
  cr_assert_not_null(o->data);
  memcpy(o->data, data, len);
  o->len = len;
  /* Any stable digest serves as ETag here. */
  snprintf(o->etag, sizeof o->etag, "\"%016llx\"",
           (unsigned long long)crc64nvme(data, len));
}

void h_put_object(struct harness *h, const char *b, const char *k,
                  const void *data, size_t len) {
  pthread_mutex_lock(&h->lock);
  store_locked(h, b, k, data, len);
  pthread_mutex_unlock(&h->lock);
}

const struct h_object *h_find(struct harness *h, const char *b, const char *k) {
  pthread_mutex_lock(&h->lock);
  const struct h_object *o = find_locked(h, b, k);
  pthread_mutex_unlock(&h->lock);
  return o;
}

size_t h_complete(struct harness *h, const char *b, const char *k,
                  const char *upload_id) {
  pthread_mutex_lock(&h->lock);
  size_t total = 0;
  for (size_t i = 0; i < h->nparts; i++)
    if (!strcmp(h->parts[i].upload_id, upload_id))
      total += h->parts[i].len;
  unsigned char *all = malloc(total ? total : 1), *p = all;
  cr_assert_not_null(all);
  for (unsigned num = 1; num <= 10000 && p < all + total; num++)
    for (size_t i = 0; i < h->nparts; i++)
      if (!strcmp(h->parts[i].upload_id, upload_id) &&
          h->parts[i].number == num) {
        memcpy(p, h->parts[i].data, h->parts[i].len);
        p += h->parts[i].len;
      }
  store_locked(h, b, k, all, total);
  free(all);
  pthread_mutex_unlock(&h->lock);
  return total;
}

static int be_authorize(void *ctx, const struct rdma_server_target *t,
                        struct rdma_server_answer *a) {
  struct harness *h = ctx;
  if (strcmp(t->principal, h->principal) ||
      (h->deny_bucket && !strcmp(t->bucket, h->deny_bucket))) {
    a->http_status = 403;
    snprintf(a->s3_code, sizeof a->s3_code, "AccessDenied");
    snprintf(a->message, sizeof a->message, "Access Denied");
    return -1;
  }
  return 0;
}

static int be_read(void *ctx, const struct rdma_server_target *t, void *dst,
                   uint64_t *nread, struct rdma_server_object *obj,
                   struct rdma_server_answer *a) {
  struct harness *h = ctx;
  pthread_mutex_lock(&h->lock);
  const struct h_object *o = find_locked(h, t->bucket, t->key);
  if (!o) {
    pthread_mutex_unlock(&h->lock);
    a->http_status = 404;
    snprintf(a->s3_code, sizeof a->s3_code, "NoSuchKey");
    snprintf(a->message, sizeof a->message, "The key does not exist.");
    return -1;
  }
  obj->length = o->len;
  snprintf(obj->etag, sizeof obj->etag, "%s", o->etag);
  uint64_t n = 0;
  if (t->offset < o->len) {
    n = o->len - t->offset;
    if (n > t->size)
      n = t->size;
    memcpy(dst, o->data + t->offset, (size_t)n);
  }
  *nread = n;
  pthread_mutex_unlock(&h->lock);
  return 0;
}

static int be_commit(void *ctx, const struct rdma_server_target *t,
                     const void *data, uint32_t len, uint64_t crc,
                     struct rdma_server_object *obj,
                     struct rdma_server_answer *a) {
  struct harness *h = ctx;
  (void)a;
  cr_expect_eq(crc, crc64nvme(data, len), "the engine's CRC is wrong");
  pthread_mutex_lock(&h->lock);
  if (t->part_number) {
    cr_assert_lt(h->nparts, H_MAX_PARTS);
    struct h_part *p = &h->parts[h->nparts++];
    snprintf(p->upload_id, sizeof p->upload_id, "%s", t->upload_id);
    p->number = t->part_number;
    p->data = malloc(len);
    cr_assert_not_null(p->data);
    memcpy(p->data, data, len);
    p->len = len;
    snprintf(obj->etag, sizeof obj->etag, "\"part%u\"", p->number);
  } else {
    store_locked(h, t->bucket, t->key, data, len);
    snprintf(obj->etag, sizeof obj->etag, "%s",
             find_locked(h, t->bucket, t->key)->etag);
  }
  pthread_mutex_unlock(&h->lock);
  return 0;
}

/* ---- control ops ------------------------------------------------------------
 */

static void to_answer(const struct rdma_server_answer *s,
                      struct rdma_control_answer *a) {
  a->http_status = s->http_status;
  snprintf(a->s3_code, sizeof a->s3_code, "%s", s->s3_code);
  snprintf(a->s3_message, sizeof a->s3_message, "%s", s->message);
  for (size_t i = 0; i < s->n; i++)
    hbuf_printf(&a->headers, "%s: %s\n", s->hdrs[i].name, s->hdrs[i].value);
}

struct req_copy {
  struct h_header h[16];
  struct rdma_header v[16];
  size_t n;
};

static void copy_request(struct harness *h, const char *path,
                         const struct rdma_header *in, size_t n,
                         struct req_copy *c) {
  cr_assert_leq(n, 16);
  for (size_t i = 0; i < n; i++) {
    snprintf(c->h[i].name, sizeof c->h[i].name, "%s", in[i].name);
    snprintf(c->h[i].value, sizeof c->h[i].value, "%s", in[i].value);
  }
  c->n = n;
  if (h->on_request)
    h->on_request(h, path, c->h, &c->n);
  for (size_t i = 0; i < c->n; i++)
    c->v[i] = (struct rdma_header){c->h[i].name, c->h[i].value};
}

static struct rdma_server_backend backend_of(struct harness *h) {
  return (struct rdma_server_backend){be_authorize, be_read, be_commit, h};
}

static int op_call(void *ctx, const char *path, const struct rdma_header *hdrs,
                   size_t n, unsigned timeout_ms,
                   struct rdma_control_answer *ans) {
  struct harness *h = ctx;
  (void)timeout_ms;
  struct req_copy c;
  copy_request(h, path, hdrs, n, &c);
  struct rdma_server_answer a;
  struct rdma_server_backend be = backend_of(h);
  memset(&a, 0, sizeof a);
  if (!strcmp(path, RDMA_PATH_PREPARE)) {
    atomic_fetch_add(&h->prepares, 1);
    if (!h->on_prepare || !h->on_prepare(h, &a))
      rdma_server_prepare(h->srv, c.v, c.n, h->principal, &be,
                          h->prepare_faults, &a);
  } else if (!strcmp(path, RDMA_PATH_CANCEL)) {
    atomic_fetch_add(&h->cancels, 1);
    rdma_server_cancel(h->srv, c.v, c.n, h->principal, &a);
    atomic_store(&h->cancel_status, a.http_status);
  } else {
    cr_assert_fail("unexpected path %s", path);
  }
  if (h->on_answer)
    h->on_answer(h, path, &a);
  to_answer(&a, ans);
  return 0;
}

struct pending {
  struct harness *h;
  struct req_copy c;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done, abandoned, refs;
  struct rdma_server_answer a;
  void (*answered)(void *);
  void *arg;
};

static void pending_unref(struct pending *p) {
  pthread_mutex_lock(&p->lock);
  int last = --p->refs == 0;
  pthread_mutex_unlock(&p->lock);
  if (last) {
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p);
  }
}

static void *ready_main(void *arg) {
  struct pending *p = arg;
  struct harness *h = p->h;
  if (h->ready_delay_ms)
    usleep(h->ready_delay_ms * 1000u);
  struct rdma_server_answer a;
  struct rdma_server_backend be = backend_of(h);
  atomic_fetch_add(&h->readies, 1);
  rdma_server_ready(h->srv, p->c.v, p->c.n, h->principal, &be, h->ready_faults,
                    &a);
  if (h->on_answer)
    h->on_answer(h, RDMA_PATH_READY, &a);
  pthread_mutex_lock(&p->lock);
  p->a = a;
  p->done = 1;
  /* Under the lock: ready_abort cannot return while this runs. */
  if (!p->abandoned)
    p->answered(p->arg);
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
  pending_unref(p);
  pthread_mutex_lock(&h->lock);
  h->threads--;
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->lock);
  return NULL;
}

static int op_ready_start(void *ctx, const char *path,
                          const struct rdma_header *hdrs, size_t n,
                          unsigned timeout_ms, void (*answered)(void *),
                          void *arg, void **pending) {
  struct harness *h = ctx;
  (void)timeout_ms;
  struct pending *p = calloc(1, sizeof *p);
  cr_assert_not_null(p);
  p->h = h;
  copy_request(h, path, hdrs, n, &p->c);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->cond, NULL);
  p->refs = 2;
  p->answered = answered;
  p->arg = arg;
  pthread_mutex_lock(&h->lock);
  h->threads++;
  pthread_mutex_unlock(&h->lock);
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
  ts.tv_sec += timeout_ms / 1000;
  ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&p->lock);
  while (!p->done && pthread_cond_timedwait(&p->cond, &p->lock, &ts) == 0)
    ;
  if (p->done) {
    to_answer(&p->a, ans);
  } else {
    p->abandoned = 1;
    ans->http_status = 0;
    ans->transport_status = HIPOBJ_E_TIMEOUT;
    snprintf(ans->reason, sizeof ans->reason, "READY timed out");
  }
  pthread_mutex_unlock(&p->lock);
  pending_unref(p);
  return 0;
}

static void op_ready_abort(void *ctx, void *pending) {
  (void)ctx;
  struct pending *p = pending;
  pthread_mutex_lock(&p->lock);
  p->abandoned = 1;
  pthread_mutex_unlock(&p->lock);
  pending_unref(p);
}

/* ---- lifecycle ------------------------------------------------------------
 */

void h_start(struct harness *h, const struct rdma_server_opts *so,
             const struct rdma_engine_opts *eo) {
  struct hipobj_error err;
  memset(&err, 0, sizeof err);
  pthread_mutex_init(&h->lock, NULL);
  pthread_cond_init(&h->cond, NULL);
  if (!h->principal)
    h->principal = "alice";
  cr_assert_eq(rdma_server_create(so, &h->srv, &err), HIPOBJ_OK, "%s",
               err.message);
  cr_assert_eq(rdma_engine_create(eo, &h->eng, &err), HIPOBJ_OK, "%s",
               err.message);
  h->ops = (struct rdma_control_ops){op_call, op_ready_start, op_ready_wait,
                                     op_ready_abort, h};
}

void h_stop(struct harness *h) {
  pthread_mutex_lock(&h->lock);
  while (h->threads > 0)
    pthread_cond_wait(&h->cond, &h->lock);
  pthread_mutex_unlock(&h->lock);
  struct rdma_server_stats st;
  rdma_server_get_stats(h->srv, &st);
  cr_expect_eq(st.sessions, 0, "%u server sessions left", st.sessions);
  rdma_engine_destroy(h->eng);
  rdma_server_destroy(h->srv);
  cr_expect_eq(rdma_qp_live_count(), 0, "QPs leaked");
  cr_expect_eq(rdma_mr_live_count(), 0, "MRs leaked");
  for (size_t i = 0; i < h->nobjects; i++)
    free(h->objects[i].data);
  for (size_t i = 0; i < h->nparts; i++)
    free(h->parts[i].data);
  pthread_mutex_destroy(&h->lock);
  pthread_cond_destroy(&h->cond);
}

/* ---- helpers ----------------------------------------------------------------
 */

void h_answer_set(struct rdma_server_answer *a, const char *name,
                  const char *value) {
  for (size_t i = 0; i < a->n; i++)
    if (!strcasecmp(a->hdrs[i].name, name)) {
      snprintf(a->hdrs[i].value, sizeof a->hdrs[i].value, "%s", value);
      return;
    }
  cr_assert_lt(a->n, RDMA_SERVER_MAX_HEADERS);
  snprintf(a->hdrs[a->n].name, sizeof a->hdrs[a->n].name, "%s", name);
  snprintf(a->hdrs[a->n].value, sizeof a->hdrs[a->n].value, "%s", value);
  a->n++;
}

void h_answer_del(struct rdma_server_answer *a, const char *name) {
  for (size_t i = 0; i < a->n; i++)
    if (!strcasecmp(a->hdrs[i].name, name)) {
      memmove(&a->hdrs[i], &a->hdrs[i + 1], (a->n - i - 1) * sizeof a->hdrs[0]);
      a->n--;
      i--;
    }
}

void h_header_set(struct h_header *hdrs, size_t n, const char *name,
                  const char *value) {
  for (size_t i = 0; i < n; i++)
    if (!strcasecmp(hdrs[i].name, name))
      snprintf(hdrs[i].value, sizeof hdrs[i].value, "%s", value);
}

struct rdma_rc_request h_request(struct harness *h, const char *bucket,
                                 const char *key, void *buf, uint64_t off,
                                 uint64_t size) {
  return (struct rdma_rc_request){.bucket = bucket,
                                  .key = key,
                                  .offset = off,
                                  .size = size,
                                  .buf = buf,
                                  .mem_kind = RDMA_MEM_HOST,
                                  .ops = &h->ops};
}

void h_fill(unsigned char *p, size_t n, unsigned seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (unsigned char)x;
  }
}

unsigned char *h_alloc(size_t n) {
  void *p = NULL;
  cr_assert_eq(posix_memalign(&p, 4096, n ? n : 1), 0);
  memset(p, 0, n);
  return p;
}
