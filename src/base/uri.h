/* uri.h - S3's URI encoding (RFC 3986 unreserved set, uppercase hex), used
 * for canonical paths, query strings and the URLs sent. */
#ifndef HIPOBJ_S3_URI_H
#define HIPOBJ_S3_URI_H

#include <stddef.h>

#include "buf.h"

/* Appends s[0..n) percent-encoded: A-Z a-z 0-9 - . _ ~ stay, every other
 * byte becomes %XX (uppercase). With keep_slash, '/' stays as is (object key
 * paths: each segment is encoded once, the path is never normalised). */
int s3_uri_encode(struct hbuf *out, const char *s, size_t n, int keep_slash);

/* Decodes %XX sequences (and nothing else: '+' stays '+'). Returns -1 on a
 * malformed escape. */
int s3_uri_decode(struct hbuf *out, const char *s, size_t n);

/* A query parameter; value NULL means a bare name ("?uploads"). */
struct s3_param {
  const char *name;
  const char *value;
};

/* Appends the canonical query string: each name and value encoded, sorted
 * by encoded name then value, "name=value" joined with '&' (a bare name
 * becomes "name="). The same string is used in the URL. */
int s3_canonical_query(struct hbuf *out, const struct s3_param *params,
                       size_t n);

#endif
