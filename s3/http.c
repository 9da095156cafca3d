/* http.c - the HTTP engine: a few libcurl multi handles per client, each
 * driven by a worker thread of its own. Submitters queue a transfer on the
 * least busy worker under that worker's lock and wake it; the worker owns
 * the transfer's easy handle and runs its completion callback. Why several:
 * one thread moving every byte (receive, the body callbacks' copies, send)
 * tops out near 1-2 GB/s, well below what a many-core client and server
 * reach on parallel parts. Each worker keeps its connections in its own
 * pool; an idle client sends from the first worker, so sequential requests
 * reuse one warm connection. */
#include "http.h"
#include "http_int.h"

#include <errno.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../src/base/strutil.h"

#define EXPECT_CONTINUE_MIN (1u << 20) /* body bytes */

uint64_t http_mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

const char *s3_http_version(void) {
  return curl_version();
}

int s3_global_init(void) {
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return -1;
  xmlInitParser();
  return 0;
}

void s3_global_cleanup(void) {
  xmlCleanupParser();
  curl_global_cleanup();
}

void s3_http_xfer_reset(struct s3_http_xfer *x) {
  struct s3_http_resp *r = &x->resp;
  hbuf_reset(&r->body);
  hbuf_reset(&r->extra_headers);
  struct hbuf body = r->body, extra = r->extra_headers;
  memset(r, 0, sizeof *r);
  r->body = body;
  r->extra_headers = extra;
  r->content_length = -1;
}

void s3_http_xfer_cleanup(struct s3_http_xfer *x) {
  hbuf_free(&x->resp.body);
  hbuf_free(&x->resp.extra_headers);
}

/* ---- libcurl callbacks (worker thread) ---------------------------------- */

static size_t on_header(char *data, size_t size, size_t nitems, void *ud) {
  return http_resp_header_line(ud, data, size * nitems);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud) {
  struct s3_http_xfer *x = ud;
  struct xfer_priv *p = x->priv_easy;
  size_t len = size * nmemb;
  long status = 0;
  curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
  /* 0 makes curl fail the transfer with CURLE_WRITE_ERROR. */
  return http_resp_body(x, status, data, len) == 0 ? len : 0;
}

static size_t on_read(char *buf, size_t size, size_t nitems, void *ud) {
  struct s3_http_xfer *x = ud;
  struct xfer_priv *p = x->priv_easy;
  size_t want = size * nitems;
  if (x->source) {
    size_t n = x->source(x->source_ctx, buf, want);
    if (n == (size_t)-1)
      return CURL_READFUNC_ABORT;
    p->sent += n;
    return n;
  }
  uint64_t left = x->body_len - p->sent;
  size_t n = left < want ? (size_t)left : want;
  if (n)
    memcpy(buf, x->body + p->sent, n);
  p->sent += n;
  return n;
}

/* Set to stop the transfer: its own flag or a shared one. */
int http_cancelled(const struct s3_http_xfer *x) {
  return x->cancel || (x->cancel_ref && *x->cancel_ref) ||
         (x->cancel_ref2 && *x->cancel_ref2);
}

/* Progress and cancellation: libcurl calls this often while a transfer
 * runs, so a cancel request set from another thread takes effect quickly. */
static int on_xferinfo(void *ud, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow) {
  (void)dltotal;
  (void)ultotal;
  struct s3_http_xfer *x = ud;
  if (http_cancelled(x)) {
    x->resp.cancelled = 1;
    return 1; /* CURLE_ABORTED_BY_CALLBACK */
  }
  if (x->progress)
    x->progress(x->progress_ctx, (uint64_t)ulnow, (uint64_t)dlnow);
  return 0;
}

/* curl rewinds a body when it must resend it on a fresh connection. */
static int on_seek(void *ud, curl_off_t offset, int origin) {
  struct s3_http_xfer *x = ud;
  struct xfer_priv *p = x->priv_easy;
  if (x->source || origin != SEEK_SET || offset < 0 ||
      (uint64_t)offset > x->body_len)
    return CURL_SEEKFUNC_CANTSEEK;
  p->sent = (uint64_t)offset;
  return CURL_SEEKFUNC_OK;
}

/* ---- transfer setup and completion (worker thread) ---------------------- */

