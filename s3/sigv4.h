/* sigv4.h - AWS Signature Version 4 for S3 as pure staged functions:
 * canonical request -> string to sign -> signature -> Authorization header.
 * The clock is an input (amz_date), so every stage is testable against
 * published vectors. */
#ifndef HIPOBJ_S3_SIGV4_H
#define HIPOBJ_S3_SIGV4_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "../src/base/buf.h"
#include "crypto.h"

struct s3_header {
  const char *name;  /* any case; canonicalised to lowercase */
  const char *value; /* leading/trailing spaces trimmed, inner runs folded */
};

/* The signing key depends only on (secret, date, region, service), so a
 * client derives it once a day instead of four HMACs per request. Thread-
 * safe; the cached key and secret are wiped by destroy. */
struct s3_sigv4_key_cache {
  pthread_mutex_t lock;
  int valid;
  char date[9];    /* "20130524" */
  char region[64]; /* longer names are not cached */
  char service[16];
  char *secret; /* copy of the secret the key was derived from */
  uint8_t key[S3_SHA256_LEN];
};
void s3_sigv4_key_cache_init(struct s3_sigv4_key_cache *kc);
void s3_sigv4_key_cache_destroy(struct s3_sigv4_key_cache *kc);

struct s3_sigv4_input {
  const char *method;        /* "GET" */
  const char *canonical_uri; /* already URI-encoded path, e.g. "/b/my%20key" */
  const char
      *canonical_query; /* already canonical (huri_canonical_query) or "" */
  const struct s3_header *headers; /* headers to sign (must include host and
                                      x-amz-date, x-amz-content-sha256) */
  size_t n_headers;
  const char *payload_hash; /* hex SHA-256 or "UNSIGNED-PAYLOAD" */
  const char *amz_date;     /* "20130524T000000Z" */
  const char *region;       /* "us-east-1" */
  const char *service;      /* "s3" */
  const char *access_key;
  const char *secret_key;
  struct s3_sigv4_key_cache *key_cache; /* optional: reuse the signing key */
};

/* "20130524T000000Z" for t (UTC). out must hold 17 bytes. */
void s3_sigv4_amz_date(time_t t, char out[17]);

/* Stage 1. Appends the canonical request to out and the signed header list
 * ("host;x-amz-content-sha256;x-amz-date") to signed_headers. Headers with
 * the same name are joined with ','. */
int s3_sigv4_canonical_request(const struct s3_sigv4_input *in,
                               struct hbuf *out, struct hbuf *signed_headers);
/* Stage 2. "AWS4-HMAC-SHA256\n<date>\n<scope>\n<hex sha256(creq)>". */
int s3_sigv4_string_to_sign(const char *amz_date, const char *region,
                            const char *service, const char *canonical_request,
                            struct hbuf *out);
/* Stage 3a. kSigning = HMAC chain over "AWS4"+secret, date (first 8
 * characters of amz_date), region, service, "aws4_request". 0 or -1. */
int s3_sigv4_signing_key(const char *secret_key, const char *amz_date,
                         const char *region, const char *service,
                         uint8_t out[S3_SHA256_LEN]);
/* Stage 3. Signing key derivation + HMAC; out gets 64 hex chars + NUL. */
void s3_sigv4_signature(const char *secret_key, const char *amz_date,
                        const char *region, const char *service,
                        const char *string_to_sign,
                        char out[S3_SHA256_HEX_LEN + 1]);
/* The same through kc (NULL: no cache): the signing key is derived again
 * only when the day, region, service or secret differ from kc's. */
void s3_sigv4_signature_cached(struct s3_sigv4_key_cache *kc,
                               const char *secret_key, const char *amz_date,
                               const char *region, const char *service,
                               const char *string_to_sign,
                               char out[S3_SHA256_HEX_LEN + 1]);
/* All stages: appends the whole Authorization header value
 * ("AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request,
 *   SignedHeaders=..., Signature=...") to out. */
int s3_sigv4_authorization(const struct s3_sigv4_input *in, struct hbuf *out);

#endif
