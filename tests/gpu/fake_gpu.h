/* fake_gpu.h - a GPU platform for tests, plugged into the CUDA slot of the
 * library's ops table. Device memory is ordinary malloc'ed memory; queued
 * copies are done later, in order, by a worker thread (reading their source
 * when they run, as DMA does) and completion is signalled through events, so
 * the staging pipelines' overlap and waits are exercised on the CPU. Faults
 * can be injected into the Nth copy. Two devices: every op names its
 * device, and one that names another device than the memory, stream or
 * event it is given (or frees pinned memory with another device than the
 * one that allocated it) counts as a violation; ops are counted per
 * device. */
#ifndef HIPOBJ_TEST_FAKE_GPU_H
#define HIPOBJ_TEST_FAKE_GPU_H

#include <stddef.h>

#define FAKE_GPU_DEVICES 2

/* Installs the fake as the CUDA platform (FAKE_GPU_DEVICES devices). */
void hgpu_register_fake_for_tests(void);
/* Restores the real CUDA platform. */
void hgpu_unregister_fake_for_tests(void);

/* With on set, device memory "exports" as a dma-buf: an empty memfd, which
 * only a registration hook that registers the fake's (host) pages itself
 * can use; off (the default): no dma-buf support. */
void fake_gpu_set_dmabuf(int on);

/* Each queued copy waits this long before it runs (default 0). */
void fake_gpu_set_delay_us(unsigned us);

enum fake_fault {
  FAKE_FAIL_QUEUE = 1, /* the Nth async copy fails when it is queued */
  FAKE_FAIL_ASYNC = 2, /* it is queued but fails when it runs: reported by
                          the next event on its stream */
};
/* Arms a failure of the nth asynchronous copy from now (1 = the next). */
void fake_gpu_fail_copy(unsigned nth, enum fake_fault how);

struct fake_gpu_stats {
  unsigned long h2d, d2h; /* asynchronous copies queued */
  unsigned long sync_copies;
  unsigned long unpinned;    /* async copies from/to non-pinned host memory */
  unsigned long violations;  /* streams/events destroyed with work pending,
                                unknown handles, another device's memory,
                                stream or event: the staging code's bugs */
  unsigned long pinned_live; /* pinned allocations not freed */
  unsigned long dev_live;    /* device allocations not freed */
  unsigned long dmabuf_exports;            /* successful dma-buf exports */
  unsigned long dev_ops[FAKE_GPU_DEVICES]; /* ops called for each device */
  unsigned long dev_h2d[FAKE_GPU_DEVICES]; /* async copies into its memory */
  unsigned long dev_d2h[FAKE_GPU_DEVICES]; /* ... and out of it */
};
void fake_gpu_stats(struct fake_gpu_stats *out);

#endif
