/* test_rdma_rc_fail.c - hipobj-rc-v2 failure paths over real verbs, through
 * the in-process harness (rc_harness.h): cookie mismatch, T_prep expiry
 * and the reaper, declines and the fallback policy of §6.3, tampered
 * PREPARE replies and FINALs, CANCEL idempotence, a QP destroyed in the
 * data phase, duplicate READY, T_exec, and the session limit. After each
 * test h_stop() checks that no session, QP or MR is left. Part of
 * test_rdma_rc (suite rdma). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rc_harness.h"
#include "rdma/qp.h"
#include "src/base/error.h"

static struct harness H;

static void fini(void) {
  h_stop(&H);
}

static void start(const struct rdma_server_opts *so) {
  memset(&H, 0, sizeof H);
  h_start(&H, so, NULL);
}

static void init_default(void) {
  start(NULL);
}

TestSuite(rcfail, .init = init_default, .fini = fini, .timeout = 300);
TestSuite(rcfail_knob, .fini = fini, .timeout = 300);

static unsigned char *object(const char *key, size_t len) {
  unsigned char *d = h_alloc(len);
  h_fill(d, len, 7);
  h_put_object(&H, "bkt", key, d, len);
  return d;
}

static int xfer(int is_put, const char *key, void *buf, uint64_t off,
                uint64_t size, struct rdma_rc_result *res,
                struct hipobj_error *err) {
  struct rdma_rc_request rq = h_request(&H, "bkt", key, buf, off, size);
  memset(err, 0, sizeof *err);
  return is_put ? rdma_rc_put(H.eng, &rq, res, err)
                : rdma_rc_get(H.eng, &rq, res, err);
}

static void wrong_cookie(struct harness *h, const char *path,
                         struct h_header *hdrs, size_t *n) {
  (void)h;
  if (!strcmp(path, RDMA_PATH_READY))
    h_header_set(hdrs, *n, "X-Amz-Rdma-Cookie", "0badc0de");
}

Test(rcfail, cookie_mismatch) {
  unsigned char *d = object("k", 5000), *buf = h_alloc(5000);
  H.on_request = wrong_cookie;
  for (int put = 0; put < 2; put++) {
    struct rdma_rc_result res;
    struct hipobj_error err;
    cr_expect_eq(xfer(put, "k", buf, 0, 5000, &res, &err),
                 HIPOBJ_E_ACCESS_DENIED, "%s", err.message);
    cr_expect_eq(res.http_status, 403);
    cr_expect_eq(res.fallback, 0);
    cr_expect_eq(res.ready_sent, 1);
    cr_expect_eq(hipobj_error_http_status(&err), 403);
  }
  /* Each failure cancelled its session: nothing is left to reap. */
  cr_expect_eq(atomic_load(&H.cancels), 2);
  struct rdma_server_stats st;
  rdma_server_get_stats(H.srv, &st);
  cr_expect_eq(st.sessions, 0);
  cr_expect_eq(st.cancelled, 2);
  free(d);
  free(buf);
}

/* A PREPARE through the harness ops with the loopback token: a session
 * that no client QP will ever use. */
static int direct_prepare(const char *op, const char *size, char sid[33]) {
  char zero[RDMA_TOKEN_HEX_LEN + 1];
  memset(zero, '0', RDMA_TOKEN_HEX_LEN);
  zero[RDMA_TOKEN_HEX_LEN] = '\0';
  struct rdma_header h[] = {{"x-amz-rdma-protocol", RDMA_PROTOCOL},
                            {"x-amz-rdma-token", zero},
                            {"x-amz-rdma-psn", "00ff10"},
                            {"x-amz-rdma-cookie", "1a2b3c4d"},
                            {"x-amz-rdma-op", op},
                            {"x-amz-rdma-target", "/bkt/k"},
                            {"x-amz-rdma-size", size}};
  struct rdma_control_answer a = {.headers = HBUF_INIT};
  cr_assert_eq(H.ops.call(H.ops.ctx, RDMA_PATH_PREPARE, h, 7, 1000, &a), 0);
  size_t l;
  const char *v = rdma_answer_header(&a, "X-Amz-Rdma-Session", &l);
  if (v && l == 32) {
    memcpy(sid, v, 32);
    sid[32] = '\0';
  }
  int st = a.http_status;
  hbuf_free(&a.headers);
  return st;
}

