/* test_staging.c - the GPU staging pipelines on the CPU: the fake GPU
 * platform (fake_gpu.c) in the CUDA slot, the real HTTP engine and runner,
 * and the scripted server of tests/http. Chunk boundaries and odd sizes,
 * ranges, copy failures (never reported as success), retries that restart a
 * GET mid-body, signed and unsigned PUTs, multipart PUT from GPU memory, and
 * several transfers competing for a small pinned pool. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../http/mini_server.h"
#include "fake_gpu.h"
#include "hipobj.h"
#include "s3/crypto.h"
#include "src/client_int.h"
#include "src/gpu.h"
#include "src/staging.h"

#define CB 4096u /* staging chunk size of these tests */

static struct mini_server *srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static char *owned[MINI_MAX_REQUESTS]; /* reply texts built per test */
static size_t n_owned;

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  if (srv)
    mini_stop(srv);
  srv = NULL;
  for (size_t i = 0; i < n_owned; i++)
    free(owned[i]);
  n_owned = 0;
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(staging, .init = init, .fini = fini, .timeout = 60);

static void client(size_t pool_chunks, int unsigned_payload,
                   unsigned max_attempts) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = mini_url(srv);
  cfg.access_key_id = "AKIDTEST";
  cfg.secret_access_key = "SECRET";
  cfg.max_attempts = max_attempts;
  cfg.retry_base_ms = 1;
  cfg.part_size = 5 << 20;
  cfg.log_level = HIPOBJ_LOG_NONE;
  cfg.integrity =
      unsigned_payload ? HIPOBJ_INTEGRITY_NONE : HIPOBJ_INTEGRITY_AUTO;
  cfg.staging_chunk_bytes = CB;
  cfg.staging_pool_bytes = pool_chunks * CB;
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
}

static void start(const struct mini_reply *script, size_t n) {
  srv = mini_start(script, n);
}

/* Printable bytes (the scripted server sends NUL-terminated text). */
static void pattern(char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (char)('a' + (i * 7 + seed + i / 4093) % 26);
}

static char *keep(char *s) {
  cr_assert_not_null(s);
  owned[n_owned++] = s;
  return s;
}

/* "200 OK" with the body and an exact Content-Length. */
static const char *ok_reply(const char *body, size_t n) {
  char *s = NULL;
  cr_assert(asprintf(&s,
                     "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nETag: "
                     "\"etag\"\r\n\r\n%.*s",
                     n, (int)n, body) >= 0);
  return keep(s);
}

static struct hipobj_mem gpu_alloc(int dev, size_t n) {
  struct hipobj_mem m = HIPOBJ_MEM_INIT;
  cr_assert_eq(hipobj_gpu_alloc(HIPOBJ_MEM_CUDA, dev, n, &m, err), HIPOBJ_OK,
               "%s", hipobj_error_message(err));
  return m;
}

static void check_clean(void) {
  struct fake_gpu_stats st;
  fake_gpu_stats(&st);
  cr_assert_eq(st.violations, 0, "streams/events destroyed with work pending");
  cr_assert_eq(st.unpinned, 0, "async copy through unpinned host memory");
  struct hstage_pool_stats ps;
  hstage_pool_stats(cli->stage_pool, HIPOBJ_MEM_CUDA, &ps);
  cr_assert_eq(ps.in_use, 0, "staging chunks not given back");
  cr_assert_leq(ps.peak, ps.max_chunks);
}

/* ---- GET ----------------------------------------------------------------- */

