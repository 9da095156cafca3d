/* test_copy.c - the bucket-level and server-side calls of 0.2 against
 * hipobj-server through the public API: CopyObject and its multipart form
 * (UploadPartCopy parts), ListBuckets, ListMultipartUploads with paging,
 * presigned URLs fetched without credentials, and S3's rules for new
 * bucket names on both the client and the server. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;

static void setup(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
  srv_start(&srv, NULL, NULL);
  cli = mk_client(srv.url, NULL, NULL, 0);
  cr_assert_eq(hipobj_s3_create_bucket(cli, T_BUCKET, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
}

static void teardown(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(copy, .init = setup, .fini = teardown, .timeout = 120);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

static void put_typed(const char *bucket, const char *key, const void *data,
                      size_t n, const char *type) {
  struct hipobj_mem m = hipobj_mem_host((void *)data, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.content_type = type;
  OK(hipobj_s3_put(cli, bucket, key, &m, &po, NULL, err));
}

/* Asserts that bucket/key holds want's n bytes and has the type (unless
 * NULL). */
static void expect_object(const char *bucket, const char *key, const void *want,
                          size_t n, const char *type) {
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, bucket, key, &info, err));
  cr_assert_eq(info.size, n, "%s: size %llu", key,
               (unsigned long long)info.size);
  if (type)
    cr_expect_str_eq(info.content_type, type, "%s", key);
  char *buf = malloc(n + 1);
  cr_assert_not_null(buf);
  struct hipobj_mem dst = hipobj_mem_host(buf, n + 1);
  struct hipobj_xfer_result r = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, bucket, key, &dst, NULL, &r, err));
  cr_assert_eq(r.bytes, n);
  cr_assert_eq(memcmp(buf, want, n), 0, "%s: other bytes", key);
  free(buf);
}

Test(copy, single_copy_keeps_type_and_bytes) {
  char data[3000];
  fill_pattern(data, sizeof data, 1);
  put_typed(T_BUCKET, "src/a.txt", data, sizeof data, "text/plain");
  OK(hipobj_s3_create_bucket(cli, "other", err));

  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_copy(cli, T_BUCKET, "src/a.txt", "other", "dst/b.txt", NULL,
                    &res, err));
  char etag[40];
  md5_etag(data, sizeof data, etag);
  cr_expect_str_eq(res.etag, etag);
  cr_expect_eq(res.bytes, sizeof data);
  cr_expect_eq(res.parts, 0);
  expect_object("other", "dst/b.txt", data, sizeof data, "text/plain");

  /* A new type replaces the source's. */
  struct hipobj_copy_opts o = HIPOBJ_COPY_OPTS_INIT;
  o.content_type = "application/json";
  OK(hipobj_s3_copy(cli, T_BUCKET, "src/a.txt", T_BUCKET, "c.json", &o, NULL,
                    err));
  expect_object(T_BUCKET, "c.json", data, sizeof data, "application/json");
  /* Onto itself: refused as S3 refuses it, allowed with a new type. */
  cr_assert_eq(hipobj_s3_copy(cli, T_BUCKET, "src/a.txt", T_BUCKET, "src/a.txt",
                              NULL, NULL, err),
               HIPOBJ_E_CLIENT_ERROR);
  cr_expect_str_eq(hipobj_error_s3_code(err), "InvalidRequest");
  o.content_type = "text/markdown";
  OK(hipobj_s3_copy(cli, T_BUCKET, "src/a.txt", T_BUCKET, "src/a.txt", &o, NULL,
                    err));
  expect_object(T_BUCKET, "src/a.txt", data, sizeof data, "text/markdown");
}