static int direct_cancel(const char *sid, const char *principal) {
  struct rdma_header h[] = {{"X-Amz-Rdma-Protocol", RDMA_PROTOCOL},
                            {"X-Amz-Rdma-Session", sid}};
  struct rdma_server_answer a;
  return rdma_server_cancel(H.srv, h, 2, principal, &a);
}

Test(rcfail_knob, prepare_timeout_reaped) {
  struct rdma_server_opts so = RDMA_SERVER_OPTS_INIT;
  so.prep_timeout_ms = 300;
  so.reaper_interval_ms = 50;
  start(&so);
  unsigned char *d = object("k", 4096), *buf = h_alloc(4096);
  /* READY arrives after T_prep: the session is gone (404). */
  H.ready_delay_ms = 900;
  struct rdma_rc_result res;
  struct hipobj_error err;
  cr_expect_eq(xfer(0, "k", buf, 0, 4096, &res, &err), HIPOBJ_E_NOT_FOUND, "%s",
               err.message);
  cr_expect_eq(res.http_status, 404);
  cr_expect_eq(res.fallback, 0);
  struct rdma_server_stats st;
  rdma_server_get_stats(H.srv, &st);
  cr_expect_geq(st.expired, 1);
  /* A session that never sees READY: the reaper alone frees it. */
  char sid[33] = "";
  cr_assert_eq(direct_prepare("PUT", "65536", sid), 200);
  rdma_server_get_stats(H.srv, &st);
  cr_expect_eq(st.sessions, 1);
  cr_expect_eq(st.qps, 1);
  cr_expect_eq(st.mrs, 1);
  usleep(600 * 1000);
  rdma_server_get_stats(H.srv, &st);
  cr_expect_eq(st.sessions, 0);
  cr_expect_eq(st.qps, 0);
  cr_expect_eq(st.mrs, 0);
  cr_expect_eq(st.staging_bytes, 0);
  cr_expect_eq(rdma_qp_live_count(), 0);
  cr_expect_eq(rdma_mr_live_count(), 0);
  free(d);
  free(buf);
}

/* ---- declines and the fallback policy ---------------------------------- */

static int prepare_status;
static int prepare_echo;
static int canned_prepare(struct harness *h, struct rdma_server_answer *a) {
  (void)h;
  memset(a, 0, sizeof *a);
  a->http_status = prepare_status;
  snprintf(a->s3_code, sizeof a->s3_code, "Canned");
  if (prepare_echo)
    h_answer_set(a, "X-Amz-Rdma-Protocol", RDMA_PROTOCOL);
  return 1;
}

