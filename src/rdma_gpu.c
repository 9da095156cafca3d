/* rdma_gpu.c - RDMA for memory the NIC cannot simply be given a host
 * pointer to (GPU memory; any kind with a staging platform).
 *
 * Direct: the GPU range is exported as a dma-buf and registered with the
 * NIC (ibv_reg_dmabuf_mr), so the server's WRITE lands in VRAM, or the PUT
 * is read from it, with no host copy (GPUDirect RDMA). Tried first; a NIC
 * or kernel that refuses it is remembered for the process (the refusal is a
 * property of the provider and driver, not of the buffer).
 *
 * Staged: the client's pool of pinned chunks (staging.c) is registered once
 * per chunk (the engine's registration cache keeps library-owned buffers)
 * and the data moves chunk by chunk: a GET is a series of sessions of at
 * most one chunk, each copied to the GPU asynchronously while the next
 * session runs; a PUT (one WRITE WITH IMM by protocol, §4.4) is copied out
 * of the GPU into up to HSTAGE_MAX_SLOTS chunks and gathered by the NIC
 * from them in one send. A PUT needing more chunks goes over HTTP. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../rdma/mr.h"
#include "../rdma/rc_client.h"
#include "base/crc64nvme.h"
#include "base/strutil.h"
#include "gpu.h"
#include "mem.h"
#include "rdma_gpu.h"
#include "rdma_gpu_regs.h"
#include "staging.h"

static _Atomic(rdma_reg_dmabuf_fn) reg_for_tests; /* NULL: ibv_reg_dmabuf_mr */

/* The per-GPU state of the client for GPU memory m: 0 with *k, or -1 for
 * memory that has none (host, files, a device past HRDMA_GPU_ENGINES). */
static int slot_of(const struct hipobj_mem *m, int *k) {
  *k = m->kind == HIPOBJ_MEM_HIP ? 0 : m->kind == HIPOBJ_MEM_CUDA ? 1 : -1;
  return *k >= 0 && m->device >= 0 && m->device < HRDMA_GPU_ENGINES ? 0 : -1;
}

static int refused(struct hipobj_client *c, const struct hipobj_mem *m) {
  int k;
  return slot_of(m, &k) == 0 &&
         __atomic_load_n(&c->rdma_gpu_refused[k][m->device], __ATOMIC_RELAXED);
}

/* The registrations kept for m's GPU, created on first use; NULL for
 * memory without a slot (registered per transfer then). */
static struct hgpu_regs *regs_of(struct hipobj_client *c,
                                 const struct hipobj_mem *m) {
  int k;
  if (slot_of(m, &k) != 0)
    return NULL;
  pthread_mutex_lock(&c->async_lock);
  struct hgpu_regs **t = &c->rdma_gpu_regs[k][m->device];
  if (!*t)
    *t = hgpu_regs_create();
  struct hgpu_regs *r = *t;
  pthread_mutex_unlock(&c->async_lock);
  return r;
}

void hrdma_gpu_reset_for_tests(struct hipobj_client *c,
                               rdma_reg_dmabuf_fn reg) {
  atomic_store(&reg_for_tests, reg);
  pthread_mutex_lock(&c->async_lock);
  for (int k = 0; k < 2; k++)
    for (int d = 0; d < HRDMA_GPU_ENGINES; d++) {
      c->rdma_gpu_refused[k][d] = 0;
      hgpu_regs_destroy(c->rdma_gpu_regs[k][d]);
      c->rdma_gpu_regs[k][d] = NULL;
    }
  pthread_mutex_unlock(&c->async_lock);
}

void hrdma_gpu_client_destroy(struct hipobj_client *c) {
  for (int k = 0; k < 2; k++)
    for (int d = 0; d < HRDMA_GPU_ENGINES; d++) {
      hgpu_regs_destroy(c->rdma_gpu_regs[k][d]);
      c->rdma_gpu_regs[k][d] = NULL;
    }
}