/* The here-pool's handles come with their multi handle (*multi). */
static CURL *take_easy(struct worker *h, CURLM **multi) {
  struct idle_easy kept = {NULL, NULL};
  if (h->shared)
    pthread_mutex_lock(&h->lock);
  if (h->n_idle)
    kept = h->idle[--h->n_idle];
  if (h->shared)
    pthread_mutex_unlock(&h->lock);
  if (kept.easy) {
    curl_easy_reset(kept.easy);
    *multi = kept.multi;
    return kept.easy;
  }
  if (h->shared && !(*multi = curl_multi_init()))
    return NULL;
  return curl_easy_init();
}

/* Idle handles of the here-pool kept: one per thread that runs requests
 * at once, in the usual case of a few such threads. */
#define HERE_IDLE_MAX 16

static void give_easy(struct worker *h, CURL *e, CURLM *multi) {
  if (h->shared)
    pthread_mutex_lock(&h->lock);
  struct idle_easy *p = NULL;
  if (!h->shared || h->n_idle < HERE_IDLE_MAX)
    p = realloc(h->idle, (h->n_idle + 1) * sizeof *p);
  if (p) {
    h->idle = p;
    h->idle[h->n_idle++] = (struct idle_easy){e, multi};
  }
  if (h->shared)
    pthread_mutex_unlock(&h->lock);
  if (!p) {
    curl_easy_cleanup(e);
    if (multi)
      curl_multi_cleanup(multi);
  }
}

/* Stall detection: libcurl counts the low-speed window in whole seconds. */
unsigned http_low_speed(const struct s3_http *h, const struct s3_http_xfer *x) {
  unsigned v = x->low_speed_bytes_per_s ? x->low_speed_bytes_per_s
                                        : h->cfg.low_speed_bytes_per_s;
  return v ? v : 1;
}

unsigned http_stall_seconds(const struct s3_http *h) {
  return (h->cfg.stall_timeout_ms + 999) / 1000;
}

