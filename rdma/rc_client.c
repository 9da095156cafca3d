/* rc_client.c - the hipobj-rc-v2 client (see rc_client.h; § numbers refer to
 * shared/docs/rdma-wire-protocol.md).
 *
 * One session = one QP, one PREPARE, one READY, one data phase (§3.8). The
 * timeline is §4.3; failure handling is §6.1 in its order: close the
 * pending READY, CANCEL, destroy the QP, only then release the buffer (a
 * late server write must never land in memory the caller got back).
 *
 * The READY answer (FINAL) is normally read after the data phase, but a
 * server that refuses READY answers at once and sends no data; so the data
 * phase sleeps on the completion channel and on an eventfd the READY
 * answer signals, and a refusal ends the wait immediately instead of at the
 * deadline. The pure checks of the answers are at the end of the file. */
#include "rc_client.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "../src/base/crc64nvme.h"
#include "../src/base/error.h"
#include "../src/base/strutil.h"
#include "qp.h"
#include "rc_engine_int.h"

/* ---- one session ------------------------------------------------------------
 */

struct session {
  struct rdma_engine *e;
  const struct rdma_rc_request *rq;
  enum rdma_op op;
  const char *opname;
  uint64_t offset;
  uint32_t len;
  char *buf;
  const struct rdma_mr_piece *piece;
  struct rdma_sge sgl[RDMA_QP_MAX_SEND_SGE]; /* PUT source */
  unsigned nsge;
  struct rdma_qp *qp;
  uint32_t psn, cookie;
  struct rdma_prepare_reply rep;
  int have_session;
  void *pending; /* READY in flight */
  int wake_fd;   /* signalled when the READY answer is in */
  double deadline;
  struct rdma_rc_result *res;
  struct hipobj_error *err;
  struct rdma_final fin;
};

