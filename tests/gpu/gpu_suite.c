/* gpu_suite.c - hipObject's GPU memory paths on a real GPU against a real S3
 * endpoint (the local hipobj-server on the GPU machine, see device-run.sh).
 * Needs only the library: no Criterion. Prints one line per case and ends
 * with "N passed, N failed, N skipped"; exits 1 when a case failed, 77 when
 * there is no GPU or no endpoint (nothing could run).
 *
 * Environment: HIPOBJ_TEST_ENDPOINT, HIPOBJ_TEST_ACCESS_KEY,
 * HIPOBJ_TEST_SECRET_KEY, HIPOBJ_TEST_REGION (us-east-1); HIPOBJ_TEST_GPU
 * (device ordinal, default 0) and HIPOBJ_TEST_GPU_KIND (cuda or hip; default
 * the first platform that has the device).
 *
 * Every byte is checked on the GPU side: data is written into device memory
 * by the library, copied back to the host and compared with the expected
 * pattern. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpu_case.h"
#include "hipobj.h"
#include "src/gpu.h"

#define MiB ((size_t)1 << 20)

static struct hipobj_client *cli;
static struct hipobj_error *err;
static enum hipobj_mem_kind kind;
static int dev;
static char bucket[64];

/* ---- helpers ------------------------------------------------------------- */

/* The expected byte at object offset i of object `seed`. */
static unsigned char byte_at(uint64_t i, unsigned seed) {
  uint64_t x = (i / 8 + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32);
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return (unsigned char)(x >> (8 * (i % 8)));
}

static void fill(unsigned char *p, size_t n, uint64_t off, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = byte_at(off + i, seed);
}

/* n bytes of device memory holding pattern `seed` from object offset 0. */
static int gpu_with_pattern(size_t n, unsigned seed, struct hipobj_mem *m) {
  CHECK_OK(hipobj_gpu_alloc(kind, dev, n, m, err), "hipobj_gpu_alloc");
  unsigned char *h = malloc(n ? n : 1);
  CHECK(h, "out of host memory");
  fill(h, n, 0, seed);
  struct hipobj_mem hm = hipobj_mem_host(h, n);
  int rc = hipobj_gpu_copy(m, &hm, err);
  free(h);
  CHECK_OK(rc, "hipobj_gpu_copy to the GPU");
  return 0;
}

/* Copies [off, off+n) of device buffer m back and compares it with pattern
 * `seed` at object offset obj_off. */
static int verify_gpu(const struct hipobj_mem *m, size_t off, size_t n,
                      uint64_t obj_off, unsigned seed) {
  if (n == 0)
    return 0;
  unsigned char *h = malloc(n);
  CHECK(h, "out of host memory");
  struct hipobj_mem hm = hipobj_mem_host(h, n);
  struct hipobj_mem part =
      hipobj_mem_gpu(m->kind, m->device, (char *)m->ptr + off, n);
  int rc = hipobj_gpu_copy(&hm, &part, err);
  if (rc != HIPOBJ_OK) {
    free(h);
    return failf("copy back: %s", hipobj_error_message(err));
  }
  for (size_t i = 0; i < n; i++)
    if (h[i] != byte_at(obj_off + i, seed)) {
      unsigned got = h[i];
      free(h);
      return failf("byte %zu differs: 0x%02x, expected 0x%02x", off + i, got,
                   byte_at(obj_off + i, seed));
    }
  free(h);
  return 0;
}

static int put_gpu(const char *key, const struct hipobj_mem *src,
                   struct hipobj_xfer_result *res) {
  *res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  CHECK_OK(hipobj_s3_put(cli, bucket, key, src, NULL, res, err), key);
  CHECK(res->path == HIPOBJ_PATH_HTTP_STAGED, "PUT path is %s",
        hipobj_data_path_name(res->path));
  CHECK(res->bytes == src->len, "PUT moved %llu of %zu bytes",
        (unsigned long long)res->bytes, src->len);
  return 0;
}

