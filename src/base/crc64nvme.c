/* crc64nvme.c - CRC-64/NVME (see crc64nvme.h): a table-driven slice-by-16
 * that runs on any CPU and is the reference, and on x86-64 CPUs with
 * PCLMULQDQ a carry-less-multiply folding version chosen at run time.
 *
 * The checksum runs over every byte a GET or PUT moves, so it must keep up
 * with the data path without eating the CPU the transfer needs: slice-by-16
 * folds 16 input bytes per step through sixteen 256-entry tables (32 KiB,
 * built once on first use) and runs at about 2 GB/s per core (slice-by-8
 * measured 1.5 GB/s); that is 0.5 CPU seconds per GiB, more than a whole
 * GET into host memory costs. The folding version (below) is several times
 * faster. The code is built without -march=native so that it runs on any
 * x86-64 and under qemu TCG: the folding function alone is compiled for
 * PCLMULQDQ + SSE4.1 (a target attribute) and used only when the CPU says
 * it has them.
 *
 * Combination follows the GF(2) polynomial method zlib uses for CRC-32:
 * CRC(A||B) = CRC(A) * x^(8|B|) mod P  xor  CRC(B). The init and xorout
 * values (both all ones) cancel out of that identity, so no correction term
 * is needed. */
#include "crc64nvme.h"

#include <pthread.h>
#include <string.h>

#include "codec.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC64_CLMUL 1
#include <immintrin.h>
#endif

/* 0xAD93D23594C93659 bit-reversed: the reflected form the shifts use. */
#define POLY_REFLECTED 0x9A6C9329AC4BC9B5ULL

static uint64_t table[16][256];
/* x2n[k] = x^(2^k) mod P, reflected (bit 63 is x^0); k up to 3 + 63 for
 * a 64-bit byte count. */
#define X2N_LEN 67
static uint64_t x2n[X2N_LEN];
/* Folding constants (see the folding section): fold_k[i] moves a 128-bit
 * block forward by 128 * (i + 1) bits. */
#define FOLD_MAX 8
static uint64_t fold_k[FOLD_MAX][2];
static int use_clmul;
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

