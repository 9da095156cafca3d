/* test_rdma_gpu.c - GPU memory over RDMA on real verbs (Soft-RoCE in the
 * guest) against hipobj-server --rdma auto. The GPU is the fake platform of
 * tests/gpu (device memory is host memory, copies run later on a thread of
 * their own, faults can be injected), so what is tested is the library's
 * RDMA-staged path for real: sessions landing in registered pinned chunks
 * copied to the "GPU" while the next session runs, PUTs gathered from
 * several chunks by one WRITE WITH IMM, parts in parallel, a failed GPU copy
 * never reported as success nor hidden by HTTP, and nothing leaked (MRs,
 * pinned chunks, streams). By default the fake exports no dma-buf, so the
 * direct path is declined before any registration. One case turns export
 * on and replaces only ibv_reg_dmabuf_mr() by ibv_reg_mr() of the same
 * pages (the fake's device memory is host memory), so the direct path's
 * own logic runs on real verbs; the real call needs a GPU and a NIC
 * together, which no machine here has. Suite rdma_kill: the server process dies
 * in the middle of an RDMA transfer (host memory). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../gpu/fake_gpu.h"
#include "../server/harness.h"
#include "rdma/mr.h"
#include "rdma/qp.h"
#include "src/client_int.h"
#include "src/rdma_gpu.h"
#include "src/rdma_gpu_regs.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdatomic.h>

#define CHUNK (2u << 20)

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
  hgpu_register_fake_for_tests();
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hgpu_unregister_fake_for_tests();
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(rdma_gpu, .init = init, .fini = fini, .timeout = 600);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

/* Pinned pool of four 2 MiB chunks: a transfer holds up to three. */
static void make_client(void) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = srv.url;
  cfg.region = T_REGION;
  cfg.access_key_id = T_AK;
  cfg.secret_access_key = T_SK;
  cfg.max_attempts = 2;
  cfg.retry_base_ms = 5;
  cfg.part_size = 5u << 20;
  cfg.concurrency = 3;
  cfg.log_level = HIPOBJ_LOG_NONE;
  cfg.staging_chunk_bytes = CHUNK;
  cfg.staging_pool_bytes = 4 * (size_t)CHUNK;
  OK(hipobj_client_create(&cfg, &cli, err));
}

/* A server on a fresh root (root NULL) or on the root of the last one. */
static void start_on(const char *root, const char *faults) {
  const char *extra[] = {"--rdma", "auto", faults ? "--faults" : NULL, faults,
                         NULL};
  hipobj_client_free(cli);
  cli = NULL;
  srv_start(&srv, root, extra);
  make_client();
}

static void start(const char *faults) {
  start_on(NULL, faults);
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
}

static struct hipobj_mem gpu(size_t n) {
  struct hipobj_mem m = HIPOBJ_MEM_INIT;
  OK(hipobj_gpu_alloc(HIPOBJ_MEM_CUDA, 0, n, &m, err));
  return m;
}

static void to_gpu(struct hipobj_mem *g, const void *p, size_t n) {
  struct hipobj_mem h = hipobj_mem_host((void *)p, n);
  OK(hipobj_gpu_copy(g, &h, err));
}

static void from_gpu(void *p, const struct hipobj_mem *g, size_t n) {
  struct hipobj_mem h = hipobj_mem_host(p, n);
  struct hipobj_mem src = *g;
  src.len = n;
  OK(hipobj_gpu_copy(&h, &src, err));
}

static void no_violations(void) {
  struct fake_gpu_stats st;
  fake_gpu_stats(&st);
  cr_assert_eq(st.violations, 0, "streams/events misused");
  cr_assert_eq(st.unpinned, 0, "async copies with unpinned host memory");
}

/* Destroys the client: every MR and pinned chunk must be gone. */
static void no_leaks(void) {
  hipobj_client_free(cli);
  cli = NULL;
  struct fake_gpu_stats st;
  fake_gpu_stats(&st);
  cr_assert_eq(st.pinned_live, 0, "pinned chunks leaked");
  cr_assert_eq(rdma_mr_live_count(), 0, "MRs leaked");
}

