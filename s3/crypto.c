/* crypto.c - SHA-256, HMAC-SHA256 and MD5 (one-shot and incremental) for
 * SigV4 and S3 headers, on OpenSSL 3's EVP interface (see crypto.h).
 *
 * OpenSSL fails here only when a digest is unavailable (a provider setup
 * without the default provider, e.g. MD5 under a FIPS-only configuration) or
 * on allocation failure. Every digest function then returns -1 and
 * zero-fills its output, so a caller that ignored the status would still
 * send something no server accepts rather than a plausible digest. */
#include "crypto.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "../src/base/codec.h"

/* SHA-256 fetched once: with OpenSSL 3, passing EVP_sha256() makes every
 * init look the implementation up again, a visible part of the CPU of a
 * small signed request. The fetched object lives as long as the process. */
static const EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void) {
  sha256_md = EVP_MD_fetch(NULL, "SHA2-256", NULL);
}

static const EVP_MD *sha256(void) {
  pthread_once(&sha256_once, sha256_fetch);
  return sha256_md ? sha256_md : EVP_sha256();
}

static int digest(const EVP_MD *md, const void *data, size_t len, uint8_t *out,
                  size_t outlen) {
  unsigned int n = 0;
  /* EVP_Digest reads nothing when len is 0, but wants a non-NULL pointer. */
  if (!data)
    data = "";
  if (!md || EVP_Digest(data, len, out, &n, md, NULL) != 1 || n != outlen) {
    memset(out, 0, outlen);
    return -1;
  }
  return 0;
}

int s3_sha256(const void *data, size_t len, uint8_t out[S3_SHA256_LEN]) {
  return digest(sha256(), data, len, out, S3_SHA256_LEN);
}

int s3_sha256_hex(const void *data, size_t len,
                  char out[S3_SHA256_HEX_LEN + 1]) {
  uint8_t d[S3_SHA256_LEN];
  int rc = s3_sha256(data, len, d);
  hhex_encode(d, sizeof d, out);
  return rc;
}

/* HMAC-SHA256 (RFC 2104) over two digests: OpenSSL 3's HMAC() builds and
 * looks up an EVP_MAC for every call, which costs more than the hashing of
 * a SigV4 string to sign. */
int s3_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
                   uint8_t out[S3_SHA256_LEN]) {
  enum { BLOCK = 64 };
  uint8_t k0[BLOCK], pad[BLOCK], inner[S3_SHA256_LEN];
  unsigned int n = 0, m = 0;
  if (!data)
    data = "";
  if (!key)
    key = "";
  memset(k0, 0, sizeof k0);
  int ok = 1;
  if (keylen > BLOCK)
    ok = s3_sha256(key, keylen, k0) == 0;
  else
    memcpy(k0, key, keylen);
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  const EVP_MD *md = sha256();
  ok = ok && ctx != NULL;
  for (int i = 0; i < BLOCK; i++)
    pad[i] = k0[i] ^ 0x36;
  ok = ok && EVP_DigestInit_ex(ctx, md, NULL) == 1 &&
       EVP_DigestUpdate(ctx, pad, BLOCK) == 1 &&
       EVP_DigestUpdate(ctx, data, len) == 1 &&
       EVP_DigestFinal_ex(ctx, inner, &n) == 1 && n == S3_SHA256_LEN;
  for (int i = 0; i < BLOCK; i++)
    pad[i] = k0[i] ^ 0x5c;
  ok = ok && EVP_DigestInit_ex(ctx, md, NULL) == 1 &&
       EVP_DigestUpdate(ctx, pad, BLOCK) == 1 &&
       EVP_DigestUpdate(ctx, inner, sizeof inner) == 1 &&
       EVP_DigestFinal_ex(ctx, out, &m) == 1 && m == S3_SHA256_LEN;
  EVP_MD_CTX_free(ctx);
  if (!ok)
    memset(out, 0, S3_SHA256_LEN);
  /* The key (a secret or a key derived from it) is not left behind. */
  OPENSSL_cleanse(k0, sizeof k0);
  OPENSSL_cleanse(pad, sizeof pad);
  OPENSSL_cleanse(inner, sizeof inner);
  return ok ? 0 : -1;
}

int s3_md5(const void *data, size_t len, uint8_t out[16]) {
  return digest(EVP_md5(), data, len, out, 16);
}

/* ---- incremental ---------------------------------------------------------
 */

struct stream {
  EVP_MD_CTX *md;
  int failed; /* a failed update poisons the result */
};

static struct stream *stream_begin(const EVP_MD *md) {
  struct stream *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->md = EVP_MD_CTX_new();
  if (!md || !c->md || EVP_DigestInit_ex(c->md, md, NULL) != 1) {
    EVP_MD_CTX_free(c->md);
    free(c);
    return NULL;
  }
  return c;
}

static void stream_update(struct stream *c, const void *data, size_t len) {
  if (c && !c->failed && len && EVP_DigestUpdate(c->md, data, len) != 1)
    c->failed = 1;
}

static int stream_end(struct stream *c, uint8_t *out, size_t outlen) {
  unsigned int n = 0;
  int rc = -1;
  if (c && !c->failed && EVP_DigestFinal_ex(c->md, out, &n) == 1 && n == outlen)
    rc = 0;
  if (rc)
    memset(out, 0, outlen);
  if (c) {
    EVP_MD_CTX_free(c->md);
    free(c);
  }
  return rc;
}

/* The public contexts are the one stream type under two names, so a
 * SHA-256 context cannot be passed where an MD5 one is expected. */
struct s3_sha256_ctx *s3_sha256_begin(void) {
  return (struct s3_sha256_ctx *)stream_begin(sha256());
}

void s3_sha256_update(struct s3_sha256_ctx *c, const void *data, size_t len) {
  stream_update((struct stream *)c, data, len);
}

int s3_sha256_end(struct s3_sha256_ctx *c, uint8_t out[S3_SHA256_LEN]) {
  return stream_end((struct stream *)c, out, S3_SHA256_LEN);
}

struct s3_md5_ctx *s3_md5_begin(void) {
  return (struct s3_md5_ctx *)stream_begin(EVP_md5());
}

void s3_md5_update(struct s3_md5_ctx *c, const void *data, size_t len) {
  stream_update((struct stream *)c, data, len);
}

int s3_md5_end(struct s3_md5_ctx *c, uint8_t out[16]) {
  return stream_end((struct stream *)c, out, 16);
}

void s3_md5_abandon(struct s3_md5_ctx *c) {
  struct stream *st = (struct stream *)c;
  if (st) {
    EVP_MD_CTX_free(st->md);
    free(st);
  }
}
