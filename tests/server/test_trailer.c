/* test_trailer.c - hipobj-server's aws-chunked checksum trailers, as
 * recent AWS SDKs and awscli send them (x-amz-trailer:
 * x-amz-checksum-<alg>, the value after the final chunk):
 * STREAMING-UNSIGNED-PAYLOAD-TRAILER with CRC32, CRC32C and CRC64NVME
 * (checked, echoed; a wrong value is BadDigest; a missing, malformed,
 * undeclared or other trailer is 400; nothing stored on failure), trailers
 * on UploadPart, and STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER with its
 * x-amz-trailer-signature (a bad one is 403).
 *
 * Expected CRCs come from the harness's bitwise implementations, and chunk
 * and trailer signatures from a SigV4 computed here with OpenSSL's HMAC
 * and SHA-256 (not s3/sigv4.c, which the server uses), itself checked
 * first against AWS's published trailer example. */
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "src/base/buf.h"

#define PART (64u * 1024) /* the server runs with --min-part-size 64KiB */
#define UNSIGNED_TRAILER "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
#define SIGNED_TRAILER "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"

static struct server_proc srv;
static const char *const srv_args[] = {"--min-part-size", "64KiB", NULL};

static void setup(void) {
  srv_start(&srv, NULL, srv_args);
  struct http_resp r;
  cr_assert_eq(
      http_send(srv.url, &(struct sreq){.method = "PUT", .target = "/bkt"}, &r),
      0);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
}

static void teardown(void) {
  srv_cleanup(&srv);
}

TestSuite(trailer, .init = setup, .fini = teardown, .timeout = 60);

/* ---- SigV4 for chunks and trailers, independently ----------------------- */

static void to_hex(const uint8_t *d, size_t n, char *out) {
  for (size_t i = 0; i < n; i++)
    sprintf(out + 2 * i, "%02x", d[i]);
}

static void hmac(const uint8_t *key, size_t klen, const char *msg,
                 uint8_t out[32]) {
  HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg),
       out, NULL);
}

static void sha_hex(const void *data, size_t n, char out[65]) {
  uint8_t d[32];
  SHA256(data, n, d);
  to_hex(d, 32, out);
}

/* HMAC(signing key of sk for amz's day in us-east-1/s3, sts), in hex. */
static void sign(const char *sk, const char *amz, const char *sts,
                 char out[65]) {
  char k0[128], day[9];
  uint8_t k[32];
  snprintf(k0, sizeof k0, "AWS4%s", sk);
  snprintf(day, sizeof day, "%.8s", amz);
  hmac((const uint8_t *)k0, strlen(k0), day, k);
  hmac(k, 32, T_REGION, k);
  hmac(k, 32, "s3", k);
  hmac(k, 32, "aws4_request", k);
  uint8_t sig[32];
  hmac(k, 32, sts, sig);
  to_hex(sig, 32, out);
}

static void chunk_signature(const char *sk, const char *amz, const char *prev,
                            const void *data, size_t n, char out[65]) {
  char empty[65], h[65], sts[512];
  sha_hex("", 0, empty);
  sha_hex(data, n, h);
  snprintf(sts, sizeof sts,
           "AWS4-HMAC-SHA256-PAYLOAD\n%s\n%.8s/%s/s3/aws4_request\n%s\n%s\n%s",
           amz, amz, T_REGION, prev, empty, h);
  sign(sk, amz, sts, out);
}

/* canonical: the trailer lines as "name:value\n", the signed form. */
static void trailer_signature(const char *sk, const char *amz, const char *prev,
                              const char *canonical, char out[65]) {
  char h[65], sts[512];
  sha_hex(canonical, strlen(canonical), h);
  snprintf(sts, sizeof sts,
           "AWS4-HMAC-SHA256-TRAILER\n%s\n%.8s/%s/s3/aws4_request\n%s\n%s", amz,
           amz, T_REGION, prev, h);
  sign(sk, amz, sts, out);
}

