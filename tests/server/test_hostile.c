/* test_hostile.c - hipObject against a misbehaving server (issue
 * "Integrity and safety"): hipobj-server's partial, endless, drip and
 * repeat-token faults, each seen through the public API. A misbehaving
 * server must give a clear error in bounded time and bounded memory, never
 * a success with wrong data; and the checks must not refuse what a real
 * server legitimately does (a range clamped at the object's end, a
 * healthy transfer with the stricter stall detection).
 *
 * Times are measured only to prove "bounded, not forever": every bound is
 * several times what the test needs on a loaded 2-CPU machine. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "s3/http.h"

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

TestSuite(hostile, .init = init, .fini = fini, .timeout = 120);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

#define MIB (1u << 20)
/* Three parts of 5 MiB (the last one short) in a parallel GET. */
#define BIG (12u * MIB + 5)

/* A server and a bucket; faults (NULL: none) are set once the objects are
 * in place (set_faults), so they never hit the uploads. */
static void start(void) {
  srv_start(&srv, NULL, NULL);
  cli = mk_client(srv.url, NULL, NULL, 2);
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
}

static void set_faults(const char *spec) {
  struct http_resp r;
  http_send(srv.url,
            &(struct sreq){.method = "POST",
                           .target = "/.hipobj-admin/faults",
                           .body = spec,
                           .len = strlen(spec)},
            &r);
  cr_assert_eq(r.status, 200, "setting faults '%s': %d %s", spec, r.status,
               r.body);
  resp_free(&r);
}

/* GET options splitting a read into 5 MiB parts, two in flight. */
static struct hipobj_get_opts parallel_opts(void) {
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = 5 * MIB;
  o.concurrency = 2;
  return o;
}

/* The call failed as a protocol error whose message says the answer was
 * short, and reported only the bytes of parts that arrived whole: fewer
 * than asked. */
static void expect_short(int rc, const struct hipobj_xfer_result *res,
                         uint64_t asked) {
  cr_assert_eq(rc, HIPOBJ_E_PROTOCOL, "rc %d (%s): %s", rc, hipobj_strerror(rc),
               hipobj_error_message(err));
  cr_assert_not_null(strstr(hipobj_error_message(err), "short"), "%s",
                     hipobj_error_message(err));
  cr_assert_lt(res->bytes, asked, "a failed GET reported %llu bytes",
               (unsigned long long)res->bytes);
}

/* ---- partial: a 206 with fewer bytes than asked ------------------------- */

Test(hostile, parallel_get_with_one_partial_part_fails) {
  start();
  char *data = put_pattern(cli, "big", BIG, 1);
  /* The second GET of the download (part #2 or #3, whichever reaches the
   * server first) carries half its range. */
  set_faults("op=GetObject,nth=2,action=partial");
  char *got = calloc(1, BIG);
  struct hipobj_mem dst = hipobj_mem_host(got, BIG);
  struct hipobj_get_opts o = parallel_opts();
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  expect_short(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, &res, err), &res,
               BIG);
  /* The same download without the fault is whole: the failure was the
   * short answer, nothing else. */
  set_faults("");
  OK(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, &res, err));
  cr_assert_eq(res.bytes, BIG);
  cr_assert_eq(res.parts, 3);
  cr_assert_eq(memcmp(got, data, BIG), 0);
  free(data);
  free(got);
}

Test(hostile, parallel_get_with_every_part_partial_fails) {
  start();
  free(put_pattern(cli, "big", BIG, 2));
  set_faults("op=GetObject,action=partial:1");
  char *got = calloc(1, BIG);
  struct hipobj_mem dst = hipobj_mem_host(got, BIG);
  struct hipobj_get_opts o = parallel_opts();
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  /* One byte missing from each part is enough. */
  expect_short(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, &res, err), &res,
               BIG);
  free(got);
}

Test(hostile, single_ranged_get_answered_partial_fails) {
  start();
  free(put_pattern(cli, "small", 64 * 1024, 3));
  set_faults("op=GetObject,action=partial");
  char got[8192];
  struct hipobj_mem dst = hipobj_mem_host(got, sizeof got);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.has_range = 1;
  o.offset = 1000;
  o.length = 5000;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  expect_short(hipobj_s3_get(cli, T_BUCKET, "small", &dst, &o, &res, err), &res,
               o.length);
}