static void put_host(const char *key, const void *p, size_t n) {
  struct hipobj_mem m = hipobj_mem_host((void *)p, n);
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.rdma_policy = HIPOBJ_RDMA_OFF;
  OK(hipobj_s3_put(cli, T_BUCKET, key, &m, &o, NULL, err));
}

static void get_host_check(const char *key, const void *want, size_t n) {
  char *back = malloc(n + 1);
  struct hipobj_mem m = hipobj_mem_host(back, n + 1);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.rdma_policy = HIPOBJ_RDMA_OFF; /* read back over an independent path */
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, key, &m, &o, &res, err));
  cr_assert_eq(res.bytes, n, "%s", key);
  cr_assert_eq(memcmp(back, want, n), 0, "%s: bytes differ", key);
  free(back);
}

Test(rdma_gpu, get_whole_and_ranges_staged) {
  start(NULL);
  size_t n = (5u << 20) + 7; /* three sessions of one chunk, the last short */
  char *data = malloc(n), *back = malloc(n);
  fill_pattern(data, n, 11);
  put_host("obj", data, n);
  struct hipobj_mem g = gpu(n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "obj", &g, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED, "path %s",
               hipobj_data_path_name(res.path));
  cr_assert_eq(res.bytes, n);
  cr_assert_eq(res.rdma_bytes, n);
  from_gpu(back, &g, n);
  cr_assert_eq(memcmp(data, back, n), 0);
  /* The GPU's memory went through an engine of its own, on the NIC the
   * library pairs with that GPU (here the only one, rxe), which `hipobj
   * info` reports. */
  cr_assert_not_null(cli->rdma_gpu[1][0], "no engine for CUDA GPU 0");
  struct hipobj_gpu_device_info di = HIPOBJ_GPU_DEVICE_INFO_INIT;
  OK(hipobj_gpu_device_info(HIPOBJ_MEM_CUDA, 0, &di, err));
  cr_assert(strncmp(di.rdma_nic, "rxe", 3) == 0, "NIC '%s' (%s)", di.rdma_nic,
            di.rdma_nic_reason);
  cr_assert_str_neq(di.rdma_nic_reason, "");
  const struct {
    uint64_t off, len;
  } ranges[] = {{0, 1}, {n - 1, 1}, {12345, (2u << 20) + 54321}};
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
    struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
    o.has_range = 1;
    o.offset = ranges[i].off;
    o.length = ranges[i].len;
    OK(hipobj_s3_get(cli, T_BUCKET, "obj", &g, &o, &res, err));
    cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED, "range %zu", i);
    cr_assert_eq(res.bytes, ranges[i].len, "range %zu", i);
    from_gpu(back, &g, (size_t)ranges[i].len);
    cr_assert_eq(memcmp(data + ranges[i].off, back, (size_t)ranges[i].len), 0,
                 "range %zu", i);
  }
  no_violations();
  hipobj_gpu_free(&g);
  free(data);
  free(back);
  no_leaks();
}

