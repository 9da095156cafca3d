/* ops_object.c - object and bucket operations other than GET (ops_get.c):
 * HeadObject, the PutObject driver (single request or multipart),
 * DeleteObject, CreateBucket, DeleteBucket. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../s3/xml.h"
#include "base/strutil.h"
#include "client_int.h"
#include "gpu.h"
#include "ops.h"
#include "plan.h"
#include "rdma_glue.h"
#include "staging.h"

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

int hops_check_result(const char *op, struct hipobj_xfer_result *res,
                      struct hipobj_error *err) {
  if (!res)
    return HIPOBJ_OK;
  if (res->struct_size < sizeof *res)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "result struct_size %zu is too small; initialise it with "
                    "HIPOBJ_XFER_RESULT_INIT",
                    res->struct_size);
  size_t size = res->struct_size;
  memset(res, 0, sizeof *res);
  res->struct_size = size;
  return HIPOBJ_OK;
}

/* ---- HeadObject ---------------------------------------------------------- */

int hipobj_s3_head(struct hipobj_client *c, const char *bucket, const char *key,
                   struct hipobj_object_info *info, struct hipobj_error *err) {
  const char *op = "HeadObject";
  int rc;
  if (!c || !info || info->struct_size < sizeof *info)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "client or info missing (use HIPOBJ_OBJECT_INFO_INIT)");
  if ((rc = hcheck_bucket_key(op, bucket, key, 1, err)))
    return rc;
  struct hreq r;
  hreq_init(&r, c, op, "HEAD", bucket, key);
  r.head = 1;
  rc = hreq_run(&r, err);
  if (rc == HIPOBJ_OK) {
    const struct s3_http_resp *resp = &r.xfer.resp;
    if (resp->content_length < 0) {
      rc = herr_set(err, HIPOBJ_E_PROTOCOL, op, "answer has no Content-Length");
    } else {
      size_t sz = info->struct_size;
      memset(info, 0, sizeof *info);
      info->struct_size = sz;
      info->size = (uint64_t)resp->content_length;
      hstrlcpy(info->etag, resp->etag, sizeof info->etag);
      hstrlcpy(info->content_type, resp->content_type,
               sizeof info->content_type);
      int64_t t;
      if (resp->last_modified[0] &&
          s3_parse_http_date(resp->last_modified, &t) == 0)
        info->last_modified = t;
    }
  }
  hreq_cleanup(&r);
  return rc;
}

/* ---- PutObject ----------------------------------------------------------- */

int hops_put_single(struct hipobj_client *c, const char *bucket,
                    const char *key, const struct hipobj_mem *src,
                    const char *content_type, int rdma_policy,
                    struct hxctl *ctl, struct hipobj_xfer_result *res,
                    struct hipobj_error *err) {
  /* RDMA first when it can be tried; HTTP when it is declined or fails.
   * hipobj-rc-v2 has no Content-Type: a typed PUT goes over HTTP. */
  if (content_type) {
    if (hrdma_policy(c, rdma_policy) == HIPOBJ_RDMA_REQUIRE)
      return herr_set(err, HIPOBJ_E_UNSUPPORTED, "PutObject",
                      "RDMA required, but an RDMA PUT cannot carry the "
                      "Content-Type '%s'",
                      content_type);
    rdma_policy = HIPOBJ_RDMA_OFF;
  }
  struct hrdma_job job = {.is_put = 1,
                          .bucket = bucket,
                          .key = key,
                          .size = src->len,
                          .mem = src,
                          .policy = rdma_policy};
  struct hrdma_outcome out;
  int rrc = hrdma_transfer(c, &job, &out, err);
  if (rrc != HIPOBJ_OK)
    return rrc;
  if (out.done) {
    if (res) {
      res->bytes = res->rdma_bytes = out.bytes;
      res->path =
          out.staged ? HIPOBJ_PATH_RDMA_STAGED : HIPOBJ_PATH_RDMA_DIRECT;
      hstrlcpy(res->etag, out.etag, sizeof res->etag);
    }
    hxctl_add(ctl, out.bytes);
    return HIPOBJ_OK;
  }
  struct hreq r;
  struct hstage *stage = NULL;
  hreq_init(&r, c, "PutObject", "PUT", bucket, key);
  r.ctl = ctl;
  hxctl_set_total(ctl, src->len);
  /* No Content-Type unless asked: the server applies S3's default
   * (binary/octet-stream), the same as for an RDMA PUT, which cannot carry
   * one. */
  if (content_type)
    s3_request_header(&r.req, "content-type", content_type);
  r.body = src->ptr;
  r.body_len = src->len;
  r.send_body = 1;
  /* AUTO: the object's CRC32C goes along; it replaces the signed SHA-256
   * once this server has shown that it checks CRC32C (hreq_crc32c_*). */
  r.crc32c = c->cfg.integrity == HIPOBJ_INTEGRITY_AUTO;
  r.sign_payload =
      r.crc32c && hreq_crc32c_checked(c) ? HREQ_SIGN_NONE : HREQ_SIGN_OBJECT;
  int rc = HIPOBJ_OK;
  if (src->kind != HIPOBJ_MEM_HOST) {
    rc = hstage_put_begin(c, r.op_name, src, 0, src->len, 0, &stage, err);
    if (rc == HIPOBJ_OK)
      hstage_put_attach(stage, &r);
  }
  if (rc == HIPOBJ_OK)
    rc = hreq_run(&r, err);
  hstage_end(stage);
  if (res) {
    res->bytes = rc == HIPOBJ_OK ? src->len : 0;
    res->retries = r.retries;
    res->path = src->kind != HIPOBJ_MEM_HOST ? HIPOBJ_PATH_HTTP_STAGED
                                             : HIPOBJ_PATH_HTTP;
    hstrlcpy(res->etag, r.xfer.resp.etag, sizeof res->etag);
  }
  hreq_cleanup(&r);
  return rc;
}

