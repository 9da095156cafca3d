/* test_s3.c - object integration tests against a real S3 server (Ceph RGW
 * under tests/with-rgw.sh): put/get round trips, ranges, head, delete and
 * error reporting, through the public API only. Multipart, listing and
 * concurrency live in test_s3_multipart.c. */
#include "s3_fixture.h"

#include <criterion/criterion.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

TestSuite(s3_object, .init = fx_setup, .fini = fx_teardown, .timeout = 300);

/* The ETag of key as HEAD reports it (the server's truth). */
static void head_etag(const char *key, char *etag) {
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  fx_check(hipobj_s3_head(fx.client, fx.bucket, key, &info, fx.err), "head",
           fx.err);
  snprintf(etag, HIPOBJ_ETAG_MAX, "%s", info.etag);
}

/* Puts size random bytes, checks how many parts the server assembled, reads
 * them back, compares, deletes. */
static void round_trip(const char *key, size_t size, uint64_t seed,
                       const struct hipobj_put_opts *po, unsigned parts) {
  unsigned char *data = fx_random(size, seed);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  fx_put(key, data, size, po, &res);
  cr_expect_eq(res.parts, parts, "put '%s' (%zu B): %u parts, want %u", key,
               size, res.parts, parts);

  /* A multipart ETag is "<md5 of part md5s>-<parts>". Ceph RGW 16 answers
   * CompleteMultipartUpload with an empty <ETag>, so the put result may
   * lack it; when present it must match HEAD. */
  char etag[HIPOBJ_ETAG_MAX], suffix[16];
  head_etag(key, etag);
  snprintf(suffix, sizeof suffix, "-%u\"", parts);
  if (parts > 0)
    cr_expect(strlen(etag) > strlen(suffix) &&
                  strcmp(etag + strlen(etag) - strlen(suffix), suffix) == 0,
              "'%s': ETag %s is not that of %u parts", key, etag, parts);
  else
    cr_expect_null(strchr(etag, '-'), "'%s': single-part ETag %s", key, etag);
  if (parts == 0)
    cr_expect_neq(res.etag[0], '\0', "put '%s': no ETag in the result", key);
  if (res.etag[0])
    cr_expect_str_eq(res.etag, etag, "put '%s': ETag %s, HEAD says %s", key,
                     res.etag, etag);

  fx_get_compare(key, data, size);
  fx_check(hipobj_s3_delete(fx.client, fx.bucket, key, fx.err), "delete",
           fx.err);
  free(data);
}

Test(s3_object, roundtrip_empty) {
  round_trip("empty", 0, 1, NULL, 0);
}

Test(s3_object, roundtrip_one_byte) {
  round_trip("one", 1, 2, NULL, 0);
}

Test(s3_object, roundtrip_1mib) {
  round_trip("one-mib", MiB, 3, NULL, 0);
}

Test(s3_object, roundtrip_multipart_5mib_plus_1) {
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5 * MiB;
  po.multipart_threshold = 5 * MiB;
  round_trip("five-plus-one", 5 * MiB + 1, 4, &po, 2);
}

Test(s3_object, roundtrip_multipart_64mib) {
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 8 * MiB;
  po.multipart_threshold = 8 * MiB;
  round_trip("sixty-four", 64 * MiB, 5, &po, 8);
}

/* One object, several ranges; the size is deliberately not a power of 2. */
#define RANGE_OBJ_SIZE (MiB + 13)

static unsigned char *put_range_object(void) {
  unsigned char *data = fx_random(RANGE_OBJ_SIZE, 6);
  fx_put("ranged", data, RANGE_OBJ_SIZE, NULL, NULL);
  return data;
}

/* GETs [off, off+len) (len 0: to the end) and compares with data. */
static void check_range(const unsigned char *data, uint64_t off, uint64_t len) {
  size_t want = len ? (size_t)len : RANGE_OBJ_SIZE - (size_t)off;
  /* One spare byte with a canary catches writes past the range. */
  unsigned char *buf = malloc(want + 1);
  cr_assert_not_null(buf);
  memset(buf, 0x5A, want + 1);
  struct hipobj_mem dst = hipobj_mem_host(buf, want);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.has_range = 1;
  go.offset = off;
  go.length = len;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc =
      hipobj_s3_get(fx.client, fx.bucket, "ranged", &dst, &go, &res, fx.err);
  char what[128];
  snprintf(what, sizeof what, "range offset %llu length %llu",
           (unsigned long long)off, (unsigned long long)len);
  fx_check(rc, what, fx.err);
  cr_assert_eq(res.bytes, (uint64_t)want, "%s: res.bytes %llu, want %zu", what,
               (unsigned long long)res.bytes, want);
  size_t d = fx_first_diff(buf, data + off, want);
  cr_assert_eq(d, want, "%s: first difference at byte %zu", what, d);
  cr_assert_eq(buf[want], 0x5A, "%s: wrote past the range", what);
  if (res.object_size != 0)
    cr_expect_eq(res.object_size, (uint64_t)RANGE_OBJ_SIZE,
                 "%s: object_size %llu", what,
                 (unsigned long long)res.object_size);
  free(buf);
}

