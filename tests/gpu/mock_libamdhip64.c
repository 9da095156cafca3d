/* mock_libamdhip64.c - a stand-in HIP runtime (libamdhip64.so) for machines
 * without an AMD GPU, so that src/gpu_hip.c and the GPU programs (gpu_suite,
 * hipobj cp --gpu) run in CI: the tests put its directory first on
 * LD_LIBRARY_PATH. It implements the entry points gpu_hip.c resolves, with
 * HIP's ABI (mock_hip_abi.h). Built twice, as ROCm 6 (tests/gpu/rocm6) and
 * as ROCm 5 (tests/gpu/rocm5): MOCK_ROCM picks the release's differences
 * (hipMemoryType's numbering, hipPointerGetAttributes on unknown memory,
 * the version, hipMemGetHandleForAddressRange only in 6). Two devices.
 *
 * It is built to make wrong use fail, as a GPU would:
 * - device memory is an address range the CPU cannot touch (PROT_NONE); its
 *   bytes live in a second, private mapping that only the runtime's copies
 *   use, so host code dereferencing device memory crashes;
 * - every stream has a worker thread that runs the stream's copies later,
 *   in order, after a pause (MOCK_HIP_DELAY_US, default 300), reading the
 *   source when the copy runs, as DMA does: a host buffer reused or read
 *   before its event completed gives wrong bytes;
 * - the current device is per thread (0 until hipSetDevice), as in HIP;
 *   memory, streams and events belong to the device current when they were
 *   made; an event recorded on another device's stream fails as in HIP;
 * - fresh memory is filled with 0xA5, not zeros;
 * - copies check that each range lies inside one allocation and that the
 *   memory is of the kind the call's direction says. Stricter than HIP
 *   where HIP tolerates misuse: hipFree of pinned memory, hipHostFree of
 *   device memory, an async copy on another device's memory or on the null
 *   stream (hipObject never uses it; it is not emulated), and with
 *   MOCK_HIP_REQUIRE_PINNED=1 an async copy of host memory that is not
 *   hipHostMalloc'ed. Freeing memory that a queued copy still uses aborts.
 * MOCK_HIP_FAIL_COPY=N: the Nth asynchronous copy fails "on the device":
 * events recorded after it on its stream report hipErrorIllegalAddress.
 * Not a GPU: only for tests. */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mock_hip_abi.h"

#ifndef MOCK_ROCM
#define MOCK_ROCM 6
#endif
#define N_DEV 2
#define POISON 0xA5
#define API __attribute__((visibility("default")))

typedef int herr;

struct alloc {
  struct alloc *next;
  uintptr_t addr; /* what the caller sees */
  size_t n;       /* requested size */
  size_t mapped;  /* page-rounded */
  char *back;     /* the bytes: private mapping (device) or addr (pinned) */
  int dev;
  int pinned; /* hipHostMalloc'ed host memory */
  unsigned flags;
  uint32_t id; /* HIP_POINTER_ATTRIBUTE_BUFFER_ID (32 bits in HIP) */
};

struct event {
  struct event *next;
  int dev;
  unsigned long records;   /* hipEventRecord calls */
  unsigned long completed; /* the latest record that has run */
  int inflight;            /* its markers still queued */
  herr status;             /* of the stream at the latest completion */
  int destroyed;           /* hipEventDestroy'ed with markers queued */
};

enum { OP_COPY, OP_MARK };
struct op {
  struct op *next;
  int type;
  char *dst;
  const char *src;
  size_t n;
  uintptr_t lo[2], hi[2]; /* the callers' ranges, for the free checks */
  int fail;
  struct event *ev;
  unsigned long rec;
};

