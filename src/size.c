/* size.c - hipobj_parse_size(): human-written sizes ("8MiB", "1.5G") for
 * command lines and configuration.
 *
 * Like `aws s3` (and its multipart_chunksize setting), every suffix is a
 * power of 1024 whatever its spelling: "K", "KB" and "KiB" all mean 1024
 * bytes, "M", "MB" and "MiB" all mean 1048576 bytes, and so on up to T.
 * Suffixes are case-insensitive and the B is optional. A fraction is accepted
 * when the scaled result is a whole number of bytes ("1.5GiB", "0.5K"); the
 * arithmetic is exact (no floating point), so "0.1K" (102.4 bytes) is
 * rejected rather than rounded. */
#include "hipobj.h"

#include <ctype.h>
#include <stdint.h>

/* Powers of five up to 5^27, the largest that fits in 64 bits. */
static uint64_t pow5(unsigned d) {
  uint64_t v = 1;
  while (d--)
    v *= 5;
  return v;
}

static int is_space(char c) {
  return isspace((unsigned char)c) != 0;
}

HIPOBJ_API int hipobj_parse_size(const char *text, uint64_t *out) {
  if (!text || !out)
    return HIPOBJ_E_INVALID_ARGUMENT;
  const char *p = text;
  while (is_space(*p))
    p++;

  /* Whole part. */
  uint64_t whole = 0;
  if (*p < '0' || *p > '9')
    return HIPOBJ_E_INVALID_ARGUMENT; /* empty, sign, or junk */
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (whole > (UINT64_MAX - d) / 10)
      return HIPOBJ_E_INVALID_ARGUMENT;
    whole = whole * 10 + d;
  }

  /* Fraction, kept as frac / 10^fdigits with trailing zeros dropped. */
  uint64_t frac = 0;
  unsigned fdigits = 0, pending_zeros = 0;
  if (*p == '.') {
    p++;
    if (*p < '0' || *p > '9')
      return HIPOBJ_E_INVALID_ARGUMENT;
    for (; *p >= '0' && *p <= '9'; p++) {
      if (*p == '0') {
        pending_zeros++;
        continue;
      }
      /* Zeros only count once a non-zero digit follows them. */
      for (; pending_zeros; pending_zeros--, fdigits++) {
        if (frac > UINT64_MAX / 10)
          return HIPOBJ_E_INVALID_ARGUMENT;
        frac *= 10;
      }
      unsigned d = (unsigned)(*p - '0');
      if (frac > (UINT64_MAX - d) / 10)
        return HIPOBJ_E_INVALID_ARGUMENT; /* too many digits to be exact */
      frac = frac * 10 + d;
      fdigits++;
    }
  }

  while (is_space(*p))
    p++;

  /* Suffix: [KMGT][i][B] or B, any case. */
  unsigned shift = 0;
  switch (*p) {
  case 'k':
  case 'K':
    shift = 10;
    break;
  case 'm':
  case 'M':
    shift = 20;
    break;
  case 'g':
  case 'G':
    shift = 30;
    break;
  case 't':
  case 'T':
    shift = 40;
    break;
  default:
    break;
  }
  if (shift) {
    p++;
    if (*p == 'i' || *p == 'I')
      p++;
  }
  if (*p == 'b' || *p == 'B')
    p++;
  while (is_space(*p))
    p++;
  if (*p != '\0')
    return HIPOBJ_E_INVALID_ARGUMENT;

  /* whole << shift, checking overflow. */
  if (shift && whole > (UINT64_MAX >> shift))
    return HIPOBJ_E_INVALID_ARGUMENT;
  uint64_t bytes = whole << shift;

  if (frac) {
    /* frac * 2^shift / 10^d = (frac / 5^d) * 2^(shift - d): whole bytes only
     * when 5^d divides frac and enough factors of two remain. */
    if (fdigits > 27)
      return HIPOBJ_E_INVALID_ARGUMENT; /* 5^d > 2^64 > frac: never whole */
    uint64_t p5 = pow5(fdigits);
    if (frac % p5 != 0)
      return HIPOBJ_E_INVALID_ARGUMENT;
    uint64_t q = frac / p5; /* < 2^fdigits since frac < 10^fdigits */
    uint64_t extra;
    if (fdigits <= shift) {
      extra = q << (shift - fdigits); /* < 2^shift <= 2^40 */
    } else {
      unsigned down = fdigits - shift;
      if (down >= 64 || (q & ((1ull << down) - 1)) != 0)
        return HIPOBJ_E_INVALID_ARGUMENT;
      extra = q >> down;
    }
    if (bytes > UINT64_MAX - extra)
      return HIPOBJ_E_INVALID_ARGUMENT;
    bytes += extra;
  }
  *out = bytes;
  return HIPOBJ_OK;
}
