/* chunked.c - decodes aws-chunked request bodies (Content-Encoding:
 * aws-chunked), as SDKs send them with x-amz-content-sha256 set to
 * STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER] or
 * STREAMING-UNSIGNED-PAYLOAD-TRAILER:
 *
 *   <hex size>[;chunk-signature=<64 hex>]\r\n<data>\r\n ... 0[;...]\r\n
 *   [<trailer>:<value>\r\n]...[x-amz-trailer-signature:<64 hex>\r\n]\r\n
 *
 * Signed chunks are verified: each signature chains on the previous one,
 * starting from the request's seed signature. Trailer lines go to
 * checksums.c, which takes only the x-amz-checksum-* that x-amz-trailer
 * declared (anything else would go unchecked: an error). A signed trailer
 * (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER) ends with its signature,
 * which chains on the final chunk's and covers the lines before it in
 * their canonical form, "name:value\n" each (AWS's "trailing headers"
 * SigV4). Input arrives in arbitrary pieces, so this is a byte-driven
 * state machine. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server.h"
#include "src/base/codec.h"

#define LINE_MAX_LEN 512
#define TRAILERS_MAX 1024 /* canonical trailer lines kept for the signature */

enum { CS_SIZE, CS_DATA, CS_DATA_CR, CS_DATA_LF, CS_TRAILER, CS_DONE };

struct chunk_dec {
  int verify;
  int state;
  char line[LINE_MAX_LEN];
  size_t line_len;
  uint64_t left;
  char sig[65];  /* the signature announced for the current chunk */
  char prev[65]; /* the previous chunk's (or the seed) signature */
  struct s3_sha256_ctx *sha;
  char trailers[TRAILERS_MAX]; /* "name:value\n" of the trailer lines */
  size_t trailers_len;
  int trailer_signed; /* x-amz-trailer-signature was read and checked */
};

struct chunk_dec *chunk_new(int verify) {
  struct chunk_dec *d = calloc(1, sizeof *d);
  if (d)
    d->verify = verify;
  return d;
}

void chunk_free(struct chunk_dec *d) {
  if (!d)
    return;
  if (d->sha) {
    uint8_t junk[S3_SHA256_LEN];
    s3_sha256_end(d->sha, junk);
  }
  free(d);
}

int chunk_complete(const struct chunk_dec *d) {
  return d && d->state == CS_DONE;
}

static int bad(struct req *r, const char *what) {
  return req_fail(r, 400, "IncompleteBody",
                  "The aws-chunked body is malformed: %s", what);
}

/* Signatures compared without an early exit on the first difference. */
static int ct_equal64(const char *a, const char *b) {
  if (strlen(a) != 64 || strlen(b) != 64)
    return 0;
  unsigned char diff = 0;
  for (int i = 0; i < 64; i++)
    diff |= (unsigned char)(a[i] ^ b[i]);
  return diff == 0;
}

/* Checks the signature of the chunk whose data hashed to d->sha. */
static int check_chunk(struct req *r, struct chunk_dec *d) {
  uint8_t digest[S3_SHA256_LEN];
  char hex[65], want[65];
  if (d->sha)
    s3_sha256_end(d->sha, digest);
  else
    s3_sha256("", 0, digest);
  d->sha = NULL;
  if (!d->verify)
    return 0;
  hhex_encode(digest, sizeof digest, hex);
  auth_chunk_signature(r, d->prev, hex, want);
  if (!ct_equal64(want, d->sig))
    return req_fail(r, 403, "SignatureDoesNotMatch",
                    "The chunk signature we calculated does not match the "
                    "chunk-signature you provided.");
  memcpy(d->prev, d->sig, sizeof d->prev);
  return 0;
}

static int bad_trailer(struct req *r, const char *what) {
  return req_fail(r, 400, "MalformedTrailerError",
                  "The request contained trailing data that was not "
                  "well-formed or did not conform to our published schema: "
                  "%s",
                  what);
}

static int signed_trailer(const struct req *r) {
  return r->pay == PAY_CHUNKED_SIGNED && r->pay_trailer;
}

static char *trim(char *s) {
  s += strspn(s, " \t");
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    s[--n] = '\0';
  return s;
}

/* x-amz-trailer-signature: over the canonical lines before it. */
static int trailer_signature(struct req *r, struct chunk_dec *d,
                             const char *sig) {
  if (!signed_trailer(r))
    return bad_trailer(r, "x-amz-trailer-signature in an unsigned trailer");
  uint8_t digest[S3_SHA256_LEN];
  char hex[65], want[65];
  s3_sha256(d->trailers, d->trailers_len, digest);
  hhex_encode(digest, sizeof digest, hex);
  auth_trailer_signature(r, d->prev, hex, want);
  if (!ct_equal64(want, sig))
    return req_fail(r, 403, "SignatureDoesNotMatch",
                    "The trailer signature we calculated does not match the "
                    "x-amz-trailer-signature you provided.");
  d->trailer_signed = 1;
  return 0;
}

/* The empty line that ends the body. */
static int trailer_end(struct req *r, struct chunk_dec *d) {
  if (signed_trailer(r) && d->trailers_len && !d->trailer_signed)
    return bad_trailer(r, "the signed trailer has no "
                          "x-amz-trailer-signature");
  if (cks_trailer_end(r) != 0)
    return -1;
  d->state = CS_DONE;
  return 0;
}