/* x^n mod P, reflected: the product of x^(2^k) over the set bits of n. */
static uint64_t xpow(uint64_t n) {
  uint64_t xp = 1ULL << 63; /* x^0 */
  for (unsigned k = 0; n; n >>= 1, k++)
    if (n & 1)
      xp = multmodp(x2n[k], xp);
  return xp;
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
  /* See "folding" below for why these exponents. */
  for (unsigned i = 0; i < FOLD_MAX; i++) {
    uint64_t d = 128 * (i + 1);
    fold_k[i][0] = xpow(d + 63);
    fold_k[i][1] = xpow(d - 1);
  }
#ifdef CRC64_CLMUL
  __builtin_cpu_init();
  use_clmul =
      __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
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

uint64_t crc64nvme_update_table(uint64_t crc, const void *buf, size_t n) {
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

/* ---- folding with carry-less multiplication ------------------------------
 *
 * The idea is the one of Intel's "Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ" (Gopal et al., 2009); the derivation here is
 * this file's own.
 *
 * Notation. The message is a bit string, each byte least significant bit
 * first (a reflected CRC); its polynomial M(x) gives the first bit the
 * highest degree, and the CRC register after it is M(x) * x^64 mod P(x)
 * (init and xorout aside: the register of the table code is XORed into the
 * next 8 bytes, which is how init enters). A reflected n-bit value holds
 * the coefficient of x^(n-1-k) in its bit k: a 64-bit register or constant
 * (bit 63 is x^0), and a 16-byte block loaded little-endian into a 128-bit
 * register (bit k is message bit k of the block). Such a block X splits
 * into its low quadword h (the high-degree half: X = h * x^64 + l) and its
 * high quadword l.
 *
 * PCLMULQDQ of two reflected 64-bit values a, b gives c with c_k = xor of
 * a_i b_j over i + j = k; read as a reflected 128-bit value (x^(127-k) per
 * bit) that is x * A(x) * B(x): one factor x too many, because bit 127 of
 * the product is always 0.
 *
 * Folding. A block X that is followed by d more message bits stands for
 * X * x^d, and X * x^d = h * x^(64+d) + l * x^d. Modulo P, x^(64+d) and
 * x^d can be replaced by their 64-bit remainders; with the extra factor x
 * of PCLMULQDQ taken into the constants,
 *     X * x^d  ==  clmul(h, x^(d+63) mod P)  xor  clmul(l, x^(d-1) mod P),
 * a 128-bit value congruent to X * x^d that can be XORed into the block d
 * bits later. fold_k[i] = {x^(d+63) mod P, x^(d-1) mod P} for
 * d = 128 * (i + 1), computed by build_tables() from the polynomial (xpow).
 *
 * The loop keeps 8 such blocks in flight (128 bytes a step, d = 1024) so
 * that the multiplier's latency overlaps, folds them into one (block i is
 * 128 * (7 - i) bits before the last), folds in the remaining whole
 * blocks (d = 128), and leaves one block X congruent to everything read.
 * The register after it is X * x^64 mod P, which is exactly what the table
 * code computes when fed X's 16 bytes from a zero register; the bytes
 * after the last whole block go through the table code too. */

#ifdef CRC64_CLMUL
#define CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

CLMUL_TARGET static inline __m128i fold(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                       _mm_clmulepi64_si128(x, k, 0x11));
}

CLMUL_TARGET static inline __m128i consts(unsigned i) {
  /* low quadword: the constant for h; high quadword: the one for l */
  return _mm_set_epi64x((long long)fold_k[i][1], (long long)fold_k[i][0]);
}

CLMUL_TARGET static inline __m128i load(const unsigned char *p) {
  return _mm_loadu_si128((const __m128i *)(const void *)p);
}

CLMUL_TARGET static uint64_t update_clmul(uint64_t crc, const unsigned char *p,
                                          size_t n) {
  /* Eight named blocks, not an array: the compiler keeps them in
   * registers (an array stayed on the stack at -O2, at a third of the
   * speed). */
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi64_si128((long long)crc));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  __m128i x4 = load(p + 64), x5 = load(p + 80), x6 = load(p + 96);
  __m128i x7 = load(p + 112);
  p += 128;
  n -= 128;
  const __m128i k8 = consts(7);
  while (n >= 128) {
    x0 = _mm_xor_si128(fold(x0, k8), load(p));
    x1 = _mm_xor_si128(fold(x1, k8), load(p + 16));
    x2 = _mm_xor_si128(fold(x2, k8), load(p + 32));
    x3 = _mm_xor_si128(fold(x3, k8), load(p + 48));
    x4 = _mm_xor_si128(fold(x4, k8), load(p + 64));
    x5 = _mm_xor_si128(fold(x5, k8), load(p + 80));
    x6 = _mm_xor_si128(fold(x6, k8), load(p + 96));
    x7 = _mm_xor_si128(fold(x7, k8), load(p + 112));
    p += 128;
    n -= 128;
  }
  /* Block i is 128 * (7 - i) bits before block 7. */
  __m128i acc = _mm_xor_si128(x7, fold(x6, consts(0)));
  acc = _mm_xor_si128(acc, fold(x5, consts(1)));
  acc = _mm_xor_si128(acc, fold(x4, consts(2)));
  acc = _mm_xor_si128(acc, fold(x3, consts(3)));
  acc = _mm_xor_si128(acc, fold(x2, consts(4)));
  acc = _mm_xor_si128(acc, fold(x1, consts(5)));
  acc = _mm_xor_si128(acc, fold(x0, consts(6)));
  const __m128i k1 = consts(0);
  while (n >= 16) {
    acc = _mm_xor_si128(fold(acc, k1), load(p));
    p += 16;
    n -= 16;
  }
  unsigned char last[16];
  _mm_storeu_si128((__m128i *)(void *)last, acc);
  crc = crc64nvme_update_table(0, last, sizeof last);
  return crc64nvme_update_table(crc, p, n);
}
#endif

/* Below this the table code is as fast (the folding sets up 8 blocks). */
#define CLMUL_MIN 256

int crc64nvme_has_clmul(void) {
  ensure_tables();
  return use_clmul;
}

uint64_t crc64nvme_update_clmul(uint64_t crc, const void *p, size_t n) {
  ensure_tables();
#ifdef CRC64_CLMUL
  if (use_clmul && n >= CLMUL_MIN)
    return update_clmul(crc, p, n);
#endif
  return crc64nvme_update_table(crc, p, n);
}

uint64_t crc64nvme_update(uint64_t crc, const void *p, size_t n) {
  return crc64nvme_update_clmul(crc, p, n);
}

uint64_t crc64nvme(const void *p, size_t n) {
  return crc64nvme_final(crc64nvme_update(crc64nvme_init(), p, n));
}

uint64_t crc64nvme_shift(uint64_t crc, uint64_t len) {
  if (len == 0)
    return crc;
  ensure_tables();
  /* x^(8*len): the bits of len shifted by 3 for the 8 bits per byte (a
   * byte count up to 2^64 - 1 needs x2n up to index 66). */
  uint64_t xp = 1ULL << 63; /* x^0 */
  for (unsigned k = 3; len; len >>= 1, k++)
    if (len & 1)
      xp = multmodp(x2n[k], xp);
  return multmodp(xp, crc);
}

uint64_t crc64nvme_combine(uint64_t crc_a, uint64_t crc_b, uint64_t len_b) {
  return crc64nvme_shift(crc_a, len_b) ^ crc_b;
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
