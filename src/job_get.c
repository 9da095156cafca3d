/* job_get.c - the plan of a GET (docs/engine.md): one request for a small
 * read; else a first ranged part that learns the object's size and ETag
 * from its Content-Range, then every further part pinned to that ETag
 * (If-Match), each landing at its offset of the destination, so a
 * concurrent overwrite fails cleanly instead of mixing two versions. When
 * RDMA will move the parts and the size is not known, one HEAD learns it
 * first (PREPARE names the bytes). Checksums (cks.h): every request asks
 * for them; a whole object in parts is checked at the end against the
 * value a HEAD brings, sent beside the parts once the first one has
 * pinned the ETag (or the RDMA HEAD's). The scheduler runs the parts; this
 * file only says which come next and checks what they brought. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../s3/xml.h"
#include "base/strutil.h"
#include "engine.h"
#include "jobs.h"
#include "rdma_glue.h"

enum { STEP_HEAD = 1, STEP_CKS_HEAD = 2 };

enum phase {
  P_START,  /* nothing sent */
  P_SIZING, /* the HEAD or the first part is running */
  P_PARTS,  /* size known: the remaining parts */
};

struct get_plan {
  struct hjob *j;
  /* the caller's request */
  int has_range;
  uint64_t start, want; /* want 0: to the end */
  const char *if_match; /* the caller's, or the pinned ETag */
  uint64_t ps;          /* part size */
  int single;           /* one request for the whole read */
  int head;             /* RDMA will move the parts: HEAD first */
  int whole_retry;      /* 416 on a first part: the object is empty */
  enum phase phase;
  /* learnt */
  uint64_t total; /* object size */
  uint64_t end;   /* one past the last byte to read */
  uint64_t next;  /* next byte to hand out */
  unsigned number, n_parts;
  char etag[HIPOBJ_ETAG_MAX];
  int64_t mtime;  /* Last-Modified of the first answer that had one */
  uint64_t bytes; /* written into the destination */
  int exact;      /* parts were cut from a known size: each brings all */
  unsigned head_retries;
  struct hcks_job cks; /* the object's checksum (cks.h) */
  int cks_head;        /* 1: a HEAD for it is due, 2: sent */
};

static int busy(const struct hjob *j) {
  return j->parts_in_flight || j->steps_in_flight;
}

/* What p's checksums do: ask for the stored ones; compute CRC-64/NVME for
 * the whole object's check when the read may be the whole object and comes
 * in parts (or by RDMA, whose HEAD brings the object's checksum). */
static void cks_part(struct get_plan *g, struct hpart *p) {
  p->ck.ask = g->cks.verify;
  p->ck.want64 = g->cks.verify && g->start == 0 && (!g->single || g->head) &&
                 !g->cks.ranged;
}

/* p reads [off, off+len) of the object into the window at off - start. */
static void fill_part(struct get_plan *g, struct hpart *p, uint64_t off,
                      uint64_t len) {
  cks_part(g, p);
  p->number = ++g->number;
  snprintf(p->name, sizeof p->name, "GetObject part #%u", p->number);
  p->has_range = 1;
  p->off = off;
  p->range_len = len;
  p->mem_off = off - g->start;
  p->len = len;
  p->if_match = g->if_match;
}

