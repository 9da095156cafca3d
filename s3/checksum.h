/* checksum.h - the CRCs S3 carries in x-amz-checksum-crc32, -crc32c and
 * -crc64nvme (a base64 of their big-endian bytes: 4, 4 and 8), CRC32 and
 * CRC32C on Intel's ISA-L, CRC64NVME on src/base/crc64nvme.c (the one the
 * hipobj-rc-v2 FINAL carries). Cheap enough to check every byte of an
 * upload where SHA-256 would cost the CPU a PUT needs elsewhere.
 *
 * Every CRC chains like zlib's crc32(): start from 0 (the *_INIT values),
 * and s3_crcX(s3_crcX(0, a), b) is the CRC of a followed by b, so bodies
 * can be fed in pieces. */
#ifndef HIPOBJ_S3_CHECKSUM_H
#define HIPOBJ_S3_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#define S3_CRC32C_INIT 0u
#define S3_CRC32_INIT 0u
#define S3_CRC64NVME_INIT 0u
/* base64 of 4 bytes: 8 characters and the NUL. */
#define S3_CRC32C_B64_LEN 9
#define S3_CRC32_B64_LEN S3_CRC32C_B64_LEN
/* base64 of 8 bytes: 12 characters and the NUL. */
#define S3_CRC64NVME_B64_LEN 13

/* CRC-32C (Castagnoli, iSCSI): check("123456789") = 0xE3069283. */
uint32_t s3_crc32c(uint32_t crc, const void *data, size_t len);
/* CRC-32/ISO-HDLC (zlib's, gzip's): check("123456789") = 0xCBF43926. */
uint32_t s3_crc32(uint32_t crc, const void *data, size_t len);
/* CRC-64/NVME: check("123456789") = 0xAE8B14860A799888. */
uint64_t s3_crc64nvme(uint64_t crc, const void *data, size_t len);

/* The header value of a 4-byte CRC (CRC32C or CRC32). */
void s3_crc32c_b64(uint32_t crc, char out[S3_CRC32C_B64_LEN]);
void s3_crc32_b64(uint32_t crc, char out[S3_CRC32_B64_LEN]);
/* The header value of a CRC64NVME. */
void s3_crc64nvme_b64(uint64_t crc, char out[S3_CRC64NVME_B64_LEN]);

/* Header values back to CRCs: exactly the canonical base64 of 4 (8)
 * bytes, the unused low bits zero, so that each value has one spelling and
 * stored values compare as strings. 0, or -1 for anything else. */
int s3_crc32_parse_b64(const char *b64, uint32_t *out);
int s3_crc64nvme_parse_b64(const char *b64, uint64_t *out);

#endif
