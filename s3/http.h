/* http.h - the HTTP engine: libcurl multi handles, each driven by a worker
 * thread (io_threads of them per client). Requests are submitted from any
 * thread and complete through a callback on the worker thread that ran
 * them, so many transfers run concurrently over the workers' connection
 * pools. The only interface to libcurl. */
#ifndef HIPOBJ_S3_HTTP_H
#define HIPOBJ_S3_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "../src/base/buf.h"
#include "../src/base/error.h"
#include "../src/base/log.h"

struct s3_http;

struct s3_http_config {
  unsigned connect_timeout_ms;
  unsigned request_timeout_ms;    /* 0: none */
  unsigned stall_timeout_ms;      /* abort when below the low speed ... */
  unsigned low_speed_bytes_per_s; /* ... for this long; 0: 1 byte/s */
  unsigned max_connections;       /* in all, shared out among the workers */
  unsigned io_threads;            /* workers; 0: 1 */
  /* Transfers run on their waiting thread poll for their answer this long
   * before sleeping, while answers come that fast (http_here.c); 0: never.
   * At most busy_pollers threads poll at once (0: 1). */
  unsigned busy_poll_us;
  unsigned busy_pollers;
  /* Small GETs run here go by the wire path (http_wire.c): HTTP/1.1
   * written and read by the engine itself over a libcurl connection. */
  int wire;
  int tls_skip_verify;
  const char *ca_bundle;
  const struct hlog *log;
};

/* Starts the workers. Fails with HIPOBJ_E_OUT_OF_MEMORY, or
 * HIPOBJ_E_INTERNAL when libcurl or a thread cannot be set up; err (NULL
 * allowed) gets the reason with operation NULL (herr_op names it). */
int s3_http_create(const struct s3_http_config *cfg, struct s3_http **out,
                   struct hipobj_error *err);
/* Waits for the worker to stop; no transfer may be in flight. */
void s3_http_destroy(struct s3_http *h);

/* Receives body bytes of a 2xx answer. Return 0 to go on, -1 to abort the
 * transfer (the reason stays with the caller). */
typedef int (*s3_sink_fn)(void *ctx, const char *data, size_t n);
/* Fills buf with up to n request-body bytes; returns the count (0 only at the
 * end of the body), or (size_t)-1 to abort. */
typedef size_t (*s3_source_fn)(void *ctx, char *buf, size_t n);

/* Non-2xx bodies are kept up to this many bytes. S3's error documents are
 * a few hundred bytes, a proxy's error page a few KiB; a longer body ends
 * the transfer (the connection is dropped) instead of being read on
 * forever, and its beginning is what the error is parsed from. */
#define S3_HTTP_ERROR_BODY_LIMIT ((size_t)64 * 1024)

struct s3_http_resp {
  long status;        /* 0 when no answer */
  int transport_code; /* CURLcode, 0 on success */
  char transport_msg[256];
  int64_t content_length; /* -1 when absent */
  char content_range[128];
  char etag[128];
  char last_modified[64];
  char content_type[256];
  char request_id[128];
  char location[256];  /* Location of a redirect (cut to fit) */
  int aborted_by_sink; /* the sink returned -1 */
  /* A non-2xx body exceeded S3_HTTP_ERROR_BODY_LIMIT: its beginning is in
   * body, the transfer was ended there, status is kept. */
  int error_body_cut;
  int cancelled;             /* stopped through x->cancel */
  uint64_t body_bytes;       /* bytes passed to the sink / stored in body */
  struct hbuf body;          /* non-2xx bodies, and 2xx bodies without sink */
  struct hbuf extra_headers; /* "name: value\n" lines of x-amz-* answers */
};

struct s3_http_xfer;
typedef void (*s3_done_fn)(struct s3_http_xfer *x, void *ctx);