/* PUT pattern `seed` of n bytes from GPU memory, GET it back into fresh GPU
 * memory, verify. */
static int round_trip(const char *key, size_t n, unsigned seed,
                      unsigned *parts) {
  struct hipobj_mem src = HIPOBJ_MEM_INIT, dst = HIPOBJ_MEM_INIT;
  struct hipobj_xfer_result res;
  if (gpu_with_pattern(n, seed, &src) != 0)
    return -1;
  int rc = put_gpu(key, &src, &res);
  hipobj_gpu_free(&src);
  if (rc)
    return rc;
  if (parts)
    *parts = res.parts;
  CHECK_OK(hipobj_gpu_alloc(kind, dev, n, &dst, err), "hipobj_gpu_alloc");
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  rc = hipobj_s3_get(cli, bucket, key, &dst, NULL, &res, err);
  if (rc != HIPOBJ_OK) {
    hipobj_gpu_free(&dst);
    return failf("GET %s: %s", key, hipobj_error_message(err));
  }
  if (res.path != HIPOBJ_PATH_HTTP_STAGED || res.bytes != n) {
    hipobj_gpu_free(&dst);
    return failf("GET: path %s, %llu of %zu bytes",
                 hipobj_data_path_name(res.path), (unsigned long long)res.bytes,
                 n);
  }
  rc = verify_gpu(&dst, 0, n, 0, seed);
  hipobj_gpu_free(&dst);
  return rc;
}

/* ---- cases --------------------------------------------------------------- */

static int case_classify(void) {
  struct hipobj_mem m = HIPOBJ_MEM_INIT, c = HIPOBJ_MEM_INIT;
  CHECK_OK(hipobj_gpu_alloc(kind, dev, MiB, &m, err), "hipobj_gpu_alloc");
  int rc = hipobj_mem_classify((char *)m.ptr + 100, MiB - 100, &c, err);
  int rc2 = hipobj_mem_classify((char *)m.ptr + 100, MiB, &c, err);
  struct hipobj_mem c2 = HIPOBJ_MEM_INIT;
  char host[8];
  int rc3 = hipobj_mem_classify(host, sizeof host, &c2, err);
  hipobj_gpu_free(&m);
  CHECK(rc == HIPOBJ_OK && c.kind == kind && c.device == dev,
        "device memory classified as kind %d device %d (%s)", (int)c.kind,
        c.device, hipobj_strerror(rc));
  CHECK(rc2 == HIPOBJ_E_INVALID_ARGUMENT, "range past the allocation: %s",
        hipobj_strerror(rc2));
  CHECK(rc3 == HIPOBJ_OK && c2.kind == HIPOBJ_MEM_HOST,
        "host memory classified as kind %d", (int)c2.kind);
  return 0;
}

static int case_put_get_whole(void) {
  return round_trip("whole", 3 * MiB + 5, 1, NULL);
}

static int case_get_ranged(void) {
  size_t n = 9 * MiB + 11;
  struct hipobj_mem src = HIPOBJ_MEM_INIT, dst = HIPOBJ_MEM_INIT;
  struct hipobj_xfer_result res;
  if (gpu_with_pattern(n, 2, &src) != 0)
    return -1;
  int rc = put_gpu("ranged", &src, &res);
  hipobj_gpu_free(&src);
  if (rc)
    return rc;
  CHECK_OK(hipobj_gpu_alloc(kind, dev, n, &dst, err), "hipobj_gpu_alloc");
  /* [off, off+len) of the object into the buffer at byte 333. */
  const struct {
    uint64_t off, len;
  } ranges[] = {{0, 1}, {MiB + 3, 2 * MiB + 1}, {4 * MiB, 4 * MiB}, {n - 7, 7}};
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
    struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
    o.has_range = 1;
    o.offset = ranges[i].off;
    o.length = ranges[i].len;
    struct hipobj_mem win =
        hipobj_mem_gpu(kind, dev, (char *)dst.ptr + 333, (size_t)ranges[i].len);
    res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
    rc = hipobj_s3_get(cli, bucket, "ranged", &win, &o, &res, err);
    if (rc == HIPOBJ_OK && res.bytes != ranges[i].len)
      rc = failf("range %zu: %llu bytes", i, (unsigned long long)res.bytes);
    else if (rc != HIPOBJ_OK)
      rc = failf("range %zu: %s", i, hipobj_error_message(err));
    else
      rc = verify_gpu(&dst, 333, (size_t)ranges[i].len, ranges[i].off, 2);
    if (rc)
      break;
  }
  hipobj_gpu_free(&dst);
  return rc;
}

