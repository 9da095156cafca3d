/* test_rdma_api.c - the public RDMA calls of rdma_api.c.
 *
 * Suite rdma_api_unit (no device, 'unit' in meson): the x-amz-rdma-reply
 * interpretation of hipobj_rdma_parse_reply() (wire spec §7.2), the
 * argument checks of hipobj_buffer_register / _deregister /
 * hipobj_rdma_token on a client without RDMA, and the argument checks of
 * the DC target (rdma/dc.c as the library was built: -Ddc).
 *
 * Suite rdma_api_verbs (real verbs, Soft-RoCE in the guest; 'rdma' in
 * tests/rxe/meson.build): a registered buffer serves GETs and PUTs of its
 * sub-ranges against hipobj-server --rdma auto without any new verbs MR
 * (the live MR count, sampled by a thread during the transfers, never
 * rises), deregistering and destroying the client free every MR, token
 * minting is refused on Soft-RoCE with the cause (rxe is not mlx5, or the
 * build has no DC) and leaves no QP, DCT or MR behind, and the reply
 * parser reads hipobj-server's answer to a single-request-mode GET (501).
 * No test creates a DCT: that needs a ConnectX device, which this project
 * does not have. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/harness.h"
#include "rdma/dc.h"
#include "rdma/mr.h"
#include "src/base/error.h"

static struct hipobj_error *err;

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

/* ---- unit --------------------------------------------------------------- */

static void unit_init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
}

