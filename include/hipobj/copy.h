/** @file
 * hipobj/copy.h - part of the public API of hipObject: server-side copies
 * (CopyObject, UploadPartCopy) and presigned URLs. Include <hipobj.h>, which
 * includes this file where it belongs (after the declarations it uses); the
 * split only keeps each file readable. */
#ifndef HIPOBJ_PUBLIC_COPY_H
#define HIPOBJ_PUBLIC_COPY_H

#ifndef HIPOBJ_H
#error "include <hipobj.h>, not <hipobj/copy.h>"
#endif

/* ------------------------------------------------------------------------ */
/* Server-side copy                                                         */
/* ------------------------------------------------------------------------ */

/** S3's limit of one CopyObject request: 5 GiB. */
#define HIPOBJ_COPY_SINGLE_MAX ((uint64_t)5 << 30)

/** Options of hipobj_s3_copy(). */
struct hipobj_copy_opts {
  size_t struct_size; /**< sizeof(struct hipobj_copy_opts). */
  /** NULL: the copy keeps the source's Content-Type and metadata; set:
   *  the copy gets this type (and no user metadata). */
  const char *content_type;
  /** Above this size the copy is a multipart upload whose parts are
   *  UploadPartCopy requests; 0: HIPOBJ_COPY_SINGLE_MAX, the most one
   *  CopyObject may copy. At most HIPOBJ_COPY_SINGLE_MAX. */
  uint64_t multipart_threshold;
  /** Part size of a multipart copy; 0: the client's part size, grown so
   *  that the object fits 10000 parts. At least 5 MiB (S3's minimum). */
  uint64_t part_size;
  /** Fail with HIPOBJ_E_PRECONDITION unless the source's ETag is this
   *  (x-amz-copy-source-if-match); NULL: the ETag the copy starts with,
   *  for every part of a multipart copy. */
  const char *if_match;
};
/** Initialiser for struct hipobj_copy_opts. */
#define HIPOBJ_COPY_OPTS_INIT                                                  \
  { .struct_size = sizeof(struct hipobj_copy_opts) }

/** Copies src_bucket/src_key to dst_bucket/dst_key inside the server: no
 *  byte passes through this process. Learns the source's size, ETag and
 *  type with HeadObject, then sends one CopyObject, or above
 *  multipart_threshold a multipart upload of UploadPartCopy parts, each
 *  pinned to the source's ETag (an overwrite during the copy fails it
 *  with HIPOBJ_E_PRECONDITION), aborted on failure. An `<Error>` inside a
 *  200 answer, which S3 may send once a copy has started, is a failure.
 *  res (optional) gets bytes (the object's size), parts, seconds and the
 *  new ETag. */
HIPOBJ_API int hipobj_s3_copy(struct hipobj_client *client,
                              const char *src_bucket, const char *src_key,
                              const char *dst_bucket, const char *dst_key,
                              const struct hipobj_copy_opts *opts,
                              struct hipobj_xfer_result *res,
                              struct hipobj_error *err);

/* ------------------------------------------------------------------------ */
/* Presigned URLs                                                           */
/* ------------------------------------------------------------------------ */

/** The longest validity SigV4 allows a presigned URL: 7 days. */
#define HIPOBJ_PRESIGN_MAX_SECONDS 604800u

/** A presigned URL: anyone holding it may send `method` ("GET", "PUT",
 *  "HEAD" or "DELETE") on bucket/key for expires_s seconds (1 to
 *  HIPOBJ_PRESIGN_MAX_SECONDS) from now, without credentials, e.g. with
 *  curl. Signed with SigV4 in the query string (X-Amz-Signature), only the
 *  host header signed, the payload UNSIGNED-PAYLOAD; a session token goes
 *  along as X-Amz-Security-Token. Makes no request. *url is freed with
 *  hipobj_free(). HIPOBJ_E_CONFIG for an anonymous client (nothing to sign
 *  with); HIPOBJ_E_INVALID_ARGUMENT for another method or validity. */
HIPOBJ_API int hipobj_s3_presign(struct hipobj_client *client,
                                 const char *method, const char *bucket,
                                 const char *key, unsigned expires_s,
                                 char **url, struct hipobj_error *err);

#endif /* HIPOBJ_PUBLIC_COPY_H */
