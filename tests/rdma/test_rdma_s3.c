/* test_rdma_s3.c - the public S3 calls over the RDMA data path, against
 * hipobj-server --rdma auto on real verbs (Soft-RoCE in the guest): GETs and
 * PUTs report data path rdma-direct and move every byte by RDMA, multipart
 * parts go by RDMA, many transfers run at once, a declining server gets the
 * same bytes over HTTP (or a clear error under `require`), a data phase
 * broken by the server never yields wrong bytes reported as success, and
 * GETs by RDMA verify the object's CRC-64/NVME (whole and in parts) and
 * fail on a byte flipped in the stored object; a memory-mode server counts
 * RDMA PUTs against its cap. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../server/harness.h"

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(rdma_s3, .init = init, .fini = fini, .timeout = 300);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

static void start(const char *faults) {
  const char *extra[] = {"--rdma", "auto", faults ? "--faults" : NULL, faults,
                         NULL};
  srv_start(&srv, NULL, extra);
  cli = mk_client(srv.url, NULL, NULL, 4);
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
}

static void put_rdma(const char *key, const void *data, size_t n) {
  struct hipobj_mem src = hipobj_mem_host((void *)data, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, key, &src, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT, "%s: path %s", key,
               hipobj_data_path_name(res.path));
  cr_assert_eq(res.rdma_bytes, n);
}

Test(rdma_s3, get_whole_and_ranges_by_rdma) {
  start(NULL);
  size_t n = 300 * 1000 + 7;
  char *data = malloc(n), *back = calloc(1, n);
  fill_pattern(data, n, 1);
  put_rdma("obj", data, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "obj", &dst, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
  cr_assert_eq(res.bytes, n);
  cr_assert_eq(res.rdma_bytes, n);
  cr_assert_eq(memcmp(data, back, n), 0);
  cr_assert_str_neq(res.etag, "");
  const struct {
    uint64_t off, len;
  } ranges[] = {{0, 1}, {n - 1, 1}, {12345, 54321}, {777, 0}};
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
    memset(back, 0, n);
    struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
    o.has_range = 1;
    o.offset = ranges[i].off;
    o.length = ranges[i].len;
    OK(hipobj_s3_get(cli, T_BUCKET, "obj", &dst, &o, &res, err));
    uint64_t want = ranges[i].len ? ranges[i].len : n - ranges[i].off;
    cr_assert_eq(res.bytes, want, "range %zu", i);
    cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT, "range %zu", i);
    cr_assert_eq(memcmp(data + ranges[i].off, back, want), 0, "range %zu", i);
  }
  free(data);
  free(back);
}

Test(rdma_s3, puts_of_many_sizes_and_multipart_parts) {
  start(NULL);
  const size_t sizes[] = {1, 4096, (5u << 20) + 1};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char key[32];
    snprintf(key, sizeof key, "put-%zu", sizes[i]);
    char *data = malloc(sizes[i]), *back = calloc(1, sizes[i]);
    fill_pattern(data, sizes[i], (unsigned)i + 3);
    put_rdma(key, data, sizes[i]);
    struct hipobj_mem dst = hipobj_mem_host(back, sizes[i]);
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    OK(hipobj_s3_get(cli, T_BUCKET, key, &dst, NULL, &res, err));
    cr_assert_eq(memcmp(data, back, sizes[i]), 0, "%s", key);
    free(data);
    free(back);
  }
  /* Multipart: every part by RDMA, Complete over HTTP with their ETags. */
  size_t n = (12u << 20) + 3;
  char *data = malloc(n), *back = calloc(1, n);
  fill_pattern(data, n, 9);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5u << 20;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "mp", &src, &po, &res, err));
  cr_assert_eq(res.parts, 3);
  cr_assert_eq(res.rdma_bytes, n);
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
  cr_assert(strstr(res.etag, "-3"), "multipart ETag %s", res.etag);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.rdma_policy =
      HIPOBJ_RDMA_OFF; /* read it back over HTTP: an independent path */
  OK(hipobj_s3_get(cli, T_BUCKET, "mp", &dst, &go, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_HTTP);
  cr_assert_eq(memcmp(data, back, n), 0);
  free(data);
  free(back);
}

