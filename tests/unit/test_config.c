/* test_config.c - unit tests of config.c (hcfg_resolve: precedence between
 * the client struct, the environment and the AWS files; validation) and
 * ini.c (the AWS INI dialect). The environment is a fake getenv over a
 * table; HOME points at a fresh temporary directory per test. */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/base/error.h"
#include "src/config.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

/* ---- fake environment ---------------------------------------------------- */

#define MAX_ENV 32
static const char *env_names[MAX_ENV];
static const char *env_values[MAX_ENV];
static size_t env_count;
static char home[256];
static char creds_path[300];
static char config_path[300];

static void set_env(const char *name, const char *value) {
  for (size_t i = 0; i < env_count; i++)
    if (strcmp(env_names[i], name) == 0) {
      env_values[i] = value;
      return;
    }
  cr_assert(env_count < MAX_ENV);
  env_names[env_count] = name;
  env_values[env_count++] = value;
}

static const char *fake_getenv(const char *name) {
  for (size_t i = 0; i < env_count; i++)
    if (strcmp(env_names[i], name) == 0)
      return env_values[i];
  return NULL;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static void setup(void) {
  strcpy(home, "/tmp/hipobj-test-config-XXXXXX");
  cr_assert_not_null(mkdtemp(home));
  char dir[300];
  snprintf(dir, sizeof dir, "%s/.aws", home);
  cr_assert_eq(mkdir(dir, 0700), 0);
  snprintf(creds_path, sizeof creds_path, "%s/.aws/credentials", home);
  snprintf(config_path, sizeof config_path, "%s/.aws/config", home);
  env_count = 0;
  set_env("HOME", home);
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void teardown(void) {
  nftw(home, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

TestSuite(config, .init = setup, .fini = teardown);
TestSuite(ini, .init = setup, .fini = teardown);

/* Resolves and expects success. */
static void resolve_ok(const struct hipobj_client_config *cfg,
                       struct hcfg *out) {
  struct hipobj_error e = {0};
  int rc = hcfg_resolve(cfg, fake_getenv, out, &e);
  cr_assert_eq(rc, HIPOBJ_OK, "rc %d: %s", rc, e.message);
  cr_assert_eq(e.status, HIPOBJ_OK);
}

/* Resolves and expects `status`; returns the message. */
static const char *resolve_fail(const struct hipobj_client_config *cfg,
                                int status) {
  static struct hipobj_error e;
  memset(&e, 0, sizeof e);
  struct hcfg out;
  int rc = hcfg_resolve(cfg, fake_getenv, &out, &e);
  cr_assert_eq(rc, status, "rc %d (want %d): %s", rc, status, e.message);
  cr_assert_eq(e.status, status);
  cr_assert_null(out.endpoint_url, "nothing left allocated on failure");
  cr_assert_null(out.secret_key);
  return e.message;
}

static void env_keys(void) {
  set_env("AWS_ACCESS_KEY_ID", "AKENV");
  set_env("AWS_SECRET_ACCESS_KEY", "SKENV");
}

/* ---- defaults and struct handling --------------------------------------- */

/* Two parts in flight per I/O thread, 8 to the 16 default connections. */
static unsigned default_concurrency(unsigned io_threads) {
  unsigned n = 2 * io_threads;
  return n < 8 ? 8 : n > 16 ? 16 : n;
}

Test(config, defaults) {
  env_keys();
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.region, "us-east-1");
  cr_assert_str_eq(c.endpoint_url, "https://s3.us-east-1.amazonaws.com");
  cr_assert_eq(c.connect_timeout_ms, 10000);
  cr_assert_eq(c.request_timeout_ms, 0);
  cr_assert_eq(c.stall_timeout_ms, 30000);
  cr_assert_eq(c.max_attempts, 4);
  cr_assert_eq(c.retry_base_ms, 100);
  cr_assert_eq(c.max_connections, 16);
  cr_assert_eq(c.concurrency, default_concurrency(c.io_threads));
  cr_assert_eq(c.part_size, 8 * MIB);
  cr_assert_eq(c.multipart_threshold, 8 * MIB);
  cr_assert_eq(c.addressing, HIPOBJ_ADDRESSING_AUTO);
  cr_assert_eq(c.anonymous, 0);
  cr_assert_eq(c.tls_skip_verify, 0);
  cr_assert_eq(c.integrity, HIPOBJ_INTEGRITY_AUTO);
  cr_assert_null(c.ca_bundle);
  cr_assert_null(c.session_token);
  cr_assert_str_eq(c.creds_source, "environment");
  hcfg_free(&c);
  cr_assert_null(c.region);
  hcfg_free(&c); /* twice is harmless */
}

Test(config, struct_values_are_used) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = "http://127.0.0.1:9000";
  cfg.region = "eu-west-3";
  cfg.access_key_id = "AK";
  cfg.secret_access_key = "SK";
  cfg.session_token = "TOK";
  cfg.addressing = HIPOBJ_ADDRESSING_VIRTUAL;
  cfg.tls_skip_verify = 5;
  cfg.ca_bundle = "/etc/ca.pem";
  cfg.connect_timeout_ms = 1;
  cfg.request_timeout_ms = 2;
  cfg.stall_timeout_ms = 3;
  cfg.max_attempts = 1;
  cfg.retry_base_ms = 5;
  cfg.max_connections = 6;
  cfg.concurrency = 7;
  cfg.part_size = 5 * MIB;
  cfg.multipart_threshold = 100 * MIB;
  cfg.integrity = HIPOBJ_INTEGRITY_NONE;
  struct hcfg c;
  resolve_ok(&cfg, &c);
  cr_assert_str_eq(c.endpoint_url, "http://127.0.0.1:9000");
  cr_assert_str_eq(c.region, "eu-west-3");
  cr_assert_str_eq(c.access_key, "AK");
  cr_assert_str_eq(c.secret_key, "SK");
  cr_assert_str_eq(c.session_token, "TOK");
  cr_assert_eq(c.addressing, HIPOBJ_ADDRESSING_VIRTUAL);
  cr_assert_eq(c.tls_skip_verify, 1);
  cr_assert_str_eq(c.ca_bundle, "/etc/ca.pem");
  cr_assert_eq(c.connect_timeout_ms, 1);
  cr_assert_eq(c.request_timeout_ms, 2);
  cr_assert_eq(c.stall_timeout_ms, 3);
  cr_assert_eq(c.max_attempts, 1);
  cr_assert_eq(c.retry_base_ms, 5);
  cr_assert_eq(c.max_connections, 6);
  cr_assert_eq(c.concurrency, 7);
  cr_assert_eq(c.part_size, 5 * MIB);
  cr_assert_eq(c.multipart_threshold, 100 * MIB);
  cr_assert_eq(c.integrity, HIPOBJ_INTEGRITY_NONE);
  cr_assert_str_eq(c.creds_source, "config");
  hcfg_free(&c);
}

Test(config, strings_are_copied) {
  char ep[] = "http://host:1";
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = ep;
  cfg.anonymous = 1;
  struct hcfg c;
  resolve_ok(&cfg, &c);
  ep[7] = 'X';
  cr_assert_str_eq(c.endpoint_url, "http://host:1");
  hcfg_free(&c);
}

Test(config, null_out) {
  struct hipobj_error e = {0};
  cr_assert_eq(hcfg_resolve(NULL, fake_getenv, NULL, &e),
               HIPOBJ_E_INVALID_ARGUMENT);
}

/* ---- numbers ------------------------------------------------------------ */

Test(config, part_size_limits) {
  env_keys();
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.part_size = 5 * MIB - 1;
  const char *m = resolve_fail(&cfg, HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert(strstr(m, "part_size"), "%s", m);
  cfg.part_size = 5 * GIB + 1;
  resolve_fail(&cfg, HIPOBJ_E_INVALID_ARGUMENT);

  struct hcfg c;
  cfg.part_size = 5 * MIB;
  resolve_ok(&cfg, &c);
  cr_assert_eq(c.part_size, 5 * MIB);
  cr_assert_eq(c.multipart_threshold, 5 * MIB, "threshold follows part size");
  hcfg_free(&c);
  cfg.part_size = 5 * GIB;
  resolve_ok(&cfg, &c);
  cr_assert_eq(c.part_size, 5 * GIB);
  hcfg_free(&c);
}

Test(config, io_threads_default_and_limits) {
  env_keys();
  struct hcfg c;
  resolve_ok(NULL, &c);
  /* Half the online CPUs, 1 to 8. */
  long half = sysconf(_SC_NPROCESSORS_ONLN) / 2;
  unsigned want = half < 1 ? 1 : half > 8 ? 8 : (unsigned)half;
  cr_assert_eq(c.io_threads, want, "%u, want %u", c.io_threads, want);
  hcfg_free(&c);
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.io_threads = 64;
  resolve_ok(&cfg, &c);
  cr_assert_eq(c.io_threads, 64);
  hcfg_free(&c);
  cfg.io_threads = 65;
  const char *m = resolve_fail(&cfg, HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert(strstr(m, "io_threads 65"), "%s", m);
  /* The environment, when the field is unset; the field wins. */
  set_env("HIPOBJ_IO_THREADS", "3");
  resolve_ok(NULL, &c);
  cr_assert_eq(c.io_threads, 3);
  hcfg_free(&c);
  cfg.io_threads = 5;
  resolve_ok(&cfg, &c);
  cr_assert_eq(c.io_threads, 5);
  hcfg_free(&c);
  set_env("HIPOBJ_IO_THREADS", "0");
  m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "HIPOBJ_IO_THREADS='0'"), "%s", m);
}

Test(config, concurrency_and_pool_follow_the_io_threads) {
  env_keys();
  struct hcfg c;
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  const struct {
    unsigned io, max_conn, conc, want_conc;
    size_t pool, want_pool;
  } t[] = {
      {1, 0, 0, 8, 0, 64 * MIB},    /* a small machine: 8 parts, 8 MiB each */
      {4, 0, 0, 8, 0, 64 * MIB},    /* still 8 */
      {8, 0, 0, 16, 0, 128 * MIB},  /* two per I/O thread */
      {64, 0, 0, 16, 0, 128 * MIB}, /* no more than the connections */
      {8, 12, 0, 12, 0, 96 * MIB},  /* fewer connections */
      {8, 4, 0, 8, 0, 64 * MIB},    /* never below 8 */
      {1, 0, 64, 64, 0, 256 * MIB}, /* the caller's; the pool's cap */
      {8, 0, 2, 2, 0, 32 * MIB},    /* the pool's floor */
      {8, 0, 0, 16, 8 * MIB, 8 * MIB}, /* the caller's pool */
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    cfg.io_threads = t[i].io;
    cfg.max_connections = t[i].max_conn;
    cfg.concurrency = t[i].conc;
    cfg.staging_pool_bytes = t[i].pool;
    resolve_ok(&cfg, &c);
    cr_assert_eq(c.concurrency, t[i].want_conc, "case %zu: %u", i,
                 c.concurrency);
    cr_assert_eq(c.staging_pool_bytes, t[i].want_pool, "case %zu: %zu", i,
                 c.staging_pool_bytes);
    hcfg_free(&c);
  }
}

Test(config, bad_addressing) {
  env_keys();
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.addressing = (enum hipobj_addressing)7;
  resolve_fail(&cfg, HIPOBJ_E_INVALID_ARGUMENT);
}

Test(config, bad_integrity) {
  env_keys();
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.integrity = (enum hipobj_integrity)3;
  resolve_fail(&cfg, HIPOBJ_E_INVALID_ARGUMENT);
}

/* ---- endpoint and region ------------------------------------------------ */

Test(config, endpoint_precedence) {
  env_keys();
  write_file(config_path, "[default]\nendpoint_url = http://file:1\n");
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.endpoint_url, "http://file:1");
  hcfg_free(&c);

  set_env("AWS_ENDPOINT_URL", "http://global:2");
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.endpoint_url, "http://global:2");
  hcfg_free(&c);

  set_env("AWS_ENDPOINT_URL_S3", "https://s3only:3");
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.endpoint_url, "https://s3only:3");
  hcfg_free(&c);

  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = "http://given:4";
  resolve_ok(&cfg, &c);
  cr_assert_str_eq(c.endpoint_url, "http://given:4");
  hcfg_free(&c);

  /* Empty values count as unset. */
  cfg.endpoint_url = "";
  set_env("AWS_ENDPOINT_URL_S3", "");
  resolve_ok(&cfg, &c);
  cr_assert_str_eq(c.endpoint_url, "http://global:2");
  hcfg_free(&c);
}

