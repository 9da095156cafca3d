/* http_resp.c - reading an answer the HTTP engine (http.c) collected: a
 * header kept in extra_headers, and a redirect put into words (S3 answers
 * 301/307 for a bucket in another region; the library does not follow, so
 * the message must say where to point the endpoint). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../src/base/strutil.h"
#include "http.h"

static void copy_value(char *dst, size_t dstsz, const char *v, size_t n) {
  if (n >= dstsz)
    n = dstsz - 1;
  memcpy(dst, v, n);
  dst[n] = '\0';
}

int s3_http_resp_header(const struct s3_http_resp *r, const char *name,
                        char *out, size_t cap) {
  size_t nlen = strlen(name);
  const char *p = hbuf_str(&r->extra_headers);
  while (*p) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (len > nlen + 1 && !strncasecmp(p, name, nlen) && p[nlen] == ':') {
      const char *v = p + nlen + 1;
      size_t vlen = len - nlen - 1;
      hstrtrim(&v, &vlen);
      if (cap)
        copy_value(out, cap, v, vlen);
      return 1;
    }
    p += len + (eol ? 1 : 0);
  }
  return 0;
}

/* Copies s[0..n) to out keeping host-name characters only: a server's text
 * that ends up in messages, and maybe on a terminal. */
static void copy_host_text(char *out, size_t cap, const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < cap; i++) {
    char c = s[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || strchr("-._:[]", c);
    out[k++] = ok && c ? c : '?';
  }
  out[k] = '\0';
}

int s3_http_redirect_text(const struct s3_http_resp *r, char *out, size_t cap) {
  long st = r->status;
  if (st != 301 && st != 302 && st != 303 && st != 307 && st != 308)
    return 0;
  char where[160] = "", region[64] = "";
  const char *loc = r->location, *host = strstr(loc, "://");
  if (host) {
    host += 3;
    size_t n = strcspn(host, "/?#");
    const char *at = memchr(host, '@', n); /* never show credentials */
    if (at) {
      n -= (size_t)(at + 1 - host);
      host = at + 1;
    }
    copy_host_text(where, sizeof where, host, n);
  }
  char v[64];
  if (s3_http_resp_header(r, "x-amz-bucket-region", v, sizeof v))
    copy_host_text(region, sizeof region, v, strlen(v));
  const char *why = "not followed: it would carry the request's signature "
                    "to another host";
  if (where[0])
    snprintf(out, cap, "redirected to %s%s%s%s (%s); point the endpoint there",
             where, region[0] ? " (region " : "", region, region[0] ? ")" : "",
             why);
  else if (loc[0] == '/')
    snprintf(out, cap, "redirected to another path on this host (%s)", why);
  else if (region[0])
    snprintf(out, cap,
             "redirected: the bucket is in region %s (%s); set that region "
             "and its endpoint",
             region, why);
  else
    snprintf(out, cap, "redirected without a Location (%s)", why);
  return 1;
}
