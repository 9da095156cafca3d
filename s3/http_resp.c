/* http_resp.c - an answer, collected and read: the header lines and body
 * bytes of an answer go into struct s3_http_resp here, whoever framed them
 * (libcurl in http.c, or http_wire.c), so both paths keep the same
 * fields, limits and sink calls; then a header kept in extra_headers is
 * looked up, and a redirect put into words (S3 answers 301/307 for a
 * bucket in another region; the library does not follow, so the message
 * must say where to point the endpoint). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../src/base/strutil.h"
#include "http.h"
#include "http_int.h"

#define DEFAULT_BODY_LIMIT (1u << 20)

static void copy_value(char *dst, size_t dstsz, const char *v, size_t n) {
  if (n >= dstsz)
    n = dstsz - 1;
  memcpy(dst, v, n);
  dst[n] = '\0';
}

size_t http_resp_header_line(struct s3_http_xfer *x, const char *data,
                             size_t len) {
  struct s3_http_resp *r = &x->resp;
  if (len >= 5 && !strncmp(data, "HTTP/", 5)) {
    /* A new status line (after 100 Continue): forget earlier headers. */
    s3_http_xfer_reset(x);
    return len;
  }
  const char *colon = memchr(data, ':', len);
  if (!colon)
    return len;
  size_t nlen = (size_t)(colon - data);
  const char *v = colon + 1;
  size_t vlen = len - nlen - 1;
  hstrtrim(&v, &vlen);
#define IS(name) (nlen == sizeof(name) - 1 && !strncasecmp(data, name, nlen))
  if (IS("content-length")) {
    uint64_t cl;
    if (hparse_u64(v, vlen, &cl) == 0 && cl <= INT64_MAX)
      r->content_length = (int64_t)cl;
  } else if (IS("content-range")) {
    copy_value(r->content_range, sizeof r->content_range, v, vlen);
  } else if (IS("etag")) {
    copy_value(r->etag, sizeof r->etag, v, vlen);
  } else if (IS("last-modified")) {
    copy_value(r->last_modified, sizeof r->last_modified, v, vlen);
  } else if (IS("content-type")) {
    copy_value(r->content_type, sizeof r->content_type, v, vlen);
  } else if (IS("x-amz-request-id")) {
    copy_value(r->request_id, sizeof r->request_id, v, vlen);
  } else if (IS("location")) {
    copy_value(r->location, sizeof r->location, v, vlen);
  } else if (nlen > 6 && !strncasecmp(data, "x-amz-", 6)) {
    hbuf_append(&r->extra_headers, data, nlen);
    hbuf_puts(&r->extra_headers, ": ");
    hbuf_append(&r->extra_headers, v, vlen);
    hbuf_putc(&r->extra_headers, '\n');
  }
#undef IS
  return len;
}

int http_resp_body(struct s3_http_xfer *x, long status, const char *data,
                   size_t len) {
  int ok = status >= 200 && status < 300;
  /* The sink may look at the answer's status (a GET's checksum does). */
  x->resp.status = status;
  if (ok && x->sink) {
    if (x->sink(x->sink_ctx, data, len) != 0) {
      x->resp.aborted_by_sink = 1;
      return -1;
    }
    x->resp.body_bytes += len;
    return 0;
  }
  size_t limit = !ok             ? S3_HTTP_ERROR_BODY_LIMIT
                 : x->body_limit ? x->body_limit
                                 : DEFAULT_BODY_LIMIT;
  size_t room = x->resp.body.len < limit ? limit - x->resp.body.len : 0;
  if (ok && len > room) {
    /* A 2xx document larger than any S3 answer we parse: refuse rather
     * than grow without bound. */
    x->resp.aborted_by_sink = 1;
    snprintf(x->resp.transport_msg, sizeof x->resp.transport_msg,
             "response body exceeds %zu bytes", limit);
    return -1;
  }
  if (len > room) {
    /* An error body longer than any error document: keep its beginning
     * and end the transfer. Reading the rest to keep the connection would
     * read forever from a server whose error body never ends; a fresh
     * connection costs less than that risk. */
    hbuf_append(&x->resp.body, data, room);
    x->resp.body_bytes += room;
    x->resp.error_body_cut = 1;
    snprintf(x->resp.transport_msg, sizeof x->resp.transport_msg,
             "error body exceeds %zu bytes", limit);
    return -1;
  }
  if (hbuf_append(&x->resp.body, data, len) != 0)
    return -1;
  x->resp.body_bytes += len;
  return 0;
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
