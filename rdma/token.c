/* token.c - pure codecs of the hipobj-rc-v2 wire protocol (see token.h).
 *
 * Peers disagree on hex case, digit counts and padding (wire spec §8 items
 * 3 and 4), so every emitter here produces the single normative form and
 * every parser accepts the documented variants and nothing more: a value
 * that is neither is a malformed header (400), never guessed at. */
#include "token.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "../src/base/codec.h"
#include "../src/base/crc64nvme.h"
#include "../src/base/strutil.h"

/* HTTP optional whitespace around a field value is not part of it. */
static void trim(const char **s, size_t *n) {
  while (*n && (**s == ' ' || **s == '\t')) {
    (*s)++;
    (*n)--;
  }
  while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
    (*n)--;
}

/* A malformed value: the reason (never the value, which may be secret) in
 * err with operation NULL; returns the status. */
static int bad(struct hipobj_error *err, const char *text) {
  return herr_set(err, HIPOBJ_E_PROTOCOL, NULL, "%s", text);
}

/* rdma_target_parse runs on the server, on a request: the caller's input. */
static int bad_input(struct hipobj_error *err, const char *text) {
  return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, NULL, "%s", text);
}

/* Between min and max hex digits, nothing else (no 0x, no sign). */
static int parse_hex(const char *s, size_t n, size_t min, size_t max,
                     uint64_t *out) {
  if (!s || n < min || n > max || n > 16)
    return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    int d = hhex_value((unsigned char)s[i]);
    if (d < 0)
      return -1;
    v = v << 4 | (uint64_t)d;
  }
  *out = v;
  return 0;
}

/* ---- RC token ------------------------------------------------------------ */

static void put_le(uint8_t *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

void rdma_token_pack(const struct rdma_rc_token *t,
                     uint8_t out[RDMA_TOKEN_BYTES]) {
  out[0] = t->transport;
  put_le(out + 1, t->qpn, 4);
  memcpy(out + 5, t->gid, 16);
  put_le(out + 21, t->rkey, 4);
  put_le(out + 25, t->addr, 8);
  put_le(out + 33, t->length, 8);
  out[41] = t->port;
  put_le(out + 42, t->lid, 2);
}

void rdma_token_unpack(const uint8_t in[RDMA_TOKEN_BYTES],
                       struct rdma_rc_token *t) {
  t->transport = in[0];
  t->qpn = (uint32_t)get_le(in + 1, 4);
  memcpy(t->gid, in + 5, 16);
  t->rkey = (uint32_t)get_le(in + 21, 4);
  t->addr = get_le(in + 25, 8);
  t->length = get_le(in + 33, 8);
  t->port = in[41];
  t->lid = (uint16_t)get_le(in + 42, 2);
}

void rdma_token_encode(const struct rdma_rc_token *t,
                       char out[RDMA_TOKEN_HEX_LEN + 1]) {
  uint8_t raw[RDMA_TOKEN_BYTES];
  rdma_token_pack(t, raw);
  hhex_encode(raw, RDMA_TOKEN_BYTES, out);
}

/* ":<1-16 hex>:<1-16 hex>", the legacy PREPARE suffix (§2.2). */
static int is_legacy_suffix(const char *s, size_t n) {
  if (n < 4 || s[0] != ':')
    return 0;
  const char *colon = memchr(s + 1, ':', n - 1);
  if (!colon)
    return 0;
  size_t a = (size_t)(colon - (s + 1)), b = n - 1 - a - 1;
  uint64_t ignored;
  return parse_hex(s + 1, a, 1, 16, &ignored) == 0 &&
         parse_hex(colon + 1, b, 1, 16, &ignored) == 0;
}

int rdma_token_decode(const char *s, size_t n, unsigned flags,
                      struct rdma_rc_token *t, int *is_loopback,
                      struct hipobj_error *err) {
  struct rdma_rc_token tmp;
  if (!t)
    t = &tmp;
  if (is_loopback)
    *is_loopback = 0;
  if (!s)
    return bad(err, "token is missing");
  trim(&s, &n);
  if (n > RDMA_TOKEN_HEX_LEN) {
    if (!(flags & RDMA_TOKEN_ALLOW_SUFFIX))
      return bad(err, "token is not exactly 88 hex characters");
    if (!is_legacy_suffix(s + RDMA_TOKEN_HEX_LEN, n - RDMA_TOKEN_HEX_LEN))
      return bad(err, "token suffix is not \":<addr hex>:<size hex>\"");
  } else if (n < RDMA_TOKEN_HEX_LEN) {
    return bad(err, "token is shorter than 88 hex characters");
  }
  uint8_t raw[RDMA_TOKEN_BYTES];
  if (hhex_decode(s, raw, RDMA_TOKEN_BYTES) != 0)
    return bad(err, "token contains a non-hex character");
  int zero = 1;
  for (int i = 0; i < RDMA_TOKEN_BYTES; i++)
    zero &= raw[i] == 0;
  if (zero) {
    if (!(flags & RDMA_TOKEN_ALLOW_LOOPBACK))
      return bad(err, "token is the all-zero loopback marker");
    memset(t, 0, sizeof *t);
    if (is_loopback)
      *is_loopback = 1;
    return HIPOBJ_OK;
  }
  rdma_token_unpack(raw, t);
  if (t->transport != RDMA_TRANSPORT_RC)
    return bad(err, "token transport is not 01 (RC)");
  if (rdma_gid_is_zero(t->gid))
    return bad(err, "token GID is all zero");
  return HIPOBJ_OK;
}

/* ---- GIDs ---------------------------------------------------------------- */

int rdma_gid_is_zero(const uint8_t gid[16]) {
  for (int i = 0; i < 16; i++)
    if (gid[i])
      return 0;
  return 1;
}

int rdma_gid_is_ipv4_mapped(const uint8_t gid[16]) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(gid, prefix, sizeof prefix) == 0;
}

