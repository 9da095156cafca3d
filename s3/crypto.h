/* crypto.h - the hashes SigV4 and S3 need (SHA-256, HMAC-SHA256, MD5, base64),
 * on OpenSSL. The only place outside sigv4.c that includes OpenSSL headers. */
#ifndef HIPOBJ_S3_CRYPTO_H
#define HIPOBJ_S3_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define S3_SHA256_LEN 32
#define S3_SHA256_HEX_LEN 64 /* without the NUL */

/* Lowercase hex of `len` bytes into out (2*len+1 bytes). */
void s3_hex(const uint8_t *in, size_t len, char *out);
void s3_sha256(const void *data, size_t len, uint8_t out[S3_SHA256_LEN]);
void s3_sha256_hex(const void *data, size_t len,
                   char out[S3_SHA256_HEX_LEN + 1]);
void s3_hmac_sha256(const void *key, size_t keylen, const void *data,
                    size_t len, uint8_t out[S3_SHA256_LEN]);
void s3_md5(const void *data, size_t len, uint8_t out[16]);
/* Standard base64 with padding; out must hold 4*ceil(len/3)+1 bytes.
 * Returns the encoded length. */
size_t s3_base64(const uint8_t *in, size_t len, char *out);

/* Incremental SHA-256 for bodies fed in pieces. */
struct s3_sha256_ctx;
struct s3_sha256_ctx *s3_sha256_begin(void);
void s3_sha256_update(struct s3_sha256_ctx *c, const void *data, size_t len);
/* Frees the context. */
void s3_sha256_end(struct s3_sha256_ctx *c, uint8_t out[S3_SHA256_LEN]);

/* SHA-256 of the empty string, hex. */
#define S3_EMPTY_SHA256                                                        \
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define S3_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"

#endif
