/* test_config_stall.c - unit tests of the stall detection settings in
 * config.c: low_speed_bytes_per_s (default, HIPOBJ_LOW_SPEED, limits, a
 * caller's struct from before the field) next to stall_timeout_ms and
 * request_timeout_ms, the GET checksum mode and busy_poll_us. Kept apart from
 * test_config.c, which is long enough.
 * The environment is a fake getenv over a table; HOME names a directory
 * that does not exist, so no AWS file is read. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "src/base/error.h"
#include "src/config.h"

#define MAX_ENV 16
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
  set_env("HOME", "/nonexistent/hipobj-test-config-stall");
  set_env("AWS_ACCESS_KEY_ID", "AKENV");
  set_env("AWS_SECRET_ACCESS_KEY", "SKENV");
}

TestSuite(config_stall, .init = setup);

/* The resolved low speed; fails the test when resolving fails. */
/* Resolves with the fake environment, which must succeed. */
static void resolve_ok(const struct hipobj_client_config *cfg,
                       struct hcfg *out) {
  struct hipobj_error e = {0};
  int rc = hcfg_resolve(cfg, fake_getenv, out, &e);
  cr_assert_eq(rc, HIPOBJ_OK, "rc %d: %s", rc, e.message);
}

static unsigned low_speed(const struct hipobj_client_config *cfg) {
  struct hcfg c;
  resolve_ok(cfg, &c);
  unsigned v = c.low_speed_bytes_per_s;
  hcfg_free(&c);
  return v;
}

/* Resolving fails with status; returns the message. */
static const char *resolve_fail(const struct hipobj_client_config *cfg,
                                int status) {
  static struct hipobj_error e;
  memset(&e, 0, sizeof e);
  struct hcfg c;
  int rc = hcfg_resolve(cfg, fake_getenv, &c, &e);
  cr_assert_eq(rc, status, "rc %d (want %d): %s", rc, status, e.message);
  return e.message;
}

Test(config_stall, defaults) {
  struct hcfg c;
  struct hipobj_error e = {0};
  cr_assert_eq(hcfg_resolve(NULL, fake_getenv, &c, &e), HIPOBJ_OK, "%s",
               e.message);
  cr_assert_eq(c.low_speed_bytes_per_s, 1024);
  cr_assert_eq(c.stall_timeout_ms, 30000);
  cr_assert_eq(c.request_timeout_ms, 0, "no whole-request deadline");
  hcfg_free(&c);
}

Test(config_stall, field_wins_over_the_environment) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.low_speed_bytes_per_s = 1;
  set_env("HIPOBJ_LOW_SPEED", "4096");
  cr_assert_eq(low_speed(&cfg), 1);
  cr_assert_eq(low_speed(NULL), 4096);
  /* A size, as elsewhere in the configuration. */
  set_env("HIPOBJ_LOW_SPEED", "64KiB");
  cr_assert_eq(low_speed(NULL), 64 * 1024);
  set_env("HIPOBJ_LOW_SPEED", "");
  cr_assert_eq(low_speed(NULL), 1024, "empty counts as unset");
}

Test(config_stall, limits) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.low_speed_bytes_per_s = 1u << 30;
  cr_assert_eq(low_speed(&cfg), 1u << 30);
  cfg.low_speed_bytes_per_s = (1u << 30) + 1;
  const char *m = resolve_fail(&cfg, HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert(strstr(m, "low_speed_bytes_per_s 1073741825"), "%s", m);
  static const char *const bad[] = {"0", "-5", "fast", "2GiB", "1.5"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    set_env("HIPOBJ_LOW_SPEED", bad[i]);
    m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
    char want[64];
    snprintf(want, sizeof want, "HIPOBJ_LOW_SPEED='%s'", bad[i]);
    cr_assert(strstr(m, want), "%s", m);
  }
}

Test(config_stall, a_struct_from_before_the_field_gets_the_default) {
  /* A caller built against a header without the field: struct_size stops
   * before it, and whatever follows in memory is not read. */
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.struct_size =
      offsetof(struct hipobj_client_config, low_speed_bytes_per_s);
  cfg.low_speed_bytes_per_s = 7;
  cr_assert_eq(low_speed(&cfg), 1024);
  cfg.struct_size = sizeof cfg;
  cr_assert_eq(low_speed(&cfg), 7);
}

/* GET checksum verification (checksum_mode): on by default, off through
 * HIPOBJ_CHECKSUM_MODE, the field winning, nonsense refused naming it. */
static int checksum_mode(const struct hipobj_client_config *cfg) {
  struct hcfg c;
  resolve_ok(cfg, &c);
  int v = c.checksum_mode;
  hcfg_free(&c);
  return v;
}

