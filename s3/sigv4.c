/* sigv4.c - AWS Signature Version 4 for S3 as pure staged functions
 * (see sigv4.h). No clock, no I/O: the date and every header are inputs, so
 * each stage can be compared byte for byte with published vectors.
 *
 * The canonical URI is used exactly as given. S3 (unlike other services)
 * neither normalises the path nor encodes it twice, and a signer that
 * "cleans up" "a//b" or "a/./b" signs a different object than it sends. */
#include "sigv4.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "../src/base/codec.h"

#define SIGV4_ALGORITHM "AWS4-HMAC-SHA256"

void s3_sigv4_amz_date(time_t t, char out[17]) {
  struct tm tm;
  if (!gmtime_r(&t, &tm) || strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm) != 16)
    out[0] = '\0';
}

/* "YYYYMMDDTHHMMSSZ": the scope date is its first 8 characters, so a
 * malformed value would silently sign for the wrong day. */
static int valid_amz_date(const char *d) {
  if (!d || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
    return 0;
  for (int i = 0; i < 15; i++)
    if (i != 8 && (d[i] < '0' || d[i] > '9'))
      return 0;
  return 1;
}

/* A scope element (region, service) ends up between '/' in the credential
 * scope and in the Authorization header: keep it to printable, no '/',
 * ',' or spaces, which would make the header ambiguous. */
static int valid_scope_part(const char *s) {
  if (!s || !*s)
    return 0;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c <= ' ' || c >= 0x7f || c == '/' || c == ',' || c == ';')
      return 0;
  }
  return 1;
}

/* RFC 7230 token characters: a header name outside this set cannot be sent,
 * and ':' or ';' would corrupt the canonical form. */
static int valid_header_name(const char *s) {
  if (!s || !*s)
    return 0;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9'))
      continue;
    if (!strchr("!#$%&'*+-.^_`|~", c))
      return 0;
  }
  return 1;
}

struct canon_header {
  const char *name; /* lowercase */
  const char *value;
  size_t index; /* input position: duplicates are joined in input order */
};

