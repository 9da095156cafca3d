/* rc_server.c - the hipobj-rc-v2 server engine (see rc_server.h; § numbers
 * refer to shared/docs/rdma-wire-protocol.md).
 *
 * A session is created by PREPARE (QP in INIT, staging buffer registered
 * and, for GET, filled; for PUT the receive is posted and, with a real
 * token, the QP is already paired to RTR so that an early client WRITE
 * cannot race READY, §8 item 14), claimed by one READY (Prepared ->
 * Transferring), and destroyed after FINAL, by CANCEL, or by the reaper
 * once T_prep has passed. Sessions are reference counted: the table holds
 * one reference, a READY in its data phase another, so CANCEL during READY
 * only marks the session and wakes the handler (§6.2), and teardown happens
 * when the last holder lets go: QP first, then the MR, then the buffer; a
 * QP that cannot be destroyed leaks its MR and buffer rather than expose
 * freed memory to a late write. */
#include "rc_server_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../src/base/crc64nvme.h"
#include "../src/base/error.h"
#include "../src/base/strutil.h"
#include "mr.h"
#include "qp.h"

/* ---- answers ----------------------------------------------------------------
 */

void rdma_srv_add(struct rdma_server_answer *a, const char *name,
                  const char *fmt, ...) {
  if (a->n >= RDMA_SERVER_MAX_HEADERS)
    return;
  hstrlcpy(a->hdrs[a->n].name, name, sizeof a->hdrs[a->n].name);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->hdrs[a->n].value, sizeof a->hdrs[a->n].value, fmt, ap);
  va_end(ap);
  a->n++;
}

void rdma_srv_reset(struct rdma_server_answer *a) {
  memset(a, 0, sizeof *a);
}

/* An error answer of the route: it carries the protocol echo, so clients
 * tell it from "no such route" (§6.3). */
int rdma_srv_error(struct rdma_server_answer *a, int http, const char *code,
                   const char *fmt, ...) {
  rdma_srv_reset(a);
  a->http_status = http;
  hstrlcpy(a->s3_code, code, sizeof a->s3_code);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->message, sizeof a->message, fmt, ap);
  va_end(ap);
  rdma_srv_add(a, "X-Amz-Rdma-Protocol", "%s", RDMA_PROTOCOL);
  return http;
}

void rdma_server_decline(struct rdma_server_answer *a, const char *why) {
  rdma_srv_reset(a);
  a->http_status = 501;
  hstrlcpy(a->s3_code, "NotImplemented", sizeof a->s3_code);
  hstrlcpy(a->message, why ? why : "RDMA is not available", sizeof a->message);
  rdma_srv_add(a, "X-Amz-Rdma-Protocol-Status", "%s",
               RDMA_PROTOCOL_STATUS_UNSUPPORTED);
}

/* A backend failure: its answer, or a generic 500 when it set none. */
int rdma_srv_backend_error(struct rdma_server_answer *a, const char *what) {
  if (a->http_status < 400)
    return rdma_srv_error(a, 500, "InternalError", "%s failed", what);
  if (!a->s3_code[0])
    hstrlcpy(a->s3_code, "InternalError", sizeof a->s3_code);
  int have_echo = 0;
  for (size_t i = 0; i < a->n; i++)
    have_echo |= !strcasecmp(a->hdrs[i].name, "X-Amz-Rdma-Protocol");
  if (!have_echo)
    rdma_srv_add(a, "X-Amz-Rdma-Protocol", "%s", RDMA_PROTOCOL);
  return a->http_status;
}

const char *rdma_srv_hdr(const struct rdma_header *h, size_t n,
                         const char *name, size_t *len) {
  for (size_t i = 0; i < n; i++)
    if (h[i].name && h[i].value && !strcasecmp(h[i].name, name)) {
      *len = strlen(h[i].value);
      return h[i].value;
    }
  *len = 0;
  return NULL;
}

/* ---- sessions ---------------------------------------------------------------
 */

static void free_session(struct session *x) {
  free(x->principal);
  free(x->bucket);
  free(x->key);
  free(x->upload_id);
  free(x->version_id);
  if (x->wake_fd >= 0)
    close(x->wake_fd);
  free(x);
}

