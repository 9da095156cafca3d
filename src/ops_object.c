/* ops_object.c - single-request object and bucket operations: GetObject
 * (whole or ranged, straight into a host buffer or staged into GPU memory),
 * HeadObject, PutObject, DeleteObject, CreateBucket, DeleteBucket. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../s3/xml.h"
#include "client_int.h"
#include "gpu.h"
#include "ops.h"
#include "plan.h"
#include "staging.h"
#include "strutil.h"

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

/* ---- GetObject ----------------------------------------------------------- */

struct get_ctx {
  struct hreq r;
  struct hstage *stage; /* GPU memory: the staging pipeline, else NULL */
  char *dst;
  size_t cap;
  uint64_t written;
  int has_range;
  uint64_t offset, length;
  uint64_t object_size;
};

static int get_sink(void *ctx, const char *data, size_t n) {
  struct get_ctx *g = ctx;
  if (g->written == 0) {
    /* Refuse before writing a byte when the answer announces too much. */
    int64_t cl = g->r.xfer.resp.content_length;
    if (cl >= 0 && (uint64_t)cl > g->cap) {
      g->r.sink_status = HIPOBJ_E_BUFFER_TOO_SMALL;
      snprintf(g->r.sink_reason, sizeof g->r.sink_reason,
               "%" PRId64 " bytes do not fit the %zu-byte buffer", cl, g->cap);
      return -1;
    }
  }
  if (n > g->cap - g->written) {
    g->r.sink_status = HIPOBJ_E_BUFFER_TOO_SMALL;
    snprintf(g->r.sink_reason, sizeof g->r.sink_reason,
             "the object does not fit the %zu-byte buffer", g->cap);
    return -1;
  }
  if (g->stage) {
    if (hstage_get_write(g->stage, g->written, data, n) != 0) {
      g->r.sink_status = HIPOBJ_E_IO;
      hstrlcpy(g->r.sink_reason, hstage_reason(g->stage),
               sizeof g->r.sink_reason);
      return -1;
    }
  } else {
    memcpy(g->dst + g->written, data, n);
  }
  g->written += n;
  return 0;
}

static int get_rewind(struct hreq *r) {
  struct get_ctx *g = (struct get_ctx *)r;
  g->written = 0;
  if (g->stage)
    hstage_get_rewind(g->stage);
  return 0;
}

/* Never report partial or misplaced data as complete: the answer must say
 * exactly which bytes it carries, and we must have received all of them. */
static int get_check(struct hreq *r, struct hipobj_error *err) {
  struct get_ctx *g = (struct get_ctx *)r;
  const struct s3_http_resp *resp = &r->xfer.resp;
  /* Staged data counts once it is in GPU memory; a failed copy is final. */
  if (g->stage && hstage_get_flush(g->stage) != 0)
    return herr_set(err, HIPOBJ_E_IO, r->op_name, "%s",
                    hstage_reason(g->stage));
  if (resp->content_length >= 0 && (uint64_t)resp->content_length != g->written)
    return herr_set(err, HIPOBJ_E_NETWORK, r->op_name,
                    "received %" PRIu64 " bytes, Content-Length announced "
                    "%" PRId64,
                    g->written, resp->content_length);
  if (resp->status == 206) {
    uint64_t first, last, total;
    if (hplan_parse_content_range(resp->content_range, &first, &last, &total) !=
        0)
      return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                      "206 answer with a bad Content-Range '%s'",
                      resp->content_range);
    if (!g->has_range || first != g->offset || last - first + 1 != g->written ||
        (g->length && last > g->offset + g->length - 1))
      return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                      "Content-Range '%s' does not match the requested range "
                      "and the %" PRIu64 " bytes received",
                      resp->content_range, g->written);
    g->object_size = total == UINT64_MAX ? 0 : total;
    return HIPOBJ_OK;
  }
  if (g->has_range && (g->offset != 0 || (g->length && g->written > g->length)))
    return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                    "the server ignored the Range header (answered %ld with "
                    "the whole object)",
                    resp->status);
  g->object_size = g->written;
  return HIPOBJ_OK;
}

