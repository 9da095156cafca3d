/* job_put.c - the plans of uploads (docs/engine.md):
 * - PUT: one PutObject part, or, above the multipart threshold, the step
 *   CreateMultipartUpload, one UploadPart per part, the step
 *   CompleteMultipartUpload; a failure or a cancel stops new parts and,
 *   once the parts in flight are over, the step AbortMultipartUpload
 *   (unless the caller keeps failed uploads), so no orphaned upload stays
 *   on the server;
 * - UploadPart of the step-by-step API: one part of an existing upload.
 * How each part moves (HTTP, staged, RDMA) is the scheduler's choice. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strutil.h"
#include "engine.h"
#include "jobs.h"
#include "mpu.h"
#include "plan.h"
#include "rdma_glue.h"
#include "staging.h"

enum { STEP_CREATE = 1, STEP_COMPLETE, STEP_ABORT, STEP_VERIFY };

enum phase {
  P_START,
  P_CREATING,
  P_PARTS,
  P_COMPLETING,
  P_VERIFY, /* bytes went by RDMA: confirm what the server stored */
  P_VERIFYING,
  P_ABORTING,
  P_END
};

struct put_plan {
  const char *content_type;
  int multipart;
  uint64_t ps;
  unsigned n_parts, next; /* next part number to hand out */
  int keep_failed;        /* keep_failed_upload */
  int want_crc32c;        /* ask CreateMultipartUpload for CRC32C parts */
  unsigned share;         /* staging chunks per part in flight */
  enum phase phase;
  struct hipobj_mpu *mpu; /* the upload (multipart, step-by-step) */
  int own_mpu;            /* created here: freed with the plan */
  uint64_t bytes;         /* stored (PUT: on success) */
  int verified;           /* what went by RDMA was confirmed by a HEAD */
  unsigned step_retries;
  char etag[HIPOBJ_ETAG_MAX];
  char upload_id[HIPOBJ_UPLOAD_ID_MAX]; /* kept for resuming */
};

static int busy(const struct hjob *j) {
  return j->parts_in_flight || j->steps_in_flight;
}

/* p is UploadPart `number` of the upload: [off, off+len) of the source. */
static void fill_upload_part(struct hjob *j, struct put_plan *u,
                             struct hpart *p, unsigned number, uint64_t off,
                             uint64_t len) {
  p->is_put = 1;
  p->number = number;
  snprintf(p->name, sizeof p->name, "UploadPart #%u", number);
  snprintf(p->number_text, sizeof p->number_text, "%u", number);
  p->query[0] = (struct hparam){"partNumber", p->number_text};
  p->query[1] = (struct hparam){"uploadId", hmpu_upload_id(u->mpu)};
  p->nq = 2;
  p->mem_off = off;
  p->len = len;
  p->share = u->share;
  /* A confirmed CRC32C upload sends checksums instead of signed payloads;
   * otherwise the payload's SHA-256 is signed (integrity NONE: neither). */
  p->crc32c = hmpu_crc32c(u->mpu);
  p->sign = p->crc32c ? HREQ_SIGN_NONE : HREQ_SIGN_OBJECT;
  (void)j;
}

static enum hnext put_next(struct hjob *j, struct hpart *p, int *step) {
  struct put_plan *u = j->plan;
  int stop = hjob_stopped(j);
  if (!u->multipart) {
    /* One part: PutObject, or UploadPart of the step-by-step API. */
    if (u->phase == P_START && !stop) {
      if (!p)
        return HNEXT_WAIT;
      u->phase = P_PARTS;
      if (u->mpu) {
        fill_upload_part(j, u, p, u->next, 0, j->mem->len);
        return HNEXT_PART;
      }
      p->is_put = 1;
      hstrlcpy(p->name, "PutObject", sizeof p->name);
      p->len = j->mem->len;
      p->content_type = u->content_type;
      /* AUTO: the object's CRC32C goes along; it replaces the signed
       * SHA-256 once this server has shown that it checks CRC32C. */
      p->crc32c = j->c->cfg.integrity == HIPOBJ_INTEGRITY_AUTO;
      p->sign = p->crc32c && hendpoint_crc32c(&j->c->facts) ? HREQ_SIGN_NONE
                                                            : HREQ_SIGN_OBJECT;
      return HNEXT_PART;
    }
    if (busy(j))
      return HNEXT_WAIT;
    if (!stop && !u->mpu && u->phase == P_PARTS && hjob_rdma_bytes(j)) {
      u->phase = P_VERIFYING;
      *step = STEP_VERIFY;
      return HNEXT_STEP;
    }
    return HNEXT_DONE;
  }
  switch (u->phase) {
  case P_START:
    if (stop)
      return HNEXT_DONE;
    u->phase = P_CREATING;
    *step = STEP_CREATE;
    return HNEXT_STEP;
  case P_PARTS:
    if (!stop && u->next <= u->n_parts) {
      if (!p)
        return HNEXT_WAIT;
      uint64_t off, len;
      hplan_part(j->mem->len, u->ps, u->next, &off, &len);
      fill_upload_part(j, u, p, u->next++, off, len);
      return HNEXT_PART;
    }
    if (busy(j))
      return HNEXT_WAIT;
    if (stop) {
      if (u->keep_failed)
        return HNEXT_DONE;
      u->phase = P_ABORTING;
      *step = STEP_ABORT;
      return HNEXT_STEP;
    }
    u->phase = P_COMPLETING;
    *step = STEP_COMPLETE;
    return HNEXT_STEP;
  case P_VERIFY:
    u->phase = P_VERIFYING;
    *step = STEP_VERIFY;
    return HNEXT_STEP;
  case P_CREATING:
  case P_COMPLETING:
  case P_VERIFYING:
  case P_ABORTING:
    return HNEXT_WAIT;
  case P_END:
    break;
  }
  return HNEXT_DONE;
}

