/* digest_bench.c - how fast this machine computes the digests an upload
 * can be checked with: CRC32C (ISA-L, x-amz-checksum-crc32c), CRC-64/NVME
 * (src/base/crc64nvme.c: the RDMA FINAL and x-amz-checksum-crc64nvme), and
 * OpenSSL's SHA-256 (signed payloads) and MD5 (the server's ETags). A
 * benchmark, not a test: it prints GB/s on one core, best of 5 passes
 * over a 64 MiB buffer (a larger size in MiB as the first argument). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "s3/checksum.h"
#include "s3/crypto.h"
#include "src/base/crc64nvme.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink; /* keeps the results alive */

static void d_crc32c(const void *p, size_t n) {
  sink += s3_crc32c(0, p, n);
}
static void d_crc64(const void *p, size_t n) {
  sink += crc64nvme(p, n);
}
static void d_sha256(const void *p, size_t n) {
  uint8_t d[S3_SHA256_LEN];
  s3_sha256(p, n, d);
  sink += d[0];
}
static void d_md5(const void *p, size_t n) {
  uint8_t d[16];
  s3_md5(p, n, d);
  sink += d[0];
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
  if (mib == 0 || mib > 4096) {
    fprintf(stderr, "usage: digest_bench [MiB (1..4096, default 64)]\n");
    return 2;
  }
  size_t n = mib << 20;
  unsigned char *buf = malloc(n);
  if (!buf) {
    fprintf(stderr, "digest_bench: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < n; i++)
    buf[i] = (unsigned char)(i * 2654435761u >> 13);
  static const struct {
    const char *name;
    void (*fn)(const void *, size_t);
  } d[] = {{"CRC32C (ISA-L)", d_crc32c},
           {"CRC-64/NVME", d_crc64},
           {"SHA-256 (OpenSSL)", d_sha256},
           {"MD5 (OpenSSL)", d_md5}};
  printf("digest_bench: %zu MiB, best of 5, one core\n", mib);
  for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) {
    double best = 0;
    for (int r = 0; r < 5; r++) {
      double t0 = now_s();
      d[k].fn(buf, n);
      double gbs = (double)n / (now_s() - t0) / 1e9;
      best = gbs > best ? gbs : best;
    }
    printf("  %-18s %7.2f GB/s  %6.3f s/GiB\n", d[k].name, best,
           1.073741824 / best);
  }
  free(buf);
  return 0;
}