void rdma_gid_format(const uint8_t gid[16], char *out, size_t outsz) {
  if (!out || !outsz)
    return;
  if (!inet_ntop(AF_INET6, gid, out, (socklen_t)outsz))
    snprintf(out, outsz, "?");
}

/* ---- cuObject DC descriptor ---------------------------------------------- */

int rdma_dc_encode(const struct rdma_dc_desc *d,
                   char out[RDMA_DC_DESC_LEN + 1]) {
  if (!d || d->dctn > 0xffffff || d->gid_present > 1)
    return -1;
  int at =
      snprintf(out, RDMA_DC_DESC_LEN + 1,
               "%016llx:%08x:%08x:%04x:%06x:%1x:", (unsigned long long)d->addr,
               (unsigned)d->size, (unsigned)d->rkey, (unsigned)d->lid,
               (unsigned)d->dctn, (unsigned)d->gid_present);
  hhex_encode(d->gid, 16, out + at); /* ends at out[RDMA_DC_DESC_LEN] */
  return 0;
}

int rdma_dc_decode(const char *s, size_t n, struct rdma_dc_desc *d,
                   struct hipobj_error *err) {
  static const size_t width[7] = {16, 8, 8, 4, 6, 1, 32};
  struct rdma_dc_desc tmp;
  if (!d)
    d = &tmp;
  if (!s)
    return bad(err, "descriptor is missing");
  trim(&s, &n);
  if (n != RDMA_DC_DESC_LEN)
    return bad(err, "descriptor is not exactly 81 characters");
  uint64_t v[6];
  size_t at = 0;
  for (int f = 0; f < 7; f++) {
    if (f > 0) {
      if (s[at] != ':')
        return bad(err, "descriptor fields are not colon-separated "
                        "with fixed widths 16:8:8:4:6:1:32");
      at++;
    }
    if (f < 6) {
      if (parse_hex(s + at, width[f], width[f], width[f], &v[f]) != 0)
        return bad(err, "descriptor field is not hex");
    } else if (hhex_decode(s + at, d->gid, 16) != 0) {
      return bad(err, "descriptor GID is not hex");
    }
    at += width[f];
  }
  if (v[5] > 1)
    return bad(err, "descriptor gid_present is neither 0 nor 1");
  d->addr = v[0];
  d->size = (uint32_t)v[1];
  d->rkey = (uint32_t)v[2];
  d->lid = (uint16_t)v[3];
  d->dctn = (uint32_t)v[4];
  d->gid_present = (uint8_t)v[5];
  return HIPOBJ_OK;
}

