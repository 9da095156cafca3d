/* harness.h - helpers of the hipobj-server tests: start and stop the
 * server binary (fork/exec, ready line on stdout), make library clients,
 * and send raw or SigV4-signed HTTP requests for what the library cannot
 * express (anonymous requests, presigned URLs, aws-chunked bodies, RDMA
 * paths, the fault admin endpoint). Every wait is bounded. */
#ifndef HIPOBJ_SERVER_HARNESS_H
#define HIPOBJ_SERVER_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "hipobj.h"

#define T_AK "AKIDSERVERTEST"
#define T_SK "server-test-secret-never-printed"
#define T_REGION "us-east-1"
#define T_BUCKET "bkt"

struct server_proc {
  pid_t pid;
  char base[256]; /* mkdtemp dir: root/ and server.log inside */
  char root[300];
  char url[128];
};

/* Starts hipobj-server (root: NULL for a fresh one under base, else reuse)
 * with extra arguments (NULL-terminated list, may be NULL). Asserts. */
void srv_start(struct server_proc *s, const char *root,
               const char *const *extra);
/* Sends sig and reaps the process (waits up to 10 s, then SIGKILL). */
void srv_signal(struct server_proc *s, int sig);
/* Waits up to timeout_s for the process to exit; 1 and *status when it
 * did, 0 when it still runs. */
int srv_wait(struct server_proc *s, double timeout_s, int *status);
/* Stops the server and removes its files (unless HIPOBJ_TEST_KEEP=1). */
void srv_cleanup(struct server_proc *s);

/* The tests' client settings (ak/sk NULL: T_AK/T_SK; max_attempts 0: 4;
 * io_threads 0: the library's choice); short timeouts, no logging. */
void client_config(struct hipobj_client_config *cfg, const char *url,
                   const char *ak, const char *sk, unsigned max_attempts,
                   unsigned io_threads);
struct hipobj_client *mk_client(const char *url, const char *ak, const char *sk,
                                unsigned max_attempts);
/* The same with io_threads HTTP engine workers (0: the library's choice). */
struct hipobj_client *mk_client_io(const char *url, const char *ak,
                                   const char *sk, unsigned max_attempts,
                                   unsigned io_threads);

struct http_resp {
  int status; /* 0: no answer (connection closed) */
  char *head; /* status line and headers */
  char *body;
  size_t len;
};

struct sreq {
  const char *method;
  const char *target;               /* raw path[?query] */
  const char *const *hdrs;          /* "Name: value", signed */
  const char *const *unsigned_hdrs; /* sent, not signed */
  const void *body;
  size_t len;
  const char *payload_hash; /* NULL: SHA-256 of body */
  time_t when;              /* 0: now */
  const char *ak, *sk;      /* NULL: T_AK, T_SK */
  int anonymous;            /* no Authorization at all */
  size_t max_body;  /* stop reading after this many body bytes (0: none) */
  const char *host; /* the Host header (signed); NULL: the URL's host */
};

int http_send(const char *url, const struct sreq *q, struct http_resp *out);
/* Sends q1, reads its answer (Content-Length bytes of body), then sends q2
 * on the same connection: out2 has an answer only when the connection
 * was still usable after the first. */
int http_send_pair(const char *url, const struct sreq *q1,
                   const struct sreq *q2, struct http_resp *out1,
                   struct http_resp *out2);
void resp_free(struct http_resp *r);
/* Value of a response header (case-insensitive), "" when absent. */
const char *resp_hdr(const struct http_resp *r, const char *name, char *buf,
                     size_t n);
/* Text of the first <el> in body, "" when absent (static buffer). */
const char *xml_text(const struct http_resp *r, const char *el);
/* Whether a multipart upload is open in T_BUCKET, asked of the server
 * itself (ListMultipartUploads, signed; asserts the answer is 200). The
 * listing is logged when one is. */
int upload_open(const char *url);
/* Asserts an S3 error answer (status, <Code>, and msg_part in <Message>
 * unless NULL), then frees r. */
void expect_s3_error(struct http_resp *r, int status, const char *code,
                     const char *msg_part);

/* Target of a presigned URL for path (host-signed, UNSIGNED-PAYLOAD). */
char *presign(const char *url, const char *method, const char *path,
              long expires, time_t when, const char *ak, const char *sk);
/* Authorization value etc. for an aws-chunked upload: returns the seed
 * signature written into seed[65] for the headers given. */
void sign_headers(const char *url, const char *method, const char *target,
                  const char *const *hdrs, const char *payload_hash,
                  time_t when, char *authz, size_t authz_sz, char seed[65]);
/* Chunk signature of aws-chunked data. */
void chunk_sig(time_t when, const char *prev, const void *data, size_t len,
               char out[65]);

void fill_pattern(void *buf, size_t n, unsigned seed);
/* PUTs n bytes of fill_pattern(seed) to T_BUCKET/key through c (asserting
 * success); returns them, to be freed. */
char *put_pattern(struct hipobj_client *c, const char *key, size_t n,
                  unsigned seed);
/* Flips one bit of byte `at` of the stored data of T_BUCKET/key (a key
 * stored under its plain name, k<key>) behind the server's back, in place:
 * the same inode, so the server's metadata still vouches for the old
 * bytes. */
void flip_stored(const struct server_proc *s, const char *key, uint64_t at);
/* Asserts that fd holds want's n bytes at offset off. */
void file_equals(int fd, uint64_t off, const void *want, size_t n);
/* Bitwise reference CRCs (not the library's), chaining like zlib's
 * crc32(): start from 0, ref(ref(0, a), b) = ref(0, a b). */
uint32_t ref_crc32c(uint32_t crc, const void *data, size_t n);
uint32_t ref_crc32(uint32_t crc, const void *data, size_t n);
uint64_t ref_crc64nvme(uint64_t crc, const void *data, size_t n);
/* An x-amz-checksum-* value: base64 of v's low `bytes` bytes, big-endian. */
void ref_b64(uint64_t v, int bytes, char out[16]);
void md5_etag(const void *data, size_t n, char out[40]); /* quoted */
double mono_now(void);

#endif
