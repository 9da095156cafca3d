/* ops_get.c - GetObject: one request, or a parallel GET that splits a large
 * read into ranged parts pinned to the first answer's ETag (If-Match), keeps
 * several in flight and lands each at its offset in the destination (host
 * memory directly, GPU memory through the staging pipeline): no reassembly
 * copy. Partial or misplaced data is never reported as complete. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strutil.h"
#include "client_int.h"
#include "ops.h"
#include "plan.h"
#include "rdma_glue.h"
#include "staging.h"

/* One ranged (or whole-object) GET into a window of the destination. */
struct get_part {
  struct hreq r; /* first: callbacks cast back */
  struct get_job *job;
  struct hstage *stage; /* GPU window: the staging pipeline, else NULL */
  struct hipobj_mem win;
  uint64_t written;
  int has_range;
  uint64_t offset, length; /* requested range (length 0: to the end) */
  int whole_ok;            /* a 200 with the whole object is acceptable */
  uint64_t object_size;
  char range_text[64];
  int busy;
};

struct get_job {
  struct hipobj_client *c;
  const char *bucket, *key;
  const char *if_match; /* user's, or the first answer's ETag */
  char etag[HIPOBJ_ETAG_MAX];
  struct hxctl *ctl;
  int single; /* one request: its Content-Length is the progress total */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  unsigned in_flight;
  unsigned retries;
  int failed;
  struct hipobj_error first_error;
};

static int part_fail(struct get_part *p, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int part_fail(struct get_part *p, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->r.sink_reason, sizeof p->r.sink_reason, fmt, ap);
  va_end(ap);
  p->r.sink_status = status;
  return -1;
}

static int get_sink(void *ctx, const char *data, size_t n) {
  struct get_part *p = ctx;
  size_t cap = p->win.len;
  if (p->written == 0) {
    /* Refuse before writing a byte when the answer announces too much. */
    int64_t cl = p->r.xfer.resp.content_length;
    if (cl >= 0 && (uint64_t)cl > cap)
      return part_fail(p, HIPOBJ_E_BUFFER_TOO_SMALL,
                       "%" PRId64 " bytes do not fit the %zu-byte buffer", cl,
                       cap);
    if (cl >= 0 && p->job->single)
      hxctl_set_total(p->job->ctl, (uint64_t)cl);
  }
  if (n > cap - p->written)
    return part_fail(p, HIPOBJ_E_BUFFER_TOO_SMALL,
                     "the object does not fit the %zu-byte buffer", cap);
  if (p->stage) {
    if (hstage_get_write(p->stage, p->written, data, n) != 0)
      return part_fail(p, HIPOBJ_E_IO, "%s", hstage_reason(p->stage));
  } else {
    memcpy((char *)p->win.ptr + p->written, data, n);
  }
  p->written += n;
  return 0;
}

static int get_rewind(struct hreq *r) {
  struct get_part *p = (struct get_part *)r;
  p->written = 0;
  if (p->stage)
    hstage_get_rewind(p->stage);
  return 0;
}

/* The answer must say exactly which bytes it carries, and all of them must
 * have arrived (and, for GPU memory, been copied). */
static int get_check(struct hreq *r, struct hipobj_error *err) {
  struct get_part *p = (struct get_part *)r;
  const struct s3_http_resp *resp = &r->xfer.resp;
  if (p->stage && hstage_get_flush(p->stage) != 0)
    return herr_set(err, HIPOBJ_E_IO, r->op_name, "%s",
                    hstage_reason(p->stage));
  if (resp->content_length >= 0 && (uint64_t)resp->content_length != p->written)
    return herr_set(err, HIPOBJ_E_NETWORK, r->op_name,
                    "received %" PRIu64 " bytes, Content-Length announced "
                    "%" PRId64,
                    p->written, resp->content_length);
  if (resp->status == 206) {
    uint64_t first, last, total;
    if (hplan_parse_content_range(resp->content_range, &first, &last, &total) !=
        0)
      return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                      "206 answer with a bad Content-Range '%s'",
                      resp->content_range);
    if (!p->has_range || first != p->offset || last - first + 1 != p->written ||
        (p->length && last > p->offset + p->length - 1))
      return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                      "Content-Range '%s' does not match the requested range "
                      "and the %" PRIu64 " bytes received",
                      resp->content_range, p->written);
    /* Every requested byte must be there: a 206 may stop early only at the
     * object's end. A shorter answer, however honestly labelled, would
     * leave a hole in the destination that nobody fills. */
    uint64_t want_last = p->length ? p->offset + p->length - 1 : UINT64_MAX;
    if (total != UINT64_MAX && total - 1 < want_last)
      want_last = total - 1;
    if (last != want_last)
      return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                      "short answer: Content-Range '%s' stops before the "
                      "end of the requested range (%s)",
                      resp->content_range, p->range_text);
    p->object_size = total == UINT64_MAX ? 0 : total;
    return HIPOBJ_OK;
  }
  if (p->has_range && !(p->whole_ok && p->offset == 0) &&
      (p->offset != 0 || (p->length && p->written > p->length)))
    return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                    "the server ignored the Range header (answered %ld with "
                    "the whole object)",
                    resp->status);
  p->has_range = 0; /* the whole object came */
  p->object_size = p->written;
  return HIPOBJ_OK;
}

