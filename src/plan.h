/* plan.h - pure arithmetic of transfers: multipart part layout under S3's
 * limits, Range header text, Content-Range parsing. */
#ifndef HIPOBJ_PLAN_H
#define HIPOBJ_PLAN_H

#include <stdint.h>

#define HPLAN_MIN_PART (5ull << 20)
#define HPLAN_MAX_PART (5ull << 30)
#define HPLAN_MAX_PARTS 10000u
#define HPLAN_MAX_OBJECT (5ull << 40)

/* Part size to use for an object of `size` bytes when `wanted` is asked:
 * at least 5 MiB, at most 5 GiB, grown (to a MiB multiple) so that no more
 * than 10,000 parts are needed. -1 when size exceeds 5 TiB. */
int hplan_part_size(uint64_t size, uint64_t wanted, uint64_t *part_size);
/* Number of parts (>= 1) of `size` bytes cut in part_size pieces. */
unsigned hplan_part_count(uint64_t size, uint64_t part_size);
/* Offset and length of 1-based part n. */
void hplan_part(uint64_t size, uint64_t part_size, unsigned n, uint64_t *off,
                uint64_t *len);

/* "bytes=<off>-<off+len-1>", or "bytes=<off>-" when len == 0. out: 64 bytes. */
void hplan_range_header(uint64_t off, uint64_t len, char out[64]);
/* Parses "bytes <first>-<last>/<total>" (total may be '*': UINT64_MAX).
 * -1 when malformed or last < first. */
int hplan_parse_content_range(const char *s, uint64_t *first, uint64_t *last,
                              uint64_t *total);

#endif