Test(s3_object, range_first_byte) {
  unsigned char *data = put_range_object();
  check_range(data, 0, 1);
  free(data);
}

Test(s3_object, range_last_byte) {
  unsigned char *data = put_range_object();
  check_range(data, RANGE_OBJ_SIZE - 1, 1);
  free(data);
}

Test(s3_object, range_suffix) {
  unsigned char *data = put_range_object();
  check_range(data, RANGE_OBJ_SIZE - 1000, 1000);
  free(data);
}

Test(s3_object, range_middle_unaligned) {
  unsigned char *data = put_range_object();
  check_range(data, 12345, 654321);
  free(data);
}

Test(s3_object, range_open_to_end) {
  unsigned char *data = put_range_object();
  check_range(data, 777777, 0);
  check_range(data, 0, 0);
  free(data);
}

Test(s3_object, range_beyond_end) {
  unsigned char *data = put_range_object();
  unsigned char buf[16];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  uint64_t offsets[] = {RANGE_OBJ_SIZE + 100, RANGE_OBJ_SIZE};
  for (size_t i = 0; i < 2; i++) {
    struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
    go.has_range = 1;
    go.offset = offsets[i];
    go.length = 5;
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    int rc =
        hipobj_s3_get(fx.client, fx.bucket, "ranged", &dst, &go, &res, fx.err);
    cr_expect_eq(rc, HIPOBJ_E_INVALID_RANGE,
                 "range at offset %llu of a %zu B object: status %d (%s): %s",
                 (unsigned long long)go.offset, RANGE_OBJ_SIZE, rc,
                 hipobj_strerror(rc), hipobj_error_message(fx.err));
    cr_expect_eq(hipobj_error_status(fx.err), rc,
                 "error detail status %d != returned %d",
                 hipobj_error_status(fx.err), rc);
  }
  free(data);
}

Test(s3_object, destination_too_small) {
  unsigned char *data = put_range_object();
  unsigned char *buf = malloc(RANGE_OBJ_SIZE);
  cr_assert_not_null(buf);
  memset(buf, 0x5A, RANGE_OBJ_SIZE);
  /* Whole object into one byte less than its size. */
  struct hipobj_mem dst = hipobj_mem_host(buf, RANGE_OBJ_SIZE - 1);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc =
      hipobj_s3_get(fx.client, fx.bucket, "ranged", &dst, NULL, &res, fx.err);
  cr_expect_eq(rc, HIPOBJ_E_BUFFER_TOO_SMALL, "whole get: status %d (%s): %s",
               rc, hipobj_strerror(rc), hipobj_error_message(fx.err));
  cr_expect_eq(buf[RANGE_OBJ_SIZE - 1], 0x5A, "wrote past dst->len");
  cr_expect_leq(res.bytes, (uint64_t)RANGE_OBJ_SIZE - 1, "res.bytes %llu",
                (unsigned long long)res.bytes);

  /* A 100-byte range into 99 bytes. */
  memset(buf, 0x5A, 100);
  dst = hipobj_mem_host(buf, 99);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.has_range = 1;
  go.offset = 1000;
  go.length = 100;
  rc = hipobj_s3_get(fx.client, fx.bucket, "ranged", &dst, &go, &res, fx.err);
  cr_expect_eq(rc, HIPOBJ_E_BUFFER_TOO_SMALL, "range get: status %d (%s): %s",
               rc, hipobj_strerror(rc), hipobj_error_message(fx.err));
  cr_expect_eq(buf[99], 0x5A, "range get wrote past dst->len");
  free(buf);
  free(data);
}

