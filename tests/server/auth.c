/* auth.c - SigV4 verification for hipobj-server: Authorization headers and
 * presigned URLs, with the library's own staged signer (s3/sigv4.h).
 *
 * The canonical request is rebuilt from what was received: the raw path
 * (S3 signs the path as sent, never normalised), the query re-encoded
 * canonically, and the values of exactly the headers the client listed in
 * SignedHeaders. Signatures are compared in constant time. A path that a
 * client sent with characters its signer encoded differently (say a literal
 * '!' signed as %21) is tried once more in S3's canonical encoding. The
 * Authorization header, credential scope, SignedHeaders and X-Amz-Expires
 * are parsed strictly (reqparse.c): a malformed one is a 400 naming it,
 * never a 500 (which clients retry) or a guess. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "s3/sigv4.h"
#include "s3/xml.h"
#include "server.h"
#include "src/base/uri.h"

#define ALGO "AWS4-HMAC-SHA256"

struct sig_parts {
  char ak[128];
  char date[9];
  char region[64];
  char service[32];
  char *signed_headers; /* malloc'd */
  char signature[80];
  char amz_date[17];
};

static int is_hex64(const char *s) {
  if (!s || strlen(s) != 64)
    return 0;
  for (int i = 0; i < 64; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
          (s[i] >= 'A' && s[i] <= 'F')))
      return 0;
  return 1;
}

static int ct_equal(const char *a, const char *b, size_t n) {
  volatile unsigned char d = 0;
  for (size_t i = 0; i < n; i++)
    d |= (unsigned char)(a[i] ^ b[i]);
  return d == 0;
}

