/* http_wire.c - the wire path: a small GET run on the thread that waits
 * for it is written and read as HTTP/1.1 by the engine itself, over a
 * connection libcurl opened (CURLOPT_CONNECT_ONLY: name lookup, connect
 * and TLS with its verification stay libcurl's; curl_easy_send and
 * curl_easy_recv move the bytes). Why: libcurl's per-request machinery
 * costs a serial small GET more than everything else the client does
 * (docs/engine.md, "The wire path for small GETs", has the measurements
 * and the rules). The answer is framed by http_frame.c and collected by
 * http_resp.c, as libcurl's callbacks collect theirs; the outcome is the
 * CURLcode libcurl would have given, so nothing above the engine knows
 * which path ran. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/base/strutil.h"
#include "http_frame.h"
#include "http_int.h"

#define RECV_BUF (64u * 1024)
/* Longest sleep between checks of cancellation, time limit and stalls. */
#define SLICE_MS 100

struct wire_conn {
  CURL *easy;
  curl_socket_t fd;
  char *origin; /* "scheme://authority" it is connected to */
  int used;     /* has carried an answer read to its end */
  char rbuf[RECV_BUF];
};

/* One exchange's clocks and counters. */
struct wire_io {
  struct s3_http *h;
  struct s3_http_xfer *x;
  struct wire_conn *c;
  uint64_t deadline_ms;             /* 0: none */
  uint64_t moved;                   /* bytes sent and received */
  uint64_t win_start_ms, win_moved; /* stall detection's window */
  unsigned stall_ms;                /* 0: no stall detection */
  unsigned timeout_ms;
};

static uint64_t mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- eligibility and the request's bytes -------------------------------- */

static int eligible(const struct s3_http *h, const struct s3_http_xfer *x) {
  return h->cfg.wire && x->run_here && !strcmp(x->method, "GET") &&
         !x->send_body && !x->body && !x->source && !x->body_len &&
         !x->no_body_expected && !x->dedicated_connection &&
         (!strncmp(x->url, "http://", 7) || !strncmp(x->url, "https://", 8));
}

/* The origin ("scheme://authority") and the request's bytes: the request
 * line with the URL's path and query, as signed, then the signed header
 * lines (Host among them). */
static int build(const struct s3_http_xfer *x, struct hbuf *origin,
                 struct hbuf *req) {
  const char *auth = strstr(x->url, "://") + 3;
  const char *path = auth + strcspn(auth, "/?#");
  if (*path == '#')
    return -1;
  hbuf_append(origin, x->url, (size_t)(path - x->url));
  hbuf_puts(req, "GET ");
  if (*path != '/')
    hbuf_putc(req, '/');
  hbuf_puts(req, path);
  hbuf_puts(req, " HTTP/1.1\r\n");
  for (size_t i = 0; i < x->n_header_lines; i++) {
    hbuf_puts(req, x->header_lines[i]);
    hbuf_puts(req, "\r\n");
  }
  hbuf_puts(req, "\r\n");
  return origin->oom || req->oom ? -1 : 0;
}

/* ---- connections -------------------------------------------------------- */

static void conn_close(struct wire_conn *c) {
  if (!c)
    return;
  curl_easy_cleanup(c->easy);
  free(c->origin);
  free(c);
}

/* A kept connection to origin that the server has not closed: one that is
 * readable while idle holds an end or bytes nobody asked for. */
static struct wire_conn *take_idle(struct s3_http *h, const char *origin) {
  struct wire_conn *found = NULL;
  pthread_mutex_lock(&h->here.lock);
  for (size_t i = h->n_wire_idle; i-- > 0;) {
    if (!strcmp(h->wire_idle[i]->origin, origin)) {
      found = h->wire_idle[i];
      h->wire_idle[i] = h->wire_idle[--h->n_wire_idle];
      break;
    }
  }
  pthread_mutex_unlock(&h->here.lock);
  if (found) {
    struct pollfd p = {.fd = found->fd, .events = POLLIN};
    if (poll(&p, 1, 0) != 0) {
      conn_close(found);
      found = NULL;
    }
  }
  return found;
}

static void give_back(struct s3_http *h, struct wire_conn *c) {
  pthread_mutex_lock(&h->here.lock);
  if (h->n_wire_idle < WIRE_IDLE_MAX) {
    h->wire_idle[h->n_wire_idle++] = c;
    c = NULL;
  }
  pthread_mutex_unlock(&h->here.lock);
  conn_close(c);
}

void http_wire_cleanup(struct s3_http *h) {
  for (size_t i = 0; i < h->n_wire_idle; i++)
    conn_close(h->wire_idle[i]);
  h->n_wire_idle = 0;
}