Test(s3_object, head_reports_size_etag_type) {
  const char *ctype = "text/x-hipobj-test; charset=utf-8";
  size_t size = 4242;
  unsigned char *data = fx_random(size, 7);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.content_type = ctype;
  /* A Content-Type cannot travel with an RDMA PUT: HTTP carries this one
   * even when the suite runs with HIPOBJ_RDMA=require. */
  po.rdma_policy = HIPOBJ_RDMA_AUTO;
  struct hipobj_xfer_result pr = HIPOBJ_XFER_RESULT_INIT;
  fx_put("headed", data, size, &po, &pr);

  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  time_t now = time(NULL);
  fx_check(hipobj_s3_head(fx.client, fx.bucket, "headed", &info, fx.err),
           "head", fx.err);
  cr_expect_eq(info.size, (uint64_t)size, "head size %llu, want %zu",
               (unsigned long long)info.size, size);
  cr_expect_neq(pr.etag[0], '\0', "put returned no ETag");
  cr_expect_str_eq(info.etag, pr.etag, "head ETag %s != put ETag %s", info.etag,
                   pr.etag);
  cr_expect_eq(info.etag[0], '"', "ETag %s is not quoted", info.etag);
  cr_expect_str_eq(info.content_type, ctype, "content type '%s'",
                   info.content_type);
  /* Same host as the server: only clock granularity separates them. */
  cr_expect(info.last_modified > (int64_t)now - 600 &&
                info.last_modified < (int64_t)now + 600,
            "last_modified %lld is not near now (%lld)",
            (long long)info.last_modified, (long long)now);

  /* The default content type: none is sent, the server applies S3's. */
  fx_put("untyped", data, size, NULL, NULL);
  info = (struct hipobj_object_info)HIPOBJ_OBJECT_INFO_INIT;
  fx_check(hipobj_s3_head(fx.client, fx.bucket, "untyped", &info, fx.err),
           "head untyped", fx.err);
  cr_expect_str_eq(info.content_type, "binary/octet-stream",
                   "default content type '%s'", info.content_type);
  free(data);
}

Test(s3_object, missing_key_is_not_found) {
  unsigned char buf[8];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  int rc = hipobj_s3_get(fx.client, fx.bucket, "no/such/key", &dst, NULL, NULL,
                         fx.err);
  const char *msg = hipobj_error_message(fx.err);
  cr_assert_eq(rc, HIPOBJ_E_NOT_FOUND, "get missing: status %d (%s): %s", rc,
               hipobj_strerror(rc), msg);
  cr_expect_eq(hipobj_error_status(fx.err), HIPOBJ_E_NOT_FOUND);
  cr_expect_eq(hipobj_error_http_status(fx.err), 404, "http status %d",
               hipobj_error_http_status(fx.err));
  cr_expect_str_eq(hipobj_error_s3_code(fx.err), "NoSuchKey", "s3 code '%s'",
                   hipobj_error_s3_code(fx.err));
  cr_expect_not_null(strstr(msg, "NoSuchKey"), "message: %s", msg);
  cr_expect_not_null(strstr(msg, "404"), "message: %s", msg);
  cr_expect_eq(hipobj_error_retries(fx.err), 0u, "a 404 was retried %u times",
               hipobj_error_retries(fx.err));
  cr_expect_eq(hipobj_status_is_retryable(rc), 0);

  /* HEAD has no body, so only the status is asserted. */
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  rc = hipobj_s3_head(fx.client, fx.bucket, "no/such/key", &info, fx.err);
  cr_expect_eq(rc, HIPOBJ_E_NOT_FOUND, "head missing: status %d (%s): %s", rc,
               hipobj_strerror(rc), hipobj_error_message(fx.err));
  cr_expect_eq(hipobj_error_http_status(fx.err), 404);

  /* The error detail is cleared by the next successful call. */
  fx_put("present", "x", 1, NULL, NULL);
  cr_expect_eq(hipobj_error_status(fx.err), HIPOBJ_OK,
               "error detail not cleared on success: %s",
               hipobj_error_message(fx.err));
  fx_check(hipobj_s3_delete(fx.client, fx.bucket, "present", fx.err), "delete",
           fx.err);
}

/* Collects log lines (from any thread) to search them for secrets. */
struct log_sink {
  pthread_mutex_t lock;
  char *text;
  size_t len;
  size_t lines;
};

static void sink_log(void *user, enum hipobj_log_level level,
                     const char *line) {
  (void)level;
  struct log_sink *s = user;
  size_t n = strlen(line);
  pthread_mutex_lock(&s->lock);
  char *grown = realloc(s->text, s->len + n + 2);
  if (grown) {
    s->text = grown;
    memcpy(s->text + s->len, line, n);
    s->len += n;
    s->text[s->len++] = '\n';
    s->text[s->len] = '\0';
    s->lines++;
  }
  pthread_mutex_unlock(&s->lock);
}