static void unit_fini(void) {
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(rdma_api_unit, .init = unit_init, .fini = unit_fini, .timeout = 60);

static int parse(const char *v, int *code) {
  *code = -1;
  return hipobj_rdma_parse_reply(v, code, err);
}

Test(rdma_api_unit, reply_success_forms) {
  const struct {
    const char *v;
    int code;
  } ok[] = {{"200", 200}, {"204", 204}, {"206", 206}, {" 206\t", 206},
            {"ok", 200},  {"OK", 200},  {"Ok", 200}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    int code;
    cr_assert_eq(parse(ok[i].v, &code), HIPOBJ_OK, "'%s': %s", ok[i].v,
                 hipobj_error_message(err));
    cr_assert_eq(code, ok[i].code, "'%s'", ok[i].v);
  }
  /* A PREPARE-style reply with a token is a success too (§7.2 [HO-tok]). */
  char v[4 + 88 + 1] = "200:01";
  for (int i = 6; i < 92; i++) /* QPN, GID, ... all non-zero */
    v[i] = 'a';
  v[92] = '\0';
  int code;
  cr_assert_eq(parse(v, &code), HIPOBJ_OK, "%s", hipobj_error_message(err));
  cr_assert_eq(code, 200);
  cr_assert_eq(hipobj_rdma_parse_reply("204", NULL, err), HIPOBJ_OK);
}

Test(rdma_api_unit, only_501_is_a_decline) {
  int code;
  cr_assert_eq(parse("501", &code), HIPOBJ_E_UNSUPPORTED);
  cr_assert_eq(code, 501);
  cr_assert(strstr(hipobj_error_message(err), "declined"), "%s",
            hipobj_error_message(err));
  /* Legacy "err": a failure, not a decline. */
  cr_assert_eq(parse("err", &code), HIPOBJ_E_SERVER_ERROR);
  cr_assert_eq(code, 0);
  cr_assert_eq(parse("ERR", &code), HIPOBJ_E_SERVER_ERROR);
  /* Absent: RDMA was not used; not a decline. */
  cr_assert_eq(parse(NULL, &code), HIPOBJ_E_PROTOCOL);
  cr_assert_eq(code, 0);
  cr_assert(strstr(hipobj_error_message(err), "not a decline"), "%s",
            hipobj_error_message(err));
  cr_assert_eq(parse("", &code), HIPOBJ_E_PROTOCOL);
  cr_assert_eq(parse("  ", &code), HIPOBJ_E_PROTOCOL);
}

Test(rdma_api_unit, malformed_replies_fail) {
  const char *bad[] = {"500",   "404",   "2000",  "20",      "ok ok",
                       "200:",  "200:x", "okay",  "501 Not", "200;",
                       "0x200", "-200",  "200:0", "decline", "\x01"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int code;
    cr_assert_eq(parse(bad[i], &code), HIPOBJ_E_PROTOCOL, "'%s'", bad[i]);
    cr_assert_eq(code, 0, "'%s'", bad[i]);
  }
  /* The all-zero token is not a success (§8 item 12). */
  char v[4 + 88 + 1] = "200:";
  memset(v + 4, '0', 88);
  v[92] = '\0';
  int code;
  cr_assert_eq(parse(v, &code), HIPOBJ_E_PROTOCOL);
}

Test(rdma_api_unit, registration_arguments_without_rdma) {
  setenv("HIPOBJ_RDMA", "off", 1);
  struct hipobj_client *c = mk_client("http://127.0.0.1:9", NULL, NULL, 1);
  char buf[4096];
  struct hipobj_mem m = hipobj_mem_host(buf, sizeof buf);
  cr_assert_eq(hipobj_buffer_register(NULL, &m, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_eq(hipobj_buffer_register(c, NULL, err), HIPOBJ_E_INVALID_ARGUMENT);
  struct hipobj_mem empty = hipobj_mem_host(buf, 0);
  cr_assert_eq(hipobj_buffer_register(c, &empty, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  struct hipobj_mem gpu = hipobj_mem_gpu(HIPOBJ_MEM_CUDA, 0, buf, sizeof buf);
  cr_assert_eq(hipobj_buffer_register(c, &gpu, err), HIPOBJ_E_UNSUPPORTED);
  /* No RDMA: unsupported, with the reason. */
  cr_assert_eq(hipobj_buffer_register(c, &m, err), HIPOBJ_E_UNSUPPORTED);
  cr_assert(strstr(hipobj_error_message(err), "no RDMA"), "%s",
            hipobj_error_message(err));
  cr_assert_eq(hipobj_buffer_deregister(c, &m, err), HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert(strstr(hipobj_error_message(err), "not a registered"), "%s",
            hipobj_error_message(err));
  char tok[128] = "x";
  /* No RDMA: the cause, not "unregistered" (nothing could register). */
  cr_assert_eq(hipobj_rdma_token(c, &m, tok, sizeof tok, err),
               HIPOBJ_E_UNSUPPORTED);
  cr_assert(strstr(hipobj_error_message(err),
                   rdma_dc_built() ? "no RDMA" : "built without DC support"),
            "%s", hipobj_error_message(err));
  cr_assert_str_eq(tok, "");
  /* A descriptor's size field is 32 bits (checked before any lookup). */
  struct hipobj_mem huge = hipobj_mem_host(buf, (size_t)1 << 32);
  strcpy(tok, "x");
  cr_assert_eq(hipobj_rdma_token(c, &huge, tok, sizeof tok, err),
               rdma_dc_built() ? HIPOBJ_E_INVALID_ARGUMENT
                               : HIPOBJ_E_UNSUPPORTED);
  if (rdma_dc_built())
    cr_assert(strstr(hipobj_error_message(err), "4 GiB - 1"), "%s",
              hipobj_error_message(err));
  cr_assert_str_eq(tok, "");
  cr_assert_eq(hipobj_rdma_token(c, &m, tok, 81, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_eq(hipobj_rdma_token(c, &m, NULL, 0, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  hipobj_client_free(c);
  unsetenv("HIPOBJ_RDMA");
}

/* The DC target's entry points as linked into the library: with DC built,
 * the argument checks (no device needed); without, the refusal. */
Test(rdma_api_unit, dc_target_entry_points) {
  struct hipobj_error e;
  memset(&e, 0, sizeof e);
  char buf[64];
  struct rdma_dc_target *t = (struct rdma_dc_target *)buf;
  int rc = rdma_dc_target_create(NULL, NULL, buf, sizeof buf, &t, &e);
  cr_assert_null(t);
  if (rdma_dc_built()) {
    cr_assert_eq(rc, HIPOBJ_E_INVALID_ARGUMENT, "%s", e.message);
    struct rdma_dc_desc d;
    cr_assert_eq(rdma_dc_target_describe(NULL, buf, 1, &d, &e),
                 HIPOBJ_E_INVALID_ARGUMENT);
  } else {
    cr_assert_eq(rc, HIPOBJ_E_UNSUPPORTED);
    cr_assert(strstr(e.message, "built without DC support"), "%s", e.message);
  }
  cr_assert_eq(rdma_dc_target_destroy(NULL), 0);
  cr_assert_eq(rdma_dc_live_count(), 0);
}

/* ---- verbs ---------------------------------------------------------------
 */

static struct server_proc srv;
static struct hipobj_client *cli;

static void verbs_fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  unit_fini();
}

TestSuite(rdma_api_verbs, .init = unit_init, .fini = verbs_fini,
          .timeout = 300);

static void start(void) {
  const char *extra[] = {"--rdma", "auto", NULL};
  srv_start(&srv, NULL, extra);
  cli = mk_client(srv.url, NULL, NULL, 4);
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
}

/* Samples the live MR count while transfers run. */
struct sampler {
  pthread_t t;
  atomic_int stop;
  long max;
};

static void *sample_main(void *arg) {
  struct sampler *s = arg;
  while (!atomic_load(&s->stop)) {
    long v = rdma_mr_live_count();
    if (v > s->max)
      s->max = v;
    sched_yield();
  }
  return NULL;
}

static void sampler_start(struct sampler *s) {
  atomic_store(&s->stop, 0);
  s->max = rdma_mr_live_count();
  pthread_create(&s->t, NULL, sample_main, s);
}

static long sampler_stop(struct sampler *s) {
  atomic_store(&s->stop, 1);
  pthread_join(s->t, NULL);
  return s->max;
}

static void put_rdma(const char *key, void *p, size_t n) {
  struct hipobj_mem src = hipobj_mem_host(p, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, key, &src, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT, "%s: path %s", key,
               hipobj_data_path_name(res.path));
  cr_assert_eq(res.rdma_bytes, n);
}

static void get_rdma(const char *key, uint64_t off, void *p, size_t n) {
  struct hipobj_mem dst = hipobj_mem_host(p, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.has_range = 1;
  o.offset = off;
  o.length = n;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, key, &dst, &o, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT, "%s: path %s", key,
               hipobj_data_path_name(res.path));
  cr_assert_eq(res.bytes, n);
  cr_assert_eq(res.rdma_bytes, n);
}

Test(rdma_api_verbs, registered_buffer_is_reused_and_freed) {
  start();
  size_t n = 1u << 20;
  char *data = malloc(n);
  fill_pattern(data, n, 11);
  put_rdma("src", data, n); /* creates the engine; its MR is gone again */
  long base = rdma_mr_live_count();

  size_t bn = 2u << 20;
  char *buf = malloc(bn);
  memset(buf, 0, bn);
  struct hipobj_mem whole = hipobj_mem_host(buf, bn);
  OK(hipobj_buffer_register(cli, &whole, err));
  long reg = rdma_mr_live_count();
  cr_assert_gt(reg, base, "registering made no MR");
  cr_assert_eq(hipobj_buffer_register(cli, &whole, err),
               HIPOBJ_E_INVALID_ARGUMENT, "double registration accepted");

  /* 5 GETs of sub-ranges into disjoint sub-ranges of buf (the last two
   * share only buf's last byte, equal in both), then 5 PUTs from them. */
  struct sampler s;
  sampler_start(&s);
  const struct {
    size_t at;    /* in buf */
    uint64_t off; /* in the object */
    size_t len;
  } r[5] = {{0, 0, 4096},
            {4096, 12345, 100000},
            {bn - 1, n - 1, 1},
            {500000, 7, 300000},
            {bn - (1u << 20), 0, 1u << 20}};
  for (int i = 0; i < 5; i++) {
    get_rdma("src", r[i].off, buf + r[i].at, r[i].len);
    cr_assert_eq(memcmp(buf + r[i].at, data + r[i].off, r[i].len), 0, "GET %d",
                 i);
    cr_assert_eq(rdma_mr_live_count(), reg, "GET %d", i);
  }
  for (int i = 0; i < 5; i++) {
    char key[16];
    snprintf(key, sizeof key, "part-%d", i);
    put_rdma(key, buf + r[i].at, r[i].len);
    cr_assert_eq(rdma_mr_live_count(), reg, "PUT %d", i);
  }
  long peak = sampler_stop(&s);
  cr_assert_eq(peak, reg,
               "a transfer registered again: %ld MRs, %ld "
               "expected",
               peak, reg);
  /* What the PUTs stored, read back into unregistered memory. */
  char *back = malloc(n);
  for (int i = 0; i < 5; i++) {
    char key[16];
    snprintf(key, sizeof key, "part-%d", i);
    get_rdma(key, 0, back, r[i].len);
    cr_assert_eq(memcmp(back, data + r[i].off, r[i].len), 0, "part %d", i);
  }

  /* Control: the same transfer from unregistered memory registers it. */
  sampler_start(&s);
  get_rdma("src", 0, back, n);
  peak = sampler_stop(&s);
  cr_expect_gt(peak, reg, "per-transfer registration not seen");
  cr_assert_eq(rdma_mr_live_count(), reg);

  /* Deregistering: an unknown or partial range is refused; the exact one
   * frees its MRs. */
  struct hipobj_mem part = hipobj_mem_host(buf, 4096);
  cr_assert_eq(hipobj_buffer_deregister(cli, &part, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  OK(hipobj_buffer_deregister(cli, &whole, err));
  cr_assert_eq(rdma_mr_live_count(), base);
  cr_assert_eq(hipobj_buffer_deregister(cli, &whole, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  /* After deregistration the transfer still works (its own MR). */
  get_rdma("src", 0, buf, n);
  cr_assert_eq(memcmp(buf, data, n), 0);
  cr_assert_eq(rdma_mr_live_count(), base);

  /* A registration left at destroy is freed with the client. */
  OK(hipobj_buffer_register(cli, &whole, err));
  cr_assert_eq(rdma_mr_live_count(), reg);
  hipobj_client_free(cli);
  cli = NULL;
  cr_assert_eq(rdma_mr_live_count(), 0, "MRs leaked: %ld",
               rdma_mr_live_count());
  free(back);
  free(buf);
  free(data);
}

Test(rdma_api_verbs, token_minting_refused_off_mlx5) {
  start();
  size_t n = 64 * 1024;
  char *buf = malloc(n);
  struct hipobj_mem m = hipobj_mem_host(buf, n);
  char tok[128] = "x";
  /* Not registered yet: without DC that is not the cause worth naming. */
  cr_assert_eq(hipobj_rdma_token(cli, &m, tok, sizeof tok, err),
               rdma_dc_built() ? HIPOBJ_E_INVALID_ARGUMENT
                               : HIPOBJ_E_UNSUPPORTED,
               "%s", hipobj_error_message(err));
  OK(hipobj_buffer_register(cli, &m, err));
  long mrs = rdma_mr_live_count(), qps = rdma_qp_live_count();
  struct hipobj_mem sub = hipobj_mem_host(buf + 100, 1000);
  /* Twice: a refused first attempt leaves nothing that changes the next. */
  for (int i = 0; i < 2; i++) {
    strcpy(tok, "x");
    cr_assert_eq(hipobj_rdma_token(cli, &sub, tok, sizeof tok, err),
                 HIPOBJ_E_UNSUPPORTED);
    const char *msg = hipobj_error_message(err);
    if (rdma_dc_built()) {
      /* Soft-RoCE is not mlx5: the refusal names the device. */
      cr_assert(strstr(msg, "is not an mlx5"), "%s", msg);
      const char *dev = getenv("RXE_DEV");
      if (dev && *dev)
        cr_assert(strstr(msg, dev), "'%s' does not name %s", msg, dev);
    } else {
      cr_assert(strstr(msg, "built without DC support"), "%s", msg);
    }
    cr_assert_str_eq(tok, "");
    /* No DCT, QP or MR left behind by the refusal. */
    cr_assert_eq(rdma_dc_live_count(), 0);
    cr_assert_eq(rdma_qp_live_count(), qps);
    cr_assert_eq(rdma_mr_live_count(), mrs, "MRs %ld, %ld before",
                 rdma_mr_live_count(), mrs);
  }
  OK(hipobj_buffer_deregister(cli, &m, err));
  cr_assert_eq(rdma_mr_live_count(), 0);

  /* Single-request mode with the application's own HTTP client and a
   * descriptor (spec vector DC-1): hipobj-server declines (501); the
   * parser reports exactly that, and the GET's body holds the object. */
  fill_pattern(buf, 1000, 5);
  put_rdma("sr", buf, 1000);
  const char *hdrs[] = {"x-amz-rdma-token: 00007f1234560000:00400000:01f2e973:"
                        "0000:007a03:1:00000000000000000000ffff0a000005",
                        NULL};
  struct http_resp r;
  struct sreq q = {.method = "GET", .target = "/" T_BUCKET "/sr", .hdrs = hdrs};
  cr_assert_eq(http_send(srv.url, &q, &r), 0, "cannot connect");
  cr_assert_eq(r.status, 200);
  char v[64];
  int code;
  cr_assert_eq(hipobj_rdma_parse_reply(
                   resp_hdr(&r, "x-amz-rdma-reply", v, sizeof v), &code, err),
               HIPOBJ_E_UNSUPPORTED, "%s", hipobj_error_message(err));
  cr_assert_eq(code, 501);
  cr_assert_eq(r.len, 1000);
  cr_assert_eq(memcmp(r.body, buf, 1000), 0);
  resp_free(&r);
  free(buf);
}
