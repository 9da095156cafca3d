/* chunked.c - decodes aws-chunked request bodies (Content-Encoding:
 * aws-chunked), as SDKs send them with x-amz-content-sha256 set to
 * STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER] or
 * STREAMING-UNSIGNED-PAYLOAD-TRAILER:
 *
 *   <hex size>[;chunk-signature=<64 hex>]\r\n<data>\r\n ... 0[;...]\r\n
 *   [<trailer>: <value>\r\n]...\r\n
 *
 * Signed chunks are verified: each signature chains on the previous one,
 * starting from the request's seed signature. Trailers are refused: a
 * request that declares one (x-amz-trailer) is answered 501 before its body
 * (checksums.c), so a trailer line here is one nothing declared, and a
 * checksum in it would go unchecked. Input arrives in arbitrary pieces, so
 * this is a byte-driven state machine. */
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define LINE_MAX_LEN 512

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
  s3_hex(digest, sizeof digest, hex);
  auth_chunk_signature(r, d->prev, hex, want);
  unsigned char diff = strlen(want) != 64;
  for (int i = 0; i < 64 && !diff; i++)
    diff |= (unsigned char)(want[i] ^ d->sig[i]);
  if (diff)
    return req_fail(r, 403, "SignatureDoesNotMatch",
                    "The chunk signature we calculated does not match the "
                    "chunk-signature you provided.");
  memcpy(d->prev, d->sig, sizeof d->prev);
  return 0;
}

static int size_line(struct req *r, struct chunk_dec *d) {
  d->line[d->line_len] = '\0';
  char *end;
  if (!d->line_len || !strchr("0123456789abcdefABCDEF", d->line[0]))
    return bad(r, "bad chunk size line");
  unsigned long long size = strtoull(d->line, &end, 16);
  if (size > SRV_MAX_PUT)
    return bad(r, "chunk too large");
  d->sig[0] = '\0';
  const char *ext = strstr(end, "chunk-signature=");
  if (ext) {
    ext += 16;
    if (strlen(ext) != 64)
      return bad(r, "bad chunk-signature");
    memcpy(d->sig, ext, 65);
  } else if (*end && *end != ';') {
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
        if (d->state == CS_SIZE) {
          if (size_line(r, d) != 0)
            return -1;
        } else if (d->line_len == 0) {
          d->state = CS_DONE; /* the empty line after the last chunk */
        } else {
          return req_fail(r, 501, "NotImplemented",
                          "hipobj-server does not read aws-chunked trailers "
                          "(a trailer line was sent)");
        }
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
