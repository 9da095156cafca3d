/* test_raw.c - hipobj-server at the HTTP level, for what the library does
 * not express: authentication failures (wrong secret, unknown key,
 * anonymous, clock skew), presigned URLs, x-amz-content-sha256 checks,
 * aws-chunked uploads, user metadata, DeleteObjects, and the RDMA paths
 * (declined in this build). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "src/base/buf.h"

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;

static void setup(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
  srv_start(&srv, NULL, NULL);
  cli = mk_client(srv.url, NULL, NULL, 0);
  cr_assert_eq(hipobj_s3_create_bucket(cli, T_BUCKET, err), HIPOBJ_OK);
  struct hipobj_mem m = hipobj_mem_host((void *)"0123456789", 10);
  cr_assert_eq(hipobj_s3_put(cli, T_BUCKET, "obj", &m, NULL, NULL, err),
               HIPOBJ_OK);
}

static void teardown(void) {
  hipobj_client_free(cli);
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(raw, .init = setup, .fini = teardown, .timeout = 60);

static void get(const char *target, struct sreq q, struct http_resp *r) {
  q.method = q.method ? q.method : "GET";
  q.target = target;
  cr_assert_eq(http_send(srv.url, &q, r), 0, "cannot connect");
}

/* Every error answer: the code, a non-empty message, the request id. */
static void expect_error(struct http_resp *r, int status, const char *code) {
  char v[128];
  cr_assert_eq(r->status, status, "status %d, body %s", r->status, r->body);
  cr_assert_str_eq(xml_text(r, "Code"), code, "body %s", r->body);
  cr_assert_neq(xml_text(r, "Message")[0], '\0');
  cr_assert_neq(xml_text(r, "RequestId")[0], '\0');
  cr_assert_str_eq(resp_hdr(r, "x-amz-request-id", v, sizeof v),
                   xml_text(r, "RequestId"));
  resp_free(r);
}

Test(raw, wrong_secret_and_unknown_key) {
  struct hipobj_client *bad = mk_client(srv.url, T_AK, "wrong-secret", 1);
  char buf[16];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  cr_assert_eq(hipobj_s3_get(bad, T_BUCKET, "obj", &dst, NULL, NULL, err),
               HIPOBJ_E_ACCESS_DENIED);
  cr_assert_str_eq(hipobj_error_s3_code(err), "SignatureDoesNotMatch");
  hipobj_client_free(bad);
  bad = mk_client(srv.url, "AKIDUNKNOWN", T_SK, 1);
  cr_assert_eq(hipobj_s3_get(bad, T_BUCKET, "obj", &dst, NULL, NULL, err),
               HIPOBJ_E_ACCESS_DENIED);
  cr_assert_str_eq(hipobj_error_s3_code(err), "InvalidAccessKeyId");
  hipobj_client_free(bad);
  /* A PUT with a wrong signature stores nothing. */
  struct http_resp r;
  get("/bkt/sneaky",
      (struct sreq){.method = "PUT", .body = "x", .len = 1, .sk = "nope"}, &r);
  expect_error(&r, 403, "SignatureDoesNotMatch");
  get("/bkt/sneaky", (struct sreq){.method = "HEAD"}, &r);
  cr_assert_eq(r.status, 404);
  resp_free(&r);
}

Test(raw, anonymous_and_skew) {
  struct http_resp r;
  get("/bkt/obj", (struct sreq){.anonymous = 1}, &r);
  expect_error(&r, 403, "AccessDenied");
  get("/", (struct sreq){.anonymous = 1}, &r);
  expect_error(&r, 403, "AccessDenied");
  get("/bkt/obj", (struct sreq){.when = time(NULL) - 20 * 60}, &r);
  expect_error(&r, 403, "RequestTimeTooSkewed");
  get("/bkt/obj", (struct sreq){.when = time(NULL) + 20 * 60}, &r);
  expect_error(&r, 403, "RequestTimeTooSkewed");
  /* Within 15 minutes is fine. */
  get("/bkt/obj", (struct sreq){.when = time(NULL) - 10 * 60}, &r);
  cr_assert_eq(r.status, 200);
  resp_free(&r);
  /* SigV2 is refused with a clear message. */
  const char *v2[] = {"Authorization: AWS AKID:c2lnbmF0dXJl", NULL};
  get("/bkt/obj", (struct sreq){.anonymous = 1, .unsigned_hdrs = v2}, &r);
  expect_error(&r, 400, "InvalidRequest");
}

