/* test_server.c - hipobj-server through hipObject's public API: objects,
 * buckets, ranges, multipart uploads (and their errors), listings, odd
 * keys, many concurrent clients, and a restart in the middle of a multipart
 * upload. Each test starts its own server on a fresh root and port. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

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

TestSuite(server, .init = setup, .fini = teardown, .timeout = 120);

static int put(const char *key, const void *data, size_t n) {
  struct hipobj_mem m = hipobj_mem_host((void *)data, n);
  return hipobj_s3_put(cli, T_BUCKET, key, &m, NULL, NULL, err);
}

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

Test(server, object_roundtrip) {
  static const char body[] = "hello world";
  struct hipobj_mem src = hipobj_mem_host((void *)body, 11);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.content_type = "text/plain";
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "dir/hello.txt", &src, &po, &res, err));
  char etag[40];
  md5_etag(body, 11, etag);
  cr_assert_str_eq(res.etag, etag);

  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "dir/hello.txt", &info, err));
  cr_assert_eq(info.size, 11);
  cr_assert_str_eq(info.etag, etag);
  cr_assert_str_eq(info.content_type, "text/plain");
  cr_assert(info.last_modified > 0);

  char buf[32] = {0};
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_xfer_result gr = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "dir/hello.txt", &dst, NULL, &gr, err));
  cr_assert_eq(gr.bytes, 11);
  cr_assert_eq(memcmp(buf, body, 11), 0);

  struct hipobj_list_page *page;
  struct hipobj_list_opts lo = HIPOBJ_LIST_OPTS_INIT;
  lo.prefix = "dir/";
  OK(hipobj_s3_list(cli, T_BUCKET, &lo, &page, err));
  cr_assert_eq(hipobj_list_page_count(page), 1);
  cr_assert_str_eq(hipobj_list_page_key(page, 0), "dir/hello.txt");
  cr_assert_eq(hipobj_list_page_size(page, 0), 11);
  cr_assert_str_eq(hipobj_list_page_etag(page, 0), etag);
  hipobj_list_page_free(page);

  OK(hipobj_s3_delete(cli, T_BUCKET, "dir/hello.txt", err));
  cr_assert_eq(
      hipobj_s3_get(cli, T_BUCKET, "dir/hello.txt", &dst, NULL, NULL, err),
      HIPOBJ_E_NOT_FOUND);
  cr_assert_str_eq(hipobj_error_s3_code(err), "NoSuchKey");
  cr_assert_neq(hipobj_error_request_id(err)[0], '\0');
  OK(hipobj_s3_delete(cli, T_BUCKET, "dir/hello.txt", err)); /* 204 again */
  OK(hipobj_s3_delete_bucket(cli, T_BUCKET, err));
}

Test(server, bucket_errors) {
  cr_assert_eq(hipobj_s3_create_bucket(cli, T_BUCKET, err),
               HIPOBJ_E_CLIENT_ERROR);
  cr_assert_eq(hipobj_error_http_status(err), 409);
  cr_assert_str_eq(hipobj_error_s3_code(err), "BucketAlreadyOwnedByYou");
  OK(put("k", "x", 1));
  cr_assert_eq(hipobj_s3_delete_bucket(cli, T_BUCKET, err),
               HIPOBJ_E_CLIENT_ERROR);
  cr_assert_str_eq(hipobj_error_s3_code(err), "BucketNotEmpty");
  char buf[4];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  cr_assert_eq(hipobj_s3_get(cli, "nobucket", "k", &dst, NULL, NULL, err),
               HIPOBJ_E_NOT_FOUND);
  cr_assert_str_eq(hipobj_error_s3_code(err), "NoSuchBucket");
  cr_assert_eq(put("k", "x", 1), HIPOBJ_OK);
  OK(hipobj_s3_delete(cli, T_BUCKET, "k", err));
  OK(hipobj_s3_delete_bucket(cli, T_BUCKET, err));
  cr_assert_eq(hipobj_s3_delete_bucket(cli, T_BUCKET, err), HIPOBJ_E_NOT_FOUND);
  cr_assert_str_eq(hipobj_error_s3_code(err), "NoSuchBucket");
}

