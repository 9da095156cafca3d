/* runner.c - runs one logical S3 request over the HTTP engine: signs each
 * attempt afresh, classifies the outcome (transport error, S3 error answer,
 * success), and retries retryable failures with capped exponential backoff
 * and full jitter. Completion is a callback, so operations can keep many
 * requests in flight; hreq_run() is the blocking form. A large signed
 * payload is hashed on the client's hashing threads, so the parts of a
 * multipart upload are hashed in parallel and the submitting thread goes on
 * submitting. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../s3/checksum.h"
#include "../s3/crypto.h"
#include "../s3/xml.h"
#include "base/cpus.h"
#include "base/strutil.h"
#include "base/workq.h"
#include "client_int.h"

#define BACKOFF_CAP_MS 20000u
/* Payloads from this size on are hashed on a hashing thread: below it the
 * hand-over costs more than the hash (SHA-256 runs at 0.5-2 GB/s). */
#define HASH_ASYNC_MIN ((uint64_t)1 << 20)
#define HASH_MAX_THREADS 4u

/* libcurl's CURLcode values used for classification (stable ABI numbers;
 * src/ does not include curl headers). */
enum {
  T_UNSUPPORTED_PROTOCOL = 1,
  T_URL_MALFORMAT = 3,
  T_COULDNT_RESOLVE_PROXY = 5,
  T_COULDNT_RESOLVE_HOST = 6,
  T_COULDNT_CONNECT = 7,
  T_PARTIAL_FILE = 18,
  T_WRITE_ERROR = 23,
  T_OUT_OF_MEMORY = 27,
  T_OPERATION_TIMEDOUT = 28,
  T_SSL_CONNECT_ERROR = 35,
  T_PEER_FAILED_VERIFICATION = 60,
  T_SSL_CERTPROBLEM = 58,
  T_SSL_CIPHER = 59,
  T_SSL_CACERT_BADFILE = 77,
};

double hnow_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void hreq_init(struct hreq *r, struct hipobj_client *c, const char *name,
               const char *method, const char *bucket, const char *key) {
  memset(r, 0, sizeof *r);
  r->client = c;
  hstrlcpy(r->op_name, name, sizeof r->op_name);
  r->req.method = method;
  r->req.bucket = bucket;
  r->req.key = key;
}

void hreq_cleanup(struct hreq *r) {
  s3_signed_free(&r->wire);
  s3_http_xfer_cleanup(&r->xfer);
}

static int status_from_transport(int code) {
  switch (code) {
  case T_COULDNT_RESOLVE_HOST:
  case T_COULDNT_RESOLVE_PROXY:
  case T_COULDNT_CONNECT:
    return HIPOBJ_E_CONNECT;
  case T_OPERATION_TIMEDOUT:
    return HIPOBJ_E_TIMEOUT;
  case T_SSL_CONNECT_ERROR:
  case T_PEER_FAILED_VERIFICATION:
  case T_SSL_CERTPROBLEM:
  case T_SSL_CIPHER:
  case T_SSL_CACERT_BADFILE:
    return HIPOBJ_E_TLS;
  case T_OUT_OF_MEMORY:
    return HIPOBJ_E_OUT_OF_MEMORY;
  case T_UNSUPPORTED_PROTOCOL:
  case T_URL_MALFORMAT:
    return HIPOBJ_E_CONFIG;
  default:
    /* Resets, short bodies (PARTIAL_FILE), empty replies: the request may
     * well succeed on a fresh connection. */
    return HIPOBJ_E_NETWORK;
  }
}

/* A server that checked the CRC32C we sent says so by echoing it; one that
 * echoes another value computed it over other bytes than we meant. */
static int check_crc32c_echo(struct hreq *r) {
  char echo[64];
  r->crc32c_confirmed = 0;
  if (!r->crc32c || !s3_http_resp_header(&r->xfer.resp, "x-amz-checksum-crc32c",
                                         echo, sizeof echo))
    return HIPOBJ_OK;
  if (strcmp(echo, r->crc32c_b64) != 0)
    return herr_set(&r->err, HIPOBJ_E_PROTOCOL, r->op_name,
                    "the server answered x-amz-checksum-crc32c %.16s for a "
                    "body whose CRC32C is %s",
                    echo, r->crc32c_b64);
  r->crc32c_confirmed = 1;
  hendpoint_note_crc32c(&r->client->facts);
  return HIPOBJ_OK;
}

