/* fuzz_rdma.c - the hipobj-rc-v2 codecs and checks (rdma/token.c,
 * rdma/rc_check.c). Properties, round trips first: a token that decodes
 * encodes to the same 88 digits (lower-cased) and decodes again to the
 * same fields; a DC descriptor likewise; header values (PSN, cookie, QPN,
 * rkey, MR address, checksum) parse back to what their format wrote; a
 * target built for bucket/key/query parses back to them (the NUL-free
 * names within S3's limits always build); the PREPARE and FINAL checks
 * hold what they promise (a FINAL's bytes within the size, an ETag of
 * printable ASCII without quotes).
 *
 * Input: fields separated by 0xff: [0] a value for every decoder, [1] a
 * bucket, [2] a key, [3] a query value, [4] answer header lines, [5] 8
 * bytes of a size. */
#include "fuzz.h"

#include "rdma/rc_client.h"
#include "rdma/token.h"

static void lower(char *s) {
  for (; *s; s++)
    if (*s >= 'A' && *s <= 'F')
      *s = (char)(*s + 32);
}

static void token(const char *s, size_t n) {
  /* Zeroed: the structs are compared whole, padding included. */
  struct rdma_rc_token t, t2;
  memset(&t, 0, sizeof t);
  memset(&t2, 0, sizeof t2);
  int loop;
  if (rdma_token_decode(s, n, 0, &t, &loop, NULL) == HIPOBJ_OK) {
    char enc[RDMA_TOKEN_HEX_LEN + 1], in[RDMA_TOKEN_HEX_LEN + 1];
    rdma_token_encode(&t, enc);
    const char *p = s;
    while (*p == ' ' || *p == '\t')
      p++;
    memcpy(in, p, RDMA_TOKEN_HEX_LEN);
    in[RDMA_TOKEN_HEX_LEN] = '\0';
    lower(in);
    FUZZ_CHECK(!strcmp(enc, in), "token %s encodes as %s", in, enc);
    FUZZ_CHECK(rdma_token_decode(enc, strlen(enc), 0, &t2, NULL, NULL) ==
                       HIPOBJ_OK &&
                   !memcmp(&t, &t2, sizeof t),
               "token round trip");
  }
  rdma_token_decode(s, n, RDMA_TOKEN_PREPARE, &t, &loop, NULL);
  rdma_token_classify(s, n);
  struct rdma_dc_desc dc, dc2;
  memset(&dc, 0, sizeof dc);
  memset(&dc2, 0, sizeof dc2);
  if (rdma_dc_decode(s, n, &dc, NULL) == HIPOBJ_OK) {
    char enc[RDMA_DC_DESC_LEN + 1];
    FUZZ_CHECK(rdma_dc_encode(&dc, enc) == 0, "a decoded descriptor");
    FUZZ_CHECK(rdma_dc_decode(enc, strlen(enc), &dc2, NULL) == HIPOBJ_OK &&
                   !memcmp(&dc, &dc2, sizeof dc),
               "descriptor round trip");
  }
  struct rdma_reply r;
  rdma_reply_parse(s, n, &r, NULL);
}

static void values(const char *s, size_t n) {
  uint32_t v;
  uint64_t w;
  char out[32];
  if (rdma_psn_parse(s, n, &v) == 0) {
    FUZZ_CHECK(rdma_psn_format(v, out) == 0, "psn %u", v);
    uint32_t v2;
    FUZZ_CHECK(rdma_psn_parse(out, strlen(out), &v2) == 0 && v2 == v, "psn");
  }
  if (rdma_cookie_parse(s, n, &v) == 0) {
    FUZZ_CHECK(rdma_cookie_format(v, out) == 0, "cookie");
    uint32_t v2;
    FUZZ_CHECK(rdma_cookie_parse(out, strlen(out), &v2) == 0 && v2 == v, "ck");
  }
  if (rdma_qpn_parse(s, n, &v) == 0) {
    FUZZ_CHECK(rdma_qpn_format(v, out) == 0, "qpn %u", v);
    uint32_t v2;
    FUZZ_CHECK(rdma_qpn_parse(out, strlen(out), &v2) == 0 && v2 == v, "qpn");
  }
  if (rdma_rkey_parse(s, n, &v) == 0) {
    rdma_rkey_format(v, out);
    uint32_t v2;
    FUZZ_CHECK(rdma_rkey_parse(out, strlen(out), &v2) == 0 && v2 == v, "rkey");
  }
  if (rdma_mr_addr_parse(s, n, &w) == 0) {
    rdma_mr_addr_format(w, out);
    uint64_t w2;
    FUZZ_CHECK(rdma_mr_addr_parse(out, strlen(out), &w2) == 0 && w2 == w,
               "addr");
  }
  if (rdma_checksum_parse(s, n, &w) == 0) {
    char c[RDMA_CHECKSUM_VALUE_LEN + 1];
    rdma_checksum_format(w, c);
    uint64_t w2;
    FUZZ_CHECK(rdma_checksum_parse(c, strlen(c), &w2) == 0 && w2 == w, "crc");
  }
  uint32_t sz;
  if (rdma_size_parse(s, n, &sz) == 0)
    FUZZ_CHECK(sz >= 1 && sz <= RDMA_SIZE_MAX, "size %u", sz);
  enum rdma_op op;
  rdma_op_parse(s, n, &op);
  rdma_session_check(s, n);
  rdma_capabilities_has(s, n, "crc64nvme");
  const char *u;
  size_t ul;
  rdma_etag_unquote(s, n, &u, &ul);
  FUZZ_CHECK(ul <= n, "unquote grew");
}