Test(s3_object, wrong_secret_is_access_denied_and_not_leaked) {
  /* Distinctive, so any appearance in text is certainly a leak. */
  const char *bad = "WRONGsecretWRONGsecretWRONGsecret0123456";
  struct log_sink sink = {.lock = PTHREAD_MUTEX_INITIALIZER};
  struct hipobj_client *c = NULL;
  fx_check(fx_client_create(bad, sink_log, &sink, &c, fx.err),
           "client with wrong secret", fx.err);

  struct hipobj_mem src = hipobj_mem_host("data", 4);
  int rc = hipobj_s3_put(c, fx.bucket, "denied", &src, NULL, NULL, fx.err);
  const char *msg = hipobj_error_message(fx.err);
  cr_expect_eq(rc, HIPOBJ_E_ACCESS_DENIED, "put: status %d (%s): %s", rc,
               hipobj_strerror(rc), msg);
  cr_expect_eq(hipobj_error_http_status(fx.err), 403, "http status %d",
               hipobj_error_http_status(fx.err));
  cr_expect_str_eq(hipobj_error_s3_code(fx.err), "SignatureDoesNotMatch",
                   "s3 code '%s'", hipobj_error_s3_code(fx.err));
  cr_expect_null(strstr(msg, bad), "the secret leaked into the message: %s",
                 msg);
  cr_expect_null(strstr(hipobj_error_s3_message(fx.err), bad),
                 "the secret leaked into the S3 message");

  unsigned char buf[8];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  rc = hipobj_s3_get(c, fx.bucket, "denied", &dst, NULL, NULL, fx.err);
  msg = hipobj_error_message(fx.err);
  cr_expect_eq(rc, HIPOBJ_E_ACCESS_DENIED, "get: status %d (%s): %s", rc,
               hipobj_strerror(rc), msg);
  cr_expect_str_eq(hipobj_error_s3_code(fx.err), "SignatureDoesNotMatch",
                   "get: s3 code '%s'", hipobj_error_s3_code(fx.err));
  cr_expect_null(strstr(msg, bad), "the secret leaked into the message: %s",
                 msg);
  hipobj_client_free(c);

  /* Debug logging of a good client must not carry its secret either. */
  c = NULL;
  fx_check(fx_client_create(NULL, sink_log, &sink, &c, fx.err),
           "client with debug logging", fx.err);
  src = hipobj_mem_host("data", 4);
  fx_check(hipobj_s3_put(c, fx.bucket, "logged", &src, NULL, NULL, fx.err),
           "put with debug logging", fx.err);
  fx_check(hipobj_s3_delete(c, fx.bucket, "logged", fx.err), "delete", fx.err);
  hipobj_client_free(c);

  cr_expect_null(sink.text ? strstr(sink.text, bad) : NULL,
                 "the wrong secret appears in the debug log");
  cr_expect_null(sink.text ? strstr(sink.text, fx_secret()) : NULL,
                 "the secret appears in the debug log");
  free(sink.text);
}

Test(s3_object, delete_then_head_and_delete_missing) {
  fx_put("doomed", "bytes", 5, NULL, NULL);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  fx_check(hipobj_s3_head(fx.client, fx.bucket, "doomed", &info, fx.err),
           "head before delete", fx.err);
  fx_check(hipobj_s3_delete(fx.client, fx.bucket, "doomed", fx.err), "delete",
           fx.err);
  int rc = hipobj_s3_head(fx.client, fx.bucket, "doomed", &info, fx.err);
  cr_expect_eq(rc, HIPOBJ_E_NOT_FOUND, "head after delete: status %d (%s): %s",
               rc, hipobj_strerror(rc), hipobj_error_message(fx.err));
  fx_check(hipobj_s3_delete(fx.client, fx.bucket, "doomed", fx.err),
           "delete again", fx.err);
  fx_check(hipobj_s3_delete(fx.client, fx.bucket, "never-existed", fx.err),
           "delete of a missing key", fx.err);
}

Test(s3_object, overwrite_replaces_content) {
  unsigned char *a = fx_random(3000, 8);
  unsigned char *b = fx_random(2000, 9);
  fx_put("over", a, 3000, NULL, NULL);
  fx_put("over", b, 2000, NULL, NULL);
  fx_get_compare("over", b, 2000);
  free(a);
  free(b);
}