/* The beginning of an error body cut at S3_HTTP_ERROR_BODY_LIMIT: up to
 * the last Code, Message, RequestId or Resource element closed in it,
 * closed as a document of its own. Returns 0 when that parses as an S3
 * error (its Code at least). */
static int parse_error_prefix(const struct hbuf *body,
                              struct s3_xml_error *xe) {
  static const char *const ends[] = {"</Code>", "</Message>", "</RequestId>",
                                     "</Resource>"};
  const char *end = body->data + body->len;
  size_t cut = 0;
  for (size_t i = 0; body->len && i < sizeof ends / sizeof *ends; i++) {
    size_t n = strlen(ends[i]);
    const char *p = body->data;
    while ((p = memmem(p, (size_t)(end - p), ends[i], n)) != NULL) {
      p += n;
      if ((size_t)(p - body->data) > cut)
        cut = (size_t)(p - body->data);
    }
  }
  if (!cut)
    return -1;
  struct hbuf doc = HBUF_INIT;
  hbuf_append(&doc, body->data, cut);
  hbuf_puts(&doc, "</Error>");
  int rc = doc.oom ? -1 : s3_xml_parse_error(doc.data, doc.len, xe, NULL);
  hbuf_free(&doc);
  return rc != HIPOBJ_OK ? -1 : 0;
}

/* Turns a finished attempt into r->status / r->err. */
static void classify(struct hreq *r) {
  const struct s3_http_resp *resp = &r->xfer.resp;
  struct hipobj_error *err = &r->err;
  if ((resp->aborted_by_sink || r->source_aborted) &&
      r->sink_status != HIPOBJ_OK) {
    r->status = herr_set(err, r->sink_status, r->op_name, "%s",
                         r->sink_reason[0] ? r->sink_reason
                                           : hipobj_strerror(r->sink_status));
    return;
  }
  if (resp->cancelled) {
    r->status = herr_set(err, HIPOBJ_E_CANCELLED, r->op_name, "cancelled");
    return;
  }
  if (resp->transport_code != 0 && !resp->error_body_cut) {
    r->status = status_from_transport(resp->transport_code);
    if (resp->transport_code == T_PARTIAL_FILE)
      herr_set(err, r->status, r->op_name,
               "connection closed after %llu of %lld body bytes",
               (unsigned long long)resp->body_bytes,
               (long long)resp->content_length);
    else
      herr_set(err, r->status, r->op_name, "%s", resp->transport_msg);
    if (resp->aborted_by_sink)
      r->status = err->status = HIPOBJ_E_PROTOCOL;
    err->http_status = (int)resp->status;
    return;
  }
  long http = resp->status;
  if (http >= 200 && http < 300) {
    /* An ETag goes back in If-Match and Complete: one S3 would never send
     * is refused here, naming the step, before any reuse. */
    if (resp->etag[0] && !s3_etag_ok(resp->etag)) {
      r->status = herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                           "the answer's ETag is not a quoted string of "
                           "printable ASCII, as S3 sends");
      return;
    }
    r->status = check_crc32c_echo(r);
    if (r->status == HIPOBJ_OK && r->check)
      r->status = r->check(r, err);
    return;
  }
  struct s3_xml_error xe;
  memset(&xe, 0, sizeof xe);
  if (resp->error_body_cut) {
    /* The answer was not read to its end: say so, with what its beginning
     * tells when it can. */
    char m[sizeof xe.message];
    if (parse_error_prefix(&resp->body, &xe) == 0)
      snprintf(m, sizeof m,
               "%.400s (error body longer than %zu bytes: not "
               "read further)",
               xe.message, S3_HTTP_ERROR_BODY_LIMIT);
    else
      snprintf(m, sizeof m,
               "the error body exceeded %zu bytes and was not "
               "read further",
               S3_HTTP_ERROR_BODY_LIMIT);
    hstrlcpy(xe.message, m, sizeof xe.message);
  } else if (resp->body.len) {
    if (s3_xml_parse_error(resp->body.data, resp->body.len, &xe, NULL) != 0)
      /* Not S3 XML (a proxy's HTML page, say): keep its first line. */
      snprintf(xe.message, sizeof xe.message, "%.200s", hbuf_str(&resp->body));
    char *nl = strpbrk(xe.message, "\r\n");
    if (nl)
      *nl = '\0';
  } else if (http == 404) {
    hstrlcpy(xe.message, "Not Found", sizeof xe.message);
  }
  const char *rid = xe.request_id[0] ? xe.request_id : resp->request_id;
  char moved[sizeof xe.message];
  if (s3_http_redirect_text(resp, moved, sizeof moved)) {
    /* Not a malformed answer: the bucket lives at another endpoint. */
    r->status = herr_set_s3(err, HIPOBJ_E_CONFIG, r->op_name, (int)http,
                            xe.code, moved, rid);
    return;
  }
  r->status = herr_status_from_http((int)http, xe.code);
  herr_set_s3(err, r->status, r->op_name, (int)http, xe.code, xe.message, rid);
}