Test(server, ranges) {
  char data[1000], buf[1000];
  fill_pattern(data, sizeof data, 7);
  OK(put("r", data, sizeof data));
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  go.has_range = 1;
  go.offset = 100;
  go.length = 50;
  OK(hipobj_s3_get(cli, T_BUCKET, "r", &dst, &go, &res, err));
  cr_assert_eq(res.bytes, 50);
  cr_assert_eq(res.object_size, 1000);
  cr_assert_eq(memcmp(buf, data + 100, 50), 0);
  /* Open range: from 990 to the end. */
  go.offset = 990;
  go.length = 0;
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "r", &dst, &go, &res, err));
  cr_assert_eq(res.bytes, 10);
  cr_assert_eq(memcmp(buf, data + 990, 10), 0);
  /* A range past the end: 416. */
  go.offset = 1000;
  go.length = 5;
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "r", &dst, &go, NULL, err),
               HIPOBJ_E_INVALID_RANGE);
  cr_assert_str_eq(hipobj_error_s3_code(err), "InvalidRange");

  /* Suffix and the 416 headers, which the library cannot ask for. */
  struct http_resp r;
  const char *suffix[] = {"Range: bytes=-7", NULL};
  http_send(srv.url,
            &(struct sreq){.method = "GET", .target = "/bkt/r", .hdrs = suffix},
            &r);
  char v[128];
  cr_assert_eq(r.status, 206);
  cr_assert_str_eq(resp_hdr(&r, "Content-Range", v, sizeof v),
                   "bytes 993-999/1000");
  cr_assert_eq(r.len, 7);
  cr_assert_eq(memcmp(r.body, data + 993, 7), 0);
  resp_free(&r);
  const char *bad[] = {"Range: bytes=2000-", NULL};
  http_send(srv.url,
            &(struct sreq){.method = "GET", .target = "/bkt/r", .hdrs = bad},
            &r);
  cr_assert_eq(r.status, 416);
  cr_assert_str_eq(resp_hdr(&r, "Content-Range", v, sizeof v), "bytes */1000");
  cr_assert_str_eq(xml_text(&r, "Code"), "InvalidRange");
  resp_free(&r);
  /* Unparsable: the whole object, 200. */
  const char *junk[] = {"Range: pages=1-2", NULL};
  http_send(srv.url,
            &(struct sreq){.method = "GET", .target = "/bkt/r", .hdrs = junk},
            &r);
  cr_assert_eq(r.status, 200);
  cr_assert_eq(r.len, 1000);
  resp_free(&r);
}

#define MIB (1024 * 1024)

Test(server, multipart_roundtrip, .timeout = 180) {
  size_t n = 11 * MIB;
  char *data = malloc(n), *back = malloc(n);
  fill_pattern(data, n, 3);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5 * MIB;
  po.multipart_threshold = 5 * MIB;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "big", &src, &po, &res, err));
  cr_assert_eq(res.parts, 3);
  cr_assert(strstr(res.etag, "-3\"") != NULL, "etag %s", res.etag);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "big", &info, err));
  cr_assert_eq(info.size, n);
  cr_assert_str_eq(info.etag, res.etag);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  OK(hipobj_s3_get(cli, T_BUCKET, "big", &dst, NULL, NULL, err));
  cr_assert_eq(memcmp(data, back, n), 0);

  /* GET ?partNumber=2: that part, 206, with the parts count. */
  struct http_resp r;
  char v[128];
  http_send(srv.url,
            &(struct sreq){.method = "GET", .target = "/bkt/big?partNumber=2"},
            &r);
  cr_assert_eq(r.status, 206);
  cr_assert_str_eq(resp_hdr(&r, "x-amz-mp-parts-count", v, sizeof v), "3");
  cr_assert_str_eq(resp_hdr(&r, "Content-Range", v, sizeof v),
                   "bytes 5242880-10485759/11534336");
  cr_assert_eq(r.len, 5 * MIB);
  cr_assert_eq(memcmp(r.body, data + 5 * MIB, 5 * MIB), 0);
  resp_free(&r);
  http_send(srv.url,
            &(struct sreq){.method = "GET", .target = "/bkt/big?partNumber=4"},
            &r);
  cr_assert_eq(r.status, 416);
  cr_assert_str_eq(xml_text(&r, "Code"), "InvalidPartNumber");
  resp_free(&r);
  free(data);
  free(back);
}

