/* multi_gpu.c - one client filling two GPUs of one host at once, against a
 * real S3 endpoint (hipobj-server): GETs into and PUTs from device 0 and
 * device 1 at the same time (threads, and the asynchronous API from one
 * thread), every byte checked on its GPU; a client that only uses device 1
 * never touches device 0's context; the staging pool's pinned chunks serve
 * both GPUs within one bound; both devices' info. Needs only the library
 * (no Criterion), so the same program runs
 *   - in CI on the fake platform (--fake: fake_gpu.c in the CUDA slot,
 *     which counts the ops each device gets and flags an op naming another
 *     device than its memory, stream or event),
 *   - in CI on the real CUDA backend over the stand-in libcuda.so.1
 *     (mock_libcuda.c: refuses a device's memory, stream or event used in
 *     another device's context and counts the calls each context gets),
 *   - on a machine with two real GPUs (tests/gpu/device-run.sh, job
 *     multigpu), where the context check asks the driver
 *     (cuDevicePrimaryCtxGetState).
 * Prints one line per case and "N passed, N failed, N skipped"; exits 1
 * when a case failed, 77 with fewer than two GPUs or no endpoint (unless
 * HIPOBJ_MGPU_REQUIRE=1: then that is a failure).
 *
 * Environment: HIPOBJ_TEST_ENDPOINT, HIPOBJ_TEST_ACCESS_KEY,
 * HIPOBJ_TEST_SECRET_KEY, HIPOBJ_TEST_REGION; HIPOBJ_TEST_GPU_KIND (cuda or
 * hip; default the first with two devices); HIPOBJ_MGPU_MIB (object size
 * per GPU, default 64). Devices 0 and 1 are used. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_gpu.h"
#include "gpu_case.h"
#include "hipobj.h"
#include "mock_cuda.h"
#include "src/client_int.h"
#include "src/staging.h"

#define MiB ((size_t)1 << 20)

static struct hipobj_client *cli;
static struct hipobj_error *err;
static enum hipobj_mem_kind kind;
static int fake;    /* --fake: the fake platform */
static void *cudal; /* the loaded libcuda.so.1 (real or stand-in), or NULL */
static size_t size; /* object bytes per GPU */
static char bucket[64];

/* The byte at object offset i of pattern `seed`. */
static unsigned char byte_at(uint64_t i, unsigned seed) {
  uint64_t x = (i / 8 + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 40);
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  return (unsigned char)(x >> (8 * (i % 8)));
}

static unsigned char *host_pattern(size_t n, unsigned seed) {
  unsigned char *h = malloc(n ? n : 1);
  for (size_t i = 0; h && i < n; i++)
    h[i] = byte_at(i, seed);
  return h;
}

/* Where host bytes differ from pattern seed: -1 when none. */
static long long first_diff(const unsigned char *h, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    if (h[i] != byte_at(i, seed))
      return (long long)i;
  return -1;
}

/* n bytes of device memory on dev holding pattern seed. */
static int gpu_pattern(int dev, size_t n, unsigned seed, struct hipobj_mem *m) {
  CHECK_OK(hipobj_gpu_alloc(kind, dev, n, m, err), "hipobj_gpu_alloc");
  unsigned char *h = host_pattern(n, seed);
  CHECK(h, "out of host memory");
  struct hipobj_mem hm = hipobj_mem_host(h, n);
  int rc = hipobj_gpu_copy(m, &hm, err);
  free(h);
  CHECK_OK(rc, "hipobj_gpu_copy to the GPU");
  return 0;
}

/* Copies device buffer m back and compares it with pattern seed. */
static int verify_gpu(const struct hipobj_mem *m, unsigned seed) {
  unsigned char *h = malloc(m->len ? m->len : 1);
  CHECK(h, "out of host memory");
  struct hipobj_mem hm = hipobj_mem_host(h, m->len);
  int rc = hipobj_gpu_copy(&hm, m, err);
  long long at = rc == HIPOBJ_OK ? first_diff(h, m->len, seed) : -1;
  free(h);
  CHECK_OK(rc, "copy back from the GPU");
  CHECK(at < 0, "GPU %d: byte %lld differs from what was sent", m->device, at);
  return 0;
}