Test(rcfail, declines_and_fallback_policy) {
  unsigned char *d = object("k", 4096), *buf = h_alloc(4096);
  struct rdma_rc_result res;
  struct hipobj_error err;
  /* The server's own decline: 501 + unsupported. */
  H.prepare_faults = RDMA_SERVER_FAULT_DECLINE;
  cr_expect_eq(xfer(0, "k", buf, 0, 4096, &res, &err), HIPOBJ_E_UNSUPPORTED);
  cr_expect_eq(res.fallback, 1, "%s", res.reason);
  cr_expect_eq(res.ready_sent, 0);
  cr_expect_eq(res.http_status, 501);
  H.prepare_faults = 0;
  /* Canned answers: status, echo, offset -> fallback? */
  const struct {
    int status, echo;
    uint64_t off;
    int fallback;
  } cases[] = {
      {501, 0, 0, 1}, {501, 1, 0, 1},          {404, 0, 0, 1}, {405, 0, 0, 1},
      {404, 1, 0, 0}, {413, 1, 0, 1},          {400, 1, 0, 0}, {403, 1, 0, 0},
      {503, 1, 0, 0}, {400, 1, 2147483000, 1}, {500, 0, 0, 0},
  };
  H.on_prepare = canned_prepare;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prepare_status = cases[i].status;
    prepare_echo = cases[i].echo;
    int rc = xfer(0, "k", buf, cases[i].off, 4096, &res, &err);
    cr_expect_neq(rc, HIPOBJ_OK);
    cr_expect_eq(res.fallback, cases[i].fallback, "case %zu (%d): %s", i,
                 cases[i].status, res.reason);
    cr_expect_eq(res.http_status, cases[i].status, "case %zu", i);
    if (cases[i].fallback)
      cr_expect_eq(rc, HIPOBJ_E_UNSUPPORTED, "case %zu", i);
  }
  H.on_prepare = NULL;
  /* Real 404 (no such key, with the echo) and 403: errors. */
  cr_expect_eq(xfer(0, "nokey", buf, 0, 4096, &res, &err), HIPOBJ_E_NOT_FOUND);
  cr_expect_eq(res.fallback, 0);
  H.deny_bucket = "bkt";
  cr_expect_eq(xfer(1, "k", buf, 0, 4096, &res, &err), HIPOBJ_E_ACCESS_DENIED);
  cr_expect_eq(res.fallback, 0);
  cr_expect_eq(atomic_load(&H.readies), 0);
  free(d);
  free(buf);
}

Test(rcfail_knob, limits) {
  struct rdma_server_opts so = RDMA_SERVER_OPTS_INIT;
  so.max_sessions = 1;
  so.max_size = 8192;
  start(&so);
  unsigned char *d = object("k", 10000), *buf = h_alloc(10000);
  struct rdma_rc_result res;
  struct hipobj_error err;
  /* A GET above the server's size limit: 413, then sessions half as
   * large until they fit (two of 5000 bytes). */
  memset(buf, 0, 10000);
  cr_expect_eq(xfer(0, "k", buf, 0, 10000, &res, &err), HIPOBJ_OK, "%s",
               err.message);
  cr_expect_eq(res.sessions, 2);
  cr_expect_eq(res.bytes, 10000);
  cr_expect_eq(memcmp(buf, d, 10000), 0);
  /* A PUT is one session by protocol: 413, fallback allowed. */
  cr_expect_eq(xfer(1, "k2", buf, 0, 10000, &res, &err), HIPOBJ_E_UNSUPPORTED);
  cr_expect_eq(res.http_status, 413);
  cr_expect_eq(res.fallback, 1);
  /* One session held: the next PREPARE gets 503 SlowDown. */
  char sid[33] = "";
  cr_assert_eq(direct_prepare("GET", "100", sid), 200);
  cr_expect_eq(xfer(0, "k", buf, 0, 100, &res, &err), HIPOBJ_E_THROTTLED);
  cr_expect_eq(res.http_status, 503);
  cr_expect_eq(res.fallback, 0);
  cr_expect_eq(direct_cancel(sid, "alice"), 204);
  cr_expect_eq(xfer(0, "k", buf, 0, 100, &res, &err), HIPOBJ_OK, "%s",
               err.message);
  free(d);
  free(buf);
}

/* ---- tampered answers ------------------------------------------------------
 */

