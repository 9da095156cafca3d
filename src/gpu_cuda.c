/* gpu_cuda.c - the CUDA memory platform over the driver API, loaded with
 * dlopen("libcuda.so.1") on first use: the build needs no CUDA toolkit, and a
 * machine without the driver only loses CUDA memory. The few types, constants
 * and prototypes used are declared here (values from the CUDA driver API,
 * stable across releases). Each call runs in the device's primary context
 * (cuDevicePrimaryCtxRetain, the context the CUDA runtime uses too); the
 * calling thread's current context is restored afterwards. */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/strutil.h"
#include "gpu.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NOT_READY = 600,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
  CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  CU_MEMORYTYPE_DEVICE = 2,
  CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1,
  CU_MEMHOSTALLOC_PORTABLE = 1,
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DISABLE_TIMING = 2,
};

#define MAX_DEVICES 64

/* The driver entry points; the versioned names (_v2) are the ones cuda.h
 * maps the plain names to. */
static struct {
  void *lib;
  char lib_name[32];
  int driver_version;
  int n_devices;
  char bus_id[MAX_DEVICES][HGPU_BUSID];
  pthread_mutex_t ctx_lock;
  CUcontext ctx[MAX_DEVICES]; /* retained primary contexts */
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetPCIBusId)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuPointerGetAttributes)(unsigned, int *, void **, CUdeviceptr);
  CUresult (*cuMemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
  CUresult (*cuMemGetHandleForAddressRange)(void *, CUdeviceptr, size_t, int,
                                            unsigned long long);
  CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
  CUresult (*cuMemFreeHost)(void *);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpy)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventQuery)(CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuGetErrorName)(CUresult, const char **);
} cu = {.ctx_lock = PTHREAD_MUTEX_INITIALIZER};

static const char *cuda_error_string(int code) {
  const char *s = NULL;
  if (!cu.cuGetErrorString || cu.cuGetErrorString(code, &s) != CUDA_SUCCESS ||
      !s)
    return "unknown CUDA error";
  return s;
}

static int fail(char why[HGPU_WHY], const char *call, CUresult r) {
  const char *name = NULL;
  if (!cu.cuGetErrorName || cu.cuGetErrorName(r, &name) != CUDA_SUCCESS)
    name = NULL;
  hgpu_why(why, "%s: %s (%d): %s", call, name ? name : "CUDA error", r,
           cuda_error_string(r));
  return -1;
}

static CUdeviceptr dptr(const void *p) {
  return (CUdeviceptr)(uintptr_t)p;
}

/* ---- contexts ------------------------------------------------------------ */

static int primary_ctx(int dev, CUcontext *out, char why[HGPU_WHY]) {
  if (dev < 0 || dev >= cu.n_devices) {
    hgpu_why(why, "CUDA device %d does not exist (%d devices)", dev,
             cu.n_devices);
    return -1;
  }
  pthread_mutex_lock(&cu.ctx_lock);
  int rc = 0;
  if (!cu.ctx[dev]) {
    CUdevice d;
    CUresult r = cu.cuDeviceGet(&d, dev);
    if (r == CUDA_SUCCESS)
      r = cu.cuDevicePrimaryCtxRetain(&cu.ctx[dev], d);
    if (r != CUDA_SUCCESS) {
      cu.ctx[dev] = NULL;
      rc = fail(why, "cuDevicePrimaryCtxRetain", r);
    }
  }
  *out = cu.ctx[dev];
  pthread_mutex_unlock(&cu.ctx_lock);
  return rc;
}

struct ctx_save {
  CUcontext prev;
  int switched;
};