/* Puts pattern seed from host memory (the objects GETs read). */
static int put_host(const char *key, unsigned seed) {
  unsigned char *h = host_pattern(size, seed);
  CHECK(h, "out of host memory");
  struct hipobj_mem hm = hipobj_mem_host(h, size);
  int rc = hipobj_s3_put(cli, bucket, key, &hm, NULL, NULL, err);
  free(h);
  CHECK_OK(rc, key);
  return 0;
}

/* Gets key into host memory and compares it with pattern seed. */
static int verify_object(const char *key, unsigned seed) {
  unsigned char *h = malloc(size ? size : 1);
  CHECK(h, "out of host memory");
  struct hipobj_mem hm = hipobj_mem_host(h, size);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(cli, bucket, key, &hm, NULL, &res, err);
  long long at = rc == HIPOBJ_OK ? first_diff(h, size, seed) : -1;
  free(h);
  CHECK_OK(rc, key);
  CHECK(res.bytes == size, "%s: %llu of %zu bytes", key,
        (unsigned long long)res.bytes, size);
  CHECK(at < 0, "%s: byte %lld differs from what the GPU held", key, at);
  return 0;
}

/* ---- what the platform recorded ------------------------------------------
 */

/* Per device: copies into and out of its memory (fake or stand-in only). */
struct counts {
  int known;
  unsigned long ops[2], h2d[2], d2h[2], violations, unpinned;
};

static void counts(struct counts *c) {
  memset(c, 0, sizeof *c);
  if (fake) {
    struct fake_gpu_stats st;
    fake_gpu_stats(&st);
    for (int d = 0; d < 2; d++) {
      c->ops[d] = st.dev_ops[d];
      c->h2d[d] = st.dev_h2d[d];
      c->d2h[d] = st.dev_d2h[d];
    }
    c->violations = st.violations;
    c->unpinned = st.unpinned;
    c->known = 1;
    return;
  }
  mock_cuda_stats_fn stats =
      cudal ? (mock_cuda_stats_fn)dlsym(cudal, MOCK_CUDA_STATS_SYM) : NULL;
  if (!stats)
    return; /* a real driver */
  for (int d = 0; d < 2; d++) {
    struct mock_cuda_dev_stats s;
    stats(d, &s);
    c->ops[d] = s.calls;
    c->h2d[d] = s.h2d;
    c->d2h[d] = s.d2h;
  }
  c->violations =
      ((mock_cuda_count_fn)dlsym(cudal, MOCK_CUDA_VIOLATIONS_SYM))();
  c->unpinned = ((mock_cuda_count_fn)dlsym(cudal, MOCK_CUDA_UNPINNED_SYM))();
  c->known = 1;
}

/* No wrong-device use and no unpinned queued copy since the start. */
static int clean(void) {
  struct counts c;
  counts(&c);
  CHECK(c.violations == 0,
        "%lu uses of a device's memory, stream or event in another "
        "device's context",
        c.violations);
  CHECK(c.unpinned == 0, "%lu queued copies through unpinned host memory",
        c.unpinned);
  return 0;
}

/* 1 when device dev's primary context was never made (CUDA: the driver's
 * own answer), 0 when it was, -1 when this platform cannot tell. */
static int ctx_untouched(int dev) {
  if (fake) {
    struct counts c;
    counts(&c);
    return c.ops[dev] == 0;
  }
  typedef int (*state_fn)(int, unsigned *, int *);
  state_fn st =
      cudal ? (state_fn)dlsym(cudal, "cuDevicePrimaryCtxGetState") : NULL;
  unsigned flags = 0;
  int active = 0;
  if (kind != HIPOBJ_MEM_CUDA || !st || st(dev, &flags, &active) != 0)
    return -1;
  return !active;
}

/* ---- cases --------------------------------------------------------------- */