Test(copy, errors_name_the_cause) {
  cr_assert_eq(
      hipobj_s3_copy(cli, T_BUCKET, "missing", T_BUCKET, "x", NULL, NULL, err),
      HIPOBJ_E_NOT_FOUND);
  put_typed(T_BUCKET, "k", "abc", 3, NULL);
  cr_assert_eq(
      hipobj_s3_copy(cli, T_BUCKET, "k", "nobucket", "x", NULL, NULL, err),
      HIPOBJ_E_NOT_FOUND);
  cr_expect_str_eq(hipobj_error_s3_code(err), "NoSuchBucket");
  /* if_match that is not the source's ETag: no copy. */
  struct hipobj_copy_opts o = HIPOBJ_COPY_OPTS_INIT;
  o.if_match = "\"00000000000000000000000000000000\"";
  cr_assert_eq(hipobj_s3_copy(cli, T_BUCKET, "k", T_BUCKET, "x", &o, NULL, err),
               HIPOBJ_E_PRECONDITION);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "x", &info, err),
               HIPOBJ_E_NOT_FOUND);
  o.if_match = NULL;
  o.multipart_threshold = HIPOBJ_COPY_SINGLE_MAX + 1;
  cr_assert_eq(hipobj_s3_copy(cli, T_BUCKET, "k", T_BUCKET, "x", &o, NULL, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_expect(strstr(hipobj_error_message(err), "5 GiB"), "%s",
            hipobj_error_message(err));
}

Test(copy, multipart_copy_of_parts) {
  size_t n = (12u << 20) + 1234; /* 3 parts of 5 MiB */
  char *data = malloc(n);
  cr_assert_not_null(data);
  fill_pattern(data, n, 9);
  put_typed(T_BUCKET, "big", data, n, "image/png");
  struct hipobj_copy_opts o = HIPOBJ_COPY_OPTS_INIT;
  o.multipart_threshold = 5u << 20;
  o.part_size = 5u << 20;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_copy(cli, T_BUCKET, "big", T_BUCKET, "big-copy", &o, &res, err));
  cr_expect_eq(res.parts, 3);
  cr_expect_eq(res.bytes, n);
  size_t el = strlen(res.etag);
  cr_expect(el > 4 && !strcmp(res.etag + el - 3, "-3\""), "ETag %s", res.etag);
  expect_object(T_BUCKET, "big-copy", data, n, "image/png");
  /* No upload left behind. */
  struct hipobj_upload_page *pg = NULL;
  OK(hipobj_s3_list_uploads(cli, T_BUCKET, NULL, &pg, err));
  cr_expect_eq(hipobj_upload_page_count(pg), 0);
  hipobj_upload_page_free(pg);
  free(data);
}

Test(copy, list_buckets) {
  OK(hipobj_s3_create_bucket(cli, "b-two", err));
  OK(hipobj_s3_create_bucket(cli, "a.one", err));
  struct hipobj_bucket_list *l = NULL;
  OK(hipobj_s3_list_buckets(cli, &l, err));
  cr_assert_eq(hipobj_bucket_list_count(l), 3);
  int seen = 0;
  for (size_t i = 0; i < 3; i++) {
    const char *name = hipobj_bucket_list_name(l, i);
    seen |= (!strcmp(name, T_BUCKET) ? 1 : 0) |
            (!strcmp(name, "b-two") ? 2 : 0) | (!strcmp(name, "a.one") ? 4 : 0);
    cr_expect_gt(hipobj_bucket_list_ctime(l, i), 1700000000);
  }
  cr_expect_eq(seen, 7);
  cr_expect_null(hipobj_bucket_list_name(l, 3));
  hipobj_bucket_list_free(l);
  /* Wrong credentials: the list call says so. */
  struct hipobj_client *bad = mk_client(srv.url, NULL, "wrong-secret", 1);
  cr_assert_eq(hipobj_s3_list_buckets(bad, &l, err), HIPOBJ_E_ACCESS_DENIED);
  cr_expect_null(l);
  cr_expect_str_eq(hipobj_error_s3_code(err), "SignatureDoesNotMatch");
  hipobj_client_free(bad);
}