/* Prepares p to read [off, off+len) (len 0: to the end; has_range 0: the
 * whole object) into the window of dst starting at win_off. */
static int part_setup(struct get_part *p, struct get_job *job,
                      const struct hipobj_mem *dst, uint64_t win_off,
                      size_t win_len, int has_range, uint64_t off, uint64_t len,
                      const char *name, struct hipobj_error *err) {
  memset(p, 0, sizeof *p);
  p->busy = 1; /* a slot of fetch_rest() stays taken while prepared */
  p->job = job;
  hreq_init(&p->r, job->c, name, "GET", job->bucket, job->key);
  p->r.ctl = job->ctl;
  p->win = *dst;
  p->win.ptr = (char *)dst->ptr + win_off;
  p->win.len = win_len;
  p->has_range = has_range;
  p->offset = off;
  p->length = len;
  if (has_range) {
    hplan_range_header(off, len, p->range_text);
    s3_request_header(&p->r.req, "range", p->range_text);
  }
  if (job->if_match && *job->if_match)
    s3_request_header(&p->r.req, "if-match", job->if_match);
  p->r.sink = get_sink;
  p->r.sink_ctx = p;
  p->r.before_attempt = get_rewind;
  p->r.check = get_check;
  /* GPU memory: chunks are taken here, in the driving thread. */
  if (dst->kind != HIPOBJ_MEM_HOST)
    return hstage_get_begin(job->c, name, &p->win, &p->stage, err);
  return HIPOBJ_OK;
}

static void part_release(struct get_part *p) {
  hstage_end(p->stage);
  p->stage = NULL;
  hreq_cleanup(&p->r);
}

/* ---- the remaining parts of a parallel GET ------------------------------- */

static void part_done(struct hreq *r, void *ctx) {
  struct get_part *p = ctx;
  struct get_job *job = p->job;
  int rc = r->status;
  if (rc == HIPOBJ_E_PRECONDITION)
    herr_set(&r->err, rc, r->op_name,
             "the object changed during the download (ETag %s no longer "
             "matches)",
             job->etag);
  pthread_mutex_lock(&job->lock);
  job->retries += r->retries;
  if (rc != HIPOBJ_OK && !job->failed) {
    job->failed = 1;
    job->first_error = r->err;
  }
  part_release(p);
  p->busy = 0;
  job->in_flight--;
  pthread_cond_signal(&job->cond);
  pthread_mutex_unlock(&job->lock);
}

/* Fetches [from, end) in parts of ps bytes into dst at (offset - base),
 * keeping up to conc in flight; stops at the first failure or a cancel. */
