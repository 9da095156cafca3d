/* test_struct_size.c - the struct_size rule of include/hipobj.h through the
 * public shared library, against hipobj-server: programs built against an
 * older header (structs holding only struct_size) get the defaults and have
 * results written only within their structs; programs built against a
 * newer header (larger structs) are served when the fields this library
 * does not know are unset, and refused, naming the struct, when one is set;
 * a struct_size of 0 names the struct's initialiser.
 *
 * "Garbage" below is 0xA5 in every byte past struct_size: a library that
 * read an option past struct_size would take a wild pointer (a crash) or
 * an absurd number (a failed call); one that wrote a result past it would
 * change a guard byte. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define GARBAGE 0xA5

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

TestSuite(struct_size, .init = setup, .fini = teardown, .timeout = 120);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

/* Expects HIPOBJ_E_INVALID_ARGUMENT with `part` in the message. */
#define REFUSED(expr, part)                                                    \
  do {                                                                         \
    int rc_ = (expr);                                                          \
    cr_assert_eq(rc_, HIPOBJ_E_INVALID_ARGUMENT, "%s: %d %s", #expr, rc_,      \
                 hipobj_error_message(err));                                   \
    cr_assert(strstr(hipobj_error_message(err), (part)), "%s: %s", #expr,      \
              hipobj_error_message(err));                                      \
  } while (0)

/* Room for any public struct plus guard bytes, aligned for all of them. */
union block {
  max_align_t align;
  unsigned char b[2048];
};

/* A struct as the oldest program passes it: struct_size = sizeof(size_t),
 * garbage after. */
static void *oldest(union block *blk) {
  memset(blk, GARBAGE, sizeof *blk);
  size_t n = sizeof n;
  memcpy(blk->b, &n, sizeof n);
  return blk->b;
}

/* A result struct of `size` bytes with guard bytes after it. */
static void *guarded(union block *blk, size_t size) {
  memset(blk, GARBAGE, sizeof *blk);
  memcpy(blk->b, &size, sizeof size);
  return blk->b;
}

/* Asserts that every byte of blk from `from` on is still garbage. */
static void guard_intact(const union block *blk, size_t from) {
  for (size_t i = from; i < sizeof blk->b; i++)
    cr_assert_eq(blk->b[i], GARBAGE, "byte %zu past struct_size %zu written",
                 i - from, from);
}

static void done_cb(struct hipobj_xfer *x, int status, void *user) {
  (void)x, (void)status, (void)user;
}

Test(struct_size, options_holding_only_struct_size_take_the_defaults) {
  /* 11 MiB: three parts of the client's 5 MiB, both ways; garbage as
   * part_size (past 5 GiB) would be refused, as has_range or if_match a
   * wild range or pointer. */
  size_t n = (11u << 20) + 123;
  char *data = malloc(n), *back = malloc(n);
  cr_assert(data && back);
  fill_pattern(data, n, 7);
  union block ob, gb, lb, xb;
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "old/k", &src, oldest(&ob), &res, err));
  cr_assert_eq(res.bytes, n);
  cr_assert_eq(res.parts, 3, "parts: %u", res.parts);

  /* The same as no options at all. */
  struct hipobj_xfer_result nres = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "null/k", &src, NULL, &nres, err));
  cr_assert_str_eq(res.etag, nres.etag);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT, ninfo = info;
  OK(hipobj_s3_head(cli, T_BUCKET, "old/k", &info, err));
  OK(hipobj_s3_head(cli, T_BUCKET, "null/k", &ninfo, err));
  cr_assert_str_eq(info.content_type, ninfo.content_type);

  struct hipobj_mem dst = hipobj_mem_host(back, n);
  OK(hipobj_s3_get(cli, T_BUCKET, "old/k", &dst, oldest(&gb), &res, err));
  cr_assert_eq(res.bytes, n);
  cr_assert_eq(res.object_size, n);
  cr_assert_eq(res.parts, 3, "parts: %u", res.parts);
  cr_assert_eq(memcmp(back, data, n), 0);

  /* The asynchronous form: a garbage callback would crash when called. */
  memset(back, 0, n);
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "old/k", &dst, oldest(&gb), oldest(&xb),
                         &x, err));
  OK(hipobj_xfer_wait(x, &res, err));
  hipobj_xfer_free(x);
  cr_assert_eq(res.bytes, n);
  cr_assert_eq(memcmp(back, data, n), 0);

  /* A garbage prefix pointer would crash. */
  struct hipobj_list_page *page = NULL;
  OK(hipobj_s3_list(cli, T_BUCKET, oldest(&lb), &page, err));
  cr_assert_eq(hipobj_list_page_count(page), 2);
  hipobj_list_page_free(page);
  free(data);
  free(back);
}

