/* test_engine.c - the HTTP engine, runner and operations against a scripted
 * HTTP server (real libcurl, real sockets): retries and their limits, error
 * classification, integrity checks on bodies and ranges, the "200 with
 * <Error>" answer, and abort of failed multipart uploads. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj.h"
#include "mini_server.h"

#define XML_HDR "Content-Type: application/xml\r\n"
#define OK_EMPTY "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

static struct mini_server *srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;

static void start(const struct mini_reply *script, size_t n,
                  unsigned max_attempts) {
  srv = mini_start(script, n);
  struct hipobj_client_config cfg;
  mini_client_config(srv, &cfg);
  cfg.max_attempts = max_attempts;
  cfg.retry_base_ms = 1;
  cfg.part_size = 5 << 20;
  hipobj_error_create(&err);
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
}

static void stop(void) {
  hipobj_client_free(cli);
  mini_stop(srv);
  hipobj_error_free(err);
}

static void init(void) {
  hipobj_global_init();
}
static void fini(void) {
  hipobj_global_cleanup();
}

TestSuite(engine, .init = init, .fini = fini, .timeout = 60);

Test(engine, slowdown_then_success_is_retried) {
  static const struct mini_reply script[] = {
      {NULL, 0, "503 Slow Down", XML_HDR,
       "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>slow"
       "</Message></Error>"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"e\"\r\n\r\nhello", 0},
  };
  start(script, 2, 4);
  char buf[16] = {0};
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, &res, err);
  cr_assert_eq(rc, HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_assert_eq(res.bytes, 5);
  cr_assert_eq(res.retries, 1);
  cr_assert_str_eq(buf, "hello");
  cr_assert_eq(mini_count(srv), 2);
  cr_assert_eq(mini_connections(srv), 1, "the connection is reused");
  /* Each attempt is signed again. */
  cr_assert_not_null(mini_request_header(srv, 1, "authorization"));
  stop();
}

Test(engine, server_errors_give_up_after_max_attempts) {
  static const struct mini_reply script[] = {
      {"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n", 0},
      {"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n", 0},
      {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 0},
  };
  start(script, 3, 2);
  char buf[4];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_SERVER_ERROR);
  cr_assert_eq(hipobj_error_http_status(err), 502);
  cr_assert_eq(hipobj_error_retries(err), 1);
  cr_assert_eq(res.bytes, 0);
  cr_assert_eq(mini_count(srv), 2);
  cr_assert(hipobj_status_is_retryable(rc));
  stop();
}

Test(engine, not_found_and_auth_errors_are_not_retried) {
  static const struct mini_reply script[] = {
      {NULL, 0, "404 Not Found", XML_HDR,
       "<Error><Code>NoSuchKey</Code><Message>The specified key does not "
       "exist.</Message><RequestId>tx0001</RequestId></Error>"},
      {NULL, 0, "403 Forbidden", XML_HDR,
       "<Error><Code>SignatureDoesNotMatch</Code></Error>"},
  };
  start(script, 2, 4);
  char buf[4];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_NOT_FOUND);
  cr_assert_str_eq(hipobj_error_s3_code(err), "NoSuchKey");
  cr_assert_str_eq(hipobj_error_request_id(err), "tx0001");
  cr_assert_str_eq(hipobj_error_operation(err), "GetObject");
  cr_assert_str_eq(hipobj_error_message(err),
                   "GetObject: NoSuchKey (404): The specified key does not "
                   "exist.");
  rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_ACCESS_DENIED);
  cr_assert_str_eq(hipobj_error_s3_code(err), "SignatureDoesNotMatch");
  cr_assert_null(strstr(hipobj_error_message(err), "SECRET"));
  cr_assert_eq(mini_count(srv), 2, "no retry for 4xx");
  stop();
}

Test(engine, short_body_is_an_error_never_success) {
  static const struct mini_reply script[] = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly-twenty-bytes...", 1},
      {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nagain short", 1},
  };
  start(script, 2, 2);
  char buf[128];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_NETWORK, "%s", hipobj_error_message(err));
  cr_assert_eq(res.bytes, 0, "partial data reported");
  cr_assert_eq(mini_count(srv), 2, "a short body is retried");
  stop();
}