static void complete_raw(const char *key, const char *id, const char *body,
                         struct http_resp *r) {
  char target[256];
  snprintf(target, sizeof target, "/bkt/%s?uploadId=%s", key, id);
  http_send(srv.url,
            &(struct sreq){.method = "POST",
                           .target = target,
                           .body = body,
                           .len = strlen(body)},
            r);
}

Test(server, multipart_errors, .timeout = 180) {
  size_t small = 1 * MIB;
  char *data = malloc(5 * MIB);
  fill_pattern(data, 5 * MIB, 9);
  struct hipobj_mpu *mpu;
  OK(hipobj_mpu_create(cli, T_BUCKET, "m", NULL, &mpu, err));
  struct hipobj_mem p1 = hipobj_mem_host(data, small);
  struct hipobj_xfer_result r1 = HIPOBJ_XFER_RESULT_INIT,
                            r2 = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_mpu_upload_part(mpu, 1, &p1, &r1, err));
  OK(hipobj_mpu_upload_part(mpu, 2, &p1, &r2, err));
  /* Two parts, the first below 5 MiB: EntityTooSmall. */
  cr_assert_eq(hipobj_mpu_complete(mpu, NULL, err), HIPOBJ_E_CLIENT_ERROR);
  cr_assert_str_eq(hipobj_error_s3_code(err), "EntityTooSmall");

  /* ListParts, one part per page. */
  OK(hipobj_mpu_list_parts(mpu, err));
  cr_assert_eq(hipobj_mpu_part_count(mpu), 2);
  char target[256];
  const char *id = hipobj_mpu_upload_id(mpu);
  snprintf(target, sizeof target, "/bkt/m?uploadId=%s&max-parts=1", id);
  struct http_resp r;
  http_send(srv.url, &(struct sreq){.method = "GET", .target = target}, &r);
  cr_assert_eq(r.status, 200);
  cr_assert_str_eq(xml_text(&r, "IsTruncated"), "true");
  cr_assert_str_eq(xml_text(&r, "NextPartNumberMarker"), "1");
  resp_free(&r);
  snprintf(target, sizeof target,
           "/bkt/m?uploadId=%s&max-parts=1&part-number-marker=1", id);
  http_send(srv.url, &(struct sreq){.method = "GET", .target = target}, &r);
  cr_assert_str_eq(xml_text(&r, "PartNumber"), "2");
  cr_assert_str_eq(xml_text(&r, "IsTruncated"), "false");
  resp_free(&r);

  /* InvalidPart (a wrong ETag) and InvalidPartOrder, by hand. */
  char body[512];
  snprintf(body, sizeof body,
           "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>"
           "<ETag>\"00000000000000000000000000000000\"</ETag></Part>"
           "</CompleteMultipartUpload>");
  complete_raw("m", id, body, &r);
  cr_assert_eq(r.status, 400);
  cr_assert_str_eq(xml_text(&r, "Code"), "InvalidPart");
  resp_free(&r);
  snprintf(body, sizeof body,
           "<CompleteMultipartUpload><Part><PartNumber>2</PartNumber>"
           "<ETag>%s</ETag></Part><Part><PartNumber>1</PartNumber>"
           "<ETag>%s</ETag></Part></CompleteMultipartUpload>",
           r2.etag, r1.etag);
  complete_raw("m", id, body, &r);
  cr_assert_eq(r.status, 400);
  cr_assert_str_eq(xml_text(&r, "Code"), "InvalidPartOrder");
  resp_free(&r);
  complete_raw("m", id, "<CompleteMultipartUpload>", &r);
  cr_assert_str_eq(xml_text(&r, "Code"), "MalformedXML");
  cr_assert(strstr(xml_text(&r, "Message"), "malformed XML at line 1"), "%s",
            xml_text(&r, "Message"));
  resp_free(&r);
  /* The reason is worded as the client's parser words it (s3/xml_doc.c). */
  complete_raw("m", id,
               "<!DOCTYPE CompleteMultipartUpload><CompleteMultipartUpload>"
               "</CompleteMultipartUpload>",
               &r);
  cr_assert_str_eq(xml_text(&r, "Code"), "MalformedXML");
  cr_assert(strstr(xml_text(&r, "Message"),
                   "malformed XML: DOCTYPE not allowed in S3 documents"),
            "%s", xml_text(&r, "Message"));
  resp_free(&r);

  /* A part 1 of 5 MiB makes it valid; the last part may be small. */
  struct hipobj_mem p5 = hipobj_mem_host(data, 5 * MIB);
  OK(hipobj_mpu_upload_part(mpu, 1, &p5, NULL, err));
  struct hipobj_xfer_result cr = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_mpu_complete(mpu, &cr, err));
  cr_assert(strstr(cr.etag, "-2\"") != NULL);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "m", &info, err));
  cr_assert_eq(info.size, 6 * MIB);
  /* Completed: the upload id is gone. */
  cr_assert_eq(hipobj_mpu_upload_part(mpu, 3, &p1, NULL, err),
               HIPOBJ_E_NOT_FOUND);
  cr_assert_str_eq(hipobj_error_s3_code(err), "NoSuchUpload");
  hipobj_mpu_free(mpu);

  /* A made-up upload id. */
  OK(hipobj_mpu_open(cli, T_BUCKET, "m", "0123456789abcdef0123456789abcdef",
                     &mpu, err));
  cr_assert_eq(hipobj_mpu_upload_part(mpu, 1, &p1, NULL, err),
               HIPOBJ_E_NOT_FOUND);
  cr_assert_str_eq(hipobj_error_s3_code(err), "NoSuchUpload");
  cr_assert_eq(hipobj_mpu_abort(mpu, err), HIPOBJ_E_NOT_FOUND);
  cr_assert_str_eq(hipobj_error_s3_code(err), "NoSuchUpload");
  hipobj_mpu_free(mpu);

  /* Abort removes the upload. */
  OK(hipobj_mpu_create(cli, T_BUCKET, "gone", NULL, &mpu, err));
  OK(hipobj_mpu_upload_part(mpu, 1, &p1, NULL, err));
  OK(hipobj_mpu_abort(mpu, err));
  cr_assert_eq(hipobj_mpu_list_parts(mpu, err), HIPOBJ_E_NOT_FOUND);
  hipobj_mpu_free(mpu);
  free(data);
}

