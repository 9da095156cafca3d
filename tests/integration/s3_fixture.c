/* s3_fixture.c - the per-test client and bucket of the S3 integration suites
 * (see s3_fixture.h). Uses only the public API. */
#include "s3_fixture.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct s3_fixture fx;

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return (v && *v) ? v : fallback;
}

const char *fx_secret(void) {
  return env_or("HIPOBJ_TEST_SECRET_KEY", "");
}

int fx_client_create(const char *secret, hipobj_log_fn log_fn, void *log_user,
                     struct hipobj_client **out, struct hipobj_error *err) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = env_or("HIPOBJ_TEST_ENDPOINT", NULL);
  cfg.region = env_or("HIPOBJ_TEST_REGION", "us-east-1");
  cfg.access_key_id = env_or("HIPOBJ_TEST_ACCESS_KEY", NULL);
  cfg.secret_access_key = secret ? secret : fx_secret();
  cfg.addressing = HIPOBJ_ADDRESSING_PATH;
  /* A wedged server should fail a test, not hang it until the timeout. */
  cfg.stall_timeout_ms = 60000;
  if (log_fn) {
    cfg.log_fn = log_fn;
    cfg.log_user = log_user;
    cfg.log_level = HIPOBJ_LOG_DEBUG;
  }
  return hipobj_client_create(&cfg, out, err);
}

void fx_check(int rc, const char *what, const struct hipobj_error *err) {
  cr_assert_eq(rc, HIPOBJ_OK, "%s: status %d (%s): %s", what, rc,
               hipobj_strerror(rc), err ? hipobj_error_message(err) : "");
}

void fx_setup(void) {
  static atomic_uint counter;
  const char *endpoint = getenv("HIPOBJ_TEST_ENDPOINT");
  if (!endpoint || !*endpoint)
    cr_skip_test("HIPOBJ_TEST_ENDPOINT is not set: run under tests/with-rgw.sh "
                 "(or export HIPOBJ_TEST_ENDPOINT/_ACCESS_KEY/_SECRET_KEY)");
  memset(&fx, 0, sizeof fx);
  cr_assert_eq(hipobj_global_init(), HIPOBJ_OK, "hipobj_global_init");
  cr_assert_eq(hipobj_error_create(&fx.err), HIPOBJ_OK, "hipobj_error_create");
  fx_check(fx_client_create(NULL, NULL, NULL, &fx.client, fx.err),
           "hipobj_client_create", fx.err);

  /* Unique per run and per test: Criterion runs each test in its own
   * process, and an earlier run's leftovers must not be reused. */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(fx.bucket, sizeof fx.bucket, "hipobj-it-%lx-%lx-%x",
           (unsigned long)ts.tv_sec, (unsigned long)getpid(),
           atomic_fetch_add(&counter, 1) ^ (unsigned)(ts.tv_nsec & 0xfff));
  fx_check(hipobj_s3_create_bucket(fx.client, fx.bucket, fx.err),
           "create bucket", fx.err);
}

/* Deletes every object left in the bucket, then the bucket: tests delete
 * what they create, this catches what a failed test left behind. */
void fx_teardown(void) {
  if (!fx.client)
    return;
  char *token = NULL;
  int rc = HIPOBJ_OK;
  for (int pages = 0; pages < 1000; pages++) {
    struct hipobj_list_opts lo = HIPOBJ_LIST_OPTS_INIT;
    struct hipobj_list_page *page = NULL;
    lo.continuation_token = token;
    rc = hipobj_s3_list(fx.client, fx.bucket, &lo, &page, fx.err);
    free(token);
    token = NULL;
    if (rc != HIPOBJ_OK)
      break;
    for (size_t i = 0; i < hipobj_list_page_count(page); i++) {
      const char *key = hipobj_list_page_key(page, i);
      if (hipobj_s3_delete(fx.client, fx.bucket, key, fx.err) != HIPOBJ_OK)
        cr_log_warn("teardown: delete '%s': %s", key,
                    hipobj_error_message(fx.err));
    }
    const char *next = hipobj_list_page_next_token(page);
    token = next ? strdup(next) : NULL;
    hipobj_list_page_free(page);
    if (!token)
      break;
  }
  free(token);
  if (rc != HIPOBJ_OK)
    cr_log_warn("teardown: list %s: %s", fx.bucket,
                hipobj_error_message(fx.err));
  rc = hipobj_s3_delete_bucket(fx.client, fx.bucket, fx.err);
  cr_expect_eq(rc, HIPOBJ_OK, "teardown: delete bucket %s: %s", fx.bucket,
               hipobj_error_message(fx.err));
  hipobj_client_free(fx.client);
  hipobj_error_free(fx.err);
  memset(&fx, 0, sizeof fx);
  hipobj_global_cleanup();
}

void fx_fill(void *buf, size_t len, uint64_t seed) {
  unsigned char *p = buf;
  uint64_t s = seed;
  while (len > 0) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    size_t n = len < sizeof z ? len : sizeof z;
    memcpy(p, &z, n);
    p += n;
    len -= n;
  }
}

unsigned char *fx_random(size_t len, uint64_t seed) {
  unsigned char *p = malloc(len ? len : 1);
  cr_assert_not_null(p, "malloc(%zu)", len);
  fx_fill(p, len, seed);
  return p;
}

size_t fx_first_diff(const void *a, const void *b, size_t len) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < len; i++)
    if (x[i] != y[i])
      return i;
  return len;
}

void fx_put(const char *key, const void *buf, size_t len,
            const struct hipobj_put_opts *opts,
            struct hipobj_xfer_result *res) {
  struct hipobj_xfer_result local = HIPOBJ_XFER_RESULT_INIT;
  struct hipobj_mem src = hipobj_mem_host((void *)buf, len);
  if (!res)
    res = &local;
  int rc = hipobj_s3_put(fx.client, fx.bucket, key, &src, opts, res, fx.err);
  char what[512];
  snprintf(what, sizeof what, "put '%s' (%zu bytes)", key, len);
  fx_check(rc, what, fx.err);
  cr_assert_eq(res->bytes, (uint64_t)len, "put '%s': res.bytes %llu != %zu",
               key, (unsigned long long)res->bytes, len);
}

void fx_get_compare(const char *key, const void *want, size_t len) {
  unsigned char *got = malloc(len ? len : 1);
  cr_assert_not_null(got);
  memset(got, 0xA5, len);
  struct hipobj_mem dst = hipobj_mem_host(len ? got : NULL, len);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(fx.client, fx.bucket, key, &dst, NULL, &res, fx.err);
  char what[512];
  snprintf(what, sizeof what, "get '%s' (%zu bytes)", key, len);
  fx_check(rc, what, fx.err);
  cr_assert_eq(res.bytes, (uint64_t)len, "get '%s': res.bytes %llu != %zu", key,
               (unsigned long long)res.bytes, len);
  cr_assert_eq(res.object_size, (uint64_t)len,
               "get '%s': res.object_size %llu != %zu", key,
               (unsigned long long)res.object_size, len);
  size_t d = fx_first_diff(got, want, len);
  cr_assert_eq(d, len, "get '%s': first difference at byte %zu of %zu", key, d,
               len);
  free(got);
}