struct worker {
  int id;
  int failures;
};

static void *worker_main(void *arg) {
  struct worker *w = arg;
  size_t n = 64 * 1024 + (size_t)w->id;
  char *data = malloc(n), *back = malloc(n);
  for (int i = 0; i < 4; i++) {
    char key[32];
    snprintf(key, sizeof key, "t%d-%d", w->id, i);
    fill_pattern(data, n, (unsigned)(w->id * 10 + i));
    struct hipobj_mem src = hipobj_mem_host(data, n);
    struct hipobj_mem dst = hipobj_mem_host(back, n);
    struct hipobj_xfer_result r1 = HIPOBJ_XFER_RESULT_INIT;
    struct hipobj_xfer_result r2 = HIPOBJ_XFER_RESULT_INIT;
    if (hipobj_s3_put(cli, T_BUCKET, key, &src, NULL, &r1, NULL) ||
        hipobj_s3_get(cli, T_BUCKET, key, &dst, NULL, &r2, NULL) ||
        memcmp(data, back, n) || r1.path != HIPOBJ_PATH_RDMA_DIRECT ||
        r2.path != HIPOBJ_PATH_RDMA_DIRECT)
      w->failures++;
  }
  free(data);
  free(back);
  return NULL;
}

Test(rdma_s3, sixteen_transfers_from_four_threads) {
  start(NULL);
  pthread_t t[4];
  struct worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (struct worker){i, 0};
    pthread_create(&t[i], NULL, worker_main, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    cr_assert_eq(w[i].failures, 0, "thread %d", i);
  }
}

Test(rdma_s3, declining_server_falls_back_or_fails_under_require) {
  start("op=RdmaPrepare,prob=1,action=rdma-decline");
  size_t n = 100000;
  char *data = malloc(n), *back = calloc(1, n);
  fill_pattern(data, n, 4);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "declined", &src, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_HTTP);
  cr_assert_eq(res.rdma_bytes, 0);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  OK(hipobj_s3_get(cli, T_BUCKET, "declined", &dst, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_HTTP);
  cr_assert_eq(memcmp(data, back, n), 0);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.rdma_policy = HIPOBJ_RDMA_REQUIRE;
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "declined", &dst, &o, &res, err),
               HIPOBJ_E_UNSUPPORTED);
  cr_assert(strstr(hipobj_error_message(err), "RDMA required"), "%s",
            hipobj_error_message(err));
  free(data);
  free(back);
}