/* First, before anything used device 0: a client of its own moves data
 * through device 1 only (a multipart PUT from it, a GET into it) and
 * device 0's context stays untouched, also after the client is freed (its
 * pinned chunks are freed in the context that allocated them). */
static int case_device1_leaves_device0_alone(void) {
  int before = ctx_untouched(0);
  if (before < 0) {
    snprintf(why, sizeof why,
             "%s has no per-device context this program can inspect",
             kind == HIPOBJ_MEM_HIP ? "HIP" : "this driver");
    return SKIP;
  }
  CHECK(before == 1, "device 0's context was made before the case began");
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = getenv("HIPOBJ_TEST_ENDPOINT");
  cfg.access_key_id = getenv("HIPOBJ_TEST_ACCESS_KEY");
  cfg.secret_access_key = getenv("HIPOBJ_TEST_SECRET_KEY");
  cfg.region = getenv("HIPOBJ_TEST_REGION");
  cfg.addressing = HIPOBJ_ADDRESSING_PATH;
  cfg.part_size = 5 * MiB;
  struct hipobj_client *own = NULL;
  CHECK_OK(hipobj_client_create(&cfg, &own, err), "client");
  struct hipobj_mem src = HIPOBJ_MEM_INIT, dst = HIPOBJ_MEM_INIT;
  size_t n = 11 * MiB + 3; /* three parts */
  int rc = gpu_pattern(1, n, 31, &src);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  if (!rc && (rc = hipobj_s3_put(own, bucket, "dev1-only", &src, NULL, &res,
                                 err)) != HIPOBJ_OK)
    rc = failf("PUT from device 1: %s", hipobj_error_message(err));
  if (!rc && res.parts != 3)
    rc = failf("PUT in %u parts, expected 3", res.parts);
  if (!rc && hipobj_gpu_alloc(kind, 1, n, &dst, err) != HIPOBJ_OK)
    rc = failf("alloc: %s", hipobj_error_message(err));
  if (!rc && hipobj_s3_get(own, bucket, "dev1-only", &dst, NULL, NULL, err) !=
                 HIPOBJ_OK)
    rc = failf("GET into device 1: %s", hipobj_error_message(err));
  if (!rc)
    rc = verify_gpu(&dst, 31);
  int during = ctx_untouched(0);
  hipobj_client_free(own);
  hipobj_gpu_free(&src);
  hipobj_gpu_free(&dst);
  if (rc)
    return rc;
  CHECK(during == 1, "a transfer through device 1 made device 0's context");
  CHECK(ctx_untouched(0) == 1,
        "freeing a client that used device 1 made device 0's context");
  CHECK(ctx_untouched(1) == 0, "device 1's context was never made");
  struct counts c;
  counts(&c);
  CHECK(!c.known || (c.h2d[1] > 0 && c.d2h[1] > 0 && c.ops[0] == 0),
        "device 1: %lu copies in, %lu out; device 0: %lu calls", c.h2d[1],
        c.d2h[1], c.ops[0]);
  return clean();
}

struct job {
  int dev, put;
  const char *key;
  unsigned seed;
  struct hipobj_mem mem;
  pthread_barrier_t *go;
  int rc;
  char msg[512];
};

static void *run_job(void *arg) {
  struct job *j = arg;
  struct hipobj_error *e = NULL;
  hipobj_error_create(&e);
  pthread_barrier_wait(j->go);
  j->rc = j->put ? hipobj_s3_put(cli, bucket, j->key, &j->mem, NULL, NULL, e)
                 : hipobj_s3_get(cli, bucket, j->key, &j->mem, NULL, NULL, e);
  snprintf(j->msg, sizeof j->msg, "%s", hipobj_error_message(e));
  hipobj_error_free(e);
  return NULL;
}

/* Two threads of one client, one per GPU, released together. */
static int both_at_once(struct job j[2]) {
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, 2);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) {
    j[i].go = &go;
    pthread_create(&t[i], NULL, run_job, &j[i]);
  }
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  pthread_barrier_destroy(&go);
  for (int i = 0; i < 2; i++)
    CHECK(j[i].rc == HIPOBJ_OK, "%s %s device %d: %s", j[i].put ? "PUT" : "GET",
          j[i].key, j[i].dev, j[i].msg);
  return 0;
}