/* Records a failure: status, one-line reason, fallback permission. */
static int fail(struct session *s, int status, int fallback, int http,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail(struct session *s, int status, int fallback, int http,
                const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  herr_set(s->err, status, s->opname, "%s", text);
  hstrlcpy(s->res->reason, text, sizeof s->res->reason);
  s->res->fallback = fallback && !s->res->ready_sent;
  s->res->http_status = http;
  if (s->err) {
    s->err->http_status = http;
    if (s->res->rdma_status >= 0) {
      s->err->rdma_status = s->res->rdma_status;
      s->err->has_rdma_status = 1;
    }
  }
  return status;
}

/* An answer that is not what was expected: the HTTP error, or the
 * transport failure when there was no answer. */
static int fail_answer(struct session *s, const char *what,
                       const struct rdma_control_answer *a, int fallback) {
  if (!a->http_status)
    return fail(s, a->transport_status ? a->transport_status : HIPOBJ_E_NETWORK,
                0, 0, "%s: %s", what, a->reason[0] ? a->reason : "no answer");
  int st = fallback ? HIPOBJ_E_UNSUPPORTED
                    : herr_status_from_http(a->http_status, a->s3_code);
  int rc = fail(s, st, fallback, a->http_status, "%s answered %d%s%s%s%s%s",
                what, a->http_status, a->s3_code[0] ? " " : "", a->s3_code,
                a->s3_message[0] || a->reason[0] ? ": " : "", a->s3_message,
                a->s3_message[0] ? "" : a->reason);
  if (s->err) {
    hstrlcpy(s->err->s3_code, a->s3_code, sizeof s->err->s3_code);
    hstrlcpy(s->err->s3_message, a->s3_message, sizeof s->err->s3_message);
  }
  return rc;
}

static void answer_free(struct rdma_control_answer *a) {
  hbuf_free(&a->headers);
}

static void on_ready_answered(void *arg) {
  uint64_t one = 1;
  /* An eventfd write cannot block or fail with a counter this small. */
  if (write(*(int *)arg, &one, sizeof one) < 0) {
  }
}

static unsigned ms_left(double deadline) {
  double left = deadline - rdma_now();
  return left <= 0 ? 1 : left > 86400 ? 86400000u : (unsigned)(left * 1000) + 1;
}

/* §3.6: once, best effort, with its own budget; any 2xx or 404 means gone,
 * anything else is not worth more than this attempt. */
static void send_cancel(struct session *s) {
  const struct rdma_control_ops *ops = s->rq->ops;
  struct rdma_header h[] = {{"X-Amz-Rdma-Protocol", RDMA_PROTOCOL},
                            {"X-Amz-Rdma-Session", s->rep.session}};
  struct rdma_control_answer a = {.headers = HBUF_INIT};
  ops->call(ops->ctx, RDMA_PATH_CANCEL, h, 2,
            (unsigned)(s->e->cancel_timeout * 1000), &a);
  answer_free(&a);
}

/* Waits for the data-phase completion of the expected kind while watching
 * for an early READY answer. Returns HIPOBJ_OK, or a failure (recorded). */
static int wait_data(struct session *s, enum rdma_wc_opcode want,
                     struct rdma_control_answer *fin, int *answered) {
  double deadline = s->deadline;
  for (;;) {
    struct rdma_wc wc;
    int r = rdma_qp_wait(s->qp, deadline, *answered ? -1 : s->wake_fd, &wc);
    if (r == RDMA_WAIT_OK) {
      if (wc.status != 0) {
        s->res->rdma_status = wc.status;
        return fail(s, HIPOBJ_E_NETWORK, 0, 0, "data phase: completion %s",
                    wc.status_str);
      }
      if (wc.opcode != want)
        return fail(s, HIPOBJ_E_PROTOCOL, 0, 0,
                    "data phase: unexpected completion (opcode %d)",
                    (int)wc.opcode);
      if (want == RDMA_WC_RECV_RDMA_WITH_IMM &&
          (!wc.with_imm || wc.imm != s->cookie))
        return fail(s, HIPOBJ_E_PROTOCOL, 0, 0,
                    "data phase: the immediate is not the session cookie");
      return HIPOBJ_OK;
    }
    if (r == RDMA_WAIT_WOKEN) {
      /* READY answered before the data phase ended. */
      const struct rdma_control_ops *ops = s->rq->ops;
      void *p = s->pending;
      s->pending = NULL;
      ops->ready_wait(ops->ctx, p, ms_left(s->deadline), fin);
      *answered = 1;
      if (fin->http_status < 200 || fin->http_status > 299)
        return fail_answer(s, "READY", fin, 0);
      /* Success before our completion: the completion is generated before
       * the server could see its own, so it is at most moments away; a
       * server claiming success without data never gets it (§8 item 12). */
      double soon = rdma_now() + 5;
      if (soon < deadline)
        deadline = soon;
      continue;
    }
    if (r == RDMA_WAIT_TIMEOUT)
      return *answered ? fail(s, HIPOBJ_E_PROTOCOL, 0, fin->http_status,
                              "FINAL reports success but no data completion "
                              "arrived")
                       : fail(s, HIPOBJ_E_TIMEOUT, 0, 0,
                              "data phase: no completion before the deadline");
    return fail(s, HIPOBJ_E_IO, 0, 0, "data phase: polling the CQ failed: %s",
                strerror(errno));
  }
}

/* PUT: the grace period before writing (§4.3 step 9), cut short when READY
 * is answered meanwhile (then the caller handles that answer). */
static int grace_wait(struct session *s) {
  double until = rdma_now() + s->e->grace;
  if (until > s->deadline)
    until = s->deadline;
  for (;;) {
    double left = until - rdma_now();
    if (left <= 0)
      return 0;
    struct pollfd pf = {s->wake_fd, POLLIN, 0};
    int r = poll(&pf, 1, (int)(left * 1000) + 1);
    if (r > 0)
      return 1;
    if (r < 0 && errno != EINTR)
      return 0;
  }
}

static int build_prepare(struct session *s, struct hbuf *target,
                         struct rdma_header *h, size_t *n, char tok[89],
                         char psn[7], char cookie[9], char size[24],
                         char off[24]) {
  const struct rdma_rc_request *rq = s->rq;
  if (rdma_target_build(target, rq->bucket, rq->key, rq->query, rq->nq) != 0)
    return -1;
  struct rdma_rc_token t = {.transport = RDMA_TRANSPORT_RC,
                            .qpn = rdma_qp_num(s->qp),
                            .port = (uint8_t)rdma_dev_port(s->e->dev)};
  memcpy(t.gid, rdma_dev_gid(s->e->dev), 16);
  rdma_token_encode(&t, tok);
  rdma_psn_format(s->psn, psn);
  rdma_cookie_format(s->cookie, cookie);
  snprintf(size, 24, "%u", s->len);
  snprintf(off, 24, "%llu", (unsigned long long)s->offset);
  size_t k = 0;
  h[k++] = (struct rdma_header){"X-Amz-Rdma-Protocol", RDMA_PROTOCOL};
  h[k++] = (struct rdma_header){"X-Amz-Rdma-Token", tok};
  h[k++] = (struct rdma_header){"X-Amz-Rdma-Psn", psn};
  h[k++] = (struct rdma_header){"X-Amz-Rdma-Cookie", cookie};
  h[k++] = (struct rdma_header){"X-Amz-Rdma-Op", rdma_op_name(s->op)};
  h[k++] = (struct rdma_header){"X-Amz-Rdma-Target", hbuf_str(target)};
  h[k++] = (struct rdma_header){"X-Amz-Rdma-Size", size};
  if (s->offset) /* omitted when 0, as the peers do */
    h[k++] = (struct rdma_header){"X-Amz-Rdma-Offset", off};
  *n = k;
  return 0;
}

/* PREPARE up to a validated reply and a QP in RTS. */
static int negotiate(struct session *s) {
  struct rdma_engine *e = s->e;
  const struct rdma_control_ops *ops = s->rq->ops;
  int rc = rdma_qp_create(
      e->dev, s->op == RDMA_OP_GET ? RDMA_QP_REMOTE_WRITE : 0, &s->qp, s->err);
  if (rc != HIPOBJ_OK)
    return fail(s, rc, 1, 0, "%s", s->err ? s->err->message : "no QP");
  int free_pair = 0;
  for (int i = 0; i < 8 && !free_pair; i++) {
    if (rdma_random_psn(&s->psn) != 0 || rdma_random_cookie(&s->cookie) != 0)
      return fail(s, HIPOBJ_E_INTERNAL, 1, 0, "getrandom failed");
    int st = rdma_retired_check(e->retired, rdma_qp_num(s->qp), s->psn);
    if (st == RDMA_RETIRED_FULL)
      return fail(s, HIPOBJ_E_THROTTLED, 1, 0,
                  "too many RDMA sessions in the last 60 s (retired ring "
                  "full)");
    free_pair = st == RDMA_RETIRED_FREE;
  }
  if (!free_pair)
    return fail(s, HIPOBJ_E_INTERNAL, 1, 0, "no unused PSN for this QPN");

  struct hbuf target = HBUF_INIT;
  struct rdma_header h[8];
  size_t n;
  char tok[RDMA_TOKEN_HEX_LEN + 1], psn[7], cookie[9], size[24], off[24];
  if (build_prepare(s, &target, h, &n, tok, psn, cookie, size, off) != 0) {
    hbuf_free(&target);
    return fail(s, HIPOBJ_E_INVALID_ARGUMENT, 0, 0,
                "cannot build the target (empty bucket or key?)");
  }
  struct rdma_control_answer a = {.headers = HBUF_INIT};
  int sent =
      ops->call(ops->ctx, RDMA_PATH_PREPARE, h, n, ms_left(s->deadline), &a);
  hbuf_free(&target);
  if (sent != 0 || a.http_status != 200) {
    int fb = sent == 0 && a.http_status &&
             rdma_prepare_fallback_allowed(&a, s->offset, s->len);
    rc = fail_answer(s, "PREPARE", &a, fb);
    /* A 2xx other than 200 may still have created a session. */
    size_t sl;
    const char *sid = rdma_answer_header(&a, "X-Amz-Rdma-Session", &sl);
    if (a.http_status / 100 == 2 && sid && rdma_session_check(sid, sl) == 0) {
      memcpy(s->rep.session, sid, RDMA_SESSION_HEX_LEN);
      s->rep.session[RDMA_SESSION_HEX_LEN] = '\0';
      s->have_session = 1;
    }
    answer_free(&a);
    return rc;
  }
  struct hipobj_error why = {0};
  size_t sl;
  const char *sid = rdma_answer_header(&a, "X-Amz-Rdma-Session", &sl);
  if (sid && rdma_session_check(sid, sl) == 0) {
    memcpy(s->rep.session, sid, RDMA_SESSION_HEX_LEN);
    s->rep.session[RDMA_SESSION_HEX_LEN] = '\0';
    s->have_session = 1; /* cancel it if anything below fails */
  }
  if (rdma_check_prepare_reply(&a, s->op, &s->rep, &why) != HIPOBJ_OK) {
    answer_free(&a);
    return fail(s, HIPOBJ_E_PROTOCOL, 0, 200, "invalid PREPARE reply: %s",
                why.message);
  }
  size_t cl;
  const char *caps = rdma_answer_header(&a, "X-Amz-Rdma-Capabilities", &cl);
  s->res->caps_mp = caps && rdma_capabilities_has(caps, cl, "mp");
  answer_free(&a);
  /* A part goes by RDMA only to a server that says it handles parts: one
   * that ignores the part query stores the part as the whole object (wire
   * spec §5.3: elbencho), and Complete then assembles nothing. Nothing was
   * sent yet: the session is cancelled and the part goes over HTTP. */
  int part = 0;
  for (size_t i = 0; i < s->rq->nq; i++)
    part |= !strcmp(s->rq->query[i].name, "uploadId");
  if (part && !s->res->caps_mp) {
    s->res->no_mp = 1;
    return fail(s, HIPOBJ_E_UNSUPPORTED, 1, 200,
                "the server does not advertise RDMA parts "
                "(X-Amz-Rdma-Capabilities: mp)");
  }
  double connect_deadline = rdma_now() + e->connect_timeout;
  if (connect_deadline > s->deadline)
    connect_deadline = s->deadline;
  /* The server QPN and GID come from its token, never from the
   * informational X-Amz-Rdma-Qpn (§3.4). The source GID is the one our
   * token announced: the server sends its acknowledgements there. */
  if ((rc =
           rdma_qp_rtr(s->qp, s->rep.token.qpn & RDMA_QPN_MAX, s->rep.token.gid,
                       rdma_dev_gid_index(e->dev), s->rep.psn, s->err)) != 0 ||
      (rc = rdma_qp_rts(s->qp, s->psn, s->err)) != 0)
    return fail(s, rc, 0, 0, "%s", s->err ? s->err->message : "connect");
  if (s->op == RDMA_OP_GET &&
      (rc = rdma_qp_post_recv(s->qp, NULL, 0, 0, 1, s->err)) != 0)
    return fail(s, rc, 0, 0, "%s", s->err ? s->err->message : "recv");
  if (rdma_now() > connect_deadline)
    return fail(s, HIPOBJ_E_TIMEOUT, 0, 0,
                "connect deadline passed before RTS");
  return HIPOBJ_OK;
}

/* READY, the data phase, FINAL. */
static int transfer(struct session *s) {
  const struct rdma_control_ops *ops = s->rq->ops;
  char cookie[9], qpn[7], addr[17], rkey[9];
  rdma_cookie_format(s->cookie, cookie);
  rdma_qpn_format(rdma_qp_num(s->qp), qpn);
  rdma_mr_addr_format((uintptr_t)s->buf, addr);
  rdma_rkey_format(s->piece->rkey, rkey);
  struct rdma_header h[] = {{"X-Amz-Rdma-Protocol", RDMA_PROTOCOL},
                            {"X-Amz-Rdma-Session", s->rep.session},
                            {"X-Amz-Rdma-Cookie", cookie},
                            {"X-Amz-Rdma-Qpn", qpn},
                            {"X-Amz-Rdma-Mr-Addr", addr},
                            {"X-Amz-Rdma-Mr-Rkey", rkey}};
  /* From here on the request may have reached the server: no fallback. */
  s->res->ready_sent = 1;
  if (ops->ready_start(ops->ctx, RDMA_PATH_READY, h, sizeof h / sizeof h[0],
                       ms_left(s->deadline), on_ready_answered, &s->wake_fd,
                       &s->pending) != 0) {
    s->pending = NULL;
    return fail(s, HIPOBJ_E_NETWORK, 0, 0, "READY could not be sent");
  }
  struct rdma_control_answer fin = {.headers = HBUF_INIT};
  int answered = 0, rc;
  if (s->op == RDMA_OP_GET) {
    rc = wait_data(s, RDMA_WC_RECV_RDMA_WITH_IMM, &fin, &answered);
  } else {
    if (grace_wait(s)) {
      void *p = s->pending;
      s->pending = NULL;
      ops->ready_wait(ops->ctx, p, ms_left(s->deadline), &fin);
      answered = 1;
      rc = fin.http_status >= 200 && fin.http_status <= 299
               ? fail(s, HIPOBJ_E_PROTOCOL, 0, fin.http_status,
                      "READY answered success before any data was written")
               : fail_answer(s, "READY", &fin, 0);
    } else {
      rc = rdma_qp_post_write_imm_sgl(s->qp, s->sgl, s->nsge, s->rep.mr_addr,
                                      s->rep.mr_rkey, s->cookie, 2, s->err);
      if (rc != HIPOBJ_OK)
        rc = fail(s, rc, 0, 0, "%s", s->err ? s->err->message : "post");
      else
        rc = wait_data(s, RDMA_WC_RDMA_WRITE, &fin, &answered);
    }
  }
  if (rc == HIPOBJ_OK && !answered) {
    void *p = s->pending;
    s->pending = NULL;
    ops->ready_wait(ops->ctx, p, ms_left(s->deadline), &fin);
  }
  struct hipobj_error why = {0};
  if (rc == HIPOBJ_OK) {
    if (fin.http_status < 200 || fin.http_status > 299)
      rc = fail_answer(s, "READY", &fin, 0);
    else if (rdma_check_final(&fin, s->op, s->cookie, s->len, &s->fin, &why) !=
             HIPOBJ_OK)
      rc = fail(s, HIPOBJ_E_PROTOCOL, 0, fin.http_status, "invalid FINAL: %s",
                why.message);
  }
  answer_free(&fin);
  if (rc != HIPOBJ_OK || !s->fin.has_crc)
    return rc;
  s->res->checksum_present = 1;
  if (s->rq->mem_kind != RDMA_MEM_HOST || !s->e->verify)
    return rc;
  uint64_t crc;
  if (s->op == RDMA_OP_PUT) { /* fin.bytes == len, checked */
    crc = crc64nvme_init();
    for (unsigned i = 0; i < s->nsge; i++)
      crc = crc64nvme_update(crc, s->sgl[i].addr, s->sgl[i].len);
    crc = crc64nvme_final(crc);
  } else {
    crc = crc64nvme(s->buf, (size_t)s->fin.bytes);
  }
  if (crc != s->fin.crc)
    return fail(s, HIPOBJ_E_INTEGRITY, 0, fin.http_status,
                "CRC64NVME mismatch: FINAL says %016llx, the buffer has "
                "%016llx",
                (unsigned long long)s->fin.crc, (unsigned long long)crc);
  s->res->checksum_verified = 1;
  return rc;
}

static int acquire_slot(struct rdma_engine *e, double deadline) {
  int ok = 1;
  pthread_mutex_lock(&e->lock);
  while (e->live >= e->max_live && ok) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double wait = deadline - rdma_now();
    if (wait <= 0) {
      ok = 0;
      break;
    }
    ts.tv_sec += (time_t)wait;
    ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&e->cond, &e->lock, &ts);
  }
  if (ok)
    e->live++;
  pthread_mutex_unlock(&e->lock);
  return ok;
}

