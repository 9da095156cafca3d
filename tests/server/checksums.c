/* checksums.c - S3 "flexible checksums" in hipobj-server: CRC32, CRC32C
 * and CRC64NVME. Which checksum headers a request may carry; the
 * x-amz-checksum-<alg> of a PutObject or UploadPart body, sent as a header
 * or, declared by x-amz-trailer, as an aws-chunked trailer line (chunked.c
 * reads the line, this file judges it); an upload's algorithm against its
 * parts; the part checksums a CompleteMultipartUpload lists; and the
 * composite checksum of the result (AWS's COMPOSITE type: the CRC of the
 * parts' CRCs, then "-N"), for CRC32 and CRC32C uploads. And what GET and
 * HEAD return when asked (x-amz-checksum-mode: ENABLED): every upload
 * keeps the CRC-64/NVME of its data (a multipart object the one combined
 * from its parts', which it keeps too), returned as a FULL_OBJECT checksum
 * as S3 does for objects uploaded without one, and beside it the checksum
 * the upload was checked with (a PutObject's CRC32C or CRC32, a multipart
 * upload's composite), as S3 returns it.
 *
 * The rule is that the server never accepts an integrity check it does not
 * perform: a client that sends a checksum believes it was checked, and an
 * echo of it on success says so. Everything else (SHA-1 and SHA-256,
 * whole-object multipart checksums, so CRC64NVME multipart uploads, which
 * S3 only has as FULL_OBJECT) is answered 501 NotImplemented, never
 * ignored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "s3/checksum.h"
#include "s3/xml.h"
#include "src/base/crc64nvme.h"
#include "storage.h"

struct alg_info {
  const char *name;  /* x-amz-checksum-algorithm value, XML suffix */
  const char *hdr;   /* the header (and trailer) carrying the value */
  const char *lower; /* as S3's messages name it */
  int bytes;         /* size of the CRC */
};

static const struct alg_info algs[] = {
    [CKS_NONE] = {"", "", "null", 0},
    [CKS_CRC32] = {"CRC32", "x-amz-checksum-crc32", "crc32", 4},
    [CKS_CRC32C] = {"CRC32C", "x-amz-checksum-crc32c", "crc32c", 4},
    [CKS_CRC64NVME] = {"CRC64NVME", "x-amz-checksum-crc64nvme", "crc64nvme", 8},
};
#define N_ALGS (sizeof algs / sizeof *algs)

/* "CRC32C" (any case) -> CKS_CRC32C; CKS_NONE when not one of ours. */
static enum cks_alg alg_by_name(const char *name) {
  for (size_t a = 1; name && a < N_ALGS; a++)
    if (!strcasecmp(name, algs[a].name))
      return (enum cks_alg)a;
  return CKS_NONE;
}

/* "x-amz-checksum-crc32c" (any case) -> CKS_CRC32C, likewise. */
static enum cks_alg alg_by_header(const char *name) {
  for (size_t a = 1; name && a < N_ALGS; a++)
    if (!strcasecmp(name, algs[a].hdr))
      return (enum cks_alg)a;
  return CKS_NONE;
}

const char *cks_alg_name(enum cks_alg alg) {
  return algs[alg].name;
}

uint64_t cks_crc(enum cks_alg alg, uint64_t crc, const void *data, size_t n) {
  switch (alg) {
  case CKS_CRC32:
    return s3_crc32((uint32_t)crc, data, n);
  case CKS_CRC32C:
    return s3_crc32c((uint32_t)crc, data, n);
  case CKS_CRC64NVME:
    return s3_crc64nvme(crc, data, n);
  default:
    return 0;
  }
}

void cks_format(enum cks_alg alg, uint64_t crc, char out[16]) {
  out[0] = '\0';
  if (algs[alg].bytes == 4)
    s3_crc32c_b64((uint32_t)crc, out); /* same bytes for CRC32 */
  else if (algs[alg].bytes == 8)
    s3_crc64nvme_b64(crc, out);
}

/* A header or trailer value: the canonical base64 of the CRC's bytes. */
static int parse_value(enum cks_alg alg, const char *b64, uint64_t *out) {
  if (algs[alg].bytes == 8)
    return s3_crc64nvme_parse_b64(b64, out);
  uint32_t v;
  if (algs[alg].bytes != 4 || s3_crc32_parse_b64(b64, &v) != 0)
    return -1;
  *out = v;
  return 0;
}

/* "x-amz-checksum-sha256" as the message shows it: lower case, bounded. */
static void header_name(const char *name, char out[64]) {
  size_t i = 0;
  for (; name[i] && i < 63; i++)
    out[i] =
        (name[i] >= 'A' && name[i] <= 'Z') ? (char)(name[i] + 32) : name[i];
  out[i] = '\0';
}

