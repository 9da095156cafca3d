/* crypto.h - the hashes SigV4 and S3 need (SHA-256, HMAC-SHA256, MD5), on
 * OpenSSL. The only place outside sigv4.c that includes OpenSSL headers.
 * Their hex and base64 forms: src/base/codec.h. */
#ifndef HIPOBJ_S3_CRYPTO_H
#define HIPOBJ_S3_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define S3_SHA256_LEN 32
#define S3_SHA256_HEX_LEN 64 /* without the NUL */

/* Every digest function returns 0, or -1 when OpenSSL failed (the digest
 * unavailable, e.g. MD5 under a FIPS-only provider setup, or no memory);
 * the output is then zero-filled, never a plausible digest. Callers report
 * the failure as theirs ("SHA-256 of the payload failed"). */

int s3_sha256(const void *data, size_t len, uint8_t out[S3_SHA256_LEN]);
int s3_sha256_hex(const void *data, size_t len,
                  char out[S3_SHA256_HEX_LEN + 1]);
int s3_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
                   uint8_t out[S3_SHA256_LEN]);
int s3_md5(const void *data, size_t len, uint8_t out[16]);

/* Incremental SHA-256 and MD5 for bodies fed in pieces. begin returns NULL
 * when out of memory or the digest is unavailable; a failed update makes
 * end fail; end (0 or -1) and abandon free the context (NULL allowed). */
struct s3_sha256_ctx;
struct s3_sha256_ctx *s3_sha256_begin(void);
void s3_sha256_update(struct s3_sha256_ctx *c, const void *data, size_t len);
int s3_sha256_end(struct s3_sha256_ctx *c, uint8_t out[S3_SHA256_LEN]);

struct s3_md5_ctx;
struct s3_md5_ctx *s3_md5_begin(void);
void s3_md5_update(struct s3_md5_ctx *c, const void *data, size_t len);
int s3_md5_end(struct s3_md5_ctx *c, uint8_t out[16]);
void s3_md5_abandon(struct s3_md5_ctx *c);

/* SHA-256 of the empty string, hex. */
#define S3_EMPTY_SHA256                                                        \
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define S3_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"

#endif
