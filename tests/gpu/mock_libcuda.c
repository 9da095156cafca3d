/* mock_libcuda.c - a stand-in libcuda.so.1 for machines without an NVIDIA
 * GPU, so that src/gpu_cuda.c (dlopen, symbol names, primary contexts,
 * pointer attributes, page-aligned dma-buf ranges) and the GPU programs
 * (gpu_suite, multi_gpu, hipobj cp --gpu) run in CI: the tests put its
 * directory first on LD_LIBRARY_PATH. "Device" memory is malloc'ed; copies
 * are immediate. It is strict where the real driver is: calls that need a
 * current context fail without one, device pointers must be known
 * allocations, dma-buf ranges must be page-aligned, a stream belongs to
 * the context that made it. Two devices (MOCK_CUDA_DEVICES=1 shows one).
 *
 * Stricter than CUDA, so that a call made in the wrong device's context
 * fails instead of working by peer access: queued and synchronous copies,
 * cuMemFree, stream and event calls must run in the context of the device
 * that owns the memory, stream or event (each refusal also counts as a
 * violation). Host memory from cuMemHostAlloc without
 * CU_MEMHOSTALLOC_PORTABLE is page-locked only for the context that
 * allocated it (CUDA's rule); a queued copy through host memory not
 * page-locked for the current context counts as unpinned, and fails with
 * MOCK_CUDA_REQUIRE_PINNED=1. Per-device counters (mock_cuda.h) say which
 * context each call ran in; MOCK_CUDA_STATS=FILE writes them at exit, one
 * line per device: "device D calls N h2d N d2h N bytes N", then
 * "violations N unpinned N". Not a GPU: only for tests. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mock_cuda.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
enum {
  OK = 0,
  INVALID_VALUE = 1,
  NOT_INITIALIZED = 3,
  INVALID_DEVICE = 101,
  INVALID_CONTEXT = 201,
  INVALID_HANDLE = 400,
};
#define N_DEV 2
#define PORTABLE 1 /* CU_MEMHOSTALLOC_PORTABLE */

struct ctx {
  int dev;
  int retained; /* cuDevicePrimaryCtxRetain was called: "active" */
};
struct alloc {
  struct alloc *next;
  char *p;
  size_t n;
  int dev;               /* -1: pinned host */
  int home;              /* host: the device whose context allocated it */
  int portable;          /* host: page-locked for every context */
  unsigned long long id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
};
struct stream {
  struct ctx *ctx;
};
struct event {
  struct ctx *ctx;
};

static struct ctx primary[N_DEV] = {{0, 0}, {1, 0}};
static __thread struct ctx *current;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *allocs;
static int initialised, n_dev = N_DEV, require_pinned;
static struct mock_cuda_dev_stats stats[N_DEV];
static unsigned long violations, unpinned;

#define API __attribute__((visibility("default")))
#define NEED_INIT                                                              \
  do {                                                                         \
    if (!initialised)                                                          \
      return NOT_INITIALIZED;                                                  \
  } while (0)
/* Also counts the call for the current context's device. */
#define NEED_CTX                                                               \
  do {                                                                         \
    NEED_INIT;                                                                 \
    if (!current)                                                              \
      return INVALID_CONTEXT;                                                  \
    __atomic_fetch_add(&stats[current->dev].calls, 1, __ATOMIC_RELAXED);       \
  } while (0)
/* A wrong-context use: counted, and refused with `code`. */
#define REFUSE(code)                                                           \
  do {                                                                         \
    __atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED);                      \
    return (code);                                                             \
  } while (0)

API void mock_cuda_stats(int dev, struct mock_cuda_dev_stats *out) {
  memset(out, 0, sizeof *out);
  if (dev < 0 || dev >= N_DEV)
    return;
  pthread_mutex_lock(&lock);
  *out = stats[dev];
  out->calls = __atomic_load_n(&stats[dev].calls, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&lock);
}
API unsigned long mock_cuda_violations(void) {
  return __atomic_load_n(&violations, __ATOMIC_RELAXED);
}
API unsigned long mock_cuda_unpinned(void) {
  return __atomic_load_n(&unpinned, __ATOMIC_RELAXED);
}