static int setup_easy(struct s3_http *h, struct s3_http_xfer *x,
                      struct xfer_priv *p) {
  CURL *e = p->easy;
  const struct s3_http_config *c = &h->cfg;
  int has_ctype = 0;
  for (size_t i = 0; i < x->n_header_lines; i++) {
    if (!strncasecmp(x->header_lines[i], "content-type:", 13))
      has_ctype = 1;
    struct curl_slist *l = curl_slist_append(p->headers, x->header_lines[i]);
    if (!l)
      return -1;
    p->headers = l;
  }
  /* Large bodies ask "Expect: 100-continue": a server that refuses the
   * request (bad signature, no bucket) answers before the body is sent
   * instead of closing a connection we are still writing to, which would
   * lose its answer to EPIPE. Small bodies skip the round trip. No form
   * Content-Type that curl would add to a POST. A request without a body
   * gets neither header from curl: two header lines fewer for curl to
   * look through on every small GET. */
  int sends_body =
      !strcmp(x->method, "PUT") || !strcmp(x->method, "POST") || x->send_body;
  const char *suppress[] = {
      x->body_len >= EXPECT_CONTINUE_MIN ? "Expect: 100-continue" : "Expect:",
      has_ctype ? NULL : "Content-Type:"};
  for (size_t i = 0; i < 2 && sends_body; i++) {
    if (!suppress[i])
      continue;
    struct curl_slist *l = curl_slist_append(p->headers, suppress[i]);
    if (!l)
      return -1;
    p->headers = l;
  }
  CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                          \
  do {                                                                         \
    if (rc == CURLE_OK)                                                        \
      rc = curl_easy_setopt(e, opt, val);                                      \
  } while (0)
  SET(CURLOPT_URL, x->url);
  SET(CURLOPT_PATH_AS_IS, 1L); /* S3 keys are never normalised */
  SET(CURLOPT_NOSIGNAL, 1L);
  SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  SET(CURLOPT_HTTPHEADER, p->headers);
  SET(CURLOPT_PRIVATE, x);
  SET(CURLOPT_ERRORBUFFER, p->errbuf);
  SET(CURLOPT_HEADERFUNCTION, on_header);
  SET(CURLOPT_HEADERDATA, x);
  SET(CURLOPT_WRITEFUNCTION, on_body);
  SET(CURLOPT_WRITEDATA, x);
  SET(CURLOPT_TCP_KEEPALIVE, 1L);
  /* A server that ignores Expect gets the body after this long anyway. */
  SET(CURLOPT_EXPECT_100_TIMEOUT_MS, 1000L);
  SET(CURLOPT_NOPROGRESS, 0L);
  SET(CURLOPT_XFERINFOFUNCTION, on_xferinfo);
  SET(CURLOPT_XFERINFODATA, x);
  if (x->dedicated_connection) {
    SET(CURLOPT_FRESH_CONNECT, 1L);
    SET(CURLOPT_FORBID_REUSE, 1L);
  }
  SET(CURLOPT_BUFFERSIZE, 512L * 1024);
  /* libcurl allocates its upload buffer again for each request of a
   * reused (reset) handle, and glibc gives a 2 MiB buffer back to the
   * kernel when it is freed: every part faulted its buffer in anew, 34
   * page faults per MiB sent, all in on_read's copy (perf record -e
   * page-faults). 256 KiB: far fewer faults, more sends; measured against
   * hipobj-server --storage memory (tests/bench/README.md, "The client's
   * ceiling"): PUT from memory 2.5x the MB/s at half the CPU per GiB. */
  SET(CURLOPT_UPLOAD_BUFFERSIZE, 256L * 1024);
  SET(CURLOPT_CONNECTTIMEOUT_MS, (long)c->connect_timeout_ms);
  if (x->timeout_ms)
    SET(CURLOPT_TIMEOUT_MS, (long)x->timeout_ms);
  else if (c->request_timeout_ms)
    SET(CURLOPT_TIMEOUT_MS, (long)c->request_timeout_ms);
  /* A request with its own whole-request limit (the RDMA control
   * requests) is bounded by it; stall detection would cut READY, which
   * moves no bytes while the data phase runs by RDMA, after the stall
   * window even when the session has longer. */
  if (c->stall_timeout_ms && !x->timeout_ms) {
    SET(CURLOPT_LOW_SPEED_LIMIT, (long)http_low_speed(h, x));
    SET(CURLOPT_LOW_SPEED_TIME, (long)http_stall_seconds(h));
  }
  SET(CURLOPT_SSL_VERIFYPEER, c->tls_skip_verify ? 0L : 1L);
  SET(CURLOPT_SSL_VERIFYHOST, c->tls_skip_verify ? 0L : 2L);
  if (h->ca_bundle)
    SET(CURLOPT_CAINFO, h->ca_bundle);

  if (!strcmp(x->method, "HEAD")) {
    SET(CURLOPT_NOBODY, 1L);
  } else if (!strcmp(x->method, "PUT")) {
    SET(CURLOPT_UPLOAD, 1L);
    SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->body_len);
  } else if (!strcmp(x->method, "POST")) {
    SET(CURLOPT_POST, 1L);
    SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
  } else if (strcmp(x->method, "GET") != 0) {
    SET(CURLOPT_CUSTOMREQUEST, x->method);
    if (x->send_body) {
      SET(CURLOPT_UPLOAD, 1L);
      SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->body_len);
    }
  }
  SET(CURLOPT_READFUNCTION, on_read);
  SET(CURLOPT_READDATA, x);
  SET(CURLOPT_SEEKFUNCTION, on_seek);
  SET(CURLOPT_SEEKDATA, x);
#undef SET
  return rc == CURLE_OK ? 0 : -1;
}

/* The transfer leaves the worker; `done` may submit it again at once. */
void http_complete(struct worker *h, struct s3_http_xfer *x) {
  __atomic_sub_fetch(&h->load, 1, __ATOMIC_RELAXED);
  if (x->done)
    x->done(x, x->done_ctx);
}

/* libcurl says "Couldn't connect to server" for a refused, an unreachable
 * and a filtered port alike: the system's errno tells the user which one
 * to look into. */
void http_add_os_errno(CURL *e, CURLcode code, struct s3_http_resp *r) {
  long os_errno = 0;
  if (code == CURLE_COULDNT_CONNECT &&
      curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK &&
      os_errno > 0) {
    size_t n = strlen(r->transport_msg);
    snprintf(r->transport_msg + n, sizeof r->transport_msg - n, " (%s)",
             strerror((int)os_errno));
  }
}