static int refuse(struct req *r, const char *name, const char *value) {
  char n[64];
  header_name(name, n);
  return req_fail(r, 501, "NotImplemented",
                  "hipobj-server checks only x-amz-checksum-crc32, -crc32c "
                  "and -crc64nvme; %s%s%.64s was sent",
                  n, value ? ": " : "", value ? value : "");
}

static int is_body_op(const struct req *r) {
  return r->op == OP_PUT_OBJECT || r->op == OP_UPLOAD_PART;
}

/* What the headers said, for the checks that need them all. */
struct seen {
  const char *alg_hdr, *alg_val; /* x-amz[-sdk]-checksum-algorithm */
  const char *type;              /* x-amz-checksum-type */
  enum cks_alg trailer;          /* declared by x-amz-trailer */
  int headers;                   /* x-amz-checksum-<alg> values sent */
};

/* x-amz-checksum-type: COMPOSITE (the default) is what is checked. */
static int check_type(struct req *r, const char *type, int have_alg) {
  if (!strcasecmp(type, "FULL_OBJECT"))
    return req_fail(r, 501, "NotImplemented",
                    "hipobj-server checks multipart uploads only with "
                    "COMPOSITE checksums; x-amz-checksum-type: FULL_OBJECT "
                    "was sent");
  if (strcasecmp(type, "COMPOSITE"))
    return req_fail(r, 400, "InvalidRequest",
                    "Value for x-amz-checksum-type header is invalid.");
  if (!have_alg && r->op == OP_CREATE_MPU)
    return req_fail(r, 400, "InvalidRequest",
                    "The x-amz-checksum-type header can only be used with "
                    "the x-amz-checksum-algorithm header.");
  return 0;
}

/* The x-amz-checksum-<alg> header of a PutObject or UploadPart. */
static int take_value(struct req *r, enum cks_alg alg, const char *value) {
  uint64_t v;
  if (r->cks_alg && r->cks_alg != alg)
    return req_fail(r, 400, "InvalidRequest",
                    "Expecting a single x-amz-checksum- header. Multiple "
                    "checksum Types are not allowed.");
  if (parse_value(alg, value, &v) != 0 || (r->cks_have && v != r->cks_want))
    return req_fail(r, 400, "InvalidRequest", "Value for %s header is invalid.",
                    algs[alg].hdr);
  r->cks_alg = alg;
  r->cks_have = 1;
  r->cks_want = v;
  return 0;
}

/* x-amz-trailer: the one checksum header whose value follows the body. */
static int take_trailer(struct req *r, const char *value, struct seen *s) {
  char name[64];
  size_t at = strspn(value, " \t"), n = strlen(value + at);
  while (n && (value[at + n - 1] == ' ' || value[at + n - 1] == '\t'))
    n--;
  snprintf(name, sizeof name, "%.*s", (int)n, value + at);
  enum cks_alg alg = n < sizeof name ? alg_by_header(name) : CKS_NONE;
  if (!is_body_op(r))
    return req_fail(r, 501, "NotImplemented",
                    "hipobj-server reads checksum trailers only on PutObject "
                    "and UploadPart bodies (x-amz-trailer on %s)",
                    srv_op_name(r->op));
  if (!alg && !strncasecmp(name, "x-amz-checksum-", 15) &&
      !strpbrk(name, ", \t"))
    return refuse(r, "x-amz-trailer", value);
  if (!alg || s->trailer)
    return req_fail(r, 400, "InvalidRequest",
                    "x-amz-trailer must name one x-amz-checksum-* header "
                    "(it names %.64s)",
                    value);
  s->trailer = alg;
  return 0;
}

static int is_alg_header(const char *n) {
  return !strcasecmp(n, "x-amz-sdk-checksum-algorithm") ||
         !strcasecmp(n, "x-amz-checksum-algorithm");
}

/* One header of a checksum-carrying operation. */
static int one_header(struct req *r, const char *n, const char *v,
                      struct seen *s) {
  if (!strcasecmp(n, "x-amz-trailer"))
    return take_trailer(r, v, s);
  if (is_alg_header(n)) {
    s->alg_hdr = n;
    s->alg_val = v;
    return 0;
  }
  if (strncasecmp(n, "x-amz-checksum-", 15))
    return 0;
  if (!strcasecmp(n, "x-amz-checksum-type")) {
    s->type = v;
    return 0;
  }
  if (!strcasecmp(n, "x-amz-checksum-mode"))
    return 0; /* asks GET for stored checksums: nothing to check */
  enum cks_alg alg = alg_by_header(n);
  if (!alg)
    return refuse(r, n, NULL);
  if (!is_body_op(r))
    return req_fail(r, 501, "NotImplemented",
                    "hipobj-server checks %s only on PutObject and "
                    "UploadPart bodies (not a whole-object checksum on %s)",
                    algs[alg].hdr, srv_op_name(r->op));
  s->headers++;
  return take_value(r, alg, v);
}