Test(config, region_precedence_and_default_endpoint) {
  env_keys();
  write_file(config_path, "[default]\nregion = ap-south-1\n");
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.region, "ap-south-1");
  cr_assert_str_eq(c.endpoint_url, "https://s3.ap-south-1.amazonaws.com");
  hcfg_free(&c);

  set_env("AWS_DEFAULT_REGION", "eu-central-1");
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.region, "eu-central-1");
  hcfg_free(&c);

  set_env("AWS_REGION", "us-west-2");
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.region, "us-west-2");
  cr_assert_str_eq(c.endpoint_url, "https://s3.us-west-2.amazonaws.com");
  hcfg_free(&c);

  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.region = "cn-north-1";
  resolve_ok(&cfg, &c);
  cr_assert_str_eq(c.region, "cn-north-1");
  cr_assert_str_eq(c.endpoint_url, "https://s3.cn-north-1.amazonaws.com.cn");
  hcfg_free(&c);
}

Test(config, bad_endpoints) {
  env_keys();
  static const char *const bad[] = {"ftp://host", "localhost:9000",
                                    "http://",    "https:///bucket",
                                    "http://a b", "http//host"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
    cfg.endpoint_url = bad[i];
    const char *m = resolve_fail(&cfg, HIPOBJ_E_CONFIG);
    cr_assert(strstr(m, bad[i]), "message names the URL: %s", m);
  }
  set_env("AWS_ENDPOINT_URL", "s3.example.com");
  const char *m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "AWS_ENDPOINT_URL"), "message names the source: %s", m);
}

