/* test_rdma_crc_target.c - CRC-64/NVME against the vectors of §4.6 (and a
 * bitwise reference, every alignment, incremental and combined use; its
 * speed is a benchmark, tests/bench/digest_bench.c), the X-Amz-Rdma-Target
 * encoding of §3.4, and the PREPARE example of §3.3/§3.9 built with the rdma/
 * formatters and signed with s3/sigv4.c, which must reproduce the
 * specification's SigV4 vector. Part of the test_rdma_codecs executable. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/token.h"
#include "s3/sigv4.h"
#include "src/base/crc64nvme.h"

#define S(lit) (lit), strlen(lit)

static void gid_v4(uint8_t g[16], int a, int b, int c, int d) {
  memset(g, 0, 16);
  g[10] = g[11] = 0xff;
  g[12] = (uint8_t)a, g[13] = (uint8_t)b, g[14] = (uint8_t)c,
  g[15] = (uint8_t)d;
}

/* ---- CRC-64/NVME (§4.6) ----------------------------------------------------
 */

/* Bit-at-a-time reference straight from the parameters. */
static uint64_t crc_reference(const uint8_t *p, size_t n) {
  uint64_t c = ~0ULL;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? (c >> 1) ^ 0x9A6C9329AC4BC9B5ULL : c >> 1;
  }
  return ~c;
}

Test(crc64nvme, spec_vectors) {
  static uint8_t zeros[4096];
  const struct {
    const void *p;
    size_t n;
    uint64_t crc;
    const char *b64;
  } v[] = {{"123456789", 9, 0xae8b14860a799888ULL, "rosUhgp5mIg="},
           {"", 0, 0x0, "AAAAAAAAAAA="},
           {zeros, sizeof zeros, 0x6482d367eb22b64eULL, "ZILTZ+sitk4="},
           {"dp-put-payload", 14, 0x0bfc30f774a6f830ULL, "C/ww93Sm+DA="}};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint64_t c = crc64nvme(v[i].p, v[i].n);
    cr_expect_eq(c, v[i].crc, "vector %zu: %016llx", i, (unsigned long long)c);
    char b64[CRC64NVME_B64_LEN + 1];
    crc64nvme_to_base64(c, b64);
    cr_expect_str_eq(b64, v[i].b64);
    uint64_t back = 1;
    cr_expect_eq(crc64nvme_from_base64(S(v[i].b64), &back), 0);
    cr_expect_eq(back, v[i].crc);
    char hdr[RDMA_CHECKSUM_VALUE_LEN + 1], want[32];
    rdma_checksum_format(c, hdr);
    snprintf(want, sizeof want, "CRC64NVME %s", v[i].b64);
    cr_expect_str_eq(hdr, want);
    cr_expect_eq(rdma_checksum_parse(S(want), &back), 0);
    cr_expect_eq(back, v[i].crc);
    cr_expect_eq(rdma_checksum_parse_b64(S(v[i].b64), &back), 0);
    cr_expect_eq(back, v[i].crc);
  }
}

Test(crc64nvme, malformed_checksum_values) {
  uint64_t c;
  const char *bad[] = {"CRC64NVME rosUhgp5mIh=", /* pad bits set */
                       "CRC64NVME rosUhgp5mIg",
                       "CRC64NVME rosUhgp5mIg==",
                       "CRC64NVME  rosUhgp5mIg=",
                       "CRC64NVMErosUhgp5mIg=",
                       "CRC32C rosUhgp5mIg=",
                       "CRC64NVME ros*hgp5mIg=",
                       "CRC64NVME rosUhgp5mI==",
                       "",
                       "rosUhgp5mIg="};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_expect_eq(rdma_checksum_parse(S(bad[i]), &c), -1, "\"%s\"", bad[i]);
  cr_expect_eq(rdma_checksum_parse(S("crc64nvme rosUhgp5mIg="), &c), 0);
  cr_expect_eq(rdma_checksum_parse_b64(S("rosUhgp5mIg"), &c), -1);
  cr_expect_eq(rdma_checksum_parse_b64(S("rosUhgp5mIh="), &c), -1);
}

