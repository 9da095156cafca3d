/* reqparse.h - the pure parsers of hipobj-server's requests: the request
 * target and its query, the Range header, list limits, and the SigV4
 * fields (Authorization header, credential scope, SignedHeaders,
 * X-Amz-Expires). No libmicrohttpd and no struct req here, so that the
 * unit tests and the fuzz harnesses (tests/fuzz/) call them directly; the
 * server files turn a failure into its S3 error.
 *
 * Every parser is strict: it accepts the documented form and nothing
 * more, and a failure gives a reason (a static string, never the input,
 * which may hold a signature). */
#ifndef HIPOBJ_SERVER_REQPARSE_H
#define HIPOBJ_SERVER_REQPARSE_H

#include <stddef.h>
#include <stdint.h>

/* What a failed parse is, for the caller to pick the S3 error. */
enum rp_status {
  RP_OK = 0,
  RP_BAD_URI,      /* the path: InvalidURI */
  RP_BAD_ARGUMENT, /* the query or a value: InvalidArgument */
  RP_NO_MEMORY,
};

/* Decimal digits only (no sign, no space), at least one, at most
 * UINT64_MAX: 0, or -1 (empty, junk), or -2 (too large). */
int rp_parse_u64(const char *s, size_t n, uint64_t *out);

/* ---- request target ------------------------------------------------------ */

#define RP_MAX_PARAMS 128

struct rp_param {
  char *name;
  char *value; /* NULL for a bare name ("?uploads") */
};

struct rp_target {
  char *raw_path;        /* up to '?', undecoded (the canonical URI) */
  const char *raw_query; /* after '?' in the input, "" when none */
  struct rp_param *params;
  size_t n_params;
  char *bucket; /* decoded; NULL for the service */
  char *key;    /* decoded; NULL for bucket-level requests */
};

/* Splits "/bucket/key?query" as received: the path and every query name
 * and value percent-decoded ('+' stays '+'). A target that does not start
 * with '/', a malformed escape or a NUL in the path is RP_BAD_URI; in the
 * query (or more than RP_MAX_PARAMS parameters) RP_BAD_ARGUMENT: a NUL
 * cannot be signed (C strings would cut it) and is refused, not cut.
 * t->raw_query points into uri. Free with rp_target_free, also after a
 * failure. */
int rp_parse_target(const char *uri, struct rp_target *t, const char **why);
void rp_target_free(struct rp_target *t);

/* ---- Range --------------------------------------------------------------- */

/* A Range header against an object of size bytes. 1: a satisfiable range
 * in *off / *len; 0: no usable Range (not "bytes=", several ranges, or not
 * a range at all: the whole object, as RFC 7233 says); -1: not
 * satisfiable (416), which includes any number beyond 2^64-1: such a range
 * certainly starts past the end, and must never fall back to the whole
 * object. */
int rp_parse_range(const char *h, uint64_t size, uint64_t *off, uint64_t *len);

/* ---- list limits --------------------------------------------------------- */

/* max-keys, max-parts, max-uploads: v NULL gives cap; decimal digits of
 * any length, capped at cap (S3 lists at most 1000 entries a page whatever
 * was asked). -1 for an empty value, a sign or any other character. */
int rp_list_limit(const char *v, unsigned cap, unsigned *out);

/* ---- SigV4 fields -------------------------------------------------------- */

struct rp_credential {
  char ak[128];
  char date[9]; /* YYYYMMDD */
  char region[64];
  char service[32];
};

/* "AK/YYYYMMDD/region/service/aws4_request", exactly five non-empty
 * fields: an access key without '/' or spaces, eight digits, a region and
 * a service of printable characters. The service and region are checked
 * against the server's by the caller, which names them. */
int rp_parse_credential(const char *v, size_t n, struct rp_credential *c);

/* SignedHeaders: header names (RFC 7230 token characters, lower case, at
 * most 127 bytes each) separated by ';', in strictly ascending order, at
 * least one. 0 or -1, with the reason. */
int rp_check_signed_headers(const char *s, size_t n, const char **why);

/* X-Amz-Expires: decimal digits only, 1..604800. */
#define RP_MAX_EXPIRES 604800
int rp_parse_expires(const char *s, long *out);

/* The Authorization header of SigV4:
 *   AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...
 * Each of the three exactly once, in any order, separated by ',' and
 * optional spaces; no other component. The values point into authz. */
struct rp_authz {
  struct rp_credential cred;
  const char *signed_headers;
  size_t signed_headers_len;
  const char *signature;
  size_t signature_len;
};
enum rp_authz_status {
  RP_AUTHZ_OK = 0,
  RP_AUTHZ_SIGV2,       /* "AWS AK:sig": not supported */
  RP_AUTHZ_OTHER_ALGO,  /* not AWS4-HMAC-SHA256 */
  RP_AUTHZ_MALFORMED,   /* the components */
  RP_AUTHZ_CREDENTIAL,  /* the Credential value */
  RP_AUTHZ_SIGNED_HDRS, /* the SignedHeaders value */
};
int rp_parse_authorization(const char *authz, struct rp_authz *a,
                           const char **why);

#endif
