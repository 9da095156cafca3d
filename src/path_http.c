/* path_http.c - the HTTP data paths: `http` (host memory: libcurl's buffers
 * are copied straight into the destination, or the request body is the
 * caller's buffer) and `http-staged` (GPU memory and files, through the
 * client's pinned staging pool). One part is one request run by the
 * request runner (signing, retries); its answer is checked here: a GET part
 * succeeds only when every byte it asked for arrived, exactly once. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../s3/xml.h"
#include "base/strutil.h"
#include "engine.h"
#include "plan.h"
#include "staging.h"

/* Where a part's bytes are in host memory: the caller's buffer, or the
 * part's mapped window of a file. */
static char *part_mem(struct hpart *p) {
  return p->win.ptr ? p->win.ptr : (char *)p->job->mem->ptr + p->mem_off;
}

/* ---- GET ----------------------------------------------------------------- */

static int sink_fail(struct hpart *p, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int sink_fail(struct hpart *p, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->r.sink_reason, sizeof p->r.sink_reason, fmt, ap);
  va_end(ap);
  p->r.sink_status = status;
  return -1;
}

/* What the answer's checksums let its bytes be verified against (cks.h),
 * decided from its headers before the first byte: whether it carries the
 * whole object. -1 when a checksum is malformed (reason in p->ck.note). */
static int cks_begin(struct hpart *p) {
  const struct s3_http_resp *resp = &p->r.xfer.resp;
  int whole = resp->status == 200;
  uint64_t first, last, total;
  if (resp->status == 206)
    whole = hplan_parse_content_range(resp->content_range, &first, &last,
                                      &total) == 0 &&
            first == 0 && total != UINT64_MAX && last + 1 == total;
  return hcks_part_begin(&p->ck, resp, whole);
}

/* The whole object's size by an answer's headers: a 206's Content-Range
 * total (0 when it says '*'), else the body's length. */
static uint64_t answer_total(const struct s3_http_resp *resp, uint64_t cl) {
  uint64_t first, last, total;
  if (resp->status != 206)
    return cl;
  if (hplan_parse_content_range(resp->content_range, &first, &last, &total))
    return 0;
  return total == UINT64_MAX ? 0 : total;
}

static int get_sink(void *ctx, const char *data, size_t n) {
  struct hpart *p = ctx;
  struct hjob *j = p->job;
  uint64_t cap = p->len;
  if (p->bytes == 0) {
    /* Refuse before writing a byte when the answer announces too much. */
    int64_t cl = p->r.xfer.resp.content_length;
    if (cl >= 0 && (uint64_t)cl > cap) {
      /* The object's size still reaches the result: a caller can size a
       * buffer from it (and pin the read to the answer's ETag). */
      p->object_size = answer_total(&p->r.xfer.resp, (uint64_t)cl);
      return sink_fail(
          p, HIPOBJ_E_BUFFER_TOO_SMALL,
          "%" PRId64 " bytes do not fit the %" PRIu64 "-byte buffer", cl, cap);
    }
    /* A GET in one request learns its total here. */
    if (cl >= 0 && p->number == 0)
      hxctl_set_total(j->ctl, (uint64_t)cl);
    if (!p->ck.begun && cks_begin(p) != 0)
      return sink_fail(p, HIPOBJ_E_PROTOCOL, "%s", p->ck.note);
  }
  if (n > cap - p->bytes)
    return sink_fail(p, HIPOBJ_E_BUFFER_TOO_SMALL,
                     "the object does not fit the %" PRIu64 "-byte buffer",
                     cap);
  /* The checksum reads libcurl's buffer while it is in the cache. */
  if (hcks_part_active(&p->ck))
    hcks_part_update(&p->ck, data, n);
  if (p->stage) {
    if (hstage_get_write(p->stage, p->bytes, data, n) != 0)
      return sink_fail(p, HIPOBJ_E_IO, "%s", hstage_reason(p->stage));
  } else {
    memcpy(part_mem(p) + p->bytes, data, n);
  }
  p->bytes += n;
  return 0;
}

static int get_rewind(struct hreq *r) {
  struct hpart *p = r->sink_ctx;
  p->bytes = 0;
  hcks_part_reset(&p->ck);
  if (p->stage)
    hstage_get_rewind(p->stage);
  return 0;
}

/* The answer must say exactly which bytes it carries, and all of them must
 * have arrived (and, staged, been copied). */