enum rdma_token_kind rdma_token_classify(const char *s, size_t n) {
  if (!s)
    return RDMA_TOKEN_KIND_UNKNOWN;
  trim(&s, &n);
  size_t first = 0;
  while (first < n && hhex_value((unsigned char)s[first]) >= 0)
    first++;
  /* By shape only: a malformed RC token is still an RC token, which the
   * caller then rejects with the decoder's reason. */
  if (first > 16)
    return RDMA_TOKEN_KIND_RC;
  if (first == 16 && rdma_dc_decode(s, n, NULL, NULL) == 0)
    return RDMA_TOKEN_KIND_DC;
  return RDMA_TOKEN_KIND_UNKNOWN;
}

/* ---- x-amz-rdma-reply ---------------------------------------------------- */

static int ieq(const char *s, size_t n, const char *lit) {
  size_t l = strlen(lit);
  if (n != l)
    return 0;
  for (size_t i = 0; i < n; i++) {
    char a = s[i], b = lit[i];
    if (a >= 'A' && a <= 'Z')
      a = (char)(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z')
      b = (char)(b - 'A' + 'a');
    if (a != b)
      return 0;
  }
  return 1;
}

int rdma_reply_parse(const char *s, size_t n, struct rdma_reply *r,
                     struct hipobj_error *err) {
  struct rdma_reply tmp;
  if (!r)
    r = &tmp;
  memset(r, 0, sizeof *r);
  if (!s)
    return bad(err, "reply is missing");
  trim(&s, &n);
  if (n > 4 && memcmp(s, "200:", 4) == 0) {
    int rc = rdma_token_decode(s + 4, n - 4, 0, &r->token, NULL, err);
    if (rc != HIPOBJ_OK)
      return rc;
    r->kind = RDMA_REPLY_SUCCESS;
    r->code = 200;
    r->has_token = 1;
    return HIPOBJ_OK;
  }
  static const struct {
    const char *text;
    enum rdma_reply_kind kind;
    int code, legacy;
  } forms[] = {
      {"200", RDMA_REPLY_SUCCESS, 200, 0}, {"204", RDMA_REPLY_SUCCESS, 204, 0},
      {"206", RDMA_REPLY_SUCCESS, 206, 0}, {"501", RDMA_REPLY_DECLINED, 501, 0},
      {"ok", RDMA_REPLY_SUCCESS, 200, 1},  {"err", RDMA_REPLY_FAILED, 0, 1},
  };
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    if (ieq(s, n, forms[i].text)) {
      r->kind = forms[i].kind;
      r->code = forms[i].code;
      r->legacy = forms[i].legacy;
      return HIPOBJ_OK;
    }
  }
  return bad(err, "reply is not 200, 204, 206, 501, ok, err or "
                  "200:<token>");
}

void rdma_reply_format_token(const struct rdma_rc_token *t,
                             char out[4 + RDMA_TOKEN_HEX_LEN + 1]) {
  memcpy(out, "200:", 4);
  rdma_token_encode(t, out + 4);
}

/* ---- header values ------------------------------------------------------- */

int rdma_protocol_is_v2(const char *s, size_t n) {
  if (!s)
    return 0;
  trim(&s, &n);
  return n == strlen(RDMA_PROTOCOL) && memcmp(s, RDMA_PROTOCOL, n) == 0;
}

int rdma_protocol_status_is_unsupported(const char *s, size_t n) {
  if (!s)
    return 0;
  trim(&s, &n);
  return ieq(s, n, RDMA_PROTOCOL_STATUS_UNSUPPORTED);
}

int rdma_psn_format(uint32_t psn, char out[7]) {
  if (psn == 0 || psn > RDMA_PSN_MAX)
    return -1;
  snprintf(out, 7, "%06x", (unsigned)psn);
  return 0;
}

int rdma_psn_parse(const char *s, size_t n, uint32_t *psn) {
  uint64_t v;
  if (!s)
    return -1;
  trim(&s, &n);
  if (parse_hex(s, n, 1, 8, &v) != 0 || v == 0 || v > RDMA_PSN_MAX)
    return -1;
  *psn = (uint32_t)v;
  return 0;
}

int rdma_cookie_format(uint32_t cookie, char out[9]) {
  if (cookie == 0)
    return -1;
  snprintf(out, 9, "%08x", (unsigned)cookie);
  return 0;
}