int hrdma_gpu_regs_stats(struct hipobj_client *c, const struct hipobj_mem *m,
                         struct hgpu_regs_stats *st) {
  memset(st, 0, sizeof *st);
  int k;
  if (slot_of(m, &k) != 0)
    return -1;
  pthread_mutex_lock(&c->async_lock);
  struct hgpu_regs *t = c->rdma_gpu_regs[k][m->device];
  pthread_mutex_unlock(&c->async_lock);
  if (t)
    hgpu_regs_get_stats(t, st);
  return 0;
}

struct export_ctx {
  const struct hipobj_mem *m;
  struct rdma_engine *e;
  struct hipobj_error *err; /* the exporter's reason, when it failed */
};

static int export_range(void *user, const void *ptr, size_t len, int *fd,
                        uint64_t *offset) {
  struct export_ctx *x = user;
  struct hipobj_mem m = *x->m;
  m.ptr = (void *)ptr;
  m.len = len;
  return hgpu_export_dmabuf(&m, fd, offset, x->err) == HIPOBJ_OK ? 0 : -1;
}

/* hgpu_reg_fn: a dma-buf registration of [base, base+size) on x's PD. */
static int reg_dmabuf(void *ctx, const void *base, size_t size, unsigned access,
                      struct rdma_mr **out, struct hipobj_error *err) {
  struct export_ctx *x = ctx;
  struct rdma_dmabuf_ops dops = {export_range, NULL,
                                 atomic_load(&reg_for_tests), x};
  return rdma_mr_reg_dmabuf(rdma_engine_pd(x->e), &dops, base, size, access, 0,
                            out, err);
}

/* A registration holding the job's GPU range (kept for its whole
 * allocation when the runtime tells allocations apart); 0 when the range
 * must go staged: the platform cannot export, or this GPU's NIC refused a
 * registration before (then logged once for it). */
static int direct_mr(struct hipobj_client *c, struct rdma_engine *e,
                     const struct hrdma_job *job, const struct hgpu_ops *ops,
                     unsigned access, const struct rdma_mr **mr,
                     struct hgpu_reg **ref, struct hgpu_regs **tab) {
  char why[HGPU_WHY];
  *mr = NULL;
  *ref = NULL;
  if (refused(c, job->mem))
    return 0;
  if (!ops->dmabuf_supported(job->mem->device, why)) {
    HLOG_DBG(&c->log, "RDMA into %s memory staged: %s", ops->name, why);
    return 0;
  }
  struct hgpu_mem_info info;
  memset(&info, 0, sizeof info);
  if (ops->classify(job->mem->ptr, &info, why) != 1)
    memset(&info, 0, sizeof info); /* checked before: no caching then */
  struct hipobj_error xerr, rerr;
  memset(&xerr, 0, sizeof xerr);
  memset(&rerr, 0, sizeof rerr);
  struct export_ctx x = {job->mem, e, &xerr};
  struct hgpu_regs *t = regs_of(c, job->mem);
  struct hgpu_regs *once = t ? NULL : hgpu_regs_create();
  if (!t && !once)
    return 0;
  *tab = t ? t : once;
  int rc = hgpu_regs_acquire(*tab, t ? &info : &(struct hgpu_mem_info){0},
                             job->mem->ptr, (size_t)job->size, access, 0,
                             reg_dmabuf, &x, mr, ref, &rerr);
  if (once && rc != HIPOBJ_OK) {
    hgpu_regs_destroy(once);
    *tab = NULL;
  }
  if (rc == HIPOBJ_OK)
    return 1;
  int k;
  if (slot_of(job->mem, &k) != 0 ||
      !__atomic_exchange_n(&c->rdma_gpu_refused[k][job->mem->device], 1,
                           __ATOMIC_RELAXED))
    HLOG_INFO(&c->log,
              "%s GPU %d memory cannot be registered with the NIC (%s); "
              "its RDMA goes through pinned host memory from now on",
              ops->name, job->mem->device,
              xerr.message[0] ? xerr.message : rerr.message);
  return 0;
}