static int get_check_bytes(struct hreq *r, struct hipobj_error *err) {
  struct hpart *p = r->sink_ctx;
  const struct s3_http_resp *resp = &r->xfer.resp;
  if (p->stage && hstage_get_flush(p->stage) != 0)
    return herr_set(err, HIPOBJ_E_IO, r->op_name, "%s",
                    hstage_reason(p->stage));
  if (resp->content_length >= 0 && (uint64_t)resp->content_length != p->bytes)
    return herr_set(err, HIPOBJ_E_NETWORK, r->op_name,
                    "received %" PRIu64 " bytes, Content-Length announced "
                    "%" PRId64,
                    p->bytes, resp->content_length);
  if (resp->status == 206) {
    uint64_t first, last, total;
    if (hplan_parse_content_range(resp->content_range, &first, &last, &total) !=
        0)
      return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                      "206 answer with a bad Content-Range '%s'",
                      resp->content_range);
    if (!p->has_range || first != p->off || last - first + 1 != p->bytes ||
        (p->range_len && last > p->off + p->range_len - 1))
      return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                      "Content-Range '%s' does not match the requested range "
                      "and the %" PRIu64 " bytes received",
                      resp->content_range, p->bytes);
    /* Every requested byte must be there: a 206 may stop early only at the
     * object's end. A shorter answer, however honestly labelled, would
     * leave a hole in the destination that nobody fills. */
    uint64_t want_last = p->range_len ? p->off + p->range_len - 1 : UINT64_MAX;
    if (total != UINT64_MAX && total - 1 < want_last)
      want_last = total - 1;
    if (last != want_last)
      return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                      "short answer: Content-Range '%s' stops before the "
                      "end of the requested range (%s)",
                      resp->content_range, p->range_text);
    p->object_size = total == UINT64_MAX ? 0 : total;
    p->ranged_answer = 1;
    return HIPOBJ_OK;
  }
  if (p->has_range && !(p->whole_ok && p->off == 0) &&
      (p->off != 0 || (p->range_len && p->bytes > p->range_len)))
    return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name,
                    "the server ignored the Range header (answered %ld with "
                    "the whole object)",
                    resp->status);
  p->ranged_answer = 0; /* the whole object came */
  p->object_size = p->bytes;
  return HIPOBJ_OK;
}

/* ... and match the answer's own checksum, when it has one (cks.h). */
static int get_check(struct hreq *r, struct hipobj_error *err) {
  struct hpart *p = r->sink_ctx;
  int rc = get_check_bytes(r, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (!p->ck.begun && cks_begin(p) != 0) /* an empty body */
    return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name, "%s", p->ck.note);
  return hcks_part_end(&p->ck, p->bytes, r->op_name, err);
}

static void get_request(struct hpart *p) {
  struct hjob *j = p->job;
  struct hreq *r = &p->r;
  hreq_init(r, j->c, p->name, "GET", j->bucket, j->key);
  r->ctl = j->ctl;
  if (p->has_range) {
    hplan_range_header(p->off, p->range_len, p->range_text);
    s3_request_header(&r->req, "range", p->range_text);
  }
  if (p->if_match && *p->if_match)
    s3_request_header(&r->req, "if-match", p->if_match);
  if (p->ck.ask)
    s3_request_header(&r->req, "x-amz-checksum-mode", "ENABLED");
  r->sink = get_sink;
  r->sink_ctx = p;
  r->before_attempt = get_rewind;
  r->check = get_check;
}

/* ---- PUT and UploadPart -------------------------------------------------- */

static int put_check(struct hreq *r, struct hipobj_error *err) {
  struct hpart *p = r->sink_ctx;
  if (p->nq && !r->xfer.resp.etag[0])
    return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name, "answer has no ETag");
  return HIPOBJ_OK;
}

static void put_request(struct hpart *p) {
  struct hjob *j = p->job;
  struct hreq *r = &p->r;
  hreq_init(r, j->c, p->name, "PUT", j->bucket, j->key);
  r->ctl = j->ctl;
  for (size_t i = 0; i < p->nq; i++)
    s3_request_param(&r->req, p->query[i].name, p->query[i].value);
  /* No Content-Type unless asked: the server applies S3's default, the
   * same as for an RDMA PUT, which cannot carry one. */
  if (p->content_type)
    s3_request_header(&r->req, "content-type", p->content_type);
  r->body = part_mem(p);
  r->body_len = p->len;
  r->send_body = 1;
  r->crc32c = p->crc32c;
  r->sign_payload = p->sign;
  r->sink_ctx = p; /* read back by put_check */
  r->check = put_check;
}

