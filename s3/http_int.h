/* http_int.h - what http.c (the workers) and http_here.c (transfers run on
 * the thread that waits for them) share: the engine's state, the easy
 * handle pools and the steps that start and finish a transfer. Internal
 * to s3/; only these two files include libcurl's multi interface. */
#ifndef HIPOBJ_S3_HTTP_INT_H
#define HIPOBJ_S3_HTTP_INT_H

#include <curl/curl.h>
#include <pthread.h>

#include "http.h"

/* A kept easy handle; in the here-pool with the multi handle that runs it,
 * which holds the handle's connection between requests (as
 * curl_easy_perform's own would). */
struct idle_easy {
  CURL *easy;
  CURLM *multi; /* NULL in a worker's pool */
};

struct worker {
  struct s3_http *h;
  CURLM *multi;
  pthread_t thread;
  int started;
  pthread_mutex_t lock;
  struct s3_http_xfer *queue; /* submitted, not yet handed to curl */
  int stop;
  unsigned load; /* transfers submitted and not finished (atomic) */
  /* Handed to libcurl and not finished (worker-only), swept for
   * cancelled ones: see sweep_cancelled() in http.c. */
  struct xfer_priv *active;
  uint64_t swept_ms;      /* when it was last swept */
  int sweep_now;          /* a cancel asked for a sweep (atomic) */
  struct idle_easy *idle; /* kept for reuse; worker-only */
  size_t n_idle;
  int shared; /* the here-pool: idle used by any thread, under lock */
};

/* The wire path's idle connections kept at most. */
#define WIRE_IDLE_MAX 16

/* Busy polling of the transfers run here (http_here.c); atomics. */
struct busy_poll {
  unsigned cap_us;      /* the longest poll before sleeping; 0: never */
  unsigned max_pollers; /* threads of this client polling at once */
  unsigned pollers;     /* polling now */
  unsigned hit_share;   /* of recent polled waits, answered while polling
                           (moving, in 1024ths) */
  unsigned skipped;     /* waits not polled: every PROBE-th is, to re-learn */
  uint64_t waits, answered; /* polled waits; answered while polling */
};

struct s3_http {
  struct s3_http_config cfg;
  char *ca_bundle;
  unsigned n_workers;
  struct worker *w;
  struct worker here; /* easy handles of transfers run by their waiter */
  struct busy_poll bp;
  /* The wire path's idle connections, under here.lock (http_wire.c). */
  struct wire_conn *wire_idle[WIRE_IDLE_MAX];
  size_t n_wire_idle;
};

/* Per-transfer engine state, allocated at start and freed at completion. */
struct xfer_priv {
  struct s3_http_xfer *x;
  struct xfer_priv *prev, *next; /* the worker's active list */
  CURL *easy;
  CURLM *multi; /* here-pool: the multi handle that runs it */
  struct curl_slist *headers;
  uint64_t sent;
  char errbuf[CURL_ERROR_SIZE];
};

uint64_t http_mono_ms(void);
/* Takes an easy handle from the worker's pool (or a new one) and sets the
 * transfer up on it; NULL when the transfer has already completed
 * (cancelled, or set-up failed). */
struct xfer_priv *http_begin(struct worker *w, struct s3_http_xfer *x);
/* Records the outcome, gives the handle back, runs `done`. */
void http_finish(struct worker *w, struct s3_http_xfer *x, CURLcode code);
/* s3_http_submit's question for a run_here transfer: whether this
 * thread keeps it (armed by s3_http_here_begin, nothing kept yet). */
int http_here_keep(struct s3_http *h, struct s3_http_xfer *x);
/* An answer's pieces into x->resp (http_resp.c), whoever framed them:
 * one header line (the status line too, which starts a new answer),
 * and body bytes of an answer with that status (a 2xx one to the sink, or
 * kept in resp.body within its limit). http_resp_body returns 0 to go on,
 * -1 to end the transfer (aborted_by_sink, error_body_cut or
 * transport_msg say why). */
size_t http_resp_header_line(struct s3_http_xfer *x, const char *data,
                             size_t len);
int http_resp_body(struct s3_http_xfer *x, long status, const char *data,
                   size_t len);
/* A transfer's cancel flags, any of them set. */
int http_cancelled(const struct s3_http_xfer *x);
/* Stall detection's floor (bytes/s) and window (whole seconds). */
unsigned http_low_speed(const struct s3_http *h, const struct s3_http_xfer *x);
unsigned http_stall_seconds(const struct s3_http *h);
/* Adds the system's reason to a failed connect's message. */
void http_add_os_errno(CURL *e, CURLcode code, struct s3_http_resp *r);
/* The transfer leaves the worker (w->load) and its `done` runs. */
void http_complete(struct worker *w, struct s3_http_xfer *x);
/* A wait of a transfer run here may poll this long (0: it sleeps); when
 * it did, http_poll_end says whether the answer came while polling. */
unsigned http_poll_begin(struct busy_poll *b);
void http_poll_end(struct busy_poll *b, int answered);
/* The wire path (http_wire.c): runs x, a transfer kept by this thread,
 * when it is a GET the path takes, and returns 1 once `done` has run;
 * returns 0, having done nothing, for libcurl to run it. */
int http_wire_run(struct worker *w, struct s3_http_xfer *x);
/* Closes the wire path's idle connections (the client goes). */
void http_wire_cleanup(struct s3_http *h);
/* The busy-poll counters, logged when the client goes. */
void http_here_report(const struct s3_http *h);

#endif