Test(staging, get_chunk_boundaries_and_odd_sizes) {
  static const size_t sizes[] = {0,      1,          CB - 1,     CB,
                                 CB + 1, 3 * CB - 1, 3 * CB + 1, 10 * CB + 7};
  enum { N = sizeof sizes / sizeof sizes[0] };
  static struct mini_reply script[N];
  char *bodies[N];
  for (size_t i = 0; i < N; i++) {
    bodies[i] = keep(malloc(sizes[i] + 1));
    pattern(bodies[i], sizes[i], (unsigned)i);
    script[i].raw = ok_reply(bodies[i], sizes[i]);
  }
  hgpu_register_fake_for_tests();
  fake_gpu_set_delay_us(100); /* copies really in flight behind the body */
  start(script, N);
  client(3, 0, 1);
  for (size_t i = 0; i < N; i++) {
    struct hipobj_mem dst = gpu_alloc(0, sizes[i]);
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, &res, err);
    cr_assert_eq(rc, HIPOBJ_OK, "size %zu: %s", sizes[i],
                 hipobj_error_message(err));
    cr_assert_eq(res.bytes, sizes[i]);
    cr_assert_eq(res.path, HIPOBJ_PATH_HTTP_STAGED);
    cr_assert_str_eq(hipobj_data_path_name(res.path), "http-staged");
    /* The fake's device memory is host memory: compare it directly. */
    cr_assert(sizes[i] == 0 || !memcmp(dst.ptr, bodies[i], sizes[i]),
              "size %zu: data differs", sizes[i]);
    hipobj_gpu_free(&dst);
  }
  check_clean();
  struct fake_gpu_stats st;
  fake_gpu_stats(&st);
  cr_assert_eq(st.d2h, 0);
  cr_assert_eq(st.dev_live, 0);
}

Test(staging, get_into_larger_buffer_and_range) {
  size_t n = 5 * CB + 3;
  char *body = keep(malloc(n));
  pattern(body, n, 9);
  char *ranged = NULL;
  cr_assert(asprintf(&ranged,
                     "HTTP/1.1 206 Partial Content\r\nContent-Length: %zu\r\n"
                     "Content-Range: bytes 100-%zu/99999\r\n\r\n%.*s",
                     n, 100 + n - 1, (int)n, body) >= 0);
  static struct mini_reply script[2];
  script[0].raw = ok_reply(body, n);
  script[1].raw = keep(ranged);
  hgpu_register_fake_for_tests();
  start(script, 2);
  client(3, 0, 1);
  size_t cap = 8 * CB;
  struct hipobj_mem dst = gpu_alloc(1, cap);
  memset(dst.ptr, 'Z', cap);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_s3_get(cli, "bkt", "k", &dst, NULL, &res, err), HIPOBJ_OK,
               "%s", hipobj_error_message(err));
  cr_assert_eq(res.bytes, n);
  cr_assert(!memcmp(dst.ptr, body, n));
  cr_assert_eq(((char *)dst.ptr)[n], 'Z', "nothing written past the body");

  /* A range into the middle of the buffer (an interior device pointer). */
  memset(dst.ptr, 'Z', cap);
  struct hipobj_mem mid =
      hipobj_mem_gpu(HIPOBJ_MEM_CUDA, 1, (char *)dst.ptr + 7, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.has_range = 1;
  o.offset = 100;
  o.length = n;
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_s3_get(cli, "bkt", "k", &mid, &o, &res, err), HIPOBJ_OK,
               "%s", hipobj_error_message(err));
  cr_assert_eq(res.object_size, 99999);
  cr_assert(!memcmp((char *)dst.ptr + 7, body, n));
  cr_assert_eq(((char *)dst.ptr)[6], 'Z');
  cr_assert_eq(((char *)dst.ptr)[7 + n], 'Z');
  cr_assert_str_eq(mini_request_header(srv, 1, "range"), "bytes=100-20582");
  hipobj_gpu_free(&dst);
  check_clean();
}

Test(staging, get_too_large_for_gpu_buffer_writes_nothing) {
  size_t n = 3 * CB;
  char *body = keep(malloc(n));
  pattern(body, n, 1);
  static struct mini_reply script[1];
  script[0].raw = ok_reply(body, n);
  hgpu_register_fake_for_tests();
  start(script, 1);
  client(3, 0, 4);
  struct hipobj_mem dst = gpu_alloc(0, CB);
  memset(dst.ptr, 'Z', CB);
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_BUFFER_TOO_SMALL, "%s", hipobj_error_message(err));
  cr_assert_eq(((char *)dst.ptr)[0], 'Z');
  struct fake_gpu_stats st;
  fake_gpu_stats(&st);
  cr_assert_eq(st.h2d, 0);
  hipobj_gpu_free(&dst);
  check_clean();
}