/* A declared trailer: the payload must be able to carry it, and nothing
 * else may carry a checksum. */
static int use_trailer(struct req *r, enum cks_alg alg, int headers) {
  if (headers)
    return req_fail(r, 400, "InvalidRequest",
                    "Expecting a single x-amz-checksum- header. Multiple "
                    "checksum Types are not allowed.");
  if (!r->pay_trailer)
    return req_fail(r, 400, "InvalidRequest",
                    "x-amz-trailer needs an aws-chunked body with a trailer "
                    "(x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-"
                    "TRAILER or STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER)");
  r->cks_alg = alg;
  r->cks_trailer = 1;
  return 0;
}

/* x-amz-sdk-checksum-algorithm on a body: names the checksum sent. */
static int body_alg(struct req *r, const struct seen *s) {
  char n[64];
  header_name(s->alg_hdr, n);
  enum cks_alg alg = alg_by_name(s->alg_val);
  if (!alg)
    return refuse(r, s->alg_hdr, s->alg_val);
  if (!r->cks_alg)
    return req_fail(r, 400, "InvalidRequest",
                    "%s specified, but no corresponding x-amz-checksum-* or "
                    "x-amz-trailer headers were found.",
                    n);
  if (alg != r->cks_alg)
    return req_fail(r, 400, "InvalidRequest",
                    "%s: %s does not match the checksum sent (%s)", n,
                    algs[alg].name, algs[r->cks_alg].hdr);
  return 0;
}

/* x-amz-checksum-algorithm of CreateMultipartUpload (and Complete, where
 * it asks for nothing more). */
static int upload_alg(struct req *r, const struct seen *s) {
  enum cks_alg alg = alg_by_name(s->alg_val);
  if (alg == CKS_CRC64NVME)
    return req_fail(r, 501, "NotImplemented",
                    "hipobj-server does not implement CRC64NVME multipart "
                    "uploads: S3 checks them only as FULL_OBJECT checksums, "
                    "which it does not implement (CRC32 and CRC32C uploads "
                    "are COMPOSITE)");
  if (!alg)
    return refuse(r, s->alg_hdr, s->alg_val);
  if (r->op == OP_CREATE_MPU)
    r->mpu_alg = alg;
  return 0;
}

int cks_headers(struct req *r) {
  int mpu = r->op == OP_CREATE_MPU || r->op == OP_COMPLETE_MPU;
  if (!is_body_op(r) && !mpu)
    return 0;
  struct seen s;
  memset(&s, 0, sizeof s);
  for (size_t i = 0; i < r->n_hdrs; i++)
    if (one_header(r, r->hdrs[i].name, r->hdrs[i].value, &s) != 0)
      return -1;
  if (s.trailer && use_trailer(r, s.trailer, s.headers) != 0)
    return -1;
  if (s.alg_hdr && (mpu ? upload_alg(r, &s) : body_alg(r, &s)) != 0)
    return -1;
  if (mpu && s.type && check_type(r, s.type, s.alg_hdr != NULL) != 0)
    return -1;
  return 0;
}

void cks_answer_headers(const struct req *r, struct MHD_Response *resp) {
  if (r->cks_alg && r->cks_have && is_body_op(r)) {
    char b64[16];
    cks_format(r->cks_alg, r->cks_want, b64);
    MHD_add_response_header(resp, algs[r->cks_alg].hdr, b64);
  }
  if (r->mpu_alg)
    MHD_add_response_header(resp, "x-amz-checksum-algorithm",
                            algs[r->mpu_alg].name);
}

void cks_body_update(struct req *r, const void *data, size_t n) {
  if (r->cks_alg)
    r->cks_run = cks_crc(r->cks_alg, r->cks_run, data, n);
  if (r->cks_alg != CKS_CRC64NVME) /* else cks_run is the same CRC */
    r->crc64_run = cks_crc(CKS_CRC64NVME, r->crc64_run, data, n);
}

static uint64_t body_crc64(const struct req *r) {
  return r->cks_alg == CKS_CRC64NVME ? r->cks_run : r->crc64_run;
}

