/* mgpu_bench.c - one client filling two GPUs at once: GETs of one object
 * of HIPOBJ_BENCH_MIB (default 4096 MiB) per GPU from an S3 endpoint into
 * device memory, and PUTs from it, in three modes:
 *   one    one transfer, GPU 0 alone;
 *   two    two transfers at once, one into GPU 0 and one into GPU 1;
 *   same   two transfers at once, both into GPU 0 (the control: the same
 *          bytes as `two` through one GPU, so that a client or server
 *          limit is told apart from a per-GPU one).
 * Aggregate GB/s = bytes moved / wall time from the start of the first to
 * the end of the last transfer of the mode. HIPOBJ_BENCH_RUNS (default 5)
 * rounds, the modes' order rotating every round so that a drifting server
 * weighs on all alike; medians. The bytes are checked on both GPUs after
 * the first GETs and on the server after the first PUTs: a benchmark of
 * wrong bytes fails. Public API only; blocking calls on one thread per
 * transfer.
 *
 * Environment: HIPOBJ_TEST_ENDPOINT, HIPOBJ_TEST_ACCESS_KEY,
 * HIPOBJ_TEST_SECRET_KEY, HIPOBJ_TEST_REGION, HIPOBJ_TEST_GPU_KIND
 * (cuda|hip), HIPOBJ_BENCH_MIB, HIPOBJ_BENCH_RUNS, HIPOBJ_BENCH_POOL_MIB
 * (staging pool; default the library's), HIPOBJ_BENCH_JSON (a file for one
 * JSON object per row). Exit status 77 with fewer than two GPUs or no
 * endpoint, 1 on a failed transfer or a wrong byte. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hipobj.h"

#define MiB ((size_t)1 << 20)
#define MAX_RUNS 15

static struct hipobj_client *cli;
static struct hipobj_error *err;
static enum hipobj_mem_kind kind;
static char bucket[64];
static size_t size;
static int runs = 5;
/* gpu[0], gpu[1]: one buffer on each GPU; gpu[2]: a second one on GPU 0. */
static struct hipobj_mem gpu[3];

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned char byte_at(size_t i, unsigned seed) {
  return (unsigned char)((i * 131 + i / 4099) ^ (seed * 0x5B));
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

struct xfer {
  int put, buf;
  char key[32];
  pthread_barrier_t *go;
  int rc;
  char msg[512];
};

static void *run_xfer(void *arg) {
  struct xfer *x = arg;
  struct hipobj_error *e = NULL;
  hipobj_error_create(&e);
  pthread_barrier_wait(x->go);
  const struct hipobj_mem *m = &gpu[x->buf];
  x->rc = x->put ? hipobj_s3_put(cli, bucket, x->key, m, NULL, NULL, e)
                 : hipobj_s3_get(cli, bucket, x->key, m, NULL, NULL, e);
  snprintf(x->msg, sizeof x->msg, "%s", hipobj_error_message(e));
  hipobj_error_free(e);
  return NULL;
}

/* The modes: which buffers take part. */
static const struct {
  const char *name, *what;
  int n, bufs[2];
} modes[] = {
    {"one", "1 x GPU 0", 1, {0, 0}},
    {"two", "GPU 0 + GPU 1 at once", 2, {0, 1}},
    {"same", "2 x GPU 0 at once", 2, {0, 2}},
};
#define N_MODES 3

/* One round of a mode; the seconds it took, or -1. */
static double run_mode(int mode, int put) {
  int n = modes[mode].n;
  struct xfer x[2];
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, (unsigned)n + 1);
  pthread_t t[2];
  for (int i = 0; i < n; i++) {
    x[i] = (struct xfer){.put = put, .buf = modes[mode].bufs[i], .go = &go};
    /* GETs read obj-0 / obj-1; PUTs write put-0 / put-1 (every mode: the
     * server holds at most four objects). */
    snprintf(x[i].key, sizeof x[i].key, "%s-%d", put ? "put" : "obj", i);
    pthread_create(&t[i], NULL, run_xfer, &x[i]);
  }
  pthread_barrier_wait(&go);
  double t0 = now();
  for (int i = 0; i < n; i++)
    pthread_join(t[i], NULL);
  double dt = now() - t0;
  pthread_barrier_destroy(&go);
  for (int i = 0; i < n; i++)
    if (x[i].rc != HIPOBJ_OK) {
      fprintf(stderr, "mgpu_bench: %s %s (%s): %s\n", put ? "PUT" : "GET",
              x[i].key, modes[mode].what, x[i].msg);
      return -1;
    }
  return dt;
}