static int case_get_into_both_at_once(void) {
  if (put_host("get-a", 41) || put_host("get-b", 42))
    return -1;
  struct counts c0, c1;
  counts(&c0);
  struct job j[2] = {
      {.dev = 0, .key = "get-a", .seed = 41, .mem = HIPOBJ_MEM_INIT},
      {.dev = 1, .key = "get-b", .seed = 42, .mem = HIPOBJ_MEM_INIT}};
  for (int i = 0; i < 2; i++)
    CHECK_OK(hipobj_gpu_alloc(kind, i, size, &j[i].mem, err), "alloc");
  int rc = both_at_once(j);
  for (int i = 0; i < 2 && !rc; i++)
    rc = verify_gpu(&j[i].mem, j[i].seed);
  for (int i = 0; i < 2; i++)
    hipobj_gpu_free(&j[i].mem);
  if (rc)
    return rc;
  counts(&c1);
  CHECK(!c1.known || (c1.h2d[0] > c0.h2d[0] && c1.h2d[1] > c0.h2d[1]),
        "copies into device 0: %lu, device 1: %lu", c1.h2d[0] - c0.h2d[0],
        c1.h2d[1] - c0.h2d[1]);
  return clean();
}

static int case_put_from_both_at_once(void) {
  struct counts c0, c1;
  counts(&c0);
  struct job j[2] = {
      {.dev = 0, .put = 1, .key = "put-0", .seed = 51, .mem = HIPOBJ_MEM_INIT},
      {.dev = 1, .put = 1, .key = "put-1", .seed = 52, .mem = HIPOBJ_MEM_INIT}};
  int rc = 0;
  for (int i = 0; i < 2 && !rc; i++)
    rc = gpu_pattern(i, size, j[i].seed, &j[i].mem);
  if (!rc)
    rc = both_at_once(j);
  for (int i = 0; i < 2; i++)
    hipobj_gpu_free(&j[i].mem);
  if (rc)
    return rc;
  counts(&c1);
  CHECK(!c1.known || (c1.d2h[0] > c0.d2h[0] && c1.d2h[1] > c0.d2h[1]),
        "copies out of device 0: %lu, device 1: %lu", c1.d2h[0] - c0.d2h[0],
        c1.d2h[1] - c0.d2h[1]);
  for (int i = 0; i < 2; i++)
    if (verify_object(j[i].key, j[i].seed))
      return -1;
  return clean();
}

/* One thread, the asynchronous API: a GET into and a PUT from each GPU,
 * all four in flight together. */
static int case_async_get_and_put_on_both(void) {
  if (put_host("async-a", 61) || put_host("async-b", 62))
    return -1;
  struct hipobj_mem m[4] = {HIPOBJ_MEM_INIT, HIPOBJ_MEM_INIT, HIPOBJ_MEM_INIT,
                            HIPOBJ_MEM_INIT};
  static const char *const keys[4] = {"async-a", "async-b", "async-put-0",
                                      "async-put-1"};
  static const unsigned seeds[4] = {61, 62, 63, 64};
  int rc = 0;
  /* m[0], m[1]: GET into device 1, device 0; m[2], m[3]: PUT from 0, 1. */
  if (hipobj_gpu_alloc(kind, 1, size, &m[0], err) != HIPOBJ_OK ||
      hipobj_gpu_alloc(kind, 0, size, &m[1], err) != HIPOBJ_OK)
    rc = failf("alloc: %s", hipobj_error_message(err));
  if (!rc)
    rc = gpu_pattern(0, size, seeds[2], &m[2]);
  if (!rc)
    rc = gpu_pattern(1, size, seeds[3], &m[3]);
  struct hipobj_xfer *x[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < 4 && !rc; i++) {
    int st = i < 2 ? hipobj_s3_get_start(cli, bucket, keys[i], &m[i], NULL,
                                         NULL, &x[i], err)
                   : hipobj_s3_put_start(cli, bucket, keys[i], &m[i], NULL,
                                         NULL, &x[i], err);
    if (st != HIPOBJ_OK)
      rc = failf("start %s: %s", keys[i], hipobj_error_message(err));
  }
  for (int i = 0; i < 4; i++) {
    if (!x[i])
      continue;
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    int st = hipobj_xfer_wait(x[i], &res, err);
    if (!rc && st != HIPOBJ_OK)
      rc = failf("%s: %s", keys[i], hipobj_error_message(err));
    else if (!rc && res.bytes != size)
      rc = failf("%s: %llu of %zu bytes", keys[i],
                 (unsigned long long)res.bytes, size);
    hipobj_xfer_free(x[i]);
  }
  for (int i = 0; i < 2 && !rc; i++)
    rc = verify_gpu(&m[i], seeds[i]);
  for (int i = 0; i < 4; i++)
    hipobj_gpu_free(&m[i]);
  for (int i = 2; i < 4 && !rc; i++)
    rc = verify_object(keys[i], seeds[i]);
  return rc ? rc : clean();
}

