/* test_checksum.c - s3_crc32c and s3_crc32c_b64 (s3/checksum.h) against
 * published vectors: RFC 3720 appendix B.4 (iSCSI, whose CRC32C is the one
 * S3 uses), the "123456789" check value of the CRC catalogue, and a bitwise
 * reference implementation written here for lengths that cross the
 * library's block sizes. Chained calls must equal one call, since the
 * server and the client feed bodies in pieces. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "s3/checksum.h"

static uint32_t ref_crc32c(const uint8_t *p, size_t n) {
  uint32_t crc = ~0u;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

Test(crc32c, rfc3720_vectors) {
  uint8_t buf[32];
  memset(buf, 0, sizeof buf);
  cr_expect_eq(s3_crc32c(S3_CRC32C_INIT, buf, 32), 0x8A9136AAu);
  memset(buf, 0xff, sizeof buf);
  cr_expect_eq(s3_crc32c(S3_CRC32C_INIT, buf, 32), 0x62A8AB43u);
  for (int i = 0; i < 32; i++)
    buf[i] = (uint8_t)i;
  cr_expect_eq(s3_crc32c(S3_CRC32C_INIT, buf, 32), 0x46DD794Eu);
  for (int i = 0; i < 32; i++)
    buf[i] = (uint8_t)(31 - i);
  cr_expect_eq(s3_crc32c(S3_CRC32C_INIT, buf, 32), 0x113FDB5Cu);
}

Test(crc32c, check_value_and_empty) {
  cr_expect_eq(s3_crc32c(S3_CRC32C_INIT, "123456789", 9), 0xE3069283u);
  cr_expect_eq(s3_crc32c(S3_CRC32C_INIT, "", 0), 0u);
  cr_expect_eq(s3_crc32c(0xE3069283u, "", 0), 0xE3069283u);
}

Test(crc32c, chained_equals_one_call) {
  static uint8_t data[70000];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof data; i++) {
    x = x * 1103515245u + 12345u;
    data[i] = (uint8_t)(x >> 16);
  }
  const size_t lens[] = {1, 7, 8, 63, 64, 255, 256, 1000, 4096, 70000};
  for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
    size_t n = lens[l];
    uint32_t whole = s3_crc32c(S3_CRC32C_INIT, data, n);
    cr_expect_eq(whole, ref_crc32c(data, n), "length %zu", n);
    /* Every split point of short inputs; a few of the long ones. */
    size_t step = n < 300 ? 1 : n / 17;
    for (size_t cut = 0; cut <= n; cut += step) {
      uint32_t c = s3_crc32c(S3_CRC32C_INIT, data, cut);
      c = s3_crc32c(c, data + cut, n - cut);
      cr_expect_eq(c, whole, "length %zu cut at %zu", n, cut);
    }
  }
  /* Three pieces, as a body arrives. */
  uint32_t c = s3_crc32c(S3_CRC32C_INIT, "1234", 4);
  c = s3_crc32c(c, "5", 1);
  cr_expect_eq(s3_crc32c(c, "6789", 4), 0xE3069283u);
}

Test(crc32c, base64_header_value) {
  char out[S3_CRC32C_B64_LEN];
  s3_crc32c_b64(0xE3069283u, out);
  cr_expect_str_eq(out, "4waSgw==");
  s3_crc32c_b64(0, out);
  cr_expect_str_eq(out, "AAAAAA==");
  s3_crc32c_b64(0xFFFFFFFFu, out);
  cr_expect_str_eq(out, "/////w==");
  s3_crc32c_b64(0x8A9136AAu, out);
  cr_expect_str_eq(out, "ipE2qg==");
}
