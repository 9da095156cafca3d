/* rc_client.h - the hipobj-rc-v2 client (wire spec
 * shared/docs/rdma-wire-protocol.md, §3-6 and §8): one engine per client,
 * and GET / PUT / UploadPart transfers whose data moves by RDMA WRITE WITH
 * IMMEDIATE while three control requests (PREPARE, READY, CANCEL) travel
 * over the library's HTTP path.
 *
 * rdma/ does not include curl: src/ supplies the control requests through
 * struct rdma_control_ops (contract below). No verbs header is included, so
 * src/ can use this header as is.
 *
 * Threading: the engine is created once per client and is thread-safe; any
 * number of threads may run transfers at once (one QP per transfer, no
 * shared QP). Destroy the engine only after every transfer has returned. */
#ifndef HIPOBJ_RDMA_RC_CLIENT_H
#define HIPOBJ_RDMA_RC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "../src/base/buf.h"
#include "../src/base/uri.h"
#include "hipobj.h"
#include "mr.h"
#include "qp.h"
#include "token.h"

struct hipobj_error;
struct ibv_pd;

/* ---- control requests (implemented by src/) ----------------------------- */

#define RDMA_PATH_PREPARE "/.hipobj-rc/prepare"
#define RDMA_PATH_READY "/.hipobj-rc/ready"
#define RDMA_PATH_CANCEL "/.hipobj-rc/cancel"

/* One request or answer header (borrowed strings). */
struct rdma_header {
  const char *name;
  const char *value;
};

/* The answer to one control request, filled by the ops. */
struct rdma_control_answer {
  int http_status; /* 0: no HTTP answer arrived */
  /* With http_status 0: the failure (HIPOBJ_E_CONNECT, _NETWORK, _TIMEOUT,
   * _CANCELLED, ...) and its one-line reason. */
  int transport_status;
  char reason[256];
  /* Error answers: the S3 <Code> and <Message> of the body when there is
   * one (may stay ""). */
  char s3_code[64];
  char s3_message[256];
  /* The answer's headers as "Name: value\n" lines (any case; at least every
   * x-amz-* header: s3_http_resp.extra_headers qualifies). Initialise with
   * HBUF_INIT; the engine frees it. */
  struct hbuf headers;
};

/* The contract src/ implements (see README.md "Control-ops contract"):
 *
 * Every control request is `POST <path>` to the S3 endpoint's host (after
 * its base path), with an empty query, an empty body and these headers:
 *   - the x-amz-rdma-* headers passed in `hdrs`, unchanged;
 *   - Content-Length: 0, sent AND signed (content-length in SignedHeaders);
 *   - host, x-amz-date, x-amz-content-sha256 (UNSIGNED-PAYLOAD or the
 *     SHA-256 of the empty body, e3b0c442...b855), and x-amz-security-token
 *     with session credentials;
 * all of them SigV4-signed (service s3, the client's region). Each request
 * gets a connection of its own that is closed after the answer
 * (dedicated_connection = 1), is never retried, and is bounded by
 * timeout_ms. An https:// endpoint is refused before calling the engine
 * (both public clients refuse TLS control endpoints, §3.1).
 *
 * Callbacks may be called from any thread, several at once. */
struct rdma_control_ops {
  /* PREPARE and CANCEL: sends and waits for the answer. Returns 0 with
   * `ans` filled (whatever the HTTP status), or -1 when nothing could be
   * sent (ans->transport_status and reason set). */
  int (*call)(void *ctx, const char *path, const struct rdma_header *hdrs,
              size_t n, unsigned timeout_ms, struct rdma_control_answer *ans);
  /* READY: starts the request and returns at once; *pending identifies it.
   * The data phase runs while the server holds the answer. When the answer
   * (or a transport failure) is in, the ops call answered(arg) exactly once,
   * from any thread, and never after ready_wait/ready_abort returned.
   * Returns -1 when the request could not be started (then answered is
   * never called and *pending is not set). */
  int (*ready_start)(void *ctx, const char *path,
                     const struct rdma_header *hdrs, size_t n,
                     unsigned timeout_ms, void (*answered)(void *arg),
                     void *arg, void **pending);
  /* Waits up to timeout_ms for the answer of a started READY and fills ans
   * (on timeout: http_status 0, transport_status HIPOBJ_E_TIMEOUT, and the
   * request is cancelled). Consumes `pending`. */
  int (*ready_wait)(void *ctx, void *pending, unsigned timeout_ms,
                    struct rdma_control_answer *ans);
  /* Abandons a started READY: cancels it, closes its connection without
   * reading the answer, waits until the ops no longer touch it. Consumes
   * `pending`. */
  void (*ready_abort)(void *ctx, void *pending);
  void *ctx;
};

