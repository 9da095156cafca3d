/* test_faults.c - one test per fault switch of hipobj-server, each showing
 * that the fault does what it says, seen through hipObject's public API
 * (retries, error statuses) or raw HTTP; plus the admin endpoint that
 * changes the rules at runtime. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static char data[64 * 1024], back[64 * 1024];

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
  fill_pattern(data, sizeof data, 11);
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(faults, .init = init, .fini = fini, .timeout = 90);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

/* A server with these faults, a bucket and one object "obj" (created
 * before the rules can see it when they target other operations). */
static void start(const char *spec, const char *threads) {
  const char *extra[] = {"--faults", spec, threads ? "--threads" : NULL,
                         threads, NULL};
  srv_start(&srv, NULL, spec ? extra : NULL);
  cli = mk_client(srv.url, NULL, NULL, 4);
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
}

static int get_obj(struct hipobj_xfer_result *res) {
  struct hipobj_mem dst = hipobj_mem_host(back, sizeof back);
  return hipobj_s3_get(cli, T_BUCKET, "obj", &dst, NULL, res, err);
}

static int put_obj(struct hipobj_xfer_result *res) {
  struct hipobj_mem src = hipobj_mem_host(data, sizeof data);
  return hipobj_s3_put(cli, T_BUCKET, "obj", &src, NULL, res, err);
}

Test(faults, slowdown_on_first_get_is_retried) {
  start("op=GetObject,nth=1,action=status:503", NULL);
  OK(put_obj(NULL));
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_obj(&res));
  cr_assert_eq(res.retries, 1);
  cr_assert_eq(memcmp(data, back, sizeof data), 0);
}

Test(faults, internal_error_twice_on_put) {
  start("op=PutObject,nth=1,count=2,action=status:500", NULL);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(put_obj(&res));
  cr_assert_eq(res.retries, 2);
}

Test(faults, always_throttled_gives_up) {
  start("op=GetObject,prob=1,action=status:503", NULL);
  OK(put_obj(NULL));
  cr_assert_eq(get_obj(NULL), HIPOBJ_E_THROTTLED);
  cr_assert_str_eq(hipobj_error_s3_code(err), "SlowDown");
  cr_assert_eq(hipobj_error_retries(err), 3);
}

Test(faults, status_with_custom_code) {
  start("op=HeadObject,action=status:403:AccessDenied", NULL);
  OK(put_obj(NULL));
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "obj", &info, err),
               HIPOBJ_E_ACCESS_DENIED);
}

struct timed {
  double seconds;
  int rc;
};

static void *slow_get(void *arg) {
  struct timed *t = arg;
  struct hipobj_error *e;
  hipobj_error_create(&e);
  struct hipobj_mem dst = hipobj_mem_host(malloc(sizeof data), sizeof data);
  double t0 = mono_now();
  t->rc = hipobj_s3_get(cli, T_BUCKET, "obj", &dst, NULL, NULL, e);
  t->seconds = mono_now() - t0;
  free(dst.ptr);
  hipobj_error_free(e);
  return NULL;
}

Test(faults, delay_does_not_block_other_clients) {
  /* One worker thread: a sleeping handler would stall everybody. */
  start("op=GetObject,nth=1,action=delay:1500", "1");
  OK(put_obj(NULL));
  pthread_t t;
  struct timed slow = {0};
  pthread_create(&t, NULL, slow_get, &slow);
  usleep(200000);
  double t0 = mono_now();
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "obj", &info, err));
  double head_s = mono_now() - t0;
  pthread_join(t, NULL);
  cr_assert_eq(slow.rc, HIPOBJ_OK);
  cr_assert(slow.seconds >= 1.4, "delayed GET took %.3f s", slow.seconds);
  cr_assert(head_s < 1.0, "HEAD waited %.3f s behind the delayed GET", head_s);
}