int hrdma_gpu_register(struct hipobj_client *c, const struct hipobj_mem *m,
                       int on, struct hipobj_error *err) {
  const char *op = on ? "RegisterBuffer" : "DeregisterBuffer";
  const struct hgpu_ops *ops;
  int rc = hgpu_check_mem(op, m, &c->log, &ops, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct hgpu_regs *t = regs_of(c, m);
  if (!t)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                    "%s device %d has no RDMA registrations (devices 0..%d)",
                    ops->name, m->device, HRDMA_GPU_ENGINES - 1);
  if (!on) {
    if (hgpu_regs_unpin(t, m->ptr) != 0)
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "%p is not in a registered buffer", m->ptr);
    return HIPOBJ_OK;
  }
  const char *why = NULL;
  struct rdma_engine *e = hrdma_engine_for(c, m, &why);
  if (!e)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op, "no RDMA: %s",
                    why && why[0] ? why : "no RDMA device");
  char gwhy[HGPU_WHY];
  if (!ops->dmabuf_supported(m->device, gwhy))
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op, "%s", gwhy);
  struct hgpu_mem_info info;
  memset(&info, 0, sizeof info);
  if (ops->classify(m->ptr, &info, gwhy) != 1 || !info.buffer_id)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                    "the %s runtime does not identify this allocation (no "
                    "buffer id): its registration could not be kept safely",
                    ops->name);
  struct hipobj_error xerr;
  memset(&xerr, 0, sizeof xerr);
  struct export_ctx x = {m, e, &xerr};
  const struct rdma_mr *mr;
  struct hgpu_reg *ref;
  /* Both directions: a GET's NIC writes, a PUT's reads. The reference is
   * the registration's own, dropped by the deregistration. */
  rc = hgpu_regs_acquire(t, &info, m->ptr, m->len,
                         RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE, 1,
                         reg_dmabuf, &x, &mr, &ref, err);
  if (rc != HIPOBJ_OK && xerr.message[0])
    herr_set(err, rc, op, "%s", xerr.message);
  return herr_op(err, op, rc);
}

int hrdma_direct_possible(struct hipobj_client *c, const struct hipobj_mem *m) {
  char why[HGPU_WHY];
  if (m->kind == HIPOBJ_MEM_HOST)
    return 1;
  if (m->kind == HIPOBJ_MEM_FILE || refused(c, m))
    return 0;
  const struct hgpu_ops *ops = hgpu_platform(m->kind, &c->log, why);
  return ops && ops->dmabuf_supported(m->device, why);
}

static void request_of(const struct hrdma_job *job,
                       const struct rdma_control_ops *ops,
                       struct rdma_rc_request *rq) {
  memset(rq, 0, sizeof *rq);
  rq->bucket = job->bucket;
  rq->key = job->key;
  rq->query = job->query;
  rq->nq = job->query_n;
  rq->offset = job->offset;
  rq->size = job->size;
  rq->ops = ops;
  rq->mem_kind = RDMA_MEM_HOST;
}

/* A failure of the staging side (a GPU copy): never replaced by HTTP,
 * which would copy through the same GPU. */
static int stage_error(struct hstage *s, const char *op,
                       struct rdma_rc_result *rr, unsigned *flags,
                       struct hipobj_error *err) {
  *flags |= HRDMA_GPU_FINAL;
  hstrlcpy(rr->reason, hstage_reason(s), sizeof rr->reason);
  rr->fallback = 0;
  return herr_set(err, HIPOBJ_E_IO, op, "%s", hstage_reason(s));
}