static void release_slot(struct rdma_engine *e) {
  pthread_mutex_lock(&e->lock);
  e->live--;
  pthread_cond_signal(&e->cond);
  pthread_mutex_unlock(&e->lock);
}

/* One complete session; s has op, offset, len, buf, piece set. */
static int run_session(struct session *s) {
  struct rdma_engine *e = s->e;
  s->deadline = rdma_now() + e->timeout;
  s->wake_fd = -1;
  if (!acquire_slot(e, s->deadline))
    return fail(s, HIPOBJ_E_THROTTLED, 1, 0,
                "%u RDMA transfers already in flight", e->max_live);
  int rc;
  s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wake_fd < 0)
    rc = fail(s, HIPOBJ_E_IO, 1, 0, "eventfd: %s", strerror(errno));
  else if ((rc = negotiate(s)) == HIPOBJ_OK)
    rc = transfer(s);
  const struct rdma_control_ops *ops = s->rq->ops;
  if (s->pending) /* §6.1 step 1: READY's connection goes first */
    ops->ready_abort(ops->ctx, s->pending);
  s->pending = NULL;
  if (rc != HIPOBJ_OK && s->have_session)
    send_cancel(s);
  if (s->qp) {
    uint32_t qpn = rdma_qp_num(s->qp);
    if (rdma_qp_destroy(s->qp) != 0 && rc == HIPOBJ_OK)
      rc = fail(s, HIPOBJ_E_IO, 0, 0, "ibv_destroy_qp failed");
    rdma_retired_add(e->retired, qpn, s->psn);
    s->qp = NULL;
  }
  if (s->wake_fd >= 0)
    close(s->wake_fd);
  release_slot(e);
  return rc;
}