Test(hostile, parallel_get_into_a_file_answered_partial_fails) {
  start();
  free(put_pattern(cli, "big", BIG, 4));
  set_faults("op=GetObject,nth=3,action=partial");
  char path[320];
  snprintf(path, sizeof path, "%s/out", srv.base);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  cr_assert_geq(fd, 0);
  struct hipobj_mem dst = hipobj_mem_file(fd, 0, BIG);
  struct hipobj_get_opts o = parallel_opts();
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  expect_short(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, &res, err), &res,
               BIG);
  close(fd);
}

/* Not every short 206 is wrong: S3 clamps a range that runs past the
 * object's end, and the answer then carries exactly the bytes that exist. */
Test(hostile, range_past_the_end_gets_exactly_the_existing_bytes) {
  start();
  char *data = put_pattern(cli, "big", BIG, 5);
  char *got = calloc(1, 16 * MIB);
  struct hipobj_mem dst = hipobj_mem_host(got, 16 * MIB);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.has_range = 1;
  o.offset = BIG - 100;
  o.length = 1000; /* one request, clamped by the server */
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, &res, err));
  cr_assert_eq(res.bytes, 100);
  cr_assert_eq(memcmp(got, data + BIG - 100, 100), 0);
  /* In parts: the first answer tells the size, the others stop there. */
  o = parallel_opts();
  o.has_range = 1;
  o.offset = MIB;
  o.length = 100 * MIB;
  OK(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, &res, err));
  cr_assert_eq(res.bytes, BIG - MIB);
  cr_assert_eq(res.parts, 3);
  cr_assert_eq(memcmp(got, data + MIB, BIG - MIB), 0);
  free(data);
  free(got);
}

/* ---- endless: an error body that never ends ----------------------------- */

/* The sent=N count of the first fault rule containing `rule`. */
static unsigned long long sent_count(const char *rule) {
  struct http_resp r;
  http_send(srv.url,
            &(struct sreq){.method = "GET", .target = "/.hipobj-admin/faults"},
            &r);
  const char *line = r.body ? strstr(r.body, rule) : NULL;
  const char *s = line ? strstr(line, "sent=") : NULL;
  cr_assert_not_null(s, "no sent= for '%s' in: %s", rule, r.body);
  unsigned long long n = strtoull(s + 5, NULL, 10);
  resp_free(&r);
  return n;
}

/* What the server may send of an endless body per attempt: the error
 * body limit of s3/http.c, plus what sat in the socket buffers when the
 * client hung up (the fault keeps the server's small; 0.3 to 0.5 MiB seen
 * on loopback). Without the limit a client reads on until something else
 * stops it: gigabytes. */
#define ENDLESS_PER_ATTEMPT (S3_HTTP_ERROR_BODY_LIMIT + 2ull * MIB)

/* Replaces cli with a client whose requests end after 10 s whatever
 * happens: without the error body limit these tests then fail in
 * 20 s (two attempts) instead of running until the suite's timeout. */
static void deadline_client(void) {
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 2, 0);
  cfg.request_timeout_ms = 10000;
  hipobj_client_free(cli);
  OK(hipobj_client_create(&cfg, &cli, err));
}

Test(hostile, endless_error_body_of_a_get_is_cut) {
  start();
  free(put_pattern(cli, "obj", 1000, 6));
  deadline_client();
  set_faults("op=GetObject,action=endless");
  char got[1000];
  struct hipobj_mem dst = hipobj_mem_host(got, sizeof got);
  double t0 = mono_now();
  int rc = hipobj_s3_get(cli, T_BUCKET, "obj", &dst, NULL, NULL, err);
  double took = mono_now() - t0;
  cr_assert_eq(rc, HIPOBJ_E_SERVER_ERROR, "rc %d: %s", rc,
               hipobj_error_message(err));
  cr_assert_eq(hipobj_error_http_status(err), 500);
  /* Parsed from the beginning that was kept. */
  cr_assert_str_eq(hipobj_error_s3_code(err), "InternalError");
  cr_assert_not_null(strstr(hipobj_error_message(err), "not read further"),
                     "%s", hipobj_error_message(err));
  cr_assert_eq(hipobj_error_retries(err), 1, "2 attempts (max_attempts)");
  /* Bounded, not forever: the two attempts take milliseconds. */
  cr_assert(took < 30, "took %.1f s", took);
  unsigned long long sent = sent_count("action=endless");
  cr_assert_lt(sent, 2 * ENDLESS_PER_ATTEMPT, "the server sent %llu bytes",
               sent);
}

