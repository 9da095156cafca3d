/* test_s3_multipart.c - integration tests for step-by-step multipart uploads,
 * keys that need URL/XML escaping, ListObjectsV2 (prefix, delimiter,
 * pagination) and one client shared by several threads. */
#include "s3_fixture.h"

#include <criterion/criterion.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(s3_multipart, .init = fx_setup, .fini = fx_teardown, .timeout = 300);
TestSuite(s3_list, .init = fx_setup, .fini = fx_teardown, .timeout = 300);
TestSuite(s3_threads, .init = fx_setup, .fini = fx_teardown, .timeout = 300);

static void upload_part(struct hipobj_mpu *mpu, unsigned n,
                        const unsigned char *p, size_t len) {
  struct hipobj_mem src = hipobj_mem_host((void *)p, len);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  char what[64];
  snprintf(what, sizeof what, "upload part %u (%zu bytes)", n, len);
  fx_check(hipobj_mpu_upload_part(mpu, n, &src, &res, fx.err), what, fx.err);
  cr_expect_eq(res.bytes, (uint64_t)len, "%s: res.bytes %llu", what,
               (unsigned long long)res.bytes);
  cr_expect_eq(res.etag[0], '"', "%s: ETag '%s' not quoted", what, res.etag);
}

Test(s3_multipart, small_parts_entity_too_small_then_abort) {
  unsigned char *data = fx_random(2 * MiB, 20);
  struct hipobj_mpu *mpu = NULL;
  fx_check(
      hipobj_mpu_create(fx.client, fx.bucket, "too-small", NULL, &mpu, fx.err),
      "create multipart upload", fx.err);
  cr_assert_not_null(mpu);
  cr_assert_neq(hipobj_mpu_upload_id(mpu)[0], '\0', "empty upload id");
  upload_part(mpu, 1, data, MiB);
  upload_part(mpu, 2, data + MiB, MiB);
  cr_expect_eq(hipobj_mpu_part_count(mpu), 2u, "parts recorded: %zu",
               hipobj_mpu_part_count(mpu));

  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_mpu_complete(mpu, &res, fx.err);
  cr_expect_neq(rc, HIPOBJ_OK,
                "completing with a 1 MiB non-final part "
                "succeeded");
  cr_expect_eq(rc, HIPOBJ_E_CLIENT_ERROR, "complete: status %d (%s): %s", rc,
               hipobj_strerror(rc), hipobj_error_message(fx.err));
  cr_expect_str_eq(hipobj_error_s3_code(fx.err), "EntityTooSmall",
                   "complete: s3 code '%s' (%s)", hipobj_error_s3_code(fx.err),
                   hipobj_error_message(fx.err));

  fx_check(hipobj_mpu_abort(mpu, fx.err), "abort", fx.err);
  rc = hipobj_mpu_list_parts(mpu, fx.err);
  cr_expect_eq(rc, HIPOBJ_E_NOT_FOUND,
               "list parts after abort: status %d (%s): %s", rc,
               hipobj_strerror(rc), hipobj_error_message(fx.err));
  /* AWS says NoSuchUpload; Ceph RGW 16 says NoSuchKey for ListParts of an
   * aborted upload (its AbortMultipartUpload says NoSuchUpload). */
  const char *code = hipobj_error_s3_code(fx.err);
  cr_expect(strcmp(code, "NoSuchUpload") == 0 || strcmp(code, "NoSuchKey") == 0,
            "list parts after abort: s3 code '%s'", code);
  rc = hipobj_mpu_abort(mpu, fx.err);
  cr_expect_eq(rc, HIPOBJ_E_NOT_FOUND, "second abort: status %d (%s): %s", rc,
               hipobj_strerror(rc), hipobj_error_message(fx.err));
  cr_expect_str_eq(hipobj_error_s3_code(fx.err), "NoSuchUpload",
                   "second abort: s3 code '%s'", hipobj_error_s3_code(fx.err));
  hipobj_mpu_free(mpu);

  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  rc = hipobj_s3_head(fx.client, fx.bucket, "too-small", &info, fx.err);
  cr_expect_eq(rc, HIPOBJ_E_NOT_FOUND, "an aborted upload left an object");
  free(data);
}