/* libcurl calls this while it connects: a cancel stops the connect. */
static int on_connect_progress(void *ud, curl_off_t a, curl_off_t b,
                               curl_off_t c, curl_off_t d) {
  (void)a;
  (void)b;
  (void)c;
  (void)d;
  return http_cancelled(ud);
}

/* A fresh connection, or NULL with *code and the message set. */
static struct wire_conn *conn_open(struct wire_io *io, const char *origin,
                                   CURLcode *code) {
  struct s3_http *h = io->h;
  struct s3_http_xfer *x = io->x;
  const struct s3_http_config *cfg = &h->cfg;
  char errbuf[CURL_ERROR_SIZE] = "";
  struct wire_conn *c = calloc(1, sizeof *c);
  struct hbuf url = HBUF_INIT;
  hbuf_puts(&url, origin);
  hbuf_putc(&url, '/');
  if (!c || url.oom || !(c->origin = hstrdup(origin)) ||
      !(c->easy = curl_easy_init())) {
    *code = CURLE_OUT_OF_MEMORY;
    goto fail;
  }
  long left_ms = 0;
  if (io->deadline_ms) {
    uint64_t now = http_mono_ms();
    left_ms = now < io->deadline_ms ? (long)(io->deadline_ms - now) : 1;
  }
  CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                          \
  do {                                                                         \
    if (rc == CURLE_OK)                                                        \
      rc = curl_easy_setopt(c->easy, opt, val);                                \
  } while (0)
  SET(CURLOPT_URL, hbuf_str(&url));
  SET(CURLOPT_CONNECT_ONLY, 1L);
  SET(CURLOPT_NOSIGNAL, 1L);
  /* TLS offers http/1.1 alone: the bytes that follow are HTTP/1.1. */
  SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  SET(CURLOPT_ERRORBUFFER, errbuf);
  SET(CURLOPT_TCP_KEEPALIVE, 1L);
  SET(CURLOPT_CONNECTTIMEOUT_MS, (long)cfg->connect_timeout_ms);
  if (left_ms)
    SET(CURLOPT_TIMEOUT_MS, left_ms);
  SET(CURLOPT_SSL_VERIFYPEER, cfg->tls_skip_verify ? 0L : 1L);
  SET(CURLOPT_SSL_VERIFYHOST, cfg->tls_skip_verify ? 0L : 2L);
  if (h->ca_bundle)
    SET(CURLOPT_CAINFO, h->ca_bundle);
  SET(CURLOPT_NOPROGRESS, 0L);
  SET(CURLOPT_XFERINFOFUNCTION, on_connect_progress);
  SET(CURLOPT_XFERINFODATA, x);
#undef SET
  if (rc == CURLE_OK)
    rc = curl_easy_perform(c->easy);
  if (rc == CURLE_OK)
    rc = curl_easy_getinfo(c->easy, CURLINFO_ACTIVESOCKET, &c->fd);
  if (rc == CURLE_OK && c->fd == CURL_SOCKET_BAD)
    rc = CURLE_COULDNT_CONNECT;
  if (rc != CURLE_OK) {
    *code = rc;
    if (rc == CURLE_ABORTED_BY_CALLBACK && http_cancelled(x))
      x->resp.cancelled = 1;
    hstrlcpy(x->resp.transport_msg, errbuf[0] ? errbuf : curl_easy_strerror(rc),
             sizeof x->resp.transport_msg);
    http_add_os_errno(c->easy, rc, &x->resp);
    goto fail;
  }
  /* The handle outlives this transfer: nothing of it stays set. */
  curl_easy_setopt(c->easy, CURLOPT_NOPROGRESS, 1L);
  curl_easy_setopt(c->easy, CURLOPT_XFERINFODATA, NULL);
  curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, NULL);
  hbuf_free(&url);
  return c;
fail:
  if (c && c->easy)
    curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, NULL);
  if (*code == CURLE_OUT_OF_MEMORY)
    hstrlcpy(x->resp.transport_msg, "out of memory starting a transfer",
             sizeof x->resp.transport_msg);
  conn_close(c);
  hbuf_free(&url);
  return NULL;
}

/* ---- waiting ------------------------------------------------------------ */

/* Between waits: cancellation, the time limit and stall detection, as
 * libcurl checks them. CURLE_OK, or the code that ends the transfer. */