Test(hostile, endless_error_body_of_a_put_is_cut) {
  start();
  deadline_client();
  set_faults("op=PutObject,action=endless:503");
  char data[64 * 1024];
  fill_pattern(data, sizeof data, 7);
  struct hipobj_mem src = hipobj_mem_host(data, sizeof data);
  double t0 = mono_now();
  int rc = hipobj_s3_put(cli, T_BUCKET, "obj", &src, NULL, NULL, err);
  double took = mono_now() - t0;
  cr_assert_eq(rc, HIPOBJ_E_THROTTLED, "rc %d: %s", rc,
               hipobj_error_message(err));
  cr_assert_eq(hipobj_error_http_status(err), 503);
  cr_assert_str_eq(hipobj_error_s3_code(err), "SlowDown");
  cr_assert(took < 30, "took %.1f s", took);
  unsigned long long sent = sent_count("action=endless:503");
  cr_assert_lt(sent, 2 * ENDLESS_PER_ATTEMPT, "the server sent %llu bytes",
               sent);
}

/* ---- drip: a body at a few bytes per second ----------------------------- */

/* A client that gives up on a transfer slower than low_speed bytes/s (0:
 * the default) for 2 s, without retrying; its 20 s request deadline is
 * only a backstop, so that a broken stall detection fails the test
 * quickly instead of hanging it. */
static struct hipobj_client *stall_client(unsigned low_speed) {
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 1, 0);
  cfg.stall_timeout_ms = 2000;
  cfg.request_timeout_ms = 20000;
  cfg.low_speed_bytes_per_s = low_speed;
  struct hipobj_client *c = NULL;
  OK(hipobj_client_create(&cfg, &c, err));
  return c;
}

/* GETs key whole into a fresh buffer of n bytes, compared with want when
 * it succeeds; returns the status and, in *took, the seconds it took. */
static int timed_get(struct hipobj_client *c, const char *key, const char *want,
                     size_t n, double *took) {
  char *got = calloc(1, n);
  struct hipobj_mem dst = hipobj_mem_host(got, n);
  double t0 = mono_now();
  int rc = hipobj_s3_get(c, T_BUCKET, key, &dst, NULL, NULL, err);
  *took = mono_now() - t0;
  if (rc == HIPOBJ_OK)
    cr_assert_eq(memcmp(got, want, n), 0, "%s: the bytes differ", key);
  free(got);
  return rc;
}

Test(hostile, drip_below_the_low_speed_times_out) {
  start();
  free(put_pattern(cli, "obj", 64 * 1024, 8));
  set_faults("op=GetObject,action=drip:2");
  struct hipobj_client *c = stall_client(0);
  double took;
  int rc = timed_get(c, "obj", NULL, 64 * 1024, &took);
  cr_assert_eq(rc, HIPOBJ_E_TIMEOUT, "rc %d: %s", rc,
               hipobj_error_message(err));
  /* The stall detection ended it, and says so in the configuration's
   * terms; not the 20 s backstop. */
  const char *m = hipobj_error_message(err);
  cr_assert(strstr(m, "slower than 1024 bytes/s for 2 s"), "%s", m);
  /* Bounded, not forever: 2 s of slowness plus libcurl's 5 s average. */
  cr_assert(took < 15, "took %.1f s", took);
  hipobj_client_free(c);
}

Test(hostile, healthy_transfers_do_not_trip_the_low_speed) {
  start();
  char *data = put_pattern(cli, "big", BIG, 9);
  struct hipobj_client *c = stall_client(0);
  double took;
  /* Parts and a single request, both well above 1 KiB/s. */
  OK(timed_get(c, "big", data, BIG, &took));
  struct hipobj_mem src = hipobj_mem_host(data, BIG);
  OK(hipobj_s3_put(c, T_BUCKET, "copy", &src, NULL, NULL, err));
  OK(timed_get(c, "copy", data, BIG, &took));
  hipobj_client_free(c);
  free(data);
}

