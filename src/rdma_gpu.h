/* rdma_gpu.h - RDMA for GPU (non-host) memory: dma-buf registration when
 * the NIC takes it, else staged through the pinned chunk pool (see
 * rdma_gpu.c). Used by rdma_glue.c only. */
#ifndef HIPOBJ_RDMA_GPU_H
#define HIPOBJ_RDMA_GPU_H

#include "../rdma/mr.h"
#include "client_int.h"
#include "rdma_glue.h"

struct rdma_engine;
struct rdma_control_ops;
struct rdma_rc_result;

enum {
  HRDMA_GPU_STAGED = 1u << 0, /* the bytes went through pinned host memory */
  /* The failure is the memory's (an invalid GPU range, a failed GPU
   * copy): HTTP would meet it again, so it is not replaced by HTTP. */
  HRDMA_GPU_FINAL = 1u << 1,
};

/* The job's transfer with job->mem not host memory: the same contract as
 * rdma_rc_get/rdma_rc_put (rr->fallback says whether HTTP may replace it),
 * and *flags (HRDMA_GPU_*) say how it went. */
int hrdma_gpu_transfer(struct hipobj_client *c, struct rdma_engine *e,
                       const struct hrdma_job *job,
                       const struct rdma_control_ops *ops,
                       struct rdma_rc_result *rr, unsigned *flags,
                       struct hipobj_error *err);

/* Tests only: replaces ibv_reg_dmabuf_mr() for the direct path (NULL
 * restores it), forgets c's refusals and drops its kept registrations. */
void hrdma_gpu_reset_for_tests(struct hipobj_client *c, rdma_reg_dmabuf_fn reg);
/* The registrations kept for GPU memory m's device (-1: none can be). */
struct hgpu_regs_stats;
int hrdma_gpu_regs_stats(struct hipobj_client *c, const struct hipobj_mem *m,
                         struct hgpu_regs_stats *st);
/* hipobj_buffer_register (on) / _deregister (off) of GPU memory m: the
 * allocation holding it is registered through dma-buf and kept until
 * deregistered. */
int hrdma_gpu_register(struct hipobj_client *c, const struct hipobj_mem *m,
                       int on, struct hipobj_error *err);
/* Client destroy: deregisters the kept registrations (before the engines
 * their PDs belong to go). */
void hrdma_gpu_client_destroy(struct hipobj_client *c);

#endif