Test(config, endpoint_normalised) {
  env_keys();
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = "HTTP://Host:9000//";
  struct hcfg c;
  resolve_ok(&cfg, &c);
  cr_assert_str_eq(c.endpoint_url, "HTTP://Host:9000");
  hcfg_free(&c);
}

Test(config, bad_region) {
  env_keys();
  set_env("AWS_REGION", "us-east-1/evil");
  const char *m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "us-east-1/evil") && strstr(m, "AWS_REGION"), "%s", m);
}

Test(config, ca_bundle_sources) {
  env_keys();
  write_file(config_path, "[default]\nca_bundle = /file/ca.pem\n");
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.ca_bundle, "/file/ca.pem");
  hcfg_free(&c);
  set_env("AWS_CA_BUNDLE", "/env/ca.pem");
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.ca_bundle, "/env/ca.pem");
  hcfg_free(&c);
}

/* ---- credentials -------------------------------------------------------- */

Test(config, credential_precedence) {
  write_file(creds_path, "[default]\naws_access_key_id = AKFILE\n"
                         "aws_secret_access_key = SKFILE\n"
                         "aws_session_token = TKFILE\n");
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.access_key, "AKFILE");
  cr_assert_str_eq(c.secret_key, "SKFILE");
  cr_assert_str_eq(c.session_token, "TKFILE");
  cr_assert_str_eq(c.creds_source, "profile");
  hcfg_free(&c);

  env_keys();
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.access_key, "AKENV");
  cr_assert_str_eq(c.secret_key, "SKENV");
  cr_assert_null(c.session_token, "the file's token is not mixed in");
  cr_assert_str_eq(c.creds_source, "environment");
  hcfg_free(&c);

  set_env("AWS_SESSION_TOKEN", "TKENV");
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.session_token, "TKENV");
  hcfg_free(&c);

  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.access_key_id = "AKCFG";
  cfg.secret_access_key = "SKCFG";
  resolve_ok(&cfg, &c);
  cr_assert_str_eq(c.access_key, "AKCFG");
  cr_assert_str_eq(c.secret_key, "SKCFG");
  cr_assert_null(c.session_token, "the environment's token is not mixed in");
  cr_assert_str_eq(c.creds_source, "config");
  hcfg_free(&c);
}

