/* test_rdma_rc.c - hipobj-rc-v2 transfers end to end over real verbs: the
 * client engine against the server engine through the in-process harness
 * (rc_harness.h): GET whole and ranged, GET split into sessions (at the
 * port's max_msg_sz and at a forced small limit), PUT of several sizes,
 * PUT of parts above the session limit, caller registrations, and 16
 * transfers in flight from 4 threads. Objects stay small: the Soft-RoCE
 * guest is emulated. Part of test_rdma_rc (suite rdma). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_harness.h"
#include "rdma/mr.h"
#include "rdma/rc_async.h"
#include "src/base/crc64nvme.h"
#include "src/base/error.h"

static struct harness H;

static void fini(void) {
  h_stop(&H);
}

static void init_default(void) {
  memset(&H, 0, sizeof H);
  h_start(&H, NULL, NULL);
}

TestSuite(rc, .init = init_default, .fini = fini, .timeout = 300);
/* Tests that start the harness themselves, with options. */
TestSuite(rc_knob, .fini = fini, .timeout = 300);

static unsigned char *object(const char *key, size_t len, unsigned seed) {
  unsigned char *d = h_alloc(len);
  h_fill(d, len, seed);
  h_put_object(&H, "bkt", key, d, len);
  return d;
}

static int get(const char *key, void *buf, uint64_t off, uint64_t size,
               struct rdma_rc_result *res, struct hipobj_error *err) {
  struct rdma_rc_request rq = h_request(&H, "bkt", key, buf, off, size);
  memset(err, 0, sizeof *err);
  return rdma_rc_get(H.eng, &rq, res, err);
}

Test(rc, get_whole) {
  size_t len = 64 * 1024 + 123;
  unsigned char *d = object("dir/whole obj", len, 1), *buf = h_alloc(len);
  struct rdma_rc_result res;
  struct hipobj_error err;
  cr_assert_eq(get("dir/whole obj", buf, 0, len, &res, &err), HIPOBJ_OK, "%s",
               err.message);
  cr_expect_eq(res.bytes, len);
  cr_expect_eq(res.sessions, 1);
  cr_expect(res.checksum_present && res.checksum_verified);
  cr_expect_eq(res.rdma_status, -1);
  cr_expect(memcmp(buf, d, len) == 0, "data differs");
  /* The ETag comes back without its quotes. */
  char want[40];
  snprintf(want, sizeof want, "%.16s",
           h_find(&H, "bkt", "dir/whole obj")->etag + 1);
  cr_expect_str_eq(res.etag, want);
  struct rdma_server_stats st;
  rdma_server_get_stats(H.srv, &st);
  cr_expect_eq(st.completed, 1);
  free(d);
  free(buf);
}

Test(rc, get_ranges) {
  size_t len = 3 * 4096 + 77;
  unsigned char *d = object("r", len, 2), *buf = h_alloc(len);
  struct rdma_rc_result res;
  struct hipobj_error err;
  /* first byte, last byte, an unaligned middle piece */
  const uint64_t cases[][2] = {
      {0, 1}, {len - 1, 1}, {4097, 5000}, {3, len - 3}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memset(buf, 0xee, len);
    uint64_t off = cases[i][0], n = cases[i][1];
    cr_assert_eq(get("r", buf + 1, off, n, &res, &err), HIPOBJ_OK,
                 "case %zu: %s", i, err.message);
    cr_expect_eq(res.bytes, n, "case %zu", i);
    cr_expect(res.checksum_verified, "case %zu", i);
    cr_expect(memcmp(buf + 1, d + off, n) == 0, "case %zu: data differs", i);
    cr_expect_eq(buf[0], 0xee, "case %zu: wrote before the buffer", i);
    cr_expect_eq(buf[1 + n], 0xee, "case %zu: wrote past the range", i);
  }
  /* Past the end: 416 at PREPARE, an error, no fallback. */
  cr_expect_eq(get("r", buf, len - 10, 20, &res, &err), HIPOBJ_E_INVALID_RANGE,
               "%s", err.message);
  cr_expect_eq(res.http_status, 416);
  cr_expect_eq(res.fallback, 0);
  cr_expect_eq(res.ready_sent, 0);
  free(d);
  free(buf);
}

/* Above the port's max_msg_sz (8 MiB on rxe): several sessions. */
Test(rc, get_split_at_max_msg) {
  uint32_t max = rdma_engine_session_max(H.eng);
  size_t len = max < (8u << 20) ? (size_t)max + 4097 : (8u << 20) + 1;
  unsigned char *d = object("big", len, 3), *buf = h_alloc(len);
  struct rdma_rc_result res;
  struct hipobj_error err;
  cr_assert_eq(get("big", buf, 0, len, &res, &err), HIPOBJ_OK, "%s",
               err.message);
  cr_expect_eq(res.bytes, len);
  cr_expect_eq(res.sessions, (unsigned)((len + max - 1) / max));
  cr_expect(memcmp(buf, d, len) == 0, "data differs");
  free(d);
  free(buf);
}