static CURLcode checks(struct wire_io *io, uint64_t now_ms) {
  struct s3_http_resp *r = &io->x->resp;
  if (http_cancelled(io->x)) {
    r->cancelled = 1;
    hstrlcpy(r->transport_msg, "cancelled", sizeof r->transport_msg);
    return CURLE_ABORTED_BY_CALLBACK;
  }
  if (io->deadline_ms && now_ms >= io->deadline_ms) {
    snprintf(r->transport_msg, sizeof r->transport_msg,
             "Operation timed out after %u milliseconds with %llu bytes "
             "received",
             io->timeout_ms, (unsigned long long)r->body_bytes);
    return CURLE_OPERATION_TIMEDOUT;
  }
  if (io->stall_ms && now_ms - io->win_start_ms >= io->stall_ms) {
    unsigned low = http_low_speed(io->h, io->x);
    unsigned secs = http_stall_seconds(io->h);
    if (io->moved - io->win_moved < (uint64_t)low * secs) {
      snprintf(r->transport_msg, sizeof r->transport_msg,
               "transfer slower than %u bytes/s for %u s (stall detection: "
               "low_speed_bytes_per_s, stall_timeout_ms)",
               low, secs);
      return CURLE_OPERATION_TIMEDOUT;
    }
    io->win_start_ms = now_ms;
    io->win_moved = io->moved;
  }
  return CURLE_OK;
}

/* Until the connection is ready for `events`. An answer awaited (POLLIN)
 * is polled for first, within the busy-poll budget (http_here.c). */
static CURLcode wait_ready(struct wire_io *io, short events) {
  struct pollfd p = {.fd = io->c->fd, .events = events};
  unsigned budget = events == POLLIN ? http_poll_begin(&io->h->bp) : 0;
  if (budget) {
    uint64_t t0 = mono_us();
    int n;
    do
      n = poll(&p, 1, 0);
    while (n == 0 && mono_us() - t0 < budget);
    http_poll_end(&io->h->bp, n > 0);
    if (n > 0)
      return CURLE_OK;
  }
  for (;;) {
    uint64_t now = http_mono_ms();
    CURLcode rc = checks(io, now);
    if (rc != CURLE_OK)
      return rc;
    uint64_t ms = SLICE_MS;
    if (io->deadline_ms && io->deadline_ms - now < ms)
      ms = io->deadline_ms - now;
    int n = poll(&p, 1, (int)ms);
    if (n > 0)
      return CURLE_OK; /* readiness, an error or a hang-up: the I/O tells */
    if (n < 0 && errno != EINTR) {
      snprintf(io->x->resp.transport_msg, sizeof io->x->resp.transport_msg,
               "poll: %s", strerror(errno));
      return CURLE_RECV_ERROR;
    }
  }
}

/* ---- one exchange ------------------------------------------------------- */

static int on_line(void *ctx, const char *line, size_t len) {
  http_resp_header_line(ctx, line, len);
  return 0;
}

static int on_body(void *ctx, long status, const char *data, size_t len) {
  return http_resp_body(ctx, status, data, len);
}

static const struct hframe_ops frame_ops = {on_line, on_body};

static CURLcode send_all(struct wire_io *io, const struct hbuf *req) {
  size_t off = 0;
  while (off < req->len) {
    size_t n = 0;
    CURLcode rc =
        curl_easy_send(io->c->easy, req->data + off, req->len - off, &n);
    if (rc == CURLE_AGAIN) {
      if ((rc = wait_ready(io, POLLOUT)) != CURLE_OK)
        return rc;
      continue;
    }
    if (rc != CURLE_OK) {
      snprintf(io->x->resp.transport_msg, sizeof io->x->resp.transport_msg,
               "sending the request: %s", curl_easy_strerror(rc));
      return rc;
    }
    off += n;
    io->moved += n;
  }
  return CURLE_OK;
}

/* Reads the answer into x->resp. *keep: the connection may carry the next
 * request. */
