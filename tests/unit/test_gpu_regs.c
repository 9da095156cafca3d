/* test_gpu_regs.c - the per-GPU cache of dma-buf registrations
 * (src/rdma_gpu_regs.c) on its own: whole allocations registered once and
 * found again, a new buffer id at the same address drops the old
 * registration (it maps freed pages), a GET's and a PUT's access kept
 * apart, allocations without a buffer id registered per transfer, explicit
 * registrations pinned until unpinned, and the bound on what is kept. The
 * registrar is a counter (its registrations are NULL, which deregistering
 * accepts): the verbs side runs in the rdma suite. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "rdma/mr.h"
#include "src/gpu.h"
#include "src/rdma_gpu_regs.h"

static int calls;
static size_t last_size;

static int count_reg(void *ctx, const void *base, size_t size, unsigned access,
                     struct rdma_mr **out, struct hipobj_error *err) {
  (void)ctx, (void)base, (void)access, (void)err;
  calls++;
  last_size = size;
  *out = NULL;
  return HIPOBJ_OK;
}

static struct hgpu_mem_info alloc_info(uintptr_t base, size_t size,
                                       uint64_t id) {
  struct hgpu_mem_info i;
  memset(&i, 0, sizeof i);
  i.kind = HIPOBJ_MEM_CUDA;
  i.base = (void *)base;
  i.size = size;
  i.buffer_id = id;
  return i;
}

static void get(struct hgpu_regs *t, const struct hgpu_mem_info *i,
                uintptr_t ptr, size_t len, unsigned access,
                struct hgpu_reg **ref) {
  const struct rdma_mr *mr;
  cr_assert_eq(hgpu_regs_acquire(t, i, (void *)ptr, len, access, 0, count_reg,
                                 NULL, &mr, ref, NULL),
               HIPOBJ_OK);
}

Test(gpu_regs, kept_found_and_dropped_for_a_new_buffer_id) {
  calls = 0;
  struct hgpu_regs *t = hgpu_regs_create();
  struct hgpu_mem_info a = alloc_info(0x100000, 1 << 20, 7);
  struct hgpu_reg *r1, *r2, *r3;
  get(t, &a, 0x100000 + 4096, 100, RDMA_MR_LOCAL_WRITE, &r1);
  cr_assert_eq(calls, 1);
  cr_assert_eq(last_size, 1u << 20, "the whole allocation is registered");
  get(t, &a, 0x100000 + 65536, 1000, RDMA_MR_LOCAL_WRITE, &r2);
  cr_assert_eq(calls, 1, "a second range of the allocation is a hit");
  hgpu_regs_release(t, r1);
  hgpu_regs_release(t, r2);
  /* A PUT only reads: the GET's registration, which the NIC may write,
   * serves it. */
  get(t, &a, 0x100000, 10, RDMA_MR_LOCAL_READ, &r3);
  cr_assert_eq(calls, 1);
  hgpu_regs_release(t, r3);
  /* A GET needs remote writes, which a PUT's registration lacks: another
   * registration of the same allocation (not a stale one). */
  struct hgpu_mem_info a2 = alloc_info(0x400000, 1 << 20, 70);
  get(t, &a2, 0x400000, 10, RDMA_MR_LOCAL_READ, &r3);
  hgpu_regs_release(t, r3);
  get(t, &a2, 0x400000, 10, RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE, &r3);
  cr_assert_eq(calls, 3);
  hgpu_regs_release(t, r3);
  /* Freed and allocated again at the same address: a new buffer id. */
  struct hgpu_mem_info b = alloc_info(0x100000, 1 << 20, 8);
  get(t, &b, 0x100000, 10, RDMA_MR_LOCAL_WRITE, &r1);
  cr_assert_eq(calls, 4, "never the registration of the freed memory");
  hgpu_regs_release(t, r1);
  /* Overlapping at another base: also a different allocation. */
  struct hgpu_mem_info c = alloc_info(0x80000, 1 << 20, 9);
  get(t, &c, 0x80000, 10, RDMA_MR_LOCAL_WRITE, &r1);
  cr_assert_eq(calls, 5);
  hgpu_regs_release(t, r1);
  struct hgpu_regs_stats st;
  hgpu_regs_get_stats(t, &st);
  cr_assert_eq(st.hits, 2);
  cr_assert_eq(st.misses, 5);
  cr_assert_eq(st.stale, 2, "id 7's and id 8's");
  cr_assert_eq(st.entries, 3, "id 70's two and id 9's");
  hgpu_regs_destroy(t);
}

Test(gpu_regs, no_buffer_id_means_per_transfer) {
  calls = 0;
  struct hgpu_regs *t = hgpu_regs_create();
  struct hgpu_mem_info a = alloc_info(0x100000, 1 << 20, 0);
  struct hgpu_reg *r;
  for (int i = 0; i < 3; i++) {
    get(t, &a, 0x100000 + 16, 100, RDMA_MR_LOCAL_WRITE, &r);
    cr_assert_eq(last_size, 100, "exactly the range, for this transfer");
    hgpu_regs_release(t, r);
  }
  cr_assert_eq(calls, 3);
  struct hgpu_regs_stats st;
  hgpu_regs_get_stats(t, &st);
  cr_assert_eq(st.uncached, 3);
  cr_assert_eq(st.entries, 0);
  hgpu_regs_destroy(t);
}

Test(gpu_regs, bounded_and_pinned) {
  calls = 0;
  struct hgpu_regs *t = hgpu_regs_create();
  /* An explicit registration of allocation 0 stays whatever follows. */
  struct hgpu_mem_info p = alloc_info(0x1000000, 4096, 1);
  const struct rdma_mr *mr;
  struct hgpu_reg *pinned;
  cr_assert_eq(hgpu_regs_acquire(t, &p, (void *)0x1000000, 4096,
                                 RDMA_MR_LOCAL_WRITE, 1, count_reg, NULL, &mr,
                                 &pinned, NULL),
               HIPOBJ_OK);
  for (uintptr_t i = 1; i <= 200; i++) {
    struct hgpu_mem_info a = alloc_info(0x1000000 + i * 4096, 4096, 1 + i);
    struct hgpu_reg *r;
    get(t, &a, (uintptr_t)a.base, 4096, RDMA_MR_LOCAL_WRITE, &r);
    hgpu_regs_release(t, r);
  }
  struct hgpu_regs_stats st;
  hgpu_regs_get_stats(t, &st);
  cr_assert_leq(st.entries, 64, "%u registrations kept", st.entries);
  struct hgpu_reg *again;
  get(t, &p, 0x1000000, 10, RDMA_MR_LOCAL_WRITE, &again);
  hgpu_regs_release(t, again);
  hgpu_regs_get_stats(t, &st);
  cr_assert_eq(st.hits, 1, "the pinned registration survived the evictions");
  cr_assert_eq(hgpu_regs_unpin(t, (void *)0x1000010), 0);
  cr_assert_eq(hgpu_regs_unpin(t, (void *)0x1000010), -1, "pinned once");
  hgpu_regs_destroy(t);
}