static unsigned backoff_ms(const struct hcfg *cfg, unsigned attempt) {
  uint64_t ceiling = cfg->retry_base_ms;
  for (unsigned i = 1; i < attempt && ceiling < BACKOFF_CAP_MS; i++)
    ceiling *= 2;
  if (ceiling > BACKOFF_CAP_MS)
    ceiling = BACKOFF_CAP_MS;
  uint32_t rnd = 0;
  if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd)
    rnd = (uint32_t)time(NULL) * 2654435761u;
  /* Full jitter: spreads clients that failed together. */
  return (unsigned)(rnd % (ceiling + 1));
}

static int attempt(struct hreq *r, unsigned delay_ms);

/* Payload progress of one request, made monotonic across attempts: a retry
 * that moves the same bytes again reports nothing new. */
static void on_progress(void *ctx, uint64_t sent, uint64_t received) {
  struct hreq *r = ctx;
  uint64_t now = r->send_body ? sent : received;
  if (now > r->progress_seen) {
    hxctl_add(r->ctl, now - r->progress_seen);
    r->progress_seen = now;
  }
}

void hxctl_init(struct hxctl *ctl) {
  pthread_mutex_init(&ctl->report_lock, NULL);
}

void hxctl_destroy(struct hxctl *ctl) {
  pthread_mutex_destroy(&ctl->report_lock);
}

void hxctl_report(struct hxctl *ctl, uint64_t done, uint64_t total) {
  if (!ctl || !ctl->progress)
    return;
  pthread_mutex_lock(&ctl->report_lock);
  if (done > ctl->reported_done || total != ctl->reported_total ||
      (!done && !total)) {
    if (done < ctl->reported_done)
      done = ctl->reported_done; /* a later total, never fewer bytes */
    ctl->reported_done = done;
    ctl->reported_total = total;
    ctl->progress(ctl->user, done, total);
  }
  pthread_mutex_unlock(&ctl->report_lock);
}

void hxctl_add(struct hxctl *ctl, uint64_t delta) {
  if (!ctl || !delta)
    return;
  uint64_t done = __atomic_add_fetch(&ctl->done, delta, __ATOMIC_RELAXED);
  uint64_t total = __atomic_load_n(&ctl->total, __ATOMIC_RELAXED);
  if (total && done > total)
    done = total;
  hxctl_report(ctl, done, total);
}

void hxctl_set_total(struct hxctl *ctl, uint64_t total) {
  if (!ctl)
    return;
  __atomic_store_n(&ctl->total, total, __ATOMIC_RELAXED);
  uint64_t done = __atomic_load_n(&ctl->done, __ATOMIC_RELAXED);
  hxctl_report(ctl, total && done > total ? total : done, total);
}

/* The engine reads a streamed body through here, so that a source that
 * gives up is reported with its reason, not as a network failure. */
static size_t run_source(void *ctx, char *buf, size_t n) {
  struct hreq *r = ctx;
  size_t got = r->source(r->source_ctx, buf, n);
  if (got == (size_t)-1) {
    r->source_aborted = 1;
    if (r->sink_status == HIPOBJ_OK) {
      r->sink_status = HIPOBJ_E_INTERNAL;
      hstrlcpy(r->sink_reason, "the request body source failed",
               sizeof r->sink_reason);
    }
  }
  return got;
}