Test(hostile, low_speed_floor_is_configurable) {
  start();
  /* 150 bytes at 50 B/s: 3 s below 1 KiB/s, longer than the 2 s window. */
  char *data = put_pattern(cli, "obj", 150, 10);
  set_faults("op=GetObject,action=drip:50");
  struct hipobj_client *strict = stall_client(0), *lenient = stall_client(1);
  double took;
  int rc = timed_get(strict, "obj", data, 150, &took);
  cr_assert_eq(rc, HIPOBJ_E_TIMEOUT, "the default floor: rc %d: %s", rc,
               hipobj_error_message(err));
  OK(timed_get(lenient, "obj", data, 150, &took));
  hipobj_client_free(strict);
  hipobj_client_free(lenient);
  free(data);
}

Test(hostile, complete_keeps_a_floor_of_one_byte_per_second) {
  start();
  /* A server thinking over CompleteMultipartUpload, its answer trickling
   * (as S3's whitespace keep-alives do): about 3 s at 100 B/s, below the
   * client's 1 KiB/s for longer than its 2 s window. */
  set_faults("op=CompleteMultipartUpload,action=drip:100");
  struct hipobj_client *c = stall_client(0);
  size_t n = 5 * MIB + 1;
  char *data = malloc(n);
  fill_pattern(data, n, 11);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5 * MIB;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(c, T_BUCKET, "mp", &src, &po, &res, err));
  cr_assert_eq(res.parts, 2);
  hipobj_client_free(c);
  free(data);
}

/* ---- repeat-token: listings that never end ------------------------------ */

Test(hostile, list_token_that_comes_back_is_an_error) {
  start();
  free(put_pattern(cli, "a", 10, 12));
  set_faults("op=ListObjectsV2,action=repeat-token");
  struct hipobj_list_opts lo = HIPOBJ_LIST_OPTS_INIT;
  struct hipobj_list_page *p = NULL;
  /* The first page is truncated with a token: nothing wrong yet. */
  OK(hipobj_s3_list(cli, T_BUCKET, &lo, &p, err));
  cr_assert_eq(hipobj_list_page_count(p), 1);
  cr_assert_not_null(hipobj_list_page_next_token(p));
  char *tok = strdup(hipobj_list_page_next_token(p));
  hipobj_list_page_free(p);
  /* Following it gives it back: every caller that follows tokens would
   * loop, so the library says so. */
  lo.continuation_token = tok;
  p = NULL;
  int rc = hipobj_s3_list(cli, T_BUCKET, &lo, &p, err);
  cr_assert_eq(rc, HIPOBJ_E_PROTOCOL, "rc %d: %s", rc,
               hipobj_error_message(err));
  cr_assert_null(p);
  const char *m = hipobj_error_message(err);
  char head[25];
  snprintf(head, sizeof head, "%s", tok);
  cr_assert(strstr(m, "never end") && strstr(m, head), "%s", m);
  free(tok);
}

Test(hostile, list_parts_that_does_not_move_on_is_an_error) {
  start();
  struct hipobj_mpu *mpu = NULL, *again = NULL;
  OK(hipobj_mpu_create(cli, T_BUCKET, "mp", NULL, &mpu, err));
  char part[1000];
  fill_pattern(part, sizeof part, 13);
  struct hipobj_mem src = hipobj_mem_host(part, sizeof part);
  for (unsigned i = 1; i <= 2; i++)
    OK(hipobj_mpu_upload_part(mpu, i, &src, NULL, err));
  OK(hipobj_mpu_open(cli, T_BUCKET, "mp", hipobj_mpu_upload_id(mpu), &again,
                     err));
  OK(hipobj_mpu_list_parts(again, err));
  cr_assert_eq(hipobj_mpu_part_count(again), 2);
  /* Truncated answers whose marker never moves: an error, not a part
   * list that silently stops (or loops). */
  set_faults("op=ListParts,action=repeat-token");
  int rc = hipobj_mpu_list_parts(again, err);
  cr_assert_eq(rc, HIPOBJ_E_PROTOCOL, "rc %d: %s", rc,
               hipobj_error_message(err));
  cr_assert_not_null(strstr(hipobj_error_message(err), "does not move past"),
                     "%s", hipobj_error_message(err));
  hipobj_mpu_free(again);
  hipobj_mpu_free(mpu);
}