Test(struct_size, a_client_config_holding_only_struct_size_uses_the_env) {
  setenv("AWS_ENDPOINT_URL", srv.url, 1);
  setenv("AWS_REGION", T_REGION, 1);
  setenv("AWS_ACCESS_KEY_ID", T_AK, 1);
  setenv("AWS_SECRET_ACCESS_KEY", T_SK, 1);
  setenv("AWS_CONFIG_FILE", "/dev/null", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null", 1);
  union block cb;
  struct hipobj_client *c = NULL;
  OK(hipobj_client_create(oldest(&cb), &c, err));
  cr_assert_str_eq(hipobj_client_endpoint(c), srv.url);
  static const char body[] = "from an old program";
  struct hipobj_mem m = hipobj_mem_host((void *)body, sizeof body);
  OK(hipobj_s3_put(c, T_BUCKET, "old/cfg", &m, NULL, NULL, err));
  char back[sizeof body];
  struct hipobj_mem dst = hipobj_mem_host(back, sizeof back);
  OK(hipobj_s3_get(c, T_BUCKET, "old/cfg", &dst, NULL, NULL, err));
  cr_assert_str_eq(back, body);
  hipobj_client_free(c);
}

Test(struct_size, a_small_result_is_written_only_within_it) {
  free(put_pattern(cli, "small/k", 1000, 3));
  char buf[1000];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  union block rb;

  /* Up to object_size: two fields written, the rest untouched. */
  size_t cut = offsetof(struct hipobj_xfer_result, rdma_bytes);
  struct hipobj_xfer_result *r = guarded(&rb, cut);
  OK(hipobj_s3_get(cli, T_BUCKET, "small/k", &dst, NULL, r, err));
  cr_assert_eq(r->struct_size, cut);
  cr_assert_eq(r->bytes, 1000);
  cr_assert_eq(r->object_size, 1000);
  guard_intact(&rb, cut);

  /* Only struct_size: nothing written, the call still runs. */
  r = guarded(&rb, sizeof(size_t));
  struct hipobj_mem src = hipobj_mem_host(buf, sizeof buf);
  OK(hipobj_s3_put(cli, T_BUCKET, "small/k2", &src, NULL, r, err));
  guard_intact(&rb, sizeof(size_t));

  /* A field cut in the middle gets the bytes inside struct_size. */
  struct hipobj_object_info full = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "small/k", &full, err));
  cut = offsetof(struct hipobj_object_info, etag) + 5;
  struct hipobj_object_info *info = guarded(&rb, cut);
  OK(hipobj_s3_head(cli, T_BUCKET, "small/k", info, err));
  cr_assert_eq(info->size, 1000);
  cr_assert_eq(memcmp(info->etag, full.etag, 5), 0);
  guard_intact(&rb, cut);

  /* The asynchronous result. */
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "small/k", &dst, NULL, NULL, &x, err));
  cut = offsetof(struct hipobj_xfer_result, object_size);
  r = guarded(&rb, cut);
  OK(hipobj_xfer_wait(x, r, err));
  hipobj_xfer_free(x);
  cr_assert_eq(r->bytes, 1000);
  guard_intact(&rb, cut);

  /* The GPU platform report (host memory needs no runtime). */
  cut = offsetof(struct hipobj_gpu_platform_info, name) + 2;
  struct hipobj_gpu_platform_info *pi = guarded(&rb, cut);
  OK(hipobj_gpu_platform_info(HIPOBJ_MEM_HOST, pi, err));
  cr_assert_eq(pi->available, 1);
  cr_assert_eq(memcmp(pi->name, "ho", 2), 0);
  guard_intact(&rb, cut);
}