static void on_done(struct s3_http_xfer *x, void *ctx) {
  struct hreq *r = ctx;
  struct hipobj_client *c = r->client;
  classify(r);
  HLOG_DBG(&c->log, "%s: %s %s -> %ld, %llu body bytes%s%s", r->op_name,
           r->req.method, r->req.key ? r->req.key : "", x->resp.status,
           (unsigned long long)x->resp.body_bytes, r->status ? ": " : "",
           r->status ? r->err.message : "");
  if (r->status != HIPOBJ_OK && hipobj_status_is_retryable(r->status) &&
      r->attempt < (r->max_attempts ? r->max_attempts : c->cfg.max_attempts)) {
    unsigned delay = backoff_ms(&c->cfg, r->attempt);
    HLOG_INFO(&c->log, "%s: %s; retry %u of %u in %u ms", r->op_name,
              r->err.message, r->attempt, c->cfg.max_attempts - 1, delay);
    r->retries++;
    if (attempt(r, delay) == 0)
      return;
  }
  r->err.retries = r->retries;
  if (r->status != HIPOBJ_OK)
    HLOG_DBG(&c->log, "%s failed: %s", r->op_name, r->err.message);
  if (r->done)
    r->done(r, r->done_ctx);
}

static int attempt(struct hreq *r, unsigned delay_ms) {
  struct hipobj_client *c = r->client;
  r->attempt++;
  r->sink_status = HIPOBJ_OK;
  r->sink_reason[0] = '\0';
  r->source_aborted = 0;
  if (r->before_attempt && r->before_attempt(r) != 0) {
    r->status = herr_set(&r->err, HIPOBJ_E_INTERNAL, r->op_name,
                         "cannot restart the request body");
    return -1;
  }
  s3_signed_free(&r->wire);
  struct s3_creds creds = {c->cfg.access_key, c->cfg.secret_key,
                           c->cfg.session_token, c->cfg.anonymous,
                           &c->sign_cache};
  r->req.payload_hash = r->payload_hash[0] ? r->payload_hash : NULL;
  /* Sign for the moment the request leaves, not when it was queued. */
  time_t when = time(NULL) + (time_t)(delay_ms / 1000);
  r->status = herr_op(&r->err, r->op_name,
                      s3_request_sign(&r->req, &c->ep, &creds, c->cfg.region,
                                      when, &r->wire, &r->err));
  if (r->status != HIPOBJ_OK)
    return -1;
  struct s3_http_xfer *x = &r->xfer;
  x->method = r->req.method;
  x->url = r->wire.url;
  x->header_lines = r->wire.lines;
  x->n_header_lines = r->wire.n_lines;
  x->no_body_expected = r->head;
  x->body = r->source ? NULL : r->body;
  x->source = r->source ? run_source : NULL;
  x->source_ctx = r;
  x->body_len = r->body_len;
  x->send_body = r->send_body;
  x->sink = r->sink;
  x->sink_ctx = r->sink_ctx;
  x->body_limit = r->body_limit;
  x->done = on_done;
  x->done_ctx = r;
  x->cancel_ref = r->ctl ? &r->ctl->cancel : NULL;
  x->cancel_ref2 = r->ctl ? r->ctl->token : NULL;
  x->timeout_ms = r->timeout_ms;
  x->run_here = r->run_here;
  x->low_speed_bytes_per_s = r->low_speed_bytes_per_s;
  x->progress = r->ctl && r->ctl->progress ? on_progress : NULL;
  x->progress_ctx = r;
  if (s3_http_submit(c->http, x, delay_ms) != 0) {
    r->status = herr_set(&r->err, HIPOBJ_E_INTERNAL, r->op_name,
                         "the client is shutting down");
    return -1;
  }
  return 0;
}

/* ---- hashing threads ----------------------------------------------------- */

static int hash_payload(struct hreq *r);
static void send_first(struct hreq *r);

static void hash_run(struct hworkq_item *it) {
  struct hreq *r =
      (struct hreq *)((char *)it - offsetof(struct hreq, hash_item));
  if (hash_payload(r) != HIPOBJ_OK) {
    if (r->done)
      r->done(r, r->done_ctx);
  } else {
    send_first(r);
  }
}

/* The client's hashing threads (one per CPU, at most HASH_MAX_THREADS),
 * created on first use; NULL when out of memory. */
static struct hworkq *hash_pool(struct hipobj_client *c) {
  pthread_mutex_lock(&c->hash_lock);
  if (!c->hash_pool) {
    unsigned cpus = hcpu_usable();
    unsigned want = cpus > HASH_MAX_THREADS ? HASH_MAX_THREADS : cpus;
    c->hash_pool = hworkq_create(want, hash_run);
  }
  struct hworkq *q = c->hash_pool;
  pthread_mutex_unlock(&c->hash_lock);
  return q;
}

void hreq_hash_pool_destroy(struct hipobj_client *c) {
  hworkq_destroy(c->hash_pool);
  c->hash_pool = NULL;
}

