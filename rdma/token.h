/* token.h - pure codecs of the hipobj-rc-v2 wire protocol
 * (shared/docs/rdma-wire-protocol.md; section numbers below refer to it):
 * the 44-byte RC token (§2), the 81-character cuObject DC descriptor (§7.1),
 * x-amz-rdma-reply values (§3.4, §7.2), the x-amz-rdma-* header value formats
 * (§3.2) and the X-Amz-Rdma-Target encoding (§3.4).
 *
 * No I/O, no verbs, no allocation except into caller-provided hbufs, so every
 * function is unit-tested directly and safe to call from any thread.
 *
 * Parse functions take (s, n): the bytes need not be NUL-terminated. Leading
 * and trailing spaces and tabs are ignored (HTTP optional whitespace); every
 * other deviation from the format fails. Those that take `struct
 * hipobj_error *err` (NULL allowed) return HIPOBJ_OK or the status, with
 * the reason in err (operation NULL; never the input, which may be secret):
 * HIPOBJ_E_PROTOCOL for a malformed wire value, HIPOBJ_E_INVALID_ARGUMENT
 * for a malformed X-Amz-Rdma-Target (only a server parses one, from a
 * request). The one-field parsers return 0, or -1 when the value is
 * malformed (their caller names the header). Format functions write
 * lowercase hex and a terminating NUL. */
#ifndef HIPOBJ_RDMA_TOKEN_H
#define HIPOBJ_RDMA_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "../src/base/buf.h"
#include "../src/base/error.h"
#include "../src/base/uri.h"

/* ---- RC token (§2) ------------------------------------------------------ */

#define RDMA_TOKEN_BYTES 44
#define RDMA_TOKEN_HEX_LEN 88
#define RDMA_TRANSPORT_DC 0x00 /* reserved; rejected */
#define RDMA_TRANSPORT_RC 0x01

/* One token, fields in host order. qpn keeps all 32 bits as sent; only the
 * low 24 are meaningful (use qpn & 0xffffff). gid is raw network order. */
struct rdma_rc_token {
  uint8_t transport;
  uint32_t qpn;
  uint8_t gid[16];
  uint32_t rkey;
  uint64_t addr;
  uint64_t length;
  uint8_t port;
  uint16_t lid;
};

/* Packs into the 44-byte layout, integers explicitly little-endian. */
void rdma_token_pack(const struct rdma_rc_token *t,
                     uint8_t out[RDMA_TOKEN_BYTES]);
/* Unpacks the 44-byte layout (no validation). */
void rdma_token_unpack(const uint8_t in[RDMA_TOKEN_BYTES],
                       struct rdma_rc_token *t);
/* 88 lowercase hex characters + NUL. No validation: encoding the all-zero
 * struct gives the loopback marker. */
void rdma_token_encode(const struct rdma_rc_token *t,
                       char out[RDMA_TOKEN_HEX_LEN + 1]);

/* Flags of rdma_token_decode(). */
enum {
  /* Accept and ignore the legacy ":<addr hex>:<size hex>" suffix (each part
   * 1-16 hex digits). Servers parsing PREPARE set it; clients never send the
   * suffix, and a client parsing a server token does not set it. */
  RDMA_TOKEN_ALLOW_SUFFIX = 1u << 0,
  /* Accept the all-zero loopback marker (a client on the server's own HCA).
   * Only a server parsing PREPARE sets it: a server reply token of zeros is
   * the device-less test server claiming success (§8 item 12). */
  RDMA_TOKEN_ALLOW_LOOPBACK = 1u << 1,
  /* What a server parsing X-Amz-Rdma-Token on PREPARE wants. */
  RDMA_TOKEN_PREPARE = RDMA_TOKEN_ALLOW_SUFFIX | RDMA_TOKEN_ALLOW_LOOPBACK,
};

/* Decodes and validates an RC token: exactly 88 hex digits of either case
 * (plus the suffix when allowed), transport 01 and a non-zero GID, unless it
 * is the all-zero marker and that is allowed. *is_loopback (may be NULL) is
 * set to 1 for the marker (t is then all zero), else 0. */
int rdma_token_decode(const char *s, size_t n, unsigned flags,
                      struct rdma_rc_token *t, int *is_loopback,
                      struct hipobj_error *err);

/* ---- GIDs ---------------------------------------------------------------- */

int rdma_gid_is_zero(const uint8_t gid[16]);
/* ::ffff:a.b.c.d, the RoCEv2-over-IPv4 form. */
int rdma_gid_is_ipv4_mapped(const uint8_t gid[16]);
/* IPv6 text form ("::ffff:10.0.0.5", "fe80::1"); out holds >= 46 bytes. */
void rdma_gid_format(const uint8_t gid[16], char *out, size_t outsz);