void http_finish(struct worker *h, struct s3_http_xfer *x, CURLcode code) {
  struct xfer_priv *p = x->priv_easy;
  struct s3_http_resp *r = &x->resp;
  if (p) {
    curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &r->status);
    r->transport_code = (int)code;
    /* libcurl reports the stall detection as a timeout too: say which
     * rule ended the transfer, in the terms of the configuration. */
    if (code == CURLE_OPERATION_TIMEDOUT && h->h->cfg.stall_timeout_ms &&
        strstr(p->errbuf, "too slow"))
      snprintf(r->transport_msg, sizeof r->transport_msg,
               "transfer slower than %u bytes/s for %u s (stall detection: "
               "low_speed_bytes_per_s, stall_timeout_ms)",
               http_low_speed(h->h, x), http_stall_seconds(h->h));
    if (code != CURLE_OK && !r->transport_msg[0])
      hstrlcpy(r->transport_msg,
               p->errbuf[0] ? p->errbuf : curl_easy_strerror(code),
               sizeof r->transport_msg);
    http_add_os_errno(p->easy, code, r);
    /* A failed transfer has no answer, unless it was ended on purpose
     * after the status of an error answer arrived. */
    if (code != CURLE_OK && !r->error_body_cut)
      r->status = r->status >= 200 && r->status < 300 ? r->status : 0;
    curl_slist_free_all(p->headers);
    /* A handle whose transfer failed is not reused: libcurl 7.88 keeps
     * state in one after a failed name lookup that makes the next
     * setopt(CURLOPT_BUFFERSIZE) fail, so every retry of an unknown host
     * ended in "could not set up the transfer" instead of its cause. */
    if (code == CURLE_OK) {
      give_easy(h, p->easy, p->multi);
    } else {
      curl_easy_cleanup(p->easy);
      if (p->multi)
        curl_multi_cleanup(p->multi);
    }
    free(p);
    x->priv_easy = NULL;
  }
  if (r->transport_msg[0] && r->transport_code == 0)
    r->transport_code = CURLE_WRITE_ERROR;
  http_complete(h, x);
}

struct xfer_priv *http_begin(struct worker *h, struct s3_http_xfer *x) {
  if (http_cancelled(x)) {
    /* Cancelled while queued (e.g. during a retry backoff). */
    x->resp.cancelled = 1;
    x->resp.transport_code = CURLE_ABORTED_BY_CALLBACK;
    hstrlcpy(x->resp.transport_msg, "cancelled", sizeof x->resp.transport_msg);
    http_complete(h, x);
    return NULL;
  }
  struct xfer_priv *p = calloc(1, sizeof *p);
  if (p)
    p->easy = take_easy(h, &p->multi);
  if (!p || !p->easy) {
    if (p && p->multi)
      curl_multi_cleanup(p->multi);
    free(p);
    hstrlcpy(x->resp.transport_msg, "out of memory starting a transfer",
             sizeof x->resp.transport_msg);
    x->resp.transport_code = CURLE_OUT_OF_MEMORY;
    http_complete(h, x);
    return NULL;
  }
  x->priv_easy = p;
  if (setup_easy(h->h, x, p) != 0) {
    hstrlcpy(x->resp.transport_msg, "could not set up the transfer",
             sizeof x->resp.transport_msg);
    http_finish(h, x, CURLE_FAILED_INIT);
    return NULL;
  }
  return p;
}

static void active_add(struct worker *h, struct xfer_priv *p) {
  p->prev = NULL;
  p->next = h->active;
  if (h->active)
    h->active->prev = p;
  h->active = p;
}

static void active_remove(struct worker *h, struct xfer_priv *p) {
  if (p->prev)
    p->prev->next = p->next;
  else
    h->active = p->next;
  if (p->next)
    p->next->prev = p->prev;
  p->prev = p->next = NULL;
}

static void start(struct worker *h, struct s3_http_xfer *x) {
  struct xfer_priv *p = http_begin(h, x);
  if (!p)
    return;
  if (curl_multi_add_handle(h->multi, p->easy)) {
    hstrlcpy(x->resp.transport_msg, "could not set up the transfer",
             sizeof x->resp.transport_msg);
    http_finish(h, x, CURLE_FAILED_INIT);
    return;
  }
  p->x = x;
  active_add(h, p);
}

/* Ends the cancelled transfers libcurl holds. on_xferinfo ends a running
 * one, but libcurl calls it only for transfers that have a connection: one
 * waiting for a free connection (max_connections reached) would see its
 * cancel only once another transfer gave one up, which a long transfer may
 * not do for minutes (libcurl's own time limits wait for a connection
 * too: a caller that needs a bound there, like the RDMA READY wait,
 * cancels). Swept when a cancel asks, and every SWEEP_MS for the tokens,
 * which are set without a wakeup (the loop wakes at least once a
 * second). */
