/* presign.c - presigned URLs (SigV4 in the query string), built from the
 * staged functions of s3/sigv4: the canonical request signs only the host
 * header and an UNSIGNED-PAYLOAD, and the X-Amz-* parameters, the
 * signature's own excepted, are part of the canonical query. The URL is
 * the one the client would send the request to (path or virtual-hosted
 * style, the endpoint's base path kept). No request is made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../s3/sigv4.h"
#include "base/uri.h"
#include "client_int.h"

/* Builds the URL for time `now` (a parameter, so that tests can pin it). */
static int presign_at(const struct hipobj_client *c, const char *method,
                      const char *bucket, const char *key, unsigned expires_s,
                      time_t now, struct hbuf *url) {
  const struct s3_endpoint *ep = &c->ep;
  char amz_date[17], expires[16];
  s3_sigv4_amz_date(now, amz_date);
  snprintf(expires, sizeof expires, "%u", expires_s);
  struct hbuf host = HBUF_INIT, uri = HBUF_INIT, cred = HBUF_INIT,
              query = HBUF_INIT, creq = HBUF_INIT, signed_hdrs = HBUF_INIT,
              sts = HBUF_INIT;
  if (ep->virtual_hosted)
    hbuf_printf(&host, "%s.%s", bucket, ep->host);
  else
    hbuf_puts(&host, ep->host);
  hbuf_puts(&uri, ep->base_path);
  if (!ep->virtual_hosted) {
    hbuf_putc(&uri, '/');
    huri_encode(&uri, bucket, strlen(bucket), 0);
  }
  hbuf_putc(&uri, '/');
  huri_encode(&uri, key, strlen(key), 1);
  hbuf_printf(&cred, "%s/%.8s/%s/s3/aws4_request", c->cfg.access_key, amz_date,
              c->cfg.region);
  struct hparam params[6] = {
      {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
      {"X-Amz-Credential", hbuf_str(&cred)},
      {"X-Amz-Date", amz_date},
      {"X-Amz-Expires", expires},
      {"X-Amz-SignedHeaders", "host"},
  };
  size_t np = 5;
  if (c->cfg.session_token && *c->cfg.session_token)
    params[np++] =
        (struct hparam){"X-Amz-Security-Token", c->cfg.session_token};
  huri_canonical_query(&query, params, np);
  struct s3_header hdr = {"host", hbuf_str(&host)};
  struct s3_sigv4_input in = {
      .method = method,
      .canonical_uri = hbuf_str(&uri),
      .canonical_query = hbuf_str(&query),
      .headers = &hdr,
      .n_headers = 1,
      .payload_hash = S3_UNSIGNED_PAYLOAD,
      .amz_date = amz_date,
      .region = c->cfg.region,
      .service = "s3",
      .access_key = c->cfg.access_key,
      .secret_key = c->cfg.secret_key,
  };
  int rc = -1;
  char sig[S3_SHA256_HEX_LEN + 1];
  if (!host.oom && !uri.oom && !cred.oom && !query.oom &&
      s3_sigv4_canonical_request(&in, &creq, &signed_hdrs) == 0 &&
      s3_sigv4_string_to_sign(amz_date, c->cfg.region, "s3", hbuf_str(&creq),
                              &sts) == 0 &&
      !sts.oom) {
    s3_sigv4_signature(c->cfg.secret_key, amz_date, c->cfg.region, "s3",
                       hbuf_str(&sts), sig);
    hbuf_printf(url, "%s://%s%s?%s&X-Amz-Signature=%s", ep->scheme,
                hbuf_str(&host), hbuf_str(&uri), hbuf_str(&query), sig);
    rc = url->oom ? -1 : 0;
  }
  hbuf_free(&host);
  hbuf_free(&uri);
  hbuf_free(&cred);
  hbuf_free(&query);
  hbuf_free(&creq);
  hbuf_free(&signed_hdrs);
  hbuf_free(&sts);
  return rc;
}

int hipobj_s3_presign(struct hipobj_client *c, const char *method,
                      const char *bucket, const char *key, unsigned expires_s,
                      char **url, struct hipobj_error *err) {
  const char *op = "Presign";
  static const char *const methods[] = {"GET", "PUT", "HEAD", "DELETE"};
  int rc;
  if (!c || !url || !method)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "client, method or url is NULL");
  *url = NULL;
  if ((rc = hcheck_bucket_key(op, bucket, key, 1, err)))
    return rc;
  const char *m = NULL;
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (!strcasecmp(method, methods[i]))
      m = methods[i];
  if (!m)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "method '%.16s' cannot be presigned (GET, PUT, HEAD or "
                    "DELETE)",
                    method);
  if (expires_s < 1 || expires_s > HIPOBJ_PRESIGN_MAX_SECONDS)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "expiry %u s is outside 1..%u s (SigV4 allows 7 days)",
                    expires_s, HIPOBJ_PRESIGN_MAX_SECONDS);
  if (c->cfg.anonymous || !c->cfg.access_key || !c->cfg.secret_key)
    return herr_set(err, HIPOBJ_E_CONFIG, op,
                    "an anonymous client has no credentials to sign with");
  struct hbuf b = HBUF_INIT;
  if (presign_at(c, m, bucket, key, expires_s, time(NULL), &b) != 0 ||
      !(*url = hbuf_steal(&b))) {
    hbuf_free(&b);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  }
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}
