/* error.c - status strings, retryability, and the per-call error detail
 * object (struct hipobj_error). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "strutil.h"

static const char *const status_text[] = {
    [HIPOBJ_OK] = "success",
    [HIPOBJ_E_INVALID_ARGUMENT] = "invalid argument",
    [HIPOBJ_E_OUT_OF_MEMORY] = "out of memory",
    [HIPOBJ_E_CONFIG] = "configuration error",
    [HIPOBJ_E_CONNECT] = "could not connect to the endpoint",
    [HIPOBJ_E_NETWORK] = "network error during the request",
    [HIPOBJ_E_TIMEOUT] = "timed out",
    [HIPOBJ_E_TLS] = "TLS error",
    [HIPOBJ_E_PROTOCOL] = "malformed answer from the server",
    [HIPOBJ_E_NOT_FOUND] = "not found",
    [HIPOBJ_E_ACCESS_DENIED] = "access denied",
    [HIPOBJ_E_PRECONDITION] = "precondition failed (object changed)",
    [HIPOBJ_E_INVALID_RANGE] = "requested range not satisfiable",
    [HIPOBJ_E_CLIENT_ERROR] = "request rejected by the server",
    [HIPOBJ_E_SERVER_ERROR] = "server error",
    [HIPOBJ_E_THROTTLED] = "throttled by the server",
    [HIPOBJ_E_BUFFER_TOO_SMALL] = "destination buffer too small",
    [HIPOBJ_E_IO] = "local I/O error",
    [HIPOBJ_E_CANCELLED] = "cancelled",
    [HIPOBJ_E_UNSUPPORTED] = "not supported",
    [HIPOBJ_E_INTERNAL] = "internal error",
    [HIPOBJ_E_INTEGRITY] = "data integrity check failed",
};

const char *hipobj_strerror(int status) {
  if (status < 0 ||
      (size_t)status >= sizeof status_text / sizeof status_text[0] ||
      !status_text[status])
    return "unknown status";
  return status_text[status];
}

int hipobj_status_is_retryable(int status) {
  switch (status) {
  case HIPOBJ_E_CONNECT:
  case HIPOBJ_E_NETWORK:
  case HIPOBJ_E_TIMEOUT:
  case HIPOBJ_E_SERVER_ERROR:
  case HIPOBJ_E_THROTTLED:
    return 1;
  default:
    return 0;
  }
}

int herr_status_from_http(int http_status, const char *s3_code) {
  const char *c = s3_code ? s3_code : "";
  /* S3 reports some retryable conditions as 4xx; the code says which. */
  if (!strcmp(c, "SlowDown") || !strcmp(c, "Throttling") ||
      !strcmp(c, "ThrottlingException") || http_status == 429)
    return HIPOBJ_E_THROTTLED;
  if (!strcmp(c, "RequestTimeout"))
    return HIPOBJ_E_TIMEOUT;
  if (!strcmp(c, "InternalError") || http_status >= 500)
    return http_status == 503 ? HIPOBJ_E_THROTTLED : HIPOBJ_E_SERVER_ERROR;
  switch (http_status) {
  case 401:
  case 403:
    return HIPOBJ_E_ACCESS_DENIED;
  case 404:
    return HIPOBJ_E_NOT_FOUND;
  case 412:
    return HIPOBJ_E_PRECONDITION;
  case 416:
    return HIPOBJ_E_INVALID_RANGE;
  default:
    return http_status >= 400 ? HIPOBJ_E_CLIENT_ERROR : HIPOBJ_E_PROTOCOL;
  }
}

int hipobj_error_create(struct hipobj_error **out) {
  if (!out)
    return HIPOBJ_E_INVALID_ARGUMENT;
  *out = calloc(1, sizeof **out);
  return *out ? HIPOBJ_OK : HIPOBJ_E_OUT_OF_MEMORY;
}

void hipobj_error_free(struct hipobj_error *err) {
  free(err);
}

void hipobj_error_clear(struct hipobj_error *err) {
  if (err)
    memset(err, 0, sizeof *err);
}

void herr_copy(struct hipobj_error *dst, const struct hipobj_error *src) {
  if (dst && src && dst != src)
    *dst = *src;
}

/* message = "<operation>: <text>", or text alone without an operation. */
static void put_message(struct hipobj_error *err, const char *operation,
                        const char *text) {
  size_t at = 0;
  if (operation && *operation) {
    at = hstrlcpy(err->message, operation, sizeof err->message - 2);
    if (at > sizeof err->message - 3)
      at = sizeof err->message - 3;
    memcpy(err->message + at, ": ", 3);
    at += 2;
  }
  hstrlcpy(err->message + at, text, sizeof err->message - at);
}