/* ---- the paths ----------------------------------------------------------- */

static void http_done(struct hreq *r, void *ctx) {
  struct hpart *p = ctx;
  p->status = r->status;
  p->retries = r->retries;
  if (r->status != HIPOBJ_OK)
    p->err = r->err;
  hstrlcpy(p->etag, r->xfer.resp.etag, sizeof p->etag);
  int64_t t;
  if (!p->is_put && r->xfer.resp.last_modified[0] &&
      s3_parse_http_date(r->xfer.resp.last_modified, &t) == 0)
    p->mtime = t;
  if (p->is_put) {
    p->bytes = r->status == HIPOBJ_OK ? p->len : 0;
    if (r->crc32c)
      hstrlcpy(p->crc32c_b64, r->crc32c_b64, sizeof p->crc32c_b64);
    p->crc32c_confirmed = r->crc32c_confirmed;
  }
  hpart_done(p);
}

static int http_prepare(struct hpart *p) {
  (void)p;
  return HIPOBJ_OK;
}

/* A GET into host memory, or a PUT from it, of at most this many bytes
 * runs on the thread that waits for it when that thread starts it:
 * answered in about a round trip, it would spend as long again crossing
 * to an HTTP worker and back. Bigger parts stay on the workers, where
 * they run side by side. */
#define RUN_HERE_MAX ((uint64_t)1 << 20)

static int run_here(const struct hpart *p) {
  const struct hjob *j = p->job;
  return p->path == &hpath_http && p->len <= RUN_HERE_MAX && j->has_waiter &&
         pthread_equal(j->waiter, pthread_self());
}

static void http_start(struct hpart *p) {
  if (p->is_put)
    put_request(p);
  else
    get_request(p);
  p->r.run_here = run_here(p);
  if (p->stage) {
    if (p->is_put)
      hstage_put_attach(p->stage, &p->r);
  }
  p->r.done = http_done;
  p->r.done_ctx = p;
  hreq_submit(&p->r); /* a failure to send completes through done too */
}

static void http_release(struct hpart *p) {
  hcks_part_release(&p->ck);
  hstage_end(p->stage);
  p->stage = NULL;
  hreq_cleanup(&p->r);
}

/* Staged: the part's chunks are taken now, without waiting; an empty pool
 * is HPATH_AGAIN and the scheduler comes back when chunks return. */
static int staged_prepare(struct hpart *p) {
  struct hjob *j = p->job;
  int rc;
  if (p->is_put) {
    rc = hstage_put_begin(j->c, p->name, j->mem, p->mem_off, p->len, p->share,
                          1, &p->stage, &p->err);
  } else {
    struct hipobj_mem win = hipobj_mem_window(j->mem, p->mem_off, p->len);
    rc = hstage_get_begin(j->c, p->name, &win, 1, &p->stage, &p->err);
  }
  return rc == HSTAGE_AGAIN ? HPATH_AGAIN : rc;
}

/* Mapped (a file on tmpfs): the window is mapped on a worker (populating
 * it takes a while), then the part runs as over host memory. */
static void mapped_start(struct hpart *p) {
  struct hjob *j = p->job;
  char why[HFILE_WHY];
  if (hfile_window_map(j->mem->fd, j->mem->offset + p->mem_off, p->len,
                       p->is_put ? HMEM_READ : HMEM_WRITE, &p->win, why) != 0) {
    p->status = herr_set(&p->err, HIPOBJ_E_IO, p->name, "%s failed: %s",
                         p->is_put ? "file read" : "file write", why);
    hpart_done(p);
    return;
  }
  http_start(p);
}

static void mapped_release(struct hpart *p) {
  hcks_part_release(&p->ck);
  hfile_window_unmap(&p->win, p->is_put ? 0 : p->bytes);
  hreq_cleanup(&p->r);
}

const struct hpath hpath_http = {
    .name = "http",
    .id = HIPOBJ_PATH_HTTP,
    .prepare = http_prepare,
    .start = http_start,
    .release = http_release,
};

const struct hpath hpath_http_staged = {
    .name = "http-staged",
    .id = HIPOBJ_PATH_HTTP_STAGED,
    .prepare = staged_prepare,
    .start = http_start,
    .release = http_release,
};

const struct hpath hpath_http_mapped = {
    .name = "http-mapped",
    .id = HIPOBJ_PATH_HTTP,
    .blocking = 1,
    .prepare = http_prepare,
    .start = mapped_start,
    .release = mapped_release,
};
