/* gpu.h - the memory platform layer: one ops table per kind of memory (host,
 * HIP, CUDA) in the style of libfabric's hmem ops. Each GPU runtime is
 * loaded with dlopen the first time memory of its kind is used, so one build
 * runs on machines with either runtime, both or none. Only src/gpu*.c include
 * GPU headers; the rest of the library sees this table.
 *
 * Errors: every op that can fail returns 0 or -1 and writes a one-line reason
 * naming the failing call ("cuMemcpyHtoDAsync: CUDA_ERROR_INVALID_VALUE:
 * invalid argument") into why[HGPU_WHY]. */
#ifndef HIPOBJ_GPU_H
#define HIPOBJ_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "base/log.h"
#include "hipobj.h"

#define HGPU_WHY 512
#define HGPU_BUSID 32
#define HGPU_N_KINDS 3 /* HIPOBJ_MEM_HOST, _HIP, _CUDA (files: mem_file.h) */

/* What classify() learnt about a pointer. */
struct hgpu_mem_info {
  enum hipobj_mem_kind kind;
  int device;                  /* ordinal; -1 for host memory */
  void *base;                  /* start of the allocation holding it, or NULL */
  size_t size;                 /* size of that allocation, 0 when unknown */
  char pci_bus_id[HGPU_BUSID]; /* "0000:3b:00.0", "" when unknown */
  /* The runtime's id of that allocation, unique over the process's life
   * (CU_POINTER_ATTRIBUTE_BUFFER_ID, HIP_POINTER_ATTRIBUTE_BUFFER_ID): an
   * address freed and allocated again gets a new one. 0 when unknown. */
  uint64_t buffer_id;
};

/* One memory platform. Device ordinals are the runtime's. Streams and events
 * are the runtime's handles, opaque here. Every op may be called from any
 * thread (the engine's worker included); the backend makes the device's
 * context current itself and restores the caller's afterwards. */
struct hgpu_ops {
  const char *name;    /* "host", "hip", "cuda" */
  const char *library; /* the runtime library tried first, for messages */
  /* Loads and initialises the runtime. Called once, under the registry's
   * lock; a failure is final for the process. */
  int (*init)(char why[HGPU_WHY]);
  /* The runtime's version and the library actually loaded, as text. */
  void (*version)(char *buf, size_t len);
  int (*device_count)(int *n, char why[HGPU_WHY]);
  /* PCIe bus id and marketing name of a device (name may be ""). */
  int (*device_info)(int dev, char bus_id[HGPU_BUSID], char *name,
                     size_t name_len, char why[HGPU_WHY]);
  /* 1: ptr is this platform's memory and *info is filled; 0: not ours;
   * -1: the runtime failed (why). */
  int (*classify)(const void *ptr, struct hgpu_mem_info *info,
                  char why[HGPU_WHY]);
  /* 1 when device memory of dev can be exported as a dma-buf, else 0 and
   * why says why not (API missing in this build, runtime or kernel). */
  int (*dmabuf_supported)(int dev, char why[HGPU_WHY]);
  /* A dma-buf fd covering [ptr, ptr+len) (page-aligned around it); *offset
   * is where ptr lies in it. The caller closes the fd. */
  int (*dmabuf_export)(int dev, const void *ptr, size_t len, int *fd,
                       uint64_t *offset, char why[HGPU_WHY]);
  /* Page-locked host memory, usable by every device of the platform; dev
   * is the device whose context allocates (and later frees) it. */
  int (*host_alloc)(int dev, size_t len, void **out, char why[HGPU_WHY]);
  void (*host_free)(int dev, void *p);
  int (*dev_alloc)(int dev, size_t len, void **out, char why[HGPU_WHY]);
  void (*dev_free)(int dev, void *p);
  /* Synchronous copy; src/dst may each be host or this platform's device
   * memory of dev. */
  int (*copy)(int dev, void *dst, const void *src, size_t n,
              char why[HGPU_WHY]);
  int (*stream_create)(int dev, void **out, char why[HGPU_WHY]);
  void (*stream_destroy)(int dev, void *stream);
  int (*event_create)(int dev, void **out, char why[HGPU_WHY]);
  void (*event_destroy)(int dev, void *event);
  /* Queued copies: host src/dst should be host_alloc'ed memory. */
  int (*h2d_async)(int dev, void *dst, const void *src, size_t n, void *stream,
                   char why[HGPU_WHY]);
  int (*d2h_async)(int dev, void *dst, const void *src, size_t n, void *stream,
                   char why[HGPU_WHY]);
  int (*event_record)(int dev, void *event, void *stream, char why[HGPU_WHY]);
  /* Waits until the work recorded before the event has finished; -1 when
   * that work failed. */
  int (*event_sync)(int dev, void *event, char why[HGPU_WHY]);
  /* 1 finished, 0 still running, -1 failed. */
  int (*event_query)(int dev, void *event, char why[HGPU_WHY]);
  /* The runtime's text for one of its status codes (never NULL). */
  const char *(*error_string)(int code);
};

extern const struct hgpu_ops hgpu_host_ops;
extern const struct hgpu_ops hgpu_hip_ops;
extern const struct hgpu_ops hgpu_cuda_ops;

/* The platform of a memory kind, initialised on first use (thread-safe).
 * NULL when its runtime is missing or failed: why then names the library and
 * the cause. The first failure is logged (warn) once per process, to `log`
 * when given. */
const struct hgpu_ops *hgpu_platform(enum hipobj_mem_kind kind,
                                     const struct hlog *log,
                                     char why[HGPU_WHY]);

/* Asks each GPU platform whose runtime loads whether it owns ptr; host
 * memory when none does. */
int hgpu_classify(const void *ptr, struct hgpu_mem_info *info,
                  char why[HGPU_WHY]);

/* Checks a caller's GPU descriptor: its platform loads (else
 * HIPOBJ_E_UNSUPPORTED with the reason), the pointer is that platform's
 * memory on that device, and [ptr, ptr+len) lies inside its allocation.
 * Returns a status (err filled) and the platform's ops. */
int hgpu_check_mem(const char *op, const struct hipobj_mem *m,
                   const struct hlog *log, const struct hgpu_ops **ops,
                   struct hipobj_error *err);

/* dma-buf export of a GPU descriptor's range, for the RDMA engine: fd (the
 * caller closes it) and the offset of m->ptr inside the dma-buf. */
int hgpu_export_dmabuf(const struct hipobj_mem *m, int *fd, uint64_t *offset,
                       struct hipobj_error *err);

/* Tests only: replaces the platform of `kind` (NULL restores the built-in
 * one) and forgets its init state. No transfer may be in progress. */
void hgpu_register_ops(enum hipobj_mem_kind kind, const struct hgpu_ops *ops);

/* The registry's view, for the public calls (gpu_api.c): whether kind has
 * a platform here, its name for messages, the ops registered for it (not
 * initialised), and whether [ptr, ptr+len) lies inside the allocation
 * info describes (err filled). */
int hgpu_kind_valid(int kind);
const char *hgpu_kind_name(int kind);
const struct hgpu_ops *hgpu_declared(enum hipobj_mem_kind kind);
int hgpu_check_range(const char *op, const void *ptr, size_t len,
                     const struct hgpu_mem_info *info,
                     struct hipobj_error *err);

/* Helpers for backends. */
void hgpu_why(char why[HGPU_WHY], const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
size_t hgpu_page_size(void);

#endif