Test(config, half_a_key_pair_is_an_error) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.access_key_id = "AKCFG";
  const char *m = resolve_fail(&cfg, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "secret_access_key"), "%s", m);
  cr_assert(!strstr(m, "AKCFG"), "no key material in messages: %s", m);

  set_env("AWS_SECRET_ACCESS_KEY", "SKONLY");
  m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "AWS_ACCESS_KEY_ID"), "%s", m);
  cr_assert(!strstr(m, "SKONLY"), "%s", m);
  set_env("AWS_SECRET_ACCESS_KEY", NULL);

  write_file(creds_path, "[default]\naws_secret_access_key = TOPSECRET\n");
  m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "aws_access_key_id") && strstr(m, creds_path), "%s", m);
  cr_assert(!strstr(m, "TOPSECRET"), "%s", m);
}

Test(config, profile_from_config_file) {
  write_file(config_path, "[profile dev]\nregion = eu-north-1\n"
                          "endpoint_url = http://minio:9000\n"
                          "aws_access_key_id = AKCONF\n"
                          "aws_secret_access_key = SKCONF\n");
  set_env("AWS_PROFILE", "dev");
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.region, "eu-north-1");
  cr_assert_str_eq(c.endpoint_url, "http://minio:9000");
  cr_assert_str_eq(c.access_key, "AKCONF");
  cr_assert_str_eq(c.creds_source, "profile");
  hcfg_free(&c);
}