Test(server, list_pages_and_prefixes) {
  static const char *const keys[] = {"a/1", "a/2", "b/1", "c", "d"};
  for (size_t i = 0; i < 5; i++)
    OK(put(keys[i], "x", 1));
  /* Delimiter: a/ and b/ roll up; two entries per page. */
  struct hipobj_list_opts lo = HIPOBJ_LIST_OPTS_INIT;
  lo.delimiter = "/";
  lo.max_keys = 2;
  struct hipobj_list_page *p;
  OK(hipobj_s3_list(cli, T_BUCKET, &lo, &p, err));
  cr_assert_eq(hipobj_list_page_count(p), 0);
  cr_assert_eq(hipobj_list_page_prefix_count(p), 2);
  cr_assert_str_eq(hipobj_list_page_prefix(p, 0), "a/");
  cr_assert_str_eq(hipobj_list_page_prefix(p, 1), "b/");
  cr_assert_not_null(hipobj_list_page_next_token(p));
  char *tok = strdup(hipobj_list_page_next_token(p));
  hipobj_list_page_free(p);
  lo.continuation_token = tok;
  OK(hipobj_s3_list(cli, T_BUCKET, &lo, &p, err));
  cr_assert_eq(hipobj_list_page_count(p), 2);
  cr_assert_str_eq(hipobj_list_page_key(p, 0), "c");
  cr_assert_str_eq(hipobj_list_page_key(p, 1), "d");
  cr_assert_null(hipobj_list_page_next_token(p));
  hipobj_list_page_free(p);
  free(tok);

  /* No delimiter: 5 keys in pages of 2, in order. */
  struct hipobj_list_opts all = HIPOBJ_LIST_OPTS_INIT;
  all.max_keys = 2;
  size_t seen = 0;
  char *next = NULL;
  do {
    all.continuation_token = next;
    OK(hipobj_s3_list(cli, T_BUCKET, &all, &p, err));
    for (size_t i = 0; i < hipobj_list_page_count(p); i++)
      cr_assert_str_eq(hipobj_list_page_key(p, i), keys[seen++]);
    free(next);
    const char *t = hipobj_list_page_next_token(p);
    next = t ? strdup(t) : NULL;
    hipobj_list_page_free(p);
  } while (next);
  cr_assert_eq(seen, 5);

  struct hipobj_list_opts sa = HIPOBJ_LIST_OPTS_INIT;
  sa.start_after = "b/1";
  OK(hipobj_s3_list(cli, T_BUCKET, &sa, &p, err));
  cr_assert_eq(hipobj_list_page_count(p), 2);
  cr_assert_str_eq(hipobj_list_page_key(p, 0), "c");
  hipobj_list_page_free(p);

  /* KeyCount and encoding-type=url on the wire. */
  OK(put("sp ace&<x>", "x", 1));
  struct http_resp r;
  http_send(srv.url,
            &(struct sreq){.method = "GET",
                           .target = "/bkt?list-type=2&prefix=sp&"
                                     "encoding-type=url"},
            &r);
  cr_assert_eq(r.status, 200);
  cr_assert_str_eq(xml_text(&r, "Key"), "sp%20ace%26%3Cx%3E");
  cr_assert_str_eq(xml_text(&r, "KeyCount"), "1");
  resp_free(&r);
}