static enum hnext get_next(struct hjob *j, struct hpart *p, int *step) {
  struct get_plan *g = j->plan;
  if (hjob_stopped(j))
    return busy(j) ? HNEXT_WAIT : HNEXT_DONE;
  switch (g->phase) {
  case P_START:
    if (g->head) {
      g->phase = P_SIZING;
      *step = STEP_HEAD;
      return HNEXT_STEP;
    }
    if (!p)
      return HNEXT_WAIT;
    g->phase = P_SIZING;
    if (g->single) {
      /* The caller's whole range (or the object) in one request. */
      hstrlcpy(p->name, "GetObject", sizeof p->name);
      p->has_range = g->has_range;
      p->off = g->start;
      p->range_len = g->want;
      p->len = j->mem->len;
      p->if_match = g->if_match;
      p->sizing = 1;
      cks_part(g, p);
      return HNEXT_PART;
    }
    fill_part(g, p, g->start, g->ps);
    p->len = g->ps < j->mem->len ? g->ps : j->mem->len;
    p->whole_ok = !g->has_range; /* a 200 with the whole object is fine */
    p->http_only = 1;            /* the size is not known: HTTP learns it */
    p->sizing = 1;
    return HNEXT_PART;
  case P_SIZING:
    return HNEXT_WAIT;
  case P_PARTS:
    if (g->cks_head == 1) {
      g->cks_head = 2; /* beside the parts: the value is needed at the end */
      *step = STEP_CKS_HEAD;
      return HNEXT_STEP;
    }
    if (g->next < g->end) {
      if (!p)
        return HNEXT_WAIT;
      uint64_t len = g->end - g->next < g->ps ? g->end - g->next : g->ps;
      fill_part(g, p, g->next, len);
      g->next += len;
      return HNEXT_PART;
    }
    if (busy(j))
      return HNEXT_WAIT;
    /* Every byte is in: the whole object against its checksum. */
    struct hipobj_error e;
    if (hcks_job_finish(&g->cks, &e) != HIPOBJ_OK)
      hjob_fail(j, e.status, &e);
    return HNEXT_DONE;
  }
  return HNEXT_DONE;
}

/* The size is known (total): the bytes to read and the parts for them;
 * in_parts: the first answer was one part of several. */
static void sized(struct hjob *j, struct get_plan *g, uint64_t from,
                  int in_parts) {
  g->end =
      g->want && g->start + g->want < g->total ? g->start + g->want : g->total;
  if (g->end < g->start)
    g->end = g->start;
  if (g->end - g->start > j->mem->len) {
    struct hipobj_error e;
    herr_set(&e, HIPOBJ_E_BUFFER_TOO_SMALL, "GetObject",
             "%" PRIu64 " bytes do not fit the %zu-byte buffer",
             g->end - g->start, j->mem->len);
    hjob_fail(j, e.status, &e);
    return;
  }
  hxctl_set_total(j->ctl, g->end - g->start);
  g->exact = 1;
  if (g->single) /* one part of everything (RDMA sessions split it) */
    g->ps = g->end - from ? g->end - from : 1;
  g->next = from;
  g->n_parts = g->number + (unsigned)((g->end - from + g->ps - 1) / g->ps);
  if (!g->if_match || !*g->if_match)
    g->if_match = g->etag;
  g->phase = P_PARTS;
  if (hcks_job_sized(&g->cks, g->start, g->end, g->total, in_parts))
    g->cks_head = 1;
}

static void head_done(struct hjob *j, struct get_plan *g, int rc,
                      const struct hipobj_error *err) {
  (void)err;
  if (rc != HIPOBJ_OK || g->start >= g->total ||
      g->end - g->start > j->mem->len ||
      (g->if_match && *g->if_match && strcmp(g->if_match, g->etag) != 0)) {
    /* HTTP reports it as S3 says it (NoSuchKey, 412, 416, too small),
     * with the answer's body: the plan starts over with the sizing part,
     * over HTTP. */
    g->head = 0;
    g->phase = P_START;
    j->policy = HIPOBJ_RDMA_OFF;
    return;
  }
  sized(j, g, g->start, 0);
}

static void first_done(struct hjob *j, struct get_plan *g, struct hpart *p,
                       int rc, const struct hipobj_error *err) {
  if (rc == HIPOBJ_E_INVALID_RANGE && !g->has_range && !g->whole_retry &&
      !g->single) {
    /* S3 answers 416 to any range of an empty object: ask for it whole. */
    g->whole_retry = 1;
    g->single = 1;
    g->number = 0;
    g->phase = P_START;
    return;
  }
  if (rc != HIPOBJ_OK) {
    /* A read that does not fit still reports the object's size and ETag
     * from the answer's headers. */
    if (rc == HIPOBJ_E_BUFFER_TOO_SMALL && p->object_size) {
      g->total = p->object_size;
      hstrlcpy(g->etag, p->etag, sizeof g->etag);
    }
    hjob_fail(j, rc, err);
    return;
  }
  g->bytes += p->bytes;
  g->mtime = p->mtime;
  if (g->single || !p->ranged_answer) {
    /* The whole read came in one answer. */
    g->total = p->object_size;
    g->end = g->next = g->start + p->bytes;
    hstrlcpy(g->etag, p->etag, sizeof g->etag);
    g->phase = P_PARTS;
    hcks_job_sized(&g->cks, g->start, g->end, g->total, 0);
    hcks_job_part(&g->cks, &p->ck, p->off, p->bytes);
    return;
  }
  hstrlcpy(g->etag, p->etag, sizeof g->etag);
  g->total = p->object_size;
  if (!g->etag[0] || g->total == 0) {
    struct hipobj_error e;
    herr_set(&e, HIPOBJ_E_PROTOCOL, "GetObject",
             "the first part's answer has no ETag or object size");
    hjob_fail(j, e.status, &e);
    return;
  }
  sized(j, g, g->start + p->bytes, 1);
  hcks_job_part(&g->cks, &p->ck, p->off, p->bytes);
  if (g->cks.answered) /* the first answer was the whole object, checked */
    g->cks_head = 0;
}