static int case_zero_and_odd_sizes(void) {
  static const size_t sizes[] = {0,           1,           4 * MiB - 1, 4 * MiB,
                                 4 * MiB + 1, 8 * MiB + 1, 12 * MiB + 7};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char key[32];
    snprintf(key, sizeof key, "odd-%zu", sizes[i]);
    if (round_trip(key, sizes[i], 10 + (unsigned)i, NULL) != 0) {
      char inner[sizeof why];
      snprintf(inner, sizeof inner, "%s", why);
      return failf("%zu bytes: %s", sizes[i], inner);
    }
  }
  return 0;
}

static int case_multipart_64mib(void) {
  unsigned parts = 0;
  if (round_trip("mp64", 64 * MiB, 3, &parts) != 0)
    return -1;
  CHECK(parts == 8, "%u parts, expected 8 of 8 MiB", parts);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  CHECK_OK(hipobj_s3_head(cli, bucket, "mp64", &info, err), "HEAD");
  CHECK(info.size == 64 * MiB, "HEAD size %llu", (unsigned long long)info.size);
  return 0;
}

static int case_unsigned_payload_multipart(void) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = getenv("HIPOBJ_TEST_ENDPOINT");
  cfg.access_key_id = getenv("HIPOBJ_TEST_ACCESS_KEY");
  cfg.secret_access_key = getenv("HIPOBJ_TEST_SECRET_KEY");
  cfg.region = getenv("HIPOBJ_TEST_REGION");
  cfg.addressing = HIPOBJ_ADDRESSING_PATH;
  cfg.integrity = HIPOBJ_INTEGRITY_NONE;
  cfg.part_size = 5 * MiB;
  cfg.staging_pool_bytes = 8 * MiB; /* 2 chunks for 4 parts */
  struct hipobj_client *saved = cli;
  CHECK_OK(hipobj_client_create(&cfg, &cli, err), "client (unsigned)");
  unsigned parts = 0;
  int rc = round_trip("unsigned", 17 * MiB + 1, 4, &parts);
  hipobj_client_free(cli);
  cli = saved;
  if (rc)
    return rc;
  CHECK(parts == 4, "%u parts, expected 4", parts);
  return 0;
}

struct slice {
  const struct hipobj_mem *buf;
  uint64_t off, len;
  int rc;
  char msg[512];
};

static void *get_slice(void *arg) {
  struct slice *s = arg;
  struct hipobj_error *e = NULL;
  hipobj_error_create(&e);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.has_range = 1;
  o.offset = s->off;
  o.length = s->len;
  struct hipobj_mem win =
      hipobj_mem_gpu(kind, dev, (char *)s->buf->ptr + s->off, (size_t)s->len);
  s->rc = hipobj_s3_get(cli, bucket, "concurrent", &win, &o, NULL, e);
  snprintf(s->msg, sizeof s->msg, "%s", hipobj_error_message(e));
  hipobj_error_free(e);
  return NULL;
}

