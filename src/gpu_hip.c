/* gpu_hip.c - the HIP (AMD GPU) memory platform. Compiled against the HIP
 * headers when the build finds them (HIPOBJ_HAVE_HIP_HEADERS; Debian's
 * libamdhip64-dev), but never linked: the runtime is loaded with dlopen
 * (libamdhip64.so, .so.7, .so.6, .so.5) on first use and called through
 * pointers typed from the headers. dma-buf export:
 * hipMemGetHandleForAddressRange when the loaded runtime has it, whatever the
 * headers (Debian's ROCm 5.2 headers lack it, a newer runtime on the machine
 * has it), else HSA's hsa_amd_portable_export_dmabuf when the headers offer
 * that (HIPOBJ_HIP_DMABUF 2), else export is reported unsupported. Without the
 * headers every call reports "built without HIP headers". */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "base/strutil.h"
#include "gpu.h"

#ifndef HIPOBJ_HIP_DMABUF
#define HIPOBJ_HIP_DMABUF 0
#endif

#if HIPOBJ_HAVE_HIP_HEADERS

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <ctype.h>
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <pthread.h>
#include <stddef.h>
#if HIPOBJ_HIP_DMABUF == 2
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#endif

#define MAX_DEVICES 64
#define FN(name) __typeof__(name) *name

/* hipMemGetHandleForAddressRange: typed from the headers where they declare
 * it (HIPOBJ_HIP_DMABUF 1), else from ROCm's declaration, written here. */
#if HIPOBJ_HIP_DMABUF == 1
typedef __typeof__(hipMemGetHandleForAddressRange) range_handle_fn;
#define RANGE_HANDLE_DMABUF_FD hipMemRangeHandleTypeDmaBufFd
#else
typedef hipError_t range_handle_fn(void *handle, hipDeviceptr_t dptr,
                                   size_t size, unsigned handle_type,
                                   unsigned long long flags);
#define RANGE_HANDLE_DMABUF_FD 1u /* hipMemRangeHandleTypeDmaBufFd */
#endif

static struct {
  void *lib;
  void *hsa_lib;
  char lib_name[32];
  int runtime_version; /* major*10000000 + minor*100000 + patch */
  int n_devices;
  char bus_id[MAX_DEVICES][HGPU_BUSID];
  FN(hipInit);
  FN(hipRuntimeGetVersion);
  FN(hipGetDeviceCount);
  FN(hipGetDevice);
  FN(hipSetDevice);
  FN(hipDeviceGet);
  FN(hipDeviceGetName);
  FN(hipDeviceGetPCIBusId);
  FN(hipPointerGetAttributes);
  FN(hipMemGetAddressRange);
  FN(hipHostMalloc);
  FN(hipHostFree);
  FN(hipMalloc);
  FN(hipFree);
  FN(hipMemcpy);
  FN(hipStreamCreateWithFlags);
  FN(hipStreamDestroy);
  FN(hipMemcpyHtoDAsync);
  FN(hipMemcpyDtoHAsync);
  FN(hipEventCreateWithFlags);
  FN(hipEventDestroy);
  FN(hipEventRecord);
  FN(hipEventSynchronize);
  FN(hipEventQuery);
  FN(hipGetErrorName);
  FN(hipGetErrorString);
  /* Optional (ROCm 5.0+): the allocation's buffer id, for the RDMA
   * registration cache (NULL: registrations of HIP memory are not kept). */
  FN(hipPointerGetAttribute);
  /* Optional (newer ROCm): dma-buf export (NULL: see below). */
  range_handle_fn *hipMemGetHandleForAddressRange;
#if HIPOBJ_HIP_DMABUF == 2
  FN(hsa_amd_portable_export_dmabuf);
#endif
} hp;

static const char *hip_error_string(int code) {
  const char *s = hp.hipGetErrorString ? hp.hipGetErrorString(code) : NULL;
  return s ? s : "unknown HIP error";
}

static int fail(char why[HGPU_WHY], const char *call, hipError_t e) {
  const char *name = hp.hipGetErrorName ? hp.hipGetErrorName(e) : NULL;
  hgpu_why(why, "%s: %s (%d): %s", call, name ? name : "HIP error", (int)e,
           hip_error_string(e));
  return -1;
}

/* HIP keeps a current device per thread: switch to dev for one call and
 * give the caller's back afterwards. */
struct dev_save {
  int prev;
  int switched;
};

