/* ops_copy.c - server-side copies: CopyObject up to the single-copy limit
 * (5 GiB), above it a multipart upload whose parts are UploadPartCopy
 * requests. No byte of the object passes through the client.
 *
 * The source is read once with HeadObject (size, ETag, type); every request
 * after that names the ETag in x-amz-copy-source-if-match, so a source
 * overwritten during a multipart copy fails it (412) instead of mixing two
 * versions. S3 answers a copy 200 as soon as it starts and may report a
 * failure in the body (<Error> inside 200): that is a failure here, retried
 * when its code is (InternalError, SlowDown). Parts are copied one at a
 * time: the server does the work, the client only waits. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../s3/xml.h"
#include "base/strutil.h"
#include "base/uri.h"
#include "client_int.h"
#include "hstruct.h"
#include "mpu.h"

#define MIN_PART ((uint64_t)5 << 20) /* S3's smallest part but the last */
#define MAX_PARTS 10000u

struct copy_req {
  struct hreq r; /* first: the check callback gets &r */
  char etag[S3_ETAG_MAX];
};

static int copy_check(struct hreq *r, struct hipobj_error *err) {
  struct copy_req *cr = (struct copy_req *)r;
  const struct hbuf *b = &r->xfer.resp.body;
  struct s3_xml_error xe;
  int is_error = 0;
  int rc = herr_op(err, r->op_name,
                   s3_xml_parse_copy_result(hbuf_str(b), b->len, &is_error, &xe,
                                            cr->etag, err));
  if (rc == HIPOBJ_OK && is_error) {
    int st = !strcmp(xe.code, "InternalError") || !strcmp(xe.code, "SlowDown")
                 ? herr_status_from_http(500, xe.code)
                 : herr_status_from_http(400, xe.code);
    rc = herr_set_s3(
        err, st, r->op_name, (int)r->xfer.resp.status, xe.code, xe.message,
        xe.request_id[0] ? xe.request_id : r->xfer.resp.request_id);
  }
  return rc;
}

/* "/bucket/key" with the key URL-encoded ('/' kept), as
 * x-amz-copy-source wants it. */
static int copy_source(struct hbuf *out, const char *bucket, const char *key) {
  hbuf_putc(out, '/');
  huri_encode(out, bucket, strlen(bucket), 0);
  hbuf_putc(out, '/');
  huri_encode(out, key, strlen(key), 1);
  return out->oom ? -1 : 0;
}

/* One CopyObject or UploadPartCopy request. range: "bytes=a-b" or NULL. */
static int copy_request(struct copy_req *cr, struct hipobj_client *c,
                        const char *op, const char *bucket, const char *key,
                        const char *source, const char *if_match,
                        const char *range, const char *content_type,
                        const struct hparam *params, size_t n_params,
                        struct hipobj_error *err) {
  memset(cr->etag, 0, sizeof cr->etag);
  hreq_init(&cr->r, c, op, "PUT", bucket, key);
  for (size_t i = 0; i < n_params; i++)
    s3_request_param(&cr->r.req, params[i].name, params[i].value);
  s3_request_header(&cr->r.req, "x-amz-copy-source", source);
  if (if_match)
    s3_request_header(&cr->r.req, "x-amz-copy-source-if-match", if_match);
  if (range)
    s3_request_header(&cr->r.req, "x-amz-copy-source-range", range);
  if (content_type) {
    s3_request_header(&cr->r.req, "x-amz-metadata-directive", "REPLACE");
    s3_request_header(&cr->r.req, "content-type", content_type);
  }
  cr->r.send_body = 1; /* an empty body, Content-Length: 0 */
  cr->r.sign_payload = HREQ_SIGN_ALWAYS;
  cr->r.check = copy_check;
  /* A large copy may take the server minutes, whitespace its only sign of
   * life (as for CompleteMultipartUpload). */
  cr->r.low_speed_bytes_per_s = 1;
  return hreq_run(&cr->r, err);
}

static uint64_t part_size_for(const struct hipobj_client *c, uint64_t size,
                              uint64_t asked) {
  uint64_t ps = asked ? asked : c->cfg.part_size;
  if (ps < MIN_PART)
    ps = MIN_PART;
  if (ps > HIPOBJ_COPY_SINGLE_MAX)
    ps = HIPOBJ_COPY_SINGLE_MAX;
  while ((size + ps - 1) / ps > MAX_PARTS)
    ps *= 2;
  return ps;
}

