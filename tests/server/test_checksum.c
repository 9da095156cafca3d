/* test_checksum.c - hipobj-server's x-amz-checksum-* headers (S3 flexible
 * checksums: CRC32C, CRC32, CRC64NVME) at the HTTP level: PutObject and
 * UploadPart bodies checked and the value echoed, malformed values and
 * other algorithms refused, CRC32C and CRC32 multipart uploads (part rules,
 * Complete's part checksums, the composite checksum of the result,
 * re-uploaded parts, a restart). Trailers are in test_trailer.c. Expected
 * values come from the harness's bitwise CRCs, not from s3/checksum.c, so
 * the library's routines are checked on the way. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "src/base/buf.h"

#define PART (64u * 1024) /* the server runs with --min-part-size 64KiB */

static struct server_proc srv;
static const char *const srv_args[] = {"--min-part-size", "64KiB", NULL};

static void send_req(struct sreq q, const char *target, struct http_resp *r) {
  q.method = q.method ? q.method : "GET";
  q.target = target;
  cr_assert_eq(http_send(srv.url, &q, r), 0, "cannot connect");
}

static void setup(void) {
  srv_start(&srv, NULL, srv_args);
  struct http_resp r;
  send_req((struct sreq){.method = "PUT"}, "/" T_BUCKET, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
}

static void teardown(void) {
  srv_cleanup(&srv);
}

TestSuite(checksum, .init = setup, .fini = teardown, .timeout = 60);

/* "x-amz-checksum-crc32c: <value>" of data, in out. */
static const char *crc_header(const void *data, size_t n, char out[64]) {
  char b64[16];
  ref_b64(ref_crc32c(0, data, n), 4, b64);
  snprintf(out, 64, "x-amz-checksum-crc32c: %s", b64);
  return out;
}

/* ---- helpers ------------------------------------------------------------ */

static void expect_absent(const char *target) {
  struct http_resp r;
  send_req((struct sreq){.method = "HEAD"}, target, &r);
  cr_assert_eq(r.status, 404, "%s was stored", target);
  resp_free(&r);
}

static void put(const char *target, const char *hdr, const void *body,
                size_t len, struct http_resp *r) {
  const char *h[] = {hdr, NULL};
  send_req(
      (struct sreq){
          .method = "PUT", .hdrs = hdr ? h : NULL, .body = body, .len = len},
      target, r);
}

/* CreateMultipartUpload of key, with hdr (NULL: none); the upload id. The
 * answer must echo the algorithm hdr names, in upper case. */
static void create(const char *key, const char *hdr, char id[64]) {
  char t[256];
  snprintf(t, sizeof t, "/" T_BUCKET "/%s?uploads", key);
  const char *h[] = {hdr, NULL};
  struct http_resp r;
  send_req((struct sreq){.method = "POST", .hdrs = hdr ? h : NULL}, t, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  snprintf(id, 64, "%s", xml_text(&r, "UploadId"));
  char v[64], want[64] = "";
  const char *alg = hdr ? strchr(hdr, ' ') + 1 : "";
  for (size_t i = 0; alg[i] && i < 63; i++)
    want[i] = (char)toupper((unsigned char)alg[i]);
  resp_hdr(&r, "x-amz-checksum-algorithm", v, sizeof v);
  cr_assert_str_eq(v, want, "the algorithm echo");
  resp_free(&r);
}

static void upload_part(const char *key, const char *id, unsigned n,
                        const void *data, size_t len, int with_crc,
                        struct http_resp *r) {
  char t[256], h[64];
  snprintf(t, sizeof t, "/" T_BUCKET "/%s?partNumber=%u&uploadId=%s", key, n,
           id);
  put(t, with_crc ? crc_header(data, len, h) : NULL, data, len, r);
}

/* UploadPart that must succeed: its ETag in etag (the echo is checked). */
static void part_ok(const char *key, const char *id, unsigned n,
                    const void *data, size_t len, char etag[64]) {
  struct http_resp r;
  upload_part(key, id, n, data, len, 1, &r);
  cr_assert_eq(r.status, 200, "part %u: %s", n, r.body);
  char h[64], v[64];
  crc_header(data, len, h);
  cr_assert_str_eq(resp_hdr(&r, "x-amz-checksum-crc32c", v, sizeof v),
                   h + strlen("x-amz-checksum-crc32c: "));
  resp_hdr(&r, "ETag", etag, 64);
  resp_free(&r);
}

struct cpart {
  unsigned n;
  const char *etag;
  const char *crc;   /* NULL: no <ChecksumCRC32C> */
  const char *crc32; /* NULL: no <ChecksumCRC32> */
};

static void complete(const char *key, const char *id, const struct cpart *p,
                     size_t n, struct http_resp *r) {
  struct hbuf b = HBUF_INIT;
  hbuf_puts(&b, "<CompleteMultipartUpload>");
  for (size_t i = 0; i < n; i++) {
    hbuf_printf(&b, "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag>", p[i].n,
                p[i].etag);
    if (p[i].crc)
      hbuf_printf(&b, "<ChecksumCRC32C>%s</ChecksumCRC32C>", p[i].crc);
    if (p[i].crc32)
      hbuf_printf(&b, "<ChecksumCRC32>%s</ChecksumCRC32>", p[i].crc32);
    hbuf_puts(&b, "</Part>");
  }
  hbuf_puts(&b, "</CompleteMultipartUpload>");
  char t[256];
  snprintf(t, sizeof t, "/" T_BUCKET "/%s?uploadId=%s", key, id);
  send_req((struct sreq){.method = "POST", .body = b.data, .len = b.len}, t, r);
  hbuf_free(&b);
}

static void b64_of(const void *data, size_t len, char out[16]) {
  ref_b64(ref_crc32c(0, data, len), 4, out);
}

/* ---- PutObject ---------------------------------------------------------- */

Test(checksum, put_right_checksum_echoed_and_stored) {
  const char *body = "checked by CRC32C";
  char h[64], v[64];
  struct http_resp r;
  put("/bkt/ok", crc_header(body, strlen(body), h), body, strlen(body), &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_str_eq(resp_hdr(&r, "x-amz-checksum-crc32c", v, sizeof v),
                   h + strlen("x-amz-checksum-crc32c: "));
  resp_free(&r);
  send_req((struct sreq){0}, "/bkt/ok", &r);
  cr_assert_eq(r.status, 200);
  cr_assert_eq(r.len, strlen(body));
  cr_assert_eq(memcmp(r.body, body, r.len), 0);
  resp_free(&r);
  /* The known vector through the server: "123456789" -> 4waSgw==. */
  put("/bkt/vector", "x-amz-checksum-crc32c: 4waSgw==", "123456789", 9, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
  /* Without the header there is no echo (nothing was checked). */
  put("/bkt/plain", NULL, "x", 1, &r);
  cr_assert_eq(r.status, 200);
  cr_assert_str_eq(resp_hdr(&r, "x-amz-checksum-crc32c", v, sizeof v), "");
  resp_free(&r);
}

Test(checksum, put_wrong_checksum_is_bad_digest_and_not_stored) {
  const char *body = "checked by CRC32C";
  char h[64];
  struct http_resp r;
  crc_header("something else", 14, h);
  put("/bkt/wrong", h, body, strlen(body), &r);
  expect_s3_error(&r, 400, "BadDigest",
                  "The CRC32C you specified did not match the calculated "
                  "checksum.");
  expect_absent("/bkt/wrong");
  /* An unsigned payload: the CRC32C is then the only check, and it holds. */
  const char *hh[] = {h, NULL};
  send_req((struct sreq){.method = "PUT",
                         .hdrs = hh,
                         .body = body,
                         .len = strlen(body),
                         .payload_hash = "UNSIGNED-PAYLOAD"},
           "/bkt/wrong-unsigned", &r);
  expect_s3_error(&r, 400, "BadDigest", NULL);
  expect_absent("/bkt/wrong-unsigned");
}

Test(checksum, put_malformed_value_is_invalid_request) {
  static const char *const bad[] = {
      "x-amz-checksum-crc32c: abc",         /* too short */
      "x-amz-checksum-crc32c: 4waSgw=",     /* 7 characters */
      "x-amz-checksum-crc32c: 4waSgwAA",    /* no padding: 6 bytes */
      "x-amz-checksum-crc32c: 4waSgx==",    /* bits beyond the 4 bytes */
      "x-amz-checksum-crc32c: 4wa*gw==",    /* not base64 */
      "x-amz-checksum-crc32c: 4waSgw==4waS" /* too long */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct http_resp r;
    put("/bkt/malformed", bad[i], "123456789", 9, &r);
    cr_assert_eq(r.status, 400, "%s: %d", bad[i], r.status);
    expect_s3_error(&r, 400, "InvalidRequest",
                    "Value for x-amz-checksum-crc32c header is invalid.");
  }
  expect_absent("/bkt/malformed");
}

Test(checksum, other_algorithms_are_not_implemented) {
  static const struct {
    const char *hdr, *named;
  } cases[] = {
      {"x-amz-checksum-sha256: "
       "FeKw08M4keuw8e9gnsQZQgwg4yDOlMZfvIwzEkSOsiU=",
       "x-amz-checksum-sha256 was sent"},
      {"x-amz-checksum-sha1: AAAAAAAAAAAAAAAAAAAAAAAAAAA=",
       "x-amz-checksum-sha1"},
      {"x-amz-checksum-xxhash64: AAAAAAAAAAA=", "x-amz-checksum-xxhash64"},
      {"x-amz-trailer: x-amz-checksum-sha256",
       "x-amz-trailer: x-amz-checksum-sha256"},
      {"x-amz-sdk-checksum-algorithm: SHA256",
       "x-amz-sdk-checksum-algorithm: SHA256"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct http_resp r;
    put("/bkt/other", cases[i].hdr, "123456789", 9, &r);
    cr_assert_eq(r.status, 501, "%s: %d %s", cases[i].hdr, r.status, r.body);
    cr_assert_not_null(strstr(xml_text(&r, "Message"),
                              "checks only x-amz-checksum-crc32, -crc32c and "
                              "-crc64nvme"),
                       "%s", r.body);
    expect_s3_error(&r, 501, "NotImplemented", cases[i].named);
  }
  expect_absent("/bkt/other");
  /* The algorithm CRC32C (any case) without the value: nothing to check. */
  struct http_resp r;
  put("/bkt/other", "x-amz-sdk-checksum-algorithm: crc32c", "1", 1, &r);
  expect_s3_error(&r, 400, "InvalidRequest",
                  "no corresponding x-amz-checksum-*");
  expect_absent("/bkt/other");
}

/* ---- CRC32 and CRC64NVME headers ---------------------------------------- */

/* "x-amz-checksum-crc32: <value>" or "...-crc64nvme: <value>" of data. */
static const char *alg_header(const char *alg, const void *data, size_t n,
                              char out[80]) {
  char b64[16];
  if (!strcmp(alg, "crc64nvme"))
    ref_b64(ref_crc64nvme(0, data, n), 8, b64);
  else if (!strcmp(alg, "crc32"))
    ref_b64(ref_crc32(0, data, n), 4, b64);
  else
    ref_b64(ref_crc32c(0, data, n), 4, b64);
  snprintf(out, 80, "x-amz-checksum-%s: %s", alg, b64);
  return out;
}

Test(checksum, crc32_and_crc64nvme_headers_checked_and_echoed) {
  static const char *const algs[] = {"crc32", "crc64nvme"};
  char *data = malloc(100000);
  fill_pattern(data, 100000, 3);
  for (size_t a = 0; a < 2; a++) {
    char h[80], name[40], v[64], t[64];
    alg_header(algs[a], data, 100000, h);
    snprintf(name, sizeof name, "x-amz-checksum-%s", algs[a]);
    snprintf(t, sizeof t, "/bkt/%s", algs[a]);
    struct http_resp r;
    put(t, h, data, 100000, &r);
    cr_assert_eq(r.status, 200, "%s: %s", h, r.body);
    cr_assert_str_eq(resp_hdr(&r, name, v, sizeof v), h + strlen(name) + 2);
    resp_free(&r);
    send_req((struct sreq){0}, t, &r);
    cr_assert_eq(r.len, 100000);
    cr_assert_eq(memcmp(r.body, data, r.len), 0);
    resp_free(&r);
    /* The value of other bytes: BadDigest naming the algorithm. */
    alg_header(algs[a], data, 99999, h);
    snprintf(t, sizeof t, "/bkt/%s-bad", algs[a]);
    put(t, h, data, 100000, &r);
    expect_s3_error(&r, 400, "BadDigest",
                    a ? "The CRC64NVME you specified did not match"
                      : "The CRC32 you specified did not match");
    expect_absent(t);
  }
  /* The catalogue's check values through the server. */
  struct http_resp r;
  put("/bkt/v32", "x-amz-checksum-crc32: y/Q5Jg==", "123456789", 9, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
  put("/bkt/v64", "x-amz-checksum-crc64nvme: rosUhgp5mIg=", "123456789", 9, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
  /* CRC32C's value is not CRC32's. */
  put("/bkt/v32c", "x-amz-checksum-crc32: 4waSgw==", "123456789", 9, &r);
  expect_s3_error(&r, 400, "BadDigest", "CRC32 you");
  put("/bkt/v64", "x-amz-checksum-crc64nvme: y/Q5Jg==", "123456789", 9, &r);
  expect_s3_error(&r, 400, "InvalidRequest",
                  "Value for x-amz-checksum-crc64nvme header is invalid.");
  free(data);
}

Test(checksum, one_checksum_per_request) {
  struct http_resp r;
  const char *two[] = {"x-amz-checksum-crc32: y/Q5Jg==",
                       "x-amz-checksum-crc32c: 4waSgw==", NULL};
  send_req(
      (struct sreq){
          .method = "PUT", .hdrs = two, .body = "123456789", .len = 9},
      "/bkt/two", &r);
  expect_s3_error(&r, 400, "InvalidRequest", "Multiple checksum Types");
  /* The algorithm named must be the one sent. */
  const char *other[] = {"x-amz-sdk-checksum-algorithm: CRC32C",
                         "x-amz-checksum-crc32: y/Q5Jg==", NULL};
  send_req(
      (struct sreq){
          .method = "PUT", .hdrs = other, .body = "123456789", .len = 9},
      "/bkt/two", &r);
  expect_s3_error(&r, 400, "InvalidRequest", "does not match");
  /* One trailer, named alone. */
  put("/bkt/two", "x-amz-trailer: x-amz-checksum-crc32, x-amz-checksum-crc32c",
      "123456789", 9, &r);
  expect_s3_error(&r, 400, "InvalidRequest", "must name one x-amz-checksum-*");
  /* A trailer needs a payload that can carry one. */
  put("/bkt/two", "x-amz-trailer: x-amz-checksum-crc32", "123456789", 9, &r);
  expect_s3_error(&r, 400, "InvalidRequest",
                  "x-amz-trailer needs an aws-chunked");
  expect_absent("/bkt/two");
}

/* ---- CreateMultipartUpload and UploadPart ---------------------------------
 */

Test(checksum, create_with_crc32c_and_part_rules) {
  char crc_id[64], plain_id[64];
  create("m", "x-amz-checksum-algorithm: crc32c", crc_id);
  create("m", NULL, plain_id);
  struct http_resp r;
  upload_part("m", crc_id, 1, "abc", 3, 0, &r);
  expect_s3_error(&r, 400, "InvalidRequest",
                  "Checksum Type mismatch occurred, expected checksum Type: "
                  "crc32c, actual checksum Type: null");
  upload_part("m", plain_id, 1, "abc", 3, 1, &r);
  expect_s3_error(&r, 400, "InvalidRequest",
                  "Checksum Type mismatch occurred, expected checksum Type: "
                  "null, actual checksum Type: crc32c");
  /* A wrong value on a part: BadDigest, and no part recorded. */
  char t[256];
  snprintf(t, sizeof t, "/bkt/m?partNumber=1&uploadId=%s", crc_id);
  put(t, "x-amz-checksum-crc32c: 4waSgw==", "abc", 3, &r);
  expect_s3_error(&r, 400, "BadDigest", NULL);
  snprintf(t, sizeof t, "/bkt/m?uploadId=%s", crc_id);
  send_req((struct sreq){0}, t, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_str_eq(xml_text(&r, "ChecksumAlgorithm"), "CRC32C");
  cr_assert_null(strstr(r.body, "<Part>"), "%s", r.body);
  resp_free(&r);
  /* Other algorithms and FULL_OBJECT are refused at creation. */
  const char *sha[] = {"x-amz-checksum-algorithm: SHA256", NULL};
  send_req((struct sreq){.method = "POST", .hdrs = sha}, "/bkt/m?uploads", &r);
  expect_s3_error(&r, 501, "NotImplemented",
                  "x-amz-checksum-algorithm: SHA256");
  const char *full[] = {"x-amz-checksum-algorithm: CRC32C",
                        "x-amz-checksum-type: FULL_OBJECT", NULL};
  send_req((struct sreq){.method = "POST", .hdrs = full}, "/bkt/m?uploads", &r);
  expect_s3_error(&r, 501, "NotImplemented", "FULL_OBJECT");
  const char *comp[] = {"x-amz-checksum-algorithm: CRC32C",
                        "x-amz-checksum-type: COMPOSITE", NULL};
  send_req((struct sreq){.method = "POST", .hdrs = comp}, "/bkt/m?uploads", &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
}

/* ---- CompleteMultipartUpload -------------------------------------------- */

/* Two parts of a CRC32C upload of key; their ETags and CRC32Cs. */
static void two_parts(const char *key, char id[64], char *data,
                      char etag[2][64], char crc[2][16]) {
  create(key, "x-amz-checksum-algorithm: CRC32C", id);
  fill_pattern(data, PART + 100, 7);
  part_ok(key, id, 1, data, PART, etag[0]);
  part_ok(key, id, 2, data + PART, 100, etag[1]);
  b64_of(data, PART, crc[0]);
  b64_of(data + PART, 100, crc[1]);
}

Test(checksum, complete_needs_every_part_checksum) {
  char id[64], etag[2][64], crc[2][16];
  char *data = malloc(PART + 100);
  two_parts("c", id, data, etag, crc);
  struct http_resp r;
  struct cpart missing[] = {{1, etag[0], crc[0]}, {2, etag[1], NULL}};
  complete("c", id, missing, 2, &r);
  expect_s3_error(
      &r, 400, "InvalidRequest",
      "The upload was created using a crc32c checksum. The complete "
      "request must include the checksum for each part. It was "
      "missing for part 2 in the request.");
  struct cpart wrong[] = {{1, etag[0], crc[1]}, {2, etag[1], crc[1]}};
  complete("c", id, wrong, 2, &r);
  expect_s3_error(&r, 400, "InvalidPart", "(part 1)");
  struct cpart bad[] = {{1, etag[0], "not-b64!"}, {2, etag[1], crc[1]}};
  complete("c", id, bad, 2, &r);
  expect_s3_error(&r, 400, "MalformedXML", "ChecksumCRC32C");
  /* Another algorithm's part checksum would go unchecked: refused. */
  char body[512], t[256];
  snprintf(body, sizeof body,
           "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>"
           "<ETag>%s</ETag><ChecksumCRC32C>%s</ChecksumCRC32C>"
           "<ChecksumSHA256>AAAA</ChecksumSHA256></Part>"
           "</CompleteMultipartUpload>",
           etag[0], crc[0]);
  snprintf(t, sizeof t, "/bkt/c?uploadId=%s", id);
  send_req((struct sreq){.method = "POST", .body = body, .len = strlen(body)},
           t, &r);
  expect_s3_error(&r, 400, "MalformedXML",
                  "ChecksumSHA256&gt; is not supported");
  expect_absent("/bkt/c");
  /* The upload is intact: the right list completes it. */
  struct cpart right[] = {{1, etag[0], crc[0]}, {2, etag[1], crc[1]}};
  complete("c", id, right, 2, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
  free(data);
}

Test(checksum, complete_of_plain_upload_refuses_part_checksums) {
  char id[64], etag[64];
  create("p", NULL, id);
  struct http_resp r;
  upload_part("p", id, 1, "abc", 3, 0, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_hdr(&r, "ETag", etag, sizeof etag);
  resp_free(&r);
  char crc[16];
  b64_of("abc", 3, crc);
  struct cpart with[] = {{1, etag, crc}};
  complete("p", id, with, 1, &r);
  expect_s3_error(&r, 400, "InvalidRequest",
                  "not created with a checksum algorithm");
  struct cpart none[] = {{1, etag, NULL}};
  complete("p", id, none, 1, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_null(strstr(r.body, "Checksum"), "%s", r.body);
  resp_free(&r);
}

Test(checksum, composite_checksum_of_three_parts) {
  size_t sizes[3] = {PART, PART + 3, 777}; /* the last one short */
  size_t total = sizes[0] + sizes[1] + sizes[2];
  char *data = malloc(total);
  fill_pattern(data, total, 11);
  char id[64], etag[3][64], crc[3][16];
  create("three", "x-amz-checksum-algorithm: CRC32C", id);
  uint32_t composite = 0;
  size_t off = 0;
  for (unsigned i = 0; i < 3; i++) {
    part_ok("three", id, i + 1, data + off, sizes[i], etag[i]);
    uint32_t c = ref_crc32c(0, data + off, sizes[i]);
    ref_b64(c, 4, crc[i]);
    const uint8_t be[4] = {(uint8_t)(c >> 24), (uint8_t)(c >> 16),
                           (uint8_t)(c >> 8), (uint8_t)c};
    composite = ref_crc32c(composite, be, 4);
    off += sizes[i];
  }
  char want[32];
  ref_b64(composite, 4, want);
  strcat(want, "-3");
  /* ListParts shows each part's checksum. */
  char t[256];
  snprintf(t, sizeof t, "/bkt/three?uploadId=%s", id);
  struct http_resp r;
  send_req((struct sreq){0}, t, &r);
  cr_assert_eq(r.status, 200);
  for (unsigned i = 0; i < 3; i++) {
    char el[96];
    snprintf(el, sizeof el, "<ChecksumCRC32C>%s</ChecksumCRC32C>", crc[i]);
    cr_assert_not_null(strstr(r.body, el), "part %u: %s", i + 1, r.body);
  }
  resp_free(&r);
  struct cpart list[] = {
      {1, etag[0], crc[0]}, {2, etag[1], crc[1]}, {3, etag[2], crc[2]}};
  complete("three", id, list, 3, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_str_eq(xml_text(&r, "ChecksumCRC32C"), want);
  cr_assert_str_eq(xml_text(&r, "ChecksumType"), "COMPOSITE");
  resp_free(&r);
  /* A retried Complete (answer lost) gets the same answer. */
  complete("three", id, list, 3, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_str_eq(xml_text(&r, "ChecksumCRC32C"), want);
  resp_free(&r);
  send_req((struct sreq){0}, "/bkt/three", &r);
  cr_assert_eq(r.len, total);
  cr_assert_eq(memcmp(r.body, data, total), 0);
  resp_free(&r);
  free(data);
}

Test(checksum, reuploaded_part_and_restart_keep_the_new_checksum) {
  char *a = malloc(PART), *b = malloc(PART);
  fill_pattern(a, PART, 1);
  fill_pattern(b, PART, 2);
  char id[64], etag_a[64], etag_b[64], etag2[64], crc_a[16], crc_b[16],
      crc2[16];
  create("re", "x-amz-checksum-algorithm: CRC32C", id);
  part_ok("re", id, 1, a, PART, etag_a);
  part_ok("re", id, 1, b, PART, etag_b); /* replaces part 1 */
  part_ok("re", id, 2, "tail", 4, etag2);
  b64_of(a, PART, crc_a);
  b64_of(b, PART, crc_b);
  b64_of("tail", 4, crc2);
  cr_assert_str_neq(crc_a, crc_b);

  /* A new server on the same root: the algorithm and the checksums are on
   * disk with the upload. */
  srv_signal(&srv, SIGTERM);
  srv_start(&srv, srv.root, srv_args);
  struct http_resp r;
  upload_part("re", id, 3, "x", 1, 0, &r);
  expect_s3_error(&r, 400, "InvalidRequest", "expected checksum Type: crc32c");
  char t[256], el[96];
  snprintf(t, sizeof t, "/bkt/re?uploadId=%s", id);
  send_req((struct sreq){0}, t, &r);
  snprintf(el, sizeof el, "<ChecksumCRC32C>%s</ChecksumCRC32C>", crc_b);
  cr_assert_not_null(strstr(r.body, el), "%s", r.body);
  cr_assert_null(strstr(r.body, crc_a), "%s", r.body);
  resp_free(&r);

  struct cpart old[] = {{1, etag_b, crc_a}, {2, etag2, crc2}};
  complete("re", id, old, 2, &r);
  expect_s3_error(&r, 400, "InvalidPart", "(part 1)");
  struct cpart cur[] = {{1, etag_b, crc_b}, {2, etag2, crc2}};
  complete("re", id, cur, 2, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
  send_req((struct sreq){0}, "/bkt/re", &r);
  cr_assert_eq(r.len, PART + 4);
  cr_assert_eq(memcmp(r.body, b, PART), 0);
  resp_free(&r);
  free(a);
  free(b);
}

/* ---- CRC32 and CRC64NVME multipart uploads ------------------------------ */

/* A part of a CRC32 upload, checked by x-amz-checksum-crc32: its ETag. */
static void crc32_part(const char *key, const char *id, unsigned n,
                       const void *data, size_t len, char etag[64]) {
  char t[256], h[80], v[64];
  snprintf(t, sizeof t, "/" T_BUCKET "/%s?partNumber=%u&uploadId=%s", key, n,
           id);
  struct http_resp r;
  put(t, alg_header("crc32", data, len, h), data, len, &r);
  cr_assert_eq(r.status, 200, "part %u: %s", n, r.body);
  cr_assert_str_eq(resp_hdr(&r, "x-amz-checksum-crc32", v, sizeof v),
                   h + strlen("x-amz-checksum-crc32: "));
  resp_hdr(&r, "ETag", etag, 64);
  resp_free(&r);
}

Test(checksum, crc32_multipart_composite) {
  size_t sizes[3] = {PART, PART + 5, 1000};
  size_t total = sizes[0] + sizes[1] + sizes[2];
  char *data = malloc(total);
  fill_pattern(data, total, 13);
  char id[64], etag[3][64], crc[3][16];
  create("c32", "x-amz-checksum-algorithm: CRC32", id);
  struct http_resp r;
  upload_part("c32", id, 1, data, sizes[0], 1, &r); /* a CRC32C part */
  expect_s3_error(
      &r, 400, "InvalidRequest",
      "expected checksum Type: crc32, actual checksum Type: crc32c");
  uint32_t composite = 0;
  size_t off = 0;
  for (unsigned i = 0; i < 3; i++) {
    crc32_part("c32", id, i + 1, data + off, sizes[i], etag[i]);
    uint32_t c = ref_crc32(0, data + off, sizes[i]);
    ref_b64(c, 4, crc[i]);
    const uint8_t be[4] = {(uint8_t)(c >> 24), (uint8_t)(c >> 16),
                           (uint8_t)(c >> 8), (uint8_t)c};
    composite = ref_crc32(composite, be, 4);
    off += sizes[i];
  }
  char want[32];
  ref_b64(composite, 4, want);
  strcat(want, "-3");
  char t[256];
  snprintf(t, sizeof t, "/bkt/c32?uploadId=%s", id);
  send_req((struct sreq){0}, t, &r);
  cr_assert_str_eq(xml_text(&r, "ChecksumAlgorithm"), "CRC32", "%s", r.body);
  for (unsigned i = 0; i < 3; i++) {
    char el[96];
    snprintf(el, sizeof el, "<ChecksumCRC32>%s</ChecksumCRC32>", crc[i]);
    cr_assert_not_null(strstr(r.body, el), "part %u: %s", i + 1, r.body);
  }
  cr_assert_null(strstr(r.body, "ChecksumCRC32C"), "%s", r.body);
  resp_free(&r);
  /* CRC32C elements are not CRC32 ones; a wrong CRC32 is not the part. */
  struct cpart c32c[] = {{1, etag[0], crc[0], NULL},
                         {2, etag[1], crc[1], NULL},
                         {3, etag[2], crc[2], NULL}};
  complete("c32", id, c32c, 3, &r);
  expect_s3_error(&r, 400, "InvalidRequest",
                  "created using a crc32 checksum. The complete request must "
                  "include the checksum for each part. It was missing for part "
                  "1");
  struct cpart both[] = {{1, etag[0], crc[0], crc[0]},
                         {2, etag[1], NULL, crc[1]},
                         {3, etag[2], NULL, crc[2]}};
  complete("c32", id, both, 3, &r);
  expect_s3_error(&r, 400, "InvalidRequest", "carries ChecksumCRC32C");
  struct cpart wrong[] = {{1, etag[0], NULL, crc[0]},
                          {2, etag[1], NULL, crc[0]},
                          {3, etag[2], NULL, crc[2]}};
  complete("c32", id, wrong, 3, &r);
  expect_s3_error(&r, 400, "InvalidPart", "(part 2)");
  struct cpart right[] = {{1, etag[0], NULL, crc[0]},
                          {2, etag[1], NULL, crc[1]},
                          {3, etag[2], NULL, crc[2]}};
  for (int attempt = 0; attempt < 2; attempt++) { /* a retry: same answer */
    complete("c32", id, right, 3, &r);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(xml_text(&r, "ChecksumCRC32"), want, "%s", r.body);
    cr_assert_str_eq(xml_text(&r, "ChecksumType"), "COMPOSITE");
    cr_assert_null(strstr(r.body, "ChecksumCRC32C"), "%s", r.body);
    resp_free(&r);
  }
  send_req((struct sreq){0}, "/bkt/c32", &r);
  cr_assert_eq(r.len, total);
  cr_assert_eq(memcmp(r.body, data, total), 0);
  resp_free(&r);
  free(data);
}

Test(checksum, crc64nvme_multipart_is_not_implemented) {
  struct http_resp r;
  const char *h[] = {"x-amz-checksum-algorithm: CRC64NVME", NULL};
  send_req((struct sreq){.method = "POST", .hdrs = h}, "/bkt/m64?uploads", &r);
  expect_s3_error(&r, 501, "NotImplemented", "FULL_OBJECT");
  /* Its parts cannot join an upload of another type either. */
  char id[64], t[256], hdr[80];
  create("m64", NULL, id);
  snprintf(t, sizeof t, "/bkt/m64?partNumber=1&uploadId=%s", id);
  put(t, alg_header("crc64nvme", "abc", 3, hdr), "abc", 3, &r);
  expect_s3_error(&r, 400, "InvalidRequest",
                  "expected checksum Type: null, actual checksum Type: "
                  "crc64nvme");
}
