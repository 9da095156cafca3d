/* rc_server.h - the server role of hipobj-rc-v2 (wire spec
 * shared/docs/rdma-wire-protocol.md, §3.4-3.8, §4.4, §5, §6.2, §6.4) as a
 * library-internal engine that an S3 server program calls from its HTTP
 * handlers: PREPARE, READY (blocking through the data phase, at most T_exec)
 * and CANCEL, a session table with a reaper thread (T_prep), staging
 * buffers registered with minimal rights, FINAL with byte count, cookie
 * echo, ETag and CRC64NVME in both header forms, and limits.
 *
 * What stays with the server program: HTTP, SigV4 verification (including
 * "every x-amz-rdma-* header signed", §3.3), who the principal is, and the
 * objects themselves, reached through struct rdma_server_backend. Answers
 * come back as plain data (status, S3 error code and message for the XML
 * body, headers); every answer has Content-Length and no chunking (§3.1).
 *
 * Thread-safe: handlers of many connections call in at once. No verbs
 * header is included. */
#ifndef HIPOBJ_RDMA_RC_SERVER_H
#define HIPOBJ_RDMA_RC_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "rc_client.h" /* struct rdma_header */
#include "token.h"

struct hipobj_error;
struct rdma_server;

struct rdma_server_opts {
  const char *device;    /* NULL: choose (rdma/select.c rules) */
  unsigned port;         /* 0: choose */
  int gid_index;         /* -1: choose */
  unsigned mtu;          /* 0: the port's active_mtu */
  int use_environ;       /* honour HIPOBJ_RDMA_DEVICE / _GID_INDEX */
  unsigned max_sessions; /* sessions alive at once, more: 503; 0: 64 */
  /* Largest X-Amz-Rdma-Size, more: 413; 0 or larger than possible:
   * min(2^31-1, the port's max_msg_sz). */
  uint32_t max_size;
  uint64_t max_staging_bytes;  /* all staging buffers, more: 503; 0: 1 GiB */
  unsigned prep_timeout_ms;    /* T_prep, PREPARE to READY; 0: 10 s */
  unsigned exec_timeout_ms;    /* T_exec, the data phase; 0: 30 s */
  unsigned reaper_interval_ms; /* 0: 1 s */
  unsigned retired_capacity;   /* retired (QPN, PSN) ring; 0: 4096 */
  int clamp_get; /* GET past the end: deliver what exists (Ceph) instead
                    of 416 (§5.1) */
};
#define RDMA_SERVER_OPTS_INIT                                                  \
  { .gid_index = -1 }

/* One answer for the HTTP layer to send. */
#define RDMA_SERVER_MAX_HEADERS 16
struct rdma_server_answer {
  int http_status;
  char s3_code[48];  /* "" on success: then no body */
  char message[256]; /* the S3 <Message> of an error */
  size_t n;
  struct {
    char name[48];
    char value[160];
  } hdrs[RDMA_SERVER_MAX_HEADERS];
};

/* What a PREPARE asked for (strings valid during the callback). */
struct rdma_server_target {
  enum rdma_op op;
  const char *bucket, *key; /* percent-decoded */
  unsigned part_number;     /* 0: none */
  const char *upload_id;    /* NULL: none (PUT of a part has both) */
  const char *version_id;   /* NULL: none */
  uint64_t offset;
  uint32_t size;
  const char *principal;
};

struct rdma_server_object {
  uint64_t length;      /* read: the object's (or part's) length */
  char etag[128];       /* quoted or not */
  char version_id[128]; /* "" when unversioned */
};

/* The object store, through the server's own code paths. Each returns 0,
 * or -1 with the S3 error in ans (http_status, s3_code, message). ctx is
 * the caller's, per call (the HTTP request, say). */
struct rdma_server_backend {
  /* GetObject for GET, PutObject for PUT (UploadPart: PutObject on the
   * key), on PREPARE and again on READY (§3.5 step 4). */
  int (*authorize)(void *ctx, const struct rdma_server_target *t,
                   struct rdma_server_answer *ans);
  /* GET: copies [offset, offset+size) of the object (part_number: of that
   * part) into dst, *nread bytes (fewer at the end; 0 when offset is past
   * it), and fills obj (length, ETag, version). 404 etc. through ans. */
  int (*read)(void *ctx, const struct rdma_server_target *t, void *dst,
              uint64_t *nread, struct rdma_server_object *obj,
              struct rdma_server_answer *ans);
  /* PUT: stores data as the object, or as part part_number of upload_id,
   * through the normal PutObject / UploadPart path; crc is the CRC64NVME
   * of data. Fills obj->etag (and version_id). */
  int (*commit)(void *ctx, const struct rdma_server_target *t, const void *data,
                uint32_t len, uint64_t crc, struct rdma_server_object *obj,
                struct rdma_server_answer *ans);
  void *ctx;
};

/* Fault injection (tests, hipobj-server --faults). */
enum {
  RDMA_SERVER_FAULT_DECLINE = 1u << 0,    /* PREPARE: 501 unsupported */
  RDMA_SERVER_FAULT_DESTROY_QP = 1u << 1, /* READY: the QP is destroyed in
                                             the data phase; 500 */
  RDMA_SERVER_FAULT_LOSE_QP = 1u << 2,    /* PREPARE: the QP goes to ERROR
                                             before the answer; READY then
                                             fails as DESTROY_QP does */
};

/* Opens the device (rdma_dev_open) and starts the reaper thread. */
int rdma_server_create(const struct rdma_server_opts *opts,
                       struct rdma_server **out, struct hipobj_error *err);
/* Stops the reaper and tears every session down. No handler may still be
 * inside the engine. */
void rdma_server_destroy(struct rdma_server *s);
const char *rdma_server_describe(const struct rdma_server *s);

/* The three control requests, after the server verified the signature.
 * hdrs: every request header (names in any case). principal: who signed
 * (sessions are bound to it, §6.4). Each fills ans and returns its
 * http_status. rdma_server_ready blocks for the data phase (<= T_exec). */
int rdma_server_prepare(struct rdma_server *s, const struct rdma_header *hdrs,
                        size_t n, const char *principal,
                        const struct rdma_server_backend *be, unsigned faults,
                        struct rdma_server_answer *ans);
int rdma_server_ready(struct rdma_server *s, const struct rdma_header *hdrs,
                      size_t n, const char *principal,
                      const struct rdma_server_backend *be, unsigned faults,
                      struct rdma_server_answer *ans);
int rdma_server_cancel(struct rdma_server *s, const struct rdma_header *hdrs,
                       size_t n, const char *principal,
                       struct rdma_server_answer *ans);

/* The decline answer: 501 with X-Amz-Rdma-Protocol-Status: unsupported
 * (for a server without an engine, or with RDMA off). */
void rdma_server_decline(struct rdma_server_answer *ans, const char *why);

/* Runs one reaper pass now (tests; the thread does it every interval). */
void rdma_server_reap(struct rdma_server *s);

struct rdma_server_stats {
  unsigned sessions;      /* alive (table + in-flight READY) */
  unsigned qps, mrs;      /* held by those sessions */
  uint64_t staging_bytes; /* held by those sessions */
  uint64_t prepared, completed, failed, expired, cancelled;
};
void rdma_server_get_stats(struct rdma_server *s, struct rdma_server_stats *st);

#endif