/* ---- engine ---------------------------------------------------------------
 */

struct rdma_engine;

struct rdma_engine_opts {
  const char *device;          /* NULL: choose (HIPOBJ_RDMA_DEVICE applies) */
  unsigned port;               /* 0: choose */
  int gid_index;               /* -1: choose (HIPOBJ_RDMA_GID_INDEX applies) */
  const char *gpu_busid;       /* the NIC nearest this GPU; NULL: host memory */
  unsigned mtu;                /* 0: the port's active_mtu */
  unsigned timeout_ms;         /* one session, PREPARE to FINAL; 0: 60 s */
  unsigned connect_timeout_ms; /* PREPARE reply to RTS; 0: 10 s */
  unsigned cancel_timeout_ms;  /* CANCEL budget; 0: 1 s */
  unsigned put_grace_ms;       /* wait before a PUT's WRITE; 0: 100 ms */
  unsigned max_live;           /* transfers at once (more wait); 0: 64 */
  unsigned retired_capacity;   /* retired (QPN, PSN) ring; 0: 4096 */
  /* Largest session (tests force small ones); 0 or more than allowed:
   * min(2^31-1, the port's max_msg_sz). */
  uint32_t max_session_bytes;
  int verify_checksum; /* 0: default (verify host memory); -1: never */
};
/* Zero-initialised opts are the defaults except gid_index (set -1). */
#define RDMA_ENGINE_OPTS_INIT                                                  \
  { .gid_index = -1 }

/* Chooses and opens the device (rdma/select.c rules, HIPOBJ_RDMA=off gives
 * HIPOBJ_E_UNSUPPORTED), allocates the PD and a registration cache. */
int rdma_engine_create(const struct rdma_engine_opts *opts,
                       struct rdma_engine **out, struct hipobj_error *err);
void rdma_engine_destroy(struct rdma_engine *e);
/* For registrations the caller makes (rdma_mr_reg on this PD) and for the
 * cache of library-owned buffers (pinned staging chunks): user memory must
 * not go into the cache, which cannot see free(). */
struct ibv_pd *rdma_engine_pd(struct rdma_engine *e);
struct rdma_mr_cache *rdma_engine_mr_cache(struct rdma_engine *e);
/* The exporter for device memory registered by the engine itself. */
void rdma_engine_set_dmabuf(struct rdma_engine *e,
                            const struct rdma_dmabuf_ops *ops);
/* Largest byte count of one session: min(2^31-1, max_msg_sz, the test
 * knob). A GET larger than this becomes several sessions; a PUT must not
 * be larger (split it into parts). */
uint32_t rdma_engine_session_max(const struct rdma_engine *e);
/* Device, port and GID in one line (logs, `hipobj info`). */
const char *rdma_engine_describe(const struct rdma_engine *e);

/* ---- transfers ------------------------------------------------------------
 */

struct rdma_rc_request {
  const char *bucket, *key;
  /* UploadPart: partNumber + uploadId; GET of a part: partNumber;
   * versionId. Sorted into the target (§3.4). */
  const struct hparam *query;
  size_t nq;
  uint64_t offset; /* GET: first byte; PUT: must be 0 */
  uint64_t size;   /* bytes (>= 1) */
  void *buf;       /* GET destination / PUT source, size bytes */
  /* A registration covering [buf, buf+size) made by the caller (explicit
   * user registration, or a cache entry of a library-owned buffer); a GET
   * needs REMOTE_WRITE on it. NULL: the engine registers the buffer for
   * this transfer only and deregisters it afterwards. */
  const struct rdma_mr *mr;
  enum rdma_mem_kind mem_kind; /* of buf (device memory: no CRC check) */
  const struct rdma_control_ops *ops;
  /* PUT only, instead of buf and mr: the source gathered from nsegs
   * (1..RDMA_QP_MAX_SEND_SGE) registered host pieces, in order, size bytes
   * together (GPU data staged through pinned chunks). */
  const struct rdma_rc_seg *segs;
  size_t nsegs;
};

struct rdma_rc_seg {
  const void *buf;
  uint32_t len;
  const struct rdma_mr *mr; /* covers [buf, buf+len) */
};