static void get_copy_failure(enum fake_fault how, unsigned nth) {
  size_t n = 10 * CB;
  char *body = keep(malloc(n));
  pattern(body, n, 2);
  static struct mini_reply script[2];
  script[0].raw = ok_reply(body, n);
  script[1].raw = ok_reply(body, n);
  hgpu_register_fake_for_tests();
  fake_gpu_set_delay_us(50);
  start(script, 2);
  client(3, 0, 4);
  struct hipobj_mem dst = gpu_alloc(0, n);
  fake_gpu_fail_copy(nth, how);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_IO, "status %d: %s", rc, hipobj_error_message(err));
  cr_assert_eq(res.bytes, 0, "failed copy reported as data");
  cr_assert(strstr(hipobj_error_message(err), "GPU copy failed"), "%s",
            hipobj_error_message(err));
  cr_assert(strstr(hipobj_error_message(err), "injected"), "%s",
            hipobj_error_message(err));
  cr_assert_str_eq(hipobj_error_operation(err), "GetObject");
  cr_assert_eq(mini_count(srv), 1, "a local copy failure is not retried");
  hipobj_gpu_free(&dst);
  check_clean();
}

Test(staging, get_copy_failure_when_queued_is_an_error) {
  get_copy_failure(FAKE_FAIL_QUEUE, 2);
}

Test(staging, get_copy_failure_while_running_is_an_error) {
  get_copy_failure(FAKE_FAIL_ASYNC, 3);
}

Test(staging, get_failure_of_the_last_copy_is_an_error) {
  get_copy_failure(FAKE_FAIL_ASYNC, 10);
}