/* Checks the parts recorded in mpu against the expected sizes and ETags. */
static void expect_parts(const struct hipobj_mpu *mpu, const size_t *sizes,
                         char etags[][HIPOBJ_ETAG_MAX], size_t n) {
  cr_assert_eq(hipobj_mpu_part_count(mpu), n, "part count %zu, want %zu",
               hipobj_mpu_part_count(mpu), n);
  for (size_t i = 0; i < n; i++) {
    unsigned num = 0;
    uint64_t size = 0;
    const char *etag = NULL;
    cr_assert_eq(hipobj_mpu_part(mpu, i, &num, &size, &etag), HIPOBJ_OK,
                 "hipobj_mpu_part(%zu)", i);
    cr_expect_eq(num, (unsigned)(i + 1), "part %zu has number %u", i, num);
    cr_expect_eq(size, (uint64_t)sizes[i], "part %u size %llu, want %zu", num,
                 (unsigned long long)size, sizes[i]);
    cr_expect_str_eq(etag ? etag : "(null)", etags[i],
                     "part %u ETag %s, want %s", num, etag ? etag : "(null)",
                     etags[i]);
  }
  unsigned num = 0;
  uint64_t size = 0;
  const char *etag = NULL;
  cr_expect_eq(hipobj_mpu_part(mpu, n, &num, &size, &etag),
               HIPOBJ_E_INVALID_ARGUMENT, "part index past the end accepted");
}

/* Uploads 5 MiB + 5 MiB + a small final part; when reopen is set, a second
 * handle opened from the upload id lists the parts and completes (resume). */
static void multipart_happy(const char *key, int reopen) {
  const size_t sizes[3] = {5 * MiB, 5 * MiB, 12345};
  const size_t total = sizes[0] + sizes[1] + sizes[2];
  char etags[3][HIPOBJ_ETAG_MAX];
  unsigned char *data = fx_random(total, 21);

  struct hipobj_mpu *mpu = NULL;
  fx_check(hipobj_mpu_create(fx.client, fx.bucket, key,
                             "application/x-hipobj-mpu", &mpu, fx.err),
           "create multipart upload", fx.err);
  size_t off = 0;
  for (unsigned n = 1; n <= 3; n++) {
    struct hipobj_mem src = hipobj_mem_host(data + off, sizes[n - 1]);
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    fx_check(hipobj_mpu_upload_part(mpu, n, &src, &res, fx.err), "upload part",
             fx.err);
    snprintf(etags[n - 1], HIPOBJ_ETAG_MAX, "%s", res.etag);
    off += sizes[n - 1];
  }
  expect_parts(mpu, sizes, etags, 3);

  struct hipobj_mpu *done = mpu;
  if (reopen) {
    fx_check(hipobj_mpu_open(fx.client, fx.bucket, key,
                             hipobj_mpu_upload_id(mpu), &done, fx.err),
             "open upload by id", fx.err);
    cr_expect_str_eq(hipobj_mpu_upload_id(done), hipobj_mpu_upload_id(mpu));
    cr_expect_eq(hipobj_mpu_part_count(done), 0u,
                 "a freshly opened handle already has parts");
  }
  fx_check(hipobj_mpu_list_parts(done, fx.err), "list parts", fx.err);
  expect_parts(done, sizes, etags, 3);

  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  fx_check(hipobj_mpu_complete(done, &res, fx.err), "complete", fx.err);
  /* RGW 16 sends an empty <ETag> in CompleteMultipartUploadResult; HEAD
   * below is checked instead, and a non-empty result must agree with it. */
  char etag[HIPOBJ_ETAG_MAX];
  snprintf(etag, sizeof etag, "%s", res.etag);
  if (done != mpu)
    hipobj_mpu_free(done);
  hipobj_mpu_free(mpu);

  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  fx_check(hipobj_s3_head(fx.client, fx.bucket, key, &info, fx.err), "head",
           fx.err);
  cr_expect_eq(info.size, (uint64_t)total);
  size_t el = strlen(info.etag);
  cr_expect(el > 3 && strcmp(info.etag + el - 3, "-3\"") == 0,
            "ETag %s is not that of 3 parts", info.etag);
  if (etag[0])
    cr_expect_str_eq(info.etag, etag, "head ETag %s, complete ETag %s",
                     info.etag, etag);
  cr_expect_str_eq(info.content_type, "application/x-hipobj-mpu");
  fx_get_compare(key, data, total);
  fx_check(hipobj_s3_delete(fx.client, fx.bucket, key, fx.err), "delete",
           fx.err);
  free(data);
}