struct rdma_rc_result {
  uint64_t bytes;    /* bytes moved (GET: valid bytes at buf) */
  unsigned sessions; /* sessions that completed */
  /* On failure: 1 when nothing was changed and HTTP may be used instead
   * (§6.3: PREPARE 501, 404/405 without protocol echo, 413, 400 with
   * offset+size > 2^31-1; also no device or a PUT above the session
   * limit). Never 1 once READY was sent. */
  int fallback;
  /* READY was sent: on a failed PUT the object may or may not have been
   * stored (§6.1): do not retry transparently. */
  int ready_sent;
  int http_status; /* of the failing answer, 0 when none */
  int rdma_status; /* ibv_wc_status of a failed completion, -1 when none */
  char etag[HIPOBJ_ETAG_MAX]; /* from FINAL, without quotes */
  char version_id[256];
  int caps_mp;           /* PREPARE's reply advertised part transfers (mp) */
  int no_mp;             /* failed because a part needs mp and it was absent */
  int checksum_present;  /* FINAL carried a CRC64NVME of the last session */
  int checksum_verified; /* ... and it was recomputed over the buffer */
  /* GET: the CRC-64/NVME of all `bytes`, joined from every session's
   * FINAL (crc_ok: each had one), and whether each was recomputed over
   * the buffer (host memory) rather than only reported by the server. */
  int crc_ok, crc_checked;
  uint64_t crc;
  char reason[256]; /* one line; "" on success */
};

/* GetObject of [offset, offset+size) into buf: split into sessions of at
 * most rdma_engine_session_max() bytes, run one after the other (a short
 * session, i.e. the server clamped at the object end, ends the GET).
 * PUT (PutObject / UploadPart, per query) of size bytes from buf in one
 * session. Both block. Return HIPOBJ_OK or the status of the failure, with
 * the one-line reason in err (operation "RDMA GET" / "RDMA PUT") and
 * res->reason, and res->fallback saying whether HTTP may be used. */
int rdma_rc_get(struct rdma_engine *e, const struct rdma_rc_request *rq,
                struct rdma_rc_result *res, struct hipobj_error *err);
int rdma_rc_put(struct rdma_engine *e, const struct rdma_rc_request *rq,
                struct rdma_rc_result *res, struct hipobj_error *err);

/* The same on a thread of its own, for the tests: rc_async.h. */

/* ---- pure protocol checks (exported for the unit tests) ------------------ */

/* Looks a header up in "Name: value\n" lines (case-insensitive name,
 * value trimmed); NULL when absent. */
const char *rdma_answer_header(const struct rdma_control_answer *a,
                               const char *name, size_t *len);

/* May a failed PREPARE be replaced by HTTP (§6.3)? */
int rdma_prepare_fallback_allowed(const struct rdma_control_answer *a,
                                  uint64_t offset, uint64_t size);

/* What a valid PREPARE reply gave (§3.4). */
struct rdma_prepare_reply {
  char session[RDMA_SESSION_HEX_LEN + 1]; /* exactly as received */
  struct rdma_rc_token token;             /* server QPN and GID */
  uint32_t psn;
  uint64_t mr_addr; /* PUT staging */
  uint32_t mr_rkey;
};
/* Validates a 200 PREPARE reply: HIPOBJ_OK, or HIPOBJ_E_PROTOCOL with the
 * reason in err (NULL allowed; operation NULL). */
int rdma_check_prepare_reply(const struct rdma_control_answer *a,
                             enum rdma_op op, struct rdma_prepare_reply *out,
                             struct hipobj_error *err);

struct rdma_final {
  uint64_t bytes;
  char etag[HIPOBJ_ETAG_MAX]; /* unquoted */
  char version_id[256];
  int has_crc;
  uint64_t crc;
};
/* Validates a FINAL (§4.6): status (200, or 204 for PUT), protocol echo,
 * cookie echo equal to cookie, bytes present and <= size (== size for
 * PUT), a well-formed checksum in either header form (both agreeing when
 * both are present), an ETag (unquoted, at most HIPOBJ_ETAG_MAX-3 bytes)
 * and version id of printable ASCII without quotes. HIPOBJ_OK, or
 * HIPOBJ_E_PROTOCOL with the reason in err (NULL allowed; operation NULL). */
int rdma_check_final(const struct rdma_control_answer *a, enum rdma_op op,
                     uint32_t cookie, uint64_t size, struct rdma_final *out,
                     struct hipobj_error *err);

#endif