static int copy_multipart(struct hipobj_client *c, const char *dst_bucket,
                          const char *dst_key, const char *source,
                          const char *if_match,
                          const struct hipobj_object_info *src,
                          const char *content_type, uint64_t ps,
                          struct hipobj_xfer_result *out,
                          struct hipobj_error *err) {
  struct hipobj_mpu *mpu = NULL;
  int rc = hmpu_create(c, dst_bucket, dst_key, content_type, 0, &mpu, err);
  if (rc != HIPOBJ_OK)
    return rc;
  unsigned n = (unsigned)((src->size + ps - 1) / ps);
  for (unsigned i = 0; i < n && rc == HIPOBJ_OK; i++) {
    uint64_t off = (uint64_t)i * ps;
    uint64_t len = src->size - off < ps ? src->size - off : ps;
    char num[16], range[64], name[48];
    snprintf(num, sizeof num, "%u", i + 1);
    snprintf(range, sizeof range, "bytes=%" PRIu64 "-%" PRIu64, off,
             off + len - 1);
    snprintf(name, sizeof name, "UploadPartCopy #%u", i + 1);
    struct hparam q[2] = {{"partNumber", num},
                          {"uploadId", hmpu_upload_id(mpu)}};
    struct copy_req cr;
    rc = copy_request(&cr, c, name, dst_bucket, dst_key, source, if_match,
                      range, NULL, q, 2, err);
    out->retries += cr.r.retries;
    if (rc == HIPOBJ_OK && hmpu_record(mpu, i + 1, len, cr.etag, "") != 0)
      rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, name, "out of memory");
    hreq_cleanup(&cr.r);
  }
  if (rc == HIPOBJ_OK) {
    struct hipobj_xfer_result done = HIPOBJ_XFER_RESULT_INIT;
    rc = hipobj_mpu_complete(mpu, &done, err);
    out->retries += done.retries;
    hstrlcpy(out->etag, done.etag, sizeof out->etag);
  }
  if (rc != HIPOBJ_OK)
    hipobj_mpu_abort(mpu, NULL); /* the parts would cost storage */
  out->parts = n;
  hipobj_mpu_free(mpu);
  return rc;
}

int hipobj_s3_copy(struct hipobj_client *c, const char *src_bucket,
                   const char *src_key, const char *dst_bucket,
                   const char *dst_key, const struct hipobj_copy_opts *opts,
                   struct hipobj_xfer_result *res, struct hipobj_error *err) {
  const char *op = "CopyObject";
  double t0 = hnow_seconds();
  struct hipobj_copy_opts o;
  struct hipobj_xfer_result r;
  int rc;
  if (!c)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "client is NULL");
  if ((rc = hstruct_in(op, opts, &o, err)) ||
      (rc = hstruct_out_begin(op, res, &r, err)) ||
      (rc = hcheck_bucket_key(op, src_bucket, src_key, 1, err)) ||
      (rc = hcheck_bucket_key(op, dst_bucket, dst_key, 1, err)))
    return rc;
  if (o.multipart_threshold > HIPOBJ_COPY_SINGLE_MAX)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "multipart_threshold %" PRIu64
                    " is above S3's single-copy limit of 5 GiB",
                    o.multipart_threshold);
  struct hipobj_object_info src = HIPOBJ_OBJECT_INFO_INIT;
  if ((rc = hipobj_s3_head(c, src_bucket, src_key, &src, err)) != HIPOBJ_OK) {
    hstruct_out_end(res, &r);
    return rc;
  }
  const char *if_match = o.if_match && *o.if_match ? o.if_match : src.etag;
  if (o.if_match && *o.if_match && src.etag[0] &&
      strcmp(o.if_match, src.etag) != 0) {
    hstruct_out_end(res, &r);
    return herr_set(err, HIPOBJ_E_PRECONDITION, op,
                    "the source's ETag is %s, not %s", src.etag, o.if_match);
  }
  struct hbuf source = HBUF_INIT;
  if (copy_source(&source, src_bucket, src_key) != 0) {
    hbuf_free(&source);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  }
  uint64_t threshold =
      o.multipart_threshold ? o.multipart_threshold : HIPOBJ_COPY_SINGLE_MAX;
  if (src.size > threshold) {
    /* A multipart copy sets the type on Create: the source's, unless the
     * caller named one (CopyObject keeps it by itself). */
    const char *type = o.content_type        ? o.content_type
                       : src.content_type[0] ? src.content_type
                                             : NULL;
    rc = copy_multipart(c, dst_bucket, dst_key, hbuf_str(&source),
                        *if_match ? if_match : NULL, &src, type,
                        part_size_for(c, src.size, o.part_size), &r, err);
  } else {
    struct copy_req cr;
    rc = copy_request(&cr, c, op, dst_bucket, dst_key, hbuf_str(&source),
                      *if_match ? if_match : NULL, NULL, o.content_type, NULL,
                      0, err);
    r.retries = cr.r.retries;
    hstrlcpy(r.etag, cr.etag, sizeof r.etag);
    hreq_cleanup(&cr.r);
  }
  hbuf_free(&source);
  r.bytes = rc == HIPOBJ_OK ? src.size : 0;
  r.object_size = src.size;
  r.path = HIPOBJ_PATH_NONE;
  r.seconds = hnow_seconds() - t0;
  hstruct_out_end(res, &r);
  return rc;
}