/* "YYYYMMDDTHHMMSSZ" -> Unix time; -1 when malformed. */
static int parse_amz_date(const char *s, time_t *out) {
  if (!s || strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z')
    return -1;
  for (int i = 0; i < 15; i++)
    if (i != 8 && (s[i] < '0' || s[i] > '9'))
      return -1;
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  tm.tm_year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 +
               (s[3] - '0') - 1900;
  tm.tm_mon = (s[4] - '0') * 10 + (s[5] - '0') - 1;
  tm.tm_mday = (s[6] - '0') * 10 + (s[7] - '0');
  tm.tm_hour = (s[9] - '0') * 10 + (s[10] - '0');
  tm.tm_min = (s[11] - '0') * 10 + (s[12] - '0');
  tm.tm_sec = (s[13] - '0') * 10 + (s[14] - '0');
  if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
    return -1;
  *out = timegm(&tm);
  return 0;
}

static int malformed(struct req *r, int presigned, const char *what) {
  if (presigned)
    return req_fail(r, 400, "AuthorizationQueryParametersError",
                    "Error parsing the X-Amz-Credential parameter: %s", what);
  return req_fail(r, 400, "AuthorizationHeaderMalformed",
                  "The authorization header is malformed; %s", what);
}

static void take_credential(struct sig_parts *p,
                            const struct rp_credential *c) {
  memcpy(p->ak, c->ak, sizeof p->ak);
  memcpy(p->date, c->date, sizeof c->date);
  memcpy(p->region, c->region, sizeof p->region);
  memcpy(p->service, c->service, sizeof p->service);
}

static int parse_header_auth(struct req *r, const char *authz,
                             struct sig_parts *p) {
  struct rp_authz a;
  const char *why = "";
  switch (rp_parse_authorization(authz, &a, &why)) {
  case RP_AUTHZ_OK:
    break;
  case RP_AUTHZ_SIGV2:
    return req_fail(r, 400, "InvalidRequest",
                    "The authorization mechanism you have provided is not "
                    "supported. Please use AWS4-HMAC-SHA256.");
  case RP_AUTHZ_OTHER_ALGO:
    return req_fail(r, 400, "InvalidArgument",
                    "Unsupported Authorization Type (use " ALGO ")");
  default:
    return malformed(r, 0, why);
  }
  take_credential(p, &a.cred);
  p->signed_headers = strndup(a.signed_headers, a.signed_headers_len);
  if (!p->signed_headers)
    return req_fail(r, 500, "InternalError", "out of memory");
  if (a.signature_len < sizeof p->signature) {
    memcpy(p->signature, a.signature, a.signature_len);
    p->signature[a.signature_len] = '\0';
  } else { /* kept too long to be 64 digits: SignatureDoesNotMatch */
    memset(p->signature, 'x', sizeof p->signature - 1);
    p->signature[sizeof p->signature - 1] = '\0';
  }
  const char *d = req_header(r, "x-amz-date");
  if (d) {
    snprintf(p->amz_date, sizeof p->amz_date, "%s", d);
  } else if ((d = req_header(r, "Date"))) {
    int64_t t;
    if (s3_parse_http_date(d, &t) == 0)
      s3_sigv4_amz_date((time_t)t, p->amz_date);
  }
  return 0;
}

static int parse_query_auth(struct req *r, struct sig_parts *p, long *expires) {
  const char *alg = req_param(r, "X-Amz-Algorithm");
  if (strcmp(alg, ALGO))
    return req_fail(r, 400, "AuthorizationQueryParametersError",
                    "X-Amz-Algorithm only supports \"" ALGO "\"");
  const char *cred = req_param(r, "X-Amz-Credential");
  const char *sh = req_param(r, "X-Amz-SignedHeaders");
  const char *sig = req_param(r, "X-Amz-Signature");
  const char *date = req_param(r, "X-Amz-Date");
  const char *exp = req_param(r, "X-Amz-Expires");
  if (!cred || !sh || !sig || !date || !exp)
    return req_fail(r, 400, "AuthorizationQueryParametersError",
                    "Query-string authentication version 4 requires the "
                    "X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, "
                    "X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires "
                    "parameters.");
  struct rp_credential c;
  if (rp_parse_credential(cred, strlen(cred), &c) != 0)
    return malformed(r, 1,
                     "expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/"
                     "aws4_request\".");
  take_credential(p, &c);
  if (rp_parse_expires(exp, expires) != 0)
    return req_fail(r, 400, "AuthorizationQueryParametersError",
                    "X-Amz-Expires must be a number of seconds from 1 to %d",
                    RP_MAX_EXPIRES);
  const char *why = "";
  if (rp_check_signed_headers(sh, strlen(sh), &why) != 0)
    return req_fail(r, 400, "AuthorizationQueryParametersError",
                    "X-Amz-SignedHeaders: %s", why);
  p->signed_headers = strdup(sh);
  if (!p->signed_headers)
    return req_fail(r, 500, "InternalError", "out of memory");
  snprintf(p->signature, sizeof p->signature, "%s", sig);
  snprintf(p->amz_date, sizeof p->amz_date, "%s", date);
  return 0;
}

static const struct srv_cred *find_cred(const struct server *s,
                                        const char *ak) {
  for (size_t i = 0; i < s->n_creds; i++)
    if (!strcmp(s->creds[i].access_key, ak))
      return &s->creds[i];
  return NULL;
}

static int list_has(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    size_t m = strcspn(p, ";");
    if (m == n && !strncasecmp(p, name, n))
      return 1;
    p += m + (p[m] == ';');
  }
  return 0;
}