/* A forced small session limit: an unaligned range over 4 sessions. */
Test(rc_knob, get_split_forced) {
  memset(&H, 0, sizeof H);
  struct rdma_engine_opts eo = RDMA_ENGINE_OPTS_INIT;
  eo.max_session_bytes = 4096;
  h_start(&H, NULL, &eo);
  size_t len = 20000;
  unsigned char *d = object("s", len, 4), *buf = h_alloc(len);
  struct rdma_rc_result res;
  struct hipobj_error err;
  cr_assert_eq(get("s", buf, 3, 13000, &res, &err), HIPOBJ_OK, "%s",
               err.message);
  cr_expect_eq(res.bytes, 13000);
  cr_expect_eq(res.sessions, 4);
  cr_expect(memcmp(buf, d + 3, 13000) == 0, "data differs");
  free(d);
  free(buf);
}

static int put(const char *key, void *buf, uint64_t size,
               const struct hparam *q, size_t nq, struct rdma_rc_result *res,
               struct hipobj_error *err) {
  struct rdma_rc_request rq = h_request(&H, "bkt", key, buf, 0, size);
  rq.query = q;
  rq.nq = nq;
  memset(err, 0, sizeof *err);
  return rdma_rc_put(H.eng, &rq, res, err);
}

Test(rc, put_sizes) {
  const size_t sizes[] = {1, 4096, (5u << 20) + 1};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t len = sizes[i];
    unsigned char *src = h_alloc(len);
    h_fill(src, len, 10 + (unsigned)i);
    char key[32];
    snprintf(key, sizeof key, "put-%zu", len);
    struct rdma_rc_result res;
    struct hipobj_error err;
    cr_assert_eq(put(key, src, len, NULL, 0, &res, &err), HIPOBJ_OK,
                 "%zu bytes: %s", len, err.message);
    cr_expect_eq(res.bytes, len);
    cr_expect(res.checksum_verified, "%zu bytes", len);
    const struct h_object *o = h_find(&H, "bkt", key);
    cr_assert_not_null(o, "%zu bytes: not stored", len);
    cr_expect_eq(o->len, len);
    cr_expect(memcmp(o->data, src, len) == 0, "%zu bytes: data differs", len);
    char want[40];
    snprintf(want, sizeof want, "%.16s", o->etag + 1);
    cr_expect_str_eq(res.etag, want);
    free(src);
  }
}

/* A PUT above the session limit is refused with fallback allowed; the
 * caller splits it into UploadPart sessions, as src/ does. */
static void put_in_parts(size_t len, uint32_t part) {
  unsigned char *src = h_alloc(len);
  h_fill(src, len, 21);
  struct rdma_rc_result res;
  struct hipobj_error err;
  cr_expect_eq(put("mp", src, len, NULL, 0, &res, &err), HIPOBJ_E_UNSUPPORTED);
  cr_expect_eq(res.fallback, 1, "%s", res.reason);
  cr_expect_eq(res.ready_sent, 0);
  unsigned n = 0;
  for (size_t at = 0; at < len; at += part) {
    char num[16];
    snprintf(num, sizeof num, "%u", ++n);
    struct hparam q[] = {{"uploadId", "up-1"}, {"partNumber", num}};
    size_t l = len - at < part ? len - at : part;
    cr_assert_eq(put("mp", src + at, l, q, 2, &res, &err), HIPOBJ_OK,
                 "part %u: %s", n, err.message);
    char want[16];
    snprintf(want, sizeof want, "part%u", n);
    cr_expect_str_eq(res.etag, want);
  }
  cr_expect_gt(n, 1);
  cr_assert_eq(h_complete(&H, "bkt", "mp", "up-1"), len);
  const struct h_object *o = h_find(&H, "bkt", "mp");
  cr_expect(memcmp(o->data, src, len) == 0, "data differs");
  free(src);
}

Test(rc, put_parts_at_max_msg) {
  uint32_t max = rdma_engine_session_max(H.eng);
  if (max > (8u << 20))
    cr_skip_test("max_msg_sz is %u: too large to split here", max);
  put_in_parts((size_t)max + 1, max);
}

Test(rc_knob, put_parts_forced) {
  memset(&H, 0, sizeof H);
  struct rdma_engine_opts eo = RDMA_ENGINE_OPTS_INIT;
  eo.max_session_bytes = 64 * 1024;
  h_start(&H, NULL, &eo);
  put_in_parts(3 * 64 * 1024 + 5, 64 * 1024);
}

/* The caller's own registrations: an explicit one, and a cache entry of a
 * library-owned buffer. */
