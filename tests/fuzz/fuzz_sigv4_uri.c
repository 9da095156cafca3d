/* fuzz_sigv4_uri.c - S3's URI encoding and the SigV4 canonical forms
 * (src/base/uri.c, s3/sigv4.c). Properties: decoding what was encoded
 * gives the bytes back, with and without '/' kept; encoding what was
 * decoded gives a string that decodes to the same bytes; the canonical
 * query does not depend on the order of the parameters; a canonical
 * request either fails (leaving its buffers as they were) or has its
 * signed-header list made of the names given, lower-cased and sorted.
 *
 * Input: fields separated by 0xff: [0] bytes to encode and decode, [1] a
 * query string, [2] header lines "name:value" separated by '\n', [3] a
 * method, [4] a canonical URI. */
#include "fuzz.h"

#include "s3/sigv4.h"
#include "src/base/buf.h"
#include "src/base/uri.h"

static void round_trips(const char *s, size_t n) {
  for (int keep = 0; keep < 2; keep++) {
    struct hbuf enc = HBUF_INIT, dec = HBUF_INIT;
    FUZZ_CHECK(huri_encode(&enc, s, n, keep) == 0, "encode failed");
    for (size_t i = 0; i < enc.len; i++)
      FUZZ_CHECK(enc.data[i] > ' ' && enc.data[i] < 0x7f, "encoded byte 0x%02x",
                 (unsigned char)enc.data[i]);
    FUZZ_CHECK(huri_decode(&dec, enc.data, enc.len) == 0, "decode failed");
    FUZZ_CHECK(dec.len == n && (!n || !memcmp(dec.data, s, n)),
               "decode(encode(x)) != x");
    hbuf_free(&enc);
    hbuf_free(&dec);
  }
  /* The input as an encoded string. */
  struct hbuf dec = HBUF_INIT, enc = HBUF_INIT, again = HBUF_INIT;
  if (huri_decode(&dec, s, n) == 0) {
    FUZZ_CHECK(dec.len <= n, "decoding grew the string");
    huri_encode(&enc, dec.data ? dec.data : "", dec.len, 0);
    FUZZ_CHECK(huri_decode(&again, enc.data, enc.len) == 0 &&
                   again.len == dec.len &&
                   (!dec.len || !memcmp(again.data, dec.data, dec.len)),
               "re-encoding lost bytes");
  } else {
    FUZZ_CHECK(dec.len == 0, "a failed decode left bytes");
  }
  hbuf_free(&dec);
  hbuf_free(&enc);
  hbuf_free(&again);
}

#define MAXP 16

static void canonical_query(char *q) {
  struct hparam p[MAXP], r[MAXP];
  size_t n = 0;
  for (char *t = q; t && *t && n < MAXP;) {
    char *amp = strchr(t, '&');
    if (amp)
      *amp = '\0';
    char *eq = strchr(t, '=');
    if (eq)
      *eq = '\0';
    p[n].name = t;
    p[n].value = eq ? eq + 1 : NULL;
    n++;
    t = amp ? amp + 1 : NULL;
  }
  for (size_t i = 0; i < n; i++)
    r[i] = p[n - 1 - i];
  struct hbuf a = HBUF_INIT, b = HBUF_INIT;
  int ra = huri_canonical_query(&a, p, n);
  int rb = huri_canonical_query(&b, r, n);
  FUZZ_CHECK(ra == rb, "order changed the outcome");
  FUZZ_CHECK(ra != 0 || !strcmp(hbuf_str(&a), hbuf_str(&b)),
             "order changed the canonical query: %s vs %s", hbuf_str(&a),
             hbuf_str(&b));
  hbuf_free(&a);
  hbuf_free(&b);
}

static void canonical_request(char *lines, const char *method,
                              const char *uri) {
  struct s3_header h[MAXP];
  size_t n = 0;
  for (char *t = lines; t && *t && n < MAXP;) {
    char *nl = strchr(t, '\n');
    if (nl)
      *nl = '\0';
    char *colon = strchr(t, ':');
    if (colon)
      *colon = '\0';
    h[n].name = t;
    h[n].value = colon ? colon + 1 : "";
    n++;
    t = nl ? nl + 1 : NULL;
  }
  struct s3_sigv4_input in = {.method = method,
                              .canonical_uri = uri,
                              .canonical_query = "",
                              .headers = h,
                              .n_headers = n,
                              .payload_hash = "UNSIGNED-PAYLOAD",
                              .amz_date = "20130524T000000Z",
                              .region = "us-east-1",
                              .service = "s3"};
  struct hbuf out = HBUF_INIT, sh = HBUF_INIT;
  hbuf_puts(&out, "keep");
  hbuf_puts(&sh, "keep");
  if (s3_sigv4_canonical_request(&in, &out, &sh) != 0) {
    FUZZ_CHECK(!strcmp(hbuf_str(&out), "keep") &&
                   !strcmp(hbuf_str(&sh), "keep"),
               "a failed canonical request changed its buffers");
  } else {
    const char *list = hbuf_str(&sh) + 4;
    for (const char *c = list; *c; c++)
      FUZZ_CHECK(!(*c >= 'A' && *c <= 'Z'), "upper case in %s", list);
    /* Sorted, each name once. */
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *c = list; *c;) {
      size_t m = strcspn(c, ";");
      if (prev) {
        size_t k = prev_len < m ? prev_len : m;
        int d = memcmp(prev, c, k);
        FUZZ_CHECK(d < 0 || (d == 0 && prev_len < m), "unsorted %s", list);
      }
      prev = c;
      prev_len = m;
      c += m + (c[m] == ';');
    }
    struct hbuf sts = HBUF_INIT;
    s3_sigv4_string_to_sign(in.amz_date, in.region, in.service,
                            hbuf_str(&out) + 4, &sts);
    hbuf_free(&sts);
  }
  hbuf_free(&out);
  hbuf_free(&sh);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fuzz_in in = {data, size};
  size_t n;
  char *raw = fuzz_field(in, 0, &n);
  round_trips(raw, n);
  char *q = fuzz_field(in, 1, NULL);
  canonical_query(q);
  char *lines = fuzz_field(in, 2, NULL), *method = fuzz_field(in, 3, NULL),
       *uri = fuzz_field(in, 4, NULL);
  canonical_request(lines, method, uri);
  free(raw);
  free(q);
  free(lines);
  free(method);
  free(uri);
  return 0;
}