/* hipobj_s3_put's multipart upload stores the object's type: the one
 * given, else application/octet-stream; never that of Complete's XML body
 * (OpenStack Swift's S3 API keeps the type a Complete carries). */
static void multipart_type(const char *key, const char *given,
                           const char *want) {
  size_t n = 2 * (5 * MiB) + 3;
  unsigned char *data = fx_random(n, 77);
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.part_size = 5 * MiB;
  o.multipart_threshold = 5 * MiB;
  o.content_type = given;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  fx_put(key, data, n, &o, &res);
  cr_expect_eq(res.parts, 3u, "not a multipart upload: %u parts", res.parts);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  fx_check(hipobj_s3_head(fx.client, fx.bucket, key, &info, fx.err), "head",
           fx.err);
  cr_expect_str_eq(info.content_type, want);
  free(data);
}

Test(s3_multipart, put_stores_the_content_type) {
  multipart_type("mpu/typed", "text/csv", "text/csv");
  multipart_type("mpu/untyped", NULL, "application/octet-stream");
}

Test(s3_multipart, three_parts_list_complete_get) {
  multipart_happy("mpu/happy", 0);
}

Test(s3_multipart, resume_from_upload_id) {
  multipart_happy("mpu/resumed", 1);
}

/* Keys that need percent-encoding in the URL or the SigV4 canonical request,
 * and escaping in XML listings. */
static const char *const special_keys[] = {
    "with space", "a+b",         "100%",        "tilde~",
    "k=v&x=y",    "utf8-ü-日本", "dir/sub/key",
};
#define N_SPECIAL (sizeof special_keys / sizeof special_keys[0])

static size_t special_index(const char *key) {
  for (size_t i = 0; i < N_SPECIAL; i++)
    if (strcmp(key, special_keys[i]) == 0)
      return i;
  return N_SPECIAL;
}

static void put_special_keys(void) {
  for (size_t i = 0; i < N_SPECIAL; i++) {
    size_t len = 100 + i * 37;
    unsigned char *data = fx_random(len, 30 + i);
    fx_put(special_keys[i], data, len, NULL, NULL);
    fx_get_compare(special_keys[i], data, len);
    free(data);
  }
}

static struct hipobj_list_page *list_page(const char *prefix, const char *delim,
                                          const char *token, unsigned max) {
  struct hipobj_list_opts lo = HIPOBJ_LIST_OPTS_INIT;
  lo.prefix = prefix;
  lo.delimiter = delim;
  lo.continuation_token = token;
  lo.max_keys = max;
  struct hipobj_list_page *page = NULL;
  fx_check(hipobj_s3_list(fx.client, fx.bucket, &lo, &page, fx.err), "list",
           fx.err);
  cr_assert_not_null(page);
  return page;
}

Test(s3_list, special_keys_round_trip_and_list) {
  put_special_keys();

  /* Everything in one page, with the sizes put. */
  struct hipobj_list_page *page = list_page(NULL, NULL, NULL, 0);
  cr_expect_eq(hipobj_list_page_count(page), N_SPECIAL, "listed %zu keys",
               hipobj_list_page_count(page));
  cr_expect_null(hipobj_list_page_next_token(page), "one page has a token");
  int seen[N_SPECIAL] = {0};
  for (size_t i = 0; i < hipobj_list_page_count(page); i++) {
    const char *key = hipobj_list_page_key(page, i);
    size_t k = special_index(key);
    cr_expect_lt(k, N_SPECIAL, "unexpected key '%s' listed", key);
    if (k == N_SPECIAL)
      continue;
    seen[k]++;
    cr_expect_eq(hipobj_list_page_size(page, i), (uint64_t)(100 + k * 37),
                 "size of '%s'", key);
    cr_expect_eq(hipobj_list_page_etag(page, i)[0], '"', "ETag of '%s': %s",
                 key, hipobj_list_page_etag(page, i));
    cr_expect_gt(hipobj_list_page_mtime(page, i), 0, "mtime of '%s'", key);
  }
  for (size_t k = 0; k < N_SPECIAL; k++)
    cr_expect_eq(seen[k], 1, "'%s' listed %d times", special_keys[k], seen[k]);
  hipobj_list_page_free(page);

  /* Prefix with characters that need encoding in the query string. */
  page = list_page("k=v&", NULL, NULL, 0);
  cr_expect_eq(hipobj_list_page_count(page), 1u, "prefix 'k=v&': %zu keys",
               hipobj_list_page_count(page));
  if (hipobj_list_page_count(page) == 1)
    cr_expect_str_eq(hipobj_list_page_key(page, 0), "k=v&x=y");
  hipobj_list_page_free(page);

  page = list_page("utf8-ü", NULL, NULL, 0);
  cr_expect_eq(hipobj_list_page_count(page), 1u, "prefix 'utf8-ü': %zu keys",
               hipobj_list_page_count(page));
  hipobj_list_page_free(page);

  for (size_t i = 0; i < N_SPECIAL; i++)
    fx_check(hipobj_s3_delete(fx.client, fx.bucket, special_keys[i], fx.err),
             special_keys[i], fx.err);
}

