/* digest_bench.c - how fast this machine computes the digests an upload
 * or a GET can be checked with: CRC32C (ISA-L, x-amz-checksum-crc32c),
 * CRC-64/NVME (src/base/crc64nvme.c: the RDMA FINAL and
 * x-amz-checksum-crc64nvme; its table code, the reference, and its
 * PCLMULQDQ folding, which crc64nvme() uses where the CPU has it), and
 * OpenSSL's SHA-256 (signed payloads) and MD5 (the server's ETags); and
 * what joining the CRCs of 8 MiB parts costs (crc64nvme_shift, once per
 * part of a parallel GET). A benchmark, not a test: it prints GB/s on one
 * core, best of 20 passes over a 16 MiB buffer (another size in MiB as the
 * first argument). */
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
static void d_crc64_table(const void *p, size_t n) {
  sink += crc64nvme_update_table(0, p, n);
}
static void d_crc64_clmul(const void *p, size_t n) {
  sink += crc64nvme_update_clmul(0, p, n);
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
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
  if (mib == 0 || mib > 4096) {
    fprintf(stderr, "usage: digest_bench [MiB (1..4096, default 16)]\n");
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
  const struct {
    const char *name;
    void (*fn)(const void *, size_t);
  } d[] = {
      {"CRC32C (ISA-L)", d_crc32c},
      {"CRC-64/NVME table", d_crc64_table},
      {crc64nvme_has_clmul() ? "CRC-64/NVME pclmul" : "CRC-64/NVME (no pclmul)",
       d_crc64_clmul},
      {"SHA-256 (OpenSSL)", d_sha256},
      {"MD5 (OpenSSL)", d_md5}};
  printf("digest_bench: %zu MiB, best of 20, one core\n", mib);
  for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) {
    double best = 0;
    for (int r = 0; r < 20; r++) {
      double t0 = now_s();
      d[k].fn(buf, n);
      double gbs = (double)n / (now_s() - t0) / 1e9;
      best = gbs > best ? gbs : best;
    }
    printf("  %-18s %7.2f GB/s  %6.3f s/GiB\n", d[k].name, best,
           1.073741824 / best);
  }
  /* Joining: one shift per part of a parallel GET (8 MiB parts). */
  double t0 = now_s();
  uint64_t acc = 0;
  for (uint64_t i = 0; i < 10000; i++)
    acc ^= crc64nvme_shift(i, (i + 1) << 23);
  sink += acc;
  printf("  %-18s %7.2f us per part, %6.4f s/GiB of 8 MiB parts\n",
         "CRC-64/NVME join", (now_s() - t0) / 10000 * 1e6,
         (now_s() - t0) / 10000 * 128);
  free(buf);
  return 0;
}