Test(trailer, independent_signer_matches_aws_example) {
  /* The S3 API reference, "Signature calculations for trailing headers":
   * 66560 bytes of 'a' in chunks of 64 KiB and 1 KiB, the seed of its
   * request, and x-amz-checksum-crc32c:sOO8/Q== in the trailer. */
  const char *sk = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  const char *amz = "20130524T000000Z";
  char *a = malloc(66560), sig1[65], sig2[65], fin[65], tr[65], crc[16];
  memset(a, 'a', 66560);
  chunk_signature(sk, amz,
                  "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b745"
                  "44bfeb8e",
                  a, 65536, sig1);
  cr_assert_str_eq(sig1, "b474d8862b1487a5145d686f57f013e54db672cee1c953b3010"
                         "fb58501ef5aa2");
  chunk_signature(sk, amz, sig1, a, 1024, sig2);
  cr_assert_str_eq(sig2, "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d"
                         "40a8cae51e5c7");
  chunk_signature(sk, amz, sig2, "", 0, fin);
  cr_assert_str_eq(fin, "2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5"
                        "c9f85863f992");
  ref_b64(ref_crc32c(0, a, 66560), 4, crc);
  cr_assert_str_eq(crc, "sOO8/Q==");
  trailer_signature(sk, amz, fin, "x-amz-checksum-crc32c:sOO8/Q==\n", tr);
  cr_assert_str_eq(tr, "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829"
                       "ca17fe2e435");
  free(a);
}

/* ---- aws-chunked requests ----------------------------------------------- */

struct upload {
  const char *mode;      /* UNSIGNED_TRAILER or SIGNED_TRAILER */
  const char *declared;  /* x-amz-trailer, NULL: not sent */
  const char *trailer;   /* canonical "name:value\n" lines, NULL: none */
  int sig;               /* signed: 0 right, 1 damaged, 2 left out */
  const char *signed_as; /* signed over these lines instead, NULL: none */
};

/* The body: data in 64 KiB chunks (signed ones chained on seed), the final
 * empty chunk, the trailer lines (CRLF on the wire) and, signed, the
 * x-amz-trailer-signature over them. */
static char *body_of(const struct upload *u, const void *data, size_t n,
                     const char *amz, const char *seed, size_t *len) {
  int is_signed = !strcmp(u->mode, SIGNED_TRAILER);
  struct hbuf b = HBUF_INIT;
  char prev[65], sig[65];
  snprintf(prev, sizeof prev, "%s", seed);
  for (size_t off = 0;;) {
    size_t k = n - off < 65536 ? n - off : 65536;
    hbuf_printf(&b, "%zx", k);
    if (is_signed) {
      chunk_signature(T_SK, amz, prev, (const char *)data + off, k, sig);
      hbuf_printf(&b, ";chunk-signature=%s", sig);
      memcpy(prev, sig, sizeof prev);
    }
    hbuf_puts(&b, "\r\n");
    if (k == 0)
      break;
    hbuf_append(&b, (const char *)data + off, k);
    hbuf_puts(&b, "\r\n");
    off += k;
  }
  for (const char *t = u->trailer ? u->trailer : ""; *t; t++)
    hbuf_puts(&b, *t == '\n' ? "\r\n" : (char[]){*t, '\0'});
  if (is_signed && u->sig != 2) {
    trailer_signature(T_SK, amz, prev,
                      u->signed_as ? u->signed_as
                      : u->trailer ? u->trailer
                                   : "",
                      sig);
    if (u->sig == 1)
      sig[10] = sig[10] == '0' ? '1' : '0';
    hbuf_printf(&b, "x-amz-trailer-signature:%s\r\n", sig);
  }
  hbuf_puts(&b, "\r\n");
  *len = b.len;
  return hbuf_steal(&b);
}

