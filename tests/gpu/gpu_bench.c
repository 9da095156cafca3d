/* gpu_bench.c - PUT and GET of one object (HIPOBJ_BENCH_MIB, default 1024
 * MiB) between an S3 endpoint and host memory vs GPU memory: five runs
 * each, host and GPU runs alternating (first one, then the other, swapped
 * every run) so that a drifting server (page cache, writeback) weighs on
 * both alike; medians, the GPU/host throughput ratio, and the peak RSS
 * after a GPU-only warm-up PUT and GET (which must stay far below the
 * object size: GPU data is staged through a bounded pinned pool) and after
 * the host runs. Public API only.
 *
 * Environment: HIPOBJ_TEST_ENDPOINT, HIPOBJ_TEST_ACCESS_KEY,
 * HIPOBJ_TEST_SECRET_KEY, HIPOBJ_TEST_REGION, HIPOBJ_TEST_GPU (0),
 * HIPOBJ_TEST_GPU_KIND (cuda|hip), HIPOBJ_BENCH_MIB (1024). Exit status 77
 * without a GPU or endpoint, 1 on a failed transfer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "hipobj.h"

#define RUNS 5
#define MiB ((size_t)1 << 20)

static struct hipobj_client *cli;
static struct hipobj_error *err;
static char bucket[64];

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024; /* KiB on Linux */
}

static void pattern(unsigned char *p, size_t n, size_t off) {
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)((off + i) * 131 + (off + i) / 4099);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

struct row {
  const char *op, *mem;
  double t[RUNS];
  double median;
};

/* One timed transfer of m into run `i` of r; PUT when put, else GET. */
static int measure_one(struct row *r, int i, const char *op, const char *key,
                       const struct hipobj_mem *m, int put) {
  r->op = op;
  r->mem = m->kind == HIPOBJ_MEM_HOST ? "host" : "gpu";
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  double t0 = now();
  int rc = put ? hipobj_s3_put(cli, bucket, key, m, NULL, &res, err)
               : hipobj_s3_get(cli, bucket, key, m, NULL, &res, err);
  r->t[i] = now() - t0;
  if (rc != HIPOBJ_OK || res.bytes != m->len) {
    fprintf(stderr, "gpu_bench: %s %s %s: %s\n", op, r->mem, key,
            hipobj_error_message(err));
    return -1;
  }
  return 0;
}

static void median_of(struct row *r) {
  double s[RUNS];
  memcpy(s, r->t, sizeof s);
  qsort(s, RUNS, sizeof s[0], cmp_double);
  r->median = s[RUNS / 2];
}

/* RUNS of PUT (rows[0] GPU, rows[2] host) then of GET (rows[1], rows[3]),
 * the memory that goes first swapped every run. */
static int measure_alternating(struct row rows[4], const struct hipobj_mem *g,
                               const struct hipobj_mem *h) {
  for (int put = 1; put >= 0; put--)
    for (int i = 0; i < RUNS; i++)
      for (int k = 0; k < 2; k++) {
        int gpu_turn = (i + k) % 2 == 0;
        const struct hipobj_mem *m = gpu_turn ? g : h;
        struct row *r = &rows[(gpu_turn ? 0 : 2) + (put ? 0 : 1)];
        if (measure_one(r, i, put ? "PUT" : "GET",
                        gpu_turn ? "bench-gpu" : "bench-host", m, put) != 0)
          return -1;
      }
  for (int k = 0; k < 4; k++)
    median_of(&rows[k]);
  return 0;
}

static void print_row(const struct row *r, size_t n) {
  printf("%-5s %-5s", r->op, r->mem);
  for (int i = 0; i < RUNS; i++)
    printf(" %7.3f", r->t[i]);
  printf("   median %7.3f s  %8.1f MB/s\n", r->median,
         (double)n / r->median / 1e6);
}

/* Fills device memory with the pattern through one small host buffer. */
static int fill_gpu(const struct hipobj_mem *g) {
  size_t step = 4 * MiB;
  unsigned char *h = malloc(step);
  if (!h)
    return -1;
  int rc = HIPOBJ_OK;
  for (size_t off = 0; off < g->len && rc == HIPOBJ_OK; off += step) {
    size_t n = g->len - off < step ? g->len - off : step;
    pattern(h, n, off);
    struct hipobj_mem hm = hipobj_mem_host(h, n);
    struct hipobj_mem d =
        hipobj_mem_gpu(g->kind, g->device, (char *)g->ptr + off, n);
    rc = hipobj_gpu_copy(&d, &hm, err);
  }
  free(h);
  return rc == HIPOBJ_OK ? 0 : -1;
}