Test(rdma_gpu, puts_gathered_from_chunks_and_parallel_parts) {
  start(NULL);
  /* 1 B and 100000 B: one chunk; 5 MiB + 1: three chunks gathered by one
   * WRITE WITH IMM; 7 MiB needs four chunks of the three a transfer may
   * hold, so it goes over HTTP, still staged. */
  const struct {
    size_t n;
    enum hipobj_data_path path;
  } puts[] = {{1, HIPOBJ_PATH_RDMA_STAGED},
              {100000, HIPOBJ_PATH_RDMA_STAGED},
              {(5u << 20) + 1, HIPOBJ_PATH_RDMA_STAGED},
              {7u << 20, HIPOBJ_PATH_HTTP_STAGED}};
  for (size_t i = 0; i < sizeof puts / sizeof puts[0]; i++) {
    size_t n = puts[i].n;
    char key[32];
    snprintf(key, sizeof key, "put-%zu", n);
    char *data = malloc(n);
    fill_pattern(data, n, (unsigned)i + 20);
    struct hipobj_mem g = gpu(n);
    to_gpu(&g, data, n);
    struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
    o.multipart_threshold = 64u << 20; /* one PutObject */
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    OK(hipobj_s3_put(cli, T_BUCKET, key, &g, &o, &res, err));
    cr_assert_eq(res.path, puts[i].path, "%s: path %s", key,
                 hipobj_data_path_name(res.path));
    cr_assert_eq(res.rdma_bytes,
                 puts[i].path == HIPOBJ_PATH_RDMA_STAGED ? n : 0, "%s", key);
    get_host_check(key, data, n);
    hipobj_gpu_free(&g);
    free(data);
  }
  /* Multipart from GPU memory: three 5 MiB-or-less parts sent by RDMA from
   * three threads, Complete over HTTP with their ETags. */
  size_t n = (12u << 20) + 3;
  char *data = malloc(n);
  fill_pattern(data, n, 33);
  struct hipobj_mem g = gpu(n);
  to_gpu(&g, data, n);
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.multipart_threshold = 8u << 20;
  o.part_size = 5u << 20;
  o.concurrency = 3;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "mp", &g, &o, &res, err));
  cr_assert_eq(res.parts, 3);
  cr_assert_eq(res.rdma_bytes, n);
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED, "path %s",
               hipobj_data_path_name(res.path));
  cr_assert(strstr(res.etag, "-3"), "multipart ETag %s", res.etag);
  get_host_check("mp", data, n);
  no_violations();
  hipobj_gpu_free(&g);
  free(data);
  no_leaks();
}