static int dev_enter(int dev, struct dev_save *s, char why[HGPU_WHY]) {
  s->switched = 0;
  if (dev < 0 || dev >= hp.n_devices) {
    hgpu_why(why, "HIP device %d does not exist (%d devices)", dev,
             hp.n_devices);
    return -1;
  }
  s->prev = -1;
  if (hp.hipGetDevice(&s->prev) == hipSuccess && s->prev == dev)
    return 0;
  hipError_t e = hp.hipSetDevice(dev);
  if (e != hipSuccess)
    return fail(why, "hipSetDevice", e);
  s->switched = s->prev >= 0;
  return 0;
}

static void dev_leave(struct dev_save *s) {
  if (s->switched)
    hp.hipSetDevice(s->prev);
}

#define ON_DEV(dev, why, name, call)                                           \
  do {                                                                         \
    struct dev_save s_;                                                        \
    if (dev_enter((dev), &s_, (why)) != 0)                                     \
      return -1;                                                               \
    hipError_t e_ = (call);                                                    \
    dev_leave(&s_);                                                            \
    return e_ == hipSuccess ? 0 : fail((why), (name), e_);                     \
  } while (0)

static int load_symbols(char why[HGPU_WHY]) {
  static const struct {
    const char *sym;
    size_t offset;
  } table[] = {
#define SYM(f) {#f, offsetof(__typeof__(hp), f)}
      SYM(hipInit),
      SYM(hipRuntimeGetVersion),
      SYM(hipGetDeviceCount),
      SYM(hipGetDevice),
      SYM(hipSetDevice),
      SYM(hipDeviceGet),
      SYM(hipDeviceGetName),
      SYM(hipDeviceGetPCIBusId),
      SYM(hipPointerGetAttributes),
      SYM(hipMemGetAddressRange),
      SYM(hipHostMalloc),
      SYM(hipHostFree),
      SYM(hipMalloc),
      SYM(hipFree),
      SYM(hipMemcpy),
      SYM(hipStreamCreateWithFlags),
      SYM(hipStreamDestroy),
      SYM(hipMemcpyHtoDAsync),
      SYM(hipMemcpyDtoHAsync),
      SYM(hipEventCreateWithFlags),
      SYM(hipEventDestroy),
      SYM(hipEventRecord),
      SYM(hipEventSynchronize),
      SYM(hipEventQuery),
      SYM(hipGetErrorName),
      SYM(hipGetErrorString),
#undef SYM
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    void *s = dlsym(hp.lib, table[i].sym);
    if (!s) {
      hgpu_why(why, "%s has no %s", hp.lib_name, table[i].sym);
      return -1;
    }
    memcpy((char *)&hp + table[i].offset, &s, sizeof s);
  }
  void *opt = dlsym(hp.lib, "hipPointerGetAttribute");
  memcpy(&hp.hipPointerGetAttribute, &opt, sizeof opt);
  opt = dlsym(hp.lib, "hipMemGetHandleForAddressRange");
  memcpy(&hp.hipMemGetHandleForAddressRange, &opt, sizeof opt);
#if HIPOBJ_HIP_DMABUF == 2
  /* The HIP runtime has loaded HSA already; take that copy. */
  hp.hsa_lib = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!hp.hsa_lib)
    hp.hsa_lib = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
  void *s =
      hp.hsa_lib ? dlsym(hp.hsa_lib, "hsa_amd_portable_export_dmabuf") : NULL;
  memcpy(&hp.hsa_amd_portable_export_dmabuf, &s, sizeof s);
#endif
  return 0;
}

static int hip_init(char why[HGPU_WHY]) {
  /* The unversioned name exists only with the development files; a
   * runtime-only ROCm install has just the versioned one. */
  static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.7",
                                      "libamdhip64.so.6", "libamdhip64.so.5"};
  char first[HGPU_WHY] = "";
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !hp.lib; i++) {
    hp.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (hp.lib) {
      hstrlcpy(hp.lib_name, names[i], sizeof hp.lib_name);
    } else if (!first[0]) {
      const char *e = dlerror();
      hstrlcpy(first, e ? e : "not found", sizeof first);
    }
  }
  if (!hp.lib) {
    hgpu_why(why,
             "cannot load the HIP runtime libamdhip64.so (nor .so.7, .so.6, "
             ".so.5): %s (is ROCm installed?)",
             first);
    return -1;
  }
  if (load_symbols(why) != 0)
    goto fail;
  hipError_t e = hp.hipInit(0);
  if (e != hipSuccess) {
    char call[64];
    snprintf(call, sizeof call, "%s loaded, but hipInit", hp.lib_name);
    fail(why, call, e);
    goto fail;
  }
  hp.hipRuntimeGetVersion(&hp.runtime_version);
  e = hp.hipGetDeviceCount(&hp.n_devices);
  if (e != hipSuccess) {
    fail(why, "hipGetDeviceCount", e);
    goto fail;
  }
  if (hp.n_devices <= 0) {
    hgpu_why(why, "%s loaded but it sees no AMD GPU", hp.lib_name);
    goto fail;
  }
  if (hp.n_devices > MAX_DEVICES)
    hp.n_devices = MAX_DEVICES;
  for (int i = 0; i < hp.n_devices; i++) {
    char *b = hp.bus_id[i];
    if (hp.hipDeviceGetPCIBusId(b, HGPU_BUSID, i) != hipSuccess)
      b[0] = '\0';
    for (; *b; b++)
      *b = (char)tolower((unsigned char)*b);
  }
  return 0;