int hops_put(struct hipobj_client *c, const char *bucket, const char *key,
             const struct hipobj_mem *src, const struct hipobj_put_opts *opts,
             struct hxctl *ctl, struct hipobj_xfer_result *res,
             struct hipobj_error *err) {
  const char *op = "PutObject";
  int rc;
  uint64_t threshold = c->cfg.multipart_threshold;
  uint64_t part_size = c->cfg.part_size;
  if (opts && opts->part_size) {
    if (opts->part_size < HPLAN_MIN_PART || opts->part_size > HPLAN_MAX_PART)
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "part size %" PRIu64 " is outside S3's 5 MiB..5 GiB",
                      opts->part_size);
    part_size = opts->part_size;
    if (!opts->multipart_threshold)
      threshold = part_size;
  }
  if (opts && opts->multipart_threshold)
    threshold = opts->multipart_threshold;
  const char *ctype = opts ? opts->content_type : NULL;
  int rdma = opts ? (int)opts->rdma : HIPOBJ_RDMA_DEFAULT;
  /* GPU memory: refuse a missing runtime or a bad pointer before a
   * multipart upload is created on the server. */
  const struct hgpu_ops *ops;
  if (src->kind != HIPOBJ_MEM_HOST &&
      (rc = hgpu_check_mem_dir(op, src, HGPU_READ, &c->log, &ops, err)) !=
          HIPOBJ_OK)
    return rc;
  if (src->len > threshold) {
    unsigned conc =
        opts && opts->concurrency ? opts->concurrency : c->cfg.concurrency;
    rc = hops_put_multipart(c, bucket, key, src, ctype, part_size, conc,
                            opts ? opts->keep_failed_upload : 0, rdma, ctl, res,
                            err);
  } else {
    rc = hops_put_single(c, bucket, key, src, ctype, rdma, ctl, res, err);
  }
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
  if ((rc = hcheck_bucket_key(op, bucket, NULL, 0, err)))
    return rc;
  struct hreq r;
  hreq_init(&r, c, op, "PUT", bucket, NULL);
  struct hbuf body = HBUF_INIT;
  /* us-east-1 is S3's default location and must not be named. */
  if (strcmp(c->cfg.region, "us-east-1") != 0)
    hbuf_printf(&body,
                "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/"
                "doc/2006-03-01/\"><LocationConstraint>%s</LocationConstraint>"
                "</CreateBucketConfiguration>",
                c->cfg.region);
  if (body.oom) {
    hbuf_free(&body);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
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