Test(rdma_gpu, failed_gpu_copy_is_an_error_not_http) {
  start(NULL);
  size_t n = (4u << 20) + 100;
  char *data = malloc(n);
  fill_pattern(data, n, 44);
  put_host("f", data, n);
  struct hipobj_mem g = gpu(n);
  /* The second chunk's copy to the GPU fails when it runs. HTTP would
   * succeed (the fault is armed once): the error must surface anyway. */
  fake_gpu_fail_copy(2, FAKE_FAIL_ASYNC);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(cli, T_BUCKET, "f", &g, NULL, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_IO, "rc %d: %s", rc, hipobj_error_message(err));
  cr_assert(strstr(hipobj_error_message(err), "GPU copy failed"), "%s",
            hipobj_error_message(err));
  cr_assert_eq(res.bytes, 0);
  /* The same GET afterwards works: nothing was left half-done. */
  OK(hipobj_s3_get(cli, T_BUCKET, "f", &g, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED);
  char *back = malloc(n);
  from_gpu(back, &g, n);
  cr_assert_eq(memcmp(data, back, n), 0);
  no_violations();
  hipobj_gpu_free(&g);
  free(data);
  free(back);
  no_leaks();
}

static atomic_int reg_calls;

/* ibv_reg_dmabuf_mr() for the fake GPU: its device memory is host memory,
 * so the pages at iova are registered directly. */
static struct ibv_mr *reg_fake_pages(struct ibv_pd *pd, uint64_t offset,
                                     size_t len, uint64_t iova, int fd,
                                     int access) {
  (void)offset, (void)fd;
  atomic_fetch_add(&reg_calls, 1);
  return ibv_reg_mr(pd, (void *)(uintptr_t)iova, len, access);
}

/* A NIC or kernel without dma-buf support. */
static struct ibv_mr *reg_refused(struct ibv_pd *pd, uint64_t offset,
                                  size_t len, uint64_t iova, int fd,
                                  int access) {
  (void)pd, (void)offset, (void)len, (void)iova, (void)fd, (void)access;
  atomic_fetch_add(&reg_calls, 1);
  errno = EOPNOTSUPP;
  return NULL;
}

static unsigned long exports(void) {
  struct fake_gpu_stats st;
  fake_gpu_stats(&st);
  return st.dmabuf_exports;
}

Test(rdma_gpu, direct_through_dmabuf_then_staged_once_refused) {
  start(NULL);
  fake_gpu_set_dmabuf(1);
  hrdma_gpu_reset_for_tests(cli, reg_fake_pages);
  size_t n = (3u << 20) + 5;
  char *data = malloc(n), *back = malloc(n);
  fill_pattern(data, n, 71);
  put_host("d", data, n);
  struct hipobj_mem g = gpu((12u << 20) + 3);
  struct hipobj_mem win = g;
  win.len = n;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "d", &win, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT, "path %s",
               hipobj_data_path_name(res.path));
  cr_assert_eq(res.rdma_bytes, n);
  from_gpu(back, &g, n);
  cr_assert_eq(memcmp(back, data, n), 0);
  cr_assert_gt(exports(), 0);
  cr_assert_gt(atomic_load(&reg_calls), 0);
  /* PUTs straight from device memory: no chunk limit (7 MiB would need
   * four chunks staged), and multipart parts in parallel. */
  size_t big = 7u << 20, mp = (12u << 20) + 3;
  char *src = malloc(mp);
  fill_pattern(src, mp, 72);
  to_gpu(&g, src, mp);
  win.len = big;
  struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
  o.multipart_threshold = 64u << 20;
  OK(hipobj_s3_put(cli, T_BUCKET, "d7", &win, &o, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT, "path %s",
               hipobj_data_path_name(res.path));
  get_host_check("d7", src, big);
  o.multipart_threshold = 8u << 20;
  o.part_size = 5u << 20;
  o.concurrency = 3;
  OK(hipobj_s3_put(cli, T_BUCKET, "dmp", &g, &o, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT, "path %s",
               hipobj_data_path_name(res.path));
  cr_assert_eq(res.rdma_bytes, mp);
  get_host_check("dmp", src, mp);
  /* A refused registration: this transfer goes staged, and later ones do
   * not try dma-buf again. */
  hrdma_gpu_reset_for_tests(cli, reg_refused);
  unsigned long before = exports();
  OK(hipobj_s3_get(cli, T_BUCKET, "d", &win, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED);
  unsigned long after_first = exports();
  cr_assert_eq(after_first, before + 1);
  memset(back, 0, n);
  OK(hipobj_s3_get(cli, T_BUCKET, "d", &win, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED);
  cr_assert_eq(exports(), after_first, "dma-buf tried again after a refusal");
  from_gpu(back, &g, n);
  cr_assert_eq(memcmp(back, data, n), 0);
  hrdma_gpu_reset_for_tests(cli, NULL);
  fake_gpu_set_dmabuf(0);
  no_violations();
  hipobj_gpu_free(&g);
  free(data);
  free(back);
  free(src);
  no_leaks();
}

struct worker {
  int id;
  struct hipobj_mem whole; /* one GPU buffer, a window per thread */
  size_t n;
  int failures;
};

static void *worker_main(void *arg) {
  struct worker *w = arg;
  struct hipobj_mem win = w->whole;
  win.ptr = (char *)w->whole.ptr + (size_t)w->id * w->n;
  win.len = w->n;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  for (int i = 0; i < 2; i++)
    if (hipobj_s3_get(cli, T_BUCKET, "c", &win, NULL, &res, NULL) ||
        res.path != HIPOBJ_PATH_RDMA_STAGED || res.bytes != w->n)
      w->failures++;
  return NULL;
}

/* Device 0's allocations, which reg_refused_dev0 refuses. */
static uintptr_t dev0_lo, dev0_hi;

static struct ibv_mr *reg_refused_dev0(struct ibv_pd *pd, uint64_t offset,
                                       size_t len, uint64_t iova, int fd,
                                       int access) {
  if (iova >= dev0_lo && iova < dev0_hi)
    return reg_refused(pd, offset, len, iova, fd, access);
  return reg_fake_pages(pd, offset, len, iova, fd, access);
}

static struct hipobj_mem gpu_on(int dev, size_t n) {
  struct hipobj_mem m = HIPOBJ_MEM_INIT;
  OK(hipobj_gpu_alloc(HIPOBJ_MEM_CUDA, dev, n, &m, err));
  return m;
}

/* GET checksums by RDMA into GPU memory: staged, the chunks' CRCs are
 * recomputed in host memory and the object verified; direct, the NIC
 * writes memory this process never reads: only the CRCs the server
 * computed over what it sent are joined and compared (so a damaged stored
 * object still fails), and the result says the bytes were not verified. */
Test(rdma_gpu, get_checksums_staged_and_direct) {
  start(NULL);
  size_t n = (3u << 20) + 11;
  char *data = malloc(n);
  fill_pattern(data, n, 93);
  put_host("c", data, n);
  struct hipobj_mem g = gpu(n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "c", &g, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED);
  cr_assert_eq(res.checksum, HIPOBJ_CHECKSUM_CRC64NVME, "%s",
               res.checksum_note);
  fake_gpu_set_dmabuf(1);
  hrdma_gpu_reset_for_tests(cli, reg_fake_pages);
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "c", &g, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
  cr_assert_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  cr_assert(strstr(res.checksum_note, "not read back") != NULL, "%s",
            res.checksum_note);
  flip_stored(&srv, "c", n / 2);
  int rc = hipobj_s3_get(cli, T_BUCKET, "c", &g, NULL, NULL, err);
  cr_assert_eq(rc, HIPOBJ_E_INTEGRITY, "direct: %d %s", rc,
               hipobj_error_message(err));
  fake_gpu_set_dmabuf(0);
  hrdma_gpu_reset_for_tests(cli, reg_refused);
  rc = hipobj_s3_get(cli, T_BUCKET, "c", &g, NULL, &res, err);
  cr_assert_eq(rc, HIPOBJ_E_INTEGRITY, "staged: %d %s", rc,
               hipobj_error_message(err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED);
  hrdma_gpu_reset_for_tests(cli, NULL);
  no_violations();
  hipobj_gpu_free(&g);
  free(data);
  no_leaks();
}

Test(rdma_gpu, registrations_kept_per_gpu_and_refusals_too) {
  start(NULL);
  fake_gpu_set_dmabuf(1);
  hrdma_gpu_reset_for_tests(cli, reg_fake_pages);
  size_t n = (1u << 20) + 7;
  char *data = malloc(n), *back = malloc(n);
  fill_pattern(data, n, 81);
  put_host("k", data, n);
  struct hipobj_mem g = gpu_on(0, 4 * n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int before = atomic_load(&reg_calls);
  /* Three GETs into three windows of one allocation: one registration. */
  for (int i = 0; i < 3; i++) {
    struct hipobj_mem win = hipobj_mem_window(&g, (uint64_t)i * n, n);
    OK(hipobj_s3_get(cli, T_BUCKET, "k", &win, NULL, &res, err));
    cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT, "path %s",
                 hipobj_data_path_name(res.path));
    memset(back, 0, n);
    from_gpu(back, &win, n);
    cr_assert_eq(memcmp(back, data, n), 0, "window %d", i);
  }
  cr_assert_eq(atomic_load(&reg_calls) - before, 1,
               "one registration for one allocation");
  struct hgpu_regs_stats st;
  cr_assert_eq(hrdma_gpu_regs_stats(cli, &g, &st), 0);
  cr_assert_eq(st.misses, 1);
  cr_assert_eq(st.hits, 2);
  cr_assert_eq(st.entries, 1);
  /* Freed and allocated again: never the old registration (a new buffer
   * id, whether or not the address is the same). */
  uintptr_t old = (uintptr_t)g.ptr;
  hipobj_gpu_free(&g);
  g = gpu_on(0, 4 * n);
  struct hipobj_mem win = hipobj_mem_window(&g, 0, n);
  before = atomic_load(&reg_calls);
  OK(hipobj_s3_get(cli, T_BUCKET, "k", &win, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
  cr_assert_eq(atomic_load(&reg_calls) - before, 1, "registered again");
  memset(back, 0, n);
  from_gpu(back, &win, n);
  cr_assert_eq(memcmp(back, data, n), 0);
  cr_assert_eq(hrdma_gpu_regs_stats(cli, &g, &st), 0);
  if ((uintptr_t)g.ptr == old)
    cr_assert_eq(st.stale, 1, "the old registration was dropped");

  /* An explicit registration: made at once, used by every later transfer
   * (no registration more), kept until deregistered. */
  struct hipobj_mem g2 = gpu_on(0, 2 * n);
  before = atomic_load(&reg_calls);
  OK(hipobj_buffer_register(cli, &g2, err));
  cr_assert_eq(atomic_load(&reg_calls) - before, 1);
  for (int i = 0; i < 2; i++) {
    struct hipobj_mem w2 = hipobj_mem_window(&g2, (uint64_t)i * n, n);
    OK(hipobj_s3_get(cli, T_BUCKET, "k", &w2, NULL, &res, err));
    cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
    OK(hipobj_s3_put(cli, T_BUCKET, "k2", &w2, NULL, &res, err));
    cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
  }
  cr_assert_eq(atomic_load(&reg_calls) - before, 1,
               "GETs and PUTs reuse the explicit registration");
  get_host_check("k2", data, n);
  OK(hipobj_buffer_deregister(cli, &g2, err));
  cr_assert_eq(hipobj_buffer_deregister(cli, &g2, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  hipobj_gpu_free(&g2);

  /* GPU 0's NIC refuses dma-buf: GPU 0 goes staged from now on, GPU 1
   * stays direct. */
  hrdma_gpu_reset_for_tests(cli, reg_refused_dev0);
  dev0_lo = (uintptr_t)g.ptr;
  dev0_hi = dev0_lo + g.len;
  struct hipobj_mem g1 = gpu_on(1, n);
  for (int i = 0; i < 2; i++) {
    OK(hipobj_s3_get(cli, T_BUCKET, "k", &win, NULL, &res, err));
    cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED, "GPU 0, GET %d", i);
    OK(hipobj_s3_get(cli, T_BUCKET, "k", &g1, NULL, &res, err));
    cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT, "GPU 1, GET %d", i);
    memset(back, 0, n);
    from_gpu(back, &g1, n);
    cr_assert_eq(memcmp(back, data, n), 0);
  }
  hrdma_gpu_reset_for_tests(cli, NULL);
  fake_gpu_set_dmabuf(0);
  no_violations();
  hipobj_gpu_free(&g);
  hipobj_gpu_free(&g1);
  free(data);
  free(back);
  no_leaks();
}

Test(rdma_gpu, four_threads_into_one_gpu_buffer) {
  start(NULL);
  size_t n = (1u << 20) + 333;
  char *data = malloc(n), *back = malloc(4 * n);
  fill_pattern(data, n, 55);
  put_host("c", data, n);
  struct hipobj_mem g = gpu(4 * n);
  pthread_t t[4];
  struct worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (struct worker){i, g, n, 0};
    pthread_create(&t[i], NULL, worker_main, &w[i]);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < 4; i++)
    cr_assert_eq(w[i].failures, 0, "thread %d", i);
  from_gpu(back, &g, 4 * n);
  for (int i = 0; i < 4; i++)
    cr_assert_eq(memcmp(back + (size_t)i * n, data, n), 0, "window %d", i);
  no_violations();
  hipobj_gpu_free(&g);
  free(data);
  free(back);
  no_leaks();
}

/* ---- the server dies mid-transfer ------------------------------------------
 */

TestSuite(rdma_kill, .init = init, .fini = fini, .timeout = 600);

static void reap(void) {
  int status = 0;
  cr_assert(srv_wait(&srv, 10, &status), "the server did not exit");
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 70,
            "the server did not die by the injected crash (status %#x)",
            status);
}

Test(rdma_kill, server_killed_mid_transfer) {
  /* The server _exit()s when READY arrives: the client's QP is connected
   * and its receive posted, the data never comes, the READY connection
   * drops, and HTTP then finds nobody listening. */
  start("op=RdmaReady,nth=1,action=crash");
  size_t n = 300000;
  char *old = malloc(n), *neu = malloc(n), *back = malloc(n);
  fill_pattern(old, n, 61);
  fill_pattern(neu, n, 62);
  put_host("k", old, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  double t0 = mono_now();
  int rc = hipobj_s3_get(cli, T_BUCKET, "k", &dst, NULL, &res, err);
  cr_assert_neq(rc, HIPOBJ_OK, "a GET from a dead server succeeded");
  cr_assert_eq(res.bytes, 0);
  cr_assert_str_neq(hipobj_error_message(err), "");
  cr_assert_lt(mono_now() - t0, 60.0, "the failure took too long");
  reap();
  cr_assert_eq(rdma_qp_live_count(), 0, "QPs leaked");
  cr_assert_eq(rdma_mr_live_count(), 0, "MRs leaked");

  /* A PUT overwriting the key dies the same way: after a restart the key
   * holds the old bytes, never a partial new object. */
  start_on(srv.root, "op=RdmaReady,nth=1,action=crash");
  struct hipobj_mem src = hipobj_mem_host(neu, n);
  rc = hipobj_s3_put(cli, T_BUCKET, "k", &src, NULL, &res, err);
  cr_assert_neq(rc, HIPOBJ_OK, "a PUT to a dead server succeeded");
  reap();
  cr_assert_eq(rdma_qp_live_count(), 0, "QPs leaked");
  start_on(srv.root, NULL);
  get_host_check("k", old, n);

  /* And with the server alive again, the same GET goes by RDMA. */
  OK(hipobj_s3_get(cli, T_BUCKET, "k", &dst, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_DIRECT);
  cr_assert_eq(memcmp(back, old, n), 0);
  free(old);
  free(neu);
  free(back);
  no_leaks();
}

/* ---- files (HIPOBJ_MEM_FILE) over RDMA: staged like GPU memory ----------
 */

Test(rdma_gpu, files_by_rdma_through_the_pinned_pool) {
  start(NULL);
  size_t n = (5u << 20) + 77;
  char *data = malloc(n), *back = malloc(n);
  fill_pattern(data, n, 91);
  char path[] = "/tmp/hipobj-rdma-file-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  unlink(path);
  cr_assert_eq(pwrite(fd, data, n, 4096), (ssize_t)n);
  /* PUT of the bytes at offset 4096: three chunks gathered by the NIC. */
  struct hipobj_mem src = hipobj_mem_file(fd, 4096, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.multipart_threshold = 64u << 20;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "file", &src, &po, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED, "path %s",
               hipobj_data_path_name(res.path));
  get_host_check("file", data, n);
  /* GET into the same file at offset 1 MiB + 1, in sessions of a chunk. */
  struct hipobj_mem dst = hipobj_mem_file(fd, (1u << 20) + 1, n);
  OK(hipobj_s3_get(cli, T_BUCKET, "file", &dst, NULL, &res, err));
  cr_assert_eq(res.path, HIPOBJ_PATH_RDMA_STAGED, "path %s",
               hipobj_data_path_name(res.path));
  cr_assert_eq(res.rdma_bytes, n);
  cr_assert_eq(pread(fd, back, n, (1u << 20) + 1), (ssize_t)n);
  cr_assert_eq(memcmp(back, data, n), 0);
  close(fd);
  free(data);
  free(back);
  no_leaks();
}
