/* test_config_struct.c - unit tests of how hcfg_resolve() takes a caller's
 * struct hipobj_client_config of another version of the header (the
 * struct_size rule of include/hipobj.h, src/hstruct.h): an older, smaller
 * struct, struct_size 0, a newer, larger one. Kept apart from
 * test_config.c, which is long enough. The environment is a fake getenv
 * over a table; HOME names a directory that does not exist, so no AWS
 * file is read. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "src/base/error.h"
#include "src/config.h"

#define MIB (1ull << 20)

#define MAX_ENV 8
static const char *env_names[MAX_ENV];
static const char *env_values[MAX_ENV];
static size_t env_count;

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

static void setup(void) {
  env_count = 0;
  set_env("HOME", "/nonexistent/hipobj-test-config-struct");
}

TestSuite(config_struct, .init = setup);

static void env_keys(void) {
  set_env("AWS_ACCESS_KEY_ID", "AKENV");
  set_env("AWS_SECRET_ACCESS_KEY", "SKENV");
}

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

/* Two parts in flight per I/O thread, 8 to the 16 default connections. */
static unsigned default_concurrency(unsigned io_threads) {
  unsigned n = 2 * io_threads;
  return n < 8 ? 8 : n > 16 ? 16 : n;
}

Test(config_struct, small_struct_size_ignores_later_fields) {
  struct hipobj_client_config cfg;
  memset(&cfg, 0xA5, sizeof cfg); /* garbage past struct_size */
  cfg.struct_size = offsetof(struct hipobj_client_config, anonymous);
  cfg.endpoint_url = "http://old:1";
  cfg.region = NULL;
  cfg.access_key_id = "AK";
  cfg.secret_access_key = "SK";
  cfg.session_token = NULL;
  cfg.profile = NULL;
  struct hcfg c;
  resolve_ok(&cfg, &c);
  cr_assert_str_eq(c.endpoint_url, "http://old:1");
  cr_assert_eq(c.anonymous, 0);
  cr_assert_eq(c.addressing, HIPOBJ_ADDRESSING_AUTO);
  cr_assert_eq(c.part_size, 8 * MIB);
  cr_assert_eq(c.concurrency, default_concurrency(c.io_threads));
  cr_assert_null(c.ca_bundle);
  hcfg_free(&c);

  /* Ending after concurrency: the fields up to it are read, part_size
   * (garbage) is not. */
  cfg.struct_size = offsetof(struct hipobj_client_config, concurrency) +
                    sizeof cfg.concurrency;
  cfg.anonymous = 0;
  cfg.addressing = HIPOBJ_ADDRESSING_PATH;
  cfg.tls_skip_verify = 0;
  cfg.ca_bundle = NULL;
  cfg.concurrency = 3;
  resolve_ok(&cfg, &c);
  cr_assert_eq(c.concurrency, 3);
  cr_assert_eq(c.addressing, HIPOBJ_ADDRESSING_PATH);
  cr_assert_eq(c.part_size, 8 * MIB);
  hcfg_free(&c);
}

Test(config_struct, zero_struct_size_is_rejected) {
  env_keys();
  struct hipobj_client_config cfg;
  memset(&cfg, 0, sizeof cfg);
  const char *m = resolve_fail(&cfg, HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert(strstr(m, "HIPOBJ_CLIENT_CONFIG_INIT"), "%s", m);
}

Test(config_struct, larger_struct_size_is_accepted) {
  env_keys();
  /* A newer caller's struct: fields this library does not know, unset. */
  struct {
    struct hipobj_client_config cfg;
    unsigned char newer[64];
  } big;
  memset(&big, 0, sizeof big);
  big.cfg.struct_size = sizeof big;
  struct hcfg c;
  resolve_ok(&big.cfg, &c);
  hcfg_free(&c);
  /* One of them set: the library would ignore it, so it refuses. */
  big.newer[63] = 1;
  const char *m = resolve_fail(&big.cfg, HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert(strstr(m, "struct hipobj_client_config"), "%s", m);
}