Test(raw, presigned_urls) {
  struct http_resp r;
  char *t = presign(srv.url, "GET", "/bkt/obj", 300, time(NULL), NULL, NULL);
  get(t, (struct sreq){.anonymous = 1}, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_eq(r.len, 10);
  cr_assert_eq(memcmp(r.body, "0123456789", 10), 0);
  resp_free(&r);
  /* Tampered: another key with the same signature. */
  char *other = strdup(t);
  memcpy(strstr(other, "/obj"), "/obk", 4);
  get(other, (struct sreq){.anonymous = 1}, &r);
  expect_error(&r, 403, "SignatureDoesNotMatch");
  free(other);
  free(t);
  /* Expired: signed 2 minutes ago for 60 seconds. */
  t = presign(srv.url, "GET", "/bkt/obj", 60, time(NULL) - 120, NULL, NULL);
  get(t, (struct sreq){.anonymous = 1}, &r);
  cr_assert_str_eq(xml_text(&r, "Message"), "Request has expired");
  expect_error(&r, 403, "AccessDenied");
  free(t);
  /* A presigned PUT. */
  t = presign(srv.url, "PUT", "/bkt/pre", 300, time(NULL), NULL, NULL);
  get(t,
      (struct sreq){.method = "PUT", .anonymous = 1, .body = "abc", .len = 3},
      &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
  free(t);
  get("/bkt/pre", (struct sreq){0}, &r);
  cr_assert_eq(r.len, 3);
  resp_free(&r);
}

Test(raw, payload_hash_checked) {
  struct http_resp r;
  char wrong[65];
  memset(wrong, 'a', 64);
  wrong[64] = '\0';
  get("/bkt/hashed",
      (struct sreq){
          .method = "PUT", .body = "data", .len = 4, .payload_hash = wrong},
      &r);
  expect_error(&r, 400, "XAmzContentSHA256Mismatch");
  get("/bkt/hashed", (struct sreq){.method = "HEAD"}, &r);
  cr_assert_eq(r.status, 404, "a rejected body must not be stored");
  resp_free(&r);
  get("/bkt/unsigned",
      (struct sreq){.method = "PUT",
                    .body = "data",
                    .len = 4,
                    .payload_hash = "UNSIGNED-PAYLOAD"},
      &r);
  cr_assert_eq(r.status, 200);
  resp_free(&r);
  /* Content-MD5 is checked too. */
  const char *md5[] = {"Content-MD5: AAAAAAAAAAAAAAAAAAAAAA==", NULL};
  get("/bkt/md5",
      (struct sreq){.method = "PUT", .body = "data", .len = 4, .hdrs = md5},
      &r);
  expect_error(&r, 400, "BadDigest");
}

/* Builds an aws-chunked body of `data` in chunks of `chunk` bytes, with a
 * trailer line after the final chunk when trailer is set. */
static char *chunked_body(const char *data, size_t n, size_t chunk, time_t when,
                          const char *seed, size_t *out_len, int corrupt,
                          const char *trailer) {
  struct hbuf b = HBUF_INIT;
  char prev[65], sig[65];
  memcpy(prev, seed, 65);
  size_t off = 0;
  for (;;) {
    size_t k = n - off < chunk ? n - off : chunk;
    chunk_sig(when, prev, data + off, k, sig);
    if (corrupt && off == 0)
      sig[0] = sig[0] == '0' ? '1' : '0';
    hbuf_printf(&b, "%zx;chunk-signature=%s\r\n", k, sig);
    hbuf_append(&b, data + off, k);
    if (k == 0 && trailer) /* before the empty line that ends the body */
      hbuf_printf(&b, "%s\r\n", trailer);
    hbuf_puts(&b, "\r\n");
    memcpy(prev, sig, 65);
    if (k == 0)
      break;
    off += k;
  }
  *out_len = b.len;
  return hbuf_steal(&b);
}

static void chunked_put(const char *target, const char *data, size_t n,
                        int corrupt, const char *trailer, struct http_resp *r) {
  time_t now = time(NULL);
  char dl[64], authz[512], seed[65], clen[64];
  snprintf(dl, sizeof dl, "x-amz-decoded-content-length: %zu", n);
  const char *hdrs[] = {"content-encoding: aws-chunked", dl, NULL};
  sign_headers(srv.url, "PUT", target, hdrs,
               "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", now, authz, sizeof authz,
               seed);
  size_t blen;
  char *body = chunked_body(data, n, 65536, now, seed, &blen, corrupt, trailer);
  char amz[32], a[600];
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(amz, sizeof amz, "x-amz-date: %Y%m%dT%H%M%SZ", &tm);
  snprintf(a, sizeof a, "Authorization: %s", authz);
  snprintf(clen, sizeof clen, "Content-Length: %zu", blen);
  const char *all[] = {hdrs[0],
                       hdrs[1],
                       amz,
                       a,
                       clen,
                       "x-amz-content-sha256: "
                       "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
                       NULL};
  get(target,
      (struct sreq){.method = "PUT",
                    .anonymous = 1,
                    .unsigned_hdrs = all,
                    .body = body,
                    .len = blen},
      r);
  free(body);
}

Test(raw, aws_chunked_upload) {
  size_t n = 150000;
  char *data = malloc(n);
  fill_pattern(data, n, 5);
  struct http_resp r;
  chunked_put("/bkt/chunked", data, n, 0, NULL, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  char etag[40], v[64];
  md5_etag(data, n, etag);
  cr_assert_str_eq(resp_hdr(&r, "ETag", v, sizeof v), etag);
  resp_free(&r);
  char *back = malloc(n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "chunked", &dst, NULL, NULL, err),
               HIPOBJ_OK);
  cr_assert_eq(memcmp(back, data, n), 0);
  /* A wrong chunk signature: 403, nothing stored. */
  chunked_put("/bkt/chunked-bad", data, n, 1, NULL, &r);
  expect_error(&r, 403, "SignatureDoesNotMatch");
  get("/bkt/chunked-bad", (struct sreq){.method = "HEAD"}, &r);
  cr_assert_eq(r.status, 404);
  resp_free(&r);
  /* A trailer that no x-amz-trailer declared: its checksum would go
   * unchecked, so the upload is refused. */
  chunked_put("/bkt/chunked-trailer", data, n, 0,
              "x-amz-checksum-crc32c:AAAAAA==", &r);
  expect_error(&r, 400, "MalformedTrailerError");
  get("/bkt/chunked-trailer", (struct sreq){.method = "HEAD"}, &r);
  cr_assert_eq(r.status, 404);
  resp_free(&r);
  free(data);
  free(back);
}

Test(raw, user_metadata) {
  struct http_resp r;
  const char *h[] = {"x-amz-meta-color: blue", "Content-Type: text/x-test",
                     "Cache-Control: no-cache", NULL};
  get("/bkt/meta",
      (struct sreq){.method = "PUT", .body = "m", .len = 1, .hdrs = h}, &r);
  cr_assert_eq(r.status, 200);
  resp_free(&r);
  char v[128];
  get("/bkt/meta", (struct sreq){.method = "HEAD"}, &r);
  cr_assert_eq(r.status, 200);
  cr_assert_str_eq(resp_hdr(&r, "x-amz-meta-color", v, sizeof v), "blue");
  cr_assert_str_eq(resp_hdr(&r, "Content-Type", v, sizeof v), "text/x-test");
  cr_assert_str_eq(resp_hdr(&r, "Cache-Control", v, sizeof v), "no-cache");
  cr_assert_str_eq(resp_hdr(&r, "Content-Length", v, sizeof v), "1");
  cr_assert_neq(resp_hdr(&r, "Last-Modified", v, sizeof v)[0], '\0');
  cr_assert_neq(strstr(v, " GMT"), NULL);
  resp_free(&r);
  /* Conditional GETs. */
  char etag[40], inm[80];
  md5_etag("m", 1, etag);
  snprintf(inm, sizeof inm, "If-None-Match: %s", etag);
  const char *c1[] = {inm, NULL};
  get("/bkt/meta", (struct sreq){.hdrs = c1}, &r);
  cr_assert_eq(r.status, 304);
  resp_free(&r);
  const char *c2[] = {"If-Match: \"nope\"", NULL};
  get("/bkt/meta", (struct sreq){.hdrs = c2}, &r);
  expect_error(&r, 412, "PreconditionFailed");
}

Test(raw, delete_objects) {
  for (int i = 0; i < 3; i++) {
    char k[8];
    snprintf(k, sizeof k, "d%d", i);
    struct hipobj_mem m = hipobj_mem_host((void *)"x", 1);
    cr_assert_eq(hipobj_s3_put(cli, T_BUCKET, k, &m, NULL, NULL, err),
                 HIPOBJ_OK);
  }
  const char *body = "<Delete><Object><Key>d0</Key></Object>"
                     "<Object><Key>d1</Key></Object>"
                     "<Object><Key>missing</Key></Object></Delete>";
  struct http_resp r;
  get("/bkt?delete",
      (struct sreq){.method = "POST", .body = body, .len = strlen(body)}, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_neq(strstr(r.body, "<Deleted><Key>missing</Key></Deleted>"), NULL);
  cr_assert_neq(strstr(r.body, "<Deleted><Key>d0</Key></Deleted>"), NULL);
  resp_free(&r);
  const char *quiet = "<Delete><Quiet>true</Quiet>"
                      "<Object><Key>d2</Key></Object></Delete>";
  get("/bkt?delete",
      (struct sreq){.method = "POST", .body = quiet, .len = strlen(quiet)}, &r);
  cr_assert_eq(r.status, 200);
  cr_assert_null(strstr(r.body, "<Deleted>"));
  resp_free(&r);
  get("/bkt?delete",
      (struct sreq){.method = "POST", .body = "<Delete>", .len = 8}, &r);
  expect_error(&r, 400, "MalformedXML");
  struct hipobj_list_page *p;
  struct hipobj_list_opts lo = HIPOBJ_LIST_OPTS_INIT;
  lo.prefix = "d";
  cr_assert_eq(hipobj_s3_list(cli, T_BUCKET, &lo, &p, err), HIPOBJ_OK);
  cr_assert_eq(hipobj_list_page_count(p), 0);
  hipobj_list_page_free(p);
}

#define DC_TOKEN                                                               \
  "00007f1234560000:00400000:01f2e973:0000:007a03:1:"                          \
  "00000000000000000000ffff0a000005"

Test(raw, rdma_declined) {
  static const char *const paths[] = {
      "/.hipobj-rc/prepare", "/.hipobj-rc/ready", "/.hipobj-rc/cancel"};
  const char *h[] = {"x-amz-rdma-protocol: hipobj-rc-v2", NULL};
  char v[64];
  for (int i = 0; i < 3; i++) {
    struct http_resp r;
    get(paths[i], (struct sreq){.method = "POST", .hdrs = h}, &r);
    cr_assert_eq(r.status, 501, "%s", paths[i]);
    cr_assert_str_eq(resp_hdr(&r, "X-Amz-Rdma-Protocol-Status", v, sizeof v),
                     "unsupported");
    cr_assert_str_eq(resp_hdr(&r, "Content-Length", v, sizeof v), "0");
    cr_assert_eq(r.len, 0);
    resp_free(&r);
  }
  /* Control requests must be signed like everything else. */
  struct http_resp r;
  get("/.hipobj-rc/prepare", (struct sreq){.method = "POST", .anonymous = 1},
      &r);
  expect_error(&r, 403, "AccessDenied");

  /* cuObject single-request mode: GET gets the data over HTTP + 501. */
  const char *tok[] = {"x-amz-rdma-token: " DC_TOKEN, NULL};
  get("/bkt/obj", (struct sreq){.hdrs = tok}, &r);
  cr_assert_eq(r.status, 200);
  cr_assert_str_eq(resp_hdr(&r, "x-amz-rdma-reply", v, sizeof v), "501");
  cr_assert_eq(r.len, 10);
  resp_free(&r);
  /* PUT with a token: 501 NotImplemented, and nothing stored. */
  get("/bkt/rdma-put",
      (struct sreq){
          .method = "PUT", .hdrs = tok, .payload_hash = "UNSIGNED-PAYLOAD"},
      &r);
  cr_assert_str_eq(resp_hdr(&r, "x-amz-rdma-reply", v, sizeof v), "501");
  expect_error(&r, 501, "NotImplemented");
  get("/bkt/rdma-put", (struct sreq){.method = "HEAD"}, &r);
  cr_assert_eq(r.status, 404);
  resp_free(&r);
  /* A malformed token: 400; an unsigned one: 403. */
  const char *bad[] = {"x-amz-rdma-token: 1234:abcd", NULL};
  get("/bkt/obj", (struct sreq){.hdrs = bad}, &r);
  expect_error(&r, 400, "InvalidArgument");
  get("/bkt/obj", (struct sreq){.unsigned_hdrs = tok}, &r);
  expect_error(&r, 403, "AccessDenied");
}

Test(raw, early_error_on_a_large_upload) {
  /* Refused before the body is read (wrong signature, missing bucket): the
   * client must still get the S3 error, not a reset connection. */
  size_t n = 8u << 20;
  char *big = malloc(n);
  fill_pattern(big, n, 1);
  struct hipobj_client *bad = mk_client(srv.url, T_AK, "wrong-secret", 1);
  struct hipobj_mem src = hipobj_mem_host(big, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.multipart_threshold = n;
  cr_assert_eq(hipobj_s3_put(bad, T_BUCKET, "big", &src, &po, NULL, err),
               HIPOBJ_E_ACCESS_DENIED, "%s", hipobj_error_message(err));
  cr_assert_str_eq(hipobj_error_s3_code(err), "SignatureDoesNotMatch");
  hipobj_client_free(bad);
  cr_assert_eq(hipobj_s3_put(cli, "nobucket", "big", &src, &po, NULL, err),
               HIPOBJ_E_NOT_FOUND, "%s", hipobj_error_message(err));
  cr_assert_str_eq(hipobj_error_s3_code(err), "NoSuchBucket");
  free(big);
}
