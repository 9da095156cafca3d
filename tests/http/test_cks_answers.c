/* test_cks_answers.c - which checksums of a GET answer the client trusts and
 * verifies (src/cks.c), against the scripted server: SHA-256, CRC32C and
 * CRC32 of a whole object in one answer (right: verified and reported;
 * wrong: HIPOBJ_E_INTEGRITY), CRC-64/NVME preferred when several come,
 * composite values and values on a ranged answer not marked FULL_OBJECT
 * never taken for the bytes' own (S3 has sent a composite without its
 * "-N" on such an answer), a malformed value a protocol error, SHA-1 and
 * no checksum reported as unverified, and the request asking for them
 * (x-amz-checksum-mode) exactly when verification is on. Expected values
 * come from bitwise CRCs written here. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj.h"
#include "mini_server.h"
#include "src/base/codec.h"

static struct mini_server *srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static char *owned[8];
static size_t n_owned;

static void start(const struct mini_reply *script, size_t n) {
  srv = mini_start(script, n);
  struct hipobj_client_config cfg;
  mini_client_config(srv, &cfg);
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
}

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

TestSuite(cksans, .init = init, .fini = fini, .timeout = 60);

#define BODY "hello, checksums"
#define LEN (sizeof BODY - 1)

static uint64_t bitwise(uint64_t poly, int bits, const char *p, size_t n) {
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, crc = mask;
  while (n--) {
    crc ^= (unsigned char)*p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (poly & (0ull - (crc & 1u)));
  }
  return ~crc & mask;
}

/* base64 of the CRC's bytes, big-endian. */
static void b64_crc(uint64_t v, int bytes, char out[16]) {
  uint8_t b[8];
  for (int i = 0; i < bytes; i++)
    b[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
  hb64_encode(b, (size_t)bytes, out);
}

static const char *crc64_of(const char *s, char out[16]) {
  b64_crc(bitwise(0x9A6C9329AC4BC9B5ull, 64, s, strlen(s)), 8, out);
  return out;
}
static const char *crc32c_of(const char *s, char out[16]) {
  b64_crc(bitwise(0x82F63B78u, 32, s, strlen(s)), 4, out);
  return out;
}
static const char *crc32_of(const char *s, char out[16]) {
  b64_crc(bitwise(0xEDB88320u, 32, s, strlen(s)), 4, out);
  return out;
}

/* A 200 (or, range, "206 bytes 0-LEN-1/LEN") answer with BODY and hdrs. */
static const char *answer(int range, const char *hdrs) {
  char *s = NULL;
  cr_assert(asprintf(&s,
                     "HTTP/1.1 %s\r\nContent-Length: %zu\r\nETag: \"e\"\r\n"
                     "%s%s\r\n" BODY,
                     range ? "206 Partial Content" : "200 OK", LEN,
                     range ? "Content-Range: bytes 0-15/16\r\n" : "",
                     hdrs) >= 0);
  cr_assert_lt(n_owned, 8);
  owned[n_owned++] = s;
  return s;
}

/* GETs BODY (whole: no range; range: a range from 0 to the end, in one
 * request) with the answer given. */
static int get(const char *raw, int range, struct hipobj_xfer_result *res) {
  struct mini_reply script[] = {{raw, 0}};
  start(script, 1);
  char buf[64];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.has_range = range;
  int st = hipobj_s3_get(cli, "bkt", "k", &dst, &o, res, err);
  if (st == HIPOBJ_OK)
    cr_assert_eq(memcmp(buf, BODY, LEN), 0);
  return st;
}

static char *hdr(const char *name, const char *value) {
  char *s = NULL;
  cr_assert(asprintf(&s, "%s: %s\r\n", name, value) >= 0);
  cr_assert_lt(n_owned, 8);
  owned[n_owned++] = s;
  return s;
}

Test(cksans, sha256_verified_and_mismatch) {
  /* SHA-256 of BODY, computed once with sha256sum. */
  const char *sha = "b2darrQbIjx0s7bDYfT7cco+mBDlphvBlpaMzTHXqR4=";
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(get(answer(0, hdr("x-amz-checksum-sha256", sha)), 0, &res),
               HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_SHA256);
  cr_expect_str_eq(res.checksum_value, sha);
  cr_expect_str_eq(mini_request_header(srv, 0, "x-amz-checksum-mode"),
                   "ENABLED");
  fini();
  init();
  const char *bad = "b2darrQbIjx0s7bDYfT7cco+mBDlphvBlpaMzTHXqR8=";
  cr_expect_eq(get(answer(0, hdr("x-amz-checksum-sha256", bad)), 0, NULL),
               HIPOBJ_E_INTEGRITY);
  cr_expect(strstr(hipobj_error_message(err), "SHA256 mismatch") != NULL, "%s",
            hipobj_error_message(err));
}

Test(cksans, crc32c_and_crc32_of_a_whole_object) {
  char v[16];
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(
      get(answer(0, hdr("x-amz-checksum-crc32c", crc32c_of(BODY, v))), 0, &res),
      HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_CRC32C);
  fini();
  init();
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(
      get(answer(0, hdr("x-amz-checksum-crc32", crc32_of(BODY, v))), 0, &res),
      HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_CRC32);
  fini();
  init();
  cr_expect_eq(get(answer(0, hdr("x-amz-checksum-crc32", crc32_of("other", v))),
                   0, NULL),
               HIPOBJ_E_INTEGRITY);
}

/* One is enough, and CRC-64/NVME first: a wrong CRC32C beside a right
 * CRC-64/NVME is not looked at. */
Test(cksans, crc64nvme_first) {
  char v[16], w[16];
  char *h = NULL;
  cr_assert(asprintf(&h,
                     "x-amz-checksum-crc32c: %s\r\n"
                     "x-amz-checksum-crc64nvme: %s\r\n",
                     crc32c_of("other", w), crc64_of(BODY, v)) >= 0);
  owned[n_owned++] = h;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(get(answer(0, h), 0, &res), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_CRC64NVME);
  cr_expect_str_eq(res.checksum_value, v);
}

Test(cksans, composite_is_not_the_bytes_checksum) {
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(get(answer(0, "x-amz-checksum-crc32c: AAAAAA==-3\r\n"
                             "x-amz-checksum-type: COMPOSITE\r\n"),
                   0, &res),
               HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  cr_expect(strstr(res.checksum_note, "composite") != NULL, "%s",
            res.checksum_note);
}

/* A ranged answer that covers the whole object: a CRC32C is trusted only
 * when marked FULL_OBJECT; a composite's value without "-N" (as S3 has
 * sent) never. CRC-64/NVME always (it has no composite form). */
Test(cksans, ranged_whole_answer) {
  char v[16];
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(
      get(answer(1, hdr("x-amz-checksum-crc32c", crc32c_of(BODY, v))), 1, &res),
      HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  cr_expect(strstr(res.checksum_note, "FULL_OBJECT") != NULL, "%s",
            res.checksum_note);
  fini();
  init();
  char *h = NULL;
  cr_assert(asprintf(&h,
                     "x-amz-checksum-crc32c: %s\r\n"
                     "x-amz-checksum-type: FULL_OBJECT\r\n",
                     crc32c_of(BODY, v)) >= 0);
  owned[n_owned++] = h;
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(get(answer(1, h), 1, &res), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_CRC32C);
  fini();
  init();
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(get(answer(1, "x-amz-checksum-crc32c: AAAAAA==\r\n"
                             "x-amz-checksum-type: COMPOSITE\r\n"),
                   1, &res),
               HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  fini();
  init();
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(
      get(answer(1, hdr("x-amz-checksum-crc64nvme", crc64_of(BODY, v))), 1,
          &res),
      HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_CRC64NVME);
}

Test(cksans, malformed_value_is_a_protocol_error) {
  cr_expect_eq(get(answer(0, "x-amz-checksum-crc64nvme: AAAA\r\n"), 0, NULL),
               HIPOBJ_E_PROTOCOL);
  cr_expect(strstr(hipobj_error_message(err), "x-amz-checksum-crc64nvme") !=
                NULL,
            "%s", hipobj_error_message(err));
}

Test(cksans, sha1_or_nothing_is_unverified) {
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(
      get(answer(0, "x-amz-checksum-sha1: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n"), 0,
          &res),
      HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  cr_expect(strstr(res.checksum_note, "SHA-1") != NULL, "%s",
            res.checksum_note);
  fini();
  init();
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(get(answer(0, ""), 0, &res), HIPOBJ_OK);
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  cr_expect(strstr(res.checksum_note, "no checksum") != NULL, "%s",
            res.checksum_note);
}

Test(cksans, off_neither_asks_nor_checks) {
  struct mini_reply script[] = {
      {answer(0, "x-amz-checksum-crc32c: AAAAAA==\r\n"), 0}};
  start(script, 1);
  char buf[64];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.checksum_mode = HIPOBJ_CHECKSUM_MODE_OFF;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_s3_get(cli, "bkt", "k", &dst, &o, &res, err), HIPOBJ_OK,
               "%s", hipobj_error_message(err));
  cr_expect_null(mini_request_header(srv, 0, "x-amz-checksum-mode"));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
}