/* After an upload any of whose bytes went by RDMA: the object the server
 * now holds must have the size that was sent (and the ETag it answered).
 * A server that took the RDMA data somewhere else (one that ignores a
 * part's query stores the part as the whole object, and Complete then
 * assembles something else) is caught here, not reported as done. */
static int verify(struct hjob *j, struct put_plan *u,
                  struct hipobj_error *err) {
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  int rc = hipobj_s3_head(j->c, j->bucket, j->key, &info, err);
  if (rc != HIPOBJ_OK)
    return herr_set(err, HIPOBJ_E_INTEGRITY, j->op,
                    "the upload went by RDMA and could not be confirmed: %s",
                    err ? err->message : hipobj_strerror(rc));
  if (info.size != j->mem->len)
    return herr_set(err, HIPOBJ_E_INTEGRITY, j->op,
                    "the server holds %" PRIu64 " bytes after an upload of "
                    "%zu bytes by RDMA: it did not store what was sent",
                    info.size, j->mem->len);
  if (u->etag[0] && info.etag[0] && strcmp(u->etag, info.etag) != 0)
    return herr_set(err, HIPOBJ_E_INTEGRITY, j->op,
                    "the object's ETag is %s after an upload by RDMA that "
                    "answered %s",
                    info.etag, u->etag);
  return HIPOBJ_OK;
}

static int put_step(struct hjob *j, int step, struct hipobj_error *err) {
  struct put_plan *u = j->plan;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc;
  switch (step) {
  case STEP_CREATE:
    return hmpu_create(j->c, j->bucket, j->key, u->content_type, u->want_crc32c,
                       &u->mpu, err);
  case STEP_COMPLETE:
    rc = hipobj_mpu_complete(u->mpu, &res, err);
    pthread_mutex_lock(&j->lock);
    u->step_retries += res.retries;
    if (rc == HIPOBJ_OK)
      hstrlcpy(u->etag, res.etag, sizeof u->etag);
    pthread_mutex_unlock(&j->lock);
    return rc;
  case STEP_VERIFY:
    return verify(j, u, err);
  case STEP_ABORT:
    rc = hipobj_mpu_abort(u->mpu, err);
    if (rc != HIPOBJ_OK)
      HLOG_WARN(&j->c->log, "could not abort the failed upload of %s/%s: %s",
                j->bucket, j->key, err->message);
    return rc;
  }
  return herr_set(err, HIPOBJ_E_INTERNAL, j->op, "unknown step %d", step);
}

static void put_finished(struct hjob *j, struct hpart *p, int step, int rc,
                         const struct hipobj_error *err) {
  struct put_plan *u = j->plan;
  if (!p) {
    switch (step) {
    case STEP_CREATE:
      u->phase = rc == HIPOBJ_OK ? P_PARTS : P_END;
      u->own_mpu = rc == HIPOBJ_OK;
      hjob_fail(j, rc, err);
      return;
    case STEP_COMPLETE:
      u->phase = P_PARTS; /* a failed Complete is aborted next */
      if (rc == HIPOBJ_OK) {
        u->phase = hjob_rdma_bytes(j) ? P_VERIFY : P_END;
        u->bytes = j->mem->len;
      }
      hjob_fail(j, rc, err);
      return;
    case STEP_VERIFY:
      u->phase = P_END;
      u->verified = rc == HIPOBJ_OK;
      hjob_fail(j, rc, err);
      return;
    case STEP_ABORT:
      u->phase = P_END; /* the upload's failure stays the job's */
      return;
    }
    return;
  }
  if (rc != HIPOBJ_OK) {
    hjob_fail(j, rc, err);
    return;
  }
  if (u->mpu &&
      hmpu_record(u->mpu, p->number, p->len, p->etag, p->crc32c_b64) != 0) {
    struct hipobj_error e;
    herr_set(&e, HIPOBJ_E_OUT_OF_MEMORY, p->name, "out of memory");
    hjob_fail(j, e.status, &e);
    return;
  }
  if (!u->multipart) {
    u->bytes = p->len;
    hstrlcpy(u->etag, p->etag, sizeof u->etag);
  }
}