static int cmp_canon_header(const void *a, const void *b) {
  const struct canon_header *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Appends the value trimmed, with every inner run of spaces and tabs folded
 * to one space. CR and LF are refused: they would end the header line.
 * The text between runs goes in whole: values are mostly one run (a
 * character at a time was a fifth of a signature's CPU). */
static int append_folded_value(struct hbuf *out, const char *v) {
  if (!v)
    v = "";
  size_t n = strlen(v);
  while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
    n--;
  while (n && (*v == ' ' || *v == '\t')) {
    v++;
    n--;
  }
  if (memchr(v, '\r', n) || memchr(v, '\n', n))
    return -1;
  size_t i = 0;
  while (i < n) {
    size_t run = strcspn(v + i, " \t");
    if (run > n - i)
      run = n - i;
    hbuf_append(out, v + i, run);
    i += run;
    if (i < n) { /* a run of spaces and tabs, not at the end: one space */
      hbuf_putc(out, ' ');
      while (i < n && (v[i] == ' ' || v[i] == '\t'))
        i++;
    }
  }
  return out->oom ? -1 : 0;
}

static void truncate_to(struct hbuf *b, size_t len) {
  if (b && b->data && b->len > len) {
    b->len = len;
    b->data[len] = '\0';
  }
}

int s3_sigv4_canonical_request(const struct s3_sigv4_input *in,
                               struct hbuf *out, struct hbuf *signed_headers) {
  if (!in || !out || !signed_headers || !in->method || !*in->method ||
      !in->payload_hash || !*in->payload_hash ||
      (!in->headers && in->n_headers))
    return -1;
  size_t out_start = out->len, sh_start = signed_headers->len;
  struct canon_header *h = NULL;
  char *names = NULL; /* every lowercase name, one allocation */
  int rc = -1;
  size_t names_len = 0;
  for (size_t i = 0; i < in->n_headers; i++) {
    if (!valid_header_name(in->headers[i].name))
      return -1;
    names_len += strlen(in->headers[i].name) + 1;
  }
  if (in->n_headers) {
    h = calloc(in->n_headers, sizeof *h);
    names = malloc(names_len);
    if (!h || !names)
      goto done;
  }
  char *next = names;
  for (size_t i = 0; i < in->n_headers; i++) {
    h[i].name = next;
    for (const char *p = in->headers[i].name; *p; p++)
      *next++ = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
    *next++ = '\0';
    h[i].value = in->headers[i].value;
    h[i].index = i;
  }
  if (in->n_headers)
    qsort(h, in->n_headers, sizeof *h, cmp_canon_header);

  const char *uri =
      in->canonical_uri && *in->canonical_uri ? in->canonical_uri : "/";
  /* One allocation for a usual request's text, kept under 1 KiB: a first
   * request that large makes glibc consolidate its fast bins each time. */
  hbuf_reserve(out, 480);
  hbuf_printf(out, "%s\n%s\n%s\n", in->method, uri,
              in->canonical_query ? in->canonical_query : "");
  for (size_t i = 0; i < in->n_headers; i++) {
    int dup = i > 0 && strcmp(h[i].name, h[i - 1].name) == 0;
    if (dup) {
      /* Same name again: "name:v1,v2" on the line already started. */
      hbuf_putc(out, ',');
    } else {
      if (i > 0) {
        hbuf_putc(out, '\n');
        hbuf_putc(signed_headers, ';');
      }
      hbuf_puts(out, h[i].name);
      hbuf_putc(out, ':');
      hbuf_puts(signed_headers, h[i].name);
    }
    if (append_folded_value(out, h[i].value) != 0)
      goto done;
  }
  if (in->n_headers)
    hbuf_putc(out, '\n');
  /* The blank line ends the header block even when it is empty. */
  hbuf_printf(out, "\n%s\n%s", hbuf_str(signed_headers) + sh_start,
              in->payload_hash);
  if (out->oom || signed_headers->oom)
    goto done;
  rc = 0;
done:
  if (rc != 0) {
    truncate_to(out, out_start);
    truncate_to(signed_headers, sh_start);
  }
  free(names);
  free(h);
  return rc;
}

int s3_sigv4_string_to_sign(const char *amz_date, const char *region,
                            const char *service, const char *canonical_request,
                            struct hbuf *out) {
  if (!out || !valid_amz_date(amz_date) || !valid_scope_part(region) ||
      !valid_scope_part(service) || !canonical_request)
    return -1;
  char hash[S3_SHA256_HEX_LEN + 1];
  if (s3_sha256_hex(canonical_request, strlen(canonical_request), hash))
    return -1;
  size_t start = out->len;
  if (hbuf_printf(out, SIGV4_ALGORITHM "\n%s\n%.8s/%s/%s/aws4_request\n%s",
                  amz_date, amz_date, region, service, hash) != 0) {
    truncate_to(out, start);
    return -1;
  }
  return 0;
}

int s3_sigv4_signing_key(const char *secret_key, const char *amz_date,
                         const char *region, const char *service,
                         uint8_t out[S3_SHA256_LEN]) {
  if (!secret_key || !valid_amz_date(amz_date) || !valid_scope_part(region) ||
      !valid_scope_part(service))
    return -1;
  /* kSecret = "AWS4" + secret. Everything derived from the secret but the
   * result is wiped before returning so no copy lingers in freed memory or
   * on the stack. */
  size_t sklen = strlen(secret_key);
  char stackkey[256];
  char *ksecret = sklen + 4 <= sizeof stackkey ? stackkey : malloc(sklen + 4);
  if (!ksecret)
    return -1;
  memcpy(ksecret, "AWS4", 4);
  memcpy(ksecret + 4, secret_key, sklen);

  /* Separate buffers per step: input and output never alias. */
  uint8_t kdate[S3_SHA256_LEN], kregion[S3_SHA256_LEN];
  uint8_t kservice[S3_SHA256_LEN];
  int rc =
      s3_hmac_sha256(ksecret, sklen + 4, amz_date, 8, kdate) |
      s3_hmac_sha256(kdate, sizeof kdate, region, strlen(region), kregion) |
      s3_hmac_sha256(kregion, sizeof kregion, service, strlen(service),
                     kservice) |
      s3_hmac_sha256(kservice, sizeof kservice, "aws4_request", 12, out);

  OPENSSL_cleanse(ksecret, sklen + 4);
  if (ksecret != stackkey)
    free(ksecret);
  OPENSSL_cleanse(kdate, sizeof kdate);
  OPENSSL_cleanse(kregion, sizeof kregion);
  OPENSSL_cleanse(kservice, sizeof kservice);
  if (rc)
    OPENSSL_cleanse(out, S3_SHA256_LEN);
  return rc ? -1 : 0;
}

/* out stays "" when OpenSSL fails: the caller reports it. */
static void sign_with_key(const uint8_t key[S3_SHA256_LEN],
                          const char *string_to_sign,
                          char out[S3_SHA256_HEX_LEN + 1]) {
  uint8_t sig[S3_SHA256_LEN];
  out[0] = '\0';
  if (s3_hmac_sha256(key, S3_SHA256_LEN, string_to_sign, strlen(string_to_sign),
                     sig) == 0)
    hhex_encode(sig, sizeof sig, out);
}

void s3_sigv4_signature(const char *secret_key, const char *amz_date,
                        const char *region, const char *service,
                        const char *string_to_sign,
                        char out[S3_SHA256_HEX_LEN + 1]) {
  out[0] = '\0';
  uint8_t ksigning[S3_SHA256_LEN];
  if (!string_to_sign ||
      s3_sigv4_signing_key(secret_key, amz_date, region, service, ksigning))
    return; /* out stays "": the caller reports the failure */
  sign_with_key(ksigning, string_to_sign, out);
  OPENSSL_cleanse(ksigning, sizeof ksigning);
}

void s3_sigv4_key_cache_init(struct s3_sigv4_key_cache *kc) {
  memset(kc, 0, sizeof *kc);
  pthread_mutex_init(&kc->lock, NULL);
}

void s3_sigv4_key_cache_destroy(struct s3_sigv4_key_cache *kc) {
  if (kc->secret) {
    OPENSSL_cleanse(kc->secret, strlen(kc->secret));
    free(kc->secret);
  }
  OPENSSL_cleanse(kc->key, sizeof kc->key);
  pthread_mutex_destroy(&kc->lock);
  memset(kc, 0, sizeof *kc);
}

/* The signature through the cache: the key is derived again only when the
 * date, region, service or secret changed. Falls back to deriving it when
 * the inputs do not fit the cache. */
void s3_sigv4_signature_cached(struct s3_sigv4_key_cache *kc,
                               const char *secret_key, const char *amz_date,
                               const char *region, const char *service,
                               const char *string_to_sign,
                               char out[S3_SHA256_HEX_LEN + 1]) {
  out[0] = '\0';
  if (!kc || !secret_key || !string_to_sign || !valid_amz_date(amz_date) ||
      !valid_scope_part(region) || !valid_scope_part(service) ||
      strlen(region) >= sizeof kc->region ||
      strlen(service) >= sizeof kc->service) {
    s3_sigv4_signature(secret_key, amz_date, region, service, string_to_sign,
                       out);
    return;
  }
  uint8_t key[S3_SHA256_LEN];
  pthread_mutex_lock(&kc->lock);
  int hit = kc->valid && !strncmp(kc->date, amz_date, 8) &&
            !strcmp(kc->region, region) && !strcmp(kc->service, service) &&
            kc->secret && !strcmp(kc->secret, secret_key);
  if (!hit) {
    kc->valid = 0;
    if (!kc->secret || strcmp(kc->secret, secret_key)) {
      if (kc->secret) {
        OPENSSL_cleanse(kc->secret, strlen(kc->secret));
        free(kc->secret);
      }
      kc->secret = strdup(secret_key);
    }
    if (kc->secret && s3_sigv4_signing_key(secret_key, amz_date, region,
                                           service, kc->key) == 0) {
      memcpy(kc->date, amz_date, 8);
      kc->date[8] = '\0';
      strcpy(kc->region, region);
      strcpy(kc->service, service);
      kc->valid = 1;
    }
  }
  int ok = kc->valid;
  if (ok)
    memcpy(key, kc->key, sizeof key);
  pthread_mutex_unlock(&kc->lock);
  if (!ok)
    return; /* out stays "": the caller reports the failure */
  sign_with_key(key, string_to_sign, out);
  OPENSSL_cleanse(key, sizeof key);
}

int s3_sigv4_authorization(const struct s3_sigv4_input *in, struct hbuf *out) {
  if (!in || !out || !valid_scope_part(in->access_key) || !in->secret_key)
    return -1;
  struct hbuf creq = HBUF_INIT, sh = HBUF_INIT, sts = HBUF_INIT;
  char sig[S3_SHA256_HEX_LEN + 1];
  int rc = -1;
  if (s3_sigv4_canonical_request(in, &creq, &sh) != 0 ||
      s3_sigv4_string_to_sign(in->amz_date, in->region, in->service,
                              hbuf_str(&creq), &sts) != 0)
    goto done;
  s3_sigv4_signature_cached(in->key_cache, in->secret_key, in->amz_date,
                            in->region, in->service, hbuf_str(&sts), sig);
  if (strlen(sig) != S3_SHA256_HEX_LEN)
    goto done;
  /* ", " between the parts, as AWS's own SDKs and curl write it; S3
   * accepts the form without spaces too. */
  size_t start = out->len;
  if (hbuf_printf(out,
                  SIGV4_ALGORITHM " Credential=%s/%.8s/%s/%s/aws4_request, "
                                  "SignedHeaders=%s, Signature=%s",
                  in->access_key, in->amz_date, in->region, in->service,
                  hbuf_str(&sh), sig) != 0) {
    truncate_to(out, start);
    goto done;
  }
  rc = 0;
done:
  hbuf_free(&creq);
  hbuf_free(&sh);
  hbuf_free(&sts);
  return rc;
}