fail:
  /* A loaded runtime that failed stays loaded: unloading ROCm libraries
   * that started threads is not safe. */
  hp.n_devices = 0;
  return -1;
}

static void hip_version(char *buf, size_t len) {
  int v = hp.runtime_version;
  snprintf(buf, len, "%s, HIP runtime %d.%d.%d (built with HIP %d.%d headers)",
           hp.lib_name, v / 10000000, v / 100000 % 100, v % 100000,
           HIP_VERSION_MAJOR, HIP_VERSION_MINOR);
}

static int hip_device_count(int *n, char why[HGPU_WHY]) {
  (void)why;
  *n = hp.n_devices;
  return 0;
}

static int hip_device_info(int dev, char bus_id[HGPU_BUSID], char *name,
                           size_t name_len, char why[HGPU_WHY]) {
  if (dev < 0 || dev >= hp.n_devices) {
    hgpu_why(why, "HIP device %d does not exist", dev);
    return -1;
  }
  hstrlcpy(bus_id, hp.bus_id[dev], HGPU_BUSID);
  hipDevice_t d;
  hipError_t e = hp.hipDeviceGet(&d, dev);
  if (e == hipSuccess && name_len)
    e = hp.hipDeviceGetName(name, (int)name_len, d);
  return e == hipSuccess ? 0 : fail(why, "hipDeviceGetName", e);
}

/* hipMemoryType changed numbering in ROCm 6 (an "unregistered" value 0 was
 * added); the runtime's version says which one it speaks. */
static int is_device_type(int type) {
  if (hp.runtime_version >= 60000000)
    return type == 2 /* Device */ || type == 3 /* Managed */;
  return type == 1; /* ROCm 5: hipMemoryTypeDevice */
}

static int hip_classify(const void *ptr, struct hgpu_mem_info *info,
                        char why[HGPU_WHY]) {
  (void)why;
  hipPointerAttribute_t a;
  memset(&a, 0, sizeof a);
  /* ROCm 5 fails for memory it does not know; ROCm 6 answers
   * "unregistered". Either way: not ours. */
  if (hp.hipPointerGetAttributes(&a, ptr) != hipSuccess)
    return 0;
  int type; /* the first member: memoryType in ROCm 5, type in ROCm 6 */
  memcpy(&type, &a, sizeof type);
  if (!is_device_type(type) && !a.isManaged)
    return 0;
  memset(info, 0, sizeof *info);
  info->kind = HIPOBJ_MEM_HIP;
  info->device = a.device >= 0 && a.device < hp.n_devices ? a.device : -1;
  if (info->device >= 0)
    hstrlcpy(info->pci_bus_id, hp.bus_id[info->device],
             sizeof info->pci_bus_id);
  hipDeviceptr_t base = NULL;
  size_t size = 0;
  if (hp.hipMemGetAddressRange(&base, &size, (hipDeviceptr_t)ptr) ==
      hipSuccess) {
    info->base = base;
    info->size = size;
  }
  unsigned long long id = 0;
  if (hp.hipPointerGetAttribute &&
      hp.hipPointerGetAttribute(&id, HIP_POINTER_ATTRIBUTE_BUFFER_ID,
                                (hipDeviceptr_t)ptr) == hipSuccess)
    info->buffer_id = id;
  return 1;
}

static int hip_dmabuf_supported(int dev, char why[HGPU_WHY]) {
  (void)dev;
  if (hp.hipMemGetHandleForAddressRange)
    return 1;
#if HIPOBJ_HIP_DMABUF == 2
  if (hp.hsa_amd_portable_export_dmabuf)
    return 1;
  hgpu_why(why,
           "dma-buf export unsupported: %s has no "
           "hipMemGetHandleForAddressRange and libhsa-runtime64.so.1 no "
           "hsa_amd_portable_export_dmabuf",
           hp.lib_name);
#else
  int v = hp.runtime_version;
  hgpu_why(why,
           "dma-buf export unsupported: %s (HIP runtime %d.%d) has no "
           "hipMemGetHandleForAddressRange (newer ROCm releases have it)",
           hp.lib_name, v / 10000000, v / 100000 % 100);
#endif
  return 0;
}