int rdma_cookie_parse(const char *s, size_t n, uint32_t *cookie) {
  uint64_t v;
  if (!s)
    return -1;
  trim(&s, &n);
  if (parse_hex(s, n, 1, 8, &v) != 0 || v == 0)
    return -1;
  *cookie = (uint32_t)v;
  return 0;
}

void rdma_session_format(const uint8_t id[16],
                         char out[RDMA_SESSION_HEX_LEN + 1]) {
  hhex_encode(id, 16, out);
}

int rdma_session_check(const char *s, size_t n) {
  if (!s)
    return -1;
  trim(&s, &n);
  if (n != RDMA_SESSION_HEX_LEN)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (hhex_value((unsigned char)s[i]) < 0)
      return -1;
  return 0;
}

int rdma_qpn_format(uint32_t qpn, char out[7]) {
  if (qpn == 0 || qpn > RDMA_QPN_MAX)
    return -1;
  snprintf(out, 7, "%x", (unsigned)qpn);
  return 0;
}

int rdma_qpn_parse(const char *s, size_t n, uint32_t *qpn) {
  uint64_t v;
  if (!s)
    return -1;
  trim(&s, &n);
  if (parse_hex(s, n, 1, 16, &v) != 0 || v == 0 || v > RDMA_QPN_MAX)
    return -1;
  *qpn = (uint32_t)v;
  return 0;
}

void rdma_mr_addr_format(uint64_t addr, char out[17]) {
  snprintf(out, 17, "%llx", (unsigned long long)addr);
}

int rdma_mr_addr_parse(const char *s, size_t n, uint64_t *addr) {
  if (!s)
    return -1;
  trim(&s, &n);
  return parse_hex(s, n, 1, 16, addr);
}

void rdma_rkey_format(uint32_t rkey, char out[9]) {
  snprintf(out, 9, "%08x", (unsigned)rkey);
}

int rdma_rkey_parse(const char *s, size_t n, uint32_t *rkey) {
  uint64_t v;
  if (!s)
    return -1;
  trim(&s, &n);
  if (parse_hex(s, n, 1, 8, &v) != 0)
    return -1;
  *rkey = (uint32_t)v;
  return 0;
}

int rdma_size_parse(const char *s, size_t n, uint32_t *size) {
  uint64_t v;
  if (!s)
    return -1;
  trim(&s, &n);
  if (hparse_u64(s, n, &v) != 0 || v == 0 || v > RDMA_SIZE_MAX)
    return -1;
  *size = (uint32_t)v;
  return 0;
}

int rdma_u64_parse(const char *s, size_t n, uint64_t *v) {
  if (!s)
    return -1;
  trim(&s, &n);
  return hparse_u64(s, n, v);
}

const char *rdma_op_name(enum rdma_op op) {
  return op == RDMA_OP_GET ? "GET" : op == RDMA_OP_PUT ? "PUT" : "?";
}

int rdma_op_parse(const char *s, size_t n, enum rdma_op *op) {
  if (!s)
    return -1;
  trim(&s, &n);
  if (ieq(s, n, "GET"))
    *op = RDMA_OP_GET;
  else if (ieq(s, n, "PUT"))
    *op = RDMA_OP_PUT;
  else
    return -1;
  return 0;
}

void rdma_checksum_format(uint64_t crc, char out[RDMA_CHECKSUM_VALUE_LEN + 1]) {
  memcpy(out, "CRC64NVME ", 10);
  crc64nvme_to_base64(crc, out + 10);
}

int rdma_checksum_parse(const char *s, size_t n, uint64_t *crc) {
  if (!s)
    return -1;
  trim(&s, &n);
  if (n != RDMA_CHECKSUM_VALUE_LEN || !ieq(s, 9, "CRC64NVME") || s[9] != ' ')
    return -1;
  return crc64nvme_from_base64(s + 10, n - 10, crc);
}

int rdma_checksum_parse_b64(const char *s, size_t n, uint64_t *crc) {
  if (!s)
    return -1;
  trim(&s, &n);
  return crc64nvme_from_base64(s, n, crc);
}