Test(faults, corrupted_byte_is_an_integrity_error) {
  start("op=GetObject,nth=1,action=corrupt:1000", NULL);
  OK(put_obj(NULL));
  /* The answer's x-amz-checksum-crc64nvme (test_get_checksum.c has the
   * rest) does not match the bytes: never a success, and not retried. */
  cr_assert_eq(get_obj(NULL), HIPOBJ_E_INTEGRITY, "%s",
               hipobj_error_message(err));
  cr_assert_eq(hipobj_error_retries(err), 0);
  cr_assert(strstr(hipobj_error_message(err), "CRC64NVME mismatch"), "%s",
            hipobj_error_message(err));
}

Test(faults, corrupted_byte_is_visible_without_verification) {
  start("op=GetObject,nth=1,action=corrupt:1000", NULL);
  OK(put_obj(NULL));
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.checksum_mode = HIPOBJ_CHECKSUM_MODE_OFF;
  struct hipobj_mem dst = hipobj_mem_host(back, sizeof back);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "obj", &dst, &o, &res, err));
  cr_assert_eq(res.retries, 0);
  cr_assert_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  size_t diff = 0;
  for (size_t i = 0; i < sizeof data; i++)
    diff += data[i] != back[i];
  cr_assert_eq(diff, 1);
  cr_assert_neq(data[1000], back[1000]);
}

Test(faults, short_body_is_a_network_error) {
  start("op=GetObject,action=short:10", NULL);
  OK(put_obj(NULL));
  cr_assert_eq(get_obj(NULL), HIPOBJ_E_NETWORK, "%s",
               hipobj_error_message(err));
  cr_assert_eq(hipobj_error_retries(err), 3);
}

Test(faults, close_after_bytes_of_the_answer) {
  start("op=GetObject,nth=1,action=close:100", NULL);
  OK(put_obj(NULL));
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_obj(&res));
  cr_assert_eq(res.retries, 1);
  cr_assert_eq(memcmp(data, back, sizeof data), 0);
}

Test(faults, close_during_upload_leaves_no_half_object) {
  start("op=PutObject,action=close:1000", NULL);
  cr_assert_eq(put_obj(NULL), HIPOBJ_E_NETWORK, "%s",
               hipobj_error_message(err));
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "obj", &info, err),
               HIPOBJ_E_NOT_FOUND);
}

Test(faults, dropped_connection_is_retried) {
  start("op=HeadObject,nth=1,action=drop", NULL);
  OK(put_obj(NULL));
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "obj", &info, err));
  cr_assert_eq(info.size, sizeof data);
}

Test(faults, malformed_xml_is_a_protocol_error) {
  start("op=ListObjectsV2,action=badxml;op=CreateMultipartUpload,"
        "action=badxml",
        NULL);
  struct hipobj_list_page *p = NULL;
  cr_assert_eq(hipobj_s3_list(cli, T_BUCKET, NULL, &p, err), HIPOBJ_E_PROTOCOL);
  struct hipobj_mpu *mpu = NULL;
  cr_assert_eq(hipobj_mpu_create(cli, T_BUCKET, "m", NULL, &mpu, err),
               HIPOBJ_E_PROTOCOL);
}

Test(faults, crash_stops_the_server) {
  start("op=GetObject,nth=1,action=crash", NULL);
  OK(put_obj(NULL));
  int rc = get_obj(NULL);
  cr_assert(rc == HIPOBJ_E_NETWORK || rc == HIPOBJ_E_CONNECT, "rc %d: %s", rc,
            hipobj_error_message(err));
  int st = 0;
  cr_assert(srv_wait(&srv, 5, &st));
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 70, "status %d", st);
}

Test(faults, crash_after_commit_keeps_the_object) {
  start("op=PutObject,nth=1,action=crash-after", NULL);
  int rc = put_obj(NULL);
  cr_assert(rc == HIPOBJ_E_NETWORK || rc == HIPOBJ_E_CONNECT, "rc %d", rc);
  int st;
  cr_assert(srv_wait(&srv, 5, &st));
  hipobj_client_free(cli);
  srv_start(&srv, srv.root, NULL);
  cli = mk_client(srv.url, NULL, NULL, 4);
  OK(get_obj(NULL));
  cr_assert_eq(memcmp(data, back, sizeof data), 0);
}