static int hip_dmabuf_export(int dev, const void *ptr, size_t len, int *fd,
                             uint64_t *offset, char why[HGPU_WHY]) {
  *fd = -1;
  if (!hip_dmabuf_supported(dev, why))
    return -1;
  if (hp.hipMemGetHandleForAddressRange) {
    /* The range API takes whole pages. */
    uintptr_t page = hgpu_page_size();
    uintptr_t p = (uintptr_t)ptr;
    uintptr_t start = p & ~(page - 1);
    uintptr_t end = (p + len + page - 1) & ~(page - 1);
    int out = -1;
    struct dev_save s;
    if (dev_enter(dev, &s, why) != 0)
      return -1;
    hipError_t e = hp.hipMemGetHandleForAddressRange(
        &out, (hipDeviceptr_t)start, end - start, RANGE_HANDLE_DMABUF_FD, 0);
    dev_leave(&s);
    if (e != hipSuccess)
      return fail(why, "hipMemGetHandleForAddressRange", e);
    *fd = out;
    *offset = p - start;
    return 0;
  }
#if HIPOBJ_HIP_DMABUF == 2
  int out = -1;
  uint64_t off = 0;
  hsa_status_t st = hp.hsa_amd_portable_export_dmabuf(ptr, len, &out, &off);
  if (st != HSA_STATUS_SUCCESS) {
    hgpu_why(why, "hsa_amd_portable_export_dmabuf: HSA status 0x%x",
             (unsigned)st);
    return -1;
  }
  *fd = out;
  *offset = off;
  return 0;
#else
  return -1; /* not reached: supported() said no */
#endif
}

static int hip_host_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  ON_DEV(dev, why, "hipHostMalloc",
         hp.hipHostMalloc(out, len, hipHostMallocPortable));
}

static void hip_host_free(int dev, void *p) {
  (void)dev;
  hp.hipHostFree(p);
}

static int hip_dev_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  ON_DEV(dev, why, "hipMalloc", hp.hipMalloc(out, len));
}

static void hip_dev_free(int dev, void *p) {
  char why[HGPU_WHY];
  struct dev_save s;
  if (dev_enter(dev, &s, why) != 0)
    return;
  hp.hipFree(p);
  dev_leave(&s);
}

static int hip_copy(int dev, void *dst, const void *src, size_t n,
                    char why[HGPU_WHY]) {
  ON_DEV(dev, why, "hipMemcpy", hp.hipMemcpy(dst, src, n, hipMemcpyDefault));
}

static int hip_stream_create(int dev, void **out, char why[HGPU_WHY]) {
  ON_DEV(dev, why, "hipStreamCreateWithFlags",
         hp.hipStreamCreateWithFlags((hipStream_t *)out, hipStreamNonBlocking));
}

static void hip_stream_destroy(int dev, void *stream) {
  char why[HGPU_WHY];
  struct dev_save s;
  if (dev_enter(dev, &s, why) != 0)
    return;
  hp.hipStreamDestroy(stream);
  dev_leave(&s);
}

static int hip_event_create(int dev, void **out, char why[HGPU_WHY]) {
  ON_DEV(dev, why, "hipEventCreateWithFlags",
         hp.hipEventCreateWithFlags((hipEvent_t *)out, hipEventDisableTiming));
}

static void hip_event_destroy(int dev, void *event) {
  char why[HGPU_WHY];
  struct dev_save s;
  if (dev_enter(dev, &s, why) != 0)
    return;
  hp.hipEventDestroy(event);
  dev_leave(&s);
}

static int hip_h2d_async(int dev, void *dst, const void *src, size_t n,
                         void *stream, char why[HGPU_WHY]) {
  ON_DEV(dev, why, "hipMemcpyHtoDAsync",
         hp.hipMemcpyHtoDAsync(dst, (void *)(uintptr_t)src, n, stream));
}

static int hip_d2h_async(int dev, void *dst, const void *src, size_t n,
                         void *stream, char why[HGPU_WHY]) {
  ON_DEV(dev, why, "hipMemcpyDtoHAsync",
         hp.hipMemcpyDtoHAsync(dst, (hipDeviceptr_t)(uintptr_t)src, n, stream));
}

static int hip_event_record(int dev, void *event, void *stream,
                            char why[HGPU_WHY]) {
  ON_DEV(dev, why, "hipEventRecord", hp.hipEventRecord(event, stream));
}