/* The registration the transfer uses: the caller's, or one of its own. */
static int get_registration(struct session *s, unsigned access,
                            const struct rdma_mr **m, struct rdma_mr **own) {
  const struct rdma_rc_request *rq = s->rq;
  *own = NULL;
  if (rq->mr) {
    uintptr_t a = (uintptr_t)rq->buf;
    if (a < rq->mr->addr || a + rq->size > rq->mr->addr + rq->mr->len)
      return fail(s, HIPOBJ_E_INVALID_ARGUMENT, 1, 0,
                  "the registration does not cover the buffer");
    /* The server writes a GET into it: without the right its WRITE would
     * fail remotely, after READY, where no fallback is possible. */
    if ((access & RDMA_MR_REMOTE_WRITE) &&
        !(rq->mr->access & RDMA_MR_REMOTE_WRITE))
      return fail(s, HIPOBJ_E_INVALID_ARGUMENT, 1, 0,
                  "a GET destination needs a REMOTE_WRITE registration");
    *m = rq->mr;
    return HIPOBJ_OK;
  }
  struct rdma_engine *e = s->e;
  int rc;
  if (rq->mem_kind == RDMA_MEM_DMABUF) {
    pthread_mutex_lock(&e->lock);
    struct rdma_dmabuf_ops ops = e->dmabuf;
    int have = e->have_dmabuf;
    pthread_mutex_unlock(&e->lock);
    rc = rdma_mr_reg_dmabuf(rdma_dev_pd(e->dev), have ? &ops : NULL, rq->buf,
                            (size_t)rq->size, access, 0, own, s->err);
  } else {
    rc = rdma_mr_reg(rdma_dev_pd(e->dev), rq->buf, (size_t)rq->size, access, 0,
                     own, s->err);
  }
  if (rc != HIPOBJ_OK)
    return fail(s, rc, 1, 0, "%s", s->err ? s->err->message : "registration");
  *m = *own;
  return HIPOBJ_OK;
}

