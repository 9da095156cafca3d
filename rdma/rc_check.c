/* rc_check.c - the pure half of the hipobj-rc-v2 client (declared in
 * rc_client.h): header lookup in an answer, the fallback policy of §6.3,
 * and the validation of the PREPARE reply (§3.4) and of FINAL (§4.6).
 * No verbs, no I/O: the unit suite drives these with literal answers,
 * including every tampering a hostile or buggy server could do. */
#include <string.h>
#include <strings.h>

#include "../src/base/crc64nvme.h"
#include "../src/base/error.h"
#include "../src/base/strutil.h"
#include "rc_client.h"

const char *rdma_answer_header(const struct rdma_control_answer *a,
                               const char *name, size_t *len) {
  size_t nlen = strlen(name);
  const char *p = a ? a->headers.data : NULL;
  const char *end = p ? p + a->headers.len : NULL;
  while (p && p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol)
      eol = end;
    const char *colon = memchr(p, ':', (size_t)(eol - p));
    if (colon && (size_t)(colon - p) == nlen && !strncasecmp(p, name, nlen)) {
      const char *v = colon + 1;
      size_t vlen = (size_t)(eol - v);
      hstrtrim(&v, &vlen); /* also drops a '\r' */
      if (len)
        *len = vlen;
      return v;
    }
    p = eol + 1;
  }
  return NULL;
}

int rdma_prepare_fallback_allowed(const struct rdma_control_answer *a,
                                  uint64_t offset, uint64_t size) {
  switch (a->http_status) {
  case 501: /* declined, with or without the marker */
  case 413: /* above the server's limit */
    return 1;
  case 404:
  case 405: /* no protocol echo: the route does not exist at all */
    return rdma_answer_header(a, "X-Amz-Rdma-Protocol", NULL) == NULL;
  case 400: /* versitygw and Ceph cap offset + size at 2^31-1 (§8 item 8) */
    return offset + size > RDMA_SIZE_MAX;
  default:
    return 0;
  }
}

/* The answer is not what the protocol says: the reason in err (operation
 * NULL, the caller says which answer), HIPOBJ_E_PROTOCOL. */
static int bad(struct hipobj_error *err, const char *text) {
  return herr_set(err, HIPOBJ_E_PROTOCOL, NULL, "%s", text);
}

#define HDR(name) rdma_answer_header(a, name, &n)

/* Printable ASCII but the quote (RFC 7232's etagc without obs-text): an
 * ETag or version id goes back to S3 (the Complete body, a query), and
 * one with a control character or a quote would break what carries it. */
static int token_text(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e || s[i] == '"')
      return 0;
  return 1;
}

