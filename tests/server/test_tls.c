/* test_tls.c - HTTPS against hipobj-server (--tls-cert/--tls-key, the test
 * CA and certificates of tests/server/tls/): transfers verified with the
 * client's ca_bundle, parallel parts on several I/O threads included; and
 * the refusals a user relies on, each HIPOBJ_E_TLS with a message naming
 * the cause and no secret: a certificate from a CA the system does not
 * trust, a certificate for another host name, a CA file that does not
 * exist. tls_skip_verify accepts any certificate. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct server_proc srv;
static struct hipobj_error *err;

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
}

static void fini(void) {
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(tls, .init = init, .fini = fini, .timeout = 120);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

static const char *tls_file(const char *name) {
  static char path[4][512];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, sizeof path[0], "%s/%s", HIPOBJ_TLS_DIR, name);
  return p;
}

/* hipobj-server over HTTPS with the named certificate ("server" is for
 * 127.0.0.1 and localhost, "wrong-name" for another host only). */
static void start_tls(const char *cert) {
  char pem[64], key[64];
  snprintf(pem, sizeof pem, "%s.pem", cert);
  snprintf(key, sizeof key, "%s.key", cert);
  const char *extra[] = {"--tls-cert", tls_file(pem), "--tls-key",
                         tls_file(key), NULL};
  srv_start(&srv, NULL, extra);
  cr_assert(!strncmp(srv.url, "https://", 8), "server URL %s", srv.url);
}

static struct hipobj_client *tls_client(const char *ca_bundle, int skip,
                                        unsigned io_threads) {
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 3, io_threads);
  cfg.ca_bundle = ca_bundle;
  cfg.tls_skip_verify = skip;
  struct hipobj_client *c = NULL;
  OK(hipobj_client_create(&cfg, &c, err));
  return c;
}

/* A PUT and a parallel GET of n bytes, compared byte for byte. */
static void round_trip(struct hipobj_client *c, const char *key, size_t n) {
  char *data = malloc(n), *back = malloc(n + 1);
  fill_pattern(data, n, (unsigned)n);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.concurrency = 4;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(c, T_BUCKET, key, &src, &po, &res, err));
  struct hipobj_mem dst = hipobj_mem_host(back, n + 1);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.part_size = 1u << 20;
  go.concurrency = 8;
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(c, T_BUCKET, key, &dst, &go, &res, err));
  cr_assert_eq(res.bytes, n);
  cr_assert_eq(memcmp(back, data, n), 0, "%s: the bytes read back differ", key);
  free(data);
  free(back);
}

/* The call failed as a TLS error whose message says why and keeps the
 * secret out. */
static void tls_refused(int rc, const char *want) {
  const char *m = hipobj_error_message(err);
  cr_assert_eq(rc, HIPOBJ_E_TLS, "status %d: %s", rc, m);
  cr_assert(strstr(m, want), "message '%s' does not say '%s'", m, want);
  cr_assert_null(strstr(m, T_SK), "the secret key is in '%s'", m);
}

Test(tls, verified_with_the_ca_bundle_parallel_parts_on_four_threads) {
  start_tls("server");
  struct hipobj_client *c = tls_client(tls_file("ca.pem"), 0, 4);
  OK(hipobj_s3_create_bucket(c, T_BUCKET, err));
  round_trip(c, "small", 1000);
  round_trip(c, "multipart", (12u << 20) + 1); /* 3 parts, last of 2 MiB+1 */
  hipobj_client_free(c);
}

/* A GET of key "k" into a small host buffer (the wire path's kind). */
static int small_get(struct hipobj_client *c) {
  char buf[16];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  return hipobj_s3_get(c, T_BUCKET, "k", &dst, NULL, NULL, err);
}

Test(tls, an_unknown_ca_is_refused_by_default) {
  start_tls("server");
  struct hipobj_client *c = tls_client(NULL, 0, 1);
  tls_refused(hipobj_s3_create_bucket(c, T_BUCKET, err), "certificate");
  tls_refused(small_get(c), "certificate");
  hipobj_client_free(c);
}

Test(tls, a_certificate_for_another_name_is_refused) {
  start_tls("wrong-name");
  struct hipobj_client *c = tls_client(tls_file("ca.pem"), 0, 1);
  tls_refused(hipobj_s3_create_bucket(c, T_BUCKET, err), "127.0.0.1");
  /* A small GET goes by the wire path, whose connection libcurl opens
   * and verifies the same way. */
  tls_refused(small_get(c), "127.0.0.1");
  hipobj_client_free(c);
}

/* Serial small GETs over TLS (the wire path: HTTP/1.1 over libcurl's
 * verified connection, kept between them), each compared byte for byte. */
Test(tls, serial_small_gets_over_one_connection) {
  start_tls("server");
  struct hipobj_client *c = tls_client(tls_file("ca.pem"), 0, 1);
  OK(hipobj_s3_create_bucket(c, T_BUCKET, err));
  char data[3000], back[3001];
  fill_pattern(data, sizeof data, 7);
  struct hipobj_mem src = hipobj_mem_host(data, sizeof data);
  OK(hipobj_s3_put(c, T_BUCKET, "serial", &src, NULL, NULL, err));
  for (int i = 0; i < 5; i++) {
    memset(back, 0, sizeof back);
    struct hipobj_mem dst = hipobj_mem_host(back, sizeof back);
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    OK(hipobj_s3_get(c, T_BUCKET, "serial", &dst, NULL, &res, err));
    cr_assert_eq(res.bytes, sizeof data);
    cr_assert_eq(memcmp(back, data, sizeof data), 0, "GET %d differs", i);
  }
  hipobj_client_free(c);
}

Test(tls, a_missing_ca_file_is_named) {
  start_tls("server");
  struct hipobj_client *c = tls_client("/nonexistent/hipobj-ca.pem", 0, 1);
  tls_refused(hipobj_s3_create_bucket(c, T_BUCKET, err),
              "/nonexistent/hipobj-ca.pem");
  hipobj_client_free(c);
}

Test(tls, skip_verify_accepts_any_certificate) {
  start_tls("wrong-name");
  struct hipobj_client *c = tls_client(NULL, 1, 2);
  OK(hipobj_s3_create_bucket(c, T_BUCKET, err));
  round_trip(c, "unverified", (5u << 20) + 3);
  hipobj_client_free(c);
}