static int check_request(struct session *s) {
  const struct rdma_rc_request *rq = s->rq;
  if (!s->res)
    return herr_set(s->err, HIPOBJ_E_INVALID_ARGUMENT, s->opname, "no result");
  memset(s->res, 0, sizeof *s->res);
  s->res->rdma_status = -1;
  if (!rq || !rq->ops || !rq->ops->call || !rq->ops->ready_start ||
      !rq->ops->ready_wait || !rq->ops->ready_abort ||
      (!rq->buf && !rq->nsegs) || !rq->size || !rq->bucket || !*rq->bucket ||
      !rq->key || !*rq->key)
    return fail(s, HIPOBJ_E_INVALID_ARGUMENT, 0, 0,
                "incomplete request (ops, buffer, size, bucket and key are "
                "required)");
  if (rq->offset + rq->size < rq->offset)
    return fail(s, HIPOBJ_E_INVALID_ARGUMENT, 0, 0, "offset + size overflows");
  return HIPOBJ_OK;
}

#define RDMA_MIN_SESSION 4096u /* 413s do not shrink sessions below this */

int rdma_rc_get(struct rdma_engine *e, const struct rdma_rc_request *rq,
                struct rdma_rc_result *res, struct hipobj_error *err) {
  struct session s0 = {.e = e,
                       .rq = rq,
                       .op = RDMA_OP_GET,
                       .opname = "RDMA GET",
                       .res = res,
                       .err = err};
  int rc = check_request(&s0);
  if (rc != HIPOBJ_OK)
    return rc;
  const struct rdma_mr *m;
  struct rdma_mr *own;
  if ((rc = get_registration(&s0, RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE,
                             &m, &own)) != HIPOBJ_OK)
    return rc;
  uint64_t done = 0;
  /* Largest session: the engine's limit, halved while the server answers
   * 413 (a server whose staging buffers are smaller, §8 item 24). */
  uint64_t cap = e->session_max;
  char etag[HIPOBJ_ETAG_MAX] = "";
  while (done < rq->size) {
    struct session s = s0;
    s.buf = (char *)rq->buf + done;
    /* One session must fit one message and one registration piece. */
    s.piece = rdma_mr_find_piece(m, s.buf, 1);
    uint64_t len = rq->size - done;
    if (len > cap)
      len = cap;
    if (s.piece && len > s.piece->addr + s.piece->len - (uintptr_t)s.buf)
      len = s.piece->addr + s.piece->len - (uintptr_t)s.buf;
    if (!s.piece) {
      rc = fail(&s, HIPOBJ_E_INTERNAL, 0, 0, "no registration piece");
      break;
    }
    s.offset = rq->offset + done;
    s.len = (uint32_t)len;
    int ready_before = res->ready_sent;
    res->ready_sent = 0;
    res->checksum_present = res->checksum_verified = 0;
    rc = run_session(&s);
    int too_large = rc != HIPOBJ_OK && res->http_status == 413 &&
                    !res->ready_sent && len / 2 >= RDMA_MIN_SESSION;
    res->ready_sent |= ready_before;
    if (too_large) {
      cap = len / 2;
      res->fallback = 0;
      res->http_status = 0;
      res->reason[0] = '\0';
      continue;
    }
    if (rc != HIPOBJ_OK)
      break;
    /* Sessions must read one version of the object. */
    if (res->sessions && strcmp(etag, s.fin.etag)) {
      rc = fail(&s, HIPOBJ_E_PRECONDITION, 0, 200,
                "the object changed between RDMA sessions (ETag %s, then %s)",
                etag, s.fin.etag);
      break;
    }
    hstrlcpy(etag, s.fin.etag, sizeof etag);
    hstrlcpy(res->etag, s.fin.etag, sizeof res->etag);
    hstrlcpy(res->version_id, s.fin.version_id, sizeof res->version_id);
    /* The CRC of everything so far: CRC(A || B) from CRC(A), CRC(B). */
    res->crc = res->sessions
                   ? crc64nvme_combine(res->crc, s.fin.crc, s.fin.bytes)
                   : s.fin.crc;
    res->crc_ok = (res->sessions ? res->crc_ok : 1) && s.fin.has_crc;
    res->crc_checked =
        (res->sessions ? res->crc_checked : 1) && res->checksum_verified;
    done += s.fin.bytes;
    res->bytes = done;
    res->sessions++;
    if (s.fin.bytes < len)
      break; /* the server clamped at the end of the object (§5.1) */
  }
  /* Every QP is gone: the registration may go. */
  rdma_mr_dereg(own, NULL);
  return rc;
}