/* Makes dev's primary context current; ctx_leave() restores the caller's. */
static int ctx_enter(int dev, struct ctx_save *s, char why[HGPU_WHY]) {
  CUcontext want;
  s->switched = 0;
  if (primary_ctx(dev, &want, why) != 0)
    return -1;
  s->prev = NULL;
  cu.cuCtxGetCurrent(&s->prev);
  if (s->prev == want)
    return 0;
  CUresult r = cu.cuCtxSetCurrent(want);
  if (r != CUDA_SUCCESS)
    return fail(why, "cuCtxSetCurrent", r);
  s->switched = 1;
  return 0;
}

static void ctx_leave(struct ctx_save *s) {
  if (s->switched)
    cu.cuCtxSetCurrent(s->prev);
}

/* Runs `call` (a CUresult expression) in dev's context; returns 0 or -1 with
 * why naming `name`. */
#define IN_CTX(dev, why, name, call)                                           \
  do {                                                                         \
    struct ctx_save s_;                                                        \
    if (ctx_enter((dev), &s_, (why)) != 0)                                     \
      return -1;                                                               \
    CUresult r_ = (call);                                                      \
    ctx_leave(&s_);                                                            \
    return r_ == CUDA_SUCCESS ? 0 : fail((why), (name), r_);                   \
  } while (0)

/* ---- init ---------------------------------------------------------------- */

static int load_symbols(char why[HGPU_WHY]) {
  static const struct {
    const char *sym;
    size_t offset;
    int optional;
  } table[] = {
#define SYM(field, name, opt) {name, offsetof(__typeof__(cu), field), opt}
      SYM(cuInit, "cuInit", 0),
      SYM(cuDriverGetVersion, "cuDriverGetVersion", 0),
      SYM(cuDeviceGet, "cuDeviceGet", 0),
      SYM(cuDeviceGetCount, "cuDeviceGetCount", 0),
      SYM(cuDeviceGetName, "cuDeviceGetName", 0),
      SYM(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", 0),
      SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute", 0),
      SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 0),
      SYM(cuCtxGetCurrent, "cuCtxGetCurrent", 0),
      SYM(cuCtxSetCurrent, "cuCtxSetCurrent", 0),
      SYM(cuPointerGetAttributes, "cuPointerGetAttributes", 0),
      SYM(cuMemGetAddressRange, "cuMemGetAddressRange_v2", 0),
      SYM(cuMemGetHandleForAddressRange, "cuMemGetHandleForAddressRange", 1),
      SYM(cuMemHostAlloc, "cuMemHostAlloc", 0),
      SYM(cuMemFreeHost, "cuMemFreeHost", 0),
      SYM(cuMemAlloc, "cuMemAlloc_v2", 0),
      SYM(cuMemFree, "cuMemFree_v2", 0),
      SYM(cuMemcpy, "cuMemcpy", 0),
      SYM(cuStreamCreate, "cuStreamCreate", 0),
      SYM(cuStreamDestroy, "cuStreamDestroy_v2", 0),
      SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", 0),
      SYM(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", 0),
      SYM(cuEventCreate, "cuEventCreate", 0),
      SYM(cuEventDestroy, "cuEventDestroy_v2", 0),
      SYM(cuEventRecord, "cuEventRecord", 0),
      SYM(cuEventSynchronize, "cuEventSynchronize", 0),
      SYM(cuEventQuery, "cuEventQuery", 0),
      SYM(cuGetErrorString, "cuGetErrorString", 0),
      SYM(cuGetErrorName, "cuGetErrorName", 0),
#undef SYM
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    void *s = dlsym(cu.lib, table[i].sym);
    if (!s && !table[i].optional) {
      hgpu_why(why, "%s has no %s (driver too old?)", cu.lib_name,
               table[i].sym);
      return -1;
    }
    /* POSIX guarantees object and function pointers convert. */
    memcpy((char *)&cu + table[i].offset, &s, sizeof s);
  }
  return 0;
}

static int cuda_init(char why[HGPU_WHY]) {
  static const char *const names[] = {"libcuda.so.1", "libcuda.so"};
  char first[HGPU_WHY] = "";
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !cu.lib; i++) {
    cu.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (cu.lib) {
      hstrlcpy(cu.lib_name, names[i], sizeof cu.lib_name);
    } else if (!first[0]) {
      const char *e = dlerror();
      hstrlcpy(first, e ? e : "not found", sizeof first);
    }
  }
  if (!cu.lib) {
    hgpu_why(why,
             "cannot load the CUDA driver library libcuda.so.1: %s "
             "(is the NVIDIA driver installed?)",
             first);
    return -1;
  }
  if (load_symbols(why) != 0)
    goto fail;
  CUresult r = cu.cuInit(0);
  if (r != CUDA_SUCCESS) {
    char call[64];
    snprintf(call, sizeof call, "%s loaded, but cuInit", cu.lib_name);
    fail(why, call, r);
    goto fail;
  }
  cu.cuDriverGetVersion(&cu.driver_version);
  r = cu.cuDeviceGetCount(&cu.n_devices);
  if (r != CUDA_SUCCESS) {
    fail(why, "cuDeviceGetCount", r);
    goto fail;
  }
  if (cu.n_devices <= 0) {
    hgpu_why(why, "%s loaded but it sees no CUDA device", cu.lib_name);
    goto fail;
  }
  if (cu.n_devices > MAX_DEVICES)
    cu.n_devices = MAX_DEVICES;
  for (int i = 0; i < cu.n_devices; i++) {
    CUdevice d;
    char *b = cu.bus_id[i];
    if (cu.cuDeviceGet(&d, i) != CUDA_SUCCESS ||
        cu.cuDeviceGetPCIBusId(b, HGPU_BUSID, d) != CUDA_SUCCESS)
      b[0] = '\0';
    for (; *b; b++) /* sysfs spells PCI addresses in lower case */
      *b = (char)tolower((unsigned char)*b);
  }
  return 0;
fail:
  dlclose(cu.lib);
  cu.lib = NULL;
  return -1;
}

