/* rc_server_ready.c - READY (with the data phase and FINAL) and CANCEL of
 * the server engine (rc_server.h; § numbers refer to
 * shared/docs/rdma-wire-protocol.md). READY follows §3.5 step by step: the
 * session is looked up, bound to its principal and cookie, re-authorized,
 * claimed once, paired, and the data moves within T_exec; a PUT is then
 * committed through the backend, and FINAL carries what the client must
 * verify (§4.6). */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../src/base/crc64nvme.h"
#include "../src/base/error.h"
#include "rc_server_int.h"

/* enum ibv_wc_status values (stable verbs ABI) that mean "peer busy":
 * the client QP was not there to acknowledge (§3.7). */
#define WC_RETRY_EXC_ERR 12
#define WC_RNR_RETRY_EXC_ERR 13

#define BAD(what)                                                              \
  rdma_srv_error(a, 400, "InvalidArgument", "%s missing or malformed", what)

struct ready_req {
  const char *sid;
  size_t sid_len;
  uint32_t cookie, qpn, rkey;
  uint64_t addr;
};

static int parse_ready(const struct rdma_header *h, size_t n,
                       struct ready_req *r, struct rdma_server_answer *a) {
  size_t l;
  const char *v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Protocol", &l);
  if (!v || !rdma_protocol_is_v2(v, l))
    return rdma_srv_error(a, 400, "InvalidRequest",
                          "X-Amz-Rdma-Protocol is not hipobj-rc-v2");
  r->sid = rdma_srv_hdr(h, n, "X-Amz-Rdma-Session", &r->sid_len);
  if (!r->sid || rdma_session_check(r->sid, r->sid_len) != 0)
    return BAD("X-Amz-Rdma-Session");
  while (*r->sid == ' ' || *r->sid == '\t')
    r->sid++, r->sid_len--;
  r->sid_len = RDMA_SESSION_HEX_LEN;
  if (!(v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Cookie", &l)) ||
      rdma_cookie_parse(v, l, &r->cookie) != 0)
    return BAD("X-Amz-Rdma-Cookie");
  /* A READY without a QPN cannot have a data phase (§8 item 12). */
  if (!(v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Qpn", &l)) ||
      rdma_qpn_parse(v, l, &r->qpn) != 0)
    return BAD("X-Amz-Rdma-Qpn");
  r->addr = 0;
  r->rkey = 0;
  if ((v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Mr-Addr", &l)) &&
      rdma_mr_addr_parse(v, l, &r->addr) != 0)
    return BAD("X-Amz-Rdma-Mr-Addr");
  if ((v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Mr-Rkey", &l)) &&
      rdma_rkey_parse(v, l, &r->rkey) != 0)
    return BAD("X-Amz-Rdma-Mr-Rkey");
  return 0;
}

/* Steps 2-5: a claimed session with a reference for the caller, or NULL
 * and the error answer. */
static struct session *claim(struct rdma_server *s, const struct ready_req *r,
                             const char *principal,
                             const struct rdma_server_backend *be,
                             struct rdma_server_answer *a) {
  pthread_mutex_lock(&s->lock);
  struct session *x = rdma_srv_find_locked(s, r->sid, r->sid_len);
  /* Another principal's session looks exactly like an unknown one. */
  if (!x || x->cancelled || strcmp(x->principal, principal) ||
      (x->state == S_PREPARED && rdma_now() > x->expires)) {
    pthread_mutex_unlock(&s->lock);
    rdma_srv_error(a, 404, "NoSuchRdmaSession",
                   "no such session (unknown, expired or cancelled)");
    return NULL;
  }
  if (x->cookie != r->cookie) {
    pthread_mutex_unlock(&s->lock);
    rdma_srv_error(a, 403, "AccessDenied", "the cookie does not match");
    return NULL;
  }
  if (x->state != S_PREPARED) {
    pthread_mutex_unlock(&s->lock);
    rdma_srv_error(a, 409, "Conflict", "READY was already received");
    return NULL;
  }
  x->refs++;
  pthread_mutex_unlock(&s->lock);
  /* Re-authorize outside the lock: the backend may be slow. */
  struct rdma_server_target t;
  rdma_srv_target_of(x, &t);
  if (be->authorize(be->ctx, &t, a) != 0) {
    rdma_srv_backend_error(a, "authorization");
    rdma_srv_unref(s, x, 0);
    return NULL;
  }
  pthread_mutex_lock(&s->lock);
  int ok = x->state == S_PREPARED && !x->cancelled && x->in_table;
  if (ok)
    x->state = S_TRANSFERRING;
  pthread_mutex_unlock(&s->lock);
  if (!ok) {
    rdma_srv_error(a, 409, "Conflict", "READY raced another READY or CANCEL");
    rdma_srv_unref(s, x, 0);
    return NULL;
  }
  rdma_srv_reset(a);
  return x;
}

/* The DESTROY_QP fault of a PUT, before its QP goes: 1 when the client's
 * WRITE WITH IMM has already arrived and been acknowledged. PREPARE paired
 * the QP, so a WRITE sent after the client's grace lands whenever READY is
 * handled; on a loaded server READY may meet the fault only after that,
 * and the client, its data phase over, waits for FINAL: it must have the
 * failure at once, not at T_exec. The QP goes to ERROR first, so that
 * nothing more is acknowledged; the posted receive then either has
 * completed or is flushed, and its completion says which. */
static int put_landed_before_fault(struct session *x, double deadline) {
  if (rdma_qp_to_error(x->qp) != 0)
    return 0;
  double until = rdma_now() + 1; /* a flush is prompt; bound it anyway */
  if (until > deadline)
    until = deadline;
  struct rdma_wc wc;
  return rdma_qp_wait(x->qp, until, x->wake_fd, &wc) == RDMA_WAIT_OK &&
         wc.status == 0 && wc.opcode == RDMA_WC_RECV_RDMA_WITH_IMM;
}

/* The DESTROY_QP and LOSE_QP faults: the QP vanishes mid-transfer. A
 * GET's write may or may not land; a PUT's write finds no responder and
 * the client's retries run out (unless it had landed already). */
static int lose_qp(struct rdma_server *s, struct session *x, double deadline,
                   struct rdma_server_answer *a) {
  int landed = x->op == RDMA_OP_PUT && put_landed_before_fault(x, deadline);
  uint32_t qpn = rdma_qp_num(x->qp);
  x->leak = rdma_qp_destroy(x->qp) != 0;
  x->qp = NULL;
  pthread_mutex_lock(&s->lock);
  s->st.qps--;
  pthread_mutex_unlock(&s->lock);
  rdma_retired_add(s->retired, qpn, x->server_psn);
  if (!x->leak) {
    /* A PUT answers only when the client gave up (CANCEL) or T_exec
     * passed, so that the client meets the failure in its own data
     * phase, as a completion error. */
    double left = deadline - rdma_now();
    if (x->op == RDMA_OP_PUT && !landed && left > 0) {
      struct pollfd pf = {x->wake_fd, POLLIN, 0};
      poll(&pf, 1, (int)(left * 1000) + 1);
    }
  }
  return rdma_srv_error(a, 500, "InternalError",
                        "the data phase failed (QP destroyed: fault "
                        "injection)");
}

/* The §4.4 data phase; 0 or the error status. */
static int data_phase(struct rdma_server *s, struct session *x,
                      const struct ready_req *r, unsigned faults,
                      struct rdma_server_answer *a) {
  struct hipobj_error e;
  memset(&e, 0, sizeof e);
  double deadline = rdma_now() + s->t_exec;
  if (x->op == RDMA_OP_GET && (!r->addr || !r->rkey))
    return rdma_srv_error(a, 400, "InvalidArgument",
                          "a GET needs X-Amz-Rdma-Mr-Addr and -Mr-Rkey");
  /* The QP must be the one the token announced (§6.4). */
  if (!x->loopback && r->qpn != (x->peer.qpn & RDMA_QPN_MAX))
    return rdma_srv_error(a, 400, "InvalidArgument",
                          "X-Amz-Rdma-Qpn differs from the PREPARE token");
  if (x->lost) /* in ERROR since PREPARE (fault injection): no pairing */
    return lose_qp(s, x, deadline, a);
  const uint8_t *dgid = x->loopback ? x->sgid : x->peer.gid;
  if ((!x->paired && rdma_qp_rtr(x->qp, r->qpn, dgid, x->sgid_index,
                                 x->client_psn, &e) != HIPOBJ_OK) ||
      rdma_qp_rts(x->qp, x->server_psn, &e) != HIPOBJ_OK)
    return rdma_srv_error(a, 500, "InternalError", "pairing failed: %s",
                          e.message);
  if (x->op == RDMA_OP_GET &&
      rdma_qp_post_write_imm(x->qp, x->buf, (uint32_t)x->staged,
                             x->mr->pieces[0].lkey, r->addr, r->rkey, x->cookie,
                             1, &e) != HIPOBJ_OK)
    return rdma_srv_error(a, 500, "InternalError", "%s", e.message);
  if (faults & RDMA_SERVER_FAULT_DESTROY_QP)
    return lose_qp(s, x, deadline, a);
  for (;;) {
    struct rdma_wc wc;
    int w = rdma_qp_wait(x->qp, deadline, x->wake_fd, &wc);
    if (w == RDMA_WAIT_TIMEOUT)
      return rdma_srv_error(a, 408, "RequestTimeout",
                            "no data within T_exec (%.0f s)", s->t_exec);
    if (w == RDMA_WAIT_WOKEN)
      return rdma_srv_error(a, 409, "Conflict", "the session was cancelled");
    if (w != RDMA_WAIT_OK)
      return rdma_srv_error(a, 500, "InternalError", "polling the CQ failed");
    if (wc.status == WC_RETRY_EXC_ERR || wc.status == WC_RNR_RETRY_EXC_ERR)
      return rdma_srv_error(a, 409, "Conflict", "peer busy: %s", wc.status_str);
    if (wc.status != 0)
      return rdma_srv_error(a, 500, "InternalError", "completion %s",
                            wc.status_str);
    if (x->op == RDMA_OP_GET) {
      if (wc.opcode == RDMA_WC_RDMA_WRITE)
        return 0;
      continue;
    }
    if (wc.opcode != RDMA_WC_RECV_RDMA_WITH_IMM || !wc.with_imm ||
        wc.imm != x->cookie || wc.byte_len != x->size)
      return rdma_srv_error(a, 500, "InternalError",
                            "the WRITE WITH IMM does not verify (immediate "
                            "or length)");
    return 0;
  }
}

static void final_answer(struct session *x, uint64_t bytes,
                         struct rdma_server_answer *a) {
  char cookie[9], sum[RDMA_CHECKSUM_VALUE_LEN + 1], b64[CRC64NVME_B64_LEN + 1];
  rdma_cookie_format(x->cookie, cookie);
  rdma_checksum_format(x->crc, sum);
  crc64nvme_to_base64(x->crc, b64);
  rdma_srv_reset(a);
  a->http_status = 200;
  rdma_srv_add(a, "X-Amz-Rdma-Protocol", "%s", RDMA_PROTOCOL);
  rdma_srv_add(a, "X-Amz-Rdma-Cookie", "%s", cookie);
  rdma_srv_add(a, "X-Amz-Rdma-Bytes-Transferred", "%llu",
               (unsigned long long)bytes);
  if (x->obj.etag[0]) {
    int quoted = x->obj.etag[0] == '"';
    rdma_srv_add(a, "X-Amz-Rdma-Etag", "%s%s%s", quoted ? "" : "\"",
                 x->obj.etag, quoted ? "" : "\"");
    rdma_srv_add(a, "ETag", "%s", a->hdrs[a->n - 1].value);
  }
  /* Both spellings (§8 item 5) and both checksum forms (§8 item 6). */
  if (x->obj.version_id[0]) {
    rdma_srv_add(a, "X-Amz-Rdma-Version-Id", "%s", x->obj.version_id);
    rdma_srv_add(a, "x-amz-version-id", "%s", x->obj.version_id);
  }
  rdma_srv_add(a, "X-Amz-Rdma-Checksum", "%s", sum);
  rdma_srv_add(a, "x-amz-rdma-checksum-crc64nvme", "%s", b64);
  rdma_srv_add(a, "X-Amz-Rdma-Capabilities", "mp");
}

int rdma_server_ready(struct rdma_server *s, const struct rdma_header *h,
                      size_t n, const char *principal,
                      const struct rdma_server_backend *be, unsigned faults,
                      struct rdma_server_answer *a) {
  rdma_srv_reset(a);
  struct ready_req r;
  if (!principal || !*principal)
    return rdma_srv_error(a, 403, "AccessDenied",
                          "anonymous RDMA requests are refused");
  int rc = parse_ready(h, n, &r, a);
  if (rc)
    return rc;
  struct session *x = claim(s, &r, principal, be, a);
  if (!x)
    return a->http_status;
  rc = data_phase(s, x, &r, faults, a);
  if (!rc && x->op == RDMA_OP_PUT) {
    x->crc = crc64nvme(x->buf, x->size);
    struct rdma_server_target t;
    rdma_srv_target_of(x, &t);
    if (be->commit(be->ctx, &t, x->buf, x->size, x->crc, &x->obj, a) != 0)
      rc = rdma_srv_backend_error(a, "storing the object");
  }
  if (!rc)
    final_answer(x, x->op == RDMA_OP_GET ? x->staged : x->size, a);
  pthread_mutex_lock(&s->lock);
  x->state = S_DONE;
  if (rc)
    s->st.failed++;
  else
    s->st.completed++;
  pthread_mutex_unlock(&s->lock);
  /* The session serves one transfer (§3.8): gone after FINAL. */
  rdma_srv_unref(s, x, 1);
  return a->http_status;
}

int rdma_server_cancel(struct rdma_server *s, const struct rdma_header *h,
                       size_t n, const char *principal,
                       struct rdma_server_answer *a) {
  rdma_srv_reset(a);
  size_t l, sl;
  const char *v = rdma_srv_hdr(h, n, "X-Amz-Rdma-Protocol", &l);
  if (!v || !rdma_protocol_is_v2(v, l))
    return rdma_srv_error(a, 400, "InvalidRequest",
                          "X-Amz-Rdma-Protocol is not hipobj-rc-v2");
  if (!principal || !*principal)
    return rdma_srv_error(a, 403, "AccessDenied",
                          "anonymous RDMA requests are refused");
  const char *sid = rdma_srv_hdr(h, n, "X-Amz-Rdma-Session", &sl);
  if (!sid || rdma_session_check(sid, sl) != 0)
    return BAD("X-Amz-Rdma-Session");
  while (*sid == ' ' || *sid == '\t')
    sid++;
  struct session *gone = NULL;
  pthread_mutex_lock(&s->lock);
  struct session *x = rdma_srv_find_locked(s, sid, RDMA_SESSION_HEX_LEN);
  /* A foreign session is left alone, and the answer does not tell. */
  if (x && !strcmp(x->principal, principal) && !x->cancelled) {
    x->cancelled = 1;
    s->st.cancelled++;
    if (x->state == S_TRANSFERRING) {
      uint64_t one = 1;
      if (write(x->wake_fd, &one, sizeof one) < 0) {
      } /* cannot fail: the counter is tiny */
    } else if (x->state == S_PREPARED && x->refs == 1) {
      x->refs++; /* destroyed below, outside the lock */
      gone = x;
    }
  }
  pthread_mutex_unlock(&s->lock);
  if (gone)
    rdma_srv_unref(s, gone, 1);
  a->http_status = 204;
  rdma_srv_add(a, "X-Amz-Rdma-Protocol", "%s", RDMA_PROTOCOL);
  return 204;
}