Test(engine, body_larger_than_buffer_fails_before_writing) {
  static const struct mini_reply script[] = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", 0},
  };
  start(script, 1, 4);
  char buf[8] = "XXXXXXX";
  struct hipobj_mem dst = hipobj_mem_host(buf, 4);
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_BUFFER_TOO_SMALL, "%s", hipobj_error_message(err));
  cr_assert_str_eq(buf, "XXXXXXX", "nothing written");
  cr_assert_eq(mini_count(srv), 1, "not retried");
  stop();
}

Test(engine, range_answer_must_match_request) {
  static const struct mini_reply script[] = {
      /* Wrong start. */
      {"HTTP/1.1 206 Partial Content\r\nContent-Length: 4\r\n"
       "Content-Range: bytes 0-3/100\r\n\r\nabcd",
       0},
      /* Range ignored: whole object at offset 10 would be misplaced. */
      {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd", 0},
      /* Correct. */
      {"HTTP/1.1 206 Partial Content\r\nContent-Length: 4\r\n"
       "Content-Range: bytes 10-13/100\r\n\r\nabcd",
       0},
  };
  start(script, 3, 1);
  char buf[8] = {0};
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.has_range = 1;
  o.offset = 10;
  o.length = 4;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_s3_get(cli, "bkt", "k", &dst, &o, &res, err),
               HIPOBJ_E_PROTOCOL);
  cr_assert_eq(res.bytes, 0);
  cr_assert_eq(hipobj_s3_get(cli, "bkt", "k", &dst, &o, &res, err),
               HIPOBJ_E_PROTOCOL);
  cr_assert(strstr(hipobj_error_message(err), "ignored the Range"));
  cr_assert_eq(hipobj_s3_get(cli, "bkt", "k", &dst, &o, &res, err), HIPOBJ_OK,
               "%s", hipobj_error_message(err));
  cr_assert_eq(res.bytes, 4);
  cr_assert_eq(res.object_size, 100);
  cr_assert_str_eq(mini_request_header(srv, 2, "range"), "bytes=10-13");
  stop();
}

Test(engine, connection_refused_is_connect_error) {
  static const struct mini_reply none[] = {{OK_EMPTY, 0}};
  srv = mini_start(none, 1);
  char url[64];
  strcpy(url, mini_url(srv));
  mini_stop(srv); /* the port is now closed */
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = url;
  cfg.access_key_id = "AK";
  cfg.secret_access_key = "SK";
  cfg.max_attempts = 2;
  cfg.retry_base_ms = 1;
  cfg.log_level = HIPOBJ_LOG_NONE;
  hipobj_error_create(&err);
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK);
  char buf[4];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_CONNECT, "%s", hipobj_error_message(err));
  cr_assert_eq(hipobj_error_retries(err), 1);
  /* The cause is in the text (libcurl's words), not a libcurl code. */
  cr_assert(strcasestr(hipobj_error_message(err), "connect"), "%s",
            hipobj_error_message(err));
  cr_assert(strstr(hipobj_error_message(err), "Connection refused"), "%s",
            hipobj_error_message(err));
  cr_assert_eq(hipobj_error_http_status(err), 0);
  hipobj_client_free(cli);
  hipobj_error_free(err);
}

/* Every attempt at an unknown host says so, the last one (the one the
 * caller sees) included: a retry used to reuse the failed libcurl handle
 * and end in "could not set up the transfer". */
Test(engine, unknown_host_is_named_on_every_attempt) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = "http://no-such-host.invalid:9000";
  cfg.access_key_id = "AK";
  cfg.secret_access_key = "SK";
  cfg.max_attempts = 3;
  cfg.retry_base_ms = 1;
  cfg.log_level = HIPOBJ_LOG_NONE;
  hipobj_error_create(&err);
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK);
  char buf[4];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_CONNECT, "%s", hipobj_error_message(err));
  cr_assert_eq(hipobj_error_retries(err), 2);
  cr_assert(
      strstr(hipobj_error_message(err), "resolve host: no-such-host.invalid"),
      "%s", hipobj_error_message(err));
  hipobj_client_free(cli);
  hipobj_error_free(err);
}

