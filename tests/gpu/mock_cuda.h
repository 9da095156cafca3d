/* mock_cuda.h - what the stand-in libcuda.so.1 (mock_libcuda.c) records
 * beyond the driver API, for tests that load it: per device, the calls that
 * ran with that device's primary context current and the work done there;
 * and the uses it refused as wrong (a device's memory, stream or event used
 * while another device's context was current). A test finds these with
 * dlsym on the library already loaded (dlopen "libcuda.so.1" with
 * RTLD_NOLOAD): the real driver has none of them. */
#ifndef HIPOBJ_TEST_MOCK_CUDA_H
#define HIPOBJ_TEST_MOCK_CUDA_H

struct mock_cuda_dev_stats {
  unsigned long calls;      /* calls that ran in this device's context */
  unsigned long h2d, d2h;   /* queued copies into / out of its memory */
  unsigned long long bytes; /* bytes those copies moved */
  unsigned long streams, events, dev_allocs, host_allocs; /* created */
};

/* Counters of device dev (all zero for a device that does not exist). */
typedef void (*mock_cuda_stats_fn)(int dev, struct mock_cuda_dev_stats *out);
/* Refused cross-device uses, and queued copies through host memory that is
 * not page-locked for the current context. */
typedef unsigned long (*mock_cuda_count_fn)(void);

#define MOCK_CUDA_STATS_SYM "mock_cuda_stats"
#define MOCK_CUDA_VIOLATIONS_SYM "mock_cuda_violations"
#define MOCK_CUDA_UNPINNED_SYM "mock_cuda_unpinned"

#endif