Test(struct_size, a_larger_struct_is_taken_when_its_tail_is_zero) {
  static const char body[] = "newer";
  struct hipobj_mem src = hipobj_mem_host((void *)body, sizeof body);
  char buf[16];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);

  struct {
    struct hipobj_put_opts o;
    unsigned char newer[24];
  } po;
  memset(&po, 0, sizeof po);
  po.o.struct_size = sizeof po;
  po.o.content_type = "text/plain";
  OK(hipobj_s3_put(cli, T_BUCKET, "new/k", &src, &po.o, NULL, err));
  po.newer[23] = 1;
  REFUSED(hipobj_s3_put(cli, T_BUCKET, "new/k2", &src, &po.o, NULL, err),
          "struct hipobj_put_opts");
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "new/k2", &info, err),
               HIPOBJ_E_NOT_FOUND, "a refused PUT sends nothing");

  struct {
    struct hipobj_get_opts o;
    unsigned char newer[24];
  } go;
  memset(&go, 0, sizeof go);
  go.o.struct_size = sizeof go;
  OK(hipobj_s3_get(cli, T_BUCKET, "new/k", &dst, &go.o, NULL, err));
  cr_assert_str_eq(buf, body);
  go.newer[0] = 0x80;
  REFUSED(hipobj_s3_get(cli, T_BUCKET, "new/k", &dst, &go.o, NULL, err),
          "struct hipobj_get_opts");
  memset(go.newer, 0, sizeof go.newer);

  struct {
    struct hipobj_xfer_opts o;
    unsigned char newer[8];
  } xo;
  memset(&xo, 0, sizeof xo);
  xo.o.struct_size = sizeof xo;
  xo.o.done = done_cb;
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "new/k", &dst, &go.o, &xo.o, &x, err));
  OK(hipobj_xfer_wait(x, NULL, err));
  hipobj_xfer_free(x);
  xo.newer[7] = 1;
  REFUSED(
      hipobj_s3_get_start(cli, T_BUCKET, "new/k", &dst, NULL, &xo.o, &x, err),
      "struct hipobj_xfer_opts");
  cr_assert_null(x);

  struct {
    struct hipobj_list_opts o;
    unsigned char newer[8];
  } lo;
  memset(&lo, 0, sizeof lo);
  lo.o.struct_size = sizeof lo;
  lo.o.prefix = "new/";
  struct hipobj_list_page *page = NULL;
  OK(hipobj_s3_list(cli, T_BUCKET, &lo.o, &page, err));
  cr_assert_eq(hipobj_list_page_count(page), 1);
  hipobj_list_page_free(page);
  lo.newer[3] = 1;
  REFUSED(hipobj_s3_list(cli, T_BUCKET, &lo.o, &page, err),
          "struct hipobj_list_opts");

  struct {
    struct hipobj_client_config c;
    unsigned char newer[16];
  } cc;
  memset(&cc, 0, sizeof cc);
  client_config(&cc.c, srv.url, NULL, NULL, 0, 0);
  cc.c.struct_size = sizeof cc;
  struct hipobj_client *c = NULL;
  OK(hipobj_client_create(&cc.c, &c, err));
  hipobj_client_free(c);
  cc.newer[15] = 1;
  REFUSED(hipobj_client_create(&cc.c, &c, err), "struct hipobj_client_config");
  cr_assert_null(c);

  /* A larger result: the fields this library cannot fill read as zero. */
  struct {
    struct hipobj_xfer_result r;
    unsigned char newer[24];
  } rr;
  memset(&rr, GARBAGE, sizeof rr);
  rr.r.struct_size = sizeof rr;
  OK(hipobj_s3_get(cli, T_BUCKET, "new/k", &dst, NULL, &rr.r, err));
  cr_assert_eq(rr.r.struct_size, sizeof rr);
  cr_assert_eq(rr.r.bytes, sizeof body);
  for (size_t i = 0; i < sizeof rr.newer; i++)
    cr_assert_eq(rr.newer[i], 0, "byte %zu past the library's struct", i);
}

Test(struct_size, a_struct_size_of_zero_names_the_initialiser) {
  char buf[4];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.struct_size = 0;
  REFUSED(hipobj_s3_get(cli, T_BUCKET, "k", &dst, &go, NULL, err),
          "initialise it with HIPOBJ_GET_OPTS_INIT");
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  res.struct_size = 0;
  REFUSED(hipobj_s3_get(cli, T_BUCKET, "k", &dst, NULL, &res, err),
          "initialise it with HIPOBJ_XFER_RESULT_INIT");
  /* Smaller than the struct_size field itself. */
  res.struct_size = sizeof(size_t) - 1;
  REFUSED(hipobj_s3_get(cli, T_BUCKET, "k", &dst, NULL, &res, err),
          "struct hipobj_xfer_result has struct_size");
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  info.struct_size = 0;
  REFUSED(hipobj_s3_head(cli, T_BUCKET, "k", &info, err),
          "HIPOBJ_OBJECT_INFO_INIT");
  struct hipobj_gpu_device_info di = HIPOBJ_GPU_DEVICE_INFO_INIT;
  di.struct_size = 0;
  REFUSED(hipobj_gpu_device_info(HIPOBJ_MEM_CUDA, 0, &di, err),
          "HIPOBJ_GPU_DEVICE_INFO_INIT");
  struct hipobj_copy_opts co = HIPOBJ_COPY_OPTS_INIT;
  co.struct_size = 0;
  REFUSED(hipobj_s3_copy(cli, T_BUCKET, "k", T_BUCKET, "k2", &co, NULL, err),
          "HIPOBJ_COPY_OPTS_INIT");
  struct hipobj_upload_list_opts uo = HIPOBJ_UPLOAD_LIST_OPTS_INIT;
  uo.struct_size = 0;
  struct hipobj_upload_page *up = NULL;
  REFUSED(hipobj_s3_list_uploads(cli, T_BUCKET, &uo, &up, err),
          "HIPOBJ_UPLOAD_LIST_OPTS_INIT");
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.struct_size = 0;
  struct hipobj_client *c = NULL;
  REFUSED(hipobj_client_create(&cfg, &c, err), "HIPOBJ_CLIENT_CONFIG_INIT");
}