Test(staging, get_retry_after_mid_body_failure_restarts_at_zero) {
  size_t n = 10 * CB + 100;
  char *good = keep(malloc(n));
  char *stale = keep(malloc(n));
  pattern(good, n, 3);
  pattern(stale, n, 11); /* the failed attempt carries other bytes */
  char *partial = NULL;
  cr_assert(asprintf(&partial,
                     "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%.*s", n,
                     (int)(6 * CB + 17), stale) >= 0);
  static struct mini_reply script[2];
  script[0].raw = keep(partial);
  script[0].close_after = 1;
  script[1].raw = ok_reply(good, n);
  hgpu_register_fake_for_tests();
  fake_gpu_set_delay_us(300); /* copies of attempt 1 still queued at rewind */
  start(script, 2);
  client(3, 0, 3);
  struct hipobj_mem dst = gpu_alloc(0, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, &res, err);
  cr_assert_eq(rc, HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_assert_eq(res.retries, 1);
  cr_assert_eq(res.bytes, n);
  cr_assert(!memcmp(dst.ptr, good, n), "stale bytes of attempt 1 remain");
  cr_assert_eq(mini_count(srv), 2);
  hipobj_gpu_free(&dst);
  check_clean();
}

/* ---- PUT ----------------------------------------------------------------- */

#define PUT_OK "HTTP/1.1 200 OK\r\nETag: \"p\"\r\nContent-Length: 0\r\n\r\n"
/* The same, saying that the server closes the connection after it (the
 * mini server serves one connection at a time: parallel parts need it to
 * close). Without "Connection: close" libcurl may reuse the connection
 * before the close reaches it, and the next part meets a reset. */
#define PUT_OK_CLOSE                                                           \
  "HTTP/1.1 200 OK\r\nETag: \"p\"\r\nConnection: close\r\n"                    \
  "Content-Length: 0\r\n\r\n"

Test(staging, put_signed_hashes_the_gpu_data) {
  static const size_t sizes[] = {0, 1, CB - 1, CB, CB + 1, 10 * CB + 7};
  enum { N = sizeof sizes / sizeof sizes[0] };
  static struct mini_reply script[N];
  for (size_t i = 0; i < N; i++)
    script[i].raw = PUT_OK;
  hgpu_register_fake_for_tests();
  fake_gpu_set_delay_us(50);
  start(script, N);
  client(3, 0, 1);
  unsigned long chunks = 0;
  for (size_t i = 0; i < N; i++) {
    struct hipobj_mem src = gpu_alloc(0, sizes[i]);
    pattern(src.ptr, sizes[i], (unsigned)i + 20);
    char want[65];
    s3_sha256_hex(sizes[i] ? src.ptr : "", sizes[i], want);
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    int rc = hipobj_s3_put(cli, "bkt", "k", &src, NULL, &res, err);
    cr_assert_eq(rc, HIPOBJ_OK, "size %zu: %s", sizes[i],
                 hipobj_error_message(err));
    cr_assert_eq(res.path, HIPOBJ_PATH_HTTP_STAGED);
    cr_assert_eq(res.bytes, sizes[i]);
    cr_assert_str_eq(mini_request_header(srv, i, "x-amz-content-sha256"), want,
                     "size %zu", sizes[i]);
    cr_assert_eq(mini_request_body_len(srv, i), sizes[i]);
    /* A range that fits in the transfer's three chunks is copied once
     * (hashed and sent from the same chunks); a longer one is copied
     * again to be sent. */
    unsigned long c = (sizes[i] + CB - 1) / CB;
    chunks += c <= 3 ? c : 2 * c;
    hipobj_gpu_free(&src);
  }
  struct fake_gpu_stats st;
  fake_gpu_stats(&st);
  cr_assert_eq(st.d2h, chunks, "one pass when resident, else two");
  cr_assert_eq(st.h2d, 0);
  check_clean();
}

Test(staging, put_unsigned_reads_the_gpu_once) {
  size_t n = 7 * CB + 5;
  static struct mini_reply script[1] = {{PUT_OK, 0}};
  hgpu_register_fake_for_tests();
  start(script, 1);
  client(2, 1, 1);
  struct hipobj_mem src = gpu_alloc(1, n);
  pattern(src.ptr, n, 4);
  cr_assert_eq(hipobj_s3_put(cli, "bkt", "k", &src, NULL, NULL, err), HIPOBJ_OK,
               "%s", hipobj_error_message(err));
  cr_assert_str_eq(mini_request_header(srv, 0, "x-amz-content-sha256"),
                   "UNSIGNED-PAYLOAD");
  cr_assert_eq(mini_request_body_len(srv, 0), n);
  struct fake_gpu_stats st;
  fake_gpu_stats(&st);
  cr_assert_eq(st.d2h, 8);
  hipobj_gpu_free(&src);
  check_clean();
}

static void put_copy_failure(int in_hash_pass, enum fake_fault how) {
  size_t n = 6 * CB;
  static struct mini_reply script[2] = {{PUT_OK, 0}, {PUT_OK, 0}};
  hgpu_register_fake_for_tests();
  fake_gpu_set_delay_us(50);
  start(script, 2);
  client(3, 0, 4);
  struct hipobj_mem src = gpu_alloc(0, n);
  pattern(src.ptr, n, 5);
  /* 6 chunks per pass: copy 3 is in the hash pass, copy 6+3 in the body. */
  fake_gpu_fail_copy(in_hash_pass ? 3 : 9, how);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_put(cli, "bkt", "k", &src, NULL, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_IO, "status %d: %s", rc, hipobj_error_message(err));
  cr_assert_eq(res.bytes, 0);
  cr_assert(strstr(hipobj_error_message(err), "injected"), "%s",
            hipobj_error_message(err));
  cr_assert_str_eq(hipobj_error_operation(err), "PutObject");
  if (in_hash_pass)
    cr_assert_eq(mini_count(srv), 0, "nothing sent when hashing failed");
  hipobj_gpu_free(&src);
  check_clean();
}

Test(staging, put_copy_failure_while_hashing) {
  put_copy_failure(1, FAKE_FAIL_ASYNC);
}

Test(staging, put_copy_failure_while_sending) {
  put_copy_failure(0, FAKE_FAIL_ASYNC);
}

Test(staging, put_copy_failure_when_queued_while_sending) {
  put_copy_failure(0, FAKE_FAIL_QUEUE);
}

Test(staging, put_retry_resends_the_whole_body) {
  size_t n = 5 * CB + 1;
  static struct mini_reply script[2] = {
      {"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n", 0}, {PUT_OK, 0}};
  hgpu_register_fake_for_tests();
  fake_gpu_set_delay_us(20);
  start(script, 2);
  client(2, 0, 3);
  struct hipobj_mem src = gpu_alloc(0, n);
  pattern(src.ptr, n, 6);
  char want[65];
  s3_sha256_hex(src.ptr, n, want);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_s3_put(cli, "bkt", "k", &src, NULL, &res, err), HIPOBJ_OK,
               "%s", hipobj_error_message(err));
  cr_assert_eq(res.retries, 1);
  cr_assert_eq(mini_count(srv), 2);
  for (size_t i = 0; i < 2; i++) {
    cr_assert_eq(mini_request_body_len(srv, i), n);
    cr_assert_str_eq(mini_request_header(srv, i, "x-amz-content-sha256"), want);
  }
  hipobj_gpu_free(&src);
  check_clean();
}

