/* request.c - endpoint parsing, S3 addressing (path / virtual-hosted) and the
 * final signed form of a request (URL + header lines). Pure: no I/O. */
#include "request.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../src/base/strutil.h"
#include "crypto.h"

void s3_endpoint_free(struct s3_endpoint *ep) {
  free(ep->scheme);
  free(ep->host);
  free(ep->base_path);
  memset(ep, 0, sizeof *ep);
}

static int ends_with(const char *s, size_t n, const char *suffix) {
  size_t m = strlen(suffix);
  return n >= m && strncasecmp(s + n - m, suffix, m) == 0;
}

int s3_endpoint_parse(const char *url, int addressing, struct s3_endpoint *ep,
                      struct hipobj_error *err) {
  memset(ep, 0, sizeof *ep);
  const char *rest;
  if (!url || !*url)
    return herr_set(err, HIPOBJ_E_CONFIG, NULL, "endpoint URL is empty");
  if (!strncasecmp(url, "http://", 7)) {
    ep->scheme = strdup("http");
    rest = url + 7;
  } else if (!strncasecmp(url, "https://", 8)) {
    ep->scheme = strdup("https");
    rest = url + 8;
  } else {
    return herr_set(err, HIPOBJ_E_CONFIG, NULL,
                    "endpoint URL '%s' must start with http:// or https://",
                    url);
  }
  size_t hlen = strcspn(rest, "/?#");
  if (hlen == 0 || memchr(rest, '@', hlen)) {
    s3_endpoint_free(ep);
    return herr_set(err, HIPOBJ_E_CONFIG, NULL,
                    "endpoint URL '%s' has no usable host", url);
  }
  if (strpbrk(rest + hlen, "?#")) {
    s3_endpoint_free(ep);
    return herr_set(err, HIPOBJ_E_CONFIG, NULL,
                    "endpoint URL '%s' must not have a query or fragment", url);
  }
  ep->host = hstrndup(rest, hlen);
  const char *path = rest + hlen;
  size_t plen = strlen(path);
  while (plen && path[plen - 1] == '/')
    plen--;
  ep->base_path = hstrndup(path, plen);
  if (!ep->scheme || !ep->host || !ep->base_path) {
    s3_endpoint_free(ep);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, NULL, "out of memory");
  }
  /* AUTO: virtual-hosted style only where it is known to work (AWS);
   * custom endpoints (Ceph, MinIO, local servers) get path style. */
  size_t host_only = strcspn(ep->host, ":");
  ep->virtual_hosted =
      addressing == 2 ||
      (addressing == 0 && ends_with(ep->host, host_only, ".amazonaws.com"));
  return HIPOBJ_OK;
}

int s3_request_header(struct s3_request *r, const char *name,
                      const char *value) {
  if (r->n_headers >= S3_MAX_HEADERS)
    return -1;
  r->headers[r->n_headers].name = name;
  r->headers[r->n_headers].value = value;
  r->n_headers++;
  return 0;
}

int s3_request_param(struct s3_request *r, const char *name,
                     const char *value) {
  if (r->n_params >= S3_MAX_PARAMS)
    return -1;
  r->params[r->n_params].name = name;
  r->params[r->n_params].value = value;
  r->n_params++;
  return 0;
}

void s3_signed_free(struct s3_signed *s) {
  free(s->url);
  for (size_t i = 0; i < s->n_lines; i++)
    free(s->lines[i]);
  free(s->lines);
  memset(s, 0, sizeof *s);
}

static int add_line(struct s3_signed *s, const char *name, const char *value) {
  char **p = realloc(s->lines, (s->n_lines + 1) * sizeof *p);
  if (!p)
    return -1;
  s->lines = p;
  struct hbuf b = HBUF_INIT;
  hbuf_puts(&b, name);
  hbuf_puts(&b, ": ");
  hbuf_puts(&b, value ? value : "");
  char *line = hbuf_steal(&b);
  if (!line)
    return -1;
  s->lines[s->n_lines++] = line;
  return 0;
}