Test(config, credentials_file_beats_config_file) {
  write_file(creds_path,
             "[dev]\naws_access_key_id=AKCRED\naws_secret_access_key=SKCRED\n");
  write_file(config_path, "[profile dev]\naws_access_key_id = AKCONF\n"
                          "aws_secret_access_key = SKCONF\n");
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.profile = "dev";
  struct hcfg c;
  resolve_ok(&cfg, &c);
  cr_assert_str_eq(c.access_key, "AKCRED");
  cr_assert_str_eq(c.secret_key, "SKCRED");
  hcfg_free(&c);
}

Test(config, struct_profile_beats_aws_profile) {
  write_file(creds_path,
             "[a]\naws_access_key_id=AKA\naws_secret_access_key=SA\n"
             "[b]\naws_access_key_id=AKB\naws_secret_access_key=SB\n");
  set_env("AWS_PROFILE", "a");
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.access_key, "AKA");
  hcfg_free(&c);
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.profile = "b";
  resolve_ok(&cfg, &c);
  cr_assert_str_eq(c.access_key, "AKB");
  hcfg_free(&c);
}

Test(config, config_file_needs_profile_prefix) {
  /* In the config file a non-default profile is [profile NAME]; a bare
   * [dev] section there is not profile dev. */
  write_file(config_path, "[dev]\nregion = eu-west-1\n"
                          "[profile dev]\nregion = eu-west-2\n");
  env_keys();
  set_env("AWS_PROFILE", "dev");
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.region, "eu-west-2");
  hcfg_free(&c);
}

Test(config, default_profile_may_be_written_with_prefix) {
  write_file(config_path, "[profile default]\nregion = sa-east-1\n");
  env_keys();
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.region, "sa-east-1");
  hcfg_free(&c);
}

Test(config, missing_profile) {
  env_keys();
  write_file(creds_path, "[other]\naws_access_key_id=A\n");
  set_env("AWS_PROFILE", "nope");
  const char *m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "profile 'nope' not found"), "%s", m);
  cr_assert(strstr(m, creds_path) && strstr(m, config_path), "%s", m);

  set_env("AWS_PROFILE", NULL);
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.profile = "gone";
  m = resolve_fail(&cfg, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "profile 'gone' not found"), "%s", m);

  /* An explicit "default" must exist too; an implicit one need not. */
  set_env("AWS_PROFILE", "default");
  resolve_fail(NULL, HIPOBJ_E_CONFIG);
  set_env("AWS_PROFILE", NULL);
  struct hcfg c;
  resolve_ok(NULL, &c);
  hcfg_free(&c);
}

