/* rdma_xfer.c - one transfer attempted by RDMA (hipobj-rc-v2) under the
 * client's and the request's policy: host memory straight through the
 * engine (with the caller's explicit registration when one covers it), GPU
 * memory and files through rdma_gpu.c; the outcome says whether HTTP must
 * move the bytes instead, and what the server showed (a decline, the `mp`
 * capability). The data path rdma-direct / rdma-staged (path_rdma.c) runs
 * it on a scheduler worker: its sessions block. */
#include "rdma_xfer.h"

#include <stdio.h>
#include <string.h>

#include "../rdma/rc_client.h"
#include "base/strutil.h"
#include "client_int.h"
#include "rdma_gpu.h"

static void quote_etag(char out[HIPOBJ_ETAG_MAX], const char *etag) {
  if (etag[0] == '"' || !etag[0])
    hstrlcpy(out, etag, HIPOBJ_ETAG_MAX);
  else
    snprintf(out, HIPOBJ_ETAG_MAX, "\"%.*s\"", HIPOBJ_ETAG_MAX - 3, etag);
}

int hrdma_transfer(struct hipobj_client *c, const struct hrdma_job *job,
                   struct hrdma_outcome *out, struct hipobj_error *err) {
  memset(out, 0, sizeof out[0]);
  const char *op =
      job->is_put ? (job->query_n ? "UploadPart" : "PutObject") : "GetObject";
  int policy = hrdma_policy(c, job->policy);
  out->fallback = 1;
  if (job->size == 0)
    return HIPOBJ_OK;
  int ready = hrdma_ready(c, job->policy, job->mem, op, err);
  if (ready <= 0)
    return -ready;
  const char *why;
  struct rdma_engine *e = hrdma_engine_for(c, job->mem, &why);
  struct rdma_control_ops ops;
  hrdma_control_ops_of(c, &ops);
  struct rdma_rc_request rq = {
      .bucket = job->bucket,
      .key = job->key,
      .query = job->query,
      .nq = job->query_n,
      .offset = job->offset,
      .size = job->size,
      .buf = job->mem->ptr,
      .mr = NULL, /* below: the user's registration when one covers it */
      .mem_kind = RDMA_MEM_HOST,
      .ops = &ops,
  };
  struct rdma_rc_result rr;
  struct hipobj_error e2;
  memset(&e2, 0, sizeof e2);
  int rc;
  unsigned gflags = 0;
  if (job->mem->kind != HIPOBJ_MEM_HOST) {
    rc = hrdma_gpu_transfer(c, e, job, &ops, &rr, &gflags, &e2);
  } else {
    struct hrdma_reg *reg;
    rq.mr = hrdma_reg_acquire(c, rq.buf, rq.size, &reg);
    rc = job->is_put ? rdma_rc_put(e, &rq, &rr, &e2)
                     : rdma_rc_get(e, &rq, &rr, &e2);
    hrdma_reg_release(c, reg);
  }
  out->mp = rr.caps_mp;
  if (rc == HIPOBJ_OK) {
    out->fallback = 0;
    out->done = 1;
    out->staged = (gflags & HRDMA_GPU_STAGED) != 0;
    out->bytes = rr.bytes;
    out->crc_ok = rr.crc_ok;
    out->crc_checked = rr.crc_checked;
    out->crc = rr.crc;
    quote_etag(out->etag, rr.etag);
    return HIPOBJ_OK;
  }
  HLOG_INFO(&c->log, "%s/%s: RDMA %s failed (%s)%s", job->bucket, job->key, op,
            rr.reason[0] ? rr.reason : e2.message,
            rr.fallback ? "; using HTTP" : "");
  if (policy == HIPOBJ_RDMA_REQUIRE || (gflags & HRDMA_GPU_FINAL)) {
    herr_copy(err, &e2);
    if (rr.fallback && err)
      herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
               "RDMA required but not possible: %s",
               rr.reason[0] ? rr.reason : e2.message);
    return err ? err->status : rc;
  }
  /* auto: whatever happened, nothing is reported as done. A declined
   * PREPARE changed nothing; a failure after READY was cancelled by the
   * engine, and the same request is then sent over HTTP: a GET reads the
   * bytes again, a PUT writes the same bytes again (idempotent). */
  out->fallback = 1;
  /* Declined by the server (wire spec §6.3: 501, or no such route), as
   * opposed to this transfer being unfit for RDMA here (its size, the
   * staging pool): only a decline says something about the endpoint. */
  out->declined =
      rr.fallback &&
      (rr.http_status == 501 || rr.http_status == 404 || rr.http_status == 405);
  out->no_mp = rr.fallback && rr.no_mp;
  return HIPOBJ_OK;
}