static CURLcode read_answer(struct wire_io *io, struct hframe *f, int *keep) {
  struct s3_http_xfer *x = io->x;
  struct s3_http_resp *r = &x->resp;
  *keep = 0;
  /* Just after the request nothing of the answer is there yet (nor
   * buffered inside TLS: an answer's excess closes the connection), so
   * the first step is the wait, not a receive that would say "again". */
  CURLcode rc = wait_ready(io, POLLIN);
  if (rc != CURLE_OK)
    return rc;
  for (;;) {
    size_t n = 0;
    rc = curl_easy_recv(io->c->easy, io->c->rbuf, RECV_BUF, &n);
    if (rc == CURLE_AGAIN) {
      if ((rc = wait_ready(io, POLLIN)) != CURLE_OK)
        return rc;
      continue;
    }
    if (rc != CURLE_OK) {
      snprintf(r->transport_msg, sizeof r->transport_msg,
               "receiving the answer: %s", curl_easy_strerror(rc));
      return rc;
    }
    enum hframe_result fr;
    size_t used = 0;
    if (n == 0) {
      fr = hframe_eof(f);
      if (fr == HFRAME_DONE)
        return CURLE_OK;
      hstrlcpy(r->transport_msg, f->err, sizeof r->transport_msg);
      return !f->seen               ? CURLE_GOT_NOTHING
             : hframe_short_body(f) ? CURLE_PARTIAL_FILE
                                    : CURLE_RECV_ERROR;
    }
    io->moved += n;
    fr = hframe_feed(f, io->c->rbuf, n, &used, &frame_ops, x);
    if (x->progress)
      x->progress(x->progress_ctx, 0, f->body);
    switch (fr) {
    case HFRAME_MORE:
      continue;
    case HFRAME_DONE:
      /* Bytes after the answer belong to no request: the connection is
       * not trusted with another. */
      *keep = used == n && !f->close;
      return CURLE_OK;
    case HFRAME_STOPPED:
      return CURLE_WRITE_ERROR; /* http_resp_body said why */
    case HFRAME_ERROR:
      snprintf(r->transport_msg, sizeof r->transport_msg,
               "malformed answer: %s", f->err);
      return CURLE_WEIRD_SERVER_REPLY;
    }
  }
}

/* Whether a failure may be the server's close of a kept connection, met
 * before any byte of the answer: the GET goes again on a fresh one. */
static int stale(const struct wire_conn *c, const struct hframe *f,
                 CURLcode rc) {
  return c->used && !f->seen &&
         (rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR ||
          rc == CURLE_GOT_NOTHING);
}

/* The outcome into resp, as http_finish records libcurl's. */
static void record(struct s3_http_resp *r, const struct hframe *f,
                   CURLcode rc) {
  r->status = f->status >= 200 ? f->status : 0;
  r->transport_code = (int)rc;
  if (rc != CURLE_OK && !r->transport_msg[0])
    hstrlcpy(r->transport_msg, curl_easy_strerror(rc), sizeof r->transport_msg);
  /* A failed transfer has no answer, unless it was ended on purpose
   * after the status of an error answer arrived. */
  if (rc != CURLE_OK && !r->error_body_cut)
    r->status = r->status >= 200 && r->status < 300 ? r->status : 0;
  if (r->transport_msg[0] && r->transport_code == 0)
    r->transport_code = CURLE_WRITE_ERROR;
}

int http_wire_run(struct worker *w, struct s3_http_xfer *x) {
  struct s3_http *h = w->h;
  if (!eligible(h, x))
    return 0;
  struct hbuf origin = HBUF_INIT, req = HBUF_INIT;
  if (build(x, &origin, &req) != 0) {
    hbuf_free(&origin);
    hbuf_free(&req);
    return 0; /* libcurl says what is wrong with the URL */
  }
  struct wire_io io = {.h = h, .x = x};
  io.timeout_ms = x->timeout_ms ? x->timeout_ms : h->cfg.request_timeout_ms;
  uint64_t now = http_mono_ms();
  if (io.timeout_ms)
    io.deadline_ms = now + io.timeout_ms;
  /* As libcurl: stall detection only where no whole-request limit of the
   * transfer's own replaces it. */
  if (h->cfg.stall_timeout_ms && !x->timeout_ms)
    io.stall_ms = http_stall_seconds(h) * 1000u;
  io.win_start_ms = now;
  struct hframe *f = malloc(sizeof *f);
  CURLcode rc = CURLE_OUT_OF_MEMORY;
  if (f) {
    hframe_init(f);
    rc = checks(&io, now);
  }
  for (int attempt = 0; rc == CURLE_OK; attempt++) {
    hframe_init(f);
    struct wire_conn *c = take_idle(h, hbuf_str(&origin));
    if (!c && !(c = conn_open(&io, hbuf_str(&origin), &rc)))
      break;
    io.c = c;
    int keep = 0;
    rc = send_all(&io, &req);
    if (rc == CURLE_OK)
      rc = read_answer(&io, f, &keep);
    if (rc != CURLE_OK && attempt == 0 && stale(c, f, rc)) {
      conn_close(c);
      s3_http_xfer_reset(x);
      rc = checks(&io, http_mono_ms());
      continue;
    }
    if (rc == CURLE_OK && keep) {
      c->used = 1;
      give_back(h, c);
    } else {
      conn_close(c);
    }
    break;
  }
  if (f) {
    record(&x->resp, f, rc);
  } else {
    hstrlcpy(x->resp.transport_msg, "out of memory starting a transfer",
             sizeof x->resp.transport_msg);
    x->resp.transport_code = CURLE_OUT_OF_MEMORY;
  }
  free(f);
  hbuf_free(&origin);
  hbuf_free(&req);
  http_complete(w, x);
  return 1;
}