static int staged_get(struct hipobj_client *c, struct rdma_engine *e,
                      const struct hrdma_job *job,
                      const struct rdma_control_ops *ops,
                      struct rdma_rc_result *rr, unsigned *flags,
                      struct hipobj_error *err) {
  struct hstage *s;
  int rc = hstage_rdma_begin(c, "GetObject", job->mem, 0, job->size, &s, err);
  if (rc != HIPOBJ_OK) {
    hstrlcpy(rr->reason, err ? err->message : "staging", sizeof rr->reason);
    return rc;
  }
  struct rdma_mr_cache *cache = rdma_engine_mr_cache(e);
  unsigned k = hstage_nslots(s);
  size_t cb = hstage_chunk_size(s);
  uint64_t sess = rdma_engine_session_max(e);
  if (sess > cb)
    sess = cb;
  uint64_t done = 0;
  for (unsigned i = 0; done < job->size && rc == HIPOBJ_OK; i++) {
    unsigned slot = i % k;
    /* The chunk's previous copy to the GPU must be over before the next
     * session writes into it. */
    if (hstage_slot_wait(s, slot) != 0) {
      rc = stage_error(s, "GetObject", rr, flags, err);
      break;
    }
    void *buf = hstage_slot_buf(s, slot);
    const struct rdma_mr *mr;
    rc = rdma_mr_cache_acquire(cache, RDMA_MEM_HOST, buf, cb, &mr, err);
    if (rc != HIPOBJ_OK) {
      rr->fallback = 1;
      break;
    }
    struct rdma_rc_request rq;
    request_of(job, ops, &rq);
    rq.offset = job->offset + done;
    rq.size = job->size - done < sess ? job->size - done : sess;
    rq.buf = buf;
    rq.mr = mr;
    struct rdma_rc_result one;
    rc = rdma_rc_get(e, &rq, &one, err);
    rdma_mr_cache_release(cache, mr);
    rr->sessions += one.sessions;
    rr->ready_sent |= one.ready_sent;
    if (rc != HIPOBJ_OK) {
      hstrlcpy(rr->reason, one.reason, sizeof rr->reason);
      rr->fallback = one.fallback && done == 0;
      rr->http_status = one.http_status;
      rr->rdma_status = one.rdma_status;
      break;
    }
    if (done && strcmp(rr->etag, one.etag) != 0) {
      rc = herr_set(err, HIPOBJ_E_PRECONDITION, "RDMA GET",
                    "the object changed between RDMA sessions (ETag %s, then "
                    "%s)",
                    rr->etag, one.etag);
      hstrlcpy(rr->reason, err ? err->message : "ETag changed",
               sizeof rr->reason);
      break;
    }
    hstrlcpy(rr->etag, one.etag, sizeof rr->etag);
    hstrlcpy(rr->version_id, one.version_id, sizeof rr->version_id);
    /* The chunks' CRCs (checked in host memory) joined in order. */
    rr->crc = done ? crc64nvme_combine(rr->crc, one.crc, one.bytes) : one.crc;
    rr->crc_ok = (done ? rr->crc_ok : 1) && one.crc_ok;
    rr->crc_checked = (done ? rr->crc_checked : 1) && one.crc_checked;
    if (hstage_slot_to_gpu(s, slot, done, (size_t)one.bytes) != 0) {
      rc = stage_error(s, "GetObject", rr, flags, err);
      break;
    }
    done += one.bytes;
    if (one.bytes < rq.size)
      break; /* the server clamped at the object's end (§5.1) */
  }
  if (rc == HIPOBJ_OK && hstage_wait_all(s) != 0)
    rc = stage_error(s, "GetObject", rr, flags, err);
  hstage_end(s); /* waits for copies still running after a failure */
  rr->bytes = rc == HIPOBJ_OK ? done : 0;
  return rc;
}