Test(s3_list, prefix_and_delimiter) {
  put_special_keys();

  struct hipobj_list_page *page = list_page("dir/", NULL, NULL, 0);
  cr_assert_eq(hipobj_list_page_count(page), 1u, "prefix dir/: %zu keys",
               hipobj_list_page_count(page));
  cr_expect_str_eq(hipobj_list_page_key(page, 0), "dir/sub/key");
  cr_expect_eq(hipobj_list_page_prefix_count(page), 0u,
               "common prefixes without a delimiter");
  hipobj_list_page_free(page);

  /* Top level: "dir/" folds into a common prefix, the rest are keys. */
  page = list_page(NULL, "/", NULL, 0);
  cr_expect_eq(hipobj_list_page_count(page), N_SPECIAL - 1,
               "delimiter /: %zu keys", hipobj_list_page_count(page));
  for (size_t i = 0; i < hipobj_list_page_count(page); i++)
    cr_expect_null(strchr(hipobj_list_page_key(page, i), '/'),
                   "key '%s' should be folded into a prefix",
                   hipobj_list_page_key(page, i));
  cr_assert_eq(hipobj_list_page_prefix_count(page), 1u,
               "delimiter /: %zu common prefixes",
               hipobj_list_page_prefix_count(page));
  cr_expect_str_eq(hipobj_list_page_prefix(page, 0), "dir/");
  hipobj_list_page_free(page);

  page = list_page("dir/", "/", NULL, 0);
  cr_expect_eq(hipobj_list_page_count(page), 0u, "dir/ + /: %zu keys",
               hipobj_list_page_count(page));
  cr_assert_eq(hipobj_list_page_prefix_count(page), 1u,
               "dir/ + /: %zu common prefixes",
               hipobj_list_page_prefix_count(page));
  cr_expect_str_eq(hipobj_list_page_prefix(page, 0), "dir/sub/");
  hipobj_list_page_free(page);

  page = list_page("nothing-here/", "/", NULL, 0);
  cr_expect_eq(hipobj_list_page_count(page), 0u);
  cr_expect_eq(hipobj_list_page_prefix_count(page), 0u);
  cr_expect_null(hipobj_list_page_next_token(page));
  hipobj_list_page_free(page);

  for (size_t i = 0; i < N_SPECIAL; i++)
    fx_check(hipobj_s3_delete(fx.client, fx.bucket, special_keys[i], fx.err),
             special_keys[i], fx.err);
}