/* A PUT whose source is several registered pieces, gathered by one WRITE
 * WITH IMM. s is checked and sized already. */
static int put_gathered(struct session *s) {
  const struct rdma_rc_request *rq = s->rq;
  uint64_t total = 0;
  if (rq->nsegs > RDMA_QP_MAX_SEND_SGE)
    return fail(s, HIPOBJ_E_INVALID_ARGUMENT, 1, 0,
                "%zu source pieces (at most %d)", rq->nsegs,
                RDMA_QP_MAX_SEND_SGE);
  for (size_t i = 0; i < rq->nsegs; i++) {
    const struct rdma_rc_seg *g = &rq->segs[i];
    const struct rdma_mr_piece *p =
        g->mr && g->len ? rdma_mr_find_piece(g->mr, g->buf, g->len) : NULL;
    if (!p)
      return fail(s, HIPOBJ_E_INVALID_ARGUMENT, 1, 0,
                  "source piece %zu is empty or not inside one registration",
                  i);
    s->sgl[i] = (struct rdma_sge){g->buf, g->len, p->lkey};
    total += g->len;
    if (i == 0) { /* READY names the source's first piece (§3.5) */
      s->buf = (char *)g->buf;
      s->piece = p;
    }
  }
  if (total != rq->size)
    return fail(s, HIPOBJ_E_INVALID_ARGUMENT, 1, 0,
                "the source pieces hold %llu bytes, not %llu",
                (unsigned long long)total, (unsigned long long)rq->size);
  s->nsge = (unsigned)rq->nsegs;
  s->len = (uint32_t)rq->size;
  int rc = run_session(s);
  if (rc == HIPOBJ_OK) {
    s->res->bytes = s->fin.bytes;
    s->res->sessions = 1;
    hstrlcpy(s->res->etag, s->fin.etag, sizeof s->res->etag);
    hstrlcpy(s->res->version_id, s->fin.version_id, sizeof s->res->version_id);
  }
  return rc;
}