Test(config, profile_with_only_other_settings_exists) {
  write_file(config_path, "[profile p]\noutput = json\n");
  env_keys();
  set_env("AWS_PROFILE", "p");
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.creds_source, "environment");
  hcfg_free(&c);
}

Test(config, missing_credentials) {
  const char *m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "AWS_ACCESS_KEY_ID"), "%s", m);
  cr_assert(strstr(m, "AWS_SECRET_ACCESS_KEY"), "%s", m);
  cr_assert(strstr(m, creds_path), "%s", m);
  cr_assert(strstr(m, config_path), "%s", m);
  cr_assert(strstr(m, "'default'"), "%s", m);
}

Test(config, missing_credentials_without_home) {
  set_env("HOME", NULL);
  const char *m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "HOME is not set"), "%s", m);
}

Test(config, unsupported_credential_source_is_named) {
  write_file(config_path,
             "[profile sso]\ncredential_process = /bin/get-creds\n");
  set_env("AWS_PROFILE", "sso");
  const char *m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, "credential_process"), "%s", m);
  cr_assert(!strstr(m, "/bin/get-creds"), "%s", m);
}

Test(config, anonymous_needs_no_credentials) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.anonymous = 1;
  env_keys();
  struct hcfg c;
  resolve_ok(&cfg, &c);
  cr_assert_eq(c.anonymous, 1);
  cr_assert_null(c.access_key);
  cr_assert_null(c.secret_key);
  cr_assert_str_eq(c.creds_source, "anonymous");
  hcfg_free(&c);
}

Test(config, file_locations_from_environment) {
  char other_creds[400], other_config[400];
  snprintf(other_creds, sizeof other_creds, "%s/my-creds", home);
  snprintf(other_config, sizeof other_config, "%s/my-config", home);
  write_file(other_creds, "[x]\naws_access_key_id = AKX\n"
                          "aws_secret_access_key = SKX\n");
  write_file(other_config, "[profile x]\nregion = me-south-1\n");
  write_file(creds_path, "[x]\naws_access_key_id = WRONG\n"
                         "aws_secret_access_key = WRONG\n");
  set_env("AWS_SHARED_CREDENTIALS_FILE", other_creds);
  set_env("AWS_CONFIG_FILE", "~/my-config");
  set_env("AWS_PROFILE", "x");
  struct hcfg c;
  resolve_ok(NULL, &c);
  cr_assert_str_eq(c.access_key, "AKX");
  cr_assert_str_eq(c.region, "me-south-1");
  hcfg_free(&c);
}

Test(config, unreadable_file_is_reported) {
  env_keys();
  /* A directory where the config file should be: fopen works, reading
   * fails (EISDIR). */
  char dir[400];
  snprintf(dir, sizeof dir, "%s/dir-config", home);
  cr_assert_eq(mkdir(dir, 0700), 0);
  set_env("AWS_CONFIG_FILE", dir);
  const char *m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
  cr_assert(strstr(m, dir), "%s", m);
}

Test(config, null_getenv_uses_process_environment) {
  /* Only checks that it works; the process environment is not ours. */
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.anonymous = 1;
  cfg.endpoint_url = "http://x:1";
  cfg.region = "r1";
  struct hcfg c;
  struct hipobj_error e = {0};
  int rc = hcfg_resolve(&cfg, NULL, &c, &e);
  if (rc == HIPOBJ_OK)
    hcfg_free(&c);
  else
    cr_assert_eq(rc, HIPOBJ_E_CONFIG, "%s", e.message); /* e.g. AWS_PROFILE */
}

/* ---- INI dialect -------------------------------------------------------- */

static char *ini_path(const char *text) {
  static char path[400];
  snprintf(path, sizeof path, "%s/test.ini", home);
  write_file(path, text);
  return path;
}

static void expect(const char *path, const char *section, const char *key,
                   const char *want) {
  char *v = (char *)0x1;
  int rc = hcfg_ini_lookup(path, section, key, &v);
  if (!want) {
    cr_assert_eq(rc, 0, "[%s] %s", section, key);
    cr_assert_null(v);
    return;
  }
  cr_assert_eq(rc, 1, "[%s] %s", section, key);
  cr_assert_str_eq(v, want, "[%s] %s", section, key);
  free(v);
}