/* ---- submission ---------------------------------------------------------- */

static int sign_payload(const struct hreq *r) {
  return r->sign_payload == HREQ_SIGN_ALWAYS ||
         (r->sign_payload && r->client->cfg.integrity != HIPOBJ_INTEGRITY_NONE);
}

/* Whether the body must be read before sending (hash or checksum). */
static int needs_hash(const struct hreq *r) {
  if (!sign_payload(r) && !r->crc32c)
    return 0;
  return r->source ? r->digest_source && r->body_len > 0 : 1;
}

/* Fills r->payload_hash and, with crc32c, adds the checksum header.
 * Returns a status (r->err filled on failure). */
static int hash_payload(struct hreq *r) {
  char *hex = sign_payload(r) ? r->payload_hash : NULL;
  uint32_t crc = S3_CRC32C_INIT;
  if (r->crc32c && r->source && !r->digest_source)
    return r->status = herr_set(&r->err, HIPOBJ_E_INTERNAL, r->op_name,
                                "a checksum of an unreadable body (bug)");
  if (needs_hash(r) && r->source) {
    /* A streamed body is read once more, before sending, to be signed. */
    r->status = r->digest_source(r, hex, r->crc32c ? &crc : NULL);
  } else if (needs_hash(r)) {
    const char *body = r->body ? r->body : "";
    if (hex && s3_sha256_hex(body, (size_t)r->body_len, hex) != 0)
      r->status = herr_set(&r->err, HIPOBJ_E_INTERNAL, r->op_name,
                           "SHA-256 of the payload failed (OpenSSL)");
    if (r->crc32c)
      crc = s3_crc32c(crc, body, (size_t)r->body_len);
  } else if (!r->send_body || r->body_len == 0) {
    /* Nothing to stream: sign the empty hash, servers check it cheaply. */
    hstrlcpy(r->payload_hash, S3_EMPTY_SHA256, sizeof r->payload_hash);
  }
  if (r->status != HIPOBJ_OK) {
    r->payload_hash[0] = '\0';
    return r->status;
  }
  if (r->crc32c && !r->crc32c_b64[0]) {
    s3_crc32c_b64(crc, r->crc32c_b64);
    if (s3_request_header(&r->req, "x-amz-checksum-crc32c", r->crc32c_b64))
      r->status = herr_set(&r->err, HIPOBJ_E_INTERNAL, r->op_name,
                           "too many request headers (bug)");
  }
  return r->status;
}

/* The first attempt; a failure to submit completes the request. */
static void send_first(struct hreq *r) {
  if (attempt(r, 0) != 0 && r->done)
    r->done(r, r->done_ctx);
}

int hreq_submit(struct hreq *r) {
  r->status = HIPOBJ_OK;
  r->retries = 0;
  r->attempt = 0;
  r->payload_hash[0] = '\0';
  struct hworkq *q;
  /* Hashed and sent by a hashing thread, when one runs; completion through
   * done as for any other outcome. */
  if (needs_hash(r) && r->body_len >= HASH_ASYNC_MIN &&
      (q = hash_pool(r->client)) != NULL && hworkq_push(q, &r->hash_item) == 0)
    return HIPOBJ_OK;
  if (hash_payload(r) != HIPOBJ_OK || attempt(r, 0) != 0) {
    if (r->done)
      r->done(r, r->done_ctx);
    return r->status;
  }
  return HIPOBJ_OK;
}

struct run_wait {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done;
};

static void run_wake(struct hreq *r, void *ctx) {
  (void)r;
  struct run_wait *w = ctx;
  pthread_mutex_lock(&w->lock);
  w->done = 1;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

int hreq_run(struct hreq *r, struct hipobj_error *err) {
  struct run_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  r->done = run_wake;
  r->done_ctx = &w;
  hreq_submit(r);
  pthread_mutex_lock(&w.lock);
  while (!w.done)
    pthread_cond_wait(&w.cond, &w.lock);
  pthread_mutex_unlock(&w.lock);
  if (r->status != HIPOBJ_OK)
    herr_copy(err, &r->err);
  else
    hipobj_error_clear(err);
  return r->status;
}

int hcheck_bucket_key(const char *op, const char *bucket, const char *key,
                      int need_key, struct hipobj_error *err) {
  int rc = s3_check_bucket(bucket, err);
  if (rc == HIPOBJ_OK && need_key)
    rc = s3_check_key(key, err);
  return herr_op(err, op, rc);
}