Test(faults, admin_endpoint) {
  start(NULL, NULL);
  OK(put_obj(NULL));
  const char *spec = "op=GetObject,nth=1,action=status:503";
  struct http_resp r;
  http_send(srv.url,
            &(struct sreq){.method = "POST",
                           .target = "/.hipobj-admin/faults",
                           .body = spec,
                           .len = strlen(spec)},
            &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_neq(strstr(r.body, spec), NULL);
  resp_free(&r);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_obj(&res));
  cr_assert_eq(res.retries, 1);
  http_send(srv.url,
            &(struct sreq){.method = "GET", .target = "/.hipobj-admin/faults"},
            &r);
  cr_assert_neq(strstr(r.body, "fired=1"), NULL, "%s", r.body);
  resp_free(&r);
  http_send(
      srv.url,
      &(struct sreq){.method = "DELETE", .target = "/.hipobj-admin/faults"},
      &r);
  cr_assert_eq(r.status, 204);
  resp_free(&r);
  http_send(srv.url,
            &(struct sreq){.method = "GET", .target = "/.hipobj-admin/faults"},
            &r);
  cr_assert_eq(r.len, 0);
  resp_free(&r);
  /* Unsigned or malformed: refused. */
  http_send(srv.url,
            &(struct sreq){.method = "POST",
                           .target = "/.hipobj-admin/faults",
                           .anonymous = 1,
                           .body = spec,
                           .len = strlen(spec)},
            &r);
  cr_assert_eq(r.status, 403);
  resp_free(&r);
  http_send(srv.url,
            &(struct sreq){.method = "POST",
                           .target = "/.hipobj-admin/faults",
                           .body = "op=Nope,action=drop",
                           .len = 19},
            &r);
  cr_assert_eq(r.status, 400);
  cr_assert_neq(strstr(r.body, "unknown operation"), NULL);
  resp_free(&r);
}

Test(faults, rdma_rules) {
  start("op=RdmaPrepare,action=rdma-decline;op=RdmaReady,action=rdma-fail",
        NULL);
  struct http_resp r;
  char v[64];
  http_send(srv.url,
            &(struct sreq){.method = "POST", .target = "/.hipobj-rc/prepare"},
            &r);
  cr_assert_eq(r.status, 501);
  cr_assert_str_eq(resp_hdr(&r, "X-Amz-Rdma-Protocol-Status", v, sizeof v),
                   "unsupported");
  resp_free(&r);
  http_send(srv.url,
            &(struct sreq){.method = "GET", .target = "/.hipobj-admin/faults"},
            &r);
  cr_assert_neq(strstr(r.body, "action=rdma-decline  # seen=1 fired=1"), NULL,
                "%s", r.body);
  cr_assert_neq(strstr(r.body, "action=rdma-fail"), NULL);
  resp_free(&r);
}

Test(faults, delay_past_the_stall_timeout_is_retried) {
  start("op=GetObject,nth=1,action=delay:3000", NULL);
  OK(put_obj(NULL));
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = srv.url;
  cfg.region = T_REGION;
  cfg.access_key_id = T_AK;
  cfg.secret_access_key = T_SK;
  cfg.stall_timeout_ms = 500;
  cfg.retry_base_ms = 5;
  cfg.log_level = HIPOBJ_LOG_NONE;
  struct hipobj_client *c;
  OK(hipobj_client_create(&cfg, &c, err));
  struct hipobj_mem dst = hipobj_mem_host(back, sizeof back);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  double t0 = mono_now();
  OK(hipobj_s3_get(c, T_BUCKET, "obj", &dst, NULL, &res, err));
  double took = mono_now() - t0;
  cr_assert_eq(res.retries, 1);
  cr_assert(took < 2.5, "took %.2f s", took);
  hipobj_client_free(c);
}

