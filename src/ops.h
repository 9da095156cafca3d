/* ops.h - what the operation files share: result checks, the single PUT and
 * the automatic multipart PUT that hipobj_s3_put() dispatches to. */
#ifndef HIPOBJ_OPS_H
#define HIPOBJ_OPS_H

#include "hipobj.h"

struct hxctl;

/* Validates and zeroes a caller's result struct (NULL allowed). */
int hops_check_result(const char *op, struct hipobj_xfer_result *res,
                      struct hipobj_error *err);

/* The drivers behind hipobj_s3_get()/hipobj_s3_put() and their
 * asynchronous forms (xfer.c). Arguments are already checked; ctl carries
 * cancellation and progress (NULL: none). */
int hops_get(struct hipobj_client *c, const char *bucket, const char *key,
             const struct hipobj_mem *dst, const struct hipobj_get_opts *opts,
             struct hxctl *ctl, struct hipobj_xfer_result *res,
             struct hipobj_error *err);
int hops_put(struct hipobj_client *c, const char *bucket, const char *key,
             const struct hipobj_mem *src, const struct hipobj_put_opts *opts,
             struct hxctl *ctl, struct hipobj_xfer_result *res,
             struct hipobj_error *err);

int hops_put_single(struct hipobj_client *c, const char *bucket,
                    const char *key, const struct hipobj_mem *src,
                    const char *content_type, int rdma_policy,
                    struct hxctl *ctl, struct hipobj_xfer_result *res,
                    struct hipobj_error *err);

/* CreateMultipartUpload, `concurrency` UploadParts in flight, Complete;
 * aborts on failure unless keep_failed_upload (then res->upload_id). */
int hops_put_multipart(struct hipobj_client *c, const char *bucket,
                       const char *key, const struct hipobj_mem *src,
                       const char *content_type, uint64_t part_size,
                       unsigned concurrency, int keep_failed_upload,
                       int rdma_policy, struct hxctl *ctl,
                       struct hipobj_xfer_result *res,
                       struct hipobj_error *err);

#endif