/* MOCK_CUDA_STATS=FILE: the counters at exit, for tests of whole programs
 * (which context `hipobj --gpu 1 cp` used). */
__attribute__((destructor)) static void write_stats(void) {
  const char *path = getenv("MOCK_CUDA_STATS");
  FILE *f = path && *path ? fopen(path, "w") : NULL;
  if (!f)
    return;
  for (int d = 0; d < N_DEV; d++) {
    struct mock_cuda_dev_stats s;
    mock_cuda_stats(d, &s);
    fprintf(f, "device %d calls %lu h2d %lu d2h %lu bytes %llu\n", d, s.calls,
            s.h2d, s.d2h, s.bytes);
  }
  fprintf(f, "violations %lu unpinned %lu\n", mock_cuda_violations(),
          mock_cuda_unpinned());
  fclose(f);
}

static struct alloc *find(uintptr_t p, size_t n) {
  for (struct alloc *a = allocs; a; a = a->next) {
    uintptr_t b = (uintptr_t)a->p;
    if (p >= b && p - b <= a->n && n <= a->n - (p - b))
      return a;
  }
  return NULL;
}

/* The device owning [p, p+n), or -1 when it is not one device allocation. */
static int dev_of(uintptr_t p, size_t n) {
  pthread_mutex_lock(&lock);
  struct alloc *a = find(p, n);
  int d = a && a->dev >= 0 ? a->dev : -1;
  pthread_mutex_unlock(&lock);
  return d;
}

/* Whether [p, p+n) is host memory page-locked for the current context. */
static int pinned_here(const void *p, size_t n) {
  pthread_mutex_lock(&lock);
  struct alloc *a = find((uintptr_t)p, n);
  int ok = a && a->dev < 0 && (a->portable || a->home == current->dev);
  pthread_mutex_unlock(&lock);
  return ok;
}

static CUresult track(void *p, size_t n, int dev, int portable) {
  struct alloc *a = calloc(1, sizeof *a);
  if (!a)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  a->p = p;
  a->n = n;
  a->dev = dev;
  a->home = current->dev;
  a->portable = portable;
  pthread_mutex_lock(&lock);
  static unsigned long long next_id;
  a->id = ++next_id;
  a->next = allocs;
  allocs = a;
  if (dev >= 0)
    stats[dev].dev_allocs++;
  else
    stats[current->dev].host_allocs++;
  pthread_mutex_unlock(&lock);
  return OK;
}

/* want_dev: the device memory of the current context, or -1 for host. */
static CUresult untrack(void *p, int want_dev) {
  pthread_mutex_lock(&lock);
  struct alloc **pp = &allocs;
  while (*pp && (*pp)->p != p)
    pp = &(*pp)->next;
  struct alloc *a = *pp;
  int wrong = a && (want_dev < 0 ? a->dev >= 0 : a->dev != want_dev);
  if (a && !wrong)
    *pp = a->next;
  pthread_mutex_unlock(&lock);
  if (!a)
    return INVALID_VALUE;
  if (wrong)
    REFUSE(INVALID_VALUE); /* another device's memory, or the wrong kind */
  free(a->p);
  free(a);
  return OK;
}