Test(faults, failing_part_is_retried_in_a_multipart_put) {
  start("op=UploadPart,nth=2,action=status:500;"
        "op=CompleteMultipartUpload,nth=1,action=status:503",
        NULL);
  size_t n = 11u << 20;
  char *big = malloc(n), *got = malloc(n);
  fill_pattern(big, n, 4);
  struct hipobj_mem src = hipobj_mem_host(big, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5u << 20;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "mp", &src, &po, &res, err));
  cr_assert_eq(res.parts, 3);
  cr_assert_eq(res.retries, 2, "retries %u", res.retries);
  struct hipobj_mem dst = hipobj_mem_host(got, n);
  OK(hipobj_s3_get(cli, T_BUCKET, "mp", &dst, NULL, NULL, err));
  cr_assert_eq(memcmp(big, got, n), 0);
  free(big);
  free(got);
}

Test(faults, lost_complete_answer_is_retried) {
  /* The upload completes but its answer never arrives; the retried
   * Complete must get the same result, not NoSuchUpload. */
  start("op=CompleteMultipartUpload,nth=1,action=short:100000", NULL);
  size_t n = 6u << 20;
  char *big = malloc(n);
  fill_pattern(big, n, 8);
  struct hipobj_mem src = hipobj_mem_host(big, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5u << 20;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "lost", &src, &po, &res, err));
  cr_assert_eq(res.retries, 1, "retries %u", res.retries);
  cr_assert(strstr(res.etag, "-2\"") != NULL, "etag %s", res.etag);
  free(big);
}

/* A signed raw GET of "obj" with the headers given. */
static struct sreq raw_get(const char *const *hdrs) {
  return (struct sreq){
      .method = "GET", .target = "/" T_BUCKET "/obj", .hdrs = hdrs};
}

Test(faults, partial_answer_is_honest_and_keeps_the_connection) {
  start("op=GetObject,nth=1,action=partial:100;op=GetObject,nth=3,"
        "action=partial",
        NULL);
  OK(put_obj(NULL));
  char v[64];
  struct http_resp a, b;
  const char *h1[] = {"Range: bytes=1000-1999", NULL};
  const char *h2[] = {"Range: bytes=0-9", NULL};
  const char *h3[] = {"Range: bytes=100-299", NULL};
  struct sreq q1 = raw_get(h1), q2 = raw_get(h2), q3 = raw_get(h3);
  http_send_pair(srv.url, &q1, &q2, &a, &b);
  /* 100 bytes fewer at the end, and the headers say exactly that. */
  cr_assert_eq(a.status, 206, "status %d", a.status);
  cr_assert_str_eq(resp_hdr(&a, "Content-Range", v, sizeof v),
                   "bytes 1000-1899/65536");
  cr_assert_str_eq(resp_hdr(&a, "Content-Length", v, sizeof v), "900");
  cr_assert_eq(a.len, 900);
  cr_assert_eq(memcmp(a.body, data + 1000, 900), 0);
  /* Not a cut connection: the next request on it is answered. */
  cr_assert_eq(b.status, 206, "second request on the connection: %d", b.status);
  cr_assert_eq(b.len, 10);
  cr_assert_eq(memcmp(b.body, data, 10), 0);
  resp_free(&a);
  resp_free(&b);
  /* Without N: half the range is left out. */
  http_send(srv.url, &q3, &a);
  cr_assert_eq(a.status, 206);
  cr_assert_str_eq(resp_hdr(&a, "Content-Range", v, sizeof v),
                   "bytes 100-199/65536");
  cr_assert_eq(a.len, 100);
  cr_assert_eq(memcmp(a.body, data + 100, 100), 0);
  resp_free(&a);
}

/* The sent=N count of the first rule whose text contains `rule`. */
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

Test(faults, endless_error_body_streams_and_is_counted) {
  start("op=GetObject,action=endless;op=PutObject,action=endless:404", NULL);
  /* Read 4 MiB of it, then hang up: it is still going. */
  struct http_resp r;
  struct sreq q = raw_get(NULL);
  q.max_body = 4u << 20;
  http_send(srv.url, &q, &r);
  cr_assert_eq(r.status, 500);
  cr_assert_geq(r.len, q.max_body);
  cr_assert_not_null(strstr(r.body, "<Code>InternalError</Code>"));
  cr_assert_null(strstr(r.body, "</Error>"));
  resp_free(&r);
  /* The server counted at least what was read: tests bound it with this. */
  unsigned long long sent = sent_count("action=endless  #");
  cr_assert_geq(sent, q.max_body, "sent=%llu", sent);
  /* endless:CODE: that status; an unknown code is InjectedFault. */
  q = (struct sreq){.method = "PUT",
                    .target = "/" T_BUCKET "/obj",
                    .body = "x",
                    .len = 1,
                    .max_body = 1000};
  http_send(srv.url, &q, &r);
  cr_assert_eq(r.status, 404);
  cr_assert_not_null(strstr(r.body, "<Code>InjectedFault</Code>"));
  resp_free(&r);
  cr_assert_geq(sent_count("action=endless:404"), 1000);
}

