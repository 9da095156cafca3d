/* checksums.c - S3 "flexible checksums" in hipobj-server, CRC32C only:
 * which checksum headers a request may carry, the x-amz-checksum-crc32c of
 * a PutObject or UploadPart body, an upload's algorithm against its parts,
 * the part checksums a CompleteMultipartUpload lists, and the composite
 * checksum of the result (AWS's COMPOSITE type: the CRC32C of the parts'
 * CRC32Cs, then "-N").
 *
 * The rule is that the server never accepts an integrity check it does not
 * perform: a client that sends a checksum believes it was checked, and an
 * echo of it on success says so. Everything else (other algorithms,
 * aws-chunked trailers, whole-object multipart checksums) is answered 501
 * NotImplemented, never ignored. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "s3/checksum.h"
#include "s3/xml.h"
#include "storage.h"

#define ALG_CRC32C "CRC32C"

static int b64_val(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int cks_crc32c_parse(const char *b64, uint32_t *out) {
  if (!b64 || strlen(b64) != 8 || strcmp(b64 + 6, "=="))
    return -1;
  uint64_t bits = 0;
  for (int i = 0; i < 6; i++) {
    int v = b64_val(b64[i]);
    if (v < 0)
      return -1;
    bits = bits << 6 | (unsigned)v;
  }
  /* 36 bits carry 32: the 4 left over must be zero, so that each value
   * has exactly one spelling and stored values compare as strings. */
  if (bits & 0xf)
    return -1;
  *out = (uint32_t)(bits >> 4);
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
                  "hipobj-server checks only x-amz-checksum-crc32c; %s%s%.64s "
                  "was sent",
                  n, value ? ": " : "", value ? value : "");
}

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

/* The x-amz-checksum-crc32c of a PutObject or UploadPart. */
static int take_crc32c(struct req *r, const char *value) {
  uint32_t v;
  if (cks_crc32c_parse(value, &v) != 0 || (r->crc32c_on && v != r->crc32c_want))
    return req_fail(r, 400, "InvalidRequest",
                    "Value for x-amz-checksum-crc32c header is invalid.");
  r->crc32c_on = 1;
  r->crc32c_want = v;
  return 0;
}

static int is_alg_header(const char *n) {
  return !strcasecmp(n, "x-amz-sdk-checksum-algorithm") ||
         !strcasecmp(n, "x-amz-checksum-algorithm");
}

/* One header of a checksum-carrying operation; *alg / *type remember the
 * algorithm and type headers for the checks that need them all. */
static int one_header(struct req *r, const char *n, const char *v,
                      const char **alg, const char **type) {
  int body = r->op == OP_PUT_OBJECT || r->op == OP_UPLOAD_PART;
  if (!strcasecmp(n, "x-amz-trailer"))
    return refuse(r, n, v); /* the checksum would come after the body */
  if (is_alg_header(n)) {
    *alg = n;
    return strcasecmp(v, ALG_CRC32C) ? refuse(r, n, v) : 0;
  }
  if (strncasecmp(n, "x-amz-checksum-", 15))
    return 0;
  if (!strcasecmp(n, "x-amz-checksum-type")) {
    *type = v;
    return 0;
  }
  if (!strcasecmp(n, "x-amz-checksum-mode"))
    return 0; /* asks GET for stored checksums: nothing to check */
  if (!strcasecmp(n, "x-amz-checksum-crc32c")) {
    if (body)
      return take_crc32c(r, v);
    return req_fail(r, 501, "NotImplemented",
                    "hipobj-server checks x-amz-checksum-crc32c only on "
                    "PutObject and UploadPart bodies (not a whole-object "
                    "checksum on %s)",
                    srv_op_name(r->op));
  }
  return refuse(r, n, NULL);
}

