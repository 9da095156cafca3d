/* checksum.h - the CRC32C checksum S3 carries in x-amz-checksum-crc32c
 * (a base64 of its four big-endian bytes), on Intel's ISA-L. Cheap enough to
 * check every byte of an upload where SHA-256 would cost the CPU a PUT
 * needs elsewhere. */
#ifndef HIPOBJ_S3_CHECKSUM_H
#define HIPOBJ_S3_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#define S3_CRC32C_INIT 0u
/* base64 of 4 bytes: 8 characters and the NUL. */
#define S3_CRC32C_B64_LEN 9

/* Extends a running CRC32C (start from S3_CRC32C_INIT) with len bytes;
 * s3_crc32c(s3_crc32c(0, a), b) is the CRC32C of a followed by b. */
uint32_t s3_crc32c(uint32_t crc, const void *data, size_t len);
/* The header value of a CRC32C. */
void s3_crc32c_b64(uint32_t crc, char out[S3_CRC32C_B64_LEN]);

#endif