static int tamper;
static void tamper_answer(struct harness *h, const char *path,
                          struct rdma_server_answer *a) {
  (void)h;
  int ready = !strcmp(path, RDMA_PATH_READY);
  switch (tamper) {
  case 1: /* more bytes than asked */
    if (ready)
      h_answer_set(a, "X-Amz-Rdma-Bytes-Transferred", "999999");
    break;
  case 2: /* fewer bytes (a PUT must be exact) */
    if (ready)
      h_answer_set(a, "X-Amz-Rdma-Bytes-Transferred", "4095");
    break;
  case 3:
    if (ready)
      h_answer_set(a, "X-Amz-Rdma-Cookie", "00000001");
    break;
  case 4:
    if (ready)
      h_answer_del(a, "X-Amz-Rdma-Cookie");
    break;
  case 5: /* a valid checksum of other bytes, both forms */
    if (ready) {
      h_answer_set(a, "X-Amz-Rdma-Checksum", "CRC64NVME AAAAAAAAAAA=");
      h_answer_set(a, "x-amz-rdma-checksum-crc64nvme", "AAAAAAAAAAA=");
    }
    break;
  case 6: /* the two forms disagree */
    if (ready)
      h_answer_set(a, "x-amz-rdma-checksum-crc64nvme", "rosUhgp5mIg=");
    break;
  case 7:
    if (ready)
      h_answer_set(a, "X-Amz-Rdma-Checksum", "CRC64NVME not-base64!");
    break;
  case 8:
    if (ready)
      h_answer_del(a, "X-Amz-Rdma-Protocol");
    break;
  case 9: /* device-less "success" (§8 item 12) */
    if (!ready && a->http_status == 200)
      h_answer_set(a, "X-Amz-Rdma-Reply",
                   "200:000000000000000000000000000000000000000000000000000"
                   "0000000000000000000000000000000000000");
    break;
  case 10:
    if (!ready && a->http_status == 200)
      h_answer_set(a, "X-Amz-Rdma-Psn", "000000");
    break;
  case 11: /* a GET FINAL of 204 */
    if (ready)
      a->http_status = 204;
    break;
  }
}

Test(rcfail, tampered_answers) {
  unsigned char *d = object("k", 4096), *buf = h_alloc(4096);
  H.on_answer = tamper_answer;
  const struct {
    int mode, is_put;
  } cases[] = {{1, 0}, {2, 1}, {3, 0}, {3, 1}, {4, 1},  {5, 0}, {5, 1},
               {6, 0}, {7, 0}, {8, 0}, {9, 0}, {10, 1}, {11, 0}};
  int cancels = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tamper = cases[i].mode;
    struct rdma_rc_result res;
    struct hipobj_error err;
    /* A FINAL whose CRC does not match the bytes is an integrity error;
     * every other tampered answer a protocol error. */
    cr_expect_eq(xfer(cases[i].is_put, "k", buf, 0, 4096, &res, &err),
                 tamper == 5 ? HIPOBJ_E_INTEGRITY : HIPOBJ_E_PROTOCOL,
                 "mode %d: %s", tamper, err.message);
    cr_expect_eq(res.fallback, 0, "mode %d", tamper);
    /* Every failure after a session id is known sends CANCEL. */
    cr_expect_eq(atomic_load(&H.cancels), ++cancels, "mode %d", tamper);
    cr_expect_eq(atomic_load(&H.cancel_status), 204);
    printf("tamper %d: %s\n", tamper, err.message);
  }
  tamper = 0;
  free(d);
  free(buf);
}

/* ---- CANCEL, duplicate READY, T_exec ----------------------------------- */

Test(rcfail, cancel_idempotent) {
  char sid[33] = "";
  cr_assert_eq(direct_prepare("PUT", "4096", sid), 200);
  /* Another principal: 204, and the session stays. */
  cr_expect_eq(direct_cancel(sid, "mallory"), 204);
  struct rdma_server_stats st;
  rdma_server_get_stats(H.srv, &st);
  cr_expect_eq(st.sessions, 1);
  /* READY from another principal looks like an unknown session (§6.4);
   * it fails before the backend is ever asked. */
  struct rdma_header rh[] = {{"X-Amz-Rdma-Protocol", RDMA_PROTOCOL},
                             {"X-Amz-Rdma-Session", sid},
                             {"X-Amz-Rdma-Cookie", "1a2b3c4d"},
                             {"X-Amz-Rdma-Qpn", "123"}};
  struct rdma_server_backend none = {NULL, NULL, NULL, NULL};
  struct rdma_server_answer a;
  cr_expect_eq(rdma_server_ready(H.srv, rh, 4, "mallory", &none, 0, &a), 404);
  cr_expect_eq(direct_cancel(sid, "alice"), 204);
  cr_expect_eq(direct_cancel(sid, "alice"), 204);
  cr_expect_eq(direct_cancel("0123456789abcdef0123456789abcdef", "alice"), 204);
  rdma_server_get_stats(H.srv, &st);
  cr_expect_eq(st.sessions, 0);
  cr_expect_eq(st.cancelled, 1);
  /* Malformed ids are a 400, not a silent 204. */
  cr_expect_eq(direct_cancel("xyz", "alice"), 400);
}