Test(crc64nvme, incremental_and_combine_match_reference) {
  size_t n = 100003;
  uint8_t *buf = malloc(n);
  cr_assert_not_null(buf);
  srand(7);
  for (size_t i = 0; i < n; i++)
    buf[i] = (uint8_t)rand();
  uint64_t whole = crc64nvme(buf, n);
  cr_expect_eq(whole, crc_reference(buf, n));
  /* Every alignment and short length through the head/tail paths. */
  for (size_t off = 0; off < 16; off++)
    for (size_t len = 0; len < 40; len++)
      cr_expect_eq(crc64nvme(buf + off, len), crc_reference(buf + off, len),
                   "off %zu len %zu", off, len);
  const size_t cuts[] = {0, 1, 7, 8, 9, 4095, 50000, n - 1, n};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    size_t k = cuts[i];
    uint64_t st = crc64nvme_update(crc64nvme_init(), buf, k);
    st = crc64nvme_update(st, buf + k, n - k);
    cr_expect_eq(crc64nvme_final(st), whole, "cut %zu", k);
    uint64_t a = crc64nvme(buf, k), b = crc64nvme(buf + k, n - k);
    cr_expect_eq(crc64nvme_combine(a, b, n - k), whole, "combine at %zu", k);
  }
  /* Three parts, as a multipart upload would combine them. */
  uint64_t p1 = crc64nvme(buf, 1000), p2 = crc64nvme(buf + 1000, 2000),
           p3 = crc64nvme(buf + 3000, n - 3000);
  cr_expect_eq(crc64nvme_combine(crc64nvme_combine(p1, p2, 2000), p3, n - 3000),
               whole);
  free(buf);
}

/* ---- X-Amz-Rdma-Target (§3.4) ----------------------------------------------
 */

static char *target(const char *b, const char *k, const struct hparam *q,
                    size_t nq) {
  struct hbuf out = HBUF_INIT;
  if (rdma_target_build(&out, b, k, q, nq) != 0) {
    hbuf_free(&out);
    return NULL;
  }
  return hbuf_steal(&out);
}

Test(target, build) {
  char *t = target("bucket", "dir/obj 1.bin", NULL, 0);
  cr_expect_str_eq(t, "/bucket/dir/obj%201.bin");
  free(t);
  t = target("b", "a+b=c&d~e_f-g.h", NULL, 0);
  cr_expect_str_eq(t, "/b/a%2Bb%3Dc%26d~e_f-g.h");
  free(t);
  t = target("b", "gr\xc3\xbc\xc3\x9f/x//y", NULL, 0);
  cr_expect_str_eq(t, "/b/gr%C3%BC%C3%9F/x//y");
  free(t);
  /* Query keys sorted whatever order they come in (the bridge emits
   * uploadId first; §5.3). */
  struct hparam part[] = {{"uploadId", "2~abc/def+="}, {"partNumber", "3"}};
  t = target("b", "k", part, 2);
  cr_expect_str_eq(t, "/b/k?partNumber=3&uploadId=2~abc%2Fdef%2B%3D");
  free(t);
  struct hparam ver[] = {{"versionId", "v 1"}};
  t = target("b", "k", ver, 1);
  cr_expect_str_eq(t, "/b/k?versionId=v%201");
  free(t);
  cr_expect_null(target("", "k", NULL, 0));
  cr_expect_null(target("b", "", NULL, 0));
  cr_expect_null(target(NULL, "k", NULL, 0));
  /* A failed build leaves the buffer as it was. */
  struct hbuf out = HBUF_INIT;
  hbuf_puts(&out, "x");
  cr_expect_eq(rdma_target_build(&out, "b", "", NULL, 0), -1);
  cr_expect_str_eq(hbuf_str(&out), "x");
  hbuf_free(&out);
}