/* ---- cuObject DC descriptor (§7.1) --------------------------------------- */

#define RDMA_DC_DESC_LEN 81

struct rdma_dc_desc {
  uint64_t addr; /* base virtual address of the client buffer */
  uint32_t size; /* size of the registered window */
  uint32_t rkey;
  uint16_t lid;        /* 0 on RoCE */
  uint32_t dctn;       /* 24 bits */
  uint8_t gid_present; /* 0 or 1 (1 on RoCE) */
  uint8_t gid[16];     /* raw network order */
};

/* 81 characters + NUL. Fails (-1) when dctn > 0xffffff or gid_present > 1. */
int rdma_dc_encode(const struct rdma_dc_desc *d,
                   char out[RDMA_DC_DESC_LEN + 1]);
/* Exactly 7 colon-separated fixed-width hex fields, 81 characters; hex of
 * either case; gid_present must be 0 or 1. */
int rdma_dc_decode(const char *s, size_t n, struct rdma_dc_desc *d,
                   struct hipobj_error *err);

/* What an x-amz-rdma-token value is, by shape (§7.1: a first field longer
 * than 16 hex digits identifies an RC token). */
enum rdma_token_kind {
  RDMA_TOKEN_KIND_UNKNOWN = 0,
  RDMA_TOKEN_KIND_RC = 1,
  RDMA_TOKEN_KIND_DC = 2,
};
enum rdma_token_kind rdma_token_classify(const char *s, size_t n);

/* ---- x-amz-rdma-reply (§3.4, §7.2) --------------------------------------- */

enum rdma_reply_kind {
  RDMA_REPLY_SUCCESS = 1,  /* 200, 204, 206 or legacy "ok" */
  RDMA_REPLY_DECLINED = 2, /* 501: RDMA declined, use HTTP (§7.2) */
  RDMA_REPLY_FAILED = 3,   /* legacy "err" */
};

struct rdma_reply {
  enum rdma_reply_kind kind;
  int code;      /* 200, 204, 206, 501; 200 for "ok"; 0 for "err" */
  int legacy;    /* 1 for "ok" / "err" */
  int has_token; /* 1 for "200:<token>" (a PREPARE reply) */
  struct rdma_rc_token token;
};

/* Parses "200", "204", "206", "501", "ok", "err" (either case) or
 * "200:<88 hex>". The token of "200:<token>" is decoded strictly: no suffix,
 * transport RC, non-zero GID; the all-zero token fails. Anything else fails,
 * including other status codes. */
int rdma_reply_parse(const char *s, size_t n, struct rdma_reply *r,
                     struct hipobj_error *err);
/* "200:" + token + NUL (4 + 88 + 1 bytes). */
void rdma_reply_format_token(const struct rdma_rc_token *t,
                             char out[4 + RDMA_TOKEN_HEX_LEN + 1]);

/* ---- header values (§3.2) ------------------------------------------------ */

#define RDMA_PROTOCOL "hipobj-rc-v2"
#define RDMA_PROTOCOL_STATUS_UNSUPPORTED "unsupported"
#define RDMA_SESSION_HEX_LEN 32
#define RDMA_SIZE_MAX 2147483647u /* X-Amz-Rdma-Size: 1..2^31-1 */
#define RDMA_PSN_MAX 0xffffffu
#define RDMA_QPN_MAX 0xffffffu

/* X-Amz-Rdma-Protocol: exactly "hipobj-rc-v2" (after OWS trimming). */
int rdma_protocol_is_v2(const char *s, size_t n);
/* X-Amz-Rdma-Protocol-Status: "unsupported", either case. */
int rdma_protocol_status_is_unsupported(const char *s, size_t n);

/* PSN: emit 6 lowercase hex digits; accept 1-8 hex digits, 1..0xffffff. */
int rdma_psn_format(uint32_t psn, char out[7]);
int rdma_psn_parse(const char *s, size_t n, uint32_t *psn);

/* Cookie: emit 8 lowercase hex digits; accept 1-8 hex digits, non-zero. */
int rdma_cookie_format(uint32_t cookie, char out[9]);
int rdma_cookie_parse(const char *s, size_t n, uint32_t *cookie);

/* Session id: 16 bytes <-> 32 lowercase hex digits. rdma_session_check()
 * only validates (exactly 32 hex digits, either case): the id is sent back
 * byte-for-byte as received, never re-rendered. */