API CUresult cuInit(unsigned flags) {
  if (flags)
    return INVALID_VALUE;
  const char *e = getenv("MOCK_CUDA_DEVICES");
  if (e && *e)
    n_dev = atoi(e) < 1 ? 1 : atoi(e) > N_DEV ? N_DEV : atoi(e);
  e = getenv("MOCK_CUDA_REQUIRE_PINNED");
  require_pinned = e && *e == '1';
  initialised = 1;
  return OK;
}
API CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return OK;
}
API CUresult cuDeviceGetCount(int *n) {
  NEED_INIT;
  *n = n_dev;
  return OK;
}
API CUresult cuDeviceGet(int *d, int ordinal) {
  NEED_INIT;
  if (ordinal < 0 || ordinal >= n_dev)
    return INVALID_DEVICE;
  *d = ordinal;
  return OK;
}
API CUresult cuDeviceGetName(char *name, int len, int d) {
  snprintf(name, (size_t)len, "Mock CUDA device %d", d);
  return OK;
}
API CUresult cuDeviceGetPCIBusId(char *b, int len, int d) {
  snprintf(b, (size_t)len, "0000:%02X:00.0", 0x3B + d); /* upper case */
  return OK;
}
API CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  *v = attr == 124 ? 1 : 0; /* DMA_BUF_SUPPORTED */
  return OK;
}
API CUresult cuDevicePrimaryCtxRetain(struct ctx **c, int d) {
  NEED_INIT;
  if (d < 0 || d >= n_dev)
    return INVALID_DEVICE;
  __atomic_store_n(&primary[d].retained, 1, __ATOMIC_SEQ_CST);
  *c = &primary[d];
  return OK;
}
API CUresult cuDevicePrimaryCtxGetState(int d, unsigned *flags, int *active) {
  NEED_INIT;
  if (d < 0 || d >= n_dev)
    return INVALID_DEVICE;
  *flags = 0;
  *active = __atomic_load_n(&primary[d].retained, __ATOMIC_SEQ_CST);
  return OK;
}
API CUresult cuCtxGetCurrent(struct ctx **c) {
  *c = current;
  return OK;
}
API CUresult cuCtxSetCurrent(struct ctx *c) {
  current = c;
  return OK;
}

API CUresult cuPointerGetAttributes(unsigned n, int *attrs, void **data,
                                    CUdeviceptr ptr) {
  NEED_INIT;
  pthread_mutex_lock(&lock);
  struct alloc *a = find((uintptr_t)ptr, 0);
  pthread_mutex_unlock(&lock);
  for (unsigned i = 0; i < n; i++) {
    switch (attrs[i]) {
    case 2: /* MEMORY_TYPE: 4 bytes */
      *(unsigned *)data[i] = !a ? 0 : a->dev >= 0 ? 2 : 1;
      break;
    case 8: /* IS_MANAGED: 4 bytes */
      *(unsigned *)data[i] = 0;
      break;
    case 9: /* DEVICE_ORDINAL: int */
      *(int *)data[i] = a ? (a->dev >= 0 ? a->dev : 0) : -2;
      break;
    case 7: /* BUFFER_ID: unsigned long long, unique per allocation */
      *(unsigned long long *)data[i] = a ? a->id : 0;
      break;
    default:
      return INVALID_VALUE;
    }
  }
  return OK;
}
API CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size,
                                     CUdeviceptr p) {
  NEED_CTX;
  pthread_mutex_lock(&lock);
  struct alloc *a = find((uintptr_t)p, 0);
  pthread_mutex_unlock(&lock);
  if (!a || a->dev < 0)
    return INVALID_VALUE;
  *base = (uintptr_t)a->p;
  *size = a->n;
  return OK;
}
API CUresult cuMemGetHandleForAddressRange(void *h, CUdeviceptr p, size_t n,
                                           int type, unsigned long long fl) {
  NEED_CTX;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (type != 1 || fl || p % page || n % page || !n)
    return INVALID_VALUE;
  if (dev_of((uintptr_t)p, n) != current->dev)
    REFUSE(INVALID_VALUE);
  int fd = memfd_create("mock-dmabuf", MFD_CLOEXEC);
  if (fd < 0)
    return 999;
  if (ftruncate(fd, (off_t)n) != 0) { /* a dma-buf has the range's size */
    close(fd);
    return 999;
  }
  *(int *)h = fd;
  return OK;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  NEED_CTX;
  /* Page-aligned like real allocations, so that page rounding shows. */
  void *m = NULL;
  if (!n || posix_memalign(&m, 4096, n) != 0)
    return INVALID_VALUE;
  *p = (uintptr_t)m;
  return track(m, n, current->dev, 0);
}
API CUresult cuMemFree_v2(CUdeviceptr p) {
  NEED_CTX;
  return untrack((void *)(uintptr_t)p, current->dev);
}
API CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
  NEED_CTX;
  *p = malloc(n ? n : 1);
  return *p ? track(*p, n, -1, (flags & PORTABLE) != 0) : 2;
}
API CUresult cuMemFreeHost(void *p) {
  NEED_CTX;
  return untrack(p, -1);
}
/* Synchronous copies: host memory, or the current device's. */
API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  NEED_CTX;
  int dd = dev_of((uintptr_t)dst, n), sd = dev_of((uintptr_t)src, n);
  if ((dd >= 0 && dd != current->dev) || (sd >= 0 && sd != current->dev))
    REFUSE(INVALID_VALUE);
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
  return OK;
}

