/* mock_libcuda.c - a stand-in libcuda.so.1 for machines without an NVIDIA
 * GPU, so that src/gpu_cuda.c (dlopen, symbol names, primary contexts,
 * pointer attributes, page-aligned dma-buf ranges) and the GPU programs
 * (gpu_suite, hipobj cp --gpu) run in CI: the tests put its directory first
 * on LD_LIBRARY_PATH. "Device" memory is malloc'ed; copies are immediate.
 * It is strict where the real driver is: calls that need a current context
 * fail without one, device pointers must be known allocations, dma-buf
 * ranges must be page-aligned. Two devices. Not a GPU: only for tests. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

struct ctx {
  int dev;
};
struct alloc {
  struct alloc *next;
  char *p;
  size_t n;
  int dev;               /* -1: pinned host */
  unsigned long long id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
};
struct stream {
  struct ctx *ctx;
};

static struct ctx primary[N_DEV] = {{0}, {1}};
static __thread struct ctx *current;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *allocs;
static int initialised;

#define API __attribute__((visibility("default")))
#define NEED_INIT                                                              \
  do {                                                                         \
    if (!initialised)                                                          \
      return NOT_INITIALIZED;                                                  \
  } while (0)
#define NEED_CTX                                                               \
  do {                                                                         \
    NEED_INIT;                                                                 \
    if (!current)                                                              \
      return INVALID_CONTEXT;                                                  \
  } while (0)

static struct alloc *find(uintptr_t p, size_t n) {
  for (struct alloc *a = allocs; a; a = a->next) {
    uintptr_t b = (uintptr_t)a->p;
    if (p >= b && p - b <= a->n && n <= a->n - (p - b))
      return a;
  }
  return NULL;
}

static int is_dev(uintptr_t p, size_t n) {
  pthread_mutex_lock(&lock);
  struct alloc *a = find(p, n);
  int r = a && a->dev >= 0;
  pthread_mutex_unlock(&lock);
  return r;
}

static CUresult track(void *p, size_t n, int dev) {
  struct alloc *a = calloc(1, sizeof *a);
  if (!a)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  a->p = p;
  a->n = n;
  a->dev = dev;
  pthread_mutex_lock(&lock);
  static unsigned long long next_id;
  a->id = ++next_id;
  a->next = allocs;
  allocs = a;
  pthread_mutex_unlock(&lock);
  return OK;
}

static CUresult untrack(void *p) {
  pthread_mutex_lock(&lock);
  struct alloc **pp = &allocs;
  while (*pp && (*pp)->p != p)
    pp = &(*pp)->next;
  struct alloc *a = *pp;
  if (a)
    *pp = a->next;
  pthread_mutex_unlock(&lock);
  if (!a)
    return INVALID_VALUE;
  free(a->p);
  free(a);
  return OK;
}

API CUresult cuInit(unsigned flags) {
  if (flags)
    return INVALID_VALUE;
  initialised = 1;
  return OK;
}
API CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return OK;
}
API CUresult cuDeviceGetCount(int *n) {
  NEED_INIT;
  *n = N_DEV;
  return OK;
}
API CUresult cuDeviceGet(int *d, int ordinal) {
  NEED_INIT;
  if (ordinal < 0 || ordinal >= N_DEV)
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
  if (d < 0 || d >= N_DEV)
    return INVALID_DEVICE;
  *c = &primary[d];
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
  return track(m, n, current->dev);
}
API CUresult cuMemFree_v2(CUdeviceptr p) {
  NEED_CTX;
  return untrack((void *)(uintptr_t)p);
}
API CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
  (void)flags;
  NEED_CTX;
  *p = malloc(n ? n : 1);
  return *p ? track(*p, n, -1) : 2;
}
API CUresult cuMemFreeHost(void *p) {
  NEED_CTX;
  return untrack(p);
}
API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  NEED_CTX;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
  return OK;
}

API CUresult cuStreamCreate(struct stream **s, unsigned flags) {
  (void)flags;
  NEED_CTX;
  *s = calloc(1, sizeof **s);
  (*s)->ctx = current;
  return OK;
}
API CUresult cuStreamDestroy_v2(struct stream *s) {
  NEED_CTX;
  free(s);
  return OK;
}
static CUresult stream_ok(struct stream *s) {
  NEED_CTX;
  return s && s->ctx == current ? OK : INVALID_HANDLE;
}
API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
                                  struct stream *s) {
  CUresult r = stream_ok(s);
  if (r == OK && !is_dev((uintptr_t)dst, n))
    r = INVALID_VALUE;
  if (r == OK)
    memcpy((void *)(uintptr_t)dst, src, n);
  return r;
}
API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
                                  struct stream *s) {
  CUresult r = stream_ok(s);
  if (r == OK && !is_dev((uintptr_t)src, n))
    r = INVALID_VALUE;
  if (r == OK)
    memcpy(dst, (const void *)(uintptr_t)src, n);
  return r;
}
API CUresult cuEventCreate(void **e, unsigned flags) {
  (void)flags;
  NEED_CTX;
  *e = malloc(1);
  return OK;
}
API CUresult cuEventDestroy_v2(void *e) {
  NEED_CTX;
  free(e);
  return OK;
}
API CUresult cuEventRecord(void *e, struct stream *s) {
  (void)e;
  return stream_ok(s);
}
API CUresult cuEventSynchronize(void *e) {
  (void)e;
  NEED_CTX;
  return OK;
}
API CUresult cuEventQuery(void *e) {
  (void)e;
  NEED_CTX;
  return OK;
}
API CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = r == INVALID_CONTEXT ? "invalid device context"
       : r == INVALID_VALUE ? "invalid argument"
                            : "mock CUDA error";
  return OK;
}
API CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT"
       : r == INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
                            : "CUDA_ERROR_MOCK";
  return OK;
}