Test(copy, list_uploads_pages_and_abort) {
  const char *keys[] = {"u/a", "u/b", "u/c", "v/d"};
  char ids[4][128];
  for (int i = 0; i < 4; i++) {
    struct hipobj_mpu *m = NULL;
    OK(hipobj_mpu_create(cli, T_BUCKET, keys[i], NULL, &m, err));
    snprintf(ids[i], sizeof ids[i], "%s", hipobj_mpu_upload_id(m));
    hipobj_mpu_free(m);
  }
  struct hipobj_upload_list_opts o = HIPOBJ_UPLOAD_LIST_OPTS_INIT;
  o.prefix = "u/";
  o.max_uploads = 2;
  struct hipobj_upload_page *pg = NULL;
  OK(hipobj_s3_list_uploads(cli, T_BUCKET, &o, &pg, err));
  cr_assert_eq(hipobj_upload_page_count(pg), 2);
  cr_expect_str_eq(hipobj_upload_page_key(pg, 0), "u/a");
  cr_expect_str_eq(hipobj_upload_page_upload_id(pg, 0), ids[0]);
  cr_expect_gt(hipobj_upload_page_initiated(pg, 0), 1700000000);
  cr_expect_str_eq(hipobj_upload_page_key(pg, 1), "u/b");
  cr_assert_not_null(hipobj_upload_page_next_key_marker(pg));
  char km[64], um[128];
  snprintf(km, sizeof km, "%s", hipobj_upload_page_next_key_marker(pg));
  snprintf(um, sizeof um, "%s", hipobj_upload_page_next_upload_id_marker(pg));
  hipobj_upload_page_free(pg);
  o.key_marker = km;
  o.upload_id_marker = um;
  OK(hipobj_s3_list_uploads(cli, T_BUCKET, &o, &pg, err));
  cr_assert_eq(hipobj_upload_page_count(pg), 1);
  cr_expect_str_eq(hipobj_upload_page_key(pg, 0), "u/c");
  cr_expect_null(hipobj_upload_page_next_key_marker(pg));
  cr_expect_null(hipobj_upload_page_key(pg, 1));
  hipobj_upload_page_free(pg);

  /* Abort one through hipobj_mpu_open, as `hipobj mpu abort` does. */
  struct hipobj_mpu *m = NULL;
  OK(hipobj_mpu_open(cli, T_BUCKET, "u/b", ids[1], &m, err));
  OK(hipobj_mpu_abort(m, err));
  hipobj_mpu_free(m);
  OK(hipobj_s3_list_uploads(cli, T_BUCKET, NULL, &pg, err));
  cr_assert_eq(hipobj_upload_page_count(pg), 3);
  for (size_t i = 0; i < 3; i++)
    cr_expect_str_neq(hipobj_upload_page_key(pg, i), "u/b");
  hipobj_upload_page_free(pg);

  cr_assert_eq(hipobj_s3_list_uploads(cli, "nobucket", NULL, &pg, err),
               HIPOBJ_E_NOT_FOUND);
  cr_expect_null(pg);
}

/* The target (path and query) of a URL of this server. */
static const char *target_of(const char *url) {
  const char *p = strstr(url, "://");
  cr_assert_not_null(p);
  p = strchr(p + 3, '/');
  cr_assert_not_null(p);
  return p;
}

Test(copy, presigned_get_and_put) {
  put_typed(T_BUCKET, "dir/a b.txt", "hello", 5, NULL);
  char *url = NULL;
  OK(hipobj_s3_presign(cli, "GET", T_BUCKET, "dir/a b.txt", 300, &url, err));
  cr_expect(!strncmp(url, srv.url, strlen(srv.url)), "%s", url);
  cr_expect(strstr(url, "/bkt/dir/a%20b.txt?"), "%s", url);
  cr_expect(strstr(url, "X-Amz-Expires=300"), "%s", url);
  cr_expect_null(strstr(url, T_SK), "the secret is in the URL");
  struct http_resp r;
  cr_assert_eq(http_send(srv.url,
                         &(struct sreq){.method = "GET",
                                        .target = target_of(url),
                                        .anonymous = 1},
                         &r),
               0);
  cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
  cr_assert_eq(r.len, 5);
  cr_expect_eq(memcmp(r.body, "hello", 5), 0);
  resp_free(&r);
  /* The URL is for GET only. */
  cr_assert_eq(http_send(srv.url,
                         &(struct sreq){.method = "DELETE",
                                        .target = target_of(url),
                                        .anonymous = 1},
                         &r),
               0);
  expect_s3_error(&r, 403, "SignatureDoesNotMatch", NULL);
  hipobj_free(url);

  OK(hipobj_s3_presign(cli, "put", T_BUCKET, "up", 60, &url, err));
  cr_assert_eq(http_send(srv.url,
                         &(struct sreq){.method = "PUT",
                                        .target = target_of(url),
                                        .body = "xyz",
                                        .len = 3,
                                        .anonymous = 1},
                         &r),
               0);
  cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
  resp_free(&r);
  hipobj_free(url);
  expect_object(T_BUCKET, "up", "xyz", 3, NULL);
}