static void target(const char *b, const char *k, const char *qv,
                   const char *raw, size_t rawn) {
  struct hparam q[] = {{"uploadId", qv}, {"partNumber", "7"}};
  struct hbuf t = HBUF_INIT, bb = HBUF_INIT, kb = HBUF_INIT;
  size_t nq = qv[0] ? 2 : 0;
  int built = rdma_target_build(&t, b, k, q, nq) == 0;
  int valid = b[0] && k[0] && strlen(b) <= RDMA_TARGET_BUCKET_MAX &&
              strlen(k) <= RDMA_TARGET_KEY_MAX && 3 * strlen(qv) + 32 <= 1024;
  FUZZ_CHECK(built || !valid, "a valid name was not built");
  if (built) {
    const char *qs;
    size_t ql;
    struct hipobj_error e = {0};
    FUZZ_CHECK(rdma_target_parse(t.data, t.len, &bb, &kb, &qs, &ql, &e) ==
                   HIPOBJ_OK,
               "the parser refuses a built target: %s", e.message);
    FUZZ_CHECK(!strcmp(hbuf_str(&bb), b) && !strcmp(hbuf_str(&kb), k),
               "names changed");
    FUZZ_CHECK(!nq || (ql > 0 && !strncmp(qs, "partNumber=7&uploadId=", 22)),
               "query changed");
  }
  hbuf_reset(&bb);
  hbuf_reset(&kb);
  const char *qs;
  size_t ql;
  if (rdma_target_parse(raw, rawn, &bb, &kb, &qs, &ql, NULL) == HIPOBJ_OK) {
    FUZZ_CHECK(bb.len && kb.len, "an empty name");
    FUZZ_CHECK(strlen(hbuf_str(&bb)) == bb.len &&
                   strlen(hbuf_str(&kb)) == kb.len,
               "a NUL in a parsed name");
    FUZZ_CHECK(bb.len <= RDMA_TARGET_BUCKET_MAX &&
                   kb.len <= RDMA_TARGET_KEY_MAX,
               "names too long");
  }
  hbuf_free(&t);
  hbuf_free(&bb);
  hbuf_free(&kb);
}

static void answers(const char *lines, uint64_t size) {
  struct rdma_control_answer a = {.http_status = 200, .headers = HBUF_INIT};
  hbuf_puts(&a.headers, lines);
  struct rdma_final f;
  for (int op = RDMA_OP_GET; op <= RDMA_OP_PUT; op++) {
    if (rdma_check_final(&a, (enum rdma_op)op, 0x1a2b3c4d, size, &f, NULL) ==
        HIPOBJ_OK) {
      FUZZ_CHECK(f.bytes <= size, "more bytes than asked");
      FUZZ_CHECK(op != RDMA_OP_PUT || f.bytes == size, "a short PUT");
      for (const char *c = f.etag; *c; c++)
        FUZZ_CHECK(*c > ' ' && *c < 0x7f && *c != '"', "ETag char 0x%02x",
                   (unsigned char)*c);
      FUZZ_CHECK(strlen(f.etag) + 3 <= sizeof f.etag, "no room for quotes");
    }
    struct rdma_prepare_reply p;
    rdma_check_prepare_reply(&a, (enum rdma_op)op, &p, NULL);
  }
  rdma_prepare_fallback_allowed(&a, size, size);
  hbuf_free(&a.headers);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fuzz_in in = {data, size};
  size_t n, zn;
  char *v = fuzz_field(in, 0, &n), *b = fuzz_field(in, 1, NULL),
       *k = fuzz_field(in, 2, NULL), *q = fuzz_field(in, 3, NULL),
       *lines = fuzz_field(in, 4, NULL), *z = fuzz_field(in, 5, &zn);
  uint64_t sz = 0;
  memcpy(&sz, z, zn < 8 ? zn : 8);
  token(v, n);
  values(v, n);
  target(b, k, q, v, n);
  answers(lines, sz);
  free(v);
  free(b);
  free(k);
  free(q);
  free(lines);
  free(z);
  return 0;
}