int cks_headers(struct req *r) {
  int body = r->op == OP_PUT_OBJECT || r->op == OP_UPLOAD_PART;
  int mpu = r->op == OP_CREATE_MPU || r->op == OP_COMPLETE_MPU;
  if (!body && !mpu)
    return 0;
  const char *alg = NULL, *type = NULL;
  for (size_t i = 0; i < r->n_hdrs; i++)
    if (one_header(r, r->hdrs[i].name, r->hdrs[i].value, &alg, &type) != 0)
      return -1;
  if (mpu && type && check_type(r, type, alg != NULL) != 0)
    return -1;
  if (body && alg && !r->crc32c_on) {
    char n[64];
    header_name(alg, n);
    return req_fail(r, 400, "InvalidRequest",
                    "%s specified, but no corresponding x-amz-checksum-* or "
                    "x-amz-trailer headers were found.",
                    n);
  }
  r->mpu_crc32c = r->op == OP_CREATE_MPU && alg != NULL;
  return 0;
}

void cks_answer_headers(const struct req *r, struct MHD_Response *resp) {
  if (r->crc32c_on && (r->op == OP_PUT_OBJECT || r->op == OP_UPLOAD_PART)) {
    char b64[S3_CRC32C_B64_LEN];
    s3_crc32c_b64(r->crc32c_want, b64);
    MHD_add_response_header(resp, "x-amz-checksum-crc32c", b64);
  }
  if (r->mpu_crc32c)
    MHD_add_response_header(resp, "x-amz-checksum-algorithm", ALG_CRC32C);
}

void cks_body_update(struct req *r, const void *data, size_t n) {
  if (r->crc32c_on)
    r->crc32c = s3_crc32c(r->crc32c, data, n);
}

int cks_body_check(struct req *r) {
  if (!r->crc32c_on || r->crc32c == r->crc32c_want)
    return 0;
  return req_fail(r, 400, "BadDigest",
                  "The CRC32C you specified did not match the calculated "
                  "checksum.");
}

const char *cks_upload_alg(const struct req *r) {
  return r->mpu_crc32c ? ALG_CRC32C : "";
}

int cks_upload_crc32c(const struct obj_meta *info) {
  return !strcmp(info->checksum_alg, ALG_CRC32C);
}

int cks_part_vs_upload(struct req *r, const struct obj_meta *info) {
  int want = cks_upload_crc32c(info);
  if (want == r->crc32c_on)
    return 0;
  return req_fail(r, 400, "InvalidRequest",
                  "Checksum Type mismatch occurred, expected checksum Type: "
                  "%s, actual checksum Type: %s",
                  want ? "crc32c" : "null", r->crc32c_on ? "crc32c" : "null");
}

void cks_part_record(const struct req *r, struct obj_meta *part) {
  part->crc32c[0] = '\0';
  if (r->crc32c_on)
    s3_crc32c_b64(r->crc32c_want, part->crc32c);
}

int cks_complete_request(struct req *r, const struct obj_meta *info,
                         const struct s3_part *want, size_t n) {
  int crc = cks_upload_crc32c(info);
  for (size_t i = 0; i < n; i++) {
    if (crc && !want[i].crc32c[0])
      return req_fail(r, 400, "InvalidRequest",
                      "The upload was created using a crc32c checksum. The "
                      "complete request must include the checksum for each "
                      "part. It was missing for part %u in the request.",
                      want[i].number);
    if (!crc && want[i].crc32c[0])
      return req_fail(r, 400, "InvalidRequest",
                      "The upload was not created with a checksum algorithm, "
                      "but part %u in the request carries ChecksumCRC32C.",
                      want[i].number);
  }
  return 0;
}

int cks_same_part(const struct obj_meta *stored, const struct s3_part *want) {
  return !want->crc32c[0] || !strcmp(stored->crc32c, want->crc32c);
}

int cks_composite(const struct obj_meta *parts, size_t n, char out[16]) {
  uint32_t crc = S3_CRC32C_INIT;
  for (size_t i = 0; i < n; i++) {
    uint32_t v;
    if (cks_crc32c_parse(parts[i].crc32c, &v) != 0)
      return -1;
    const uint8_t be[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16),
                           (uint8_t)(v >> 8), (uint8_t)v};
    crc = s3_crc32c(crc, be, sizeof be);
  }
  char b64[S3_CRC32C_B64_LEN];
  s3_crc32c_b64(crc, b64);
  snprintf(out, 16, "%s-%zu", b64, n);
  return 0;
}
