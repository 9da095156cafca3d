/* test_checksum.c - the CRCs of s3/checksum.h (CRC32C, CRC32, CRC64NVME)
 * and their base64 header values against published vectors: RFC 3720
 * appendix B.4 (iSCSI, whose CRC32C is the one S3 uses), the "123456789"
 * check values of the CRC catalogue, and bitwise reference implementations
 * written here for lengths that cross the libraries' block sizes. Chained
 * calls must equal one call, since the server and the client feed bodies in
 * pieces. */
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

/* CRC-32/ISO-HDLC: reflected polynomial 0xEDB88320. */
static uint32_t ref_crc32(const uint8_t *p, size_t n) {
  uint32_t crc = ~0u;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/* CRC-64/NVME: reflected polynomial 0x9A6C9329AC4BC9B5. */
static uint64_t ref_crc64nvme(const uint8_t *p, size_t n) {
  uint64_t crc = ~0ull;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0x9A6C9329AC4BC9B5ull & (0ull - (crc & 1u)));
  }
  return ~crc;
}

static const uint8_t *pattern(size_t n) {
  static uint8_t data[70000];
  uint32_t x = 12345;
  for (size_t i = 0; i < n && i < sizeof data; i++) {
    x = x * 1103515245u + 12345u;
    data[i] = (uint8_t)(x >> 16);
  }
  return data;
}

static const size_t lens[] = {1, 7, 8, 63, 64, 255, 256, 1000, 4096, 70000};
#define N_LENS (sizeof lens / sizeof *lens)

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
  const uint8_t *data = pattern(70000);
  for (size_t l = 0; l < N_LENS; l++) {
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

Test(crc32, check_value_and_empty) {
  cr_expect_eq(s3_crc32(S3_CRC32_INIT, "123456789", 9), 0xCBF43926u);
  cr_expect_eq(s3_crc32(S3_CRC32_INIT, "", 0), 0u);
  cr_expect_eq(s3_crc32(0xCBF43926u, "", 0), 0xCBF43926u);
  /* Not CRC32C: the polynomials differ. */
  cr_expect_neq(s3_crc32(0, "123456789", 9), s3_crc32c(0, "123456789", 9));
}

Test(crc32, chained_equals_one_call) {
  const uint8_t *data = pattern(70000);
  for (size_t l = 0; l < N_LENS; l++) {
    size_t n = lens[l];
    uint32_t whole = s3_crc32(S3_CRC32_INIT, data, n);
    cr_expect_eq(whole, ref_crc32(data, n), "length %zu", n);
    size_t step = n < 300 ? 1 : n / 17;
    for (size_t cut = 0; cut <= n; cut += step) {
      uint32_t c = s3_crc32(S3_CRC32_INIT, data, cut);
      cr_expect_eq(s3_crc32(c, data + cut, n - cut), whole,
                   "length %zu cut at %zu", n, cut);
    }
  }
  uint32_t c = s3_crc32(S3_CRC32_INIT, "1234", 4);
  c = s3_crc32(c, "5", 1);
  cr_expect_eq(s3_crc32(c, "6789", 4), 0xCBF43926u);
}

Test(crc64nvme, check_value_and_empty) {
  cr_expect_eq(s3_crc64nvme(S3_CRC64NVME_INIT, "123456789", 9),
               0xAE8B14860A799888ull);
  cr_expect_eq(s3_crc64nvme(S3_CRC64NVME_INIT, "", 0), 0ull);
  cr_expect_eq(s3_crc64nvme(0xAE8B14860A799888ull, "", 0),
               0xAE8B14860A799888ull);
}

Test(crc64nvme, chained_equals_one_call) {
  const uint8_t *data = pattern(70000);
  for (size_t l = 0; l < N_LENS; l++) {
    size_t n = lens[l];
    uint64_t whole = s3_crc64nvme(S3_CRC64NVME_INIT, data, n);
    cr_expect_eq(whole, ref_crc64nvme(data, n), "length %zu", n);
    size_t step = n < 300 ? 1 : n / 17;
    for (size_t cut = 0; cut <= n; cut += step) {
      uint64_t c = s3_crc64nvme(S3_CRC64NVME_INIT, data, cut);
      cr_expect_eq(s3_crc64nvme(c, data + cut, n - cut), whole,
                   "length %zu cut at %zu", n, cut);
    }
  }
  uint64_t c = s3_crc64nvme(S3_CRC64NVME_INIT, "1234", 4);
  c = s3_crc64nvme(c, "5", 1);
  cr_expect_eq(s3_crc64nvme(c, "6789", 4), 0xAE8B14860A799888ull);
}

Test(checksum_b64, header_values) {
  char out4[S3_CRC32_B64_LEN], out8[S3_CRC64NVME_B64_LEN];
  s3_crc32_b64(0xCBF43926u, out4);
  cr_expect_str_eq(out4, "y/Q5Jg==");
  s3_crc64nvme_b64(0xAE8B14860A799888ull, out8);
  cr_expect_str_eq(out8, "rosUhgp5mIg=");
  s3_crc64nvme_b64(0, out8);
  cr_expect_str_eq(out8, "AAAAAAAAAAA=");
  s3_crc64nvme_b64(~0ull, out8);
  cr_expect_str_eq(out8, "//////////8=");
}

Test(checksum_b64, parse_round_trip_and_refusals) {
  uint32_t v32 = 0;
  uint64_t v64 = 0;
  cr_expect_eq(s3_crc32_parse_b64("y/Q5Jg==", &v32), 0);
  cr_expect_eq(v32, 0xCBF43926u);
  cr_expect_eq(s3_crc32_parse_b64("4waSgw==", &v32), 0);
  cr_expect_eq(v32, 0xE3069283u);
  cr_expect_eq(s3_crc64nvme_parse_b64("rosUhgp5mIg=", &v64), 0);
  cr_expect_eq(v64, 0xAE8B14860A799888ull);
  static const char *const bad32[] = {
      "",         "y/Q5Jg=",   "y/Q5Jgx=",    "y/Q5Jh==",
      "y/Q5J*==", "y/Q5Jg==A", "rosUhgp5mIg="};
  for (size_t i = 0; i < sizeof bad32 / sizeof *bad32; i++)
    cr_expect_eq(s3_crc32_parse_b64(bad32[i], &v32), -1, "%s", bad32[i]);
  static const char *const bad64[] = {
      "",        "rosUhgp5mIg", "rosUhgp5mIh=", "rosUhgp5m*g=", "rosUhgp5mIg==",
      "y/Q5Jg=="};
  for (size_t i = 0; i < sizeof bad64 / sizeof *bad64; i++)
    cr_expect_eq(s3_crc64nvme_parse_b64(bad64[i], &v64), -1, "%s", bad64[i]);
  cr_expect_eq(s3_crc32_parse_b64(NULL, &v32), -1);
  cr_expect_eq(s3_crc64nvme_parse_b64(NULL, &v64), -1);
}