/* The staging pool is one per GPU platform (staging.h): chunks pinned for
 * a transfer through device 0 serve device 1 next (page-locked for every
 * context: a stand-in with MOCK_CUDA_REQUIRE_PINNED=1 refuses them
 * otherwise), and two GPUs at once stay within the one bound. A GET of
 * concurrency 1 is one request holding HSTAGE_MAX_SLOTS chunks. */
static int case_staging_pool_serves_both(void) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = getenv("HIPOBJ_TEST_ENDPOINT");
  cfg.access_key_id = getenv("HIPOBJ_TEST_ACCESS_KEY");
  cfg.secret_access_key = getenv("HIPOBJ_TEST_SECRET_KEY");
  cfg.region = getenv("HIPOBJ_TEST_REGION");
  cfg.addressing = HIPOBJ_ADDRESSING_PATH;
  cfg.part_size = 5 * MiB;
  cfg.staging_chunk_bytes = MiB;
  cfg.staging_pool_bytes = 4 * MiB;
  struct hipobj_client *saved = cli;
  CHECK_OK(hipobj_client_create(&cfg, &cli, err), "client (small pool)");
  int rc = put_host("pool-a", 71);
  if (!rc)
    rc = put_host("pool-b", 72);
  struct job j[2] = {
      {.dev = 0, .key = "pool-a", .seed = 71, .mem = HIPOBJ_MEM_INIT},
      {.dev = 1, .key = "pool-b", .seed = 72, .mem = HIPOBJ_MEM_INIT}};
  for (int i = 0; i < 2 && !rc; i++)
    if (hipobj_gpu_alloc(kind, i, size, &j[i].mem, err) != HIPOBJ_OK)
      rc = failf("alloc: %s", hipobj_error_message(err));
  struct hstage_pool_stats p0, p1, p2;
  /* Device 0 alone, then device 1 alone: no new chunk for device 1. */
  struct hipobj_get_opts one = HIPOBJ_GET_OPTS_INIT;
  one.concurrency = 1;
  if (!rc && hipobj_s3_get(cli, bucket, "pool-a", &j[0].mem, &one, NULL, err) !=
                 HIPOBJ_OK)
    rc = failf("GET into device 0: %s", hipobj_error_message(err));
  hstage_pool_stats(cli->stage_pool, kind, &p0);
  if (!rc && hipobj_s3_get(cli, bucket, "pool-b", &j[1].mem, &one, NULL, err) !=
                 HIPOBJ_OK)
    rc = failf("GET into device 1: %s", hipobj_error_message(err));
  hstage_pool_stats(cli->stage_pool, kind, &p1);
  for (int i = 0; i < 2 && !rc; i++)
    rc = verify_gpu(&j[i].mem, j[i].seed);
  /* Both at once, parts in parallel: more than the pool holds. */
  if (!rc)
    rc = both_at_once(j);
  for (int i = 0; i < 2 && !rc; i++)
    rc = verify_gpu(&j[i].mem, j[i].seed);
  hstage_pool_stats(cli->stage_pool, kind, &p2);
  for (int i = 0; i < 2; i++)
    hipobj_gpu_free(&j[i].mem);
  hipobj_client_free(cli);
  cli = saved;
  if (rc)
    return rc;
  CHECK(p0.max_chunks == 4, "pool of %u chunks, expected 4", p0.max_chunks);
  CHECK(p0.allocated == HSTAGE_MAX_SLOTS,
        "a GET into device 0 pinned %u chunks, expected %d", p0.allocated,
        HSTAGE_MAX_SLOTS);
  CHECK(p1.allocated == p0.allocated,
        "device 1 pinned %u chunks of its own instead of reusing device 0's",
        p1.allocated - p0.allocated);
  CHECK(p2.allocated <= 4 && p2.peak <= 4,
        "%u chunks (peak %u) after both GPUs at once: the bound is 4",
        p2.allocated, p2.peak);
  CHECK(p2.in_use == 0, "%u chunks not given back", p2.in_use);
  return clean();
}

