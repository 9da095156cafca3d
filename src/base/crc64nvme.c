/* crc64nvme.c - CRC-64/NVME, table-driven slice-by-16 (see crc64nvme.h).
 *
 * The checksum runs over every byte a GET or PUT moves, so it must keep up
 * with the data path: slice-by-16 folds 16 input bytes per step through
 * sixteen 256-entry tables (32 KiB, built once on first use) and runs at
 * about 2 GB/s per core without CPU-specific instructions (the code is built
 * without -march=native so it runs on any x86-64 and under qemu TCG);
 * slice-by-8 measured 1.5 GB/s on the same machine.
 *
 * Combination follows the GF(2) polynomial method zlib uses for CRC-32:
 * CRC(A||B) = CRC(A) * x^(8|B|) mod P  xor  CRC(B). The init and xorout
 * values (both all ones) cancel out of that identity, so no correction term
 * is needed. */
#include "crc64nvme.h"

#include <pthread.h>
#include <string.h>

#include "codec.h"

/* 0xAD93D23594C93659 bit-reversed: the reflected form the shifts use. */
#define POLY_REFLECTED 0x9A6C9329AC4BC9B5ULL

static uint64_t table[16][256];
/* x2n[k] = x^(2^k) mod P, reflected (bit 63 is x^0); k up to 3 + 63 for
 * a 64-bit byte count. */
#define X2N_LEN 67
static uint64_t x2n[X2N_LEN];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* a(x) * b(x) mod P in the reflected representation. */
static uint64_t multmodp(uint64_t a, uint64_t b) {
  uint64_t m = 1ULL << 63, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0)
        break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ POLY_REFLECTED : b >> 1;
  }
  return p;
}

static void build_tables(void) {
  for (unsigned b = 0; b < 256; b++) {
    uint64_t c = b;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? (c >> 1) ^ POLY_REFLECTED : c >> 1;
    table[0][b] = c;
  }
  for (unsigned b = 0; b < 256; b++)
    for (int t = 1; t < 16; t++)
      table[t][b] = (table[t - 1][b] >> 8) ^ table[0][table[t - 1][b] & 0xff];
  uint64_t p = 1ULL << 62; /* x^1 */
  x2n[0] = p;
  for (int k = 1; k < X2N_LEN; k++)
    x2n[k] = p = multmodp(p, p);
}

static void ensure_tables(void) {
  pthread_once(&tables_once, build_tables);
}

uint64_t crc64nvme_init(void) {
  return ~0ULL;
}

uint64_t crc64nvme_final(uint64_t state) {
  return ~state;
}

/* Little-endian load whatever the host order: the reflected algorithm
 * consumes the lowest-addressed byte first. */
static uint64_t load_le64(const unsigned char *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
         (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
         (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

uint64_t crc64nvme_update(uint64_t crc, const void *buf, size_t n) {
  const unsigned char *p = buf;
  if (!n)
    return crc;
  ensure_tables();
  /* Head bytes until 8-byte alignment, so the main loop's loads are aligned
   * (the compiler turns load_le64 into one mov on little-endian hosts). */
  while (n && ((uintptr_t)p & 7)) {
    crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    n--;
  }
  while (n >= 16) {
    uint64_t a = crc ^ load_le64(p), b = load_le64(p + 8);
    crc = table[15][a & 0xff] ^ table[14][(a >> 8) & 0xff] ^
          table[13][(a >> 16) & 0xff] ^ table[12][(a >> 24) & 0xff] ^
          table[11][(a >> 32) & 0xff] ^ table[10][(a >> 40) & 0xff] ^
          table[9][(a >> 48) & 0xff] ^ table[8][a >> 56] ^ table[7][b & 0xff] ^
          table[6][(b >> 8) & 0xff] ^ table[5][(b >> 16) & 0xff] ^
          table[4][(b >> 24) & 0xff] ^ table[3][(b >> 32) & 0xff] ^
          table[2][(b >> 40) & 0xff] ^ table[1][(b >> 48) & 0xff] ^
          table[0][b >> 56];
    p += 16;
    n -= 16;
  }
  while (n--)
    crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

uint64_t crc64nvme(const void *p, size_t n) {
  return crc64nvme_final(crc64nvme_update(crc64nvme_init(), p, n));
}

uint64_t crc64nvme_combine(uint64_t crc_a, uint64_t crc_b, uint64_t len_b) {
  if (len_b == 0)
    return crc_a;
  ensure_tables();
  /* x^(8*len_b) = product of x^(2^k) over the set bits of len_b, shifted
   * by 3 for the 8 bits per byte. */
  uint64_t xp = 1ULL << 63; /* x^0 */
  for (unsigned k = 3; len_b; len_b >>= 1, k++)
    if (len_b & 1)
      xp = multmodp(x2n[k], xp);
  return multmodp(xp, crc_a) ^ crc_b;
}

void crc64nvme_to_base64(uint64_t crc, char out[CRC64NVME_B64_LEN + 1]) {
  uint8_t be[8];
  for (int i = 0; i < 8; i++)
    be[i] = (uint8_t)(crc >> (56 - 8 * i));
  hb64_encode(be, sizeof be, out);
}

int crc64nvme_from_base64(const char *s, size_t n, uint64_t *crc) {
  /* Canonical form only (hb64_decode): the 2 pad bits of the 11th
   * character must be zero, so each CRC has exactly one accepted
   * spelling. */
  uint8_t be[8];
  if (hb64_decode(s, n, be, sizeof be) != 0)
    return -1;
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = v << 8 | be[i];
  if (crc)
    *crc = v;
  return 0;
}