Test(ini, basics) {
  const char *p = ini_path("# comment\n"
                           "; another\n"
                           "top = outside\n"
                           "[a]\n"
                           "k1 = v1\n"
                           "k2=v2  \n"
                           "k3 =\t spaced value \n"
                           "empty =\n"
                           "#k4 = commented\n"
                           "url = http://h/?a=b\n"
                           "[ b ]\n"
                           "k1 = other\n");
  expect(p, "a", "k1", "v1");
  expect(p, "a", "k2", "v2");
  expect(p, "a", "k3", "spaced value");
  expect(p, "a", "empty", "");
  expect(p, "a", "k4", NULL);
  expect(p, "a", "url", "http://h/?a=b");
  expect(p, "b", "k1", "other");
  expect(p, "a", "top", NULL);
  expect(p, "c", "k1", NULL);
  expect(p, "a", "K1", NULL); /* case-sensitive */
  expect(p, "A", "k1", NULL);
}

Test(ini, crlf_and_no_final_newline) {
  const char *p = ini_path("[s]\r\nkey = value\r\nlast = end");
  expect(p, "s", "key", "value");
  expect(p, "s", "last", "end");
}

Test(ini, long_lines) {
  size_t n = 100000;
  char *text = malloc(n + 64);
  cr_assert_not_null(text);
  strcpy(text, "[s]\nbig = ");
  size_t at = strlen(text);
  memset(text + at, 'x', n);
  strcpy(text + at + n, "\nafter = 1\n");
  const char *p = ini_path(text);
  char *v = NULL;
  cr_assert_eq(hcfg_ini_lookup(p, "s", "big", &v), 1);
  cr_assert_eq(strlen(v), n);
  free(v);
  expect(p, "s", "after", "1");
  free(text);
}

Test(ini, nested_values_do_not_leak_out) {
  const char *p = ini_path("[profile x]\n"
                           "s3 =\n"
                           "  endpoint_url = http://nested\n"
                           "  max_concurrent_requests = 20\n"
                           "region = r\n");
  expect(p, "profile x", "endpoint_url", NULL);
  expect(p, "profile x", "region", "r");
  expect(p, "profile x", "s3", "");
}

Test(ini, evenly_indented_keys_count) {
  const char *p = ini_path("[s]\n  key = v\n  other = w\n\tthird = x\n");
  expect(p, "s", "key", "v");
  expect(p, "s", "other", "w");
  expect(p, "s", "third", "x");
}

Test(ini, deeper_indent_continues_the_value) {
  const char *p = ini_path("[s]\nkey = v\n  hidden = h\n\n    too = t\n"
                           "next = n\n");
  expect(p, "s", "hidden", NULL);
  expect(p, "s", "too", NULL);
  expect(p, "s", "next", "n");
}

Test(ini, section_whitespace_and_last_duplicate_wins) {
  const char *p = ini_path("[profile   dev]\nk = 1\n[profile dev]\nk = 2\n");
  expect(p, "profile dev", "k", "2");
}

Test(ini, bom_and_malformed_header) {
  const char *p = ini_path("\xEF\xBB\xBF[s]\nk = v\n[broken\nk = w\n");
  expect(p, "s", "k", "v");
}

Test(ini, section_existence) {
  const char *p = ini_path("[s]\n");
  cr_assert_eq(hcfg_ini_lookup(p, "s", NULL, NULL), 1);
  cr_assert_eq(hcfg_ini_lookup(p, "t", NULL, NULL), 0);
}

Test(ini, missing_file_and_errors) {
  char path[400];
  snprintf(path, sizeof path, "%s/absent", home);
  expect(path, "s", "k", NULL);
  snprintf(path, sizeof path, "%s/absent/deeper", home);
  expect(path, "s", "k", NULL);
  char *v = NULL;
  cr_assert_eq(hcfg_ini_lookup(home, "s", "k", &v), -1, "a directory");
  cr_assert_null(v);
  cr_assert_eq(hcfg_ini_lookup(NULL, "s", "k", &v), 0);
}
