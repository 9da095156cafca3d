/* reqparse.c - the pure request parsers of hipobj-server (see reqparse.h).
 *
 * Why strict: each of these values is either signed (the query, the
 * credential scope) or decides what is read or sent (ranges, limits), so
 * a lenient reading is a place where the server and a client, or the
 * signature and the operation, can disagree about a request. */
#include "reqparse.h"

#include <stdlib.h>
#include <string.h>

#include "src/base/buf.h"
#include "src/base/uri.h"

int rp_parse_u64(const char *s, size_t n, uint64_t *out) {
  if (!s || n == 0)
    return -1;
  uint64_t v = 0;
  int big = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      big = 1; /* keep going: junk later on is still junk */
    else
      v = v * 10 + d;
  }
  if (big)
    return -2;
  *out = v;
  return 0;
}

/* ---- request target ------------------------------------------------------ */

static int fail(const char **why, const char *text, int status) {
  if (why)
    *why = text;
  return status;
}

/* name[=value] of one query component, decoded. */
static int add_param(struct rp_target *t, const char *s, size_t n,
                     const char **why) {
  if (t->n_params >= RP_MAX_PARAMS)
    return fail(why, "too many query parameters", RP_BAD_ARGUMENT);
  const char *eq = memchr(s, '=', n);
  size_t nlen = eq ? (size_t)(eq - s) : n;
  struct hbuf name = HBUF_INIT, value = HBUF_INIT;
  int rc = RP_OK;
  if (huri_decode(&name, s, nlen) != 0 ||
      (eq && huri_decode(&value, eq + 1, n - nlen - 1) != 0))
    rc = fail(why, "malformed %-escape in the query string", RP_BAD_ARGUMENT);
  else if (name.oom || value.oom)
    rc = fail(why, "out of memory", RP_NO_MEMORY);
  else if (strlen(hbuf_str(&name)) != name.len ||
           strlen(hbuf_str(&value)) != value.len)
    rc = fail(why, "a NUL byte (%00) in the query string", RP_BAD_ARGUMENT);
  struct rp_param *np = NULL;
  if (rc == RP_OK &&
      !(np = realloc(t->params, (t->n_params + 1) * sizeof *t->params)))
    rc = fail(why, "out of memory", RP_NO_MEMORY);
  if (rc == RP_OK) {
    t->params = np;
    np[t->n_params].name = hbuf_steal(&name);
    np[t->n_params].value = eq ? hbuf_steal(&value) : NULL;
    if (!np[t->n_params].name || (eq && !np[t->n_params].value)) {
      free(np[t->n_params].name);
      free(np[t->n_params].value);
      rc = fail(why, "out of memory", RP_NO_MEMORY);
    } else {
      t->n_params++;
    }
  }
  hbuf_free(&name);
  hbuf_free(&value);
  return rc;
}

int rp_parse_target(const char *u, struct rp_target *t, const char **why) {
  memset(t, 0, sizeof *t);
  t->raw_query = "";
  if (!u || u[0] != '/')
    return fail(why,
                "Couldn't parse the specified URI (it must start with '/').",
                RP_BAD_URI);
  size_t plen = strcspn(u, "?");
  if (!(t->raw_path = strndup(u, plen)))
    return fail(why, "out of memory", RP_NO_MEMORY);
  t->raw_query = u[plen] == '?' ? u + plen + 1 : "";
  for (const char *q = t->raw_query; *q;) {
    size_t n = strcspn(q, "&");
    int rc = n ? add_param(t, q, n, why) : RP_OK;
    if (rc != RP_OK)
      return rc;
    q += n + (q[n] == '&');
  }
  struct hbuf dec = HBUF_INIT;
  if (huri_decode(&dec, t->raw_path, plen) != 0 || dec.oom ||
      strlen(hbuf_str(&dec)) != dec.len) {
    int nomem = dec.oom;
    hbuf_free(&dec);
    return nomem ? fail(why, "out of memory", RP_NO_MEMORY)
                 : fail(why,
                        "Couldn't parse the specified URI (bad %-escape "
                        "or NUL byte).",
                        RP_BAD_URI);
  }
  const char *p = hbuf_str(&dec) + 1;
  int rc = RP_OK;
  if (*p) {
    size_t blen = strcspn(p, "/");
    if (!(t->bucket = strndup(p, blen)))
      rc = RP_NO_MEMORY;
    else if (p[blen] == '/' && p[blen + 1] && !(t->key = strdup(p + blen + 1)))
      rc = RP_NO_MEMORY;
  }
  hbuf_free(&dec);
  return rc == RP_OK ? RP_OK : fail(why, "out of memory", rc);
}