Test(server, odd_keys) {
  char longkey[1025];
  memset(longkey, 'k', 1024);
  longkey[1024] = '\0';
  const char *keys[] = {"a b+c%d/\xc3\xa9/~!*'()",
                        "../../escape",
                        "dir//x",
                        "./dot",
                        "..",
                        longkey,
                        "q?x=1&y#z"};
  size_t n = sizeof keys / sizeof *keys;
  for (size_t i = 0; i < n; i++) {
    char body[16];
    snprintf(body, sizeof body, "v%zu", i);
    OK(put(keys[i], body, strlen(body)));
  }
  for (size_t i = 0; i < n; i++) {
    char body[16], buf[16] = {0};
    snprintf(body, sizeof body, "v%zu", i);
    struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    OK(hipobj_s3_get(cli, T_BUCKET, keys[i], &dst, NULL, &res, err));
    cr_assert_eq(res.bytes, strlen(body));
    cr_assert_str_eq(buf, body, "key %zu", i);
  }
  struct hipobj_list_page *p;
  OK(hipobj_s3_list(cli, T_BUCKET, NULL, &p, err));
  cr_assert_eq(hipobj_list_page_count(p), n);
  for (size_t i = 1; i < n; i++)
    cr_assert(
        strcmp(hipobj_list_page_key(p, i - 1), hipobj_list_page_key(p, i)) < 0);
  hipobj_list_page_free(p);
  /* Nothing escaped the bucket directory. */
  char path[400];
  struct stat st;
  snprintf(path, sizeof path, "%s/escape", srv.base);
  cr_assert_neq(stat(path, &st), 0);
  snprintf(path, sizeof path, "%s/escape", srv.root);
  cr_assert_neq(stat(path, &st), 0);
  /* Bucket names that are paths are refused. */
  struct http_resp r;
  http_send(srv.url, &(struct sreq){.method = "GET", .target = "/%2E%2E/x"},
            &r);
  cr_assert_eq(r.status, 400);
  cr_assert_str_eq(xml_text(&r, "Code"), "InvalidBucketName");
  resp_free(&r);
}

/* ---- concurrency and restart --------------------------------------------- */

struct worker {
  int id;
  int failures;
  char msg[256];
};

static void *work(void *arg) {
  struct worker *w = arg;
  struct hipobj_error *e;
  hipobj_error_create(&e);
  size_t n = 256 * 1024;
  char *data = malloc(n), *back = malloc(n);
  for (int i = 0; i < 10 && !w->failures; i++) {
    char key[64];
    snprintf(key, sizeof key, "w%d/obj%d", w->id, i);
    fill_pattern(data, n, (unsigned)(w->id * 100 + i));
    struct hipobj_mem src = hipobj_mem_host(data, n);
    struct hipobj_mem dst = hipobj_mem_host(back, n);
    if (hipobj_s3_put(cli, T_BUCKET, key, &src, NULL, NULL, e) ||
        hipobj_s3_get(cli, T_BUCKET, key, &dst, NULL, NULL, e) ||
        memcmp(data, back, n) || hipobj_s3_delete(cli, T_BUCKET, key, e)) {
      w->failures++;
      snprintf(w->msg, sizeof w->msg, "%s: %s", key, hipobj_error_message(e));
    }
  }
  free(data);
  free(back);
  hipobj_error_free(e);
  return NULL;
}