static int case_device_info_of_both(void) {
  struct hipobj_gpu_device_info d[2] = {HIPOBJ_GPU_DEVICE_INFO_INIT,
                                        HIPOBJ_GPU_DEVICE_INFO_INIT};
  for (int i = 0; i < 2; i++) {
    CHECK_OK(hipobj_gpu_device_info(kind, i, &d[i], err), "device info");
    printf("    device %d: %s, PCIe %s, RDMA NIC %s\n", i, d[i].name,
           d[i].pci_bus_id, d[i].rdma_nic[0] ? d[i].rdma_nic : "none");
  }
  CHECK(d[0].pci_bus_id[0] && strcmp(d[0].pci_bus_id, d[1].pci_bus_id),
        "devices 0 and 1 have PCIe ids '%s' and '%s'", d[0].pci_bus_id,
        d[1].pci_bus_id);
  return 0;
}

/* ---- driver -------------------------------------------------------------- */

static const struct {
  const char *name;
  int (*fn)(void);
} cases[] = {
    /* first: nothing may have used device 0 before it */
    {"device1_alone_leaves_device0_context_alone",
     case_device1_leaves_device0_alone},
    {"get_into_two_gpus_at_once", case_get_into_both_at_once},
    {"put_from_two_gpus_at_once", case_put_from_both_at_once},
    {"async_get_and_put_on_both_gpus", case_async_get_and_put_on_both},
    {"staging_pool_serves_both_gpus", case_staging_pool_serves_both},
    {"device_info_of_both", case_device_info_of_both},
};

/* A platform with at least two devices, or 0 with the reasons in why. */
static int pick_platform(void) {
  const char *want = fake ? "cuda" : getenv("HIPOBJ_TEST_GPU_KIND");
  static const struct {
    const char *name;
    enum hipobj_mem_kind kind;
  } plats[] = {{"cuda", HIPOBJ_MEM_CUDA}, {"hip", HIPOBJ_MEM_HIP}};
  size_t used = 0;
  for (size_t i = 0; i < 2; i++) {
    if (want && *want && strcmp(want, plats[i].name))
      continue;
    struct hipobj_gpu_platform_info pi = HIPOBJ_GPU_PLATFORM_INFO_INIT;
    hipobj_gpu_platform_info(plats[i].kind, &pi, err);
    if (pi.available && pi.device_count >= 2) {
      kind = plats[i].kind;
      printf("GPUs: %s, %d devices (%s)\n", plats[i].name, pi.device_count,
             pi.version);
      return 1;
    }
    char one[sizeof pi.reason + 32];
    if (pi.available)
      snprintf(one, sizeof one, "%d device, 2 needed", pi.device_count);
    else
      snprintf(one, sizeof one, "%s", pi.reason);
    int k = snprintf(why + used, sizeof why - used, "%s%s: %s",
                     used ? "; " : "", plats[i].name, one);
    if (k > 0 && (size_t)k < sizeof why - used)
      used += (size_t)k;
  }
  return 0;
}