static void send_upload(const char *target, const struct upload *u,
                        const void *data, size_t n, struct http_resp *r) {
  time_t now = time(NULL);
  char dl[64], tr[128], authz[512], seed[65], amz[17], date[40], a[600],
      clen[64], pay[96];
  snprintf(dl, sizeof dl, "x-amz-decoded-content-length: %zu", n);
  snprintf(tr, sizeof tr, "x-amz-trailer: %s", u->declared ? u->declared : "");
  const char *hdrs[] = {"content-encoding: aws-chunked", dl,
                        u->declared ? tr : NULL, NULL};
  sign_headers(srv.url, "PUT", target, hdrs, u->mode, now, authz, sizeof authz,
               seed);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(amz, sizeof amz, "%Y%m%dT%H%M%SZ", &tm);
  size_t blen;
  char *body = body_of(u, data, n, amz, seed, &blen);
  snprintf(date, sizeof date, "x-amz-date: %s", amz);
  snprintf(a, sizeof a, "Authorization: %s", authz);
  snprintf(clen, sizeof clen, "Content-Length: %zu", blen);
  snprintf(pay, sizeof pay, "x-amz-content-sha256: %s", u->mode);
  const char *all[] = {hdrs[0], dl, date, a, clen, pay, u->declared ? tr : NULL,
                       NULL};
  cr_assert_eq(http_send(srv.url,
                         &(struct sreq){.method = "PUT",
                                        .target = target,
                                        .anonymous = 1,
                                        .unsigned_hdrs = all,
                                        .body = body,
                                        .len = blen},
                         r),
               0, "cannot connect");
  free(body);
}

static void get(const char *target, const char *method, struct http_resp *r) {
  cr_assert_eq(
      http_send(srv.url, &(struct sreq){.method = method, .target = target}, r),
      0);
}

static void expect_absent(const char *target) {
  struct http_resp r;
  get(target, "HEAD", &r);
  cr_assert_eq(r.status, 404, "%s was stored", target);
  resp_free(&r);
}