int s3_request_sign(const struct s3_request *r, const struct s3_endpoint *ep,
                    const struct s3_creds *creds, const char *region,
                    time_t now, struct s3_signed *out,
                    struct hipobj_error *err) {
  memset(out, 0, sizeof *out);
  struct hbuf host = HBUF_INIT, uri = HBUF_INIT, query = HBUF_INIT,
              url = HBUF_INIT, auth = HBUF_INIT;
  int rc;
  char amz_date[17];
  s3_sigv4_amz_date(now, amz_date);
  const char *payload = r->payload_hash ? r->payload_hash : S3_UNSIGNED_PAYLOAD;

  /* Host and canonical URI. Keys are encoded once with '/' kept and never
   * normalised: "a//b" and "./x" are distinct S3 keys. */
  if (r->bucket && ep->virtual_hosted)
    hbuf_printf(&host, "%s.%s", r->bucket, ep->host);
  else
    hbuf_puts(&host, ep->host);
  hbuf_puts(&uri, ep->base_path);
  if (r->path_override) {
    hbuf_puts(&uri, r->path_override);
  } else {
    if (r->bucket && !ep->virtual_hosted) {
      hbuf_putc(&uri, '/');
      huri_encode(&uri, r->bucket, strlen(r->bucket), 0);
    }
    hbuf_putc(&uri, '/');
    if (r->key)
      huri_encode(&uri, r->key, strlen(r->key), 1);
  }
  huri_canonical_query(&query, r->params, r->n_params);
  hbuf_printf(&url, "%s://%s%s%s%s", ep->scheme, hbuf_str(&host),
              hbuf_str(&uri), query.len ? "?" : "", hbuf_str(&query));
  if (host.oom || uri.oom || query.oom || url.oom)
    goto oom;

  struct s3_header hdrs[S3_MAX_HEADERS + 5];
  size_t n = 0;
  hdrs[n++] = (struct s3_header){"host", hbuf_str(&host)};
  hdrs[n++] = (struct s3_header){"x-amz-date", amz_date};
  hdrs[n++] = (struct s3_header){"x-amz-content-sha256", payload};
  if (!creds->anonymous && creds->session_token && *creds->session_token)
    hdrs[n++] =
        (struct s3_header){"x-amz-security-token", creds->session_token};
  for (size_t i = 0; i < r->n_headers; i++)
    hdrs[n++] = r->headers[i];

  /* A CR or LF would end the header line (and fail the signature, which
   * would then read as "out of memory"): the caller's value is refused. */
  for (size_t i = 0; i < n; i++) {
    if (hdrs[i].value && strpbrk(hdrs[i].value, "\r\n")) {
      rc = herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, NULL,
                    "the %s header value holds a CR or LF", hdrs[i].name);
      goto done;
    }
  }
  for (size_t i = 0; i < n; i++)
    if (add_line(out, hdrs[i].name, hdrs[i].value) != 0)
      goto oom;
  if (!creds->anonymous) {
    struct s3_sigv4_input in = {
        .method = r->method,
        .canonical_uri = hbuf_str(&uri),
        .canonical_query = hbuf_str(&query),
        .headers = hdrs,
        .n_headers = n,
        .payload_hash = payload,
        .amz_date = amz_date,
        .region = region,
        .service = "s3",
        .access_key = creds->access_key,
        .secret_key = creds->secret_key,
        .key_cache = creds->key_cache,
    };
    if (s3_sigv4_authorization(&in, &auth) != 0 || auth.oom)
      goto oom;
    if (add_line(out, "Authorization", hbuf_str(&auth)) != 0)
      goto oom;
  }
  out->url = hbuf_steal(&url);
  if (!out->url)
    goto oom;
  rc = HIPOBJ_OK;
  goto done;
oom:
  rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, NULL,
                "out of memory while building the request");
  s3_signed_free(out);
done:
  hbuf_free(&host);
  hbuf_free(&uri);
  hbuf_free(&query);
  hbuf_free(&url);
  /* The Authorization value holds no secret, but clear it anyway: it is a
   * bearer-like credential for its 15-minute validity. */
  if (auth.data)
    memset(auth.data, 0, auth.cap);
  hbuf_free(&auth);
  return rc;
}

int s3_check_bucket(const char *bucket, struct hipobj_error *err) {
  size_t n = bucket ? strlen(bucket) : 0;
  if (n < 3 || n > 63)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, NULL,
                    "bucket name '%s' must be 3 to 63 characters long",
                    bucket ? bucket : "");
  for (size_t i = 0; i < n; i++) {
    char c = bucket[i];
    /* Upper case and '_' are refused by AWS but accepted by many
     * path-style servers, so they pass; '/' and controls never can. */
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'))
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, NULL,
                      "bucket name '%s' has an invalid character", bucket);
  }
  return HIPOBJ_OK;
}

/* AWS's rules for a new bucket's name
 * (docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html),
 * each failure naming the rule. */
int s3_check_new_bucket(const char *bucket, struct hipobj_error *err) {
  int rc = s3_check_bucket(bucket, err);
  if (rc != HIPOBJ_OK)
    return rc;
  size_t n = strlen(bucket);
  const char *why = NULL;
  for (size_t i = 0; i < n && !why; i++) {
    char c = bucket[i];
    if (c >= 'A' && c <= 'Z')
      why = "has an upper-case letter";
    else if (c == '_')
      why = "has an underscore";
  }
  int dotted_quad = 1, dots = 0;
  for (size_t i = 0; i < n; i++) {
    if (bucket[i] == '.')
      dots++;
    else if (bucket[i] < '0' || bucket[i] > '9')
      dotted_quad = 0;
  }
  char first = bucket[0], last = bucket[n - 1];
  if (why)
    ;
  else if (!((first >= 'a' && first <= 'z') || (first >= '0' && first <= '9')))
    why = "does not start with a letter or digit";
  else if (!((last >= 'a' && last <= 'z') || (last >= '0' && last <= '9')))
    why = "does not end with a letter or digit";
  else if (strstr(bucket, ".."))
    why = "has two dots in a row";
  else if (strstr(bucket, ".-") || strstr(bucket, "-."))
    why = "has a dash next to a dot";
  else if (dotted_quad && dots == 3)
    why = "looks like an IP address";
  else if (!strncmp(bucket, "xn--", 4) || !strncmp(bucket, "sthree-", 7))
    why = "starts with a reserved prefix (xn--, sthree-)";
  else if (n > 8 && !strcmp(bucket + n - 8, "-s3alias"))
    why = "ends with the reserved suffix -s3alias";
  if (why)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, NULL,
                    "bucket name '%s' %s: a new bucket's name is 3 to 63 "
                    "lower-case letters, digits, dots and dashes, starting "
                    "and ending with a letter or digit",
                    bucket, why);
  return HIPOBJ_OK;
}

int s3_check_key(const char *key, struct hipobj_error *err) {
  size_t n = key ? strlen(key) : 0;
  if (n == 0)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, NULL,
                    "object key is empty");
  if (n > 1024)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, NULL,
                    "object key is %zu bytes long; S3 allows 1024", n);
  return HIPOBJ_OK;
}