static int setup(void) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = getenv("HIPOBJ_TEST_ENDPOINT");
  cfg.access_key_id = getenv("HIPOBJ_TEST_ACCESS_KEY");
  cfg.secret_access_key = getenv("HIPOBJ_TEST_SECRET_KEY");
  cfg.region = getenv("HIPOBJ_TEST_REGION");
  cfg.addressing = HIPOBJ_ADDRESSING_PATH;
  cfg.stall_timeout_ms = 60000;
  cfg.part_size = 8 * MiB;
  if (hipobj_client_create(&cfg, &cli, err) != HIPOBJ_OK)
    return failf("client: %s", hipobj_error_message(err));
  snprintf(bucket, sizeof bucket, "hipobj-mgpu-%lx-%lx",
           (unsigned long)time(NULL), (unsigned long)getpid());
  if (hipobj_s3_create_bucket(cli, bucket, err) != HIPOBJ_OK)
    return failf("create bucket %s: %s", bucket, hipobj_error_message(err));
  return 0;
}

static void cleanup_bucket(void) {
  for (int pages = 0; pages < 100; pages++) {
    struct hipobj_list_page *pg = NULL;
    if (hipobj_s3_list(cli, bucket, NULL, &pg, err) != HIPOBJ_OK)
      break;
    size_t n = hipobj_list_page_count(pg);
    for (size_t i = 0; i < n; i++)
      hipobj_s3_delete(cli, bucket, hipobj_list_page_key(pg, i), NULL);
    hipobj_list_page_free(pg);
    if (n == 0)
      break;
  }
  hipobj_s3_delete_bucket(cli, bucket, NULL);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  fake = argc > 1 && !strcmp(argv[1], "--fake");
  hipobj_global_init();
  hipobj_error_create(&err);
  if (fake)
    hgpu_register_fake_for_tests();
  const char *mib = getenv("HIPOBJ_MGPU_MIB");
  size = (mib && *mib ? (size_t)strtoull(mib, NULL, 10) : 64) * MiB + 7;
  const char *require = getenv("HIPOBJ_MGPU_REQUIRE");
  int n_cases = (int)(sizeof cases / sizeof cases[0]);
  const char *endpoint = getenv("HIPOBJ_TEST_ENDPOINT");
  int skip = 0;
  if (!pick_platform()) {
    printf("SKIP: no platform with two GPUs (%s)\n", why);
    skip = 1;
  } else if (!endpoint || !*endpoint) {
    printf("SKIP: HIPOBJ_TEST_ENDPOINT is not set\n");
    skip = 1;
  } else if (setup() != 0) {
    printf("FAIL setup: %s\n0 passed, 1 failed, %d skipped\n", why, n_cases);
    return 1;
  }
  if (skip) {
    printf("0 passed, 0 failed, %d skipped\n", n_cases);
    hipobj_error_free(err);
    hipobj_global_cleanup();
    int must = require && *require == '1';
    if (must)
      printf("FAIL: HIPOBJ_MGPU_REQUIRE=1\n");
    return must ? 1 : SKIP;
  }
  /* The platform loaded it already; NOLOAD finds that copy. */
  if (!fake && kind == HIPOBJ_MEM_CUDA)
    cudal = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  int passed = 0, failed = 0, skipped = 0;
  for (int i = 0; i < n_cases; i++) {
    why[0] = '\0';
    double t0 = now();
    int rc = cases[i].fn();
    if (rc == 0) {
      passed++;
      printf("PASS %s (%.2f s)\n", cases[i].name, now() - t0);
    } else if (rc == SKIP) {
      skipped++;
      printf("SKIP %s: %s\n", cases[i].name, why);
    } else {
      failed++;
      printf("FAIL %s: %s\n", cases[i].name, why);
    }
  }
  cleanup_bucket();
  hipobj_client_free(cli);
  if (cudal)
    dlclose(cudal);
  hipobj_error_free(err);
  hipobj_global_cleanup();
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
