/* md5_stream.h - incremental MD5 for bodies that arrive in pieces (the S3
 * ETag of a streamed upload), beside crypto.h's one-shot s3_md5(). Used by
 * hipobj-server; kept in s3/ because it needs OpenSSL. */
#ifndef HIPOBJ_S3_MD5_STREAM_H
#define HIPOBJ_S3_MD5_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct s3_md5_ctx;

/* NULL when out of memory (or MD5 is unavailable, e.g. FIPS-only). */
struct s3_md5_ctx *s3_md5_begin(void);
void s3_md5_update(struct s3_md5_ctx *c, const void *data, size_t len);
/* Writes the digest and frees the context. */
void s3_md5_end(struct s3_md5_ctx *c, uint8_t out[16]);
/* Frees the context without a digest (failed uploads). NULL is allowed. */
void s3_md5_abandon(struct s3_md5_ctx *c);

#endif