static void expect_stored(const char *target, const void *data, size_t n) {
  struct http_resp r;
  get(target, "GET", &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_eq(r.len, n);
  cr_assert_eq(memcmp(r.body, data, n), 0);
  resp_free(&r);
}

/* The checksum of data by alg ("crc32", "crc32c", "crc64nvme"), base64. */
static void value_of(const char *alg, const void *data, size_t n,
                     char out[16]) {
  if (!strcmp(alg, "crc64nvme"))
    ref_b64(ref_crc64nvme(0, data, n), 8, out);
  else if (!strcmp(alg, "crc32"))
    ref_b64(ref_crc32(0, data, n), 4, out);
  else
    ref_b64(ref_crc32c(0, data, n), 4, out);
}

static const char *const algs[] = {"crc32", "crc32c", "crc64nvme"};
#define N_ALGS (sizeof algs / sizeof *algs)

/* ---- unsigned trailers -------------------------------------------------- */

Test(trailer, unsigned_trailer_checked_and_echoed) {
  size_t n = 150000;
  char *data = malloc(n);
  fill_pattern(data, n, 21);
  for (size_t a = 0; a < N_ALGS; a++) {
    for (size_t len = 0; len <= n; len += n) { /* empty, then 3 chunks */
      char name[40], b64[16], line[80], t[64], v[64];
      snprintf(name, sizeof name, "x-amz-checksum-%s", algs[a]);
      value_of(algs[a], data, len, b64);
      snprintf(line, sizeof line, "%s:%s\n", name, b64);
      snprintf(t, sizeof t, "/bkt/%s-%zu", algs[a], len);
      struct http_resp r;
      send_upload(t, &(struct upload){UNSIGNED_TRAILER, name, line, 0}, data,
                  len, &r);
      cr_assert_eq(r.status, 200, "%s: %s", t, r.body);
      cr_assert_str_eq(resp_hdr(&r, name, v, sizeof v), b64, "%s", t);
      resp_free(&r);
      expect_stored(t, data, len);
    }
  }
  free(data);
}

Test(trailer, unsigned_trailer_wrong_value_is_bad_digest) {
  static const char *const names[] = {"CRC32", "CRC32C", "CRC64NVME"};
  size_t n = 70000;
  char *data = malloc(n);
  fill_pattern(data, n, 22);
  for (size_t a = 0; a < N_ALGS; a++) {
    char name[40], b64[16], line[80], t[64], msg[80];
    snprintf(name, sizeof name, "x-amz-checksum-%s", algs[a]);
    value_of(algs[a], data, n - 1, b64); /* of other bytes */
    snprintf(line, sizeof line, "%s:%s\n", name, b64);
    snprintf(t, sizeof t, "/bkt/bad-%s", algs[a]);
    struct http_resp r;
    send_upload(t, &(struct upload){UNSIGNED_TRAILER, name, line, 0}, data, n,
                &r);
    snprintf(msg, sizeof msg, "The %s you specified did not match", names[a]);
    expect_s3_error(&r, 400, "BadDigest", msg);
    expect_absent(t);
  }
  free(data);
}

Test(trailer, missing_malformed_or_other_trailer_is_400) {
  const char *data = "trailer checked";
  size_t n = strlen(data);
  char crc32[16], crc32c[16], other[80], right[80];
  value_of("crc32", data, n, crc32);
  value_of("crc32c", data, n, crc32c);
  snprintf(right, sizeof right, "x-amz-checksum-crc32:%s\n", crc32);
  snprintf(other, sizeof other, "x-amz-checksum-crc32c:%s\n", crc32c);
  char twice[160];
  snprintf(twice, sizeof twice, "%s%s", right, right);
  const char *decl = "x-amz-checksum-crc32";
  static const struct {
    int declared;
    int line; /* 0 none, 1 other, 2 twice, 3 malformed, 4 no colon */
    const char *code, *msg;
  } cases[] = {
      {1, 0, "MalformedTrailerError",
       "x-amz-checksum-crc32 trailer that "
       "x-amz-trailer declared is missing"},
      {1, 1, "MalformedTrailerError",
       "x-amz-trailer declared x-amz-checksum-crc32, the trailer has "
       "x-amz-checksum-crc32c"},
      {0, 1, "MalformedTrailerError",
       "x-amz-trailer did not declare x-amz-checksum-crc32c"},
      {1, 2, "MalformedTrailerError", "came twice"},
      {1, 3, "InvalidRequest",
       "Value for x-amz-checksum-crc32 trailing header is invalid."},
      {1, 4, "MalformedTrailerError", "without a colon"},
  };
  const char *lines[] = {NULL, other, twice, "x-amz-checksum-crc32:nope\n",
                         "x-amz-checksum-crc32\n"};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct http_resp r;
    send_upload("/bkt/t",
                &(struct upload){UNSIGNED_TRAILER,
                                 cases[i].declared ? decl : NULL,
                                 lines[cases[i].line], 0},
                data, n, &r);
    expect_s3_error(&r, 400, cases[i].code, cases[i].msg);
    expect_absent("/bkt/t");
  }
  /* The same upload with its declared trailer goes through. */
  struct http_resp r;
  send_upload("/bkt/t", &(struct upload){UNSIGNED_TRAILER, decl, right, 0},
              data, n, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
  /* A trailer signature cannot stand in an unsigned trailer. */
  char with_sig[256];
  snprintf(with_sig, sizeof with_sig, "%sx-amz-trailer-signature:%064d\n",
           right, 0);
  send_upload("/bkt/t2", &(struct upload){UNSIGNED_TRAILER, decl, with_sig, 0},
              data, n, &r);
  expect_s3_error(&r, 400, "MalformedTrailerError", "unsigned trailer");
  expect_absent("/bkt/t2");
}

Test(trailer, upload_parts_with_trailers_composite) {
  size_t total = PART + 100;
  char *data = malloc(total);
  fill_pattern(data, total, 23);
  const char *h[] = {"x-amz-checksum-algorithm: CRC32", NULL};
  struct http_resp r;
  cr_assert_eq(http_send(srv.url,
                         &(struct sreq){.method = "POST",
                                        .target = "/bkt/mp?uploads",
                                        .hdrs = h},
                         &r),
               0);
  cr_assert_eq(r.status, 200, "%s", r.body);
  char id[64], t[256], etag[2][64], crc[2][16], line[80], body[512];
  snprintf(id, sizeof id, "%s", xml_text(&r, "UploadId"));
  resp_free(&r);
  /* A CRC32C trailer on a CRC32 upload: refused before the body. */
  snprintf(t, sizeof t, "/bkt/mp?partNumber=1&uploadId=%s", id);
  send_upload(t,
              &(struct upload){UNSIGNED_TRAILER, "x-amz-checksum-crc32c",
                               "x-amz-checksum-crc32c:AAAAAA==\n", 0},
              data, PART, &r);
  expect_s3_error(&r, 400, "InvalidRequest", "expected checksum Type: crc32");
  uint32_t composite = 0;
  size_t sizes[2] = {PART, 100};
  for (unsigned i = 0; i < 2; i++) {
    const char *p = data + i * PART;
    uint32_t c = ref_crc32(0, p, sizes[i]);
    ref_b64(c, 4, crc[i]);
    const uint8_t be[4] = {(uint8_t)(c >> 24), (uint8_t)(c >> 16),
                           (uint8_t)(c >> 8), (uint8_t)c};
    composite = ref_crc32(composite, be, 4);
    snprintf(t, sizeof t, "/bkt/mp?partNumber=%u&uploadId=%s", i + 1, id);
    snprintf(line, sizeof line, "x-amz-checksum-crc32:%s\n", crc[i]);
    send_upload(
        t, &(struct upload){UNSIGNED_TRAILER, "x-amz-checksum-crc32", line, 0},
        p, sizes[i], &r);
    cr_assert_eq(r.status, 200, "part %u: %s", i + 1, r.body);
    resp_hdr(&r, "ETag", etag[i], sizeof etag[i]);
    resp_free(&r);
  }
  char want[32];
  ref_b64(composite, 4, want);
  strcat(want, "-2");
  snprintf(body, sizeof body,
           "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>"
           "<ETag>%s</ETag><ChecksumCRC32>%s</ChecksumCRC32></Part><Part>"
           "<PartNumber>2</PartNumber><ETag>%s</ETag><ChecksumCRC32>%s"
           "</ChecksumCRC32></Part></CompleteMultipartUpload>",
           etag[0], crc[0], etag[1], crc[1]);
  snprintf(t, sizeof t, "/bkt/mp?uploadId=%s", id);
  cr_assert_eq(http_send(srv.url,
                         &(struct sreq){.method = "POST",
                                        .target = t,
                                        .body = body,
                                        .len = strlen(body)},
                         &r),
               0);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_str_eq(xml_text(&r, "ChecksumCRC32"), want, "%s", r.body);
  cr_assert_str_eq(xml_text(&r, "ChecksumType"), "COMPOSITE");
  resp_free(&r);
  expect_stored("/bkt/mp", data, total);
  free(data);
}

/* ---- signed trailers ---------------------------------------------------- */

Test(trailer, signed_trailer_checked) {
  size_t n = 150000;
  char *data = malloc(n);
  fill_pattern(data, n, 24);
  char b64[16], line[80], other[16], forged[80], v[64];
  value_of("crc32c", data, n, b64);
  snprintf(line, sizeof line, "x-amz-checksum-crc32c:%s\n", b64);
  const char *decl = "x-amz-checksum-crc32c";
  struct http_resp r;
  send_upload("/bkt/s", &(struct upload){SIGNED_TRAILER, decl, line, 0}, data,
              n, &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_str_eq(resp_hdr(&r, decl, v, sizeof v), b64);
  resp_free(&r);
  expect_stored("/bkt/s", data, n);
  /* A damaged trailer signature: 403, nothing stored. */
  send_upload("/bkt/s-bad", &(struct upload){SIGNED_TRAILER, decl, line, 1},
              data, n, &r);
  expect_s3_error(&r, 403, "SignatureDoesNotMatch", "trailer signature");
  expect_absent("/bkt/s-bad");
  /* Left out: the trailer is unauthenticated, so refused. */
  send_upload("/bkt/s-none", &(struct upload){SIGNED_TRAILER, decl, line, 2},
              data, n, &r);
  expect_s3_error(&r, 400, "MalformedTrailerError",
                  "no x-amz-trailer-signature");
  expect_absent("/bkt/s-none");
  /* The signature covers the value: signed over another one, 403 ... */
  value_of("crc32c", data, n - 1, other); /* of other bytes */
  snprintf(forged, sizeof forged, "x-amz-checksum-crc32c:%s\n", other);
  send_upload("/bkt/s-swap",
              &(struct upload){SIGNED_TRAILER, decl, line, 0, forged}, data, n,
              &r);
  expect_s3_error(&r, 403, "SignatureDoesNotMatch", "trailer signature");
  expect_absent("/bkt/s-swap");
  /* ... and a well-signed value of other bytes is still a BadDigest. */
  send_upload("/bkt/s-other", &(struct upload){SIGNED_TRAILER, decl, forged, 0},
              data, n, &r);
  expect_s3_error(&r, 400, "BadDigest", "The CRC32C you specified");
  expect_absent("/bkt/s-other");
  free(data);
}
