/* uri.h - percent-encoding the way S3's SigV4 wants it (RFC 3986 unreserved
 * set, uppercase hex), a neutral key/value parameter and the canonical
 * query string built from a list of them. s3/ encodes the paths, queries
 * and URLs it signs and sends with it; rdma/ the X-Amz-Rdma-Target it
 * builds and parses; the same bytes either way. */
#ifndef HIPOBJ_BASE_URI_H
#define HIPOBJ_BASE_URI_H

#include <stddef.h>

#include "buf.h"

/* Appends s[0..n) percent-encoded: A-Z a-z 0-9 - . _ ~ stay, every other
 * byte becomes %XX (uppercase). With keep_slash, '/' stays as is (object key
 * paths: each segment is encoded once, the path is never normalised). */
int huri_encode(struct hbuf *out, const char *s, size_t n, int keep_slash);

/* Decodes %XX sequences (and nothing else: '+' stays '+'). Returns -1 on a
 * malformed escape. */
int huri_decode(struct hbuf *out, const char *s, size_t n);

/* A key/value parameter (an S3 query parameter); value NULL means a bare
 * name ("?uploads"). */
struct hparam {
  const char *name;
  const char *value;
};

/* Appends the canonical query string: each name and value encoded, sorted
 * by encoded name then value, "name=value" joined with '&' (a bare name
 * becomes "name="). The same string is used in the URL. */
int huri_canonical_query(struct hbuf *out, const struct hparam *params,
                         size_t n);

#endif
