/* fuzz_ranges.c - Range, Content-Range and size parsing: the client's
 * hplan_parse_content_range (src/plan.c) and hipobj_parse_size
 * (src/size.c), and the server's rp_parse_range. Properties: a parsed
 * Content-Range has first <= last < total (total UINT64_MAX for '*'); a
 * Range the client writes (hplan_range_header) is read by the server as
 * exactly that range, cut at the object's end; a parsed size reads back
 * from its decimal form.
 *
 * Input: fields separated by 0xff: [0] a Content-Range, [1] a size text,
 * [2] 24 bytes: offset, length and object size (little-endian). */
#include "fuzz.h"

#include "hipobj.h"
#include "src/plan.h"
#include "tests/server/reqparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fuzz_in in = {data, size};
  char *cr = fuzz_field(in, 0, NULL), *sz = fuzz_field(in, 1, NULL);
  size_t zn;
  char *z = fuzz_field(in, 2, &zn);
  uint64_t f, l, t;
  if (hplan_parse_content_range(cr, &f, &l, &t) == 0)
    FUZZ_CHECK(f <= l && (t == UINT64_MAX || l < t), "%s", cr);

  uint64_t v;
  if (hipobj_parse_size(sz, &v) == HIPOBJ_OK) {
    char back[32];
    uint64_t v2;
    snprintf(back, sizeof back, "%llu", (unsigned long long)v);
    FUZZ_CHECK(hipobj_parse_size(back, &v2) == HIPOBJ_OK && v2 == v,
               "%s = %s does not read back", sz, back);
  }

  uint64_t w[3] = {0, 0, 0};
  memcpy(w, z, zn < sizeof w ? zn : sizeof w);
  uint64_t off = w[0], len = w[1], osize = w[2];
  char h[64];
  hplan_range_header(off, len, h);
  uint64_t roff, rlen;
  int rc = rp_parse_range(h, osize, &roff, &rlen);
  if (off >= osize) {
    FUZZ_CHECK(rc == -1, "%s of %llu: %d", h, (unsigned long long)osize, rc);
  } else {
    uint64_t want = len == 0 || len > osize - off ? osize - off : len;
    FUZZ_CHECK(rc == 1 && roff == off && rlen == want,
               "%s of %llu: %d %llu+%llu", h, (unsigned long long)osize, rc,
               (unsigned long long)roff, (unsigned long long)rlen);
  }
  /* The text written back as a Content-Range the client reads. */
  if (rc == 1) {
    char c[96];
    snprintf(c, sizeof c, "bytes %llu-%llu/%llu", (unsigned long long)roff,
             (unsigned long long)(roff + rlen - 1), (unsigned long long)osize);
    FUZZ_CHECK(hplan_parse_content_range(c, &f, &l, &t) == 0 && f == roff &&
                   l == roff + rlen - 1 && t == osize,
               "%s", c);
  }
  free(cr);
  free(sz);
  free(z);
  return 0;
}
