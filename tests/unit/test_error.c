/* test_error.c - status strings, retryability, HTTP/S3-code mapping and the
 * error detail object's one-line messages. */
#include <criterion/criterion.h>
#include <string.h>

#include "src/base/error.h"

Test(status, every_status_has_text_and_unknown_is_handled) {
  for (int s = HIPOBJ_OK; s <= HIPOBJ_E_INTERNAL; s++) {
    cr_assert_not_null(hipobj_strerror(s));
    cr_assert_str_neq(hipobj_strerror(s), "unknown status", "status %d", s);
  }
  cr_assert_str_eq(hipobj_strerror(-1), "unknown status");
  cr_assert_str_eq(hipobj_strerror(9999), "unknown status");
}

Test(status, retryable_classes) {
  cr_assert(hipobj_status_is_retryable(HIPOBJ_E_NETWORK));
  cr_assert(hipobj_status_is_retryable(HIPOBJ_E_THROTTLED));
  cr_assert(hipobj_status_is_retryable(HIPOBJ_E_SERVER_ERROR));
  cr_assert(hipobj_status_is_retryable(HIPOBJ_E_TIMEOUT));
  cr_assert_not(hipobj_status_is_retryable(HIPOBJ_OK));
  cr_assert_not(hipobj_status_is_retryable(HIPOBJ_E_NOT_FOUND));
  cr_assert_not(hipobj_status_is_retryable(HIPOBJ_E_ACCESS_DENIED));
  cr_assert_not(hipobj_status_is_retryable(HIPOBJ_E_PROTOCOL));
}

Test(status, http_and_code_mapping) {
  cr_assert_eq(herr_status_from_http(404, "NoSuchKey"), HIPOBJ_E_NOT_FOUND);
  cr_assert_eq(herr_status_from_http(403, "SignatureDoesNotMatch"),
               HIPOBJ_E_ACCESS_DENIED);
  cr_assert_eq(herr_status_from_http(503, "SlowDown"), HIPOBJ_E_THROTTLED);
  cr_assert_eq(herr_status_from_http(400, "RequestTimeout"), HIPOBJ_E_TIMEOUT);
  cr_assert_eq(herr_status_from_http(500, ""), HIPOBJ_E_SERVER_ERROR);
  cr_assert_eq(herr_status_from_http(412, NULL), HIPOBJ_E_PRECONDITION);
  cr_assert_eq(herr_status_from_http(416, "InvalidRange"),
               HIPOBJ_E_INVALID_RANGE);
  cr_assert_eq(herr_status_from_http(400, "EntityTooSmall"),
               HIPOBJ_E_CLIENT_ERROR);
  cr_assert_eq(herr_status_from_http(429, NULL), HIPOBJ_E_THROTTLED);
}

Test(detail, s3_message_line_and_fields) {
  struct hipobj_error *e;
  cr_assert_eq(hipobj_error_create(&e), HIPOBJ_OK);
  herr_set_s3(e, HIPOBJ_E_NOT_FOUND, "GetObject", 404, "NoSuchKey", "",
              "req-1");
  cr_assert_str_eq(hipobj_error_message(e),
                   "GetObject: NoSuchKey (404): The specified key does not "
                   "exist.");
  cr_assert_eq(hipobj_error_status(e), HIPOBJ_E_NOT_FOUND);
  cr_assert_eq(hipobj_error_http_status(e), 404);
  cr_assert_str_eq(hipobj_error_request_id(e), "req-1");
  cr_assert_str_eq(hipobj_error_operation(e), "GetObject");
  herr_set_s3(e, HIPOBJ_E_CLIENT_ERROR, "UploadPart #3", 400, "Weird",
              "server said so", NULL);
  cr_assert_str_eq(hipobj_error_message(e),
                   "UploadPart #3: Weird (400): server said so");
  hipobj_error_clear(e);
  cr_assert_eq(hipobj_error_status(e), HIPOBJ_OK);
  cr_assert_str_eq(hipobj_error_s3_code(e), "");
  hipobj_error_free(e);
}

Test(detail, long_messages_are_truncated_not_overflowed) {
  struct hipobj_error *e;
  hipobj_error_create(&e);
  char big[4000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  herr_set(e, HIPOBJ_E_PROTOCOL, "ListObjectsV2", "%s", big);
  cr_assert_lt(strlen(hipobj_error_message(e)), 1024);
  cr_assert_eq(strncmp(hipobj_error_message(e), "ListObjectsV2: xxx", 18), 0);
  hipobj_error_free(e);
}

Test(detail, null_error_objects_are_accepted) {
  cr_assert_eq(herr_set(NULL, HIPOBJ_E_IO, "op", "x"), HIPOBJ_E_IO);
  cr_assert_eq(hipobj_error_status(NULL), HIPOBJ_OK);
  cr_assert_str_eq(hipobj_error_message(NULL), "");
  hipobj_error_free(NULL);
}

/* The layers below src/ report with operation NULL (the bare reason); the
 * caller names its operation with herr_op, which gives the message herr_set
 * with that operation would have given. */
Test(detail, building_blocks_report_bare_reasons_the_caller_names) {
  struct hipobj_error *e;
  hipobj_error_create(&e);
  e->retries = 3;
  cr_assert_eq(herr_set(e, HIPOBJ_E_PROTOCOL, NULL, "missing <%s>", "ETag"),
               HIPOBJ_E_PROTOCOL);
  cr_assert_str_eq(hipobj_error_message(e), "missing <ETag>");
  cr_assert_str_eq(hipobj_error_operation(e), "");
  cr_assert_eq(herr_op(e, "CompleteMultipartUpload", HIPOBJ_E_PROTOCOL),
               HIPOBJ_E_PROTOCOL);
  cr_assert_str_eq(hipobj_error_message(e),
                   "CompleteMultipartUpload: missing <ETag>");
  cr_assert_str_eq(hipobj_error_operation(e), "CompleteMultipartUpload");
  cr_assert_eq(hipobj_error_status(e), HIPOBJ_E_PROTOCOL);
  cr_assert_eq(hipobj_error_retries(e), 3);
  /* Named once: an outer caller does not prefix again. */
  herr_op(e, "Outer", HIPOBJ_E_PROTOCOL);
  cr_assert_str_eq(hipobj_error_message(e),
                   "CompleteMultipartUpload: missing <ETag>");
  /* Success, or no error object: nothing to name. */
  hipobj_error_clear(e);
  cr_assert_eq(herr_op(e, "GetObject", HIPOBJ_OK), HIPOBJ_OK);
  cr_assert_str_eq(hipobj_error_operation(e), "");
  cr_assert_eq(herr_op(NULL, "GetObject", HIPOBJ_E_IO), HIPOBJ_E_IO);
  hipobj_error_free(e);
}