/* QP, then MR, then buffer (§6.2); the counters follow. */
static void destroy_session(struct rdma_server *s, struct session *x) {
  int leak = x->leak;
  if (x->qp) {
    uint32_t qpn = rdma_qp_num(x->qp);
    leak |= rdma_qp_destroy(x->qp) != 0;
    rdma_retired_add(s->retired, qpn, x->server_psn);
  }
  if (!leak) {
    rdma_mr_dereg(x->mr, NULL);
    if (x->buf)
      munmap(x->buf, x->map_len);
  }
  pthread_mutex_lock(&s->lock);
  s->st.sessions--;
  s->st.qps -= x->qp != NULL;
  s->st.mrs -= x->mr != NULL;
  s->st.staging_bytes -= x->size;
  pthread_mutex_unlock(&s->lock);
  free_session(x);
}

/* Takes x out of the table (lock held); returns 1 when that was the last
 * reference. */
static int unlink_locked(struct rdma_server *s, struct session *x) {
  if (!x->in_table)
    return 0;
  for (struct session **p = &s->head; *p; p = &(*p)->next)
    if (*p == x) {
      *p = x->next;
      break;
    }
  x->in_table = 0;
  return --x->refs == 0;
}

void rdma_srv_unref(struct rdma_server *s, struct session *x, int unlink) {
  pthread_mutex_lock(&s->lock);
  int last = unlink && unlink_locked(s, x);
  if (!last)
    last = --x->refs == 0;
  pthread_mutex_unlock(&s->lock);
  if (last)
    destroy_session(s, x);
}

/* A referenced session by id, or NULL (lock held). */
struct session *rdma_srv_find_locked(struct rdma_server *s, const char *id,
                                     size_t n) {
  for (struct session *x = s->head; x; x = x->next)
    if (n == RDMA_SESSION_HEX_LEN && !strncasecmp(x->id, id, n))
      return x;
  return NULL;
}

void rdma_server_reap(struct rdma_server *s) {
  double now = rdma_now();
  struct session *gone = NULL;
  pthread_mutex_lock(&s->lock);
  for (struct session *x = s->head, *next; x; x = next) {
    next = x->next;
    int expired = x->state == S_PREPARED && now > x->expires;
    if (!expired && !(x->cancelled && x->state != S_TRANSFERRING))
      continue;
    s->st.expired += expired && !x->cancelled;
    if (unlink_locked(s, x)) {
      x->next = gone;
      gone = x;
    }
  }
  pthread_mutex_unlock(&s->lock);
  while (gone) {
    struct session *next = gone->next;
    destroy_session(s, gone);
    gone = next;
  }
}

static void *reaper_main(void *arg) {
  struct rdma_server *s = arg;
  pthread_mutex_lock(&s->lock);
  while (!s->stopping) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = ts.tv_nsec + (long)(s->interval * 1e9);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    pthread_cond_timedwait(&s->cond, &s->lock, &ts);
    if (s->stopping)
      break;
    pthread_mutex_unlock(&s->lock);
    rdma_server_reap(s);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

int rdma_server_create(const struct rdma_server_opts *o,
                       struct rdma_server **out, struct hipobj_error *err) {
  static const struct rdma_server_opts defaults = RDMA_SERVER_OPTS_INIT;
  *out = NULL;
  if (!o)
    o = &defaults;
  struct rdma_server *s = calloc(1, sizeof *s);
  if (!s)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "RDMA server",
                    "out of memory");
  struct rdma_dev_cfg dc = {.device = o->device,
                            .port = o->port,
                            .gid_index = o->gid_index,
                            .use_environ = o->use_environ,
                            .mtu = o->mtu};
  int rc = rdma_dev_open(&dc, &s->dev, err);
  if (rc != HIPOBJ_OK) {
    free(s);
    return rc;
  }
  if (rdma_retired_create(o->retired_capacity, 0, &s->retired) != 0) {
    rdma_dev_close(s->dev);
    free(s);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "RDMA server",
                    "out of memory");
  }
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  s->max_sessions = o->max_sessions ? o->max_sessions : 64;
  uint32_t max = rdma_dev_max_msg(s->dev);
  s->max_size = max < RDMA_SIZE_MAX ? max : RDMA_SIZE_MAX;
  if (o->max_size && o->max_size < s->max_size)
    s->max_size = o->max_size;
  s->max_staging = o->max_staging_bytes ? o->max_staging_bytes : 1ull << 30;
  s->t_prep = (o->prep_timeout_ms ? o->prep_timeout_ms : 10000) / 1000.0;
  s->t_exec = (o->exec_timeout_ms ? o->exec_timeout_ms : 30000) / 1000.0;
  s->interval = (o->reaper_interval_ms ? o->reaper_interval_ms : 1000) / 1000.0;
  s->clamp = o->clamp_get;
  snprintf(s->describe, sizeof s->describe,
           "%s, sessions <= %u, size <= %u, T_prep %.1f s, T_exec %.1f s",
           rdma_dev_reason(s->dev), s->max_sessions, s->max_size, s->t_prep,
           s->t_exec);
  if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0) {
    rdma_server_destroy(s);
    return herr_set(err, HIPOBJ_E_INTERNAL, "RDMA server",
                    "cannot start the reaper thread");
  }
  s->reaper_started = 1;
  *out = s;
  return HIPOBJ_OK;
}