int rdma_capabilities_has(const char *s, size_t n, const char *cap) {
  if (!s || !cap)
    return 0;
  size_t i = 0;
  while (i < n) {
    while (i < n && (s[i] == ',' || s[i] == ' ' || s[i] == '\t'))
      i++;
    size_t start = i;
    while (i < n && s[i] != ',' && s[i] != ' ' && s[i] != '\t')
      i++;
    if (i > start && ieq(s + start, i - start, cap))
      return 1;
  }
  return 0;
}

void rdma_etag_unquote(const char *s, size_t n, const char **out,
                       size_t *outlen) {
  if (!s)
    n = 0;
  else
    trim(&s, &n);
  if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
    s++;
    n -= 2;
  }
  *out = s ? s : "";
  *outlen = n;
}

/* ---- X-Amz-Rdma-Target --------------------------------------------------- */

int rdma_target_build(struct hbuf *out, const char *bucket, const char *key,
                      const struct hparam *query, size_t nq) {
  if (!out || !bucket || !*bucket || !key || !*key || (nq && !query) ||
      strlen(bucket) > RDMA_TARGET_BUCKET_MAX ||
      strlen(key) > RDMA_TARGET_KEY_MAX)
    return -1;
  size_t start = out->len;
  int rc = hbuf_putc(out, '/');
  rc |= huri_encode(out, bucket, strlen(bucket), 0);
  rc |= hbuf_putc(out, '/');
  rc |= huri_encode(out, key, strlen(key), 1);
  if (nq) {
    rc |= hbuf_putc(out, '?');
    size_t q0 = out->len;
    rc |= huri_canonical_query(out, query, nq);
    if (rc == 0 && out->len - q0 > RDMA_TARGET_QUERY_MAX)
      rc = -1;
  }
  if (rc != 0 || out->oom) {
    /* Leave the buffer as it was (the oom flag stays for the caller). */
    out->len = start;
    if (out->data)
      out->data[start] = '\0';
    return -1;
  }
  return 0;
}

/* A NUL, raw or escaped, in s[0..n). */
static int has_nul(const char *s, size_t n) {
  if (memchr(s, '\0', n))
    return 1;
  for (size_t i = 0; i + 2 < n; i++)
    if (s[i] == '%' && s[i + 1] == '0' && s[i + 2] == '0')
      return 1;
  return 0;
}

int rdma_target_parse(const char *s, size_t n, struct hbuf *bucket,
                      struct hbuf *key, const char **query, size_t *query_len,
                      struct hipobj_error *err) {
  if (!s || !bucket || !key)
    return bad_input(err, "target is missing");
  trim(&s, &n);
  if (n > RDMA_TARGET_MAX)
    return bad_input(err, "target is longer than the longest S3 bucket, key "
                          "and query make");
  if (n == 0 || s[0] != '/')
    return bad_input(err, "target does not start with '/'");
  if (has_nul(s, n))
    return bad_input(err, "target holds a NUL byte");
  const char *q = memchr(s, '?', n);
  size_t path_len = q ? (size_t)(q - s) : n;
  const char *slash = path_len > 1 ? memchr(s + 1, '/', path_len - 1) : NULL;
  if (!slash || slash == s + 1)
    return bad_input(err, "target has no bucket");
  size_t blen = (size_t)(slash - (s + 1));
  size_t klen = path_len - 1 - blen - 1;
  if (klen == 0)
    return bad_input(err, "target has no key");
  if (q && n - path_len - 1 > RDMA_TARGET_QUERY_MAX)
    return bad_input(err, "target query is too long");
  size_t b0 = bucket->len, k0 = key->len;
  int rc = HIPOBJ_OK;
  if (huri_decode(bucket, s + 1, blen) != 0 ||
      huri_decode(key, slash + 1, klen) != 0)
    rc = bad_input(err, "target has a malformed percent escape");
  else if (bucket->len - b0 > RDMA_TARGET_BUCKET_MAX ||
           key->len - k0 > RDMA_TARGET_KEY_MAX)
    rc = bad_input(err, "target bucket or key is too long for S3");
  if (rc != HIPOBJ_OK) {
    bucket->len = b0;
    key->len = k0;
    if (bucket->data)
      bucket->data[b0] = '\0';
    if (key->data)
      key->data[k0] = '\0';
    return rc;
  }
  if (query)
    *query = q ? q + 1 : s + n;
  if (query_len)
    *query_len = q ? n - path_len - 1 : 0;
  return HIPOBJ_OK;
}