static int case_four_threads_one_buffer(void) {
  size_t n = 32 * MiB + 13;
  struct hipobj_mem src = HIPOBJ_MEM_INIT, dst = HIPOBJ_MEM_INIT;
  struct hipobj_xfer_result res;
  if (gpu_with_pattern(n, 5, &src) != 0)
    return -1;
  int rc = put_gpu("concurrent", &src, &res);
  hipobj_gpu_free(&src);
  if (rc)
    return rc;
  CHECK_OK(hipobj_gpu_alloc(kind, dev, n, &dst, err), "hipobj_gpu_alloc");
  struct slice sl[4];
  pthread_t t[4];
  uint64_t q = n / 4;
  for (int i = 0; i < 4; i++) {
    sl[i] = (struct slice){&dst, q * (uint64_t)i, i < 3 ? q : n - 3 * q, 0, ""};
    pthread_create(&t[i], NULL, get_slice, &sl[i]);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < 4 && rc == 0; i++)
    if (sl[i].rc != HIPOBJ_OK)
      rc = failf("thread %d: %s", i, sl[i].msg);
  if (rc == 0)
    rc = verify_gpu(&dst, 0, n, 0, 5);
  hipobj_gpu_free(&dst);
  return rc;
}

static int case_errors(void) {
  struct hipobj_mem small = HIPOBJ_MEM_INIT;
  CHECK_OK(hipobj_gpu_alloc(kind, dev, 1000, &small, err), "alloc");
  int rc = hipobj_s3_get(cli, bucket, "whole", &small, NULL, NULL, err);
  int rc2 = hipobj_s3_get(cli, bucket, "no-such-key", &small, NULL, NULL, err);
  hipobj_gpu_free(&small);
  CHECK(rc == HIPOBJ_E_BUFFER_TOO_SMALL, "too small: %s", hipobj_strerror(rc));
  CHECK(rc2 == HIPOBJ_E_NOT_FOUND, "missing key: %s", hipobj_strerror(rc2));
  return 0;
}

static int case_dmabuf_export(void) {
  struct hipobj_gpu_device_info di = HIPOBJ_GPU_DEVICE_INFO_INIT;
  CHECK_OK(hipobj_gpu_device_info(kind, dev, &di, err), "device info");
  if (!di.dmabuf) {
    snprintf(why, sizeof why, "%s", di.dmabuf_reason);
    return SKIP;
  }
  struct hipobj_mem m = HIPOBJ_MEM_INIT;
  CHECK_OK(hipobj_gpu_alloc(kind, dev, 8 * MiB, &m, err), "alloc");
  int fd = -1;
  uint64_t off = 0;
  struct hipobj_mem part =
      hipobj_mem_gpu(kind, dev, (char *)m.ptr + 4096 + 17, MiB);
  int rc = hgpu_export_dmabuf(&part, &fd, &off, err);
  char link[256] = "";
  struct stat st;
  int st_rc = -1;
  if (rc == HIPOBJ_OK) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(path, link, sizeof link - 1);
    link[k > 0 ? k : 0] = '\0';
    st_rc = fstat(fd, &st);
  }
  if (fd >= 0)
    close(fd);
  hipobj_gpu_free(&m);
  CHECK(rc == HIPOBJ_OK, "export: %s", hipobj_error_message(err));
  CHECK(fd >= 0, "fd %d", fd);
  CHECK(st_rc == 0, "fstat of the dma-buf fd: %s", strerror(errno));
  uint64_t want = (uintptr_t)part.ptr & (uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
  CHECK(off == want, "offset %llu, expected %llu (page-aligned export)",
        (unsigned long long)off, (unsigned long long)want);
  /* A dma-buf's size is the exported range: whole pages around the part. */
  CHECK((uint64_t)st.st_size >= off + MiB,
        "dma-buf of %lld bytes for %zu at %llu", (long long)st.st_size, MiB,
        (unsigned long long)off);
  printf("    dma-buf fd -> %s\n", link);
  CHECK(strstr(link, "dmabuf"), "fd %d is %s, not a dma-buf", fd, link);
  return 0;
}

