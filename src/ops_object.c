/* ops_object.c - object and bucket operations that move no payload
 * (GET and PUT are jobs of the engine: xfer.c, job_get.c, job_put.c):
 * HeadObject, DeleteObject, CreateBucket, DeleteBucket, and the names of
 * data paths. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../s3/xml.h"
#include "base/strutil.h"
#include "client_int.h"
#include "hstruct.h"

const char *hipobj_data_path_name(enum hipobj_data_path path) {
  switch (path) {
  case HIPOBJ_PATH_HTTP:
    return "http";
  case HIPOBJ_PATH_HTTP_STAGED:
    return "http-staged";
  case HIPOBJ_PATH_RDMA_DIRECT:
    return "rdma-direct";
  case HIPOBJ_PATH_RDMA_STAGED:
    return "rdma-staged";
  default:
    return "none";
  }
}

/* ---- HeadObject ---------------------------------------------------------- */

/* A HEAD answer has no body, so an error has no S3 code and "HTTP 403:
 * access denied" would leave the user guessing: the message says what
 * such a status usually means and what to check. The status, HTTP status
 * and request id are kept. */
static void head_error_hint(struct hipobj_error *err) {
  /* Only the bare answers: a redirect, a timeout ... have their own text. */
  if (!err || err->s3_code[0] ||
      (err->status != HIPOBJ_E_CLIENT_ERROR &&
       err->status != HIPOBJ_E_ACCESS_DENIED &&
       err->status != HIPOBJ_E_NOT_FOUND))
    return;
  const char *hint = NULL;
  switch (err->http_status) {
  case 400:
    hint = "HTTP 400 Bad Request to HEAD, which carries no S3 error code: "
           "check the region (a signature for another region is refused) "
           "and the bucket name";
    break;
  case 403:
    hint = "HTTP 403 Forbidden to HEAD, which carries no S3 error code: "
           "check the secret key and access key id, this machine's clock, "
           "and that the credentials may read the object";
    break;
  case 404:
    hint = "HTTP 404 Not Found to HEAD, which carries no S3 error code: no "
           "such key, or no such bucket";
    break;
  default:
    return;
  }
  struct hipobj_error keep = *err;
  herr_set(err, keep.status, keep.operation, "%s", hint);
  err->http_status = keep.http_status;
  err->retries = keep.retries;
  memcpy(err->request_id, keep.request_id, sizeof err->request_id);
}

int hipobj_s3_head(struct hipobj_client *c, const char *bucket, const char *key,
                   struct hipobj_object_info *info, struct hipobj_error *err) {
  const char *op = "HeadObject";
  struct hipobj_object_info o;
  if (!c || !info)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "client or info is NULL");
  int rc = hstruct_out_begin(op, info, &o, err);
  if (rc != HIPOBJ_OK || (rc = hcheck_bucket_key(op, bucket, key, 1, err)))
    return rc;
  struct hreq r;
  hreq_init(&r, c, op, "HEAD", bucket, key);
  r.head = 1;
  rc = hreq_run(&r, err);
  if (rc != HIPOBJ_OK)
    head_error_hint(err);
  if (rc == HIPOBJ_OK) {
    const struct s3_http_resp *resp = &r.xfer.resp;
    if (resp->content_length < 0) {
      rc = herr_set(err, HIPOBJ_E_PROTOCOL, op, "answer has no Content-Length");
    } else {
      o.size = (uint64_t)resp->content_length;
      hstrlcpy(o.etag, resp->etag, sizeof o.etag);
      hstrlcpy(o.content_type, resp->content_type, sizeof o.content_type);
      int64_t t;
      if (resp->last_modified[0] &&
          s3_parse_http_date(resp->last_modified, &t) == 0)
        o.last_modified = t;
      hstruct_out_end(info, &o);
    }
  }
  hreq_cleanup(&r);
  return rc;
}

/* ---- DeleteObject and buckets -------------------------------------------- */

int hipobj_s3_delete(struct hipobj_client *c, const char *bucket,
                     const char *key, struct hipobj_error *err) {
  const char *op = "DeleteObject";
  int rc;
  if (!c)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "client is NULL");
  if ((rc = hcheck_bucket_key(op, bucket, key, 1, err)))
    return rc;
  struct hreq r;
  hreq_init(&r, c, op, "DELETE", bucket, key);
  rc = hreq_run(&r, err);
  /* S3 answers 204 for a missing key; some servers say NoSuchKey. Both
   * mean the key is gone, which is what was asked. */
  if (rc == HIPOBJ_E_NOT_FOUND && !strcmp(r.err.s3_code, "NoSuchKey")) {
    rc = HIPOBJ_OK;
    hipobj_error_clear(err);
  }
  hreq_cleanup(&r);
  return rc;
}

int hipobj_s3_create_bucket(struct hipobj_client *c, const char *bucket,
                            struct hipobj_error *err) {
  const char *op = "CreateBucket";
  int rc;
  if (!c)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "client is NULL");
  /* Existing buckets are used under the relaxed rules of path-style
   * servers; a new one must follow S3's. */
  if ((rc = herr_op(err, op, s3_check_new_bucket(bucket, err))))
    return rc;
  struct hreq r;
  hreq_init(&r, c, op, "PUT", bucket, NULL);
  struct hbuf body = HBUF_INIT;
  /* us-east-1 is S3's default location and must not be named. */
  if (strcmp(c->cfg.region, "us-east-1") != 0 &&
      (rc = herr_op(err, op,
                    s3_xml_build_create_bucket(&body, c->cfg.region, err)))) {
    hreq_cleanup(&r);
    hbuf_free(&body);
    return rc;
  }
  r.body = body.data;
  r.body_len = body.len;
  r.send_body = 1;
  r.sign_payload = HREQ_SIGN_ALWAYS;
  rc = hreq_run(&r, err);
  hreq_cleanup(&r);
  hbuf_free(&body);
  return rc;
}

int hipobj_s3_delete_bucket(struct hipobj_client *c, const char *bucket,
                            struct hipobj_error *err) {
  const char *op = "DeleteBucket";
  int rc;
  if (!c)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "client is NULL");
  if ((rc = hcheck_bucket_key(op, bucket, NULL, 0, err)))
    return rc;
  struct hreq r;
  hreq_init(&r, c, op, "DELETE", bucket, NULL);
  rc = hreq_run(&r, err);
  hreq_cleanup(&r);
  return rc;
}