Test(rc, caller_registrations) {
  size_t len = 10000;
  unsigned char *d = object("reg", len, 5), *buf = h_alloc(len);
  struct rdma_mr *m;
  cr_assert_eq(rdma_mr_reg(rdma_engine_pd(H.eng), buf, len,
                           RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE, 0, &m,
                           NULL),
               HIPOBJ_OK);
  struct rdma_rc_request rq = h_request(&H, "bkt", "reg", buf, 0, len);
  rq.mr = m;
  struct rdma_rc_result res;
  struct hipobj_error err;
  cr_assert_eq(rdma_rc_get(H.eng, &rq, &res, &err), HIPOBJ_OK, "%s",
               err.message);
  cr_expect(memcmp(buf, d, len) == 0);
  long live = rdma_mr_live_count();
  cr_expect_eq(rdma_mr_dereg(m, NULL), HIPOBJ_OK);
  cr_expect_eq(rdma_mr_live_count(), live - 1);
  /* Without REMOTE_WRITE it cannot be a GET destination: refused before
   * anything is sent. */
  cr_assert_eq(rdma_mr_reg(rdma_engine_pd(H.eng), buf, len, RDMA_MR_LOCAL_WRITE,
                           0, &m, NULL),
               HIPOBJ_OK);
  rq.mr = m;
  cr_expect_eq(rdma_rc_get(H.eng, &rq, &res, &err), HIPOBJ_E_INVALID_ARGUMENT);
  cr_expect_eq(res.fallback, 1);
  cr_expect_eq(atomic_load(&H.prepares), 1);
  cr_expect_eq(rdma_mr_dereg(m, NULL), HIPOBJ_OK);

  const struct rdma_mr *cm;
  memset(buf, 0, len);
  cr_assert_eq(rdma_mr_cache_acquire(rdma_engine_mr_cache(H.eng), RDMA_MEM_HOST,
                                     buf, len, &cm, NULL),
               HIPOBJ_OK);
  rq.mr = cm;
  cr_assert_eq(rdma_rc_get(H.eng, &rq, &res, &err), HIPOBJ_OK, "%s",
               err.message);
  cr_expect(memcmp(buf, d, len) == 0);
  rq.mr = cm; /* and as a PUT source */
  rq.key = "reg-back";
  cr_assert_eq(rdma_rc_put(H.eng, &rq, &res, &err), HIPOBJ_OK, "%s",
               err.message);
  rdma_mr_cache_release(rdma_engine_mr_cache(H.eng), cm);
  rdma_mr_cache_drop(rdma_engine_mr_cache(H.eng), buf, len);
  cr_expect(memcmp(h_find(&H, "bkt", "reg-back")->data, d, len) == 0);
  free(d);
  free(buf);
}

/* 4 threads start 4 transfers each, all 16 in flight together. */
#define NT 4
#define PER 4
struct xfer {
  int is_put;
  char key[16];
  unsigned char *buf, *want;
  size_t len;
  struct rdma_rc_request rq;
  struct rdma_rc_result res;
  struct hipobj_error err;
  struct rdma_rc_async *a;
  int rc;
};
static struct xfer X[NT][PER];

static void *thread_main(void *arg) {
  struct xfer *x = arg;
  for (int i = 0; i < PER; i++)
    cr_assert_eq(rdma_rc_start(H.eng, x[i].is_put, &x[i].rq, &x[i].res,
                               &x[i].err, &x[i].a),
                 HIPOBJ_OK);
  for (int i = 0; i < PER; i++)
    x[i].rc = rdma_rc_join(x[i].a);
  return NULL;
}

Test(rc, concurrent_16_from_4_threads) {
  for (int t = 0; t < NT; t++)
    for (int i = 0; i < PER; i++) {
      struct xfer *x = &X[t][i];
      x->is_put = (t + i) % 2;
      x->len = 32768 + (size_t)(t * PER + i) * 1001;
      snprintf(x->key, sizeof x->key, "c%d-%d", t, i);
      x->want = h_alloc(x->len);
      h_fill(x->want, x->len, (unsigned)(100 + t * PER + i));
      if (x->is_put) {
        x->buf = x->want;
      } else {
        h_put_object(&H, "bkt", x->key, x->want, x->len);
        x->buf = h_alloc(x->len);
      }
      x->rq = h_request(&H, "bkt", x->key, x->buf, 0, x->len);
    }
  pthread_t th[NT];
  for (int t = 0; t < NT; t++)
    cr_assert_eq(pthread_create(&th[t], NULL, thread_main, X[t]), 0);
  for (int t = 0; t < NT; t++)
    pthread_join(th[t], NULL);
  for (int t = 0; t < NT; t++)
    for (int i = 0; i < PER; i++) {
      struct xfer *x = &X[t][i];
      cr_expect_eq(x->rc, HIPOBJ_OK, "%s: %s", x->key, x->err.message);
      const unsigned char *got =
          x->is_put ? h_find(&H, "bkt", x->key)->data : x->buf;
      cr_expect(memcmp(got, x->want, x->len) == 0, "%s differs", x->key);
      if (!x->is_put)
        free(x->buf);
      free(x->want);
    }
  struct rdma_server_stats st;
  rdma_server_get_stats(H.srv, &st);
  cr_expect_eq(st.completed, NT * PER);
  cr_expect_eq(st.sessions, 0);
}