Test(target, parse) {
  struct hbuf b = HBUF_INIT, k = HBUF_INIT;
  const char *q;
  struct hipobj_error why = {0};
  size_t ql;
  cr_assert_eq(
      rdma_target_parse(S("/bucket/dir/obj%201.bin"), &b, &k, &q, &ql, &why),
      0);
  cr_expect_str_eq(hbuf_str(&b), "bucket");
  cr_expect_str_eq(hbuf_str(&k), "dir/obj 1.bin");
  cr_expect_eq(ql, 0);
  hbuf_reset(&b);
  hbuf_reset(&k);
  cr_assert_eq(rdma_target_parse(S("/b/k/x?partNumber=3&uploadId=u"), &b, &k,
                                 &q, &ql, &why),
               0);
  cr_expect_str_eq(hbuf_str(&k), "k/x");
  cr_expect_eq(ql, strlen("partNumber=3&uploadId=u"));
  cr_expect(strncmp(q, "partNumber=3&uploadId=u", ql) == 0);
  const char *bad[] = {"",      "bucket/key", "/bucket", "/bucket/",
                       "//key", "/b/%zz",     "/b%2/k",  "/b/?x=1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hbuf_reset(&b);
    hbuf_reset(&k);
    hipobj_error_clear(&why);
    cr_expect_eq(rdma_target_parse(S(bad[i]), &b, &k, &q, &ql, &why),
                 HIPOBJ_E_INVALID_ARGUMENT, "\"%s\"", bad[i]);
    cr_expect_str_neq(why.message, "");
  }
  /* A NUL would cut the name at the server: refused, raw or escaped,
   * wherever it is. */
  const char *nul[] = {"/b/a%00b", "/b%00x/k", "/b/k?uploadId=a%00"};
  for (size_t i = 0; i < sizeof nul / sizeof nul[0]; i++)
    cr_expect_eq(rdma_target_parse(S(nul[i]), &b, &k, &q, &ql, &why),
                 HIPOBJ_E_INVALID_ARGUMENT, "\"%s\"", nul[i]);
  cr_expect_eq(rdma_target_parse("/b/a\0b", 6, &b, &k, &q, &ql, &why),
               HIPOBJ_E_INVALID_ARGUMENT);
  hbuf_free(&b);
  hbuf_free(&k);
}

/* Every target built for a valid S3 name parses back to it: the longest
 * key (1024 bytes, each encoded as %XX) included, which the first limit
 * (2047 bytes) refused. One byte more is refused at both ends. */
Test(target, longest_names_round_trip) {
  char key[RDMA_TARGET_KEY_MAX + 2], bucket[RDMA_TARGET_BUCKET_MAX + 2];
  memset(key, '\xff', sizeof key - 1);
  key[RDMA_TARGET_KEY_MAX] = '\0';
  memset(bucket, 'b', sizeof bucket - 1);
  bucket[RDMA_TARGET_BUCKET_MAX] = '\0';
  struct hparam qp[] = {{"uploadId", "2~\xff\xfe/+="}, {"partNumber", "9999"}};
  struct hbuf t = HBUF_INIT, b = HBUF_INIT, k = HBUF_INIT;
  cr_assert_eq(rdma_target_build(&t, bucket, key, qp, 2), 0);
  cr_expect_gt(t.len, 3 * RDMA_TARGET_KEY_MAX);
  cr_expect_leq(t.len, RDMA_TARGET_MAX);
  const char *q;
  size_t ql;
  struct hipobj_error why = {0};
  cr_assert_eq(rdma_target_parse(t.data, t.len, &b, &k, &q, &ql, &why), 0, "%s",
               why.message);
  cr_expect_str_eq(hbuf_str(&b), bucket);
  cr_expect_str_eq(hbuf_str(&k), key);
  cr_expect(ql > 0 && !strncmp(q, "partNumber=9999&uploadId=", 25));
  /* One byte more: refused by the builder, and by the parser when a
   * client builds it some other way. */
  key[RDMA_TARGET_KEY_MAX] = 'k';
  key[RDMA_TARGET_KEY_MAX + 1] = '\0';
  hbuf_reset(&t);
  cr_expect_eq(rdma_target_build(&t, bucket, key, NULL, 0), -1);
  hbuf_puts(&t, "/b/");
  huri_encode(&t, key, strlen(key), 1);
  hbuf_reset(&b);
  hbuf_reset(&k);
  cr_expect_eq(rdma_target_parse(t.data, t.len, &b, &k, &q, &ql, &why),
               HIPOBJ_E_INVALID_ARGUMENT);
  bucket[RDMA_TARGET_BUCKET_MAX] = 'b';
  bucket[RDMA_TARGET_BUCKET_MAX + 1] = '\0';
  hbuf_reset(&t);
  cr_expect_eq(rdma_target_build(&t, bucket, "k", NULL, 0), -1);
  char *huge = malloc(RDMA_TARGET_MAX + 2);
  memset(huge, 'a', RDMA_TARGET_MAX + 1);
  huge[0] = '/';
  huge[5] = '/';
  huge[RDMA_TARGET_MAX + 1] = '\0';
  cr_expect_eq(
      rdma_target_parse(huge, RDMA_TARGET_MAX + 1, &b, &k, &q, &ql, &why),
      HIPOBJ_E_INVALID_ARGUMENT);
  free(huge);
  hbuf_free(&t);
  hbuf_free(&b);
  hbuf_free(&k);
  hbuf_free(&b);
  hbuf_free(&k);
}