static void cuda_version(char *buf, size_t len) {
  snprintf(buf, len, "%s, CUDA driver API %d.%d", cu.lib_name,
           cu.driver_version / 1000, cu.driver_version % 1000 / 10);
}

/* ---- devices and pointers ------------------------------------------------ */

static int cuda_device_count(int *n, char why[HGPU_WHY]) {
  (void)why;
  *n = cu.n_devices;
  return 0;
}

static int cuda_device_info(int dev, char bus_id[HGPU_BUSID], char *name,
                            size_t name_len, char why[HGPU_WHY]) {
  CUdevice d;
  if (dev < 0 || dev >= cu.n_devices) {
    hgpu_why(why, "CUDA device %d does not exist", dev);
    return -1;
  }
  hstrlcpy(bus_id, cu.bus_id[dev], HGPU_BUSID);
  CUresult r = cu.cuDeviceGet(&d, dev);
  if (r == CUDA_SUCCESS && name_len)
    r = cu.cuDeviceGetName(name, (int)name_len, d);
  return r == CUDA_SUCCESS ? 0 : fail(why, "cuDeviceGetName", r);
}

static int cuda_classify(const void *ptr, struct hgpu_mem_info *info,
                         char why[HGPU_WHY]) {
  int attrs[4] = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_BUFFER_ID};
  /* Zeroed 8-byte slots whatever width each attribute writes. */
  unsigned long long v[4] = {0, 0, 0, 0};
  void *data[4] = {&v[0], &v[1], &v[2], &v[3]};
  CUresult r = cu.cuPointerGetAttributes(4, attrs, data, dptr(ptr));
  if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_CONTEXT)
    return 0; /* not an address CUDA knows */
  if (r != CUDA_SUCCESS)
    return fail(why, "cuPointerGetAttributes", r);
  unsigned type = (unsigned)v[0];
  int managed = v[1] != 0;
  int ord = (int)(unsigned)v[2];
  /* Pinned host memory (cuMemHostAlloc) is host memory: plain memcpy. */
  if (type != CU_MEMORYTYPE_DEVICE && !managed)
    return 0;
  memset(info, 0, sizeof *info);
  info->kind = HIPOBJ_MEM_CUDA;
  info->device = -1;
  info->buffer_id = v[3];
  if (ord < 0 || ord >= cu.n_devices)
    return 1; /* managed memory need not belong to one device */
  info->device = ord;
  hstrlcpy(info->pci_bus_id, cu.bus_id[ord], sizeof info->pci_bus_id);
  struct ctx_save s;
  if (ctx_enter(ord, &s, why) != 0)
    return -1;
  CUdeviceptr base = 0;
  size_t size = 0;
  r = cu.cuMemGetAddressRange(&base, &size, dptr(ptr));
  ctx_leave(&s);
  if (r == CUDA_SUCCESS) {
    info->base = (void *)(uintptr_t)base;
    info->size = size;
  }
  return 1;
}

