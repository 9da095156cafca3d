/* error.h - the layout of struct hipobj_error and the helpers that fill it
 * (herr_*): how src/ and the layers below it (src/base/, s3/, rdma/) report
 * a failure (the convention: docs/architecture.md). Users of the library
 * see only the accessors of hipobj.h (error.c). */
#ifndef HIPOBJ_BASE_ERROR_H
#define HIPOBJ_BASE_ERROR_H

#include <stdarg.h>

#include "hipobj.h"

struct hipobj_error {
  int status;
  int http_status;
  int sys_errno;
  unsigned retries;
  char s3_code[64];
  char s3_message[512];
  char request_id[128];
  char operation[64];
  char message[1024];
  /* RDMA data phase: the ibv_wc_status of the failed completion, valid
   * when has_rdma_status (0 is IBV_WC_SUCCESS, so it needs the flag). */
  int rdma_status;
  int has_rdma_status;
};

/* All setters accept err == NULL and return `status` so they can end a call:
 *   return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "GetObject", "bucket is
 * empty"); The one-line message is built as "<operation>: <text>", or is
 * the text alone when operation is NULL or "" (see herr_op). */
int herr_set(struct hipobj_error *err, int status, const char *operation,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int herr_vset(struct hipobj_error *err, int status, const char *operation,
              const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* Names the operation of a failure that a building block reported without
 * one. Parsers, checks and request signing (s3/request.h, xml.h,
 * xml_server.h, http.h's create, rdma/token.h, rc_check) work inside their
 * caller's operation, so they fill err with operation NULL and the bare
 * reason; the caller that knows the operation then sets it and prefixes
 * the message with "<operation>: ", as herr_set would have. Returns status
 * unchanged, so it wraps the call:
 *   rc = herr_op(err, op, s3_check_key(key, err));
 * Does nothing when status is HIPOBJ_OK, err is NULL or already names an
 * operation. */
int herr_op(struct hipobj_error *err, const char *operation, int status);
/* An S3 error answer: message "<op>: <Code> (<http>): <Message>". */
int herr_set_s3(struct hipobj_error *err, int status, const char *operation,
                int http_status, const char *code, const char *message,
                const char *request_id);
/* Maps an HTTP status and S3 error code to a status enum value. */
int herr_status_from_http(int http_status, const char *s3_code);
/* Copies src into dst (both may be NULL). */
void herr_copy(struct hipobj_error *dst, const struct hipobj_error *src);

#endif