Test(server, eight_concurrent_clients, .timeout = 180) {
  pthread_t t[8];
  struct worker w[8];
  for (int i = 0; i < 8; i++) {
    w[i] = (struct worker){.id = i};
    pthread_create(&t[i], NULL, work, &w[i]);
  }
  for (int i = 0; i < 8; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < 8; i++)
    cr_assert_eq(w[i].failures, 0, "worker %d: %s", i, w[i].msg);
  struct hipobj_list_page *p;
  OK(hipobj_s3_list(cli, T_BUCKET, NULL, &p, err));
  cr_assert_eq(hipobj_list_page_count(p), 0);
  hipobj_list_page_free(p);
}

Test(server, restart_keeps_multipart_parts, .timeout = 180) {
  size_t n = 11 * MIB;
  char *data = malloc(n), *back = malloc(n);
  fill_pattern(data, n, 21);
  struct hipobj_mpu *mpu;
  OK(hipobj_mpu_create(cli, T_BUCKET, "resume", "application/x-test", &mpu,
                       err));
  char id[128];
  snprintf(id, sizeof id, "%s", hipobj_mpu_upload_id(mpu));
  for (unsigned part = 1; part <= 2; part++) {
    struct hipobj_mem m = hipobj_mem_host(data + (part - 1) * 5 * MIB, 5 * MIB);
    OK(hipobj_mpu_upload_part(mpu, part, &m, NULL, err));
  }
  hipobj_mpu_free(mpu);
  hipobj_client_free(cli);

  /* kill -9, then a new server (new port) on the same root. */
  srv_signal(&srv, SIGKILL);
  srv_start(&srv, srv.root, NULL);
  cli = mk_client(srv.url, NULL, NULL, 0);
  OK(hipobj_mpu_open(cli, T_BUCKET, "resume", id, &mpu, err));
  OK(hipobj_mpu_list_parts(mpu, err));
  cr_assert_eq(hipobj_mpu_part_count(mpu), 2);
  struct hipobj_mem m3 = hipobj_mem_host(data + 10 * MIB, n - 10 * MIB);
  OK(hipobj_mpu_upload_part(mpu, 3, &m3, NULL, err));
  OK(hipobj_mpu_complete(mpu, NULL, err));
  hipobj_mpu_free(mpu);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "resume", &dst, NULL, &res, err));
  cr_assert_eq(res.bytes, n);
  cr_assert_eq(memcmp(data, back, n), 0);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "resume", &info, err));
  cr_assert_str_eq(info.content_type, "application/x-test");
  free(data);
  free(back);
}

Test(server, clean_exit_on_sigint) {
  hipobj_client_free(cli);
  cli = NULL;
  int st = 0;
  kill(srv.pid, SIGINT);
  cr_assert(srv_wait(&srv, 10, &st), "hipobj-server ignored SIGINT");
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}

/* ---- the command line -----------------------------------------------------
 */