Test(copy, presign_refusals) {
  char *url = (char *)"untouched";
  cr_assert_eq(hipobj_s3_presign(cli, "POST", T_BUCKET, "k", 60, &url, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_expect_null(url);
  cr_assert_eq(hipobj_s3_presign(cli, "GET", T_BUCKET, "k", 0, &url, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_eq(hipobj_s3_presign(cli, "GET", T_BUCKET, "k",
                                 HIPOBJ_PRESIGN_MAX_SECONDS + 1, &url, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_expect(strstr(hipobj_error_message(err), "7 days"), "%s",
            hipobj_error_message(err));
  OK(hipobj_s3_presign(cli, "GET", T_BUCKET, "k", HIPOBJ_PRESIGN_MAX_SECONDS,
                       &url, err));
  hipobj_free(url);
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 1, 0);
  cfg.anonymous = 1;
  struct hipobj_client *anon = NULL;
  OK(hipobj_client_create(&cfg, &anon, err));
  cr_assert_eq(hipobj_s3_presign(anon, "GET", T_BUCKET, "k", 60, &url, err),
               HIPOBJ_E_CONFIG);
  hipobj_client_free(anon);
}

Test(copy, new_bucket_names) {
  static const char *const bad[][2] = {
      {"Bad_Name", "upper-case"},
      {"bad_name", "underscore"},
      {"-abc", "start with"},
      {"abc-", "end with"},
      {"a..b", "two dots"},
      {"a.-b", "dash next to a dot"},
      {"192.168.5.4", "IP address"},
      {"xn--abc", "reserved prefix"},
      {"ab", "3 to 63"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert_eq(hipobj_s3_create_bucket(cli, bad[i][0], err),
                 HIPOBJ_E_INVALID_ARGUMENT, "%s accepted", bad[i][0]);
    cr_expect(strstr(hipobj_error_message(err), bad[i][1]), "%s: %s", bad[i][0],
              hipobj_error_message(err));
  }
  OK(hipobj_s3_create_bucket(cli, "good.name-1", err));
  /* The server checks too (a client that does not). */
  struct http_resp r;
  cr_assert_eq(http_send(srv.url,
                         &(struct sreq){.method = "PUT", .target = "/Bad_Name"},
                         &r),
               0);
  expect_s3_error(&r, 400, "InvalidBucketName", "new bucket");
}

Test(copy, head_errors_say_what_to_check) {
  put_typed(T_BUCKET, "k", "abc", 3, NULL);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  struct hipobj_client *bad = mk_client(srv.url, NULL, "wrong-secret", 1);
  cr_assert_eq(hipobj_s3_head(bad, T_BUCKET, "k", &info, err),
               HIPOBJ_E_ACCESS_DENIED);
  cr_expect_eq(hipobj_error_http_status(err), 403);
  cr_expect_str_eq(hipobj_error_s3_code(err), "");
  cr_expect(strstr(hipobj_error_message(err), "check the secret key"), "%s",
            hipobj_error_message(err));
  cr_expect_neq(hipobj_error_request_id(err)[0], '\0');
  hipobj_client_free(bad);
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "nokey", &info, err),
               HIPOBJ_E_NOT_FOUND);
  cr_expect(strstr(hipobj_error_message(err), "no such key, or no such bucket"),
            "%s", hipobj_error_message(err));
}

Test(copy, get_result_has_last_modified) {
  size_t n = (6u << 20) + 5; /* two parts of the client's 5 MiB */
  char *data = malloc(n);
  cr_assert_not_null(data);
  fill_pattern(data, n, 3);
  put_typed(T_BUCKET, "m", data, n, NULL);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "m", &info, err));
  cr_assert_gt(info.last_modified, 0);
  struct hipobj_mem dst = hipobj_mem_host(data, n);
  struct hipobj_xfer_result r = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "m", &dst, NULL, &r, err));
  cr_expect_eq(r.parts, 2);
  cr_expect_eq(r.last_modified, info.last_modified);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.has_range = 1;
  go.offset = 10;
  go.length = 10;
  OK(hipobj_s3_get(cli, T_BUCKET, "m", &dst, &go, &r, err));
  cr_expect_eq(r.last_modified, info.last_modified);
  cr_expect_eq(r.object_size, n, "a ranged GET learns the size");
  free(data);
}