/* ---- aws-chunked trailers ---------------------------------------------- */

#define BAD_TRAILER                                                            \
  "The request contained trailing data that was not well-formed or did not "   \
  "conform to our published schema: "

int cks_trailer_line(struct req *r, const char *name, const char *value) {
  char n[64];
  header_name(name, n);
  if (!r->cks_trailer)
    return req_fail(r, 400, "MalformedTrailerError",
                    BAD_TRAILER "x-amz-trailer did not declare %s", n);
  if (strcasecmp(name, algs[r->cks_alg].hdr))
    return req_fail(r, 400, "MalformedTrailerError",
                    BAD_TRAILER "x-amz-trailer declared %s, the trailer has %s",
                    algs[r->cks_alg].hdr, n);
  if (r->cks_have)
    return req_fail(r, 400, "MalformedTrailerError",
                    BAD_TRAILER "%s came twice", n);
  uint64_t v;
  if (parse_value(r->cks_alg, value, &v) != 0)
    return req_fail(r, 400, "InvalidRequest",
                    "Value for %s trailing header is invalid.",
                    algs[r->cks_alg].hdr);
  r->cks_have = 1;
  r->cks_want = v;
  return 0;
}

int cks_trailer_end(struct req *r) {
  if (!r->cks_trailer || r->cks_have)
    return 0;
  return req_fail(r, 400, "MalformedTrailerError",
                  BAD_TRAILER "the %s trailer that x-amz-trailer declared is "
                              "missing",
                  algs[r->cks_alg].hdr);
}

int cks_body_check(struct req *r) {
  if (!r->cks_alg)
    return 0;
  if (!r->cks_have)
    return cks_trailer_end(r);
  /* What a client sent and where: the log is how interop is checked. */
  char b64[16];
  cks_format(r->cks_alg, r->cks_want, b64);
  srv_log(r->srv, SLOG_DEBUG, "%s: %s: %s (%s) %s", r->id, algs[r->cks_alg].hdr,
          b64,
          !r->cks_trailer                ? "header"
          : r->pay == PAY_CHUNKED_SIGNED ? "signed trailer"
                                         : "unsigned trailer",
          r->cks_run == r->cks_want ? "matches" : "does not match");
  if (r->cks_run == r->cks_want)
    return 0;
  return req_fail(r, 400, "BadDigest",
                  "The %s you specified did not match the calculated "
                  "checksum.",
                  algs[r->cks_alg].name);
}

/* ---- multipart uploads ------------------------------------------------- */

const char *cks_upload_alg(const struct req *r) {
  return algs[r->mpu_alg].name;
}

enum cks_alg cks_upload_alg_of(const struct obj_meta *info) {
  return alg_by_name(info->checksum_alg);
}

int cks_part_vs_upload(struct req *r, const struct obj_meta *info) {
  enum cks_alg want = cks_upload_alg_of(info);
  if (want == r->cks_alg)
    return 0;
  return req_fail(r, 400, "InvalidRequest",
                  "Checksum Type mismatch occurred, expected checksum Type: "
                  "%s, actual checksum Type: %s",
                  algs[want].lower, algs[r->cks_alg].lower);
}

void cks_part_record(const struct req *r, struct obj_meta *part) {
  cks_format(r->cks_alg, r->cks_want, part->cksum);
  part->has_crc64 = 1;
  part->crc64 = body_crc64(r);
}

/* A listed part's checksum of alg: "" when it lists none. */
static const char *listed(enum cks_alg alg, const struct s3_part *p) {
  return alg == CKS_CRC32 ? p->crc32 : alg == CKS_CRC32C ? p->crc32c : "";
}

/* The part checksum element a part lists besides alg's, NULL if none. */
static const char *listed_other(enum cks_alg alg, const struct s3_part *p) {
  if (alg != CKS_CRC32 && p->crc32[0])
    return "ChecksumCRC32";
  if (alg != CKS_CRC32C && p->crc32c[0])
    return "ChecksumCRC32C";
  return NULL;
}

int cks_complete_request(struct req *r, const struct obj_meta *info,
                         const struct s3_part *want, size_t n) {
  enum cks_alg alg = cks_upload_alg_of(info);
  for (size_t i = 0; i < n; i++) {
    const char *other = listed_other(alg, &want[i]);
    if (alg && !listed(alg, &want[i])[0])
      return req_fail(r, 400, "InvalidRequest",
                      "The upload was created using a %s checksum. The "
                      "complete request must include the checksum for each "
                      "part. It was missing for part %u in the request.",
                      algs[alg].lower, want[i].number);
    if (other && !alg)
      return req_fail(r, 400, "InvalidRequest",
                      "The upload was not created with a checksum algorithm, "
                      "but part %u in the request carries %s.",
                      want[i].number, other);
    if (other)
      return req_fail(r, 400, "InvalidRequest",
                      "The upload was created using a %s checksum, but part "
                      "%u in the request carries %s.",
                      algs[alg].lower, want[i].number, other);
  }
  return 0;
}