Test(config_stall, checksum_mode) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cr_expect_eq(checksum_mode(NULL), HIPOBJ_CHECKSUM_MODE_VERIFY);
  set_env("HIPOBJ_CHECKSUM_MODE", "off");
  cr_expect_eq(checksum_mode(NULL), HIPOBJ_CHECKSUM_MODE_OFF);
  cfg.checksum_mode = HIPOBJ_CHECKSUM_MODE_VERIFY;
  cr_expect_eq(checksum_mode(&cfg), HIPOBJ_CHECKSUM_MODE_VERIFY);
  set_env("HIPOBJ_CHECKSUM_MODE", "VERIFY");
  cr_expect_eq(checksum_mode(NULL), HIPOBJ_CHECKSUM_MODE_VERIFY);
  set_env("HIPOBJ_CHECKSUM_MODE", "sometimes");
  cr_expect(strstr(resolve_fail(NULL, HIPOBJ_E_CONFIG),
                   "HIPOBJ_CHECKSUM_MODE='sometimes'") != NULL);
  set_env("HIPOBJ_CHECKSUM_MODE", "");
  cfg.checksum_mode = 3;
  cr_expect(strstr(resolve_fail(&cfg, HIPOBJ_E_INVALID_ARGUMENT),
                   "checksum_mode 3") != NULL);
}

/* busy_poll_us: 100 us by default, HIPOBJ_BUSY_POLL_US (0 or "off":
 * never), the field winning (negative: never), above 1000 refused. */
static unsigned busy_poll(const struct hipobj_client_config *cfg) {
  struct hcfg c;
  resolve_ok(cfg, &c);
  unsigned v = c.busy_poll_us;
  hcfg_free(&c);
  return v;
}

Test(config_stall, busy_poll_us) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cr_expect_eq(busy_poll(NULL), 100);
  set_env("HIPOBJ_BUSY_POLL_US", "250");
  cr_expect_eq(busy_poll(NULL), 250);
  set_env("HIPOBJ_BUSY_POLL_US", "off");
  cr_expect_eq(busy_poll(NULL), 0);
  set_env("HIPOBJ_BUSY_POLL_US", "0");
  cr_expect_eq(busy_poll(NULL), 0);
  cfg.busy_poll_us = 30;
  cr_expect_eq(busy_poll(&cfg), 30, "the field wins");
  cfg.busy_poll_us = -1;
  set_env("HIPOBJ_BUSY_POLL_US", "");
  cr_expect_eq(busy_poll(&cfg), 0, "negative: never");
  cfg.busy_poll_us = 1000;
  cr_expect_eq(busy_poll(&cfg), 1000);
  cfg.busy_poll_us = 1001;
  cr_expect(strstr(resolve_fail(&cfg, HIPOBJ_E_INVALID_ARGUMENT),
                   "busy_poll_us 1001") != NULL);
  static const char *const bad[] = {"-1", "1001", "soon", "5us", " "};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    set_env("HIPOBJ_BUSY_POLL_US", bad[i]);
    const char *m = resolve_fail(NULL, HIPOBJ_E_CONFIG);
    char want[64];
    snprintf(want, sizeof want, "HIPOBJ_BUSY_POLL_US='%s'", bad[i]);
    cr_expect(strstr(m, want), "%s", m);
  }
  /* A caller's struct from before the field: the default. */
  set_env("HIPOBJ_BUSY_POLL_US", "");
  cfg.busy_poll_us = 7;
  cfg.struct_size = offsetof(struct hipobj_client_config, busy_poll_us);
  cr_expect_eq(busy_poll(&cfg), 100);
}

/* The wire path for small GETs: on by default, HIPOBJ_HTTP_WIRE 0/off and
 * 1/on, off whenever a proxy variable is set (libcurl then sends the
 * request, through the proxy), anything else refused. */
static int http_wire(void) {
  struct hcfg c;
  resolve_ok(NULL, &c);
  int v = c.http_wire;
  hcfg_free(&c);
  return v;
}

Test(config_stall, http_wire) {
  cr_expect_eq(http_wire(), 1);
  set_env("HIPOBJ_HTTP_WIRE", "0");
  cr_expect_eq(http_wire(), 0);
  set_env("HIPOBJ_HTTP_WIRE", "off");
  cr_expect_eq(http_wire(), 0);
  set_env("HIPOBJ_HTTP_WIRE", "on");
  cr_expect_eq(http_wire(), 1);
  set_env("HIPOBJ_HTTP_WIRE", "1");
  cr_expect_eq(http_wire(), 1);
  static const char *const proxies[] = {"http_proxy",  "HTTP_PROXY",
                                        "https_proxy", "HTTPS_PROXY",
                                        "all_proxy",   "ALL_PROXY"};
  for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++) {
    set_env(proxies[i], "http://proxy.example:3128");
    cr_expect_eq(http_wire(), 0, "%s set", proxies[i]);
    set_env(proxies[i], "");
  }
  cr_expect_eq(http_wire(), 1);
  set_env("HIPOBJ_HTTP_WIRE", "yes");
  cr_expect(strstr(resolve_fail(NULL, HIPOBJ_E_CONFIG),
                   "HIPOBJ_HTTP_WIRE='yes' is not 0, 1, off or on") != NULL);
  set_env("HIPOBJ_HTTP_WIRE", "");
}