struct s3_http_xfer {
  /* request (borrowed until completion) */
  const char *method;
  const char *url;
  char *const *header_lines;
  size_t n_header_lines;
  int no_body_expected; /* HEAD */
  const char *body;     /* in-memory request body, or */
  s3_source_fn source;  /* streamed request body */
  void *source_ctx;
  uint64_t body_len; /* request body length (either form) */
  int send_body;     /* a body (possibly empty) is sent */
  s3_sink_fn sink;   /* 2xx response body; NULL: resp.body */
  void *sink_ctx;
  size_t body_limit; /* cap of a 2xx resp.body; 0: 1 MiB */
  s3_done_fn done;   /* called on the worker thread */
  void *done_ctx;
  /* Optional: bytes moved so far in this attempt (either direction), called
   * on the worker thread as data moves. */
  void (*progress)(void *ctx, uint64_t sent, uint64_t received);
  void *progress_ctx;
  /* Set (from any thread) to abort the transfer; it then completes with
   * resp.cancelled = 1. */
  volatile int cancel;
  /* Optional: a flag shared by several transfers (a whole multipart or
   * parallel transfer); non-zero cancels like `cancel`. */
  const volatile int *cancel_ref;
  /* Optional: a second such flag (a token the library's user sets). */
  const volatile int *cancel_ref2;
  /* A connection of its own, closed after the answer (RDMA control
   * requests: READY holds its connection through the data phase). */
  int dedicated_connection;
  unsigned timeout_ms; /* whole-transfer limit, which replaces stall
                        * detection; 0: the engine's limit and stall
                        * detection */
  /* The submitting thread waits for the answer anyway: between
   * s3_http_here_begin() and s3_http_here_run() on that thread, the
   * transfer may run there (see s3_http_here_run). */
  int run_here;
  /* Stall detection floor of this transfer; 0: the engine's. */
  unsigned low_speed_bytes_per_s;
  /* result */
  struct s3_http_resp resp;
  /* private to the engine */
  void *priv_easy;
  void *priv_worker; /* the worker it was last submitted to */
  struct s3_http_xfer *priv_next;
  uint64_t priv_not_before_ms;
};

/* Resets resp for a new attempt (keeps the request fields). */
void s3_http_xfer_reset(struct s3_http_xfer *x);
/* Frees what resp holds. */
void s3_http_xfer_cleanup(struct s3_http_xfer *x);
/* Copies the value of the x-amz-* answer header `name` (any case) into out
 * (truncated to cap). Returns 1 when the answer had it, else 0. */
/* A redirect (301, 302, 303, 307, 308) is never followed: it would carry
 * the request's signature to another host. For such an answer this
 * writes what to tell the user into out ("redirected to HOST ...", naming
 * the host of Location, or else the region of x-amz-bucket-region; only
 * printable characters of them) and returns 1; 0 for any other answer. */
int s3_http_redirect_text(const struct s3_http_resp *r, char *out, size_t cap);

int s3_http_resp_header(const struct s3_http_resp *r, const char *name,
                        char *out, size_t cap);

/* Queues x on the least busy worker; `done` runs on that worker when it
 * ends (success or not). With
 * delay_ms the transfer starts no sooner than that (retry backoff). */
int s3_http_submit(struct s3_http *h, struct s3_http_xfer *x,
                   unsigned delay_ms);
/* Asks a submitted transfer to stop (any thread); it completes through
 * `done` with resp.cancelled set. Harmless once it has completed. */
void s3_http_cancel(struct s3_http *h, struct s3_http_xfer *x);
/* Wakes the workers so they re-check cancel flags of running transfers. */
void s3_http_wakeup(struct s3_http *h);
/* Submits and waits. x->done must be NULL. */
int s3_http_perform(struct s3_http *h, struct s3_http_xfer *x);

/* Running a transfer on the thread that waits for it. A request answered in
 * about a round trip spends as long again crossing to a worker thread and
 * back (two wake-ups) as the server takes; a thread that will only wait
 * can do the work itself. Between s3_http_here_begin() and
 * s3_http_here_run(), the first submission with run_here set made on this
 * thread is kept, not queued; s3_http_here_run() runs it, after its delay
 * (a retry's backoff: the thread sleeps it instead of waiting for it) (and
 * any kept while it ran: its `done` may submit the next) with an easy
 * handle of the client's own here-pool, whose connections stay open
 * between requests as the workers' do, then ends the arming. Everything
 * else (timeouts, stall detection, cancel, progress, completion through
 * `done`) is as on a worker. Returns the previous arming for nesting. */
int s3_http_here_begin(void);
void s3_http_here_run(int previous);
/* The libcurl version string, for diagnostics. */
const char *s3_http_version(void);
/* Global init/cleanup of libcurl and libxml2 (called by hipobj_global_*). */
int s3_global_init(void);
void s3_global_cleanup(void);

#endif