int cks_same_part(enum cks_alg alg, const struct obj_meta *stored,
                  const struct s3_part *want) {
  const char *v = listed(alg, want);
  return !v[0] || !strcmp(stored->cksum, v);
}

int cks_composite(enum cks_alg alg, const struct obj_meta *parts, size_t n,
                  char out[16]) {
  if (algs[alg].bytes != 4)
    return -1;
  uint64_t crc = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t v;
    if (s3_crc32_parse_b64(parts[i].cksum, &v) != 0)
      return -1;
    const uint8_t be[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16),
                           (uint8_t)(v >> 8), (uint8_t)v};
    crc = cks_crc(alg, crc, be, sizeof be);
  }
  char b64[16];
  cks_format(alg, crc, b64);
  snprintf(out, 16, "%s-%zu", b64, n);
  return 0;
}

/* ---- stored checksums: GET and HEAD ------------------------------------ */

void cks_object_record(const struct req *r, struct obj_meta *m) {
  m->has_crc64 = 1;
  m->crc64 = body_crc64(r);
  if (r->cks_alg == CKS_CRC32 || r->cks_alg == CKS_CRC32C) {
    cks_format(r->cks_alg, r->cks_want, m->cksum);
    snprintf(m->checksum_alg, sizeof m->checksum_alg, "%s",
             algs[r->cks_alg].name);
  }
}

int cks_object_of_parts(const struct obj_meta *parts, size_t n,
                        enum cks_alg alg, const char *composite,
                        struct obj_meta *m) {
  int all = n > 0;
  for (size_t i = 0; i < n; i++)
    all &= parts[i].has_crc64;
  if (all) {
    /* CRC(A || B) from CRC(A), CRC(B) and |B|: the whole object's
     * checksum without reading it again. */
    m->has_crc64 = 1;
    m->crc64 = parts[0].crc64;
    for (size_t i = 1; i < n; i++)
      m->crc64 = crc64nvme_combine(m->crc64, parts[i].crc64, parts[i].size);
    if (!(m->part_crc64 = calloc(n, sizeof *m->part_crc64)))
      return -1;
    for (size_t i = 0; i < n; i++)
      m->part_crc64[i] = parts[i].crc64;
  }
  if (alg && composite[0]) {
    snprintf(m->cksum, sizeof m->cksum, "%s", composite);
    snprintf(m->checksum_alg, sizeof m->checksum_alg, "%s", algs[alg].name);
    if (!(m->part_cksum = calloc(n, sizeof *m->part_cksum)))
      return -1;
    for (size_t i = 0; i < n; i++)
      memcpy(m->part_cksum[i], parts[i].cksum, sizeof m->part_cksum[i]);
  }
  return 0;
}

void cks_get_headers(const struct req *r, struct MHD_Response *resp,
                     const struct obj_meta *m, int whole, unsigned part) {
  const char *mode = req_header(r, "x-amz-checksum-mode");
  if (!resp || !mode || strcasecmp(mode, "ENABLED") || (!whole && !part))
    return;
  enum cks_alg alg = alg_by_name(m->checksum_alg);
  if (alg == CKS_CRC64NVME)
    alg = CKS_NONE; /* never recorded as the upload's: kept in crc64 */
  int have64 = whole ? m->has_crc64 : m->part_crc64 != NULL;
  uint64_t crc64 = whole ? m->crc64 : have64 ? m->part_crc64[part - 1] : 0;
  const char *other = whole           ? m->cksum
                      : m->part_cksum ? m->part_cksum[part - 1]
                                      : "";
  char b64[16];
  if (have64) {
    cks_format(CKS_CRC64NVME, crc64, b64);
    MHD_add_response_header(resp, algs[CKS_CRC64NVME].hdr, b64);
  }
  if (alg && other[0])
    MHD_add_response_header(resp, algs[alg].hdr, other);
  /* The type of the upload's checksum: a composite "<base64>-N" describes
   * the parts, not the bytes; CRC-64/NVME is always the bytes' own. */
  if (have64 || (alg && other[0]))
    MHD_add_response_header(resp, "x-amz-checksum-type",
                            strchr(m->cksum, '-') ? "COMPOSITE"
                                                  : "FULL_OBJECT");
}