#define INITIATE                                                               \
  NULL, 0, "200 OK", XML_HDR,                                                  \
      "<InitiateMultipartUploadResult><Bucket>bkt</Bucket><Key>k</Key>"        \
      "<UploadId>UPLOAD-1</UploadId></InitiateMultipartUploadResult>"
#define PART_OK "HTTP/1.1 200 OK\r\nETag: \"p\"\r\nContent-Length: 0\r\n\r\n"
#define ABORTED "HTTP/1.1 204 No Content\r\n\r\n"

Test(engine, failed_part_aborts_the_upload) {
  static const struct mini_reply script[] = {
      {INITIATE},
      {PART_OK, 0},
      {NULL, 0, "403 Forbidden", XML_HDR,
       "<Error><Code>AccessDenied</Code></Error>"},
      {ABORTED, 0},
  };
  start(script, 4, 4);
  size_t n = (5u << 20) + 1;
  char *data = calloc(1, n);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.concurrency = 1; /* parts in order, so the script holds */
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_put(cli, "bkt", "k", &src, &o, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_ACCESS_DENIED);
  cr_assert_str_eq(hipobj_error_operation(err), "UploadPart #2");
  cr_assert_eq(mini_count(srv), 4);
  cr_assert_str_eq(mini_request_line(srv, 0), "POST /bkt/k?uploads=");
  cr_assert_str_eq(mini_request_line(srv, 1),
                   "PUT /bkt/k?partNumber=1&uploadId=UPLOAD-1");
  cr_assert_str_eq(mini_request_line(srv, 3),
                   "DELETE /bkt/k?uploadId=UPLOAD-1");
  cr_assert_str_eq(res.upload_id, "");
  free(data);
  stop();
}

Test(engine, keep_failed_upload_returns_its_id) {
  static const struct mini_reply script[] = {
      {INITIATE},
      {NULL, 0, "400 Bad Request", XML_HDR,
       "<Error><Code>InvalidArgument</Code></Error>"},
  };
  start(script, 2, 4);
  size_t n = (5u << 20) + 1;
  char *data = calloc(1, n);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.concurrency = 1;
  o.keep_failed_upload = 1;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_put(cli, "bkt", "k", &src, &o, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_CLIENT_ERROR);
  cr_assert_str_eq(res.upload_id, "UPLOAD-1");
  cr_assert_eq(mini_count(srv), 2, "no abort sent");
  free(data);
  stop();
}

Test(engine, complete_with_error_inside_200) {
  static const struct mini_reply script[] = {
      {INITIATE},
      {PART_OK, 0},
      {PART_OK, 0},
      /* Retryable InternalError inside 200: tried again. */
      {NULL, 0, "200 OK", XML_HDR,
       "<Error><Code>InternalError</Code><Message>try again</Message>"
       "</Error>"},
      {NULL, 0, "200 OK", XML_HDR,
       "<Error><Code>InvalidPart</Code><Message>gone</Message></Error>"},
      {ABORTED, 0},
  };
  start(script, 6, 4);
  size_t n = (5u << 20) + 1;
  char *data = calloc(1, n);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.concurrency = 1;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_put(cli, "bkt", "k", &src, &o, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_CLIENT_ERROR, "%s", hipobj_error_message(err));
  cr_assert_str_eq(hipobj_error_s3_code(err), "InvalidPart");
  cr_assert_eq(hipobj_error_http_status(err), 200);
  cr_assert_eq(res.bytes, 0);
  cr_assert_eq(mini_count(srv), 6, "Complete retried once, then aborted");
  /* Create names the object's type (the default, none was given);
   * Complete's XML body is not the object's, so it names none. */
  cr_assert_str_eq(mini_request_header(srv, 0, "content-type"),
                   "application/octet-stream");
  cr_assert_null(mini_request_header(srv, 3, "content-type"), "%s",
                 mini_request_header(srv, 3, "content-type"));
  cr_assert_str_eq(mini_request_line(srv, 5),
                   "DELETE /bkt/k?uploadId=UPLOAD-1");
  free(data);
  stop();
}