void rdma_session_format(const uint8_t id[16],
                         char out[RDMA_SESSION_HEX_LEN + 1]);
int rdma_session_check(const char *s, size_t n);

/* QPN: emit unpadded lowercase hex (at most 6 digits); accept 1-16 digits
 * with value 1..0xffffff (§8 item 4). */
int rdma_qpn_format(uint32_t qpn, char out[7]);
int rdma_qpn_parse(const char *s, size_t n, uint32_t *qpn);

/* MR address: unpadded lowercase hex, accept 1-16 digits. */
void rdma_mr_addr_format(uint64_t addr, char out[17]);
int rdma_mr_addr_parse(const char *s, size_t n, uint64_t *addr);

/* MR rkey: emit 8 digits zero-padded; accept 1-8 digits. */
void rdma_rkey_format(uint32_t rkey, char out[9]);
int rdma_rkey_parse(const char *s, size_t n, uint32_t *rkey);

/* X-Amz-Rdma-Size: decimal without sign, 1..2^31-1. */
int rdma_size_parse(const char *s, size_t n, uint32_t *size);
/* X-Amz-Rdma-Offset and -Bytes-Transferred: decimal u64 without sign. */
int rdma_u64_parse(const char *s, size_t n, uint64_t *v);

enum rdma_op { RDMA_OP_GET = 1, RDMA_OP_PUT = 2 };
/* "GET" / "PUT" (case-insensitive on parse, as versitygw and Ceph do). */
const char *rdma_op_name(enum rdma_op op);
int rdma_op_parse(const char *s, size_t n, enum rdma_op *op);

/* X-Amz-Rdma-Checksum: "CRC64NVME " + 12 characters of canonical base64.
 * Output holds 10 + 12 + 1 bytes. The parse also accepts the algorithm name
 * in either case. rdma_checksum_parse_b64() reads the bare base64 form of
 * Ceph's x-amz-rdma-checksum-crc64nvme header (§4.6). */
#define RDMA_CHECKSUM_VALUE_LEN 22
void rdma_checksum_format(uint64_t crc, char out[RDMA_CHECKSUM_VALUE_LEN + 1]);
int rdma_checksum_parse(const char *s, size_t n, uint64_t *crc);
int rdma_checksum_parse_b64(const char *s, size_t n, uint64_t *crc);

/* X-Amz-Rdma-Capabilities: 1 when the comma/space separated list holds
 * `cap` (case-insensitive), else 0. */
int rdma_capabilities_has(const char *s, size_t n, const char *cap);

/* X-Amz-Rdma-Etag: the value without one pair of surrounding quotes
 * (*out points into s). */
void rdma_etag_unquote(const char *s, size_t n, const char **out,
                       size_t *outlen);

/* ---- X-Amz-Rdma-Target (§3.4) ---------------------------------------------
 */

/* What a target may hold: an S3 bucket name (at most 63 bytes) and key (at
 * most 1024), each byte percent-encoded in the worst case (three times as
 * long), and a query (partNumber, uploadId, versionId) of at most 1024
 * bytes once encoded. */
#define RDMA_TARGET_BUCKET_MAX 63
#define RDMA_TARGET_KEY_MAX 1024
#define RDMA_TARGET_QUERY_MAX 1024
#define RDMA_TARGET_MAX                                                        \
  (1 + 3 * RDMA_TARGET_BUCKET_MAX + 1 + 3 * RDMA_TARGET_KEY_MAX + 1 +          \
   RDMA_TARGET_QUERY_MAX)

/* Appends "/" + enc(bucket) + "/" + enc(key, '/' kept) and, when nq > 0,
 * "?" + the canonical query (names sorted, values encoded;
 * src/base/uri.h). Both bucket and key must be non-empty and within the
 * limits above, and so must the encoded query: everything built here
 * rdma_target_parse() accepts and gives back. Returns -1 (out unchanged)
 * otherwise or on allocation failure. */
int rdma_target_build(struct hbuf *out, const char *bucket, const char *key,
                      const struct hparam *query, size_t nq);

/* Splits a target the server received: bucket and key percent-decoded into
 * the two hbufs (appended), the query returned raw (pointer into s, length
 * 0 when absent). Fails when it does not start with '/', when bucket or key
 * is empty or beyond its limit, on a malformed escape, on a NUL (raw or
 * %00: a C string would cut the name there) anywhere, or above
 * RDMA_TARGET_MAX bytes. */
int rdma_target_parse(const char *s, size_t n, struct hbuf *bucket,
                      struct hbuf *key, const char **query, size_t *query_len,
                      struct hipobj_error *err);

#endif