static int hip_event_sync(int dev, void *event, char why[HGPU_WHY]) {
  ON_DEV(dev, why, "hipEventSynchronize", hp.hipEventSynchronize(event));
}

static int hip_event_query(int dev, void *event, char why[HGPU_WHY]) {
  (void)dev;
  hipError_t e = hp.hipEventQuery(event);
  if (e == hipErrorNotReady)
    return 0;
  return e == hipSuccess ? 1 : fail(why, "hipEventQuery", e);
}

#else /* !HIPOBJ_HAVE_HIP_HEADERS */

/* Without the headers the backend only says why it cannot work. */
#define NO_HEADERS                                                             \
  "this hipObject was built without HIP headers (install libamdhip64-dev or "  \
  "ROCm and rebuild to use AMD GPU memory)"

static int hip_init(char why[HGPU_WHY]) {
  hgpu_why(why, "%s", NO_HEADERS);
  return -1;
}

static void hip_version(char *buf, size_t len) {
  hstrlcpy(buf, "built without HIP headers", len);
}

static const char *hip_error_string(int code) {
  (void)code;
  return NO_HEADERS;
}

static int unavailable(char why[HGPU_WHY]) {
  hgpu_why(why, "%s", NO_HEADERS);
  return -1;
}

static int hip_device_count(int *n, char why[HGPU_WHY]) {
  *n = 0;
  return unavailable(why);
}
static int hip_device_info(int dev, char bus_id[HGPU_BUSID], char *name,
                           size_t name_len, char why[HGPU_WHY]) {
  (void)dev, (void)bus_id, (void)name, (void)name_len;
  return unavailable(why);
}
static int hip_classify(const void *ptr, struct hgpu_mem_info *info,
                        char why[HGPU_WHY]) {
  (void)ptr, (void)info, (void)why;
  return 0;
}
static int hip_dmabuf_supported(int dev, char why[HGPU_WHY]) {
  (void)dev;
  unavailable(why);
  return 0;
}
static int hip_dmabuf_export(int dev, const void *ptr, size_t len, int *fd,
                             uint64_t *offset, char why[HGPU_WHY]) {
  (void)dev, (void)ptr, (void)len, (void)offset;
  *fd = -1;
  return unavailable(why);
}
static int hip_host_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  (void)dev, (void)len, (void)out;
  return unavailable(why);
}
static void hip_host_free(int dev, void *p) {
  (void)dev, (void)p;
}
static int hip_dev_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  (void)dev, (void)len, (void)out;
  return unavailable(why);
}
static void hip_dev_free(int dev, void *p) {
  (void)dev, (void)p;
}
static int hip_copy(int dev, void *dst, const void *src, size_t n,
                    char why[HGPU_WHY]) {
  (void)dev, (void)dst, (void)src, (void)n;
  return unavailable(why);
}
static int hip_stream_create(int dev, void **out, char why[HGPU_WHY]) {
  (void)dev, (void)out;
  return unavailable(why);
}
static void hip_stream_destroy(int dev, void *stream) {
  (void)dev, (void)stream;
}
#define hip_event_create hip_stream_create
#define hip_event_destroy hip_stream_destroy
static int hip_h2d_async(int dev, void *dst, const void *src, size_t n,
                         void *stream, char why[HGPU_WHY]) {
  (void)stream;
  return hip_copy(dev, dst, src, n, why);
}
#define hip_d2h_async hip_h2d_async
static int hip_event_record(int dev, void *event, void *stream,
                            char why[HGPU_WHY]) {
  (void)dev, (void)event, (void)stream;
  return unavailable(why);
}
static int hip_event_sync(int dev, void *event, char why[HGPU_WHY]) {
  (void)dev, (void)event;
  return unavailable(why);
}
#define hip_event_query hip_event_sync

#endif /* HIPOBJ_HAVE_HIP_HEADERS */

const struct hgpu_ops hgpu_hip_ops = {
    .name = "hip",
    .library = "libamdhip64.so",
    .init = hip_init,
    .version = hip_version,
    .device_count = hip_device_count,
    .device_info = hip_device_info,
    .classify = hip_classify,
    .dmabuf_supported = hip_dmabuf_supported,
    .dmabuf_export = hip_dmabuf_export,
    .host_alloc = hip_host_alloc,
    .host_free = hip_host_free,
    .dev_alloc = hip_dev_alloc,
    .dev_free = hip_dev_free,
    .copy = hip_copy,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .h2d_async = hip_h2d_async,
    .d2h_async = hip_d2h_async,
    .event_record = hip_event_record,
    .event_sync = hip_event_sync,
    .event_query = hip_event_query,
    .error_string = hip_error_string,
};