/* One line after the final chunk (in d->line, without its CRLF). */
static int trailer_line(struct req *r, struct chunk_dec *d) {
  d->line[d->line_len] = '\0';
  if (d->line_len == 0)
    return trailer_end(r, d);
  char *colon = strchr(d->line, ':');
  if (!colon)
    return bad_trailer(r, "a trailer line without a colon");
  if (d->trailer_signed)
    return bad_trailer(r, "a trailer line after x-amz-trailer-signature");
  *colon = '\0';
  char *name = trim(d->line), *value = trim(colon + 1);
  if (!strcasecmp(name, "x-amz-trailer-signature"))
    return trailer_signature(r, d, value);
  if (cks_trailer_line(r, name, value) != 0)
    return -1;
  size_t nl = strlen(name), vl = strlen(value);
  if (d->trailers_len + nl + vl + 2 > sizeof d->trailers)
    return bad_trailer(r, "too many trailer lines");
  char *out = d->trailers + d->trailers_len;
  for (size_t i = 0; i < nl; i++) /* SigV4 names are lower case */
    out[i] =
        (name[i] >= 'A' && name[i] <= 'Z') ? (char)(name[i] + 32) : name[i];
  out[nl] = ':';
  memcpy(out + nl + 1, value, vl);
  out[nl + 1 + vl] = '\n';
  d->trailers_len += nl + vl + 2;
  return 0;
}

/* "<hex size>[;chunk-signature=<64 hex>]" and nothing else: strtoull
 * would also take "0x5" (and a NUL as the first byte made it read an
 * empty line as the final chunk), which another reader of the same bytes
 * would frame differently. */
static int size_line(struct req *r, struct chunk_dec *d) {
  d->line[d->line_len] = '\0';
  size_t digits = 0;
  uint64_t size = 0;
  while (digits < d->line_len &&
         hhex_value((unsigned char)d->line[digits]) >= 0 && digits < 16)
    size = size << 4 | (uint64_t)hhex_value((unsigned char)d->line[digits++]);
  const char *end = d->line + digits;
  if (digits == 0 || (size_t)(end - d->line) > d->line_len)
    return bad(r, "bad chunk size line");
  if (size > SRV_MAX_PUT)
    return bad(r, "chunk too large");
  d->sig[0] = '\0';
  static const char ext[] = ";chunk-signature=";
  if (!strncmp(end, ext, sizeof ext - 1)) {
    const char *sig = end + sizeof ext - 1;
    size_t n = d->line_len - (size_t)(sig - d->line);
    for (size_t i = 0; i < n; i++)
      if (hhex_value((unsigned char)sig[i]) < 0)
        n = 0;
    if (n != 64)
      return bad(r, "bad chunk-signature");
    memcpy(d->sig, sig, 65);
  } else if ((size_t)(end - d->line) != d->line_len) {
    return bad(r, "bad chunk size line");
  }
  if (d->verify && !d->sig[0])
    return bad(r, "chunk without chunk-signature");
  d->left = size;
  d->sha = d->verify ? s3_sha256_begin() : NULL;
  if (d->verify && !d->sha)
    return req_fail(r, 500, "InternalError", "out of memory");
  if (size == 0) {
    if (check_chunk(r, d) != 0)
      return -1;
    d->state = CS_TRAILER;
  } else {
    d->state = CS_DATA;
  }
  return 0;
}

int chunk_feed(struct req *r, struct chunk_dec *d, const char *data, size_t n,
               int (*emit)(struct req *, const char *, size_t)) {
  if (!d->prev[0])
    memcpy(d->prev, r->seed_sig, sizeof d->prev);
  size_t i = 0;
  while (i < n) {
    switch (d->state) {
    case CS_SIZE:
    case CS_TRAILER: {
      char c = data[i++];
      if (c == '\n' && d->line_len && d->line[d->line_len - 1] == '\r') {
        d->line_len--;
        if ((d->state == CS_SIZE ? size_line(r, d) : trailer_line(r, d)) != 0)
          return -1;
        d->line_len = 0;
      } else if (d->line_len + 1 >= LINE_MAX_LEN) {
        return bad(r, "line too long");
      } else {
        d->line[d->line_len++] = c;
      }
      break;
    }
    case CS_DATA: {
      size_t k = n - i;
      if (k > d->left)
        k = (size_t)d->left;
      if (d->sha)
        s3_sha256_update(d->sha, data + i, k);
      if (emit(r, data + i, k) != 0)
        return -1;
      i += k;
      d->left -= k;
      if (d->left == 0) {
        if (check_chunk(r, d) != 0)
          return -1;
        d->state = CS_DATA_CR;
      }
      break;
    }
    case CS_DATA_CR:
      if (data[i++] != '\r')
        return bad(r, "chunk data not followed by CRLF");
      d->state = CS_DATA_LF;
      break;
    case CS_DATA_LF:
      if (data[i++] != '\n')
        return bad(r, "chunk data not followed by CRLF");
      d->state = CS_SIZE;
      break;
    default:
      return bad(r, "data after the final chunk");
    }
  }
  return 0;
}