#define SWEEP_MS 250
static void sweep_cancelled(struct worker *h, uint64_t now) {
  if (!__atomic_exchange_n(&h->sweep_now, 0, __ATOMIC_ACQ_REL) &&
      now - h->swept_ms < SWEEP_MS)
    return;
  h->swept_ms = now;
  for (struct xfer_priv *p = h->active, *next; p; p = next) {
    next = p->next;
    struct s3_http_xfer *x = p->x;
    if (!http_cancelled(x))
      continue;
    active_remove(h, p);
    curl_multi_remove_handle(h->multi, p->easy);
    x->resp.cancelled = 1;
    hstrlcpy(p->errbuf, "cancelled", sizeof p->errbuf);
    http_finish(h, x, CURLE_ABORTED_BY_CALLBACK);
  }
}

static void *worker_main(void *arg) {
  struct worker *h = arg;
  for (;;) {
    struct s3_http_xfer *ready = NULL, **tail = &ready;
    uint64_t now = http_mono_ms(), next = now + 1000;
    pthread_mutex_lock(&h->lock);
    int stop = h->stop;
    for (struct s3_http_xfer **pp = &h->queue; *pp;) {
      struct s3_http_xfer *x = *pp;
      if (x->priv_not_before_ms <= now) {
        *pp = x->priv_next;
        x->priv_next = NULL;
        *tail = x;
        tail = &x->priv_next;
      } else {
        if (x->priv_not_before_ms < next)
          next = x->priv_not_before_ms;
        pp = &x->priv_next;
      }
    }
    pthread_mutex_unlock(&h->lock);
    while (ready) {
      struct s3_http_xfer *x = ready;
      ready = x->priv_next;
      x->priv_next = NULL;
      start(h, x);
    }
    int running = 0;
    curl_multi_perform(h->multi, &running);
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(h->multi, &left))) {
      if (m->msg != CURLMSG_DONE)
        continue;
      struct s3_http_xfer *x = NULL;
      CURL *e = m->easy_handle;
      CURLcode code = m->data.result;
      curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&x);
      active_remove(h, x->priv_easy);
      curl_multi_remove_handle(h->multi, e);
      http_finish(h, x, code);
    }
    sweep_cancelled(h, now);
    if (stop && running == 0)
      break;
    uint64_t after = http_mono_ms();
    int wait = next > after ? (int)(next - after) : 0;
    curl_multi_poll(h->multi, NULL, 0, wait, NULL);
  }
  return NULL;
}

static void worker_cleanup(struct worker *w) {
  if (w->started) {
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_mutex_unlock(&w->lock);
    curl_multi_wakeup(w->multi);
    pthread_join(w->thread, NULL);
  }
  for (size_t i = 0; i < w->n_idle; i++) {
    curl_easy_cleanup(w->idle[i].easy);
    if (w->idle[i].multi)
      curl_multi_cleanup(w->idle[i].multi);
  }
  free(w->idle);
  if (w->multi)
    curl_multi_cleanup(w->multi);
  pthread_mutex_destroy(&w->lock);
}

static int worker_init(struct s3_http *h, struct worker *w, long maxc,
                       struct hipobj_error *err) {
  w->h = h;
  pthread_mutex_init(&w->lock, NULL);
  w->multi = curl_multi_init();
  if (!w->multi)
    return herr_set(err, HIPOBJ_E_INTERNAL, NULL,
                    "cannot create the libcurl multi handle");
  curl_multi_setopt(w->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxc);
  curl_multi_setopt(w->multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxc);
  curl_multi_setopt(w->multi, CURLMOPT_MAXCONNECTS, maxc);
  int e = pthread_create(&w->thread, NULL, worker_main, w);
  if (e)
    return herr_set(err, HIPOBJ_E_INTERNAL, NULL,
                    "cannot start an HTTP worker thread: %s", strerror(e));
  w->started = 1;
  return HIPOBJ_OK;
}

