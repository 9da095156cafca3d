/* rdma_gpu_regs.h - registrations of GPU memory with the NIC (dma-buf),
 * kept across transfers per (client, GPU): a later transfer into or out of
 * the same allocation reuses its registration instead of exporting and
 * registering it again. A registration covers a whole allocation and is
 * keyed by its base, size and the runtime's buffer id, so memory freed and
 * allocated again at the same address (a new buffer id) is never served by
 * the old registration, which still maps the old pages. Allocations whose
 * runtime gives no buffer id are registered per transfer, as before.
 * Buffers registered explicitly (hipobj_buffer_register) stay until they
 * are deregistered. Thread-safe. */
#ifndef HIPOBJ_RDMA_GPU_REGS_H
#define HIPOBJ_RDMA_GPU_REGS_H

#include <stddef.h>
#include <stdint.h>

struct rdma_mr;
struct hgpu_mem_info;
struct hipobj_error;
struct hgpu_regs;
struct hgpu_reg;

/* Registers [base, base+size) of the GPU memory with access `access`
 * (RDMA_MR_*) through the caller's exporter. */
typedef int (*hgpu_reg_fn)(void *ctx, const void *base, size_t size,
                           unsigned access, struct rdma_mr **out,
                           struct hipobj_error *err);

struct hgpu_regs *hgpu_regs_create(void);
/* Deregisters everything (no transfer may hold one). NULL allowed. */
void hgpu_regs_destroy(struct hgpu_regs *t);

/* A registration holding [ptr, ptr+len), which lies in the allocation
 * `info` describes: the cached one, or one made now through reg. Hand
 * *ref back to hgpu_regs_release(). `pin` (explicit registration) keeps
 * it until hgpu_regs_unpin(). Returns a status (err filled). */
int hgpu_regs_acquire(struct hgpu_regs *t, const struct hgpu_mem_info *info,
                      const void *ptr, size_t len, unsigned access, int pin,
                      hgpu_reg_fn reg, void *ctx, const struct rdma_mr **mr,
                      struct hgpu_reg **ref, struct hipobj_error *err);
void hgpu_regs_release(struct hgpu_regs *t, struct hgpu_reg *ref);
/* Ends an explicit registration of the allocation holding ptr: -1 when
 * none is pinned there. */
int hgpu_regs_unpin(struct hgpu_regs *t, const void *ptr);

struct hgpu_regs_stats {
  uint64_t hits, misses; /* acquires served / registered */
  uint64_t stale;        /* registrations dropped for a new buffer id */
  uint64_t uncached;     /* acquires registered per transfer (no id) */
  unsigned entries;      /* registrations kept */
};
void hgpu_regs_get_stats(struct hgpu_regs *t, struct hgpu_regs_stats *st);

#endif