/* Buffer b's bytes against pattern seed, copied back in 256 MiB pieces. */
static int check_gpu(int b, unsigned seed) {
  size_t piece = 256 * MiB;
  unsigned char *h = malloc(piece);
  if (!h)
    return -1;
  for (size_t off = 0; off < size; off += piece) {
    size_t n = size - off < piece ? size - off : piece;
    struct hipobj_mem hm = hipobj_mem_host(h, n);
    struct hipobj_mem part =
        hipobj_mem_gpu(kind, gpu[b].device, (char *)gpu[b].ptr + off, n);
    if (hipobj_gpu_copy(&hm, &part, err) != HIPOBJ_OK) {
      fprintf(stderr, "mgpu_bench: copy back: %s\n", hipobj_error_message(err));
      free(h);
      return -1;
    }
    for (size_t i = 0; i < n; i++)
      if (h[i] != byte_at(off + i, seed)) {
        fprintf(stderr, "mgpu_bench: GPU %d: byte %zu differs\n", gpu[b].device,
                off + i);
        free(h);
        return -1;
      }
  }
  free(h);
  return 0;
}

/* Fills buffer b with pattern seed through a host buffer. */
static int fill_gpu(int b, unsigned seed) {
  size_t piece = 256 * MiB;
  unsigned char *h = malloc(piece);
  if (!h)
    return -1;
  for (size_t off = 0; off < size; off += piece) {
    size_t n = size - off < piece ? size - off : piece;
    for (size_t i = 0; i < n; i++)
      h[i] = byte_at(off + i, seed);
    struct hipobj_mem hm = hipobj_mem_host(h, n);
    struct hipobj_mem part =
        hipobj_mem_gpu(kind, gpu[b].device, (char *)gpu[b].ptr + off, n);
    if (hipobj_gpu_copy(&part, &hm, err) != HIPOBJ_OK) {
      fprintf(stderr, "mgpu_bench: fill: %s\n", hipobj_error_message(err));
      free(h);
      return -1;
    }
  }
  free(h);
  return 0;
}

/* The server's copy of key against pattern seed, in 256 MiB ranges. */
static int check_object(const char *key, unsigned seed) {
  size_t piece = 256 * MiB;
  unsigned char *h = malloc(piece);
  if (!h)
    return -1;
  for (size_t off = 0; off < size; off += piece) {
    size_t n = size - off < piece ? size - off : piece;
    struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
    o.has_range = 1;
    o.offset = off;
    o.length = n;
    struct hipobj_mem hm = hipobj_mem_host(h, n);
    int rc = hipobj_s3_get(cli, bucket, key, &hm, &o, NULL, err);
    for (size_t i = 0; rc == HIPOBJ_OK && i < n; i++)
      if (h[i] != byte_at(off + i, seed))
        rc = -1;
    if (rc != HIPOBJ_OK) {
      fprintf(stderr, "mgpu_bench: %s at %zu: %s\n", key, off,
              rc < 0 ? "wrong bytes" : hipobj_error_message(err));
      free(h);
      return -1;
    }
  }
  free(h);
  return 0;
}