/* ---- dma-buf ------------------------------------------------------------- */

static int cuda_dmabuf_supported(int dev, char why[HGPU_WHY]) {
  if (!cu.cuMemGetHandleForAddressRange) {
    hgpu_why(why,
             "%s has no cuMemGetHandleForAddressRange (needs a CUDA 11.7 "
             "or newer driver)",
             cu.lib_name);
    return 0;
  }
  CUdevice d;
  int v = 0;
  CUresult r = cu.cuDeviceGet(&d, dev);
  if (r == CUDA_SUCCESS)
    r = cu.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, d);
  if (r != CUDA_SUCCESS) {
    fail(why, "cuDeviceGetAttribute(DMA_BUF_SUPPORTED)", r);
    return 0;
  }
  if (!v) {
    hgpu_why(why,
             "CUDA device %d reports no dma-buf support "
             "(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0: it needs the "
             "open kernel module and Linux 5.12 or newer)",
             dev);
    return 0;
  }
  return 1;
}

static int cuda_dmabuf_export(int dev, const void *ptr, size_t len, int *fd,
                              uint64_t *offset, char why[HGPU_WHY]) {
  *fd = -1;
  if (!cu.cuMemGetHandleForAddressRange) {
    cuda_dmabuf_supported(dev, why);
    return -1;
  }
  uintptr_t page = hgpu_page_size();
  uintptr_t p = (uintptr_t)ptr;
  uintptr_t start = p & ~(page - 1);
  uintptr_t end = (p + len + page - 1) & ~(page - 1);
  int out = -1;
  struct ctx_save s;
  if (ctx_enter(dev, &s, why) != 0)
    return -1;
  CUresult r =
      cu.cuMemGetHandleForAddressRange(&out, (CUdeviceptr)start, end - start,
                                       CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  ctx_leave(&s);
  if (r != CUDA_SUCCESS)
    return fail(why, "cuMemGetHandleForAddressRange", r);
  *fd = out;
  *offset = p - start;
  return 0;
}

/* ---- memory and copies --------------------------------------------------- */

static int cuda_host_alloc(int dev, size_t len, void **out,
                           char why[HGPU_WHY]) {
  IN_CTX(dev, why, "cuMemHostAlloc",
         cu.cuMemHostAlloc(out, len, CU_MEMHOSTALLOC_PORTABLE));
}

static void cuda_host_free(int dev, void *p) {
  char why[HGPU_WHY];
  struct ctx_save s;
  if (ctx_enter(dev, &s, why) != 0)
    return;
  cu.cuMemFreeHost(p);
  ctx_leave(&s);
}

static int cuda_dev_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  CUdeviceptr p = 0;
  struct ctx_save s;
  if (ctx_enter(dev, &s, why) != 0)
    return -1;
  CUresult r = cu.cuMemAlloc(&p, len);
  ctx_leave(&s);
  if (r != CUDA_SUCCESS)
    return fail(why, "cuMemAlloc", r);
  *out = (void *)(uintptr_t)p;
  return 0;
}