int hipobj_s3_get(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *dst,
                  const struct hipobj_get_opts *opts,
                  struct hipobj_xfer_result *res, struct hipobj_error *err) {
  const char *op = "GetObject";
  double t0 = hnow_seconds();
  int rc;
  if (!c)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "client is NULL");
  if ((rc = hops_check_result(op, res, err)) ||
      (rc = hcheck_bucket_key(op, bucket, key, 1, err)) ||
      (rc = hcheck_mem(op, dst, err)))
    return rc;
  if (opts && opts->struct_size < sizeof *opts)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "options struct_size is too small; use "
                    "HIPOBJ_GET_OPTS_INIT");
  struct get_ctx g;
  memset(&g, 0, sizeof g);
  hreq_init(&g.r, c, op, "GET", bucket, key);
  g.dst = dst->ptr;
  g.cap = dst->len;
  char range[64];
  if (opts && opts->has_range) {
    if (opts->length && opts->offset > UINT64_MAX - opts->length)
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "range offset + length overflows");
    g.has_range = 1;
    g.offset = opts->offset;
    g.length = opts->length;
    hplan_range_header(g.offset, g.length, range);
    s3_request_header(&g.r.req, "range", range);
  }
  if (opts && opts->if_match && *opts->if_match)
    s3_request_header(&g.r.req, "if-match", opts->if_match);
  g.r.sink = get_sink;
  g.r.sink_ctx = &g;
  g.r.before_attempt = get_rewind;
  g.r.check = get_check;
  /* GPU memory: chunks are taken here, in the caller's thread. */
  if (dst->kind != HIPOBJ_MEM_HOST &&
      (rc = hstage_get_begin(c, op, dst, &g.stage, err)) != HIPOBJ_OK) {
    hreq_cleanup(&g.r);
    return rc;
  }
  rc = hreq_run(&g.r, err);
  hstage_end(g.stage);
  if (res) {
    res->bytes = rc == HIPOBJ_OK ? g.written : 0;
    res->object_size = g.object_size;
    res->retries = g.r.retries;
    res->path = g.stage ? HIPOBJ_PATH_HTTP_STAGED : HIPOBJ_PATH_HTTP;
    res->seconds = hnow_seconds() - t0;
    hstrlcpy(res->etag, g.r.xfer.resp.etag, sizeof res->etag);
  }
  hreq_cleanup(&g.r);
  return rc;
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
                    const char *content_type, struct hipobj_xfer_result *res,
                    struct hipobj_error *err) {
  struct hreq r;
  struct hstage *stage = NULL;
  hreq_init(&r, c, "PutObject", "PUT", bucket, key);
  s3_request_header(&r.req, "content-type",
                    content_type ? content_type : "application/octet-stream");
  r.body = src->ptr;
  r.body_len = src->len;
  r.send_body = 1;
  r.sign_payload = HREQ_SIGN_OBJECT;
  int rc = HIPOBJ_OK;
  if (src->kind != HIPOBJ_MEM_HOST) {
    rc = hstage_put_begin(c, r.op_name, src, 0, src->len, &stage, err);
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

int hipobj_s3_put(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *src,
                  const struct hipobj_put_opts *opts,
                  struct hipobj_xfer_result *res, struct hipobj_error *err) {
  const char *op = "PutObject";
  double t0 = hnow_seconds();
  int rc;
  if (!c)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "client is NULL");
  if ((rc = hops_check_result(op, res, err)) ||
      (rc = hcheck_bucket_key(op, bucket, key, 1, err)) ||
      (rc = hcheck_mem(op, src, err)))
    return rc;
  if (opts && opts->struct_size < sizeof *opts)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "options struct_size is too small; use "
                    "HIPOBJ_PUT_OPTS_INIT");
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
  /* GPU memory: refuse a missing runtime or a bad pointer before a
   * multipart upload is created on the server. */
  const struct hgpu_ops *ops;
  if (src->kind != HIPOBJ_MEM_HOST &&
      (rc = hgpu_check_mem(op, src, &c->log, &ops, err)) != HIPOBJ_OK)
    return rc;
  if (src->len > threshold) {
    unsigned conc =
        opts && opts->concurrency ? opts->concurrency : c->cfg.concurrency;
    rc = hops_put_multipart(c, bucket, key, src, ctype, part_size, conc,
                            opts ? opts->keep_failed_upload : 0, res, err);
  } else {
    rc = hops_put_single(c, bucket, key, src, ctype, res, err);
  }
  if (res)
    res->seconds = hnow_seconds() - t0;
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