/* ---- multipart ----------------------------------------------------------- */

#define XML_HDR "Content-Type: application/xml\r\n"

Test(staging, multipart_put_from_gpu_memory) {
  size_t part = 5u << 20, n = 2 * part + 3;
  static struct mini_reply script[5] = {
      {NULL, 1, "200 OK", XML_HDR,
       "<InitiateMultipartUploadResult><UploadId>UP-1</UploadId>"
       "</InitiateMultipartUploadResult>"},
      {PUT_OK_CLOSE, 1},
      {PUT_OK_CLOSE, 1},
      {PUT_OK_CLOSE, 1},
      {NULL, 1, "200 OK", XML_HDR,
       "<CompleteMultipartUploadResult><ETag>\"m-3\"</ETag>"
       "</CompleteMultipartUploadResult>"},
  };
  hgpu_register_fake_for_tests();
  start(script, 5);
  client(4, 0, 1); /* 4 chunks for 3 parts: one each, so all three run */
  struct hipobj_mem src = gpu_alloc(0, n);
  pattern(src.ptr, n, 7);
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.concurrency = 3;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_put(cli, "bkt", "k", &src, &o, &res, err);
  cr_assert_eq(rc, HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_assert_eq(res.parts, 3);
  cr_assert_eq(res.path, HIPOBJ_PATH_HTTP_STAGED);
  cr_assert_eq(mini_count(srv), 5);
  for (size_t i = 1; i <= 3; i++) {
    const char *line = mini_request_line(srv, i);
    unsigned num = 0;
    cr_assert_eq(sscanf(line, "PUT /bkt/k?partNumber=%u", &num), 1, "%s", line);
    size_t off = (num - 1) * part, len = num < 3 ? part : n - 2 * part;
    char want[65];
    s3_sha256_hex((char *)src.ptr + off, len, want);
    cr_assert_eq(mini_request_body_len(srv, i), len);
    cr_assert_str_eq(mini_request_header(srv, i, "x-amz-content-sha256"), want,
                     "part %u", num);
  }
  cr_assert_str_eq(mini_request_line(srv, 4), "POST /bkt/k?uploadId=UP-1");
  struct hstage_pool_stats ps;
  hstage_pool_stats(cli->stage_pool, HIPOBJ_MEM_CUDA, &ps);
  cr_assert_leq(ps.peak, 3, "a part took more than its share of the pool");
  cr_assert_eq(ps.waits, 0, "a part waited for chunks: parts did not all run");
  hipobj_gpu_free(&src);
  check_clean();
}

Test(staging, upload_part_step_by_step_from_gpu_memory) {
  static struct mini_reply script[2] = {
      {NULL, 0, "200 OK", XML_HDR,
       "<InitiateMultipartUploadResult><UploadId>UP-2</UploadId>"
       "</InitiateMultipartUploadResult>"},
      {"HTTP/1.1 200 OK\r\nETag: \"p1\"\r\nContent-Length: 0\r\n\r\n", 0},
  };
  hgpu_register_fake_for_tests();
  start(script, 2);
  client(3, 1, 1);
  struct hipobj_mpu *mpu = NULL;
  cr_assert_eq(hipobj_mpu_create(cli, "bkt", "k", NULL, &mpu, err), HIPOBJ_OK);
  struct hipobj_mem src = gpu_alloc(1, 3 * CB + 2);
  pattern(src.ptr, src.len, 8);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_mpu_upload_part(mpu, 1, &src, &res, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
  cr_assert_eq(res.path, HIPOBJ_PATH_HTTP_STAGED);
  cr_assert_str_eq(res.etag, "\"p1\"");
  cr_assert_eq(mini_request_body_len(srv, 1), src.len);
  hipobj_mpu_free(mpu);
  hipobj_gpu_free(&src);
  check_clean();
}

/* ---- several transfers, small pool ----------------------------------------
 */

#define N_THREADS 4

static pthread_barrier_t barrier;
static const char *shared_body;
static size_t shared_len;

static void *one_get(void *arg) {
  int *rc = arg;
  struct hipobj_error *e = NULL;
  hipobj_error_create(&e);
  struct hipobj_mem dst = HIPOBJ_MEM_INIT;
  *rc = hipobj_gpu_alloc(HIPOBJ_MEM_CUDA, 0, shared_len, &dst, e);
  pthread_barrier_wait(&barrier);
  if (*rc == HIPOBJ_OK)
    *rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, NULL, e);
  if (*rc == HIPOBJ_OK && memcmp(dst.ptr, shared_body, shared_len))
    *rc = -1;
  if (*rc != HIPOBJ_OK)
    fprintf(stderr, "thread: %d %s\n", *rc, hipobj_error_message(e));
  hipobj_gpu_free(&dst);
  hipobj_error_free(e);
  return NULL;
}

Test(staging, transfers_competing_for_a_small_pool_all_complete) {
  size_t n = 12 * CB + 9;
  char *body = keep(malloc(n));
  pattern(body, n, 12);
  shared_body = body;
  shared_len = n;
  static struct mini_reply script[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    script[i].raw = ok_reply(body, n);
    script[i].close_after = 1; /* the server takes one connection at a time */
  }
  hgpu_register_fake_for_tests();
  fake_gpu_set_delay_us(1000);
  start(script, N_THREADS);
  client(2, 0, 1); /* two chunks for four transfers that want three */
  /* The test holds the whole pool until every transfer waits for it, so
   * that they compete whatever the scheduling (a transfer descheduled
   * until another had finished would not have to wait). */
  struct hipobj_mem hold_mem = gpu_alloc(0, 2 * CB);
  struct hstage *hold = NULL;
  cr_assert_eq(hstage_get_begin(cli, "test", &hold_mem, 0, &hold, err),
               HIPOBJ_OK, "%s", hipobj_error_message(err));
  pthread_barrier_init(&barrier, NULL, N_THREADS);
  pthread_t t[N_THREADS];
  int rc[N_THREADS];
  for (int i = 0; i < N_THREADS; i++)
    pthread_create(&t[i], NULL, one_get, &rc[i]);
  struct hstage_pool_stats ps;
  for (int i = 0; i < 10000; i++) {
    hstage_pool_stats(cli->stage_pool, HIPOBJ_MEM_CUDA, &ps);
    if (ps.waits >= N_THREADS)
      break;
    usleep(1000);
  }
  /* The engine does not wait for chunks: a part that finds the pool empty
   * is tried again when chunks come back, and each try counts. */
  cr_assert_geq(ps.waits, N_THREADS, "%u of %d transfers waited for chunks",
                ps.waits, N_THREADS);
  hstage_end(hold);
  for (int i = 0; i < N_THREADS; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < N_THREADS; i++)
    cr_assert_eq(rc[i], HIPOBJ_OK, "transfer %d failed (%d)", i, rc[i]);
  hstage_pool_stats(cli->stage_pool, HIPOBJ_MEM_CUDA, &ps);
  cr_assert_eq(ps.max_chunks, 2);
  cr_assert_leq(ps.allocated, 2, "the pool grew past its bound");
  cr_assert_geq(ps.waits, N_THREADS, "not every transfer waited for chunks");
  hipobj_gpu_free(&hold_mem);
  pthread_barrier_destroy(&barrier);
  check_clean();
}

/* ---- descriptors, classification, helpers ---------------------------------
 */

Test(staging, classify_and_descriptor_checks) {
  hgpu_register_fake_for_tests();
  static struct mini_reply script[1] = {{PUT_OK, 0}};
  start(script, 1);
  client(3, 0, 1);
  struct hipobj_mem m = gpu_alloc(1, 1000), c = HIPOBJ_MEM_INIT;
  cr_assert_eq(hipobj_mem_classify((char *)m.ptr + 10, 990, &c, err),
               HIPOBJ_OK);
  cr_assert_eq(c.kind, HIPOBJ_MEM_CUDA);
  cr_assert_eq(c.device, 1);
  cr_assert_eq(hipobj_mem_classify((char *)m.ptr + 10, 991, &c, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  char host[16];
  cr_assert_eq(hipobj_mem_classify(host, sizeof host, &c, err), HIPOBJ_OK);
  cr_assert_eq(c.kind, HIPOBJ_MEM_HOST);
  cr_assert_eq(hipobj_mem_classify(NULL, 0, &c, err), HIPOBJ_OK);
  cr_assert_eq(c.kind, HIPOBJ_MEM_HOST);
  cr_assert_eq(hipobj_mem_classify(NULL, 1, &c, err),
               HIPOBJ_E_INVALID_ARGUMENT);

  /* Wrong device, host memory named CUDA, a range past the allocation,
   * an unknown kind: refused before any request. */
  struct hipobj_mem bad[4] = {
      hipobj_mem_gpu(HIPOBJ_MEM_CUDA, 0, m.ptr, 10),
      hipobj_mem_gpu(HIPOBJ_MEM_CUDA, 1, host, sizeof host),
      hipobj_mem_gpu(HIPOBJ_MEM_CUDA, 1, m.ptr, 1001),
      hipobj_mem_gpu((enum hipobj_mem_kind)7, 0, host, 1),
  };
  for (int i = 0; i < 4; i++) {
    int rc = hipobj_s3_put(cli, "bkt", "k", &bad[i], NULL, NULL, err);
    cr_assert_eq(rc, HIPOBJ_E_INVALID_ARGUMENT, "case %d: %d %s", i, rc,
                 hipobj_error_message(err));
  }
  cr_assert_eq(mini_count(srv), 0);
  cr_assert(strstr(hipobj_error_message(err), "kind 7"));

  /* gpu_copy both ways, and its size check. */
  char out[1000];
  memset(host, 'q', sizeof host);
  struct hipobj_mem h = hipobj_mem_host(host, sizeof host);
  struct hipobj_mem o = hipobj_mem_host(out, sizeof out);
  cr_assert_eq(hipobj_gpu_copy(&m, &h, err), HIPOBJ_OK);
  cr_assert_eq(hipobj_gpu_copy(&o, &m, err), HIPOBJ_OK);
  cr_assert(!memcmp(out, host, sizeof host));
  cr_assert_eq(hipobj_gpu_copy(&h, &m, err), HIPOBJ_E_BUFFER_TOO_SMALL);

  struct hipobj_gpu_device_info di = HIPOBJ_GPU_DEVICE_INFO_INIT;
  cr_assert_eq(hipobj_gpu_device_info(HIPOBJ_MEM_CUDA, 1, &di, err), HIPOBJ_OK);
  cr_assert_str_eq(di.pci_bus_id, "0000:10:00.0");
  cr_assert_eq(di.dmabuf, 0);
  cr_assert(strstr(di.dmabuf_reason, "dma-buf"));
  int fd = -1;
  uint64_t off = 0;
  cr_assert_eq(hgpu_export_dmabuf(&m, &fd, &off, err), HIPOBJ_E_UNSUPPORTED);
  hipobj_gpu_free(&m);
  cr_assert_null(m.ptr);
  hipobj_gpu_free(&m); /* twice is harmless */
  struct fake_gpu_stats st;
  fake_gpu_stats(&st);
  cr_assert_eq(st.dev_live, 0);
}

Test(staging, missing_runtimes_are_unsupported_with_the_reason) {
  /* The real platforms: on a machine without the driver (CI), CUDA memory
   * is refused naming libcuda.so.1; HIP likewise. */
  struct hipobj_gpu_platform_info pi = HIPOBJ_GPU_PLATFORM_INFO_INIT;
  cr_assert_eq(hipobj_gpu_platform_info(HIPOBJ_MEM_CUDA, &pi, err), HIPOBJ_OK);
  if (pi.available)
    cr_skip_test("a CUDA driver is installed here: %s", pi.version);
  cr_assert(strstr(pi.reason, "libcuda.so.1"), "%s", pi.reason);
  cr_assert_str_eq(pi.library, "libcuda.so.1");
  static struct mini_reply script[1] = {{PUT_OK, 0}};
  start(script, 1);
  client(3, 0, 1);
  char fake_dev[8];
  struct hipobj_mem m =
      hipobj_mem_gpu(HIPOBJ_MEM_CUDA, 0, fake_dev, sizeof fake_dev);
  int rc = hipobj_s3_get(cli, "bkt", "k", &m, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_UNSUPPORTED);
  cr_assert(strstr(hipobj_error_message(err), "libcuda.so.1"), "%s",
            hipobj_error_message(err));
  /* Above the multipart threshold: refused before CreateMultipartUpload
   * (the memory is never touched). */
  struct hipobj_mem big =
      hipobj_mem_gpu(HIPOBJ_MEM_CUDA, 0, fake_dev, 6u << 20);
  rc = hipobj_s3_put(cli, "bkt", "k", &big, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_UNSUPPORTED, "%s", hipobj_error_message(err));
  cr_assert_eq(hipobj_gpu_alloc(HIPOBJ_MEM_CUDA, 0, 16, &m, err),
               HIPOBJ_E_UNSUPPORTED);
  struct hipobj_gpu_platform_info hi = HIPOBJ_GPU_PLATFORM_INFO_INIT;
  cr_assert_eq(hipobj_gpu_platform_info(HIPOBJ_MEM_HIP, &hi, err), HIPOBJ_OK);
  if (!hi.available) {
    m = hipobj_mem_gpu(HIPOBJ_MEM_HIP, 0, fake_dev, sizeof fake_dev);
    rc = hipobj_s3_put(cli, "bkt", "k", &m, NULL, NULL, err);
    cr_assert_eq(rc, HIPOBJ_E_UNSUPPORTED);
    cr_assert(strstr(hipobj_error_message(err), "HIP"), "%s",
              hipobj_error_message(err));
  }
  cr_assert_eq(mini_count(srv), 0);
  /* Host memory is unaffected. */
  struct hipobj_mem h = hipobj_mem_host(fake_dev, 4);
  cr_assert_eq(hipobj_s3_put(cli, "bkt", "k", &h, NULL, NULL, err), HIPOBJ_OK,
               "%s", hipobj_error_message(err));
}

Test(staging, staging_config_defaults_and_limits) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = "http://127.0.0.1:1";
  cfg.access_key_id = "AK";
  cfg.secret_access_key = "SK";
  cfg.log_level = HIPOBJ_LOG_NONE;
  cfg.io_threads = 1;
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK);
  struct hstage_pool_stats ps;
  hstage_pool_stats(cli->stage_pool, HIPOBJ_MEM_CUDA, &ps);
  cr_assert_eq(ps.max_chunks, 16,
               "64 MiB of 4 MiB chunks by default: 8 parts of 8 MiB");
  cr_assert_eq(cli->cfg.staging_chunk_bytes, 4u << 20);
  cr_assert_eq(ps.allocated, 0, "nothing pinned before a GPU transfer");
  hipobj_client_free(cli);
  cli = NULL;
  /* 8 MiB per part in flight: 16 parts for 8 I/O threads. */
  cfg.io_threads = 8;
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK);
  hstage_pool_stats(cli->stage_pool, HIPOBJ_MEM_CUDA, &ps);
  cr_assert_eq(ps.max_chunks, 32, "128 MiB for 8 I/O threads");
  hipobj_client_free(cli);
  cli = NULL;
  cfg.io_threads = 0;
  struct hipobj_client *c2 = NULL;
  cfg.staging_pool_bytes = 1u << 20; /* smaller than a default chunk */
  cr_assert_eq(hipobj_client_create(&cfg, &c2, err), HIPOBJ_OK);
  cr_assert_eq(c2->cfg.staging_chunk_bytes, 1u << 20);
  hipobj_client_free(c2);
  cfg.staging_chunk_bytes = 100;
  cr_assert_eq(hipobj_client_create(&cfg, &c2, err), HIPOBJ_E_INVALID_ARGUMENT);
  cfg.staging_chunk_bytes = 2u << 20;
  cr_assert_eq(hipobj_client_create(&cfg, &c2, err), HIPOBJ_E_INVALID_ARGUMENT,
               "pool smaller than one chunk");
  cr_assert(strstr(hipobj_error_message(err), "staging_pool_bytes"));
}
