/* plan.c - pure arithmetic of transfers (see plan.h): how an object is cut
 * into multipart parts within S3's limits, the Range header we send and the
 * Content-Range header we check. No I/O, no allocation: every function is
 * safe for any input, including values near UINT64_MAX. */
#include "plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MIB (1ull << 20)

int hplan_part_size(uint64_t size, uint64_t wanted, uint64_t *part_size) {
  if (size > HPLAN_MAX_OBJECT)
    return -1;
  /* A request outside S3's limits is clamped rather than refused: the caller
   * validated user input already, and a clamped value still works. */
  uint64_t ps = wanted;
  if (ps < HPLAN_MIN_PART)
    ps = HPLAN_MIN_PART;
  if (ps > HPLAN_MAX_PART)
    ps = HPLAN_MAX_PART;
  if (hplan_part_count(size, ps) > HPLAN_MAX_PARTS) {
    /* Smallest MiB multiple that fits in 10,000 parts. size <= 5 TiB keeps
     * this below 5 GiB (5 TiB / 10,000 is about 525 MiB). */
    uint64_t min = size / HPLAN_MAX_PARTS + (size % HPLAN_MAX_PARTS != 0);
    ps = (min + MIB - 1) / MIB * MIB;
  }
  *part_size = ps;
  return 0;
}

unsigned hplan_part_count(uint64_t size, uint64_t part_size) {
  if (size == 0 || part_size == 0)
    return 1;
  uint64_t n = size / part_size + (size % part_size != 0);
  return n > UINT32_MAX ? UINT32_MAX : (unsigned)n;
}

void hplan_part(uint64_t size, uint64_t part_size, unsigned n, uint64_t *off,
                uint64_t *len) {
  /* Out-of-range parts are empty and sit at the end of the object. */
  if (n == 0 || part_size == 0 || (uint64_t)(n - 1) > size / part_size) {
    *off = size;
    *len = 0;
    return;
  }
  uint64_t o = (uint64_t)(n - 1) * part_size; /* <= size by the test above */
  uint64_t rest = size - o;
  *off = o;
  *len = rest < part_size ? rest : part_size;
}

void hplan_range_header(uint64_t off, uint64_t len, char out[64]) {
  if (len == 0) {
    snprintf(out, 64, "bytes=%" PRIu64 "-", off);
    return;
  }
  /* A range running past UINT64_MAX can only mean "to the end". */
  uint64_t last = len - 1 > UINT64_MAX - off ? UINT64_MAX : off + (len - 1);
  snprintf(out, 64, "bytes=%" PRIu64 "-%" PRIu64, off, last);
}

/* Parses decimal digits at *p (at least one), advancing *p. */
static int parse_num(const char **p, uint64_t *out) {
  const char *s = *p;
  uint64_t v = 0;
  if (*s < '0' || *s > '9')
    return -1;
  for (; *s >= '0' && *s <= '9'; s++) {
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *p = s;
  *out = v;
  return 0;
}

static int is_ows(char c) {
  return c == ' ' || c == '\t';
}

int hplan_parse_content_range(const char *s, uint64_t *first, uint64_t *last,
                              uint64_t *total) {
  if (!s)
    return -1;
  while (is_ows(*s))
    s++;
  /* Range units are case-insensitive (RFC 9110 section 14.1). */
  if (strncasecmp(s, "bytes", 5) != 0 || !is_ows(s[5]))
    return -1;
  s += 5;
  while (is_ows(*s))
    s++;
  uint64_t f, l, t;
  if (parse_num(&s, &f) != 0 || *s++ != '-' || parse_num(&s, &l) != 0 ||
      *s++ != '/')
    return -1;
  if (*s == '*') {
    t = UINT64_MAX;
    s++;
  } else if (parse_num(&s, &t) != 0) {
    return -1;
  }
  while (is_ows(*s))
    s++;
  if (*s != '\0' || l < f)
    return -1;
  /* A known total must contain the range; UINT64_MAX stands for '*'. */
  if (t != UINT64_MAX && l >= t)
    return -1;
  *first = f;
  *last = l;
  *total = t;
  return 0;
}
