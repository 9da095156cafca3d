/** @file
 * hipobj/error.h - part of the public API of hipObject: status codes and the
 * error detail. Include <hipobj.h>, which includes this file where it belongs
 * (after the declarations it uses); the split only keeps each file readable. */
#ifndef HIPOBJ_PUBLIC_ERROR_H
#define HIPOBJ_PUBLIC_ERROR_H

#ifndef HIPOBJ_H
#error "include <hipobj.h>, not <hipobj/error.h>"
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/** Status codes. Values are stable and never renumbered; new ones are only
 *  appended. The S3 error code behind a failure is in struct hipobj_error. */
enum hipobj_status {
  HIPOBJ_OK = 0, /**< Success. */
  HIPOBJ_E_INVALID_ARGUMENT =
      1, /**< A parameter is invalid (NULL, range, name). */
  HIPOBJ_E_OUT_OF_MEMORY = 2, /**< An allocation failed. */
  HIPOBJ_E_CONFIG = 3, /**< Configuration incomplete or invalid (no endpoint, no
                          credentials, bad URL). */
  HIPOBJ_E_CONNECT = 4, /**< Could not resolve or connect to the endpoint. */
  HIPOBJ_E_NETWORK =
      5, /**< Connection reset or send/receive failure during a request. */
  HIPOBJ_E_TIMEOUT =
      6, /**< A connect or transfer timeout expired (also S3 RequestTimeout). */
  HIPOBJ_E_TLS = 7, /**< TLS handshake or certificate verification failed. */
  HIPOBJ_E_PROTOCOL = 8,  /**< The server's answer is malformed: bad XML, wrong
                             length, wrong Content-Range. */
  HIPOBJ_E_NOT_FOUND = 9, /**< 404: no such bucket, key or upload. */
  HIPOBJ_E_ACCESS_DENIED =
      10, /**< 401/403: bad credentials, signature mismatch, access denied. */
  HIPOBJ_E_PRECONDITION =
      11, /**< 412: If-Match / If-None-Match failed (the object changed). */
  HIPOBJ_E_INVALID_RANGE =
      12, /**< 416: the requested range is not satisfiable. */
  HIPOBJ_E_CLIENT_ERROR = 13, /**< Any other 4xx answer from the server. */
  HIPOBJ_E_SERVER_ERROR = 14, /**< 5xx answer from the server. */
  HIPOBJ_E_THROTTLED =
      15, /**< 503 SlowDown / 429: the server asks to slow down. */
  HIPOBJ_E_BUFFER_TOO_SMALL =
      16, /**< The destination is smaller than the data. */
  HIPOBJ_E_IO =
      17, /**< A local I/O operation failed (errno in the error detail). */
  HIPOBJ_E_CANCELLED = 18, /**< The operation was cancelled. */
  HIPOBJ_E_UNSUPPORTED =
      19, /**< Not supported by this build, this memory kind or this server. */
  HIPOBJ_E_INTERNAL = 20, /**< A bug in hipObject; please report it. */
  HIPOBJ_E_INTEGRITY =
      21, /**< The bytes are not what they should be: a checksum mismatch,
             or a server that stored another size than was sent. */
};

/** A static, human-readable description of a status code. Never NULL. */
HIPOBJ_API const char *hipobj_strerror(int status);

/** Non-zero when an operation that failed with this status may succeed if
 *  repeated (network failures, timeouts, 5xx, throttling). */
HIPOBJ_API int hipobj_status_is_retryable(int status);

/* ------------------------------------------------------------------------ */
/* Error detail                                                             */
/* ------------------------------------------------------------------------ */

/** Details of a failed call. Create one, pass it to any number of calls
 *  (one call at a time), read it after a failure. Never contains secrets. */
struct hipobj_error;

/** Allocates an empty error detail object. */
HIPOBJ_API int hipobj_error_create(struct hipobj_error **out);
/** Frees an error detail object. NULL is allowed. */
HIPOBJ_API void hipobj_error_free(struct hipobj_error *err);
/** Resets all fields to "no error". */
HIPOBJ_API void hipobj_error_clear(struct hipobj_error *err);
/** The status of the failure (HIPOBJ_OK if none recorded). */
HIPOBJ_API int hipobj_error_status(const struct hipobj_error *err);
/** HTTP status of the failing response, 0 when none was received. */
HIPOBJ_API int hipobj_error_http_status(const struct hipobj_error *err);
/** S3 error `Code` (e.g. "NoSuchKey"), "" when none. */
HIPOBJ_API const char *hipobj_error_s3_code(const struct hipobj_error *err);
/** S3 error `Message`, "" when none. */
HIPOBJ_API const char *hipobj_error_s3_message(const struct hipobj_error *err);
/** S3 `RequestId` (or x-amz-request-id), "" when none. */
HIPOBJ_API const char *hipobj_error_request_id(const struct hipobj_error *err);
/** The failing sub-operation, e.g. "GetObject", "UploadPart #3". */
HIPOBJ_API const char *hipobj_error_operation(const struct hipobj_error *err);
/** errno of a failed system call, 0 when none. */
HIPOBJ_API int hipobj_error_sys_errno(const struct hipobj_error *err);
/** Number of retries made before giving up. */
HIPOBJ_API unsigned hipobj_error_retries(const struct hipobj_error *err);
/** One line of text describing the failure, e.g.
 *  "GetObject: NoSuchKey (404): The specified key does not exist." */
HIPOBJ_API const char *hipobj_error_message(const struct hipobj_error *err);
/** RDMA transfers: the ibv_wc_status of the completion that failed (e.g. 12
 *  = IBV_WC_RETRY_EXC_ERR), -1 when no completion failed. */
HIPOBJ_API int hipobj_error_rdma_status(const struct hipobj_error *err);

#endif /* HIPOBJ_PUBLIC_ERROR_H */