static int pick(void) {
  const char *want = getenv("HIPOBJ_TEST_GPU_KIND");
  static const struct {
    const char *name;
    enum hipobj_mem_kind kind;
  } plats[] = {{"cuda", HIPOBJ_MEM_CUDA}, {"hip", HIPOBJ_MEM_HIP}};
  for (size_t i = 0; i < 2; i++) {
    if (want && *want && strcmp(want, plats[i].name))
      continue;
    struct hipobj_gpu_platform_info pi = HIPOBJ_GPU_PLATFORM_INFO_INIT;
    hipobj_gpu_platform_info(plats[i].kind, &pi, err);
    if (pi.available && pi.device_count >= 2) {
      kind = plats[i].kind;
      printf("mgpu_bench: %s, %d devices (%s)\n", plats[i].name,
             pi.device_count, pi.version);
      return 1;
    }
  }
  return 0;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  hipobj_global_init();
  hipobj_error_create(&err);
  const char *ep = getenv("HIPOBJ_TEST_ENDPOINT");
  if (!ep || !*ep || !pick()) {
    printf("mgpu_bench: SKIP: needs HIPOBJ_TEST_ENDPOINT and two GPUs of "
           "one platform\n");
    return 77;
  }
  const char *e = getenv("HIPOBJ_BENCH_MIB");
  size = (e && *e ? (size_t)strtoull(e, NULL, 10) : 4096) * MiB;
  e = getenv("HIPOBJ_BENCH_RUNS");
  if (e && *e)
    runs = atoi(e) < 1 ? 1 : atoi(e) > MAX_RUNS ? MAX_RUNS : atoi(e);
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = ep;
  cfg.access_key_id = getenv("HIPOBJ_TEST_ACCESS_KEY");
  cfg.secret_access_key = getenv("HIPOBJ_TEST_SECRET_KEY");
  cfg.region = getenv("HIPOBJ_TEST_REGION");
  cfg.addressing = HIPOBJ_ADDRESSING_PATH;
  e = getenv("HIPOBJ_BENCH_POOL_MIB");
  if (e && *e)
    cfg.staging_pool_bytes = (size_t)strtoull(e, NULL, 10) * MiB;
  if (hipobj_client_create(&cfg, &cli, err) != HIPOBJ_OK) {
    fprintf(stderr, "mgpu_bench: client: %s\n", hipobj_error_message(err));
    return 1;
  }
  snprintf(bucket, sizeof bucket, "mgpu-bench-%lx", (unsigned long)getpid());
  int fail = hipobj_s3_create_bucket(cli, bucket, err) != HIPOBJ_OK;
  static const int devs[3] = {0, 1, 0};
  for (int b = 0; b < 3 && !fail; b++) {
    gpu[b] = (struct hipobj_mem)HIPOBJ_MEM_INIT;
    fail = hipobj_gpu_alloc(kind, devs[b], size, &gpu[b], err) != HIPOBJ_OK;
  }
  /* obj-0 and obj-1 (patterns 1 and 2) from GPU 0 and GPU 1; the GETs
   * read them back into the other buffers' GPUs, checked once. */
  fail = fail || fill_gpu(0, 1) || fill_gpu(1, 2);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  for (int i = 0; i < 2 && !fail; i++) {
    char key[16];
    snprintf(key, sizeof key, "obj-%d", i);
    fail =
        hipobj_s3_put(cli, bucket, key, &gpu[i], NULL, &res, err) != HIPOBJ_OK;
  }
  if (fail) {
    fprintf(stderr, "mgpu_bench: setup: %s\n", hipobj_error_message(err));
    return 1;
  }
  printf("mgpu_bench: %zu MiB per transfer, %d runs, data path %s\n",
         size / MiB, runs, hipobj_data_path_name(res.path));
  FILE *json = NULL;
  e = getenv("HIPOBJ_BENCH_JSON");
  if (e && *e && !(json = fopen(e, "w")))
    perror(e);
  printf("%-4s %-24s %12s %12s %12s\n", "op", "mode", "median GB/s", "min GB/s",
         "max GB/s");
  for (int put = 0; put < 2 && !fail; put++) {
    double t[N_MODES][MAX_RUNS];
    for (int r = 0; r < runs && !fail; r++) {
      for (int k = 0; k < N_MODES && !fail; k++) {
        int m = (k + r) % N_MODES; /* rotating order */
        double dt = run_mode(m, put);
        fail = dt < 0;
        t[m][r] = dt;
        /* A wrong byte makes every figure worthless: checked once. */
        if (!fail && r == 0 && !put && m == 1)
          fail = check_gpu(0, 1) || check_gpu(1, 2);
        if (!fail && r == 0 && put && m == 1)
          fail = check_object("put-0", 1) || check_object("put-1", 2);
      }
    }
    for (int m = 0; m < N_MODES && !fail; m++) {
      double s[MAX_RUNS];
      memcpy(s, t[m], sizeof s[0] * (size_t)runs);
      qsort(s, (size_t)runs, sizeof s[0], cmp_double);
      double med = runs % 2 ? s[runs / 2] : (s[runs / 2 - 1] + s[runs / 2]) / 2;
      double bytes = (double)size * modes[m].n;
      printf("%-4s %-24s %12.2f %12.2f %12.2f\n", put ? "PUT" : "GET",
             modes[m].what, bytes / med / 1e9, bytes / s[runs - 1] / 1e9,
             bytes / s[0] / 1e9);
      if (json) {
        fprintf(json,
                "{\"op\":\"%s\",\"mode\":\"%s\",\"transfers\":%d,"
                "\"bytes_each\":%zu,\"runs\":%d,\"median_s\":%.4f,"
                "\"median_gbps\":%.3f,\"seconds\":[",
                put ? "put" : "get", modes[m].name, modes[m].n, size, runs, med,
                bytes / med / 1e9);
        for (int r = 0; r < runs; r++)
          fprintf(json, "%s%.4f", r ? "," : "", t[m][r]);
        fprintf(json, "]}\n");
      }
    }
  }
  if (json)
    fclose(json);
  for (int b = 0; b < 3; b++)
    hipobj_gpu_free(&gpu[b]);
  static const char *const keys[] = {"obj-0", "obj-1", "put-0", "put-1"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    hipobj_s3_delete(cli, bucket, keys[i], NULL);
  hipobj_s3_delete_bucket(cli, bucket, NULL);
  hipobj_client_free(cli);
  hipobj_error_free(err);
  hipobj_global_cleanup();
  printf("mgpu_bench: %s\n", fail ? "FAILED" : "done");
  return fail ? 1 : 0;
}