static void cuda_dev_free(int dev, void *p) {
  char why[HGPU_WHY];
  struct ctx_save s;
  if (ctx_enter(dev, &s, why) != 0)
    return;
  cu.cuMemFree(dptr(p));
  ctx_leave(&s);
}

static int cuda_copy(int dev, void *dst, const void *src, size_t n,
                     char why[HGPU_WHY]) {
  /* Unified addressing: the driver infers the direction. */
  IN_CTX(dev, why, "cuMemcpy", cu.cuMemcpy(dptr(dst), dptr(src), n));
}

static int cuda_stream_create(int dev, void **out, char why[HGPU_WHY]) {
  IN_CTX(dev, why, "cuStreamCreate",
         cu.cuStreamCreate((CUstream *)out, CU_STREAM_NON_BLOCKING));
}

static void cuda_stream_destroy(int dev, void *stream) {
  char why[HGPU_WHY];
  struct ctx_save s;
  if (ctx_enter(dev, &s, why) != 0)
    return;
  cu.cuStreamDestroy(stream);
  ctx_leave(&s);
}

static int cuda_event_create(int dev, void **out, char why[HGPU_WHY]) {
  IN_CTX(dev, why, "cuEventCreate",
         cu.cuEventCreate((CUevent *)out, CU_EVENT_DISABLE_TIMING));
}

static void cuda_event_destroy(int dev, void *event) {
  char why[HGPU_WHY];
  struct ctx_save s;
  if (ctx_enter(dev, &s, why) != 0)
    return;
  cu.cuEventDestroy(event);
  ctx_leave(&s);
}

static int cuda_h2d_async(int dev, void *dst, const void *src, size_t n,
                          void *stream, char why[HGPU_WHY]) {
  IN_CTX(dev, why, "cuMemcpyHtoDAsync",
         cu.cuMemcpyHtoDAsync(dptr(dst), src, n, stream));
}

static int cuda_d2h_async(int dev, void *dst, const void *src, size_t n,
                          void *stream, char why[HGPU_WHY]) {
  IN_CTX(dev, why, "cuMemcpyDtoHAsync",
         cu.cuMemcpyDtoHAsync(dst, dptr(src), n, stream));
}

static int cuda_event_record(int dev, void *event, void *stream,
                             char why[HGPU_WHY]) {
  IN_CTX(dev, why, "cuEventRecord", cu.cuEventRecord(event, stream));
}

static int cuda_event_sync(int dev, void *event, char why[HGPU_WHY]) {
  IN_CTX(dev, why, "cuEventSynchronize", cu.cuEventSynchronize(event));
}

static int cuda_event_query(int dev, void *event, char why[HGPU_WHY]) {
  struct ctx_save s;
  if (ctx_enter(dev, &s, why) != 0)
    return -1;
  CUresult r = cu.cuEventQuery(event);
  ctx_leave(&s);
  if (r == CUDA_ERROR_NOT_READY)
    return 0;
  return r == CUDA_SUCCESS ? 1 : fail(why, "cuEventQuery", r);
}

const struct hgpu_ops hgpu_cuda_ops = {
    .name = "cuda",
    .library = "libcuda.so.1",
    .init = cuda_init,
    .version = cuda_version,
    .device_count = cuda_device_count,
    .device_info = cuda_device_info,
    .classify = cuda_classify,
    .dmabuf_supported = cuda_dmabuf_supported,
    .dmabuf_export = cuda_dmabuf_export,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .dev_alloc = cuda_dev_alloc,
    .dev_free = cuda_dev_free,
    .copy = cuda_copy,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .h2d_async = cuda_h2d_async,
    .d2h_async = cuda_d2h_async,
    .event_record = cuda_event_record,
    .event_sync = cuda_event_sync,
    .event_query = cuda_event_query,
    .error_string = cuda_error_string,
};