Test(engine, malformed_list_xml_is_a_protocol_error) {
  static const struct mini_reply script[] = {
      {NULL, 0, "200 OK", XML_HDR, "<ListBucketResult><Contents><K"},
  };
  start(script, 1, 1);
  struct hipobj_list_page *page = NULL;
  int rc = hipobj_s3_list(cli, "bkt", NULL, &page, err);
  cr_assert_eq(rc, HIPOBJ_E_PROTOCOL);
  cr_assert_null(page);
  cr_assert(strlen(hipobj_error_message(err)) > strlen("ListObjectsV2: "));
  cr_assert_str_eq(mini_request_line(srv, 0),
                   "GET /bkt/?encoding-type=url&list-type=2");
  stop();
}

Test(engine, put_signs_payload_and_sends_headers) {
  static const struct mini_reply script[] = {{PART_OK, 0}};
  start(script, 1, 1);
  char data[] = "Welcome to Amazon S3.";
  struct hipobj_mem src = hipobj_mem_host(data, strlen(data));
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.content_type = "text/plain";
  int rc = hipobj_s3_put(cli, "bkt", "dir/a b+c", &src, &o, NULL, err);
  cr_assert_eq(rc, HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_assert_str_eq(mini_request_line(srv, 0), "PUT /bkt/dir/a%20b%2Bc");
  cr_assert_str_eq(
      mini_request_header(srv, 0, "x-amz-content-sha256"),
      "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  cr_assert_str_eq(mini_request_header(srv, 0, "content-type"), "text/plain");
  cr_assert_eq(mini_request_body_len(srv, 0), strlen(data));
  cr_assert_null(mini_request_header(srv, 0, "expect"));
  stop();
}

/* An error body of `n` bytes: `head` and then junk. */
static char *long_error_body(const char *head, size_t n) {
  char *b = malloc(n + 1);
  memset(b, 'x', n);
  memcpy(b, head, strlen(head));
  b[n] = '\0';
  return b;
}

Test(engine, error_body_over_the_limit_ends_the_transfer) {
  /* Longer than the 64 KiB kept of an error body: the transfer ends there
   * (a fresh connection for the retry), and the error comes from the
   * complete elements at its beginning. */
  char *body = long_error_body(
      "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>slow down"
      "</Message><RequestId>RID-1</RequestId><Junk>",
      256 * 1024);
  const struct mini_reply script[] = {
      {NULL, 0, "503 Slow Down", XML_HDR, body},
      {NULL, 0, "503 Slow Down", XML_HDR, body},
  };
  start(script, 2, 2);
  char buf[16];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_THROTTLED, "%s", hipobj_error_message(err));
  cr_assert_eq(hipobj_error_http_status(err), 503);
  cr_assert_str_eq(hipobj_error_s3_code(err), "SlowDown");
  cr_assert_str_eq(hipobj_error_request_id(err), "RID-1");
  const char *m = hipobj_error_message(err);
  cr_assert(strstr(m, "slow down") && strstr(m, "not read further"), "%s", m);
  cr_assert_eq(hipobj_error_retries(err), 1);
  cr_assert_eq(mini_count(srv), 2);
  cr_assert_eq(mini_connections(srv), 2, "the cut connection was reused");
  stop();
  free(body);
}

Test(engine, long_error_body_without_s3_xml_says_so) {
  char *body = long_error_body("<html><body>gateway trouble", 100 * 1024);
  const struct mini_reply script[] = {{NULL, 0, "502 Bad Gateway", NULL, body}};
  start(script, 1, 1);
  char buf[16];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  int rc = hipobj_s3_get(cli, "bkt", "k", &dst, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_SERVER_ERROR, "%s", hipobj_error_message(err));
  cr_assert_eq(hipobj_error_http_status(err), 502);
  cr_assert_not_null(
      strstr(hipobj_error_message(err), "error body exceeded 65536 bytes"),
      "%s", hipobj_error_message(err));
  stop();
  free(body);
}
