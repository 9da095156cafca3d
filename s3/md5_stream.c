/* md5_stream.c - incremental MD5 on OpenSSL's EVP interface (see
 * md5_stream.h). A failed digest yields zeros, which never equals a real
 * ETag, so a broken provider shows up as BadDigest rather than silence. */
#include "md5_stream.h"

#include <string.h>

#include <openssl/evp.h>

struct s3_md5_ctx {
  EVP_MD_CTX *md;
  int failed;
};

struct s3_md5_ctx *s3_md5_begin(void) {
  struct s3_md5_ctx *c = OPENSSL_zalloc(sizeof *c);
  if (!c)
    return NULL;
  c->md = EVP_MD_CTX_new();
  if (!c->md || EVP_DigestInit_ex(c->md, EVP_md5(), NULL) != 1) {
    EVP_MD_CTX_free(c->md);
    OPENSSL_free(c);
    return NULL;
  }
  return c;
}

void s3_md5_update(struct s3_md5_ctx *c, const void *data, size_t len) {
  if (c && len && EVP_DigestUpdate(c->md, data, len) != 1)
    c->failed = 1;
}

void s3_md5_end(struct s3_md5_ctx *c, uint8_t out[16]) {
  unsigned int n = 0;
  memset(out, 0, 16);
  if (!c)
    return;
  if (c->failed || EVP_DigestFinal_ex(c->md, out, &n) != 1 || n != 16)
    memset(out, 0, 16);
  EVP_MD_CTX_free(c->md);
  OPENSSL_free(c);
}

void s3_md5_abandon(struct s3_md5_ctx *c) {
  if (!c)
    return;
  EVP_MD_CTX_free(c->md);
  OPENSSL_free(c);
}