static int set_payload_mode(struct req *r, const char *v) {
  if (is_hex64(v)) {
    r->pay = PAY_HASHED;
    for (int i = 0; i < 64; i++)
      r->payload_hash[i] =
          (char)((v[i] >= 'A' && v[i] <= 'F') ? v[i] + 32 : v[i]);
    r->payload_hash[64] = '\0';
  } else if (!strcmp(v, S3_UNSIGNED_PAYLOAD)) {
    r->pay = PAY_UNSIGNED;
  } else if (!strcmp(v, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")) {
    r->pay = PAY_CHUNKED_SIGNED;
  } else if (!strcmp(v, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER")) {
    r->pay = PAY_CHUNKED_SIGNED;
    r->pay_trailer = 1;
  } else if (!strcmp(v, "STREAMING-UNSIGNED-PAYLOAD-TRAILER")) {
    r->pay = PAY_CHUNKED_UNSIGNED;
    r->pay_trailer = 1;
  } else {
    return req_fail(r, 400, "InvalidArgument",
                    "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, "
                    "STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER], "
                    "STREAMING-UNSIGNED-PAYLOAD-TRAILER or a SHA-256 in hex");
  }
  return 0;
}

/* Signature over the request as received, with canonical_uri as given. */
static int compute(struct req *r, const struct sig_parts *p,
                   const char *canonical_uri, const char *payload,
                   int presigned, char sig[65], struct hbuf *creq) {
  int rc = -1;
  struct hparam *qp = calloc(r->n_params + 1, sizeof *qp);
  size_t nq = 0, cap = 8, nh = 0;
  struct s3_header *hh = malloc(cap * sizeof *hh);
  struct hbuf query = HBUF_INIT, sh = HBUF_INIT, sts = HBUF_INIT;
  if (!qp || !hh)
    goto done;
  for (size_t i = 0; i < r->n_params; i++) {
    if (presigned && !strcmp(r->params[i].name, "X-Amz-Signature"))
      continue;
    qp[nq].name = r->params[i].name;
    qp[nq].value = r->params[i].value ? r->params[i].value : "";
    nq++;
  }
  if (huri_canonical_query(&query, qp, nq) != 0)
    goto done;
  /* Every occurrence of each signed header, in the order received (the
   * signer joins repeats with ','); an absent one signs as empty. */
  for (const char *s = p->signed_headers; *s;) {
    size_t m = strcspn(s, ";");
    char name[128];
    if (m == 0 || m >= sizeof name)
      goto done;
    memcpy(name, s, m);
    name[m] = '\0';
    int found = 0;
    for (size_t i = 0; i <= r->n_hdrs; i++) {
      const char *v = NULL;
      if (i < r->n_hdrs && !strcasecmp(r->hdrs[i].name, name))
        v = r->hdrs[i].value;
      else if (i == r->n_hdrs && !found)
        v = "";
      if (!v)
        continue;
      found = 1;
      if (nh == cap) {
        cap *= 2;
        struct s3_header *nhh = realloc(hh, cap * sizeof *hh);
        if (!nhh)
          goto done;
        hh = nhh;
      }
      hh[nh].name = strdup(name);
      hh[nh].value = v;
      if (!hh[nh++].name)
        goto done;
    }
    s += m + (s[m] == ';');
  }
  struct s3_sigv4_input in = {
      .method = r->method,
      .canonical_uri = canonical_uri,
      .canonical_query = hbuf_str(&query),
      .headers = hh,
      .n_headers = nh,
      .payload_hash = payload,
      .amz_date = p->amz_date,
      .region = p->region,
      .service = "s3",
  };
  if (s3_sigv4_canonical_request(&in, creq, &sh) != 0 ||
      s3_sigv4_string_to_sign(p->amz_date, p->region, "s3", hbuf_str(creq),
                              &sts) != 0)
    goto done;
  s3_sigv4_signature_cached(r->cred->key_cache, r->cred->secret_key,
                            p->amz_date, p->region, "s3", hbuf_str(&sts), sig);
  rc = strlen(sig) == 64 ? 0 : -1;
done:
  for (size_t i = 0; hh && i < nh; i++)
    free((char *)hh[i].name);
  free(hh);
  free(qp);
  hbuf_free(&query);
  hbuf_free(&sh);
  hbuf_free(&sts);
  return rc;
}

/* The canonical request at debug level: what a client author needs to find
 * a signing bug. A session token is the only secret it could hold. */
static void log_creq(struct req *r, const struct hbuf *creq) {
  if (r->srv->log_level < SLOG_DEBUG)
    return;
  struct hbuf out = HBUF_INIT;
  for (const char *s = hbuf_str(creq); *s;) {
    size_t n = strcspn(s, "\n");
    if (!strncmp(s, "x-amz-security-token:", 21))
      hbuf_puts(&out, "x-amz-security-token:<redacted>");
    else
      hbuf_append(&out, s, n);
    hbuf_puts(&out, "\n  ");
    s += n + (s[n] == '\n');
  }
  srv_log(r->srv, SLOG_DEBUG, "%s: canonical request we computed:\n  %s", r->id,
          hbuf_str(&out));
  hbuf_free(&out);
}

static int verify(struct req *r, struct sig_parts *p, int presigned,
                  long expires) {
  const struct server *s = r->srv;
  if (!p->amz_date[0])
    return req_fail(r, 403, "AccessDenied",
                    "AWS authentication requires a valid Date or "
                    "x-amz-date header");
  time_t t;
  if (parse_amz_date(p->amz_date, &t) != 0)
    return presigned ? req_fail(r, 400, "AuthorizationQueryParametersError",
                                "X-Amz-Date must be in the ISO8601 Long "
                                "Format \"yyyyMMdd'T'HHmmss'Z'\"")
                     : req_fail(r, 403, "AccessDenied",
                                "AWS authentication requires a valid Date "
                                "or x-amz-date header");
  if (strncmp(p->date, p->amz_date, 8))
    return malformed(r, presigned,
                     "Invalid credential date. Date is not the same as "
                     "X-Amz-Date.");
  if (strcmp(p->service, "s3"))
    return malformed(r, presigned, "incorrect service; expecting 's3'");
  if (strcmp(p->region, s->region)) {
    char msg[200];
    snprintf(msg, sizeof msg, "the region '%s' is wrong; expecting '%s'",
             p->region, s->region);
    return malformed(r, presigned, msg);
  }
  r->cred = find_cred(s, p->ak);
  if (!r->cred)
    return req_fail(r, 403, "InvalidAccessKeyId",
                    "The AWS Access Key Id you provided does not exist in "
                    "our records.");
  time_t now = time(NULL);
  if (presigned && now > t + expires)
    return req_fail(r, 403, "AccessDenied", "Request has expired");
  if ((!presigned && (t < now - SRV_SKEW_S)) || t > now + SRV_SKEW_S)
    return req_fail(r, 403, "RequestTimeTooSkewed",
                    "The difference between the request time and the "
                    "server's time is too large.");
  if (!list_has(p->signed_headers, "host"))
    return req_fail(r, 403, "AccessDenied",
                    "The host header must be signed (SignedHeaders)");
  /* Unsigned x-amz-rdma-* headers could redirect an RDMA transfer. */
  for (size_t i = 0; i < r->n_hdrs; i++)
    if (!strncasecmp(r->hdrs[i].name, "x-amz-rdma-", 11) &&
        !list_has(p->signed_headers, r->hdrs[i].name))
      return req_fail(r, 403, "AccessDenied", "Header %s must be signed",
                      r->hdrs[i].name);

  const char *payload = req_header(r, "x-amz-content-sha256");
  if (!payload && !presigned)
    return req_fail(r, 400, "InvalidRequest",
                    "Missing required header for this request: "
                    "x-amz-content-sha256");
  if (!payload)
    payload = S3_UNSIGNED_PAYLOAD;
  if (set_payload_mode(r, payload) != 0)
    return -1;
  if (strlen(p->signature) != 64)
    return req_fail(r, 403, "SignatureDoesNotMatch",
                    "The request signature we calculated does not match the "
                    "signature you provided (it is not 64 hex digits).");

  char sig[65];
  struct hbuf creq = HBUF_INIT;
  int rc = compute(r, p, r->raw_path, payload, presigned, sig, &creq);
  int ok = rc == 0 && ct_equal(sig, p->signature, 64);
  if (!ok && rc == 0) {
    struct hbuf dec = HBUF_INIT, enc = HBUF_INIT;
    if (huri_decode(&dec, r->raw_path, strlen(r->raw_path)) == 0 &&
        huri_encode(&enc, dec.data, dec.len, 1) == 0 &&
        strcmp(hbuf_str(&enc), r->raw_path)) {
      hbuf_reset(&creq);
      rc = compute(r, p, hbuf_str(&enc), payload, presigned, sig, &creq);
      ok = rc == 0 && ct_equal(sig, p->signature, 64);
    }
    hbuf_free(&dec);
    hbuf_free(&enc);
  }
  if (!ok)
    log_creq(r, &creq);
  hbuf_free(&creq);
  if (rc != 0)
    return req_fail(r, 500, "InternalError",
                    "cannot compute the signature (out of memory)");
  if (!ok)
    return req_fail(r, 403, "SignatureDoesNotMatch",
                    "The request signature we calculated does not match the "
                    "signature you provided. Check your key and signing "
                    "method.");
  memcpy(r->amz_date, p->amz_date, sizeof r->amz_date);
  memcpy(r->seed_sig, sig, sizeof r->seed_sig);
  return 0;
}

int auth_check(struct req *r) {
  const char *authz = req_header(r, "Authorization");
  int presigned = req_has_param(r, "X-Amz-Algorithm");
  if (authz && presigned)
    return req_fail(r, 400, "InvalidArgument",
                    "Only one auth mechanism allowed; only the "
                    "X-Amz-Algorithm query parameter or the Authorization "
                    "header should be specified");
  if (!authz && !presigned)
    return req_fail(r, 403, "AccessDenied",
                    "Access Denied (anonymous requests are not allowed: "
                    "sign them with AWS Signature Version 4)");
  struct sig_parts p;
  memset(&p, 0, sizeof p);
  long expires = 0;
  int rc = presigned ? parse_query_auth(r, &p, &expires)
                     : parse_header_auth(r, authz, &p);
  if (rc == 0)
    rc = verify(r, &p, presigned, expires);
  free(p.signed_headers);
  return rc;
}

void auth_chunk_signature(const struct req *r, const char *prev_sig,
                          const char *chunk_sha_hex, char out[65]) {
  struct hbuf sts = HBUF_INIT;
  hbuf_printf(&sts,
              "AWS4-HMAC-SHA256-PAYLOAD\n%s\n%.8s/%s/s3/aws4_request\n%s\n"
              "%s\n%s",
              r->amz_date, r->amz_date, r->srv->region, prev_sig,
              S3_EMPTY_SHA256, chunk_sha_hex);
  out[0] = '\0';
  if (!sts.oom)
    s3_sigv4_signature_cached(r->cred->key_cache, r->cred->secret_key,
                              r->amz_date, r->srv->region, "s3", hbuf_str(&sts),
                              out);
  hbuf_free(&sts);
}

/* AWS's "trailing headers" SigV4: the trailer chains on the final (empty)
 * chunk's signature and signs the hash of its canonical lines. */
void auth_trailer_signature(const struct req *r, const char *prev_sig,
                            const char *trailer_sha_hex, char out[65]) {
  struct hbuf sts = HBUF_INIT;
  hbuf_printf(
      &sts, "AWS4-HMAC-SHA256-TRAILER\n%s\n%.8s/%s/s3/aws4_request\n%s\n%s",
      r->amz_date, r->amz_date, r->srv->region, prev_sig, trailer_sha_hex);
  out[0] = '\0';
  if (!sts.oom)
    s3_sigv4_signature_cached(r->cred->key_cache, r->cred->secret_key,
                              r->amz_date, r->srv->region, "s3", hbuf_str(&sts),
                              out);
  hbuf_free(&sts);
}

int auth_is_loopback(struct req *r) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!ci || !ci->client_addr)
    return 0;
  const struct sockaddr *sa = ci->client_addr;
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 =
        (const struct sockaddr_in6 *)(const void *)sa;
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
      return 1;
    return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
           in6->sin6_addr.s6_addr[12] == 127;
  }
  return 0;
}
