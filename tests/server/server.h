/* server.h - internals of hipobj-server shared by its source files: the
 * configuration, the state of one request, and what each file provides.
 *
 * Files: main.c (options, start, signals), http.c (libmicrohttpd glue,
 * routing, request phases, logging), respond.c (answers, error XML, body
 * faults), xmlw.c (XML writers), auth.c (SigV4 verification), body.c
 * (request bodies: temp files, hashes), chunked.c (aws-chunked decoding),
 * storage.c + objfile.c (buckets and objects on disk), objects.c (object
 * and bucket operations), multipart.c (multipart uploads), listing.c
 * (listings), faults.c (fault injection and its admin endpoint), delay.c
 * (delayed answers), rdma.c (RDMA paths, declined in this build),
 * checksums.c (x-amz-checksum-* headers and trailers), memstore.c (the
 * memory mode). */
#ifndef HIPOBJ_SERVER_H
#define HIPOBJ_SERVER_H

#include <microhttpd.h>
#include <stdint.h>
#include <sys/types.h>

#include "reqparse.h"
#include "s3/crypto.h"
#include "src/base/buf.h"

#define SRV_NAME "hipobj-server"
#define SRV_MAX_KEY 1024
#define SRV_MAX_PUT (5ull << 30) /* one PUT or one part */
/* libmicrohttpd's memory per connection: its parser and read buffer. */
#define SRV_CONN_MEMORY ((uint64_t)256 << 10)
#define SRV_MAX_PARTS 10000u
#define SRV_SKEW_S (15 * 60)
#define SRV_XMLNS "http://s3.amazonaws.com/doc/2006-03-01/"

/* ---- main.c ---------------------------------------------------------- */

enum srv_log_level { SLOG_ERROR = 0, SLOG_WARN, SLOG_INFO, SLOG_DEBUG };

struct srv_cred {
  const char *access_key;
  const char *secret_key;
  /* The signing key of the day, derived once instead of four HMACs per
   * request and chunk; NULL: derived every time. */
  struct s3_sigv4_key_cache *key_cache;
};

struct faults;
struct delayer;

struct server {
  char *root; /* absolute, no trailing '/' */
  struct srv_cred *creds;
  size_t n_creds;
  const char *region;
  int log_level;
  int rdma_auto; /* --rdma auto: accepted; behaves like off in this build */
  const char *rdma_device;
  uint64_t min_part_size;
  uint64_t max_put; /* --max-put-size: one PUT or part, SRV_MAX_PUT at most */
  unsigned threads;
  unsigned busy_poll_us;     /* --busy-poll: 0, or poll this long after work */
  uint64_t conn_memory;      /* libmicrohttpd's pool per connection, bytes */
  unsigned complete_threads; /* copiers of one Complete (assemble.c) */
  char *tls_cert_pem, *tls_key_pem; /* both set: HTTPS */
  /* --storage memory (memstore.c): objects on tmpfs, capped at mem_cap
   * bytes; mem_own_root: the root was made by the server, removed at exit */
  int memory;
  uint64_t mem_cap;
  int mem_own_root;
  struct metacache *meta_cache; /* memory mode: metacache.c; else NULL */
  struct faults *faults;
  struct delayer *delayer;
  volatile int stopping;
};