static void get_finished(struct hjob *j, struct hpart *p, int step, int rc,
                         const struct hipobj_error *err) {
  struct get_plan *g = j->plan;
  if (!p && step == STEP_HEAD) {
    head_done(j, g, rc, err);
    return;
  }
  if (!p)
    return; /* the checksum HEAD: get_step recorded what it brought */
  if (g->phase == P_SIZING) {
    first_done(j, g, p, rc, err);
    return;
  }
  if (rc == HIPOBJ_E_PRECONDITION) {
    struct hipobj_error e = *err;
    herr_set(&e, rc, p->name,
             "the object changed during the download (ETag %s no longer "
             "matches)",
             g->etag);
    hjob_fail(j, rc, &e);
    return;
  }
  if (rc != HIPOBJ_OK) {
    hjob_fail(j, rc, err);
    return;
  }
  /* Parts cut from a known size must bring all of it (an RDMA session
   * reports what it moved: fewer bytes means the object shrank), and RDMA
   * parts say in FINAL which version they read. */
  struct hipobj_error e;
  if (g->exact && p->bytes != p->len) {
    herr_set(&e, HIPOBJ_E_PRECONDITION, p->name,
             "the object changed during the download (%" PRIu64 " of %" PRIu64
             " bytes)",
             p->bytes, p->len);
    hjob_fail(j, e.status, &e);
    return;
  }
  if (p->etag[0] && g->etag[0] && strcmp(p->etag, g->etag) != 0) {
    herr_set(&e, HIPOBJ_E_PRECONDITION, p->name,
             "the object changed during the download (ETag %s, then %s)",
             g->etag, p->etag);
    hjob_fail(j, e.status, &e);
    return;
  }
  g->bytes += p->bytes;
  hcks_job_part(&g->cks, &p->ck, p->off, p->bytes);
}

/* A HEAD: the size and ETag for RDMA (STEP_HEAD), the object's checksum
 * (both steps, when verifying; STEP_CKS_HEAD pinned to the ETag). */
static int get_step(struct hjob *j, int step, struct hipobj_error *err) {
  struct get_plan *g = j->plan;
  struct hreq r;
  hreq_init(&r, j->c, "HeadObject", "HEAD", j->bucket, j->key);
  r.head = 1;
  r.ctl = j->ctl;
  if (g->cks.verify)
    s3_request_header(&r.req, "x-amz-checksum-mode", "ENABLED");
  if (step == STEP_CKS_HEAD) /* set before the step, unchanged since */
    s3_request_header(&r.req, "if-match", g->etag);
  int rc = hreq_run(&r, err);
  const struct s3_http_resp *resp = &r.xfer.resp;
  if (rc == HIPOBJ_OK && step == STEP_HEAD && resp->content_length < 0)
    rc = herr_set(err, HIPOBJ_E_PROTOCOL, "HeadObject",
                  "answer has no Content-Length");
  pthread_mutex_lock(&j->lock);
  if (rc == HIPOBJ_OK && step == STEP_HEAD) {
    g->total = (uint64_t)resp->content_length;
    hstrlcpy(g->etag, resp->etag, sizeof g->etag);
    int64_t t;
    if (resp->last_modified[0] &&
        s3_parse_http_date(resp->last_modified, &t) == 0)
      g->mtime = t;
    g->end = g->start < g->total ? g->total : g->start;
  }
  hcks_job_head(&g->cks, rc, resp);
  pthread_mutex_unlock(&j->lock);
  hreq_cleanup(&r);
  /* Without the checksum the GET goes on (reported unverified). */
  return step == STEP_CKS_HEAD ? HIPOBJ_OK : rc;
}