int rdma_rc_put(struct rdma_engine *e, const struct rdma_rc_request *rq,
                struct rdma_rc_result *res, struct hipobj_error *err) {
  struct session s = {.e = e,
                      .rq = rq,
                      .op = RDMA_OP_PUT,
                      .opname = "RDMA PUT",
                      .res = res,
                      .err = err};
  int rc = check_request(&s);
  if (rc != HIPOBJ_OK)
    return rc;
  if (rq->offset)
    return fail(&s, HIPOBJ_E_INVALID_ARGUMENT, 0, 0,
                "a PUT has no offset (§5.2)");
  /* A PUT is exactly one WRITE WITH IMM (§4.4): larger objects go as
   * multipart parts no larger than this, or over HTTP. */
  if (rq->size > e->session_max)
    return fail(&s, HIPOBJ_E_UNSUPPORTED, 1, 0,
                "%llu bytes exceed the %u-byte RDMA session limit; split "
                "into parts",
                (unsigned long long)rq->size, e->session_max);
  if (rq->nsegs)
    return put_gathered(&s);
  const struct rdma_mr *m;
  struct rdma_mr *own;
  /* The source is only read locally: no remote right at all (§6.4). */
  if ((rc = get_registration(&s, RDMA_MR_LOCAL_READ, &m, &own)) != HIPOBJ_OK)
    return rc;
  s.buf = rq->buf;
  s.len = (uint32_t)rq->size;
  s.piece = rdma_mr_find_piece(m, s.buf, s.len);
  if (s.piece) {
    s.sgl[0] = (struct rdma_sge){s.buf, s.len, s.piece->lkey};
    s.nsge = 1;
  }
  if (!s.piece)
    rc = fail(&s, HIPOBJ_E_INVALID_ARGUMENT, 1, 0,
              "the source spans several registration pieces; a PUT needs "
              "one");
  else if ((rc = run_session(&s)) == HIPOBJ_OK) {
    res->bytes = s.fin.bytes;
    res->sessions = 1;
    hstrlcpy(res->etag, s.fin.etag, sizeof res->etag);
    hstrlcpy(res->version_id, s.fin.version_id, sizeof res->version_id);
  }
  rdma_mr_dereg(own, NULL);
  return rc;
}
