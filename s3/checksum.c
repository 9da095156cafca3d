/* checksum.c - CRC32C for x-amz-checksum-crc32c through ISA-L, which picks
 * the CPU's fastest routine (SSE4.2/PCLMUL on x86, CRC instructions on
 * ARM) at run time. */
#include "checksum.h"

#include <isa-l/crc.h>
#include <limits.h>

#include "crypto.h"

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

void s3_crc32c_b64(uint32_t crc, char out[S3_CRC32C_B64_LEN]) {
  const uint8_t be[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16),
                         (uint8_t)(crc >> 8), (uint8_t)crc};
  s3_base64(be, sizeof be, out);
}