/* Checks the first and last 4 MiB of device memory against the pattern. */
static int check_gpu(const struct hipobj_mem *g) {
  size_t step = g->len < 4 * MiB ? g->len : 4 * MiB;
  unsigned char *h = malloc(step), *w = malloc(step);
  int bad = !h || !w;
  size_t offs[2] = {0, g->len - step};
  for (int i = 0; i < 2 && !bad; i++) {
    struct hipobj_mem hm = hipobj_mem_host(h, step);
    struct hipobj_mem d =
        hipobj_mem_gpu(g->kind, g->device, (char *)g->ptr + offs[i], step);
    pattern(w, step, offs[i]);
    bad = hipobj_gpu_copy(&hm, &d, err) != HIPOBJ_OK || memcmp(h, w, step);
  }
  free(h);
  free(w);
  return bad ? -1 : 0;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *endpoint = getenv("HIPOBJ_TEST_ENDPOINT");
  const char *mib = getenv("HIPOBJ_BENCH_MIB");
  const char *dev_s = getenv("HIPOBJ_TEST_GPU");
  const char *want = getenv("HIPOBJ_TEST_GPU_KIND");
  size_t n = (mib && *mib ? (size_t)strtoull(mib, NULL, 10) : 1024) * MiB;
  int dev = dev_s && *dev_s ? atoi(dev_s) : 0;
  hipobj_global_init();
  hipobj_error_create(&err);
  enum hipobj_mem_kind kind = HIPOBJ_MEM_HOST;
  const enum hipobj_mem_kind kinds[] = {HIPOBJ_MEM_CUDA, HIPOBJ_MEM_HIP};
  const char *names[] = {"cuda", "hip"};
  for (int i = 0; i < 2 && kind == HIPOBJ_MEM_HOST; i++) {
    struct hipobj_gpu_platform_info pi = HIPOBJ_GPU_PLATFORM_INFO_INIT;
    if ((!want || !*want || !strcmp(want, names[i])) &&
        hipobj_gpu_platform_info(kinds[i], &pi, err) == HIPOBJ_OK &&
        pi.available && dev < pi.device_count)
      kind = kinds[i];
  }
  if (kind == HIPOBJ_MEM_HOST || !endpoint || !*endpoint || !n) {
    printf("gpu_bench: skipped (%s)\n", kind == HIPOBJ_MEM_HOST
                                            ? "no CUDA/HIP device"
                                            : "HIPOBJ_TEST_ENDPOINT unset");
    return 77;
  }
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = endpoint;
  cfg.access_key_id = getenv("HIPOBJ_TEST_ACCESS_KEY");
  cfg.secret_access_key = getenv("HIPOBJ_TEST_SECRET_KEY");
  cfg.region = getenv("HIPOBJ_TEST_REGION");
  cfg.addressing = HIPOBJ_ADDRESSING_PATH;
  snprintf(bucket, sizeof bucket, "hipobj-bench-%lx", (unsigned long)getpid());
  if (hipobj_client_create(&cfg, &cli, err) != HIPOBJ_OK ||
      hipobj_s3_create_bucket(cli, bucket, err) != HIPOBJ_OK) {
    fprintf(stderr, "gpu_bench: %s\n", hipobj_error_message(err));
    return 1;
  }
  struct hipobj_gpu_device_info di = HIPOBJ_GPU_DEVICE_INFO_INIT;
  hipobj_gpu_device_info(kind, dev, &di, err);
  printf("gpu_bench: %zu MiB objects, %d runs each, %s device %d (%s, %s), "
         "default integrity (CRC32C parts where the server checks them), "
         "8 MiB parts, the library's default staging "
         "pool and I/O threads\n",
         n / MiB, RUNS, names[kind == HIPOBJ_MEM_HIP], dev, di.name,
         di.pci_bus_id);

  /* A GPU-only warm-up first, so that its peak RSS is not hidden by the
   * host buffer. */
  struct row rows[4], warm;
  struct hipobj_mem g = HIPOBJ_MEM_INIT;
  int rc = hipobj_gpu_alloc(kind, dev, n, &g, err) == HIPOBJ_OK ? 0 : -1;
  long rss_base = peak_rss_mib();
  if (rc == 0)
    rc = fill_gpu(&g);
  if (rc == 0)
    rc = measure_one(&warm, 0, "PUT", "bench-gpu", &g, 1);
  if (rc == 0)
    rc = measure_one(&warm, 0, "GET", "bench-gpu", &g, 0);
  long rss_gpu = peak_rss_mib();

  unsigned char *h = rc == 0 ? malloc(n) : NULL;
  if (rc == 0 && !h)
    rc = -1;
  if (rc == 0) {
    pattern(h, n, 0);
    struct hipobj_mem hm = hipobj_mem_host(h, n);
    rc = measure_alternating(rows, &g, &hm);
  }
  if (rc == 0 && check_gpu(&g) != 0) {
    fprintf(stderr, "gpu_bench: GPU data differs after GET\n");
    rc = -1;
  }
  hipobj_gpu_free(&g);
  free(h);
  long rss_host = peak_rss_mib();
  hipobj_s3_delete(cli, bucket, "bench-gpu", NULL);
  hipobj_s3_delete(cli, bucket, "bench-host", NULL);
  hipobj_s3_delete_bucket(cli, bucket, NULL);
  if (rc != 0) {
    fprintf(stderr, "gpu_bench: failed: %s\n", hipobj_error_message(err));
    return 1;
  }
  printf("op    mem  ");
  for (int i = 0; i < RUNS; i++)
    printf("  run%d s", i + 1);
  printf("\n");
  print_row(&rows[2], n);
  print_row(&rows[0], n);
  print_row(&rows[3], n);
  print_row(&rows[1], n);
  printf("GPU/host throughput ratio: PUT %.2f, GET %.2f\n",
         rows[2].median / rows[0].median, rows[3].median / rows[1].median);
  printf("peak RSS: %ld MiB after GPU runtime start, %ld MiB after a GPU "
         "PUT and GET (no whole-object host copy), %ld MiB after the host "
         "runs (they hold the %zu MiB buffer)\n",
         rss_base, rss_gpu, rss_host, n / MiB);
  hipobj_client_free(cli);
  hipobj_error_free(err);
  hipobj_global_cleanup();
  return 0;
}