void rp_target_free(struct rp_target *t) {
  for (size_t i = 0; i < t->n_params; i++) {
    free(t->params[i].name);
    free(t->params[i].value);
  }
  free(t->params);
  free(t->raw_path);
  free(t->bucket);
  free(t->key);
  memset(t, 0, sizeof *t);
  t->raw_query = "";
}

/* ---- Range --------------------------------------------------------------- */

/* Digits at *p, advancing it: 0, -1 when there are none, -2 when the
 * number does not fit 64 bits. */
static int range_number(const char **p, uint64_t *out) {
  const char *s = *p;
  size_t n = strspn(s, "0123456789");
  *p = s + n;
  return rp_parse_u64(s, n, out);
}

int rp_parse_range(const char *h, uint64_t size, uint64_t *off, uint64_t *len) {
  if (!h)
    return 0;
  while (*h == ' ')
    h++;
  if (strncmp(h, "bytes=", 6) || strchr(h, ','))
    return 0;
  const char *p = h + 6;
  uint64_t first, last;
  int rc;
  if (*p == '-') {
    p++;
    rc = range_number(&p, &last);
    if (rc == -1 || *p)
      return 0;
    /* A suffix longer than 2^64-1 bytes: refused rather than guessed. */
    if (rc == -2 || last == 0 || size == 0)
      return -1;
    *off = last >= size ? 0 : size - last;
    *len = size - *off;
    return 1;
  }
  rc = range_number(&p, &first);
  if (rc == -1 || *p != '-')
    return 0;
  if (rc == -2)
    return -1; /* starts past any object */
  p++;
  if (!*p) {
    if (first >= size)
      return -1;
    *off = first;
    *len = size - first;
    return 1;
  }
  rc = range_number(&p, &last);
  if (rc == -1 || *p)
    return 0;
  if (rc == -2 || first >= size)
    return -1;
  if (last < first)
    return 0;
  if (last >= size)
    last = size - 1;
  *off = first;
  *len = last - first + 1;
  return 1;
}

/* ---- list limits --------------------------------------------------------- */

int rp_list_limit(const char *v, unsigned cap, unsigned *out) {
  *out = cap;
  if (!v)
    return 0;
  uint64_t n;
  int rc = rp_parse_u64(v, strlen(v), &n);
  if (rc == -1)
    return -1;
  *out = rc == -2 || n >= cap ? cap : (unsigned)n;
  return 0;
}

/* ---- SigV4 fields -------------------------------------------------------- */

/* Printable ASCII other than space, '/', ',' and ';': what may stand in a
 * scope field without making the header ambiguous. */
static int scope_chars(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c <= ' ' || c >= 0x7f || c == '/' || c == ',' || c == ';')
      return 0;
  }
  return n > 0;
}

int rp_parse_credential(const char *v, size_t n, struct rp_credential *c) {
  memset(c, 0, sizeof *c);
  const char *f[5];
  size_t len[5];
  size_t k = 0, start = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i < n && v[i] != '/')
      continue;
    if (k == 5)
      return -1; /* a sixth field */
    f[k] = v + start;
    len[k++] = i - start;
    start = i + 1;
  }
  if (k != 5)
    return -1;
  for (size_t i = 0; i < 5; i++)
    if (!scope_chars(f[i], len[i]))
      return -1;
  if (len[0] >= sizeof c->ak || len[1] != 8 || len[2] >= sizeof c->region ||
      len[3] >= sizeof c->service || len[4] != 12 ||
      memcmp(f[4], "aws4_request", 12))
    return -1;
  for (size_t i = 0; i < 8; i++)
    if (f[1][i] < '0' || f[1][i] > '9')
      return -1;
  memcpy(c->ak, f[0], len[0]);
  memcpy(c->date, f[1], 8);
  memcpy(c->region, f[2], len[2]);
  memcpy(c->service, f[3], len[3]);
  return 0;
}