Test(rdma_s3, broken_data_phase_never_gives_wrong_bytes) {
  /* The server destroys its QP in the middle of every data phase. */
  start("op=RdmaReady,prob=1,action=rdma-fail");
  size_t n = 200000;
  char *data = malloc(n), *back = calloc(1, n);
  fill_pattern(data, n, 6);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  /* auto: the failed RDMA attempt is cancelled and HTTP does the work. */
  OK(hipobj_s3_put(cli, T_BUCKET, "broken", &src, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_HTTP);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  OK(hipobj_s3_get(cli, T_BUCKET, "broken", &dst, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_HTTP);
  cr_assert_eq(memcmp(data, back, n), 0);
  /* require: a clear error, and no success with wrong bytes. */
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.rdma_policy = HIPOBJ_RDMA_REQUIRE;
  memset(back, 0, n);
  int rc = hipobj_s3_get(cli, T_BUCKET, "broken", &dst, &o, &res, err);
  cr_assert_neq(rc, HIPOBJ_OK);
  cr_assert_eq(res.bytes, 0);
  free(data);
  free(back);
}

Test(rdma_s3, ready_answered_after_the_stall_window_is_not_a_stall) {
  /* Every READY is answered 2.5 s late; the client's stall window is 1 s.
   * READY moves no bytes while it waits (the data phase goes by RDMA):
   * the session's deadline bounds it, not stall detection, which cut it
   * and failed every RDMA transfer that took longer than the window. One
   * attempt, so no retry can hide a failure. */
  start("op=RdmaReady,prob=1,action=delay:2500");
  hipobj_client_free(cli);
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 1, 0);
  cfg.stall_timeout_ms = 1000;
  cfg.rdma_policy = HIPOBJ_RDMA_REQUIRE;
  OK(hipobj_client_create(&cfg, &cli, err));
  size_t n = 100000;
  char *data = malloc(n), *back = calloc(1, n);
  fill_pattern(data, n, 11);
  put_rdma("slow-ready", data, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "slow-ready", &dst, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
  cr_assert_eq(res.rdma_bytes, n);
  cr_assert_eq(memcmp(data, back, n), 0);
  free(data);
  free(back);
}

static _Atomic uint64_t seen;

static void on_progress(void *user, uint64_t done, uint64_t total) {
  (void)user, (void)total;
  seen = done;
}

static void put_http(const char *key, const void *data, size_t n) {
  struct hipobj_mem src = hipobj_mem_host((void *)data, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.rdma_policy = HIPOBJ_RDMA_OFF;
  OK(hipobj_s3_put(cli, T_BUCKET, key, &src, &po, NULL, err));
}

Test(rdma_s3, large_get_in_parallel_parts_pinned_to_one_version) {
  /* PREPARE #6 (the second GET's third part) is held 6 s by the server:
   * time to overwrite the object once that GET's first two parts are in. */
  start("op=RdmaPrepare,nth=6,action=delay:6000");
  size_t n = 12u << 20;
  char *data = malloc(n), *neu = malloc(n), *back = calloc(1, n);
  fill_pattern(data, n, 81);
  fill_pattern(neu, n, 82);
  put_http("big", data, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = 4u << 20;
  o.concurrency = 2;
  /* PREPAREs #1..#3: three parts, two at a time, all by RDMA. */
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
  cr_assert_eq(res.rdma_bytes, n);
  cr_assert_eq(memcmp(back, data, n), 0);
  /* PREPAREs #4..#6: the object changes before the third part is read. */
  struct hipobj_xfer_opts xo = HIPOBJ_XFER_OPTS_INIT;
  xo.progress = on_progress;
  struct hipobj_xfer *x = NULL;
  seen = 0;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "big", &dst, &o, &xo, &x, err));
  double t0 = mono_now();
  while (seen < (8u << 20) && mono_now() - t0 < 120)
    usleep(20000);
  cr_assert_geq(seen, 8u << 20, "the first two parts never completed");
  put_http("big", neu, n);
  int rc = hipobj_xfer_wait(x, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_PRECONDITION, "rc %d: %s", rc,
               hipobj_error_message(err));
  cr_assert(strstr(hipobj_error_message(err), "changed"), "%s",
            hipobj_error_message(err));
  cr_assert_lt(res.bytes, n, "a failed GET reports only what it wrote");
  hipobj_xfer_free(x);
  free(data);
  free(neu);
  free(back);
}

/* Requests of operation op the server has seen so far, read from the
 * counter of a rule `op=OP,action=delay:0` on its admin endpoint. */
static unsigned long seen_of(const char *op) {
  struct sreq q = {.method = "GET", .target = "/.hipobj-admin/faults"};
  struct http_resp r;
  cr_assert_eq(http_send(srv.url, &q, &r), 0);
  char rule[64];
  snprintf(rule, sizeof rule, "op=%s,", op);
  const char *line = r.body ? strstr(r.body, rule) : NULL;
  const char *at = line ? strstr(line, "seen=") : NULL;
  cr_assert(at, "no counter for %s in: %s", op, r.body ? r.body : "");
  unsigned long n = strtoul(at + 5, NULL, 10);
  resp_free(&r);
  return n;
}

Test(rdma_s3, declined_rdma_is_remembered_one_request_per_get) {
  /* A server with RDMA off, a client with an RDMA device (policy auto). */
  const char *extra[] = {"--rdma", "off", "--faults",
                         "op=GetObject,action=delay:0;"
                         "op=HeadObject,action=delay:0;"
                         "op=RdmaPrepare,action=delay:0",
                         NULL};
  srv_start(&srv, NULL, extra);
  cli = mk_client(srv.url, NULL, NULL, 4);
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
  size_t n = (1u << 20) + 5;
  char *data = malloc(n), *back = calloc(1, n);
  fill_pattern(data, n, 9);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  /* The first transfer asks (PREPARE, declined) and goes over HTTP. */
  OK(hipobj_s3_put(cli, T_BUCKET, "obj", &src, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_HTTP);
  cr_assert_eq(seen_of("RdmaPrepare"), 1);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  for (int i = 0; i < 3; i++) {
    /* A GET of known size (a range with a length), then of the whole
     * object: one GetObject each, no PREPARE, no HEAD. */
    struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
    o.has_range = 1;
    o.offset = 1000 + (uint64_t)i;
    o.length = 65536;
    for (int whole = 0; whole < 2; whole++) {
      unsigned long g0 = seen_of("GetObject"), h0 = seen_of("HeadObject");
      memset(back, 0, n);
      OK(hipobj_s3_get(cli, T_BUCKET, "obj", &dst, whole ? NULL : &o, &res,
                       err));
      cr_assert_eq(res.path, HIPOBJ_PATH_HTTP);
      cr_assert_eq(seen_of("GetObject") - g0, 1, "GET %d (whole %d)", i, whole);
      cr_assert_eq(seen_of("HeadObject") - h0, 0, "GET %d (whole %d)", i,
                   whole);
      if (whole)
        cr_assert_eq(memcmp(back, data, n), 0);
      else
        cr_assert_eq(memcmp(back, data + o.offset, o.length), 0);
    }
  }
  cr_assert_eq(seen_of("RdmaPrepare"), 1, "the decline was not remembered");
  free(data);
  free(back);
}

static int uploads_left(void) {
  struct sreq q = {.method = "GET", .target = "/" T_BUCKET "?uploads"};
  struct http_resp r;
  cr_assert_eq(http_send(srv.url, &q, &r), 0);
  cr_assert_eq(r.status, 200);
  int n = 0;
  for (const char *p = r.body; p && (p = strstr(p, "<UploadId>")); p++)
    n++;
  resp_free(&r);
  return n;
}

Test(rdma_s3, parts_by_rdma_only_where_the_server_advertises_them) {
  /* PREPARE's reply without X-Amz-Rdma-Capabilities: mp. */
  start("op=RdmaPrepare,action=rdma-no-mp;op=RdmaReady,action=rdma-no-mp");
  size_t n = (11u << 20) + 9;
  char *data = malloc(n), *back = calloc(1, n);
  fill_pattern(data, n, 61);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.part_size = 5u << 20;
  o.multipart_threshold = 5u << 20;
  o.concurrency = 2;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  /* auto: every part over HTTP (the first one asked, and was told). */
  OK(hipobj_s3_put(cli, T_BUCKET, "mp", &src, &o, &res, err));
  cr_assert_eq(res.rdma_bytes, 0);
  cr_assert_eq(res.path, HIPOBJ_PATH_HTTP);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  OK(hipobj_s3_get(cli, T_BUCKET, "mp", &dst, NULL, &res, err));
  cr_assert_eq(memcmp(back, data, n), 0);
  /* require: a clear error, and no upload left behind. */
  o.rdma_policy = HIPOBJ_RDMA_REQUIRE;
  cr_assert_eq(hipobj_s3_put(cli, T_BUCKET, "mp2", &src, &o, &res, err),
               HIPOBJ_E_UNSUPPORTED);
  cr_assert(strstr(hipobj_error_message(err), "mp"), "%s",
            hipobj_error_message(err));
  cr_assert_eq(uploads_left(), 0);
  free(data);
  free(back);
}

Test(rdma_s3, a_server_ignoring_the_part_query_is_never_success) {
  /* The server advertises parts but stores each RDMA part as the whole
   * object, recording an empty part in its place. */
  start("op=RdmaReady,action=rdma-ignore-part");
  size_t n = (6u << 20) + 3;
  char *data = malloc(n);
  fill_pattern(data, n, 62);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  const int policies[] = {HIPOBJ_RDMA_AUTO, HIPOBJ_RDMA_REQUIRE};
  for (int i = 0; i < 2; i++) {
    struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
    o.rdma_policy = policies[i];
    o.multipart_threshold = 1u << 20;
    /* One part: Complete assembles the empty part and succeeds, so only
     * the size check after it can tell. */
    o.part_size = 8u << 20;
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    int rc = hipobj_s3_put(cli, T_BUCKET, "one", &src, &o, &res, err);
    cr_assert_eq(rc, HIPOBJ_E_INTEGRITY, "policy %d: %d %s", policies[i], rc,
                 hipobj_error_message(err));
    cr_assert_eq(res.bytes, 0);
    /* Two parts: Complete refuses the empty first part. */
    o.part_size = 5u << 20;
    rc = hipobj_s3_put(cli, T_BUCKET, "two", &src, &o, &res, err);
    cr_assert_neq(rc, HIPOBJ_OK, "policy %d", policies[i]);
    cr_assert_eq(uploads_left(), 0, "policy %d", policies[i]);
  }
  free(data);
}

/* RDMA into host memory: each session's CRC (FINAL) is recomputed over the
 * bytes landed, and the sessions' CRCs joined make the object's, checked
 * against the HEAD's x-amz-checksum-crc64nvme; a byte flipped in the
 * stored object fails with HIPOBJ_E_INTEGRITY whole and in parts. */
Test(rdma_s3, get_verifies_the_object_checksum) {
  start(NULL);
  size_t n = (9u << 20) + 3;
  char *data = malloc(n), *back = calloc(1, n);
  fill_pattern(data, n, 91);
  put_rdma("cks", data, n); /* the server keeps the session's CRC */
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = 4u << 20;
  for (int parts = 0; parts < 2; parts++) {
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    OK(hipobj_s3_get(cli, T_BUCKET, "cks", &dst, parts ? &o : NULL, &res, err));
    cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
    cr_assert_eq(memcmp(back, data, n), 0);
    cr_assert_eq(res.checksum, HIPOBJ_CHECKSUM_CRC64NVME, "parts %d: %s", parts,
                 res.checksum_note);
  }
  flip_stored(&srv, "cks", 5u << 20);
  for (int parts = 0; parts < 2; parts++) {
    int rc =
        hipobj_s3_get(cli, T_BUCKET, "cks", &dst, parts ? &o : NULL, NULL, err);
    cr_assert_eq(rc, HIPOBJ_E_INTEGRITY, "parts %d: %d %s", parts, rc,
                 hipobj_error_message(err));
  }
  free(data);
  free(back);
}

/* hipobj-server --storage memory --memory-cap: an object that arrives by
 * RDMA gets the mode's ETag and counts against the cap as HTTP bodies do,
 * so the PUT past it fails with 507 InsufficientStorage and leaves nothing
 * behind. */
Test(rdma_s3, memory_cap_counts_rdma_puts) {
  memset(&srv, 0, sizeof srv);
  snprintf(srv.base, sizeof srv.base, "/dev/shm/hipobj-rdma-mem-XXXXXX");
  if (!mkdtemp(srv.base))
    cr_skip_test("no /dev/shm for the memory mode");
  snprintf(srv.root, sizeof srv.root, "%s/root", srv.base);
  const char *extra[] = {"--rdma",       "auto", "--storage", "memory",
                         "--memory-cap", "1MiB", NULL};
  srv_start(&srv, srv.root, extra);
  cli = mk_client(srv.url, NULL, NULL, 4);
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
  size_t n = 600 * 1000;
  char *data = malloc(n);
  fill_pattern(data, n, 7);
  put_rdma("first", data, n);
  /* The memory mode's ETag, as for an HTTP PUT: CRC-64/NVME and size. */
  struct hipobj_object_info first = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "first", &first, err));
  char want[64];
  snprintf(want, sizeof want, "\"%016" PRIx64 "%016" PRIx64 "-1\"",
           ref_crc64nvme(0, data, n), (uint64_t)n);
  cr_assert_str_eq(first.etag, want);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  cr_assert_neq(hipobj_s3_put(cli, T_BUCKET, "second", &src, NULL, NULL, err),
                HIPOBJ_OK, "a PUT past the cap was stored");
  cr_assert_str_eq(hipobj_error_s3_code(err), "InsufficientStorage", "%s",
                   hipobj_error_message(err));
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_neq(hipobj_s3_head(cli, T_BUCKET, "second", &info, err), HIPOBJ_OK,
                "the refused object exists");
  free(data);
}