/* ---- the PREPARE example of §3.3 / §3.9, signed ----------------------------
 */

static void sign_prepare(const char *payload_hash, const char *want_sig) {
  char token[RDMA_TOKEN_HEX_LEN + 1], psn[7], cookie[9];
  struct rdma_rc_token t = {.transport = 1, .qpn = 0x123, .port = 1};
  gid_v4(t.gid, 192, 168, 100, 10);
  rdma_token_encode(&t, token);
  cr_assert_eq(rdma_psn_format(0x00ff10, psn), 0);
  cr_assert_eq(rdma_cookie_format(0x1a2b3c4d, cookie), 0);
  char *tgt = target("bucket", "dir/obj 1.bin", NULL, 0);
  struct s3_header h[] = {
      {"Host", "10.0.0.1:7070"},
      {"Content-Length", "0"},
      {"x-amz-content-sha256", payload_hash},
      {"x-amz-date", "20260820T120000Z"},
      {"x-amz-rdma-protocol", RDMA_PROTOCOL},
      {"x-amz-rdma-token", token},
      {"x-amz-rdma-psn", psn},
      {"x-amz-rdma-cookie", cookie},
      {"x-amz-rdma-op", rdma_op_name(RDMA_OP_GET)},
      {"x-amz-rdma-target", tgt},
      {"x-amz-rdma-size", "4096"},
      {"x-amz-rdma-offset", "1048576"},
  };
  struct s3_sigv4_input in = {.method = "POST",
                              .canonical_uri = "/.hipobj-rc/prepare",
                              .canonical_query = "",
                              .headers = h,
                              .n_headers = sizeof h / sizeof h[0],
                              .payload_hash = payload_hash,
                              .amz_date = "20260820T120000Z",
                              .region = "us-east-1",
                              .service = "s3",
                              .access_key = "AKIAIOSFODNN7EXAMPLE",
                              .secret_key =
                                  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
  struct hbuf creq = HBUF_INIT, signed_h = HBUF_INIT, sts = HBUF_INIT;
  cr_assert_eq(s3_sigv4_canonical_request(&in, &creq, &signed_h), 0);
  cr_expect_str_eq(hbuf_str(&signed_h),
                   "content-length;host;x-amz-content-sha256;x-amz-date;"
                   "x-amz-rdma-cookie;x-amz-rdma-offset;x-amz-rdma-op;"
                   "x-amz-rdma-protocol;x-amz-rdma-psn;x-amz-rdma-size;"
                   "x-amz-rdma-target;x-amz-rdma-token");
  char sig[S3_SHA256_HEX_LEN + 1];
  if (strcmp(payload_hash, "UNSIGNED-PAYLOAD") != 0) {
    char hex[S3_SHA256_HEX_LEN + 1];
    s3_sha256_hex(creq.data, creq.len, hex);
    cr_expect_str_eq(hex, "19bcf6d5647507b011eb482519b472a9f7b8d7b5028a90af"
                          "b5cacd4793370e6f");
  }
  cr_assert_eq(s3_sigv4_string_to_sign("20260820T120000Z", "us-east-1", "s3",
                                       hbuf_str(&creq), &sts),
               0);
  s3_sigv4_signature(in.secret_key, "20260820T120000Z", "us-east-1", "s3",
                     hbuf_str(&sts), sig);
  cr_expect_str_eq(sig, want_sig);
  hbuf_free(&creq);
  hbuf_free(&signed_h);
  hbuf_free(&sts);
  free(tgt);
}

Test(sigv4_vector, prepare_empty_payload_hash) {
  sign_prepare(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      "8eb679efa760942ee04e1d23eeb9714b67006c55d8491d1d6777eb01ffc0edbe");
}

Test(sigv4_vector, prepare_unsigned_payload) {
  sign_prepare(
      "UNSIGNED-PAYLOAD",
      "5ad49adb23fa238fc5fa21f52a36ba7a2c2d4c7766b455f081b39121cdfb5106");
}