static int staged_put(struct hipobj_client *c, struct rdma_engine *e,
                      const struct hrdma_job *job,
                      const struct rdma_control_ops *ops,
                      struct rdma_rc_result *rr, unsigned *flags,
                      struct hipobj_error *err) {
  const char *op = job->query_n ? "UploadPart" : "PutObject";
  struct hstage *s;
  int rc = hstage_rdma_begin(c, op, job->mem, 1, job->size, &s, err);
  if (rc != HIPOBJ_OK) {
    hstrlcpy(rr->reason, err ? err->message : "staging", sizeof rr->reason);
    return rc;
  }
  unsigned k = hstage_nslots(s);
  size_t cb = hstage_chunk_size(s);
  uint64_t need = (job->size + cb - 1) / cb;
  if (need > k || need > RDMA_QP_MAX_SEND_SGE) {
    hstage_end(s);
    rr->fallback = 1;
    snprintf(rr->reason, sizeof rr->reason,
             "%llu bytes need %llu staging chunks of %zu bytes in one send, "
             "%u are available",
             (unsigned long long)job->size, (unsigned long long)need, cb, k);
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op, "%s", rr->reason);
  }
  struct rdma_mr_cache *cache = rdma_engine_mr_cache(e);
  struct rdma_rc_seg segs[HSTAGE_MAX_SLOTS];
  unsigned held = 0;
  for (unsigned i = 0; i < need; i++) {
    uint64_t off = (uint64_t)i * cb;
    size_t n = job->size - off < cb ? (size_t)(job->size - off) : cb;
    if (hstage_slot_from_gpu(s, i, off, n) != 0) {
      rc = stage_error(s, op, rr, flags, err);
      break;
    }
    segs[i] = (struct rdma_rc_seg){hstage_slot_buf(s, i), (uint32_t)n, NULL};
  }
  if (rc == HIPOBJ_OK && hstage_wait_all(s) != 0)
    rc = stage_error(s, op, rr, flags, err);
  for (; rc == HIPOBJ_OK && held < need; held++) {
    rc = rdma_mr_cache_acquire(cache, RDMA_MEM_HOST, segs[held].buf, cb,
                               &segs[held].mr, err);
    if (rc != HIPOBJ_OK)
      rr->fallback = 1;
  }
  if (rc == HIPOBJ_OK) {
    struct rdma_rc_request rq;
    request_of(job, ops, &rq);
    rq.segs = segs;
    rq.nsegs = need;
    rc = rdma_rc_put(e, &rq, rr, err);
  }
  for (unsigned i = 0; i < held; i++)
    if (segs[i].mr)
      rdma_mr_cache_release(cache, segs[i].mr);
  hstage_end(s);
  return rc;
}

int hrdma_gpu_transfer(struct hipobj_client *c, struct rdma_engine *e,
                       const struct hrdma_job *job,
                       const struct rdma_control_ops *ops,
                       struct rdma_rc_result *rr, unsigned *flags,
                       struct hipobj_error *err) {
  memset(rr, 0, sizeof *rr);
  rr->rdma_status = -1;
  *flags = 0;
  const char *op =
      job->is_put ? (job->query_n ? "UploadPart" : "PutObject") : "GetObject";
  char gwhy[HGPU_WHY];
  int rc = hmem_check(op, job->mem, job->is_put ? HMEM_READ : HMEM_WRITE,
                      &c->log, err);
  /* Files have no GPU platform: staged only. */
  const struct hgpu_ops *gops = job->mem->kind == HIPOBJ_MEM_FILE
                                    ? NULL
                                    : hgpu_platform(job->mem->kind, NULL, gwhy);
  if (rc != HIPOBJ_OK) {
    hstrlcpy(rr->reason, err ? err->message : "bad memory", sizeof rr->reason);
    *flags |= HRDMA_GPU_FINAL; /* HTTP would fail the same way */
    return rc;
  }
  unsigned access = job->is_put ? RDMA_MR_LOCAL_READ
                                : RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE;
  const struct rdma_mr *mr = NULL;
  struct hgpu_reg *ref = NULL;
  struct hgpu_regs *tab = NULL;
  if (!job->staged_only && gops &&
      direct_mr(c, e, job, gops, access, &mr, &ref, &tab)) {
    struct rdma_rc_request rq;
    request_of(job, ops, &rq);
    rq.buf = job->mem->ptr;
    rq.mr = mr;
    rq.mem_kind = RDMA_MEM_DMABUF; /* the CPU cannot read it: no CRC check */
    rc = job->is_put ? rdma_rc_put(e, &rq, rr, err)
                     : rdma_rc_get(e, &rq, rr, err);
    /* After the sessions: every QP that used it is gone. */
    hgpu_regs_release(tab, ref);
    if (tab != regs_of(c, job->mem))
      hgpu_regs_destroy(tab); /* registered for this transfer only */
    return rc;
  }
  *flags |= HRDMA_GPU_STAGED;
  return job->is_put ? staged_put(c, e, job, ops, rr, flags, err)
                     : staged_get(c, e, job, ops, rr, flags, err);
}
