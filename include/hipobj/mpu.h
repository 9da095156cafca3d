/** @file
 * hipobj/mpu.h - part of the public API of hipObject: multipart uploads, step
 * by step. Include <hipobj.h>, which includes this file where it belongs (after
 * the declarations it uses); the split only keeps each file readable. */
#ifndef HIPOBJ_PUBLIC_MPU_H
#define HIPOBJ_PUBLIC_MPU_H

#ifndef HIPOBJ_H
#error "include <hipobj.h>, not <hipobj/mpu.h>"
#endif

/* ------------------------------------------------------------------------ */
/* Multipart uploads, step by step                                          */
/* ------------------------------------------------------------------------ */

/** A multipart upload in progress: bucket, key, upload id and the parts
 *  uploaded through it. Parts may be uploaded from several threads at once. */
struct hipobj_mpu;

/** CreateMultipartUpload. content_type may be NULL. */
HIPOBJ_API int hipobj_mpu_create(struct hipobj_client *client,
                                 const char *bucket, const char *key,
                                 const char *content_type,
                                 struct hipobj_mpu **out,
                                 struct hipobj_error *err);
/** A handle for an existing upload id (to resume it). The parts already on
 *  the server are learnt with hipobj_mpu_list_parts(). */
HIPOBJ_API int hipobj_mpu_open(struct hipobj_client *client, const char *bucket,
                               const char *key, const char *upload_id,
                               struct hipobj_mpu **out,
                               struct hipobj_error *err);
/** The upload id. */
HIPOBJ_API const char *hipobj_mpu_upload_id(const struct hipobj_mpu *mpu);
/** Frees the handle (does not abort the upload). NULL is allowed. */
HIPOBJ_API void hipobj_mpu_free(struct hipobj_mpu *mpu);

/** UploadPart: part_number 1..10000, data from src. The ETag is recorded in
 *  the handle for hipobj_mpu_complete() and returned in res->etag. */
HIPOBJ_API int hipobj_mpu_upload_part(struct hipobj_mpu *mpu,
                                      unsigned part_number,
                                      const struct hipobj_mem *src,
                                      struct hipobj_xfer_result *res,
                                      struct hipobj_error *err);
/** CompleteMultipartUpload with every part recorded in the handle, in part
 *  order. An `<Error>` inside a 200 answer is reported as a failure. */
HIPOBJ_API int hipobj_mpu_complete(struct hipobj_mpu *mpu,
                                   struct hipobj_xfer_result *res,
                                   struct hipobj_error *err);
/** AbortMultipartUpload. */
HIPOBJ_API int hipobj_mpu_abort(struct hipobj_mpu *mpu,
                                struct hipobj_error *err);

/** ListParts: the parts the server holds for this upload (all pages). They
 *  replace the parts recorded in the handle, so an upload can be resumed. */
HIPOBJ_API int hipobj_mpu_list_parts(struct hipobj_mpu *mpu,
                                     struct hipobj_error *err);
/** Number of parts recorded in the handle. */
HIPOBJ_API size_t hipobj_mpu_part_count(const struct hipobj_mpu *mpu);
/** Part i (in part-number order): number, size and ETag. Returns
 *  HIPOBJ_E_INVALID_ARGUMENT when i is out of range. */
HIPOBJ_API int hipobj_mpu_part(const struct hipobj_mpu *mpu, size_t i,
                               unsigned *number, uint64_t *size,
                               const char **etag);

#endif /* HIPOBJ_PUBLIC_MPU_H */
