/* client_int.h - the client object and the request runner shared by the
 * operation files (ops_*.c). */
#ifndef HIPOBJ_CLIENT_INT_H
#define HIPOBJ_CLIENT_INT_H

#include <pthread.h>

#include "../s3/http.h"
#include "../s3/request.h"
#include "base/error.h"
#include "base/log.h"
#include "base/workq.h"
#include "config.h"
#include "endpoint.h"

struct hstage_pool;
struct hfileq;
struct hsched;
struct hworkq;
struct rdma_engine;
/* GPUs per runtime with an RDMA engine of their own (rdma_glue.c). */
#define HRDMA_GPU_ENGINES 16
struct hrdma_regs;

/* Control shared by every request of one transfer (all the parts of a
 * parallel GET or multipart PUT): cancellation and progress. */
struct hxctl {
  volatile int cancel;
  /* The caller's token (struct hipobj_cancel), NULL: none. It cancels
   * like `cancel`, but is never set by the library. */
  const volatile int *token;
  struct hipobj_client *client;
  hipobj_progress_fn progress; /* NULL: none */
  void *user;
  uint64_t total; /* payload bytes expected, 0 until known */
  uint64_t done;  /* payload bytes moved, monotonic (atomic) */
  /* Parts finish on several I/O threads: reports are made one at a time,
   * under this lock (initialised with hxctl_init when progress is set),
   * and only when they say more than the last one. */
  pthread_mutex_t report_lock;
  uint64_t reported_done, reported_total;
};

void hxctl_init(struct hxctl *ctl);
void hxctl_destroy(struct hxctl *ctl);
/* Reports (done, total) unless an earlier report said as much. */
void hxctl_report(struct hxctl *ctl, uint64_t done, uint64_t total);
/* Adds newly moved bytes (never more than total once known) and reports. */
void hxctl_add(struct hxctl *ctl, uint64_t delta);
/* Sets the expected total (when learnt) and reports. */
void hxctl_set_total(struct hxctl *ctl, uint64_t total);
static inline int hxctl_cancelled(const struct hxctl *ctl) {
  return ctl && (ctl->cancel || (ctl->token && *ctl->token));
}

struct hipobj_client {
  struct hcfg cfg;       /* immutable after create */
  struct s3_endpoint ep; /* immutable after create */
  struct s3_http *http;  /* thread-safe submission */
  struct hlog log;
  struct hstage_pool *stage_pool; /* pinned chunks for GPU data (staging.h) */
  struct hfileq *fileq; /* threads that read and write files (mem_file.h) */
  struct hsched *sched; /* runs every transfer's parts (sched.c) */
  pthread_mutex_t async_lock; /* guards creating the RDMA engines */
  struct rdma_engine *rdma;   /* created on first use (rdma_glue.c) */
  /* GPU memory: an engine on the NIC nearest each GPU (HIP, CUDA x device
   * < HRDMA_GPU_ENGINES), created on first use; NULL: use `rdma`. */
  struct rdma_engine *rdma_gpu[2][HRDMA_GPU_ENGINES];
  unsigned char rdma_gpu_tried[2][HRDMA_GPU_ENGINES];
  /* Per GPU: its dma-buf registrations kept across transfers
   * (rdma_gpu_regs.h), and whether its NIC refused one (then its memory
   * goes staged; another GPU's may still go direct). */
  struct hgpu_regs *rdma_gpu_regs[2][HRDMA_GPU_ENGINES];
  int rdma_gpu_refused[2][HRDMA_GPU_ENGINES];
  char rdma_why[256];           /* why RDMA is unavailable, once known */
  struct hrdma_regs *rdma_regs; /* explicit registrations (rdma_api.c) */
  struct s3_sigv4_key_cache sign_cache; /* signing key of the day (sigv4.h) */
  struct hendpoint_facts facts; /* what the endpoint showed (endpoint.c) */
  /* Threads hashing signed payloads (runner.c), created on first use. */
  struct hworkq *hash_pool;
  pthread_mutex_t hash_lock; /* guards creating hash_pool */
};

enum {
  HREQ_SIGN_NONE = 0,   /* UNSIGNED-PAYLOAD */
  HREQ_SIGN_OBJECT = 1, /* object data: hashed unless cfg.integrity is NONE */
  HREQ_SIGN_ALWAYS = 2, /* small documents we build (XML) */
};