struct ready_arg {
  const char *sid;
  int status;
};

static void answered_noop(void *arg) {
  (void)arg;
}

/* READY through the harness ops (its backend re-authorizes), waited for. */
static int ready_direct(const char *sid, const char *cookie) {
  struct rdma_header h[] = {{"X-Amz-Rdma-Protocol", RDMA_PROTOCOL},
                            {"X-Amz-Rdma-Session", sid},
                            {"X-Amz-Rdma-Cookie", cookie},
                            {"X-Amz-Rdma-Qpn", "123"}};
  void *p = NULL;
  cr_assert_eq(H.ops.ready_start(H.ops.ctx, RDMA_PATH_READY, h, 4, 10000,
                                 answered_noop, NULL, &p),
               0);
  struct rdma_control_answer a = {.headers = HBUF_INIT};
  H.ops.ready_wait(H.ops.ctx, p, 10000, &a);
  hbuf_free(&a.headers);
  return a.http_status;
}

static void *ready_thread(void *arg) {
  struct ready_arg *r = arg;
  r->status = ready_direct(r->sid, "1a2b3c4d");
  return NULL;
}

Test(rcfail_knob, duplicate_ready_and_exec_timeout) {
  struct rdma_server_opts so = RDMA_SERVER_OPTS_INIT;
  so.exec_timeout_ms = 800;
  start(&so);
  char sid[33] = "";
  cr_assert_eq(direct_prepare("PUT", "4096", sid), 200);
  /* Wrong cookie: 403, and the session is still claimable. */
  cr_expect_eq(ready_direct(sid, "0badc0de"), 403);
  struct ready_arg r = {sid, 0};
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, ready_thread, &r), 0);
  usleep(200 * 1000); /* READY 1 is in its data phase, waiting */
  cr_expect_eq(ready_direct(sid, "1a2b3c4d"), 409);
  pthread_join(th, NULL);
  cr_expect_eq(r.status, 408);                      /* no data within T_exec */
  cr_expect_eq(ready_direct(sid, "1a2b3c4d"), 404); /* gone after FINAL */
}

/* ---- the QP vanishes in the data phase ---------------------------------- */

Test(rcfail, destroyed_qp) {
  unsigned char *d = object("k", 65536), *buf = h_alloc(65536);
  H.ready_faults = RDMA_SERVER_FAULT_DESTROY_QP;
  struct rdma_rc_result res;
  struct hipobj_error err;
  /* GET: the server fails READY (500) while the client waits for data. */
  cr_expect_eq(xfer(0, "k", buf, 0, 65536, &res, &err), HIPOBJ_E_SERVER_ERROR,
               "%s", err.message);
  cr_expect_eq(res.http_status, 500);
  cr_expect_eq(res.fallback, 0);
  /* PUT: the client's WRITE finds no responder: a completion error. */
  cr_expect_eq(xfer(1, "k2", buf, 0, 65536, &res, &err), HIPOBJ_E_NETWORK, "%s",
               err.message);
  cr_expect_geq(res.rdma_status, 1, "%s", res.reason);
  cr_expect_eq(hipobj_error_rdma_status(&err), res.rdma_status);
  cr_expect_eq(res.ready_sent, 1);
  cr_expect_null(h_find(&H, "bkt", "k2"));
  printf("destroyed QP: %s (wc status %d)\n", err.message, res.rdma_status);
  free(d);
  free(buf);
}
