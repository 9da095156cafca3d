/* checksum.c - the CRCs of S3's flexible checksums: CRC32C and CRC32
 * through ISA-L, which picks the CPU's fastest routine (SSE4.2/PCLMUL on
 * x86, CRC instructions on ARM) at run time; CRC64NVME through
 * src/base/crc64nvme.c (slice-by-16, shared with rdma/) rather than a third
 * implementation. */
#include "checksum.h"

#include <isa-l/crc.h>
#include <limits.h>
#include <string.h>

#include "../src/base/codec.h"
#include "../src/base/crc64nvme.h"

uint32_t s3_crc32c(uint32_t crc, const void *data, size_t len) {
  /* ISA-L keeps the register uninverted and takes an int length: invert
   * around the call, feed at most INT_MAX bytes at a time. */
  unsigned int reg = ~crc;
  const unsigned char *p = data;
  while (len > 0) {
    int n = len > INT_MAX ? INT_MAX : (int)len;
    reg = crc32_iscsi((unsigned char *)p, n, reg);
    p += n;
    len -= (size_t)n;
  }
  return ~reg;
}

uint32_t s3_crc32(uint32_t crc, const void *data, size_t len) {
  /* Unlike crc32_iscsi, crc32_gzip_refl inverts on the way in and out
   * itself (zlib's convention) and takes a 64-bit length. */
  return len ? crc32_gzip_refl(crc, data, len) : crc;
}

uint64_t s3_crc64nvme(uint64_t crc, const void *data, size_t len) {
  /* crc64nvme.h keeps the running state inverted (init ~0, xorout ~0):
   * the state of a finished CRC is its complement. */
  return crc64nvme_final(crc64nvme_update(~crc, data, len));
}

void s3_crc32c_b64(uint32_t crc, char out[S3_CRC32C_B64_LEN]) {
  const uint8_t be[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16),
                         (uint8_t)(crc >> 8), (uint8_t)crc};
  hb64_encode(be, sizeof be, out);
}

void s3_crc32_b64(uint32_t crc, char out[S3_CRC32_B64_LEN]) {
  s3_crc32c_b64(crc, out);
}

void s3_crc64nvme_b64(uint64_t crc, char out[S3_CRC64NVME_B64_LEN]) {
  crc64nvme_to_base64(crc, out);
}

int s3_crc32_parse_b64(const char *b64, uint32_t *out) {
  uint8_t be[4];
  if (!b64 || hb64_decode(b64, strlen(b64), be, sizeof be) != 0)
    return -1;
  *out = (uint32_t)be[0] << 24 | (uint32_t)be[1] << 16 | (uint32_t)be[2] << 8 |
         be[3];
  return 0;
}

int s3_crc64nvme_parse_b64(const char *b64, uint64_t *out) {
  return b64 ? crc64nvme_from_base64(b64, strlen(b64), out) : -1;
}