static void put_result(struct hjob *j, struct hipobj_xfer_result *res) {
  struct put_plan *u = j->plan;
  int ok = !j->failed;
  res->bytes = ok ? u->bytes : 0;
  res->rdma_bytes = ok ? hjob_rdma_bytes(j) : 0;
  res->parts = u->multipart ? u->n_parts : u->mpu ? 1 : 0;
  res->retries = j->retries + u->step_retries;
  res->path = hjob_path(j);
  hstrlcpy(res->etag, u->etag, sizeof res->etag);
  if (!ok && u->multipart && u->keep_failed && u->mpu)
    hstrlcpy(res->upload_id, hmpu_upload_id(u->mpu), sizeof res->upload_id);
}

static void put_free(struct hjob *j) {
  struct put_plan *u = j->plan;
  if (u && u->own_mpu)
    hipobj_mpu_free(u->mpu);
  free(u);
  j->plan = NULL;
}

static const struct hjob_ops put_ops = {put_next, put_step, put_finished,
                                        put_result, put_free};

static int plan_new(struct hipobj_client *c, const char *op, const char *bucket,
                    const char *key, const struct hipobj_mem *src,
                    struct hxctl *ctl, int policy, unsigned conc,
                    struct hjob *j, struct put_plan **out,
                    struct hipobj_error *err) {
  struct put_plan *u = calloc(1, sizeof *u);
  if (!u)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  int rc = hjob_init(j, c, op, bucket, key, src, ctl, policy, conc, err);
  if (rc != HIPOBJ_OK) {
    free(u);
    return rc;
  }
  j->ops = &put_ops;
  j->plan = u;
  *out = u;
  hxctl_set_total(ctl, src->len);
  return HIPOBJ_OK;
}

int hjob_put_init(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *src,
                  const struct hipobj_put_opts *opts, struct hxctl *ctl,
                  struct hjob *j, struct hipobj_error *err) {
  const char *op = "PutObject";
  uint64_t threshold = c->cfg.multipart_threshold;
  uint64_t part_size = c->cfg.part_size;
  if (opts && opts->part_size) {
    if (opts->part_size < HPLAN_MIN_PART || opts->part_size > HPLAN_MAX_PART)
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "part size %" PRIu64 " is outside S3's 5 MiB..5 GiB",
                      opts->part_size);
    part_size = opts->part_size;
    if (!opts->multipart_threshold)
      threshold = part_size;
  }
  if (opts && opts->multipart_threshold)
    threshold = opts->multipart_threshold;
  int multipart = src->len > threshold;
  uint64_t ps = 0;
  if (multipart && hplan_part_size(src->len, part_size, &ps) != 0)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "%zu bytes exceed S3's 5 TiB object limit", src->len);
  unsigned n_parts = multipart ? hplan_part_count(src->len, ps) : 1;
  unsigned conc =
      opts && opts->concurrency ? opts->concurrency : c->cfg.concurrency;
  if (conc > n_parts)
    conc = n_parts;
  int policy =
      hrdma_policy(c, opts ? (int)opts->rdma_policy : HIPOBJ_RDMA_DEFAULT);
  struct put_plan *u = NULL;
  int rc = plan_new(c, op, bucket, key, src, ctl, policy, conc, j, &u, err);
  if (rc != HIPOBJ_OK)
    return rc;
  u->content_type = opts ? opts->content_type : NULL;
  u->multipart = multipart;
  u->ps = ps;
  u->n_parts = n_parts;
  u->next = 1;
  u->keep_failed = opts && opts->keep_failed_upload;
  u->share = hstage_share(c, conc);
  if (multipart) {
    /* RDMA required but impossible: fail before an upload exists. */
    int ready = hrdma_ready(c, policy, src, "UploadPart", err);
    if (ready < 0) {
      j->ops->free(j);
      hjob_destroy(j);
      return -ready;
    }
    /* Part checksums instead of signed payloads where the server checks
     * them: not for RDMA parts (the client never reads that data) nor for
     * an upload kept for resuming (its later parts come from the
     * step-by-step calls, which sign them). */
    u->want_crc32c =
        c->cfg.integrity == HIPOBJ_INTEGRITY_AUTO && !u->keep_failed &&
        !(hpath_rdma_likely(j) && hendpoint_rdma_mp(&c->facts) != 0);
  }
  return HIPOBJ_OK;
}

int hjob_upload_part_init(struct hipobj_mpu *m, unsigned number,
                          const struct hipobj_mem *src, struct hxctl *ctl,
                          struct hjob *j, struct hipobj_error *err) {
  struct hipobj_client *c = hmpu_client(m);
  struct put_plan *u = NULL;
  int rc = plan_new(c, "UploadPart", hmpu_bucket(m), hmpu_key(m), src, ctl,
                    hrdma_policy(c, HIPOBJ_RDMA_DEFAULT), 1, j, &u, err);
  if (rc != HIPOBJ_OK)
    return rc;
  u->mpu = m;
  u->next = number;
  return HIPOBJ_OK;
}