int rdma_check_prepare_reply(const struct rdma_control_answer *a,
                             enum rdma_op op, struct rdma_prepare_reply *out,
                             struct hipobj_error *err) {
  size_t n = 0;
  const char *v;
  memset(out, 0, sizeof *out);
  if (a->http_status != 200)
    return bad(err, "status is not 200");
  if (!(v = HDR("X-Amz-Rdma-Protocol")) || !rdma_protocol_is_v2(v, n))
    return bad(err, "X-Amz-Rdma-Protocol echo missing or not "
                    "hipobj-rc-v2");
  if (!(v = HDR("X-Amz-Rdma-Session")) || rdma_session_check(v, n) != 0)
    return bad(err, "X-Amz-Rdma-Session missing or not 32 hex digits");
  memcpy(out->session, v, RDMA_SESSION_HEX_LEN);
  out->session[RDMA_SESSION_HEX_LEN] = '\0';
  struct rdma_reply r;
  if (!(v = HDR("X-Amz-Rdma-Reply")))
    return bad(err, "X-Amz-Rdma-Reply missing");
  /* The strict decode refuses an all-zero token: a device-less server
   * "succeeding" (§8 item 12). Its reason is the one reported. */
  int rc = rdma_reply_parse(v, n, &r, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (!r.has_token || r.code != 200)
    return bad(err, "X-Amz-Rdma-Reply is not 200:<server token>");
  if ((r.token.qpn & RDMA_QPN_MAX) == 0)
    return bad(err, "the server token has QPN 0");
  out->token = r.token;
  if (!(v = HDR("X-Amz-Rdma-Psn")) || rdma_psn_parse(v, n, &out->psn) != 0)
    return bad(err, "X-Amz-Rdma-Psn missing or not in 1..0xffffff");
  if (op == RDMA_OP_PUT) {
    if (!(v = HDR("X-Amz-Rdma-Mr-Addr")) ||
        rdma_mr_addr_parse(v, n, &out->mr_addr) != 0 || !out->mr_addr)
      return bad(err, "PUT staging X-Amz-Rdma-Mr-Addr missing or 0");
    if (!(v = HDR("X-Amz-Rdma-Mr-Rkey")) ||
        rdma_rkey_parse(v, n, &out->mr_rkey) != 0 || !out->mr_rkey)
      return bad(err, "PUT staging X-Amz-Rdma-Mr-Rkey missing or 0");
  }
  return HIPOBJ_OK;
}

int rdma_check_final(const struct rdma_control_answer *a, enum rdma_op op,
                     uint32_t cookie, uint64_t size, struct rdma_final *out,
                     struct hipobj_error *err) {
  size_t n = 0;
  const char *v;
  memset(out, 0, sizeof *out);
  if (a->http_status != 200 && !(op == RDMA_OP_PUT && a->http_status == 204))
    return bad(err, op == RDMA_OP_PUT ? "status is not 200 or 204"
                                      : "status is not 200");
  if (!(v = HDR("X-Amz-Rdma-Protocol")) || !rdma_protocol_is_v2(v, n))
    return bad(err, "X-Amz-Rdma-Protocol echo missing");
  uint32_t echo;
  if (!(v = HDR("X-Amz-Rdma-Cookie")) || rdma_cookie_parse(v, n, &echo) != 0)
    return bad(err, "cookie echo missing or malformed");
  if (echo != cookie)
    return bad(err, "cookie echo differs from the session cookie");
  if (!(v = HDR("X-Amz-Rdma-Bytes-Transferred")) ||
      rdma_u64_parse(v, n, &out->bytes) != 0)
    return bad(err, "X-Amz-Rdma-Bytes-Transferred missing or "
                    "malformed");
  if (out->bytes > size)
    return bad(err, "more bytes transferred than requested");
  /* Only a GET may be clamped at the object end (§5.1); a PUT is one WRITE
   * of exactly size bytes that every server checks. */
  if (op == RDMA_OP_PUT && out->bytes != size)
    return bad(err, "a PUT transferred fewer bytes than sent");
  if (op == RDMA_OP_GET && out->bytes == 0)
    return bad(err, "a GET transferred no byte");
  if ((v = HDR("X-Amz-Rdma-Etag")) || (v = HDR("ETag"))) {
    const char *u;
    size_t ul;
    rdma_etag_unquote(v, n, &u, &ul);
    /* Room for the quotes the caller puts back (HIPOBJ_ETAG_MAX). */
    if (ul + 3 > sizeof out->etag)
      return bad(err, "ETag too long");
    if (!token_text(u, ul))
      return bad(err, "ETag holds a character S3 never sends");
    memcpy(out->etag, u, ul);
    out->etag[ul] = '\0';
  }
  /* Servers send both version headers; the rdma one wins (§8 item 5). */
  if ((v = HDR("X-Amz-Rdma-Version-Id")) || (v = HDR("x-amz-version-id"))) {
    if (n >= sizeof out->version_id)
      return bad(err, "version id too long");
    if (!token_text(v, n))
      return bad(err, "version id holds a character S3 never sends");
    memcpy(out->version_id, v, n);
    out->version_id[n] = '\0';
  }
  uint64_t c1 = 0, c2 = 0;
  int has1 = 0, has2 = 0;
  if ((v = HDR("X-Amz-Rdma-Checksum"))) {
    if (rdma_checksum_parse(v, n, &c1) != 0)
      return bad(err, "X-Amz-Rdma-Checksum malformed");
    has1 = 1;
  }
  if ((v = HDR("x-amz-rdma-checksum-crc64nvme"))) {
    if (rdma_checksum_parse_b64(v, n, &c2) != 0)
      return bad(err, "x-amz-rdma-checksum-crc64nvme malformed");
    has2 = 1;
  }
  if (has1 && has2 && c1 != c2)
    return bad(err, "the two checksum headers disagree");
  out->has_crc = has1 || has2;
  out->crc = has1 ? c1 : c2;
  return HIPOBJ_OK;
}
