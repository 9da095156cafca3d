/* fuzz_server_req.c - hipobj-server's pure request parsers
 * (tests/server/reqparse.c): the request target and its query, the
 * Authorization header, credential scopes, SignedHeaders, X-Amz-Expires,
 * list limits and the Range header. Properties: what parses holds what
 * reqparse.h promises (decoded names without NUL, at most 128 parameters;
 * a credential that reads back to the text it came from; SignedHeaders
 * sorted lower-case names; expires in 1..604800; limits within their cap;
 * a satisfiable range inside the object and never empty).
 *
 * Input: fields separated by 0xff: [0] a request target, [1] an
 * Authorization value, [2] a credential, [3] SignedHeaders, [4] an
 * X-Amz-Expires, [5] a list limit, [6] a Range header, [7] 8 bytes of
 * object size (little-endian). */
#include "fuzz.h"

#include "tests/server/reqparse.h"

static void target(const char *u) {
  struct rp_target t;
  const char *why = NULL;
  int rc = rp_parse_target(u, &t, &why);
  if (rc == RP_OK) {
    FUZZ_CHECK(t.raw_path && t.raw_path[0] == '/', "raw path");
    FUZZ_CHECK(t.n_params <= RP_MAX_PARAMS, "%zu params", t.n_params);
    FUZZ_CHECK(!t.key || t.bucket, "a key without a bucket");
    FUZZ_CHECK(!t.bucket || !strchr(t.bucket, '/'), "'/' in the bucket");
  } else {
    FUZZ_CHECK(why && why[0], "a failure without a reason");
  }
  rp_target_free(&t);
}

static void credential(const char *v) {
  struct rp_credential c;
  if (rp_parse_credential(v, strlen(v), &c) != 0)
    return;
  char back[512];
  snprintf(back, sizeof back, "%s/%s/%s/%s/aws4_request", c.ak, c.date,
           c.region, c.service);
  FUZZ_CHECK(!strcmp(back, v), "credential %s read as %s", v, back);
  for (int i = 0; i < 8; i++)
    FUZZ_CHECK(c.date[i] >= '0' && c.date[i] <= '9', "date %s", c.date);
}

static void signed_headers(const char *s, size_t n) {
  if (rp_check_signed_headers(s, n, NULL) != 0)
    return;
  FUZZ_CHECK(n > 0 && s[0] != ';' && s[n - 1] != ';', "empty name in %s", s);
  for (size_t i = 0; i < n; i++)
    FUZZ_CHECK(!(s[i] >= 'A' && s[i] <= 'Z') && s[i] > ' ' && s[i] < 0x7f,
               "character 0x%02x", (unsigned char)s[i]);
}

static void authorization(const char *v) {
  struct rp_authz a;
  if (rp_parse_authorization(v, &a, NULL) != RP_AUTHZ_OK)
    return;
  FUZZ_CHECK(a.signed_headers && a.signature && a.signature_len,
             "a part missing");
  FUZZ_CHECK(rp_check_signed_headers(a.signed_headers, a.signed_headers_len,
                                     NULL) == 0,
             "SignedHeaders taken unchecked");
}

static void range(const char *h, uint64_t size) {
  uint64_t off = 0, len = 0;
  int rc = rp_parse_range(h, size, &off, &len);
  FUZZ_CHECK(rc >= -1 && rc <= 1, "rc %d", rc);
  if (rc == 1) {
    FUZZ_CHECK(len >= 1 && off < size && len <= size - off,
               "range %llu+%llu of %llu", (unsigned long long)off,
               (unsigned long long)len, (unsigned long long)size);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fuzz_in in = {data, size};
  char *f[7];
  size_t len[7];
  for (unsigned i = 0; i < 7; i++)
    f[i] = fuzz_field(in, i, &len[i]);
  size_t zn;
  char *z = fuzz_field(in, 7, &zn);
  uint64_t osize = 0;
  memcpy(&osize, z, zn < 8 ? zn : 8);

  target(f[0]);
  authorization(f[1]);
  credential(f[2]);
  signed_headers(f[3], len[3]);
  long e;
  if (rp_parse_expires(f[4], &e) == 0)
    FUZZ_CHECK(e >= 1 && e <= RP_MAX_EXPIRES, "expires %ld", e);
  unsigned lim;
  if (rp_list_limit(f[5], 1000, &lim) == 0)
    FUZZ_CHECK(lim <= 1000, "limit %u", lim);
  uint64_t v;
  if (rp_parse_u64(f[5], len[5], &v) == 0) {
    char back[32];
    snprintf(back, sizeof back, "%llu", (unsigned long long)v);
    /* Leading zeros aside, the digits are the number. */
    const char *digits = f[5] + strspn(f[5], "0");
    FUZZ_CHECK(!strcmp(back, *digits ? digits : "0"), "%s read as %s", f[5],
               back);
  }
  range(f[6], osize);
  range(f[6], osize & 0xffff);
  for (unsigned i = 0; i < 7; i++)
    free(f[i]);
  free(z);
  return 0;
}