Test(s3_list, pagination_max_keys_2) {
  put_special_keys();
  int seen[N_SPECIAL] = {0};
  size_t total = 0, pages = 0;
  char *token = NULL;
  do {
    struct hipobj_list_page *page = list_page(NULL, NULL, token, 2);
    free(token);
    token = NULL;
    pages++;
    size_t n = hipobj_list_page_count(page);
    cr_expect_leq(n, 2u, "page %zu has %zu keys with max_keys=2", pages, n);
    for (size_t i = 0; i < n; i++) {
      size_t k = special_index(hipobj_list_page_key(page, i));
      cr_expect_lt(k, N_SPECIAL, "unexpected key '%s'",
                   hipobj_list_page_key(page, i));
      if (k < N_SPECIAL)
        seen[k]++;
      total++;
    }
    const char *next = hipobj_list_page_next_token(page);
    if (next) {
      cr_expect_neq(next[0], '\0', "empty continuation token");
      token = strdup(next);
      cr_assert_not_null(token);
    }
    hipobj_list_page_free(page);
  } while (token && pages < 20);
  free(token);
  cr_expect_eq(total, N_SPECIAL, "listed %zu keys in %zu pages", total, pages);
  cr_expect_eq(pages, (N_SPECIAL + 1) / 2, "%zu pages for %zu keys", pages,
               N_SPECIAL);
  for (size_t k = 0; k < N_SPECIAL; k++)
    cr_expect_eq(seen[k], 1, "'%s' listed %d times", special_keys[k], seen[k]);

  for (size_t i = 0; i < N_SPECIAL; i++)
    fx_check(hipobj_s3_delete(fx.client, fx.bucket, special_keys[i], fx.err),
             special_keys[i], fx.err);
}

/* Criterion's asserts are not thread-safe, so workers record the first
 * failure and the main thread asserts. */
#define N_THREADS 8
#define OBJS_PER_THREAD 3

struct worker {
  pthread_t tid;
  unsigned index;
  int failed;
  char why[512];
};

static void *worker_main(void *arg) {
  struct worker *w = arg;
  struct hipobj_error *err = NULL;
  if (hipobj_error_create(&err) != HIPOBJ_OK) {
    snprintf(w->why, sizeof w->why, "hipobj_error_create failed");
    w->failed = 1;
    return NULL;
  }
  for (unsigned j = 0; j < OBJS_PER_THREAD && !w->failed; j++) {
    /* The last object of each thread is multipart (9 MiB > 8 MiB parts). */
    size_t len = j + 1 < OBJS_PER_THREAD ? 100000 + w->index * 1000 + j
                                         : 9 * MiB + w->index;
    uint64_t seed = 1000 + w->index * 10 + j;
    char key[64];
    snprintf(key, sizeof key, "thread-%u/obj-%u", w->index, j);
    unsigned char *data = malloc(len), *got = malloc(len);
    if (!data || !got) {
      snprintf(w->why, sizeof w->why, "%s: out of memory", key);
      w->failed = 1;
    } else {
      fx_fill(data, len, seed);
      struct hipobj_mem src = hipobj_mem_host(data, len);
      struct hipobj_mem dst = hipobj_mem_host(got, len);
      struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
      int rc = hipobj_s3_put(fx.client, fx.bucket, key, &src, NULL, &res, err);
      if (rc == HIPOBJ_OK) {
        res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
        rc = hipobj_s3_get(fx.client, fx.bucket, key, &dst, NULL, &res, err);
      }
      size_t d = len;
      if (rc != HIPOBJ_OK)
        snprintf(w->why, sizeof w->why, "%s: status %d: %s", key, rc,
                 hipobj_error_message(err));
      else if (res.bytes != len)
        snprintf(w->why, sizeof w->why, "%s: got %llu of %zu bytes", key,
                 (unsigned long long)res.bytes, len);
      else if ((d = fx_first_diff(data, got, len)) != len)
        snprintf(w->why, sizeof w->why, "%s: first difference at byte %zu", key,
                 d);
      else if ((rc = hipobj_s3_delete(fx.client, fx.bucket, key, err)) !=
               HIPOBJ_OK)
        snprintf(w->why, sizeof w->why, "%s: delete: %s", key,
                 hipobj_error_message(err));
      w->failed = w->why[0] != '\0';
    }
    free(data);
    free(got);
  }
  hipobj_error_free(err);
  return NULL;
}

Test(s3_threads, one_client_eight_threads) {
  struct worker w[N_THREADS];
  memset(w, 0, sizeof w);
  for (unsigned i = 0; i < N_THREADS; i++) {
    w[i].index = i;
    cr_assert_eq(pthread_create(&w[i].tid, NULL, worker_main, &w[i]), 0,
                 "pthread_create %u", i);
  }
  for (unsigned i = 0; i < N_THREADS; i++)
    pthread_join(w[i].tid, NULL);
  for (unsigned i = 0; i < N_THREADS; i++)
    cr_expect_not(w[i].failed, "thread %u: %s", i, w[i].why);
}