int herr_vset(struct hipobj_error *err, int status, const char *operation,
              const char *fmt, va_list ap) {
  if (!err)
    return status;
  unsigned retries = err->retries;
  memset(err, 0, sizeof *err);
  err->status = status;
  err->retries = retries;
  hstrlcpy(err->operation, operation ? operation : "", sizeof err->operation);
  char text[sizeof err->message];
  vsnprintf(text, sizeof text, fmt, ap);
  put_message(err, operation, text);
  return status;
}

int herr_set(struct hipobj_error *err, int status, const char *operation,
             const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  herr_vset(err, status, operation, fmt, ap);
  va_end(ap);
  return status;
}

int herr_op(struct hipobj_error *err, const char *operation, int status) {
  if (!err || status == HIPOBJ_OK || err->operation[0] || !operation ||
      !*operation)
    return status;
  char text[sizeof err->message];
  hstrlcpy(text, err->message, sizeof text);
  hstrlcpy(err->operation, operation, sizeof err->operation);
  put_message(err, operation, text);
  return status;
}

/* Some servers (Ceph RGW among them) send error codes without a Message;
 * S3's wording for the common ones keeps messages readable. */
static const char *default_message(const char *code) {
  static const struct {
    const char *code, *text;
  } texts[] = {
      {"NoSuchKey", "The specified key does not exist."},
      {"NoSuchBucket", "The specified bucket does not exist."},
      {"NoSuchUpload", "The specified multipart upload does not exist."},
      {"AccessDenied", "Access Denied"},
      {"SignatureDoesNotMatch", "The request signature we calculated does "
                                "not match the signature you provided."},
      {"InvalidAccessKeyId", "The AWS access key Id you provided does not "
                             "exist in our records."},
      {"EntityTooSmall", "Your proposed upload is smaller than the minimum "
                         "allowed object size."},
      {"InvalidPart", "One or more of the specified parts could not be "
                      "found."},
      {"InvalidPartOrder", "The list of parts was not in ascending order."},
      {"InvalidRange", "The requested range is not satisfiable."},
      {"BucketAlreadyExists", "The requested bucket name is not available."},
      {"BucketAlreadyOwnedByYou", "The bucket already exists and is owned "
                                  "by you."},
      {"BucketNotEmpty", "The bucket you tried to delete is not empty."},
      {"PreconditionFailed", "At least one of the preconditions you "
                             "specified did not hold."},
      {"SlowDown", "Please reduce your request rate."},
      {"RequestTimeTooSkewed", "The difference between the request time and "
                               "the server's time is too large."},
  };
  for (size_t i = 0; code && i < sizeof texts / sizeof texts[0]; i++)
    if (!strcmp(code, texts[i].code))
      return texts[i].text;
  return NULL;
}

int herr_set_s3(struct hipobj_error *err, int status, const char *operation,
                int http_status, const char *code, const char *message,
                const char *request_id) {
  if (!err)
    return status;
  const char *c = code && *code ? code : NULL;
  const char *m = message && *message ? message : default_message(c);
  if (c && m)
    herr_set(err, status, operation, "%s (%d): %s", c, http_status, m);
  else if (c)
    herr_set(err, status, operation, "%s (%d)", c, http_status);
  else
    herr_set(err, status, operation, "HTTP %d: %s", http_status,
             m ? m : hipobj_strerror(status));
  err->http_status = http_status;
  hstrlcpy(err->s3_code, code ? code : "", sizeof err->s3_code);
  hstrlcpy(err->s3_message, m ? m : "", sizeof err->s3_message);
  hstrlcpy(err->request_id, request_id ? request_id : "",
           sizeof err->request_id);
  return status;
}

int hipobj_error_status(const struct hipobj_error *e) {
  return e ? e->status : HIPOBJ_OK;
}
int hipobj_error_http_status(const struct hipobj_error *e) {
  return e ? e->http_status : 0;
}
const char *hipobj_error_s3_code(const struct hipobj_error *e) {
  return e ? e->s3_code : "";
}
const char *hipobj_error_s3_message(const struct hipobj_error *e) {
  return e ? e->s3_message : "";
}
const char *hipobj_error_request_id(const struct hipobj_error *e) {
  return e ? e->request_id : "";
}
const char *hipobj_error_operation(const struct hipobj_error *e) {
  return e ? e->operation : "";
}
int hipobj_error_sys_errno(const struct hipobj_error *e) {
  return e ? e->sys_errno : 0;
}
unsigned hipobj_error_retries(const struct hipobj_error *e) {
  return e ? e->retries : 0;
}
int hipobj_error_rdma_status(const struct hipobj_error *e) {
  return e && e->has_rdma_status ? e->rdma_status : -1;
}
const char *hipobj_error_message(const struct hipobj_error *e) {
  if (!e)
    return "";
  return e->message[0] ? e->message : hipobj_strerror(e->status);
}