/* ---- driver -------------------------------------------------------------- */

static const struct {
  const char *name;
  int (*fn)(void);
} cases[] = {
    {"classify", case_classify},
    {"put_get_whole", case_put_get_whole},
    {"get_ranged_into_offsets", case_get_ranged},
    {"zero_and_odd_sizes", case_zero_and_odd_sizes},
    {"multipart_64MiB_8MiB_parts", case_multipart_64mib},
    {"unsigned_payload_multipart_small_pool", case_unsigned_payload_multipart},
    {"four_threads_one_buffer", case_four_threads_one_buffer},
    {"errors", case_errors},
    {"dmabuf_export", case_dmabuf_export},
};

/* The platform that has device `dev`, or 0 with the reasons in why. */
static int pick_gpu(void) {
  const char *want = getenv("HIPOBJ_TEST_GPU_KIND");
  const char *d = getenv("HIPOBJ_TEST_GPU");
  dev = d && *d ? atoi(d) : 0;
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
    if (pi.available && dev < pi.device_count) {
      kind = plats[i].kind;
      printf("GPU: %s device %d (%s)\n", plats[i].name, dev, pi.version);
      return 1;
    }
    int k =
        snprintf(why + used, sizeof why - used, "%s%s: %s", used ? "; " : "",
                 plats[i].name, pi.available ? "no such device" : pi.reason);
    if (k > 0 && (size_t)k < sizeof why - used)
      used += (size_t)k;
  }
  return 0;
}

static int setup_client(void) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = getenv("HIPOBJ_TEST_ENDPOINT");
  cfg.access_key_id = getenv("HIPOBJ_TEST_ACCESS_KEY");
  cfg.secret_access_key = getenv("HIPOBJ_TEST_SECRET_KEY");
  cfg.region = getenv("HIPOBJ_TEST_REGION");
  cfg.addressing = HIPOBJ_ADDRESSING_PATH;
  cfg.stall_timeout_ms = 60000;
  if (hipobj_client_create(&cfg, &cli, err) != HIPOBJ_OK)
    return failf("client: %s", hipobj_error_message(err));
  snprintf(bucket, sizeof bucket, "hipobj-gpu-%lx-%lx",
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
  if (hipobj_s3_delete_bucket(cli, bucket, err) != HIPOBJ_OK)
    printf("note: bucket %s not removed: %s\n", bucket,
           hipobj_error_message(err));
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  hipobj_global_init();
  hipobj_error_create(&err);
  const char *endpoint = getenv("HIPOBJ_TEST_ENDPOINT");
  int n_cases = (int)(sizeof cases / sizeof cases[0]);
  int skip_all = 0;
  if (!pick_gpu()) {
    printf("SKIP: no CUDA/HIP device (%s)\n", why);
    skip_all = 1;
  } else if (!endpoint || !*endpoint) {
    printf("SKIP: HIPOBJ_TEST_ENDPOINT is not set (run tests/gpu/"
           "device-run.sh, or export HIPOBJ_TEST_ENDPOINT/_ACCESS_KEY/"
           "_SECRET_KEY)\n");
    skip_all = 1;
  } else if (setup_client() != 0) {
    printf("FAIL setup: %s\n0 passed, 1 failed, %d skipped\n", why, n_cases);
    return 1;
  }
  if (skip_all) {
    printf("0 passed, 0 failed, %d skipped\n", n_cases);
    hipobj_error_free(err);
    hipobj_global_cleanup();
    return 77;
  }
  int passed = 0, failed = 0, skipped = 0;
  for (int i = 0; i < n_cases; i++) {
    why[0] = '\0';
    double t0 = now();
    int rc = cases[i].fn();
    double dt = now() - t0;
    if (rc == 0) {
      passed++;
      printf("PASS %s (%.2f s)\n", cases[i].name, dt);
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
  hipobj_error_free(err);
  hipobj_global_cleanup();
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