/* RFC 7230 tchar, lower case only (SigV4 lists header names so). */
static int header_name_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         (c && strchr("!#$%&'*+-.^_`|~", c));
}

int rp_check_signed_headers(const char *s, size_t n, const char **why) {
  if (!s || n == 0)
    return fail(why, "SignedHeaders is empty", -1);
  const char *prev = NULL;
  size_t prev_len = 0;
  for (size_t i = 0; i <= n;) {
    size_t m = 0;
    while (i + m < n && s[i + m] != ';')
      m++;
    if (m == 0 || m > 127)
      return fail(why, "SignedHeaders has an empty or overlong name", -1);
    for (size_t j = 0; j < m; j++)
      if (!header_name_char((unsigned char)s[i + j]))
        return fail(why,
                    "SignedHeaders names must be lower-case header "
                    "names separated by ';'",
                    -1);
    if (prev) {
      size_t k = prev_len < m ? prev_len : m;
      int c = memcmp(prev, s + i, k);
      if (c > 0 || (c == 0 && prev_len >= m))
        return fail(why, "SignedHeaders must be sorted, each name once", -1);
    }
    prev = s + i;
    prev_len = m;
    i += m + 1;
  }
  return 0;
}

int rp_parse_expires(const char *s, long *out) {
  uint64_t v;
  if (!s || rp_parse_u64(s, strlen(s), &v) != 0 || v < 1 || v > RP_MAX_EXPIRES)
    return -1;
  *out = (long)v;
  return 0;
}

#define ALGO "AWS4-HMAC-SHA256"

int rp_parse_authorization(const char *authz, struct rp_authz *a,
                           const char **why) {
  memset(a, 0, sizeof *a);
  if (!strncmp(authz, "AWS ", 4))
    return fail(why, "SigV2", RP_AUTHZ_SIGV2);
  size_t alen = strlen(ALGO);
  if (strncmp(authz, ALGO, alen) || authz[alen] != ' ')
    return fail(why, "Unsupported Authorization Type (use " ALGO ")",
                RP_AUTHZ_OTHER_ALGO);
  int have_cred = 0;
  const char *s = authz + alen;
  for (int first = 1;; first = 0) {
    s += strspn(s, " ");
    if (!*s)
      break;
    if (!first) {
      if (*s != ',')
        return fail(why, "components must be separated by ','",
                    RP_AUTHZ_MALFORMED);
      s++;
      s += strspn(s, " ");
    }
    size_t n = strcspn(s, ", ");
    const char *eq = memchr(s, '=', n);
    if (!eq)
      return fail(why,
                  "expecting Credential=..., SignedHeaders=..., "
                  "Signature=...",
                  RP_AUTHZ_MALFORMED);
    size_t klen = (size_t)(eq - s), vlen = n - klen - 1;
    const char *v = eq + 1;
    if (klen == 10 && !strncmp(s, "Credential", 10) && !have_cred) {
      if (rp_parse_credential(v, vlen, &a->cred) != 0)
        return fail(why,
                    "the Credential is mal-formed; expecting "
                    "\"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".",
                    RP_AUTHZ_CREDENTIAL);
      have_cred = 1;
    } else if (klen == 13 && !strncmp(s, "SignedHeaders", 13) &&
               !a->signed_headers) {
      if (rp_check_signed_headers(v, vlen, why) != 0)
        return RP_AUTHZ_SIGNED_HDRS;
      a->signed_headers = v;
      a->signed_headers_len = vlen;
    } else if (klen == 9 && !strncmp(s, "Signature", 9) && !a->signature &&
               vlen) {
      a->signature = v;
      a->signature_len = vlen;
    } else {
      return fail(why,
                  "an unknown, empty or repeated component; expecting "
                  "Credential, SignedHeaders and Signature once each",
                  RP_AUTHZ_MALFORMED);
    }
    s += n;
  }
  if (!have_cred || !a->signed_headers || !a->signature)
    return fail(why, "Credential, SignedHeaders and Signature are required",
                RP_AUTHZ_MALFORMED);
  return RP_AUTHZ_OK;
}