static int fetch_rest(struct get_job *job, const struct hipobj_mem *dst,
                      uint64_t base, uint64_t from, uint64_t end, uint64_t ps,
                      unsigned conc, unsigned first_number,
                      struct hipobj_error *err) {
  struct get_part *slots = calloc(conc, sizeof *slots);
  if (!slots)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "GetObject", "out of memory");
  uint64_t next = from;
  unsigned number = first_number;
  for (;;) {
    pthread_mutex_lock(&job->lock);
    while (job->in_flight > 0 && (job->in_flight >= conc || next >= end ||
                                  job->failed || hxctl_cancelled(job->ctl)))
      pthread_cond_wait(&job->cond, &job->lock);
    int stop = job->failed || next >= end || hxctl_cancelled(job->ctl);
    struct get_part *p = NULL;
    for (unsigned i = 0; i < conc && !p && !stop; i++)
      if (!slots[i].busy)
        p = &slots[i];
    if (p) {
      p->busy = 1;
      job->in_flight++;
    }
    pthread_mutex_unlock(&job->lock);
    if (!p)
      break;
    uint64_t len = end - next < ps ? end - next : ps;
    char name[64];
    snprintf(name, sizeof name, "GetObject part #%u", number++);
    struct hipobj_error perr;
    int rc = part_setup(p, job, dst, next - base, (size_t)len, 1, next, len,
                        name, &perr);
    next += len;
    if (rc == HIPOBJ_OK) {
      p->r.done = part_done;
      p->r.done_ctx = p;
      hreq_submit(&p->r);
    } else {
      p->r.status = rc;
      p->r.err = perr;
      part_done(&p->r, p);
    }
  }
  free(slots);
  if (job->failed) {
    herr_copy(err, &job->first_error);
    return job->first_error.status;
  }
  if (hxctl_cancelled(job->ctl))
    return herr_set(err, HIPOBJ_E_CANCELLED, "GetObject", "cancelled");
  return HIPOBJ_OK;
}

/* ---- the driver ------------------------------------------------------------
 */

static void fill_result(struct hipobj_xfer_result *res, int rc, uint64_t bytes,
                        uint64_t size, unsigned parts, unsigned retries,
                        const char *etag, int staged) {
  if (!res)
    return;
  res->bytes = rc == HIPOBJ_OK ? bytes : 0;
  res->object_size = size;
  res->parts = parts;
  res->retries = retries;
  res->path = staged ? HIPOBJ_PATH_HTTP_STAGED : HIPOBJ_PATH_HTTP;
  hstrlcpy(res->etag, etag, sizeof res->etag);
}

/* One request for the caller's whole range (or the whole object). */
static int get_single(struct get_job *job, const struct hipobj_mem *dst,
                      int has_range, uint64_t off, uint64_t len,
                      struct hipobj_xfer_result *res,
                      struct hipobj_error *err) {
  struct get_part p;
  job->single = 1;
  int rc = part_setup(&p, job, dst, 0, dst->len, has_range, off, len,
                      "GetObject", err);
  if (rc == HIPOBJ_OK)
    rc = hreq_run(&p.r, err);
  fill_result(res, rc, p.written, p.object_size, 0, p.r.retries,
              p.r.xfer.resp.etag, dst->kind != HIPOBJ_MEM_HOST);
  part_release(&p);
  return rc;
}

/* The RDMA attempt: returns a status when it settled the GET (success, or
 * an error under the `require` policy), -1 when HTTP must do it. The size
 * must be known before PREPARE: a whole-object read asks HEAD first. */