void srv_log(const struct server *s, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
double srv_now(void); /* monotonic seconds */

/* ---- operations ------------------------------------------------------- */

#define SRV_OPS(X)                                                             \
  X(UNKNOWN, "Unknown")                                                        \
  X(LIST_BUCKETS, "ListBuckets")                                               \
  X(CREATE_BUCKET, "CreateBucket")                                             \
  X(DELETE_BUCKET, "DeleteBucket")                                             \
  X(HEAD_BUCKET, "HeadBucket")                                                 \
  X(GET_LOCATION, "GetBucketLocation")                                         \
  X(GET_VERSIONING, "GetBucketVersioning")                                     \
  X(LIST_OBJECTS, "ListObjects")                                               \
  X(LIST_OBJECTS_V2, "ListObjectsV2")                                          \
  X(LIST_UPLOADS, "ListMultipartUploads")                                      \
  X(DELETE_OBJECTS, "DeleteObjects")                                           \
  X(PUT_OBJECT, "PutObject")                                                   \
  X(GET_OBJECT, "GetObject")                                                   \
  X(HEAD_OBJECT, "HeadObject")                                                 \
  X(DELETE_OBJECT, "DeleteObject")                                             \
  X(CREATE_MPU, "CreateMultipartUpload")                                       \
  X(UPLOAD_PART, "UploadPart")                                                 \
  X(COMPLETE_MPU, "CompleteMultipartUpload")                                   \
  X(ABORT_MPU, "AbortMultipartUpload")                                         \
  X(LIST_PARTS, "ListParts")                                                   \
  X(COPY_OBJECT, "CopyObject")                                                 \
  X(UPLOAD_PART_COPY, "UploadPartCopy")                                        \
  X(RDMA_PREPARE, "RdmaPrepare")                                               \
  X(RDMA_READY, "RdmaReady")                                                   \
  X(RDMA_CANCEL, "RdmaCancel")                                                 \
  X(ADMIN, "Admin")                                                            \
  X(NOT_IMPLEMENTED, "NotImplemented")

enum srv_op {
#define SRV_OP_ENUM(id, name) OP_##id,
  SRV_OPS(SRV_OP_ENUM)
#undef SRV_OP_ENUM
      OP_COUNT
};

const char *srv_op_name(enum srv_op op);
int srv_op_from_name(const char *name); /* -1 when unknown */

/* ---- one request ------------------------------------------------------ */

enum payload_mode {
  PAY_HASHED,           /* x-amz-content-sha256 = hex SHA-256 of the body */
  PAY_UNSIGNED,         /* UNSIGNED-PAYLOAD */
  PAY_CHUNKED_SIGNED,   /* STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER] */
  PAY_CHUNKED_UNSIGNED, /* STREAMING-UNSIGNED-PAYLOAD-TRAILER */
};

/* The flexible checksums the server checks (checksums.c). */
enum cks_alg { CKS_NONE = 0, CKS_CRC32, CKS_CRC32C, CKS_CRC64NVME };

enum body_sink { SINK_DISCARD = 0, SINK_FILE, SINK_MEM };
enum req_state { RS_NEW = 0, RS_DELAYED, RS_BODY, RS_ANSWERED };

enum fault_action {
  FA_NONE = 0,
  FA_STATUS,       /* answer an S3 error */
  FA_DROP,         /* close the connection without an answer */
  FA_CLOSE,        /* close after N body bytes (request or response) */
  FA_SHORT,        /* send N bytes fewer than Content-Length */
  FA_CORRUPT,      /* flip one byte of the response body */
  FA_BADXML,       /* cut the XML answer in half */
  FA_CRASH,        /* _exit() on arrival */
  FA_CRASH_AFTER,  /* _exit() after the operation, before the answer */
  FA_RDMA_DECLINE, /* decline a PREPARE (501) */
  FA_RDMA_FAIL,    /* lose the QP (READY: destroyed, PREPARE: ERROR) */
  FA_PARTIAL,      /* a 206 with fewer bytes than asked, honestly labelled */
  FA_REPEAT_TOKEN, /* a listing that never ends: its tokens come back */
  FA_ENDLESS,      /* an error answer whose body never ends */
  FA_DRIP,         /* the answer body at arg bytes per second */
  FA_RDMA_NO_MP,   /* RDMA answers without X-Amz-Rdma-Capabilities: mp */
  FA_RDMA_IGNORE_PART, /* an RDMA part's query ignored: stored as the
                          object, an empty part recorded (elbencho-like) */
  FA_DELAY,            /* only inside rules; delays add up in fault_hit */
};

struct fault_hit {
  enum fault_action action;
  int status;
  char code[48];
  uint64_t arg;
  int has_arg;
  unsigned delay_ms;
  uint64_t rule_id; /* the rule that fired (faults_add_sent) */
};

struct srv_header {
  const char *name; /* as MHD keeps them, valid for the request */
  const char *value;
};

struct chunk_dec;

struct req {
  struct server *srv;
  struct MHD_Connection *conn;
  const char *method;
  char *raw_uri;           /* the request target exactly as received */
  char *raw_path;          /* up to '?' (undecoded: the canonical URI) */
  const char *raw_query;   /* after '?', "" when none */
  struct rp_param *params; /* reqparse.h */
  size_t n_params;
  struct srv_header *hdrs;
  size_t n_hdrs;
  char *bucket; /* decoded; NULL for the service */
  char *key;    /* decoded; NULL for bucket-level requests */
  enum srv_op op;
  char id[17];
  double t0;
  enum req_state state;
  int http_status;
  int close_conn; /* the answer closes the connection (bad framing) */
  uint64_t bytes_in, bytes_out;

  /* auth.c */
  const struct srv_cred *cred;
  enum payload_mode pay;
  char payload_hash[65]; /* hex, when pay == PAY_HASHED */
  int pay_trailer;       /* a ...-TRAILER payload: trailer lines may follow */
  char amz_date[17];
  char seed_sig[65]; /* the request signature: seed of chunk signatures */

  /* body.c */
  enum body_sink sink;
  int tmp_fd;
  char *tmp_path;
  struct s3_sha256_ctx *sha;
  struct s3_md5_ctx *md5;
  struct hbuf mem;
  size_t mem_max;
  uint64_t body_len;   /* decoded payload bytes */
  uint64_t expect_len; /* Content-Length or x-amz-decoded-content-length */
  struct chunk_dec *chunk;
  uint8_t md5_digest[16]; /* valid after body_finish() for SINK_FILE */
  int md5_real;           /* md5_digest is the MD5 (memory mode: maybe not) */

  /* checksums.c: the x-amz-checksum-* of the payload, checked at its end */
  enum cks_alg cks_alg; /* CKS_NONE: no checksum was sent */
  int cks_trailer;      /* declared by x-amz-trailer: its value comes last */
  int cks_have;         /* the value is known (header, or trailer read) */
  uint64_t cks_want;    /* the value */
  uint64_t cks_run;     /* running CRC of the payload */
  uint64_t crc64_run;   /* its CRC-64/NVME, kept with every upload */

  /* a failure recorded for the answer (http 0: none) */
  int err_http;
  char err_code[48];
  char err_msg[300];

  struct fault_hit fault;
  int fault_evaluated;
  int fault_on_request; /* FA_CLOSE counts request body bytes */

  /* operation scratch */
  unsigned part_number;
  char upload_id[40];
  int rdma_token;       /* a well-formed x-amz-rdma-token was sent */
  enum cks_alg mpu_alg; /* CreateMultipartUpload: x-amz-checksum-algorithm */
};

/* http.c: request accessors. */
const char *req_header(const struct req *r, const char *name);
const char *req_param(const struct req *r, const char *name);
int req_has_param(const struct req *r, const char *name);
/* Records a failure to answer later; returns -1. */
int req_fail(struct req *r, int http, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Starts a daemon on a bound listening socket with libmicrohttpd's own
 * thread pool of s->threads; with listen_fd -1 one without a socket, in
 * external-epoll mode, that the caller's loop runs and hands connections
 * to (poller.c). */
struct MHD_Daemon *http_start(struct server *s, int listen_fd);

/* poller.c: the HTTP side as configured (thread pool, or busy-polling
 * threads with --busy-poll). srv_http_stop() also closes the listening
 * socket; suspended connections must have been resumed before it. */
struct srv_http;
struct srv_http *srv_http_start(struct server *s, int listen_fd);
void srv_http_stop(struct srv_http *h);
/* Called on the daemon's thread as a request begins and as it ends: with
 * --busy-poll the thread that ends the last request in progress then
 * polls for the next one. */
void srv_http_begun(void);
void srv_http_answered(void);

/* respond.c */
enum MHD_Result srv_error(struct req *r, int http, const char *code,
                          const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
enum MHD_Result srv_fail(struct req *r); /* answers r->err_* */
struct MHD_Response *srv_error_response(struct req *r, const char *code,
                                        const char *msg);
enum MHD_Result srv_xml(struct req *r, int http, struct hbuf *xml);
enum MHD_Result srv_empty(struct req *r, int http);
struct MHD_Response *srv_body_fd(struct req *r, int fd, uint64_t off,
                                 uint64_t len);
struct MHD_Response *srv_body_mem(struct req *r, const void *data, size_t len);
enum MHD_Result srv_queue(struct req *r, int http, struct MHD_Response *resp);
enum MHD_Result srv_errno(struct req *r, int err, const char *what);
/* The S3 code of an injected error status: the rule's, else SlowDown for
 * 503 and 429, InternalError for 500, InjectedFault for the others. */
const char *srv_fault_code(const struct req *r);
/* The endless fault: the S3 error r->fault.status whose XML body never
 * ends, streamed (never buffered) until the client goes away. */
enum MHD_Result srv_endless(struct req *r);

/* xmlw.c: every document the server sends is written with these. Element
 * names are literals of this server; text is escaped so that the document
 * is always well-formed (see xmlw.c). */
void xml_begin(struct hbuf *b, const char *root);
/* The same without the S3 namespace, as S3 writes <Error>. */
void xml_begin_bare(struct hbuf *b, const char *root);
void xml_end(struct hbuf *b, const char *root);
void xml_open(struct hbuf *b, const char *name);
void xml_close(struct hbuf *b, const char *name);
void xml_esc(struct hbuf *b, const char *s);
/* 1 when s is UTF-8 made only of characters XML 1.0 can carry. */
int xml_text_ok(const char *s);
void xml_el(struct hbuf *b, const char *name, const char *text);
void xml_el_u64(struct hbuf *b, const char *name, uint64_t v);
void xml_el_key(struct hbuf *b, const char *name, const char *text,
                int url_encode);
void srv_http_date(int64_t sec, char out[40]);
void srv_iso8601(int64_t ms, char out[32]);

/* auth.c */
int auth_check(struct req *r);
int auth_is_loopback(struct req *r);
void auth_chunk_signature(const struct req *r, const char *prev_sig,
                          const char *chunk_sha_hex, char out[65]);
/* The x-amz-trailer-signature of trailer lines whose canonical form
 * ("name:value\n" each) hashes to trailer_sha_hex. */
void auth_trailer_signature(const struct req *r, const char *prev_sig,
                            const char *trailer_sha_hex, char out[65]);

/* body.c */
int body_begin_file(struct req *r);
int body_begin_mem(struct req *r, size_t max);
int body_feed(struct req *r, const char *data, size_t n);
int body_finish(struct req *r);
void body_cleanup(struct req *r);
void body_md5_hex(const struct req *r, char out[33]);
/* What stands for the MD5 in memory mode (nothing hashes the bytes twice):
 * the CRC-64/NVME and the size, 8 bytes each, big-endian. */
void body_mem_digest(uint64_t crc64nvme, uint64_t len, uint8_t out[16]);
/* The quoted ETag of a PutObject's or UploadPart's body: its MD5, or in
 * memory mode without Content-MD5 the hex of its CRC-64/NVME and size,
 * then "-1". */
void body_etag(const struct req *r, char out[80]);

/* chunked.c */
struct chunk_dec *chunk_new(int verify);
void chunk_free(struct chunk_dec *d);
/* Decodes raw aws-chunked bytes; payload bytes go to emit(). -1 with the
 * failure recorded in r. */
int chunk_feed(struct req *r, struct chunk_dec *d, const char *data, size_t n,
               int (*emit)(struct req *, const char *, size_t));
int chunk_complete(const struct chunk_dec *d);

/* delay.c: suspends a connection and resumes it after ms. Stop resumes
 * them all (and later additions at once); free after the daemon stopped. */
struct delayer *delayer_start(void);
void delayer_stop(struct delayer *d);
void delayer_free(struct delayer *d);
void delayer_add(struct delayer *d, struct MHD_Connection *c, unsigned ms);

/* faults.c */
struct faults *faults_new(void);
void faults_free(struct faults *f);
/* Replaces (or, append != 0, extends) the rules. -1 with a reason. */
int faults_set(struct faults *f, const char *spec, int append,
               struct hbuf *why);
void faults_describe(struct faults *f, struct hbuf *out);
void faults_evaluate(struct faults *f, struct req *r);
/* Adds n answer body bytes sent under rule_id to that rule's count, shown
 * by GET /.hipobj-admin/faults as sent=N (a rule replaced since is not
 * counted). */
void faults_add_sent(struct faults *f, uint64_t rule_id, uint64_t n);
enum MHD_Result faults_admin(struct req *r);
const char *faults_help(void);

/* checksums.c: S3 flexible checksums, CRC32, CRC32C and CRC64NVME
 * (anything else 501). */
struct obj_meta;
struct s3_part;
/* The checksum headers of PutObject, UploadPart, CreateMultipartUpload
 * and CompleteMultipartUpload, before the body; -1 with r->err set. */
int cks_headers(struct req *r);
/* Extends a running CRC of alg (from 0) with n bytes. */
uint64_t cks_crc(enum cks_alg alg, uint64_t crc, const void *data, size_t n);
/* The header value of a CRC of alg (base64, at most 12 characters). */
void cks_format(enum cks_alg alg, uint64_t crc, char out[16]);
/* Echoes of a successful answer: x-amz-checksum-<alg> (PutObject,
 * UploadPart), x-amz-checksum-algorithm (CreateMultipartUpload). */
void cks_answer_headers(const struct req *r, struct MHD_Response *resp);
/* Feeds the payload's CRC (the sent checksum's) and its CRC-64/NVME. */
void cks_body_update(struct req *r, const void *data, size_t n);
int cks_body_check(struct req *r); /* at the end of the body */
/* What a PutObject keeps for GET and HEAD: the payload's CRC-64/NVME and
 * the CRC32C or CRC32 it was sent with. */
void cks_object_record(const struct req *r, struct obj_meta *m);
/* The same for a completed upload, from its parts (n, in order): the
 * CRC-64/NVME combined from theirs (when each has one), theirs, their
 * checksums of alg and the composite. 0, or -1 out of memory. */
int cks_object_of_parts(const struct obj_meta *parts, size_t n,
                        enum cks_alg alg, const char *composite,
                        struct obj_meta *m);
/* x-amz-checksum-mode: ENABLED on GetObject and HeadObject: the stored
 * checksums of what the answer carries, the whole object (whole), or part
 * `part` (1-based) of a multipart object; nothing for any other range. */
void cks_get_headers(const struct req *r, struct MHD_Response *resp,
                     const struct obj_meta *m, int whole, unsigned part);
/* One aws-chunked trailer line (chunked.c), name and value trimmed, and
 * the end of the trailer; -1 with r->err set. */
int cks_trailer_line(struct req *r, const char *name, const char *value);
int cks_trailer_end(struct req *r);
/* The algorithm a new upload records ("CRC32C", "CRC32" or ""). */
const char *cks_upload_alg(const struct req *r);
/* The algorithm an upload recorded. */
enum cks_alg cks_upload_alg_of(const struct obj_meta *info);
/* Its name in XML elements: "CRC32C" for ChecksumCRC32C ("" for none). */
const char *cks_alg_name(enum cks_alg alg);
/* UploadPart: a checksum exactly when the upload has an algorithm, and
 * of that algorithm. */
int cks_part_vs_upload(struct req *r, const struct obj_meta *info);
/* A part's checksum (of its upload's algorithm) and CRC-64/NVME. */
void cks_part_record(const struct req *r, struct obj_meta *part);
/* Complete: every listed part has a checksum of the upload's algorithm,
 * and none of another (before any part is read). */
int cks_complete_request(struct req *r, const struct obj_meta *info,
                         const struct s3_part *want, size_t n);
int cks_same_part(enum cks_alg alg, const struct obj_meta *stored,
                  const struct s3_part *want);
/* "<base64 CRC of the parts' CRCs>-N"; -1 if a part has none. */
int cks_composite(enum cks_alg alg, const struct obj_meta *parts, size_t n,
                  char out[16]);

/* rdma.c */
enum MHD_Result rdma_control(struct req *r);
int rdma_check_token(struct req *r); /* -1 when malformed (r->err set) */

#endif