API CUresult cuStreamCreate(struct stream **s, unsigned flags) {
  (void)flags;
  NEED_CTX;
  *s = calloc(1, sizeof **s);
  (*s)->ctx = current;
  __atomic_fetch_add(&stats[current->dev].streams, 1, __ATOMIC_RELAXED);
  return OK;
}
static CUresult stream_ok(struct stream *s) {
  NEED_CTX;
  if (!s)
    return INVALID_HANDLE;
  if (s->ctx != current)
    REFUSE(INVALID_HANDLE);
  return OK;
}
API CUresult cuStreamDestroy_v2(struct stream *s) {
  CUresult r = stream_ok(s);
  if (r == OK)
    free(s);
  return r;
}
/* A queued copy between the current device's memory and host memory
 * page-locked for this context. */
static CUresult queued_copy(struct stream *s, void *dst, const void *src,
                            size_t n, int to_dev) {
  CUresult r = stream_ok(s);
  if (r != OK)
    return r;
  const void *dev = to_dev ? dst : src, *host = to_dev ? src : dst;
  int d = dev_of((uintptr_t)dev, n);
  if (d < 0)
    return INVALID_VALUE;
  if (d != current->dev)
    REFUSE(INVALID_VALUE);
  if (!pinned_here(host, n)) {
    __atomic_fetch_add(&unpinned, 1, __ATOMIC_RELAXED);
    if (require_pinned)
      return INVALID_VALUE;
  }
  memcpy(dst, src, n);
  pthread_mutex_lock(&lock);
  if (to_dev)
    stats[d].h2d++;
  else
    stats[d].d2h++;
  stats[d].bytes += n;
  pthread_mutex_unlock(&lock);
  return OK;
}
API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
                                  struct stream *s) {
  return queued_copy(s, (void *)(uintptr_t)dst, src, n, 1);
}
API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
                                  struct stream *s) {
  return queued_copy(s, dst, (const void *)(uintptr_t)src, n, 0);
}
API CUresult cuEventCreate(struct event **e, unsigned flags) {
  (void)flags;
  NEED_CTX;
  *e = calloc(1, sizeof **e);
  (*e)->ctx = current;
  __atomic_fetch_add(&stats[current->dev].events, 1, __ATOMIC_RELAXED);
  return OK;
}
static CUresult event_ok(struct event *e) {
  NEED_CTX;
  if (!e)
    return INVALID_HANDLE;
  if (e->ctx != current)
    REFUSE(INVALID_HANDLE);
  return OK;
}
API CUresult cuEventDestroy_v2(struct event *e) {
  CUresult r = event_ok(e);
  if (r == OK)
    free(e);
  return r;
}
API CUresult cuEventRecord(struct event *e, struct stream *s) {
  CUresult r = event_ok(e);
  return r == OK ? stream_ok(s) : r;
}
API CUresult cuEventSynchronize(struct event *e) {
  return event_ok(e);
}
API CUresult cuEventQuery(struct event *e) {
  return event_ok(e);
}
API CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = r == INVALID_CONTEXT  ? "invalid device context"
       : r == INVALID_VALUE  ? "invalid argument"
       : r == INVALID_HANDLE ? "invalid resource handle"
                             : "mock CUDA error";
  return OK;
}
API CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == INVALID_CONTEXT  ? "CUDA_ERROR_INVALID_CONTEXT"
       : r == INVALID_VALUE  ? "CUDA_ERROR_INVALID_VALUE"
       : r == INVALID_HANDLE ? "CUDA_ERROR_INVALID_HANDLE"
                             : "CUDA_ERROR_MOCK";
  return OK;
}