/* One logical S3 request: built once, sent (and re-signed) once per attempt,
 * retried on retryable failures with capped exponential backoff and full
 * jitter. Fill the request fields, then hreq_run() (blocking) or
 * hreq_submit() (completion through `done` on the engine thread). */
struct hreq {
  struct hipobj_client *client;
  char op_name[64];      /* "GetObject", "UploadPart #3" */
  struct s3_request req; /* method, bucket, key, params, extra headers */
  const char *body;      /* request body (borrowed), or NULL */
  /* Streamed request body instead of `body` (body_len bytes), read on the
   * engine thread; before_attempt must rewind it. Returns the bytes written
   * into buf, 0 at the end, (size_t)-1 to abort (after setting sink_status
   * and sink_reason). */
  s3_source_fn source;
  void *source_ctx;
  /* With a source and a signed payload or a checksum: reads the body once
   * before the first attempt and computes its SHA-256 into sha_hex and its
   * CRC32C into *crc (each only when not NULL). Returns a status and fills
   * r->err on failure. NULL: the source can be sent neither signed nor
   * with a checksum. */
  int (*digest_source)(struct hreq *r, char *sha_hex, uint32_t *crc);
  uint64_t body_len;
  int send_body;    /* send a body, even an empty one */
  int sign_payload; /* HREQ_SIGN_*: hash the body into x-amz-content-sha256 */
  /* Non-zero: send the body's CRC32C in x-amz-checksum-crc32c (signed
   * header), computed in the same pass as the payload hash. An answer that
   * echoes another value fails the request (HIPOBJ_E_PROTOCOL). */
  int crc32c;
  int head;        /* HEAD: no response body */
  s3_sink_fn sink; /* 2xx body; NULL: kept in resp.body */
  void *sink_ctx;
  /* Called before every attempt (rewind the sink). Non-zero aborts. */
  int (*before_attempt)(struct hreq *r);
  /* Called after a 2xx answer to validate it; returns a status and may fill
   * err. A retryable status leads to another attempt. */
  int (*check)(struct hreq *r, struct hipobj_error *err);
  size_t body_limit; /* cap of an in-memory 2xx body; 0: 1 MiB */
  void (*done)(struct hreq *r, void *ctx);
  void *done_ctx;
  unsigned max_attempts; /* 0: the client's */
  unsigned timeout_ms;   /* whole-request limit; 0: the client's */
  /* The thread that submits will wait anyway: run there when it can
   * (s3_http_here_begin). */
  int run_here;
  /* Stall detection floor in bytes/s; 0: the client's. */
  unsigned low_speed_bytes_per_s;
  /* Transfer this request belongs to (cancel, progress), or NULL. */
  struct hxctl *ctl;
  uint64_t progress_seen; /* most payload bytes reported for this request */
  /* set by a sink or source that aborted the transfer: status and reason */
  int sink_status;
  char sink_reason[256];
  /* results */
  int status;              /* HIPOBJ_OK or the failure */
  struct hipobj_error err; /* detail of the failure */
  unsigned retries;
  struct s3_http_xfer xfer; /* last attempt's answer in xfer.resp */
  /* private */
  struct s3_signed wire;
  char payload_hash[65];
  char crc32c_b64[12];  /* the value sent, when crc32c */
  int crc32c_confirmed; /* the 2xx answer echoed it */
  unsigned attempt;
  int source_aborted;
  pthread_mutex_t *wait_lock;
  pthread_cond_t *wait_cond;
  int *wait_flag;
  struct hworkq_item hash_item; /* in the hashing threads' queue */
};

/* Prepares r for a request; name is the operation name for messages. */
void hreq_init(struct hreq *r, struct hipobj_client *c, const char *name,
               const char *method, const char *bucket, const char *key);
int hreq_submit(struct hreq *r);
/* Runs synchronously; copies the failure detail to err. Returns r->status. */
int hreq_run(struct hreq *r, struct hipobj_error *err);
/* Frees what the last attempt holds (answer body, signed request). */
void hreq_cleanup(struct hreq *r);

/* Argument checks shared by operations; they fill err. */
int hcheck_bucket_key(const char *op, const char *bucket, const char *key,
                      int need_key, struct hipobj_error *err);

double hnow_seconds(void);

/* Stops the payload hashing threads (no request may be in progress). */
void hreq_hash_pool_destroy(struct hipobj_client *c);

#endif
