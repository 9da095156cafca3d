/* path_rdma.c - the RDMA data paths (hipobj-rc-v2, rdma_glue.c): a part
 * moved by one or more RDMA sessions straight into or out of the caller's
 * memory (`rdma-direct`: host memory, GPU memory registered through
 * dma-buf) or through pinned chunks registered once (`rdma-staged`: GPU
 * memory the NIC cannot register, files). Sessions block their thread, so
 * these parts run on the scheduler's workers. A part that RDMA declines or
 * fails under the `auto` policy is handed back for the HTTP path; a decline
 * is remembered for the endpoint (endpoint.c). */
#include <string.h>

#include "base/strutil.h"
#include "endpoint.h"
#include "engine.h"
#include "rdma_xfer.h"

static int rdma_prepare(struct hpart *p) {
  (void)p; /* chunks and registrations are taken by the session itself */
  return HIPOBJ_OK;
}

static void rdma_start(struct hpart *p) {
  struct hjob *j = p->job;
  struct hipobj_mem win = hipobj_mem_window(j->mem, p->mem_off, p->len);
  struct hrdma_job job = {.is_put = p->is_put,
                          .bucket = j->bucket,
                          .key = j->key,
                          .query = p->nq ? p->query : NULL,
                          .query_n = p->nq,
                          .offset = p->is_put ? 0 : p->off,
                          .size = p->is_put ? p->len : p->range_len,
                          .mem = &win,
                          .policy = j->policy,
                          .staged_only = p->path == &hpath_rdma_staged};
  struct hrdma_outcome out;
  int rc = hrdma_transfer(j->c, &job, &out, &p->err);
  if (out.mp || out.no_mp) /* what PREPARE's reply said of parts */
    hendpoint_note_rdma_mp(&j->c->facts, out.mp);
  if (rc != HIPOBJ_OK) {
    p->status = rc;
    hstrlcpy(p->err.operation, p->name, sizeof p->err.operation);
  } else if (!out.done) {
    p->fallback = 1;
    p->declined = out.declined;
    if (out.declined) {
      hendpoint_note_rdma_declined(&j->c->facts);
      HLOG_INFO(&j->c->log, "the endpoint declined RDMA: HTTP for %.0f s",
                HENDPOINT_TTL_S);
    }
  } else {
    p->bytes = out.bytes;
    hstrlcpy(p->etag, out.etag, sizeof p->etag);
    /* The sessions' FINALs carry the CRC-64/NVME of what the server sent:
     * recomputed over host memory and staging chunks, only reported for
     * GPU memory the NIC wrote (cks.h). */
    p->ck.has_crc64 = !p->is_put && p->ck.want64 && out.crc_ok;
    p->ck.crc64 = out.crc;
    p->ck.server_crc = !out.crc_checked;
    if (out.staged)
      p->path = &hpath_rdma_staged;
    hxctl_add(j->ctl, out.bytes);
  }
  hpart_done(p);
}

static void rdma_release(struct hpart *p) {
  (void)p;
}

const struct hpath hpath_rdma_direct = {
    .name = "rdma-direct",
    .id = HIPOBJ_PATH_RDMA_DIRECT,
    .blocking = 1,
    .rdma = 1,
    .prepare = rdma_prepare,
    .start = rdma_start,
    .release = rdma_release,
};

const struct hpath hpath_rdma_staged = {
    .name = "rdma-staged",
    .id = HIPOBJ_PATH_RDMA_STAGED,
    .blocking = 1,
    .rdma = 1,
    .prepare = rdma_prepare,
    .start = rdma_start,
    .release = rdma_release,
};
