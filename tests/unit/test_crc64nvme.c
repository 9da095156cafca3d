/* test_crc64nvme.c - the CRC-64/NVME of src/base/crc64nvme.c: the
 * PCLMULQDQ folding version against the table version (the reference) and
 * both against a bitwise one written here, over random lengths, start
 * alignments and states, across the folding's block sizes (16, 128 and
 * 256 bytes); and the combination of pieces (crc64nvme_combine, and the
 * XOR of crc64nvme_shift() values a parallel GET accumulates in whatever
 * order its parts finish). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/crc64nvme.h"

/* Bit by bit: reflected polynomial 0x9A6C9329AC4BC9B5, state as
 * crc64nvme_update keeps it (init ~0, no xorout). */
static uint64_t bitwise(uint64_t crc, const uint8_t *p, size_t n) {
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0x9A6C9329AC4BC9B5ull & (0ull - (crc & 1u)));
  }
  return crc;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

#define BUF (1u << 20)

static uint8_t *random_buf(void) {
  uint8_t *b = malloc(BUF + 64);
  cr_assert_not_null(b);
  for (size_t i = 0; i < BUF + 64; i++)
    b[i] = (uint8_t)rnd();
  return b;
}

Test(crc64nvme_fast, check_value) {
  cr_expect_eq(crc64nvme("123456789", 9), 0xAE8B14860A799888ull);
  /* 1000 bytes of '1'..'9' repeated: the folding path. */
  char s[1000];
  for (size_t i = 0; i < sizeof s; i++)
    s[i] = (char)('1' + i % 9);
  uint64_t st = crc64nvme_init();
  cr_expect_eq(crc64nvme_update_clmul(st, s, sizeof s),
               bitwise(st, (const uint8_t *)s, sizeof s));
}

Test(crc64nvme_fast, clmul_equals_reference) {
  if (!crc64nvme_has_clmul())
    cr_skip_test("this CPU has no PCLMULQDQ/SSE4.1: only the table code runs");
  uint8_t *b = random_buf();
  /* Every length around the block boundaries, every alignment. */
  for (size_t n = 0; n <= 700; n++)
    for (size_t a = 0; a < 16; a += (n % 5) + 1) {
      uint64_t st = rnd();
      uint64_t want = crc64nvme_update_table(st, b + a, n);
      cr_assert_eq(crc64nvme_update_clmul(st, b + a, n), want,
                   "length %zu at alignment %zu", n, a);
      if (n < 300)
        cr_assert_eq(bitwise(st, b + a, n), want, "length %zu", n);
    }
  /* Random lengths up to the buffer, random alignments and states. */
  for (int i = 0; i < 300; i++) {
    size_t n = (size_t)(rnd() % BUF), a = (size_t)(rnd() % 64);
    uint64_t st = rnd();
    cr_assert_eq(crc64nvme_update_clmul(st, b + a, n),
                 crc64nvme_update_table(st, b + a, n), "length %zu at %zu", n,
                 a);
  }
  cr_expect_eq(crc64nvme_update_clmul(0, b, BUF),
               bitwise(0, b, BUF)); /* one long bitwise run */
  free(b);
}

Test(crc64nvme_fast, pieces_equal_one_call) {
  uint8_t *b = random_buf();
  for (int i = 0; i < 200; i++) {
    size_t n = (size_t)(rnd() % 20000), cut = n ? (size_t)(rnd() % n) : 0;
    uint64_t whole = crc64nvme_update(crc64nvme_init(), b, n);
    uint64_t c = crc64nvme_update(crc64nvme_init(), b, cut);
    cr_assert_eq(crc64nvme_update(c, b + cut, n - cut), whole, "%zu at %zu", n,
                 cut);
  }
  free(b);
}

Test(crc64nvme_fast, combine_and_shift) {
  uint8_t *b = random_buf();
  for (int i = 0; i < 100; i++) {
    size_t n = (size_t)(rnd() % BUF), cut = n ? (size_t)(rnd() % n) : 0;
    uint64_t whole = crc64nvme(b, n);
    cr_assert_eq(crc64nvme_combine(crc64nvme(b, cut),
                                   crc64nvme(b + cut, n - cut), n - cut),
                 whole, "%zu at %zu", n, cut);
  }
  /* Parts of a parallel GET, accumulated in reverse order as
   * shift(CRC(part), bytes after it). */
  size_t sizes[] = {4096, 1, 65536, 777, 300000, 16, 0, 12345};
  size_t n = 0, off[8];
  for (int i = 0; i < 8; i++) {
    off[i] = n;
    n += sizes[i];
  }
  uint64_t acc = 0;
  for (int i = 7; i >= 0; i--)
    acc ^=
        crc64nvme_shift(crc64nvme(b + off[i], sizes[i]), n - off[i] - sizes[i]);
  cr_expect_eq(acc, crc64nvme(b, n));
  cr_expect_eq(crc64nvme_shift(0x1234, 0), 0x1234ull);
  free(b);
}