static void get_result(struct hjob *j, struct hipobj_xfer_result *res) {
  struct get_plan *g = j->plan;
  /* The bytes written, also after a failure (then they are not all). */
  res->bytes = g->bytes;
  res->rdma_bytes = hjob_rdma_bytes(j);
  res->object_size = g->total;
  res->parts = g->single ? 0 : g->n_parts;
  res->retries = j->retries;
  res->path = hjob_path(j);
  hstrlcpy(res->etag, g->etag, sizeof res->etag);
  res->last_modified = g->mtime;
  if (j->status == HIPOBJ_OK)
    hcks_job_result(&g->cks, res);
}

static void get_free(struct hjob *j) {
  free(j->plan);
  j->plan = NULL;
}

static const struct hjob_ops get_ops = {get_next, get_step, get_finished,
                                        get_result, get_free};

int hjob_get_init(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *dst,
                  const struct hipobj_get_opts *opts, struct hxctl *ctl,
                  struct hjob *j, struct hipobj_error *err) {
  struct get_plan *g = calloc(1, sizeof *g);
  if (!g)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "GetObject", "out of memory");
  if (opts && ((int)opts->checksum_mode < HIPOBJ_CHECKSUM_MODE_DEFAULT ||
               (int)opts->checksum_mode > HIPOBJ_CHECKSUM_MODE_OFF)) {
    free(g);
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "GetObject",
                    "checksum_mode %d is not a valid enum "
                    "hipobj_checksum_mode",
                    (int)opts->checksum_mode);
  }
  g->has_range = opts && opts->has_range;
  g->start = g->has_range ? opts->offset : 0;
  g->want = g->has_range ? opts->length : 0;
  if (g->has_range && g->want && g->start > UINT64_MAX - g->want) {
    free(g);
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "GetObject",
                    "range offset + length overflows");
  }
  g->if_match = opts ? opts->if_match : NULL;
  int mode = opts && opts->checksum_mode ? (int)opts->checksum_mode
                                         : c->cfg.checksum_mode;
  hcks_job_init(&g->cks, mode == HIPOBJ_CHECKSUM_MODE_VERIFY);
  g->ps = opts && opts->part_size ? opts->part_size : c->cfg.part_size;
  unsigned conc =
      opts && opts->concurrency ? opts->concurrency : c->cfg.concurrency;
  int policy =
      hrdma_policy(c, opts ? (int)opts->rdma_policy : HIPOBJ_RDMA_DEFAULT);
  g->single = g->ps == 0 || conc <= 1 || dst->len <= g->ps ||
              (g->want && g->want <= g->ps);
  /* No more parts in flight than the buffer holds parts: a small GET has
   * one slot, not `concurrency` of them to clear. */
  uint64_t most = g->single ? 1 : (dst->len + g->ps - 1) / g->ps;
  if (conc > most)
    conc = (unsigned)most;
  int rc =
      hjob_init(j, c, "GetObject", bucket, key, dst, ctl, policy, conc, err);
  if (rc != HIPOBJ_OK) {
    free(g);
    return rc;
  }
  j->ops = &get_ops;
  j->plan = g;
  g->j = j;
  if (hpath_rdma_likely(j)) {
    if (g->single && g->has_range && g->want) {
      /* The range names the bytes: no HEAD; a server that has fewer says
       * so in FINAL (or HTTP clamps). */
      g->phase = P_PARTS;
      g->end = g->start + g->want;
      g->next = g->start;
      g->ps = g->want;
      hxctl_set_total(ctl, g->want);
      if (g->want > dst->len) {
        g->single = 1; /* HTTP reports the buffer too small */
        g->phase = P_START;
      }
    } else {
      g->head = 1; /* PREPARE names the bytes: learn the size first */
    }
  }
  return HIPOBJ_OK;
}