Test(faults, drip_paces_the_body_without_blocking_others) {
  /* One worker thread: a handler sleeping between bytes would stall
   * everybody. 64 KiB at 16 KiB/s: four seconds. */
  start("op=GetObject,nth=1,action=drip:16384", "1");
  OK(put_obj(NULL));
  pthread_t t;
  struct timed slow = {0};
  double t0 = mono_now();
  pthread_create(&t, NULL, slow_get, &slow);
  usleep(200000);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "obj", &info, err));
  double head_done = mono_now() - t0;
  pthread_join(t, NULL);
  cr_assert_eq(slow.rc, HIPOBJ_OK);
  /* The pace is the server's: it cannot be faster than (n - 1) / BPS. */
  cr_assert(slow.seconds >= 3.9, "dripped GET took %.3f s", slow.seconds);
  cr_assert(head_done < slow.seconds,
            "HEAD done after %.3f s, behind the dripping GET (%.3f s)",
            head_done, slow.seconds);
}

/* A signed raw GET of target, its answer's <el> text copied to out. */
static void list_el(const char *target, const char *el, char *out, size_t n) {
  struct http_resp r;
  http_send(srv.url, &(struct sreq){.method = "GET", .target = target}, &r);
  cr_assert_eq(r.status, 200, "%s: %d %s", target, r.status, r.body);
  cr_assert_str_eq(xml_text(&r, "IsTruncated"), "true", "%s", r.body);
  snprintf(out, n, "%s", xml_text(&r, el));
  resp_free(&r);
}

Test(faults, repeat_token_listings_never_end) {
  start("op=ListObjectsV2,action=repeat-token;op=ListObjects,"
        "action=repeat-token:2;op=ListParts,action=repeat-token",
        NULL);
  OK(put_obj(NULL));
  char tok[256], again[256], target[512];
  /* v2: a fixed token on the first page, then the one sent. */
  list_el("/" T_BUCKET "?list-type=2", "NextContinuationToken", tok,
          sizeof tok);
  cr_assert_neq(tok[0], '\0');
  snprintf(target, sizeof target,
           "/" T_BUCKET "?list-type=2&"
           "continuation-token=%s",
           tok);
  list_el(target, "NextContinuationToken", again, sizeof again);
  cr_assert_str_eq(again, tok);
  /* v1 with a cycle of two markers: 1, 2, 1. */
  list_el("/" T_BUCKET, "NextMarker", tok, sizeof tok);
  cr_assert_str_eq(tok, "hipobj-repeat-token-1");
  list_el("/" T_BUCKET "?marker=hipobj-repeat-token-1", "NextMarker", tok,
          sizeof tok);
  cr_assert_str_eq(tok, "hipobj-repeat-token-2");
  list_el("/" T_BUCKET "?marker=hipobj-repeat-token-2", "NextMarker", tok,
          sizeof tok);
  cr_assert_str_eq(tok, "hipobj-repeat-token-1");
  /* ListParts: the marker sent comes back. */
  struct hipobj_mpu *mpu = NULL;
  OK(hipobj_mpu_create(cli, T_BUCKET, "mp", NULL, &mpu, err));
  snprintf(target, sizeof target,
           "/" T_BUCKET "/mp?uploadId=%s&"
           "part-number-marker=3",
           hipobj_mpu_upload_id(mpu));
  list_el(target, "NextPartNumberMarker", tok, sizeof tok);
  cr_assert_str_eq(tok, "3");
  hipobj_mpu_free(mpu);
}