void rdma_server_destroy(struct rdma_server *s) {
  if (!s)
    return;
  pthread_mutex_lock(&s->lock);
  s->stopping = 1;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
  if (s->reaper_started)
    pthread_join(s->reaper, NULL);
  while (s->head) {
    struct session *x = s->head;
    s->head = x->next;
    destroy_session(s, x);
  }
  rdma_retired_destroy(s->retired);
  rdma_dev_close(s->dev);
  pthread_cond_destroy(&s->cond);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

const char *rdma_server_describe(const struct rdma_server *s) {
  return s->describe;
}

void rdma_server_get_stats(struct rdma_server *s,
                           struct rdma_server_stats *st) {
  pthread_mutex_lock(&s->lock);
  *st = s->st;
  pthread_mutex_unlock(&s->lock);
}

/* ---- PREPARE ----------------------------------------------------------------
 */

/* partNumber, uploadId, versionId; anything else is refused (§3.4). */
static int parse_query(struct session *x, const char *q, size_t n,
                       struct rdma_server_answer *a) {
  while (n) {
    const char *amp = memchr(q, '&', n);
    size_t len = amp ? (size_t)(amp - q) : n;
    const char *eq = memchr(q, '=', len);
    size_t nl = eq ? (size_t)(eq - q) : len;
    struct hbuf v = HBUF_INIT;
    if (eq && huri_decode(&v, eq + 1, len - nl - 1) != 0) {
      hbuf_free(&v);
      return rdma_srv_error(a, 400, "InvalidArgument",
                            "malformed target query");
    }
    char **slot = NULL;
    if (nl == 10 && !strncmp(q, "partNumber", nl)) {
      uint64_t pn;
      if (hparse_u64(hbuf_str(&v), v.len, &pn) != 0 || pn < 1 || pn > 10000) {
        hbuf_free(&v);
        return rdma_srv_error(a, 400, "InvalidArgument",
                              "partNumber must be 1..10000");
      }
      x->part_number = (unsigned)pn;
    } else if (nl == 8 && !strncmp(q, "uploadId", nl)) {
      slot = &x->upload_id;
    } else if (nl == 9 && !strncmp(q, "versionId", nl)) {
      slot = &x->version_id;
    } else {
      hbuf_free(&v);
      return rdma_srv_error(a, 400, "InvalidArgument",
                            "unsupported query in X-Amz-Rdma-Target");
    }
    if (slot && (*slot || !(*slot = hstrdup(hbuf_str(&v))) || !v.len)) {
      hbuf_free(&v);
      return rdma_srv_error(a, 400, "InvalidArgument", "bad or repeated %.*s",
                            (int)nl, q);
    }
    hbuf_free(&v);
    q += len + (amp != NULL);
    n -= len + (amp != NULL);
  }
  if (x->op == RDMA_OP_PUT &&
      (x->version_id || !x->part_number != !x->upload_id))
    return rdma_srv_error(
        a, 400, "InvalidArgument",
        "a PUT target takes partNumber and uploadId together");
  if (x->op == RDMA_OP_GET && x->upload_id)
    return rdma_srv_error(a, 400, "InvalidArgument",
                          "a GET target has no uploadId");
  if (x->op == RDMA_OP_GET && x->part_number && x->offset)
    return rdma_srv_error(a, 400, "InvalidArgument", "a part GET has offset 0");
  return 0;
}

#define BAD(what)                                                              \
  rdma_srv_error(a, 400, "InvalidArgument", "%s missing or malformed", what)

/* Steps 1-3 of §3.4: headers into x. 0, or the error status. */
static int parse_prepare(struct session *x, const struct rdma_header *h,
                         size_t n, struct rdma_server_answer *a) {
  size_t l;
  const char *v;
  /* The reason of a malformed value, "" while none was parsed. */
  struct hipobj_error why = {0};
  if (!(v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Token", &l)) ||
      rdma_token_decode(v, l, RDMA_TOKEN_PREPARE, &x->peer, &x->loopback,
                        &why) != HIPOBJ_OK)
    return rdma_srv_error(a, 400, "InvalidArgument", "X-Amz-Rdma-Token: %s",
                          why.message[0] ? why.message : "missing");
  if (!(v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Psn", &l)) ||
      rdma_psn_parse(v, l, &x->client_psn) != 0)
    return BAD("X-Amz-Rdma-Psn");
  if (!(v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Cookie", &l)) ||
      rdma_cookie_parse(v, l, &x->cookie) != 0)
    return BAD("X-Amz-Rdma-Cookie");
  if (!(v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Op", &l)) ||
      rdma_op_parse(v, l, &x->op))
    return BAD("X-Amz-Rdma-Op");
  uint64_t size;
  if (!(v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Size", &l)) ||
      rdma_u64_parse(v, l, &size) != 0 || size == 0)
    return BAD("X-Amz-Rdma-Size");
  if (size > RDMA_SIZE_MAX)
    return rdma_srv_error(a, 413, "EntityTooLarge",
                          "X-Amz-Rdma-Size above 2^31-1");
  x->size = (uint32_t)size;
  if ((v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Offset", &l)) &&
      rdma_u64_parse(v, l, &x->offset) != 0)
    return BAD("X-Amz-Rdma-Offset");
  if (x->op == RDMA_OP_PUT && x->offset)
    return rdma_srv_error(a, 400, "InvalidArgument", "a PUT has no offset");
  struct hbuf b = HBUF_INIT, k = HBUF_INIT;
  const char *q = NULL;
  size_t ql = 0;
  if (!(v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Target", &l)) ||
      rdma_target_parse(v, l, &b, &k, &q, &ql, &why) != HIPOBJ_OK) {
    hbuf_free(&b);
    hbuf_free(&k);
    return rdma_srv_error(a, 400, "InvalidArgument", "X-Amz-Rdma-Target: %s",
                          why.message[0] ? why.message : "missing");
  }
  x->bucket = hbuf_steal(&b);
  x->key = hbuf_steal(&k);
  if (!x->bucket || !x->key)
    return rdma_srv_error(a, 500, "InternalError", "out of memory");
  return parse_query(x, q, ql, a);
}

void rdma_srv_target_of(const struct session *x, struct rdma_server_target *t) {
  *t = (struct rdma_server_target){.op = x->op,
                                   .bucket = x->bucket,
                                   .key = x->key,
                                   .part_number = x->part_number,
                                   .upload_id = x->upload_id,
                                   .version_id = x->version_id,
                                   .offset = x->offset,
                                   .size = x->size,
                                   .principal = x->principal};
}

/* Steps 7-10: QP, staging, PSN, id. 0 or the error status. */
static int build_session(struct rdma_server *s, struct session *x,
                         const struct rdma_server_backend *be,
                         struct rdma_server_answer *a) {
  struct hipobj_error e;
  memset(&e, 0, sizeof e);
  if (rdma_qp_create(s->dev, x->op == RDMA_OP_PUT ? RDMA_QP_REMOTE_WRITE : 0,
                     &x->qp, &e) != HIPOBJ_OK)
    return rdma_srv_error(a, 503, "SlowDown", "cannot create a QP: %s",
                          e.message);
  pthread_mutex_lock(&s->lock);
  s->st.qps++;
  pthread_mutex_unlock(&s->lock);
  long pg = sysconf(_SC_PAGESIZE);
  x->map_len = (x->size + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
  /* Whole pages of its own: a registration never exposes a neighbour. */
  x->buf = mmap(NULL, x->map_len, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (x->buf == MAP_FAILED) {
    x->buf = NULL;
    return rdma_srv_error(a, 503, "SlowDown",
                          "no memory for the staging buffer");
  }
  /* GET staging is only read by the local HCA; PUT staging is written by
   * the peer, never read remotely (§6.4). */
  unsigned access = x->op == RDMA_OP_PUT
                        ? RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE
                        : RDMA_MR_LOCAL_WRITE;
  if (rdma_mr_reg(rdma_dev_pd(s->dev), x->buf, x->size, access, 0, &x->mr,
                  &e) != HIPOBJ_OK)
    return rdma_srv_error(a, 503, "SlowDown", "cannot register staging: %s",
                          e.message);
  pthread_mutex_lock(&s->lock);
  s->st.mrs++;
  pthread_mutex_unlock(&s->lock);
  if (x->mr->npieces != 1)
    return rdma_srv_error(a, 413, "EntityTooLarge",
                          "staging needs one registration");
  struct rdma_server_target t;
  rdma_srv_target_of(x, &t);
  if (x->op == RDMA_OP_GET) {
    uint64_t got = 0;
    if (be->read(be->ctx, &t, x->buf, &got, &x->obj, a) != 0)
      return rdma_srv_backend_error(a, "reading the object");
    if (x->offset >= x->obj.length || (got < x->size && !s->clamp))
      return rdma_srv_error(
          a, 416, "InvalidRange",
          "bytes %llu..%llu are beyond the object's %llu bytes",
          (unsigned long long)x->offset,
          (unsigned long long)(x->offset + x->size - 1),
          (unsigned long long)x->obj.length);
    if (x->part_number && x->size != x->obj.length)
      return rdma_srv_error(
          a, 400, "InvalidArgument",
          "a part GET must ask for the whole part (%llu bytes)",
          (unsigned long long)x->obj.length);
    x->staged = got < x->size ? got : x->size;
    x->crc = crc64nvme(x->buf, (size_t)x->staged);
  } else if (rdma_qp_post_recv(x->qp, x->buf, x->size, x->mr->pieces[0].lkey, 1,
                               &e) != HIPOBJ_OK) {
    return rdma_srv_error(a, 500, "InternalError", "%s", e.message);
  }
  const uint8_t *peer_gid = x->loopback ? rdma_dev_gid(s->dev) : x->peer.gid;
  rdma_dev_gid_for_peer(s->dev, peer_gid, &x->sgid_index, x->sgid);
  int st = RDMA_RETIRED_USED;
  for (int i = 0; i < 8 && st == RDMA_RETIRED_USED; i++) {
    if (rdma_random_psn(&x->server_psn) != 0)
      return rdma_srv_error(a, 500, "InternalError", "getrandom failed");
    st = rdma_retired_check(s->retired, rdma_qp_num(x->qp), x->server_psn);
  }
  if (st != RDMA_RETIRED_FREE)
    return rdma_srv_error(a, 503, "SlowDown",
                          "too many RDMA sessions recently");
  /* PUT with a real token: pair now, so that the client's WRITE finds an
   * RTR QP whenever it comes (§8 item 14). */
  if (x->op == RDMA_OP_PUT && !x->loopback) {
    if (rdma_qp_rtr(x->qp, x->peer.qpn & RDMA_QPN_MAX, x->peer.gid,
                    x->sgid_index, x->client_psn, &e) != HIPOBJ_OK)
      return rdma_srv_error(a, 400, "InvalidArgument",
                            "cannot pair with the token: %s", e.message);
    x->paired = 1;
  }
  uint8_t id[16];
  if (rdma_random(id, sizeof id) != 0)
    return rdma_srv_error(a, 500, "InternalError", "getrandom failed");
  rdma_session_format(id, x->id);
  x->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (x->wake_fd < 0)
    return rdma_srv_error(a, 503, "SlowDown", "eventfd: %s", strerror(errno));
  return 0;
}

int rdma_server_prepare(struct rdma_server *s, const struct rdma_header *h,
                        size_t n, const char *principal,
                        const struct rdma_server_backend *be, unsigned faults,
                        struct rdma_server_answer *a) {
  rdma_srv_reset(a);
  size_t l;
  const char *v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Protocol", &l);
  if (faults & RDMA_SERVER_FAULT_DECLINE)
    return rdma_server_decline(a, "RDMA declined (fault injection)"), 501;
  if (!v || !rdma_protocol_is_v2(v, l))
    return rdma_server_decline(a, "X-Amz-Rdma-Protocol is not hipobj-rc-v2"),
           501;
  if (!principal || !*principal)
    return rdma_srv_error(a, 403, "AccessDenied",
                          "anonymous RDMA requests are refused");
  struct session *x = calloc(1, sizeof *x);
  if (!x)
    return rdma_srv_error(a, 503, "SlowDown", "out of memory");
  x->wake_fd = -1;
  int rc = parse_prepare(x, h, n, a);
  if (!rc && !(x->principal = hstrdup(principal)))
    rc = rdma_srv_error(a, 503, "SlowDown", "out of memory");
  struct rdma_server_target t;
  rdma_srv_target_of(x, &t);
  if (!rc && be->authorize(be->ctx, &t, a) != 0)
    rc = rdma_srv_backend_error(a, "authorization");
  if (rc) {
    free_session(x);
    return rc;
  }
  /* Limits, reserved before the expensive part so concurrent PREPAREs
   * cannot overshoot them together. */
  pthread_mutex_lock(&s->lock);
  if (x->size > s->max_size)
    rc = rdma_srv_error(a, 413, "EntityTooLarge",
                        "above this server's %u-byte limit", s->max_size);
  else if (s->stopping)
    rc = rdma_srv_error(a, 503, "ServiceUnavailable",
                        "the server is shutting down");
  else if (s->st.sessions >= s->max_sessions ||
           s->st.staging_bytes + x->size > s->max_staging)
    rc = rdma_srv_error(a, 503, "SlowDown", "too many RDMA sessions");
  if (!rc) {
    s->st.sessions++;
    s->st.staging_bytes += x->size;
  }
  pthread_mutex_unlock(&s->lock);
  if (rc) {
    free_session(x);
    return rc;
  }
  if ((rc = build_session(s, x, be, a)) != 0) {
    pthread_mutex_lock(&s->lock);
    s->st.failed++;
    pthread_mutex_unlock(&s->lock);
    destroy_session(s, x);
    return rc;
  }
  /* The QP is lost before the client can write: unlike DESTROY_QP at
   * READY, no WRITE can be acknowledged, whenever READY is handled. */
  if ((faults & RDMA_SERVER_FAULT_LOSE_QP) && rdma_qp_to_error(x->qp) == 0)
    x->lost = 1;
  struct rdma_rc_token me = {.transport = RDMA_TRANSPORT_RC,
                             .qpn = rdma_qp_num(x->qp),
                             .port = (uint8_t)rdma_dev_port(s->dev)};
  memcpy(me.gid, x->sgid, 16);
  char tok[4 + RDMA_TOKEN_HEX_LEN + 1], psn[7], qpn[7];
  rdma_reply_format_token(&me, tok);
  rdma_psn_format(x->server_psn, psn);
  rdma_qpn_format(me.qpn, qpn);
  rdma_srv_reset(a);
  a->http_status = 200;
  rdma_srv_add(a, "X-Amz-Rdma-Protocol", "%s", RDMA_PROTOCOL);
  rdma_srv_add(a, "X-Amz-Rdma-Reply", "%s", tok);
  rdma_srv_add(a, "X-Amz-Rdma-Session", "%s", x->id);
  rdma_srv_add(a, "X-Amz-Rdma-Psn", "%s", psn);
  rdma_srv_add(a, "X-Amz-Rdma-Qpn", "%s", qpn);
  if (x->op == RDMA_OP_PUT) {
    char addr[17], rkey[9];
    rdma_mr_addr_format((uintptr_t)x->buf, addr);
    rdma_rkey_format(x->mr->pieces[0].rkey, rkey);
    rdma_srv_add(a, "X-Amz-Rdma-Mr-Addr", "%s", addr);
    rdma_srv_add(a, "X-Amz-Rdma-Mr-Rkey", "%s", rkey);
  }
  rdma_srv_add(a, "X-Amz-Rdma-Capabilities", "mp");
  x->expires = rdma_now() + s->t_prep;
  x->refs = 1;
  x->in_table = 1;
  pthread_mutex_lock(&s->lock);
  x->next = s->head;
  s->head = x;
  s->st.prepared++;
  pthread_mutex_unlock(&s->lock);
  return 200;
}