int s3_http_create(const struct s3_http_config *cfg, struct s3_http **out,
                   struct hipobj_error *err) {
  struct s3_http *h = calloc(1, sizeof *h);
  unsigned n = cfg->io_threads ? cfg->io_threads : 1;
  if (h)
    h->w = calloc(n, sizeof *h->w);
  if (!h || !h->w) {
    free(h);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, NULL, "out of memory");
  }
  int rc = HIPOBJ_OK;
  h->here.h = h;
  h->here.shared = 1;
  pthread_mutex_init(&h->here.lock, NULL);
  h->cfg = *cfg;
  h->bp.cap_us = cfg->busy_poll_us;
  h->bp.max_pollers = cfg->busy_pollers ? cfg->busy_pollers : 1;
  h->bp.hit_share = 1024; /* until polls say otherwise */
  h->ca_bundle = hstrdup(cfg->ca_bundle);
  h->cfg.ca_bundle = NULL;
  if (cfg->ca_bundle && !h->ca_bundle) {
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, NULL, "out of memory");
    goto fail;
  }
  /* The connection limit is the client's: shared out among the workers. */
  long maxc = cfg->max_connections ? (long)cfg->max_connections : 16;
  maxc = (maxc + (long)n - 1) / (long)n;
  for (; h->n_workers < n; h->n_workers++)
    if ((rc = worker_init(h, &h->w[h->n_workers], maxc, err)) != HIPOBJ_OK) {
      h->n_workers++; /* cleaned up below, as far as it got */
      goto fail;
    }
  *out = h;
  return HIPOBJ_OK;
fail:
  s3_http_destroy(h);
  return rc;
}

void s3_http_destroy(struct s3_http *h) {
  if (!h)
    return;
  http_here_report(h);
  http_wire_cleanup(h);
  for (unsigned i = 0; i < h->n_workers; i++)
    worker_cleanup(&h->w[i]);
  if (h->w) /* h->here's lock was made with h->w */
    worker_cleanup(&h->here);
  free(h->w);
  free(h->ca_bundle);
  free(h);
}

/* The worker with the fewest transfers; ties go to the first, so an idle
 * client keeps using the first worker's connections. */
static struct worker *pick(struct s3_http *h) {
  struct worker *best = &h->w[0];
  unsigned best_load = __atomic_load_n(&best->load, __ATOMIC_RELAXED);
  for (unsigned i = 1; i < h->n_workers && best_load; i++) {
    unsigned l = __atomic_load_n(&h->w[i].load, __ATOMIC_RELAXED);
    if (l < best_load) {
      best = &h->w[i];
      best_load = l;
    }
  }
  return best;
}

int s3_http_submit(struct s3_http *h, struct s3_http_xfer *x,
                   unsigned delay_ms) {
  s3_http_xfer_reset(x);
  x->priv_easy = NULL;
  x->priv_next = NULL;
  x->priv_worker = NULL;
  x->priv_not_before_ms = delay_ms ? http_mono_ms() + delay_ms : 0;
  /* A retry's backoff too: the thread waits either way. */
  if (x->run_here && http_here_keep(h, x))
    return 0;
  struct worker *w = pick(h);
  pthread_mutex_lock(&w->lock);
  if (w->stop) {
    pthread_mutex_unlock(&w->lock);
    return -1;
  }
  __atomic_add_fetch(&w->load, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&x->priv_worker, w, __ATOMIC_RELEASE);
  /* Append, so transfers start in submission order. */
  struct s3_http_xfer **pp = &w->queue;
  while (*pp)
    pp = &(*pp)->priv_next;
  *pp = x;
  pthread_mutex_unlock(&w->lock);
  curl_multi_wakeup(w->multi);
  return 0;
}

void s3_http_cancel(struct s3_http *h, struct s3_http_xfer *x) {
  x->cancel = 1;
  /* So an idle worker notices soon: the one it was given to, if known. */
  struct worker *w = __atomic_load_n(&x->priv_worker, __ATOMIC_ACQUIRE);
  if (w) {
    __atomic_store_n(&w->sweep_now, 1, __ATOMIC_RELEASE);
    curl_multi_wakeup(w->multi);
  } else {
    s3_http_wakeup(h);
  }
}

void s3_http_wakeup(struct s3_http *h) {
  for (unsigned i = 0; i < h->n_workers; i++) {
    __atomic_store_n(&h->w[i].sweep_now, 1, __ATOMIC_RELEASE);
    curl_multi_wakeup(h->w[i].multi);
  }
}

struct waiter {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done;
};

static void wake(struct s3_http_xfer *x, void *ctx) {
  (void)x;
  struct waiter *w = ctx;
  pthread_mutex_lock(&w->lock);
  w->done = 1;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

int s3_http_perform(struct s3_http *h, struct s3_http_xfer *x) {
  struct waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  x->done = wake;
  x->done_ctx = &w;
  if (s3_http_submit(h, x, 0) != 0)
    return -1;
  pthread_mutex_lock(&w.lock);
  while (!w.done)
    pthread_cond_wait(&w.cond, &w.lock);
  pthread_mutex_unlock(&w.lock);
  x->done = NULL;
  return 0;
}
