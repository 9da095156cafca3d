/* test_s3_copy.c - the bucket-level and server-side calls against a real
 * S3 server (Ceph RGW under tests/with-rgw.sh, and hipobj-server):
 * CopyObject and the multipart copy of UploadPartCopy parts, ListBuckets,
 * ListMultipartUploads and aborting what it lists, and a presigned URL
 * fetched by curl, which holds no credentials. */
#include "s3_fixture.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(s3_copy, .init = fx_setup, .fini = fx_teardown, .timeout = 300);

static void head(const char *key, struct hipobj_object_info *info) {
  *info = (struct hipobj_object_info)HIPOBJ_OBJECT_INFO_INIT;
  fx_check(hipobj_s3_head(fx.client, fx.bucket, key, info, fx.err), key,
           fx.err);
}

Test(s3_copy, copy_object_keeps_bytes_and_type) {
  unsigned char *data = fx_random(100000, 11);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.content_type = "text/csv";
  /* An RDMA PUT cannot carry a Content-Type: this one goes over HTTP even
   * when the suite runs with HIPOBJ_RDMA=require. */
  po.rdma_policy = HIPOBJ_RDMA_AUTO;
  fx_put("src.csv", data, 100000, &po, NULL);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  fx_check(hipobj_s3_copy(fx.client, fx.bucket, "src.csv", fx.bucket,
                          "dir/dst.csv", NULL, &res, fx.err),
           "copy", fx.err);
  struct hipobj_object_info a, b;
  head("src.csv", &a);
  head("dir/dst.csv", &b);
  cr_expect_str_eq(b.content_type, "text/csv");
  cr_expect_str_eq(res.etag, a.etag, "a copy of one part has its MD5");
  cr_expect_str_eq(b.etag, a.etag);
  fx_get_compare("dir/dst.csv", data, 100000);
  /* Onto itself with a new type. */
  struct hipobj_copy_opts o = HIPOBJ_COPY_OPTS_INIT;
  o.content_type = "application/json";
  fx_check(hipobj_s3_copy(fx.client, fx.bucket, "src.csv", fx.bucket, "src.csv",
                          &o, NULL, fx.err),
           "copy onto itself", fx.err);
  head("src.csv", &a);
  cr_expect_str_eq(a.content_type, "application/json");
  fx_get_compare("src.csv", data, 100000);
  /* A missing source. */
  cr_expect_eq(hipobj_s3_copy(fx.client, fx.bucket, "nope", fx.bucket, "x",
                              NULL, NULL, fx.err),
               HIPOBJ_E_NOT_FOUND);
  free(data);
}

Test(s3_copy, multipart_copy) {
  size_t n = 11 * MiB + 17;
  unsigned char *data = fx_random(n, 12);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.content_type = "video/mp4";
  po.rdma_policy = HIPOBJ_RDMA_AUTO; /* as above */
  fx_put("big", data, n, &po, NULL);
  struct hipobj_copy_opts o = HIPOBJ_COPY_OPTS_INIT;
  o.multipart_threshold = 5 * MiB;
  o.part_size = 5 * MiB;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  fx_check(hipobj_s3_copy(fx.client, fx.bucket, "big", fx.bucket, "big2", &o,
                          &res, fx.err),
           "multipart copy", fx.err);
  cr_expect_eq(res.parts, 3);
  struct hipobj_object_info info;
  head("big2", &info);
  cr_expect_eq(info.size, n);
  cr_expect_str_eq(info.content_type, "video/mp4");
  cr_expect(strstr(info.etag, "-3\"") != NULL, "ETag %s", info.etag);
  fx_get_compare("big2", data, n);
  free(data);
}

Test(s3_copy, list_buckets_has_ours) {
  struct hipobj_bucket_list *l = NULL;
  fx_check(hipobj_s3_list_buckets(fx.client, &l, fx.err), "list buckets",
           fx.err);
  int found = 0;
  for (size_t i = 0; i < hipobj_bucket_list_count(l); i++)
    if (!strcmp(hipobj_bucket_list_name(l, i), fx.bucket)) {
      found = 1;
      cr_expect_gt(hipobj_bucket_list_ctime(l, i), 1600000000);
    }
  cr_expect(found, "%s not listed", fx.bucket);
  hipobj_bucket_list_free(l);
}

Test(s3_copy, list_and_abort_uploads) {
  struct hipobj_mpu *m = NULL;
  fx_check(
      hipobj_mpu_create(fx.client, fx.bucket, "pending/a b", NULL, &m, fx.err),
      "create upload", fx.err);
  char id[256];
  snprintf(id, sizeof id, "%s", hipobj_mpu_upload_id(m));
  hipobj_mpu_free(m);
  struct hipobj_upload_list_opts o = HIPOBJ_UPLOAD_LIST_OPTS_INIT;
  o.prefix = "pending/";
  struct hipobj_upload_page *pg = NULL;
  fx_check(hipobj_s3_list_uploads(fx.client, fx.bucket, &o, &pg, fx.err),
           "list uploads", fx.err);
  cr_assert_eq(hipobj_upload_page_count(pg), 1);
  cr_expect_str_eq(hipobj_upload_page_key(pg, 0), "pending/a b");
  cr_expect_str_eq(hipobj_upload_page_upload_id(pg, 0), id);
  hipobj_upload_page_free(pg);
  fx_check(hipobj_mpu_open(fx.client, fx.bucket, "pending/a b", id, &m, fx.err),
           "open upload", fx.err);
  fx_check(hipobj_mpu_abort(m, fx.err), "abort", fx.err);
  hipobj_mpu_free(m);
  fx_check(hipobj_s3_list_uploads(fx.client, fx.bucket, &o, &pg, fx.err),
           "list uploads", fx.err);
  cr_expect_eq(hipobj_upload_page_count(pg), 0);
  hipobj_upload_page_free(pg);
}

Test(s3_copy, presigned_get_with_curl) {
  unsigned char *data = fx_random(4096, 13);
  fx_put("shared/file.bin", data, 4096, NULL, NULL);
  char *url = NULL;
  fx_check(hipobj_s3_presign(fx.client, "GET", fx.bucket, "shared/file.bin",
                             120, &url, fx.err),
           "presign", fx.err);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "curl -sS --fail '%s'", url);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  unsigned char got[8192];
  size_t n = fread(got, 1, sizeof got, p);
  int st = pclose(p);
  if (st != 0 && n == 0 && system("curl --version >/dev/null 2>&1") != 0)
    cr_skip_test("curl is not installed");
  cr_assert_eq(st, 0, "curl failed on %s", url);
  cr_assert_eq(n, 4096);
  cr_expect_eq(memcmp(got, data, n), 0);
  hipobj_free(url);
  free(data);
}