struct stream {
  struct stream *next;
  int dev;
  unsigned flags;
  pthread_t thread;
  pthread_cond_t work;
  struct op *head, *tail;
  int closing;
  herr error; /* sticky, after a failed copy */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress = PTHREAD_COND_INITIALIZER;
static struct alloc *allocs;
static struct stream *streams;
static struct event *events;
static __thread int current_dev;
static size_t page = 4096;
static unsigned delay_us = 300;
static unsigned long fail_copy, async_copies;
static int require_pinned;
static uint32_t next_id;

__attribute__((constructor)) static void setup(void) {
  long p = sysconf(_SC_PAGESIZE);
  if (p > 0)
    page = (size_t)p;
  const char *e = getenv("MOCK_HIP_DELAY_US");
  if (e && *e)
    delay_us = (unsigned)strtoul(e, NULL, 10);
  e = getenv("MOCK_HIP_FAIL_COPY");
  if (e && *e)
    fail_copy = strtoul(e, NULL, 10);
  e = getenv("MOCK_HIP_REQUIRE_PINNED");
  require_pinned = e && !strcmp(e, "1");
}

/* Use that is undefined on a real GPU (not an error code): stop here. */
__attribute__((format(printf, 1, 2), noreturn)) static void
misuse(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mock libamdhip64: misuse: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

/* ---- allocations (lock held) --------------------------------------------- */

/* The allocation holding p, or NULL; *fits: [p, p+n) lies inside it. */
static struct alloc *holding(uintptr_t p, size_t n, int *fits) {
  for (struct alloc *a = allocs; a; a = a->next)
    if (p >= a->addr && p - a->addr < (a->n ? a->n : 1)) {
      *fits = n <= a->n - (p - a->addr);
      return a;
    }
  *fits = 1;
  return NULL;
}

static char *bytes_of(const struct alloc *a, uintptr_t p) {
  return a && !a->pinned ? a->back + (p - a->addr) : (char *)p;
}

static int is_device(const struct alloc *a) {
  return a && !a->pinned;
}

static int stream_busy(const struct stream *s) {
  return s->head != NULL;
}

/* Waits until the streams of dev (-1: all) have run their queues; HIP's
 * hipFree does this for the allocation's device. */
static void drain(int dev) {
  for (;;) {
    int busy = 0;
    for (struct stream *s = streams; s; s = s->next)
      busy |= (dev < 0 || s->dev == dev) && stream_busy(s);
    if (!busy)
      return;
    pthread_cond_wait(&progress, &lock);
  }
}

static void check_unused(const struct alloc *a, const char *call) {
  uintptr_t lo = a->addr, hi = a->addr + a->mapped;
  for (struct stream *s = streams; s; s = s->next)
    for (struct op *o = s->head; o; o = o->next)
      for (int i = 0; o->type == OP_COPY && i < 2; i++)
        if (o->lo[i] < hi && o->hi[i] > lo)
          misuse("%s(%p) while a copy queued on a stream of device %d "
                 "still uses it",
                 call, (void *)a->addr, s->dev);
}

static herr track(uintptr_t addr, size_t n, size_t mapped, char *back,
                  int pinned, unsigned flags) {
  struct alloc *a = calloc(1, sizeof *a);
  if (!a)
    return MH_OUT_OF_MEMORY;
  *a = (struct alloc){allocs,      addr,   n,     mapped, back,
                      current_dev, pinned, flags, 0};
  pthread_mutex_lock(&lock);
  a->id = ++next_id;
  a->next = allocs;
  allocs = a;
  pthread_mutex_unlock(&lock);
  return MH_SUCCESS;
}

/* Frees the allocation starting exactly at p, of the kind the call frees. */
static herr untrack(void *p, int pinned, const char *call) {
  if (!p)
    return MH_SUCCESS;
  pthread_mutex_lock(&lock);
  struct alloc **pp = &allocs;
  while (*pp && (*pp)->addr != (uintptr_t)p)
    pp = &(*pp)->next;
  struct alloc *a = *pp;
  if (!a || a->pinned != pinned) {
    pthread_mutex_unlock(&lock);
    return MH_INVALID_VALUE;
  }
  drain(a->dev);
  check_unused(a, call);
  *pp = a->next;
  pthread_mutex_unlock(&lock);
  munmap((void *)a->addr, a->mapped);
  if (!pinned)
    munmap(a->back, a->mapped);
  free(a);
  return MH_SUCCESS;
}

/* ---- devices ------------------------------------------------------------- */

API herr hipInit(unsigned flags) {
  return flags ? MH_INVALID_VALUE : MH_SUCCESS;
}

API herr hipRuntimeGetVersion(int *v) {
  if (!v)
    return MH_INVALID_VALUE;
  /* HIP_VERSION: major * 10000000 + minor * 100000 + patch. */
  *v = MOCK_ROCM >= 6 ? 60241134 : 50731921;
  return MH_SUCCESS;
}

API herr hipGetDeviceCount(int *n) {
  if (!n)
    return MH_INVALID_VALUE;
  *n = N_DEV;
  return MH_SUCCESS;
}

API herr hipGetDevice(int *d) {
  if (!d)
    return MH_INVALID_VALUE;
  *d = current_dev;
  return MH_SUCCESS;
}

API herr hipSetDevice(int d) {
  if (d < 0 || d >= N_DEV)
    return MH_INVALID_DEVICE;
  current_dev = d;
  return MH_SUCCESS;
}

API herr hipDeviceGet(int *d, int ordinal) {
  if (!d)
    return MH_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= N_DEV)
    return MH_INVALID_DEVICE;
  *d = ordinal;
  return MH_SUCCESS;
}

API herr hipDeviceGetName(char *name, int len, int d) {
  if (!name || len <= 0)
    return MH_INVALID_VALUE;
  if (d < 0 || d >= N_DEV)
    return MH_INVALID_DEVICE;
  snprintf(name, (size_t)len, "Mock AMD GPU %d (hipObject test stand-in)", d);
  return MH_SUCCESS;
}

API herr hipDeviceGetPCIBusId(char *b, int len, int d) {
  if (d < 0 || d >= N_DEV)
    return MH_INVALID_DEVICE;
  if (!b || len <= 0)
    return MH_INVALID_VALUE;
  /* HIP prints lower case; a 13-byte buffer is the least it accepts. */
  snprintf(b, (size_t)len, "%04x:%02x:%02x.%01x", 0, 0xc1 + d, 0, 0);
  return len <= 12 ? MH_INVALID_VALUE : MH_SUCCESS;
}

/* ---- memory -------------------------------------------------------------- */

static size_t rounded(size_t n) {
  return (n + page - 1) / page * page;
}

API herr hipMalloc(void **ptr, size_t n) {
  if (!ptr)
    return MH_INVALID_VALUE;
  *ptr = NULL;
  if (!n)
    return MH_SUCCESS; /* HIP: NULL for 0 bytes */
  size_t m = rounded(n);
  void *dev = mmap(NULL, m, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  void *back =
      mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  herr r = dev == MAP_FAILED || back == MAP_FAILED ? MH_OUT_OF_MEMORY : 0;
  if (!r) {
    memset(back, POISON, n);
    r = track((uintptr_t)dev, n, m, back, 0, 0);
  }
  if (r) {
    if (dev != MAP_FAILED)
      munmap(dev, m);
    if (back != MAP_FAILED)
      munmap(back, m);
    return r;
  }
  *ptr = dev;
  return MH_SUCCESS;
}

API herr hipFree(void *p) {
  return untrack(p, 0, "hipFree");
}

API herr hipHostMalloc(void **ptr, size_t n, unsigned flags) {
  const unsigned known = MH_HOST_PORTABLE | MH_HOST_MAPPED |
                         MH_HOST_WRITE_COMBINED | MH_HOST_NUMA_USER |
                         MH_HOST_COHERENT | MH_HOST_NON_COHERENT;
  const unsigned both = MH_HOST_COHERENT | MH_HOST_NON_COHERENT;
  if (!ptr)
    return MH_INVALID_VALUE;
  *ptr = NULL;
  if ((flags & ~known) || (flags & both) == both)
    return MH_INVALID_VALUE;
  if (!n)
    return MH_SUCCESS;
  size_t m = rounded(n);
  void *p =
      mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return MH_OUT_OF_MEMORY;
  memset(p, POISON, n);
  herr r = track((uintptr_t)p, n, m, p, 1, flags);
  if (r) {
    munmap(p, m);
    return r;
  }
  *ptr = p;
  return MH_SUCCESS;
}

API herr hipHostFree(void *p) {
  return untrack(p, 1, "hipHostFree");
}

API herr hipPointerGetAttributes(struct mh_pointer_attr *at, const void *p) {
  if (!at || !p)
    return MH_INVALID_VALUE;
  int fits;
  pthread_mutex_lock(&lock);
  struct alloc *a = holding((uintptr_t)p, 0, &fits);
  memset(at, 0, sizeof *at);
  if (a) {
    int dev = is_device(a);
    if (MOCK_ROCM >= 6)
      at->type = dev ? MH6_TYPE_DEVICE : MH6_TYPE_HOST;
    else
      at->type = dev ? MH5_TYPE_DEVICE : MH5_TYPE_HOST;
    at->device = a->dev;
    at->devicePointer = (void *)p;
    at->hostPointer = dev ? NULL : (void *)p;
    at->allocationFlags = a->flags;
  } else {
    at->device = MH_INVALID_DEVICE_ID;
  }
  pthread_mutex_unlock(&lock);
  /* ROCm 6 answers "unregistered" for memory it does not know; ROCm 5
   * fails. */
  return a || MOCK_ROCM >= 6 ? MH_SUCCESS : MH_INVALID_VALUE;
}

API herr hipPointerGetAttribute(void *data, int attr, void *p) {
  if (!data || !p)
    return MH_INVALID_VALUE;
  int fits;
  pthread_mutex_lock(&lock);
  struct alloc *a = holding((uintptr_t)p, 0, &fits);
  uint32_t id = a ? a->id : 0;
  int dev = a ? a->dev : -2, device_mem = is_device(a);
  pthread_mutex_unlock(&lock);
  /* Each attribute is written with HIP's width for it. */
  switch (attr) {
  case MH_ATTR_BUFFER_ID:
    memcpy(data, &id, sizeof id);
    break;
  case MH_ATTR_DEVICE_ORDINAL:
    memcpy(data, &dev, sizeof dev);
    break;
  case MH_ATTR_MEMORY_TYPE: {
    uint32_t t = !a ? 0
                 : MOCK_ROCM < 6
                     ? (device_mem ? MH5_TYPE_DEVICE : MH5_TYPE_HOST)
                 : device_mem ? MH6_TYPE_DEVICE
                              : MH6_TYPE_HOST;
    memcpy(data, &t, sizeof t);
    break;
  }
  case MH_ATTR_IS_MANAGED:
    *(unsigned char *)data = 0; /* a C++ bool */
    break;
  default:
    return MH_NOT_SUPPORTED; /* not emulated */
  }
  return a ? MH_SUCCESS : MH_INVALID_VALUE;
}

API herr hipMemGetAddressRange(void **base, size_t *size, void *p) {
  if (!base || !size)
    return MH_INVALID_VALUE;
  int fits;
  pthread_mutex_lock(&lock);
  struct alloc *a = holding((uintptr_t)p, 0, &fits);
  if (a) {
    *base = (void *)a->addr;
    *size = a->n;
  }
  pthread_mutex_unlock(&lock);
  return a ? MH_SUCCESS : MH_NOT_FOUND;
}

#if MOCK_ROCM >= 6
/* The range must be whole pages of one device allocation (allocations are
 * page-granular underneath); the fd is a memfd named like a dma-buf, of the
 * range's size, that does not share the device's bytes. */
API herr hipMemGetHandleForAddressRange(void *handle, void *p, size_t n,
                                        unsigned type,
                                        unsigned long long flags) {
  if (!handle || type != MH_RANGE_HANDLE_DMABUF_FD ||
      (flags & ~MH_RANGE_FLAG_DMABUF_PCIE))
    return MH_INVALID_VALUE;
  uintptr_t u = (uintptr_t)p;
  int fits;
  pthread_mutex_lock(&lock);
  struct alloc *a = holding(u, 0, &fits);
  int ok = is_device(a) && n && u % page == 0 && n % page == 0 &&
           n <= a->addr + a->mapped - u;
  pthread_mutex_unlock(&lock);
  if (!ok)
    return MH_INVALID_VALUE;
  int fd = memfd_create("mock-hip-dmabuf", MFD_CLOEXEC);
  if (fd < 0)
    return MH_OUT_OF_MEMORY;
  if (ftruncate(fd, (off_t)n) != 0) {
    close(fd);
    return MH_OUT_OF_MEMORY;
  }
  *(int *)handle = fd;
  return MH_SUCCESS;
}
#endif

/* hipMemcpy: synchronous, on the null stream, which waits for the blocking
 * streams of the current device (not for hipStreamNonBlocking ones). */
API herr hipMemcpy(void *dst, const void *src, size_t n, int kind) {
  if (!n)
    return MH_SUCCESS;
  if (!dst || !src)
    return MH_INVALID_VALUE;
  if (kind < MH_COPY_H2H || kind > MH_COPY_DEFAULT)
    return MH_INVALID_MEMCPY_DIRECTION;
  int dfit, sfit;
  pthread_mutex_lock(&lock);
  struct alloc *d = holding((uintptr_t)dst, n, &dfit);
  struct alloc *s = holding((uintptr_t)src, n, &sfit);
  herr r = dfit && sfit ? MH_SUCCESS : MH_INVALID_VALUE;
  /* HIP infers the direction from the pointers; a stated kind must agree
   * with them. */
  int want_d = kind == MH_COPY_H2D || kind == MH_COPY_D2D;
  int want_s = kind == MH_COPY_D2H || kind == MH_COPY_D2D;
  if (kind != MH_COPY_DEFAULT &&
      (want_d != is_device(d) || want_s != is_device(s)))
    r = MH_INVALID_VALUE;
  for (;;) {
    int busy = 0;
    for (struct stream *st = streams; st; st = st->next)
      busy |= st->dev == current_dev && !(st->flags & MH_STREAM_NON_BLOCKING) &&
              stream_busy(st);
    if (!busy || r)
      break;
    pthread_cond_wait(&progress, &lock);
  }
  char *to = bytes_of(d, (uintptr_t)dst);
  const char *from = bytes_of(s, (uintptr_t)src);
  pthread_mutex_unlock(&lock);
  if (!r)
    memmove(to, from, n);
  return r;
}

/* ---- streams and events -------------------------------------------------- */

static void pause_a_little(void) {
  struct timespec ts = {0, (long)delay_us * 1000};
  while (delay_us && nanosleep(&ts, &ts) != 0)
    ;
}

static void *worker(void *arg) {
  struct stream *s = arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (!s->head && !s->closing)
      pthread_cond_wait(&s->work, &lock);
    struct op *o = s->head;
    if (!o)
      break;
    pthread_mutex_unlock(&lock);
    if (o->type == OP_COPY) {
      pause_a_little();
      if (!o->fail)
        memcpy(o->dst, o->src, o->n);
    }
    pthread_mutex_lock(&lock);
    /* Dequeued only now: a queued or running copy counts as using its
     * memory. */
    s->head = o->next;
    if (!s->head)
      s->tail = NULL;
    if (o->type == OP_COPY && o->fail)
      s->error = MH_ILLEGAL_ADDRESS;
    if (o->type == OP_MARK) {
      struct event *e = o->ev;
      if (o->rec > e->completed) {
        e->completed = o->rec;
        e->status = s->error;
      }
      if (--e->inflight == 0 && e->destroyed)
        free(e);
    }
    free(o);
    pthread_cond_broadcast(&progress);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

/* A live stream of this runtime (lock held); HIP's answer otherwise. */
static herr stream_check(const void *h, struct stream **out) {
  *out = NULL;
  if (!h || h == MH_STREAM_LEGACY || h == MH_STREAM_PER_THREAD)
    return MH_INVALID_HANDLE; /* the null streams are not emulated */
  for (struct stream *s = streams; s; s = s->next)
    if (s == h && !s->closing) {
      *out = s;
      return MH_SUCCESS;
    }
  return MH_CONTEXT_IS_DESTROYED;
}

static struct event *event_find(const void *h) {
  for (struct event *e = events; e; e = e->next)
    if (e == h)
      return e;
  return NULL;
}

static void enqueue(struct stream *s, struct op *o) {
  if (s->tail)
    s->tail->next = o;
  else
    s->head = o;
  s->tail = o;
  pthread_cond_signal(&s->work);
}

API herr hipStreamCreateWithFlags(struct stream **out, unsigned flags) {
  if (!out || (flags & ~MH_STREAM_NON_BLOCKING))
    return MH_INVALID_VALUE;
  struct stream *s = calloc(1, sizeof *s);
  if (!s)
    return MH_OUT_OF_MEMORY;
  s->dev = current_dev;
  s->flags = flags;
  pthread_cond_init(&s->work, NULL);
  if (pthread_create(&s->thread, NULL, worker, s) != 0) {
    pthread_cond_destroy(&s->work);
    free(s);
    return MH_OUT_OF_MEMORY;
  }
  pthread_mutex_lock(&lock);
  s->next = streams;
  streams = s;
  pthread_mutex_unlock(&lock);
  *out = s;
  return MH_SUCCESS;
}

/* HIP lets the stream's queued work finish first. */
API herr hipStreamDestroy(struct stream *h) {
  struct stream *s;
  pthread_mutex_lock(&lock);
  herr r = stream_check(h, &s);
  if (r) {
    pthread_mutex_unlock(&lock);
    return r;
  }
  s->closing = 1;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&lock);
  pthread_join(s->thread, NULL);
  pthread_mutex_lock(&lock);
  struct stream **pp = &streams;
  while (*pp != s)
    pp = &(*pp)->next;
  *pp = s->next;
  pthread_mutex_unlock(&lock);
  pthread_cond_destroy(&s->work);
  free(s);
  return MH_SUCCESS;
}

/* The two queued copies. dev_side is the device pointer, host_side the
 * host one; h2d says which is the destination. */
static herr async_copy(void *dev_side, const void *host_side, size_t n,
                       struct stream *h, int h2d) {
  struct stream *s;
  pthread_mutex_lock(&lock);
  herr r = stream_check(h, &s);
  int dfit, hfit;
  struct alloc *d = holding((uintptr_t)dev_side, n, &dfit);
  struct alloc *hm = holding((uintptr_t)host_side, n, &hfit);
  if (!r && n && (!dev_side || !host_side))
    r = MH_INVALID_VALUE;
  /* Device side: device memory of the stream's device, the whole range;
   * host side: not device memory, and pinned where the test wants it. */
  if (!r && n &&
      (!is_device(d) || d->dev != s->dev || !dfit || is_device(hm) || !hfit ||
       (require_pinned && !hm)))
    r = MH_INVALID_VALUE;
  struct op *o = NULL;
  if (!r && n && !(o = calloc(1, sizeof *o)))
    r = MH_OUT_OF_MEMORY;
  if (o) {
    char *dev_bytes = bytes_of(d, (uintptr_t)dev_side);
    o->type = OP_COPY;
    o->dst = h2d ? dev_bytes : (char *)(uintptr_t)host_side;
    o->src = h2d ? (const char *)host_side : dev_bytes;
    o->n = n;
    o->lo[0] = (uintptr_t)dev_side;
    o->hi[0] = o->lo[0] + n;
    o->lo[1] = (uintptr_t)host_side;
    o->hi[1] = o->lo[1] + n;
    o->fail = ++async_copies == fail_copy;
    enqueue(s, o);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

API herr hipMemcpyHtoDAsync(void *dst, void *src, size_t n, struct stream *s) {
  return async_copy(dst, src, n, s, 1);
}

API herr hipMemcpyDtoHAsync(void *dst, void *src, size_t n, struct stream *s) {
  return async_copy(src, dst, n, s, 0);
}

API herr hipEventCreateWithFlags(struct event **out, unsigned flags) {
  const unsigned release = MH_EVENT_RELEASE_TO_DEVICE |
                           MH_EVENT_RELEASE_TO_SYSTEM |
                           MH_EVENT_DISABLE_SYSTEM_FENCE;
  const unsigned known = MH_EVENT_BLOCKING_SYNC | MH_EVENT_DISABLE_TIMING |
                         MH_EVENT_INTERPROCESS | release;
  unsigned r = flags & release;
  if (!out || (flags & ~known) || (r & (r - 1)) ||
      ((flags & MH_EVENT_INTERPROCESS) && !(flags & MH_EVENT_DISABLE_TIMING)))
    return MH_INVALID_VALUE;
  struct event *e = calloc(1, sizeof *e);
  if (!e)
    return MH_OUT_OF_MEMORY;
  e->dev = current_dev;
  pthread_mutex_lock(&lock);
  e->next = events;
  events = e;
  pthread_mutex_unlock(&lock);
  *out = e;
  return MH_SUCCESS;
}

API herr hipEventDestroy(struct event *h) {
  if (!h)
    return MH_INVALID_HANDLE;
  pthread_mutex_lock(&lock);
  struct event **pp = &events;
  while (*pp && *pp != h)
    pp = &(*pp)->next;
  struct event *e = *pp;
  if (e) {
    *pp = e->next;
    if (e->inflight)
      e->destroyed = 1; /* the worker frees it */
    else
      free(e);
  }
  pthread_mutex_unlock(&lock);
  return e ? MH_SUCCESS : MH_CONTEXT_IS_DESTROYED;
}

API herr hipEventRecord(struct event *h, struct stream *sh) {
  struct stream *s;
  pthread_mutex_lock(&lock);
  struct event *e = h ? event_find(h) : NULL;
  herr r = e ? stream_check(sh, &s) : MH_INVALID_HANDLE;
  if (!r && e->dev != s->dev)
    r = MH_INVALID_HANDLE; /* HIP: event and stream of different devices */
  struct op *o = NULL;
  if (!r && !(o = calloc(1, sizeof *o)))
    r = MH_OUT_OF_MEMORY;
  if (o) {
    o->type = OP_MARK;
    o->ev = e;
    o->rec = ++e->records;
    e->inflight++;
    enqueue(s, o);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

API herr hipEventSynchronize(struct event *h) {
  pthread_mutex_lock(&lock);
  struct event *e = h ? event_find(h) : NULL;
  while (e && e->completed < e->records)
    pthread_cond_wait(&progress, &lock);
  herr r = e ? e->status : MH_INVALID_HANDLE;
  pthread_mutex_unlock(&lock);
  return r;
}

API herr hipEventQuery(struct event *h) {
  pthread_mutex_lock(&lock);
  struct event *e = h ? event_find(h) : NULL;
  herr r = !e                          ? MH_INVALID_HANDLE
           : e->completed < e->records ? MH_NOT_READY
                                       : e->status;
  pthread_mutex_unlock(&lock);
  return r;
}

/* ---- errors -------------------------------------------------------------- */

static const struct {
  herr code;
  const char *name, *text;
} errors[] = {
    {MH_SUCCESS, "hipSuccess", "no error"},
    {MH_INVALID_VALUE, "hipErrorInvalidValue", "invalid argument"},
    {MH_OUT_OF_MEMORY, "hipErrorOutOfMemory", "out of memory"},
    {MH_NOT_INITIALIZED, "hipErrorNotInitialized", "initialization error"},
    {MH_INVALID_MEMCPY_DIRECTION, "hipErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {MH_NO_DEVICE, "hipErrorNoDevice", "no ROCm-capable device is detected"},
    {MH_INVALID_DEVICE, "hipErrorInvalidDevice", "invalid device ordinal"},
    {MH_INVALID_HANDLE, "hipErrorInvalidHandle", "invalid resource handle"},
    {MH_NOT_FOUND, "hipErrorNotFound", "named symbol not found"},
    {MH_NOT_READY, "hipErrorNotReady", "device not ready"},
    {MH_ILLEGAL_ADDRESS, "hipErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {MH_CONTEXT_IS_DESTROYED, "hipErrorContextIsDestroyed",
     "context is destroyed"},
    {MH_NOT_SUPPORTED, "hipErrorNotSupported", "operation not supported"},
};

API const char *hipGetErrorName(herr e) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == e)
      return errors[i].name;
  return "hipErrorUnknown";
}

API const char *hipGetErrorString(herr e) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == e)
      return errors[i].text;
  return "unknown error";
}