static int get_rdma(struct hipobj_client *c, const char *bucket,
                    const char *key, const struct hipobj_mem *dst,
                    const struct hipobj_get_opts *opts, int has_range,
                    uint64_t start, uint64_t want, struct hxctl *ctl,
                    struct hipobj_xfer_result *res, struct hipobj_error *err) {
  int policy = opts ? (int)opts->rdma : HIPOBJ_RDMA_DEFAULT;
  int ready = hrdma_ready(c, policy, dst, "GetObject", err);
  if (ready < 0)
    return -ready;
  if (ready == 0)
    return -1;
  uint64_t size = want, object_size = 0;
  if (!has_range || !want) {
    struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
    struct hipobj_error herr;
    memset(&herr, 0, sizeof herr);
    if (hipobj_s3_head(c, bucket, key, &info, &herr) != HIPOBJ_OK)
      return -1; /* HTTP reports the error (NoSuchKey, ...) */
    if (opts && opts->if_match && *opts->if_match &&
        strcmp(opts->if_match, info.etag) != 0)
      return -1; /* HTTP answers 412 */
    object_size = info.size;
    if (start >= info.size)
      return -1; /* HTTP answers 416 (or the empty object) */
    size = info.size - start;
  }
  if (size > dst->len)
    return -1; /* HTTP reports BUFFER_TOO_SMALL */
  struct hrdma_job job = {.is_put = 0,
                          .bucket = bucket,
                          .key = key,
                          .offset = start,
                          .size = size,
                          .mem = dst,
                          .policy = policy};
  /* Large reads as parts on several threads, as over HTTP. */
  uint64_t ps = opts && opts->part_size ? opts->part_size : c->cfg.part_size;
  unsigned conc =
      opts && opts->concurrency ? opts->concurrency : c->cfg.concurrency;
  struct hrdma_outcome out;
  hxctl_set_total(ctl, size);
  int rc = hrdma_get_parts(c, &job, ps, conc, ctl, &out, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (!out.done)
    return -1;
  if (res) {
    res->bytes = out.bytes;
    res->rdma_bytes = out.bytes;
    res->object_size = object_size;
    res->path = out.staged ? HIPOBJ_PATH_RDMA_STAGED : HIPOBJ_PATH_RDMA_DIRECT;
    hstrlcpy(res->etag, out.etag, sizeof res->etag);
  }
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}

int hops_get(struct hipobj_client *c, const char *bucket, const char *key,
             const struct hipobj_mem *dst, const struct hipobj_get_opts *opts,
             struct hxctl *ctl, struct hipobj_xfer_result *res,
             struct hipobj_error *err) {
  struct get_job job;
  memset(&job, 0, sizeof job);
  job.c = c;
  job.bucket = bucket;
  job.key = key;
  job.ctl = ctl;
  job.if_match = opts ? opts->if_match : NULL;
  int has_range = opts && opts->has_range;
  uint64_t start = has_range ? opts->offset : 0;
  uint64_t want = has_range ? opts->length : 0; /* 0: to the end */
  if (has_range && want && start > UINT64_MAX - want)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "GetObject",
                    "range offset + length overflows");
  int rrc = get_rdma(c, bucket, key, dst, opts, has_range, start, want, ctl,
                     res, err);
  if (rrc != -1)
    return rrc; /* done by RDMA, or RDMA required and failed */
  uint64_t ps = opts && opts->part_size ? opts->part_size : c->cfg.part_size;
  unsigned conc =
      opts && opts->concurrency ? opts->concurrency : c->cfg.concurrency;
  if (ps == 0 || conc <= 1 || dst->len <= ps || (want && want <= ps))
    return get_single(&job, dst, has_range, start, want, res, err);

  /* The first part learns the object's size and ETag; the others are
   * pinned to that ETag so a concurrent overwrite fails cleanly instead of
   * mixing two versions. */
  struct get_part first;
  int rc = part_setup(&first, &job, dst, 0, (size_t)ps, 1, start, ps,
                      "GetObject part #1", err);
  if (rc == HIPOBJ_OK)
    rc = hreq_run(&first.r, err);
  if (rc == HIPOBJ_E_INVALID_RANGE && !has_range) {
    /* S3 answers 416 to any range of an empty object. */
    part_release(&first);
    return get_single(&job, dst, 0, 0, 0, res, err);
  }
  unsigned retries = first.r.retries;
  hstrlcpy(job.etag, first.r.xfer.resp.etag, sizeof job.etag);
  uint64_t total = first.object_size, got = first.written;
  int whole = rc == HIPOBJ_OK && !first.has_range;
  part_release(&first);
  if (rc != HIPOBJ_OK || whole) {
    fill_result(res, rc, got, total, whole ? 0 : 1, retries, job.etag,
                dst->kind != HIPOBJ_MEM_HOST);
    return rc;
  }
  if (!job.etag[0] || total == 0)
    return herr_set(err, HIPOBJ_E_PROTOCOL, "GetObject",
                    "the first part's answer has no ETag or object size");
  uint64_t end = want && start + want < total ? start + want : total;
  if (end - start > dst->len) {
    fill_result(res, HIPOBJ_E_BUFFER_TOO_SMALL, 0, total, 1, retries, job.etag,
                0);
    return herr_set(err, HIPOBJ_E_BUFFER_TOO_SMALL, "GetObject",
                    "%" PRIu64 " bytes do not fit the %zu-byte buffer",
                    end - start, dst->len);
  }
  hxctl_set_total(ctl, end - start);
  if (!job.if_match || !*job.if_match)
    job.if_match = job.etag;
  pthread_mutex_init(&job.lock, NULL);
  pthread_cond_init(&job.cond, NULL);
  unsigned n_parts = 1;
  if (end > start + got) {
    n_parts += (unsigned)((end - start - got + ps - 1) / ps);
    rc = fetch_rest(&job, dst, start, start + got, end, ps, conc, 2, err);
  }
  pthread_cond_destroy(&job.cond);
  pthread_mutex_destroy(&job.lock);
  fill_result(res, rc, end - start, total, n_parts, retries + job.retries,
              job.etag, dst->kind != HIPOBJ_MEM_HOST);
  return rc;
}