static int run_cmd(const char *cmd, char *out, size_t n) {
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t got = fread(out, 1, n - 1, p);
  out[got] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(cli, help_and_missing_credentials, .timeout = 30) {
  static char out[16384];
  cr_assert_eq(run_cmd(HIPOBJ_SERVER_BIN " --help", out, sizeof out), 0);
  static const char *const opts[] = {
      "--root",        "--listen",   "--access-key",    "--secret-key",
      "--region",      "--threads",  "--min-part-size", "--rdma ",
      "--rdma-device", "--faults",   "--log-level",     "RDMA server role",
      "action=A",      "crash-after"};
  for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
    cr_assert_neq(strstr(out, opts[i]), NULL, "--help lacks %s", opts[i]);
  cr_assert_eq(
      run_cmd(
          "env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY " HIPOBJ_SERVER_BIN
          " --root /tmp/hipobj-never-made "
          "--listen 127.0.0.1:0 2>&1",
          out, sizeof out),
      2);
  cr_assert_neq(strstr(out, "no credentials"), NULL, "%s", out);
  cr_assert_eq(run_cmd(HIPOBJ_SERVER_BIN
                       " --root /tmp/x --access-key A "
                       "--secret-key S --faults op=Nope,action=drop 2>&1",
                       out, sizeof out),
               2);
  cr_assert_neq(strstr(out, "unknown operation"), NULL, "%s", out);
}

Test(server, edge_cases) {
  /* An empty object. */
  OK(put("empty", "", 0));
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "empty", &info, err));
  cr_assert_eq(info.size, 0);
  char buf[8];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "empty", &dst, NULL, &res, err));
  cr_assert_eq(res.bytes, 0);
  /* If-Match: the ETag pins the object. */
  OK(put("pinned", "abc", 3));
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.if_match = "\"00000000000000000000000000000000\"";
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "pinned", &dst, &go, NULL, err),
               HIPOBJ_E_PRECONDITION);
  char etag[40];
  md5_etag("abc", 3, etag);
  go.if_match = etag;
  OK(hipobj_s3_get(cli, T_BUCKET, "pinned", &dst, &go, NULL, err));
  /* A client that does not hash payloads (UNSIGNED-PAYLOAD). */
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = srv.url;
  cfg.region = T_REGION;
  cfg.access_key_id = T_AK;
  cfg.secret_access_key = T_SK;
  cfg.integrity = HIPOBJ_INTEGRITY_NONE;
  cfg.log_level = HIPOBJ_LOG_NONE;
  struct hipobj_client *u;
  OK(hipobj_client_create(&cfg, &u, err));
  struct hipobj_mem src = hipobj_mem_host((void *)"unsigned", 8);
  OK(hipobj_s3_put(u, T_BUCKET, "u", &src, NULL, NULL, err));
  OK(hipobj_s3_get(u, T_BUCKET, "u", &dst, NULL, &res, err));
  cr_assert_eq(memcmp(buf, "unsigned", 8), 0);
  hipobj_client_free(u);
  /* A buffer too small for the object. */
  char tiny[2];
  struct hipobj_mem small = hipobj_mem_host(tiny, sizeof tiny);
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "pinned", &small, NULL, NULL, err),
               HIPOBJ_E_BUFFER_TOO_SMALL);
}

Test(server, list_multipart_uploads) {
  struct hipobj_mpu *a, *b, *c;
  OK(hipobj_mpu_create(cli, T_BUCKET, "u/a", NULL, &a, err));
  OK(hipobj_mpu_create(cli, T_BUCKET, "u/b", NULL, &b, err));
  OK(hipobj_mpu_create(cli, T_BUCKET, "v/c/d", NULL, &c, err));
  struct http_resp r;
  http_send(srv.url,
            &(struct sreq){.method = "GET",
                           .target = "/bkt?uploads&prefix=u/&max-uploads=1"},
            &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_assert_str_eq(xml_text(&r, "Key"), "u/a");
  cr_assert_str_eq(xml_text(&r, "UploadId"), hipobj_mpu_upload_id(a));
  cr_assert_str_eq(xml_text(&r, "IsTruncated"), "true");
  cr_assert_str_eq(xml_text(&r, "NextKeyMarker"), "u/a");
  resp_free(&r);
  char target[200];
  snprintf(target, sizeof target,
           "/bkt?uploads&prefix=u/&key-marker=u/a&upload-id-marker=%s",
           hipobj_mpu_upload_id(a));
  http_send(srv.url, &(struct sreq){.method = "GET", .target = target}, &r);
  cr_assert_str_eq(xml_text(&r, "Key"), "u/b");
  cr_assert_str_eq(xml_text(&r, "IsTruncated"), "false");
  resp_free(&r);
  http_send(
      srv.url,
      &(struct sreq){.method = "GET", .target = "/bkt?uploads&delimiter=/"},
      &r);
  cr_assert_neq(strstr(r.body, "<CommonPrefixes><Prefix>u/</Prefix>"), NULL,
                "%s", r.body);
  cr_assert_neq(strstr(r.body, "<CommonPrefixes><Prefix>v/</Prefix>"), NULL);
  cr_assert_null(strstr(r.body, "<Upload>"));
  resp_free(&r);
  OK(hipobj_mpu_abort(a, err));
  OK(hipobj_mpu_abort(b, err));
  OK(hipobj_mpu_abort(c, err));
  hipobj_mpu_free(a);
  hipobj_mpu_free(b);
  hipobj_mpu_free(c);
  http_send(srv.url, &(struct sreq){.method = "GET", .target = "/bkt?uploads"},
            &r);
  cr_assert_null(strstr(r.body, "<Upload>"));
  resp_free(&r);
}
