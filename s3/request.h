/* request.h - builds S3 requests: endpoint parsing, bucket/key addressing,
 * URL and canonical strings, and SigV4 signing of the final header set.
 * Pure (no I/O): the HTTP engine sends what this produces. Extra headers
 * (Range, x-amz-rdma-*, ...) are added before signing so they are covered.
 *
 * Failures are reported in err (NULL allowed) with operation NULL: the
 * message is the bare reason, which the caller names with herr_op(). */
#ifndef HIPOBJ_S3_REQUEST_H
#define HIPOBJ_S3_REQUEST_H

#include <stddef.h>
#include <time.h>

#include "../src/base/buf.h"
#include "../src/base/error.h"
#include "../src/base/uri.h"
#include "sigv4.h"

struct s3_endpoint {
  char *scheme;    /* "http" or "https" */
  char *host;      /* host[:port] exactly as it goes into the Host header */
  char *base_path; /* path prefix of the endpoint without trailing '/', or "" */
  int virtual_hosted; /* bucket goes into the host name */
};

/* Parses "http(s)://host[:port][/path]". addressing: HIPOBJ_ADDRESSING_*;
 * AUTO picks virtual-hosted only for *.amazonaws.com endpoints. A URL it
 * cannot use is HIPOBJ_E_CONFIG (the endpoint is configuration). */
int s3_endpoint_parse(const char *url, int addressing, struct s3_endpoint *ep,
                      struct hipobj_error *err);
void s3_endpoint_free(struct s3_endpoint *ep);

struct s3_creds {
  const char *access_key;
  const char *secret_key;
  const char *session_token;            /* NULL when none */
  int anonymous;                        /* no Authorization header at all */
  struct s3_sigv4_key_cache *key_cache; /* optional (sigv4.h) */
};

#define S3_MAX_PARAMS 8
#define S3_MAX_HEADERS 24

struct s3_request {
  const char *method;
  const char *bucket;        /* NULL: service-level request (ListBuckets) */
  const char *key;           /* NULL: bucket-level request */
  const char *path_override; /* raw canonical path (e.g. "/.hipobj-rc/prepare"),
                                used instead of bucket/key when set */
  struct hparam params[S3_MAX_PARAMS];
  size_t n_params;
  struct s3_header headers[S3_MAX_HEADERS]; /* extra headers to sign and send */
  size_t n_headers;
  const char *payload_hash; /* hex SHA-256, or NULL for UNSIGNED-PAYLOAD */
  int has_body;             /* sends Content-Length (0 too) */
  unsigned long long content_length;
};

/* Adds a header / query parameter (pointers are borrowed). Return -1 when
 * the fixed table is full. */
int s3_request_header(struct s3_request *r, const char *name,
                      const char *value);
int s3_request_param(struct s3_request *r, const char *name, const char *value);

/* What goes on the wire. */
struct s3_signed {
  char *url;
  char **lines; /* "Name: value" header lines, for the HTTP engine */
  size_t n_lines;
};

/* Builds the URL, adds host, x-amz-date, x-amz-content-sha256,
 * x-amz-security-token and signs. `now` is injected for tests. Fails with
 * HIPOBJ_E_INVALID_ARGUMENT naming a header whose value holds a CR or LF
 * (an If-Match, say), else only with HIPOBJ_E_OUT_OF_MEMORY (also when
 * OpenSSL cannot sign). */
int s3_request_sign(const struct s3_request *r, const struct s3_endpoint *ep,
                    const struct s3_creds *creds, const char *region,
                    time_t now, struct s3_signed *out,
                    struct hipobj_error *err);
void s3_signed_free(struct s3_signed *s);

/* Checks a bucket name (3-63 chars, S3 rules relaxed to what path-style
 * servers accept) and key (1..1024 bytes): HIPOBJ_E_INVALID_ARGUMENT with
 * the reason when they break the rules. */
int s3_check_bucket(const char *bucket, struct hipobj_error *err);
int s3_check_key(const char *key, struct hipobj_error *err);
/* The strict rules of AWS for the name of a bucket being created (lower
 * case, no '_', no "..", not an IP address, ...), so that a name AWS and
 * virtual-hosted addressing refuse is not made on a lenient server. */
int s3_check_new_bucket(const char *bucket, struct hipobj_error *err);

#endif
