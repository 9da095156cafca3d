/* test_crypto.c - the crypto primitives under SigV4 (s3/crypto.h) and the
 * base64 codec, against published vectors: FIPS 180-2 (SHA-256 "abc"),
 * RFC 4231 test case 2 (HMAC-SHA256), RFC 1321 (MD5), RFC 4648 section 10
 * (base64). Split from test_sigv4.c, which checks the signing stages. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3/crypto.h"
#include "src/base/codec.h"
/* ------------------------------------------------------------------------ */
/* Crypto primitives                                                        */
/* ------------------------------------------------------------------------ */

Test(crypto, sha256_vectors) {
  char hex[S3_SHA256_HEX_LEN + 1];
  s3_sha256_hex("abc", 3, hex);
  cr_expect_str_eq(
      hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  s3_sha256_hex("", 0, hex);
  cr_expect_str_eq(hex, S3_EMPTY_SHA256);
  s3_sha256_hex(NULL, 0, hex);
  cr_expect_str_eq(hex, S3_EMPTY_SHA256);
  /* The PUT example's body hash, as printed in the AWS example. */
  s3_sha256_hex("Welcome to Amazon S3.", 21, hex);
  cr_expect_str_eq(
      hex, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
}

Test(crypto, sha256_incremental_matches_one_shot) {
  const char *msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  uint8_t one[S3_SHA256_LEN], inc[S3_SHA256_LEN];
  char hex[S3_SHA256_HEX_LEN + 1];
  s3_sha256(msg, strlen(msg), one);
  struct s3_sha256_ctx *c = s3_sha256_begin();
  cr_assert_not_null(c);
  for (size_t i = 0; i < strlen(msg); i += 5)
    s3_sha256_update(c, msg + i, strlen(msg) - i < 5 ? strlen(msg) - i : 5);
  s3_sha256_end(c, inc);
  cr_expect_eq(memcmp(one, inc, sizeof one), 0);
  hhex_encode(inc, sizeof inc, hex);
  /* FIPS 180-2 appendix B.2 */
  cr_expect_str_eq(
      hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(crypto, hmac_sha256_rfc4231) {
  uint8_t mac[S3_SHA256_LEN];
  char hex[S3_SHA256_HEX_LEN + 1];
  const char *data = "what do ya want for nothing?";
  s3_hmac_sha256("Jefe", 4, data, strlen(data), mac);
  hhex_encode(mac, sizeof mac, hex);
  cr_expect_str_eq(
      hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

Test(crypto, hmac_sha256_key_longer_than_a_block) {
  /* RFC 4231 test case 6: a 131-byte key is hashed first. */
  uint8_t key[131], mac[S3_SHA256_LEN];
  char hex[S3_SHA256_HEX_LEN + 1];
  memset(key, 0xaa, sizeof key);
  const char *data = "Test Using Larger Than Block-Size Key - Hash Key First";
  s3_hmac_sha256(key, sizeof key, data, strlen(data), mac);
  hhex_encode(mac, sizeof mac, hex);
  cr_expect_str_eq(
      hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

Test(crypto, md5_and_base64) {
  uint8_t d[16];
  char hex[33], b64[25];
  s3_md5("abc", 3, d);
  hhex_encode(d, sizeof d, hex);
  cr_expect_str_eq(hex, "900150983cd24fb0d6963f7d28e17f72");
  s3_md5("", 0, d);
  cr_expect_eq(hb64_encode(d, sizeof d, b64), 24);
  /* MD5("") = d41d8cd98f00b204e9800998ecf8427e, the Content-MD5 of an empty
   * body that S3 documents: 1B2M2Y8AsgTpgAmY7PhCfg== */
  cr_expect_str_eq(b64, "1B2M2Y8AsgTpgAmY7PhCfg==");
}

Test(crypto, md5_incremental_and_failure_statuses) {
  /* RFC 1321's test suite, fed in uneven pieces. */
  const char *msg = "12345678901234567890123456789012345678901234567890123456"
                    "789012345678901234567890";
  struct s3_md5_ctx *m = s3_md5_begin();
  cr_assert_not_null(m);
  size_t n = strlen(msg);
  for (size_t off = 0, step = 1; off < n; off += step, step += 3)
    s3_md5_update(m, msg + off, off + step <= n ? step : n - off);
  uint8_t d[16];
  char hex[33];
  cr_assert_eq(s3_md5_end(m, d), 0);
  hhex_encode(d, sizeof d, hex);
  cr_expect_str_eq(hex, "57edf4a22be3c955ac49da2e2107b67a");
  cr_assert_eq(s3_md5("abc", 3, d), 0);
  /* No context (begin failed): a status, and a digest no server accepts. */
  uint8_t z[S3_SHA256_LEN];
  memset(d, 0xaa, sizeof d);
  memset(z, 0xaa, sizeof z);
  cr_expect_eq(s3_md5_end(NULL, d), -1);
  cr_expect_eq(s3_sha256_end(NULL, z), -1);
  for (size_t i = 0; i < sizeof d; i++)
    cr_expect_eq(d[i], 0);
  for (size_t i = 0; i < sizeof z; i++)
    cr_expect_eq(z[i], 0);
  s3_md5_abandon(NULL);
  s3_md5_abandon(s3_md5_begin());
}

Test(crypto, base64_rfc4648) {
  const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char *want[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                        "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (size_t i = 0; i < 7; i++) {
    char out[16];
    size_t n = hb64_encode((const uint8_t *)in[i], strlen(in[i]), out);
    cr_expect_str_eq(out, want[i]);
    cr_expect_eq(n, strlen(want[i]));
  }
  const uint8_t bin[] = {0xfb, 0xff, 0xbf};
  char out[8];
  hb64_encode(bin, 3, out);
  cr_expect_str_eq(out, "+/+/");
}
