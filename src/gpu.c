/* gpu.c - the memory platform registry: each GPU runtime is initialised once,
 * on first use, and a failure is remembered with its reason (logged once).
 * Also pointer classification and the public GPU helpers
 * (hipobj_mem_classify, hipobj_gpu_alloc/free/copy, platform and device
 * information). */
#include "gpu.h"
#include "hstruct.h"
#include "mem.h"
#include "rdma_glue.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/strutil.h"

enum { ST_UNTRIED, ST_OK, ST_FAILED };

struct slot {
  const struct hgpu_ops *builtin;
  const struct hgpu_ops *ops; /* NULL: builtin */
  int state;
  int logged;
  char why[HGPU_WHY];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[HGPU_N_KINDS] = {
    [HIPOBJ_MEM_HOST] = {&hgpu_host_ops, NULL, ST_UNTRIED, 0, ""},
    [HIPOBJ_MEM_HIP] = {&hgpu_hip_ops, NULL, ST_UNTRIED, 0, ""},
    [HIPOBJ_MEM_CUDA] = {&hgpu_cuda_ops, NULL, ST_UNTRIED, 0, ""},
};

void hgpu_why(char why[HGPU_WHY], const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, HGPU_WHY, fmt, ap);
  va_end(ap);
}

size_t hgpu_page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

/* The kinds with a platform here (files are their own kind: mem_file.c). */
static int kind_valid(int kind) {
  return kind >= 0 && kind < HGPU_N_KINDS;
}

static const char *kind_name(int kind) {
  return kind == HIPOBJ_MEM_HIP    ? "HIP"
         : kind == HIPOBJ_MEM_CUDA ? "CUDA"
         : kind == HIPOBJ_MEM_FILE ? "file"
                                   : "host";
}

const struct hgpu_ops *hgpu_platform(enum hipobj_mem_kind kind,
                                     const struct hlog *log,
                                     char why[HGPU_WHY]) {
  if (kind == HIPOBJ_MEM_FILE) {
    hgpu_why(why, "file memory has no GPU platform");
    return NULL;
  }
  if (!kind_valid((int)kind)) {
    hgpu_why(why, "memory kind %d is not HOST, HIP, CUDA or FILE", (int)kind);
    return NULL;
  }
  pthread_mutex_lock(&reg_lock);
  struct slot *s = &slots[kind];
  const struct hgpu_ops *ops = s->ops ? s->ops : s->builtin;
  if (s->state == ST_UNTRIED) {
    char w[HGPU_WHY] = "";
    if (ops->init(w) == 0) {
      s->state = ST_OK;
    } else {
      s->state = ST_FAILED;
      snprintf(s->why, sizeof s->why, "%s memory is unavailable: %s",
               kind_name((int)kind), w[0] ? w : "the runtime failed to start");
    }
  }
  int log_now = 0;
  if (s->state != ST_OK) {
    hstrlcpy(why, s->why, HGPU_WHY);
    log_now = log && !s->logged;
    if (log_now)
      s->logged = 1;
    ops = NULL;
  }
  pthread_mutex_unlock(&reg_lock);
  if (log_now)
    HLOG_WARN(log, "%s", why);
  return ops;
}

void hgpu_register_ops(enum hipobj_mem_kind kind, const struct hgpu_ops *ops) {
  if (!kind_valid((int)kind))
    return;
  pthread_mutex_lock(&reg_lock);
  slots[kind].ops = ops;
  slots[kind].state = ST_UNTRIED;
  slots[kind].logged = 0;
  slots[kind].why[0] = '\0';
  pthread_mutex_unlock(&reg_lock);
}

int hgpu_classify(const void *ptr, struct hgpu_mem_info *info,
                  char why[HGPU_WHY]) {
  static const enum hipobj_mem_kind order[] = {HIPOBJ_MEM_CUDA, HIPOBJ_MEM_HIP};
  memset(info, 0, sizeof *info);
  for (size_t i = 0; ptr && i < sizeof order / sizeof order[0]; i++) {
    char w[HGPU_WHY];
    const struct hgpu_ops *ops = hgpu_platform(order[i], NULL, w);
    if (!ops)
      continue; /* a runtime that is not there owns no memory */
    int r = ops->classify(ptr, info, why);
    if (r != 0)
      return r < 0 ? -1 : 0;
    memset(info, 0, sizeof *info);
  }
  info->kind = HIPOBJ_MEM_HOST;
  info->device = -1;
  return 0;
}

/* [ptr, ptr+len) must lie inside the allocation classify() found. */
static int check_range(const char *op, const void *ptr, size_t len,
                       const struct hgpu_mem_info *info,
                       struct hipobj_error *err) {
  if (!info->base || !info->size)
    return HIPOBJ_OK;
  uintptr_t p = (uintptr_t)ptr, b = (uintptr_t)info->base;
  if (p < b || p - b > info->size || len > info->size - (p - b))
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "%zu bytes at %p run past the end of their %zu-byte %s "
                    "allocation at %p",
                    len, ptr, info->size, kind_name(info->kind), info->base);
  return HIPOBJ_OK;
}

int hgpu_check_mem(const char *op, const struct hipobj_mem *m,
                   const struct hlog *log, const struct hgpu_ops **ops_out,
                   struct hipobj_error *err) {
  char why[HGPU_WHY];
  *ops_out = NULL;
  if (!m)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "memory descriptor is NULL");
  if (m->kind == HIPOBJ_MEM_FILE)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                    "file memory is read and written with pread/pwrite, not "
                    "through a GPU runtime");
  if (!m->ptr && m->len)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "buffer pointer is NULL with length %zu", m->len);
  const struct hgpu_ops *ops = hgpu_platform(m->kind, log, why);
  if (!ops)
    return herr_set(err,
                    kind_valid((int)m->kind) ? HIPOBJ_E_UNSUPPORTED
                                             : HIPOBJ_E_INVALID_ARGUMENT,
                    op, "%s", why);
  *ops_out = ops;
  if (m->kind == HIPOBJ_MEM_HOST || m->len == 0)
    return HIPOBJ_OK;
  int n = 0;
  if (ops->device_count(&n, why) != 0)
    return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
  if (m->device < 0 || m->device >= n)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "%s device %d does not exist (%d device%s)",
                    kind_name(m->kind), m->device, n, n == 1 ? "" : "s");
  struct hgpu_mem_info info;
  memset(&info, 0, sizeof info);
  int r = ops->classify(m->ptr, &info, why);
  if (r < 0)
    return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
  if (r == 0)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "%p is not %s device memory (the %s runtime does not "
                    "know it); use hipobj_mem_classify() for pointers of "
                    "unknown origin",
                    m->ptr, kind_name(m->kind), ops->name);
  if (info.device >= 0 && info.device != m->device)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "the descriptor names %s device %d but %p is memory of "
                    "device %d",
                    kind_name(m->kind), m->device, m->ptr, info.device);
  return check_range(op, m->ptr, m->len, &info, err);
}

int hgpu_export_dmabuf(const struct hipobj_mem *m, int *fd, uint64_t *offset,
                       struct hipobj_error *err) {
  const char *op = "ExportDmaBuf";
  const struct hgpu_ops *ops;
  int rc = hgpu_check_mem(op, m, NULL, &ops, err);
  if (rc)
    return rc;
  if (m->kind == HIPOBJ_MEM_HOST || m->len == 0)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "only a non-empty GPU buffer can be exported");
  char why[HGPU_WHY];
  if (!ops->dmabuf_supported(m->device, why))
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op, "%s", why);
  if (ops->dmabuf_export(m->device, m->ptr, m->len, fd, offset, why) != 0)
    return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}

/* ---- public helpers ------------------------------------------------------ */

int hipobj_mem_classify(void *ptr, size_t len, struct hipobj_mem *out,
                        struct hipobj_error *err) {
  const char *op = "ClassifyMemory";
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "out is NULL");
  if (!ptr && len)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "pointer is NULL with length %zu", len);
  struct hgpu_mem_info info;
  char why[HGPU_WHY];
  if (hgpu_classify(ptr, &info, why) != 0)
    return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
  int rc = check_range(op, ptr, len, &info, err);
  if (rc)
    return rc;
  struct hipobj_mem m =
      hipobj_mem_gpu(info.kind, info.device < 0 ? 0 : info.device, ptr, len);
  if ((rc = hmem_export(op, out, &m, err)) != HIPOBJ_OK)
    return rc;
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}

/* The GPU platform of kind, or HIPOBJ_E_UNSUPPORTED with the reason. */
static int platform_or_fail(const char *op, enum hipobj_mem_kind kind,
                            const struct hgpu_ops **ops,
                            struct hipobj_error *err) {
  char why[HGPU_WHY];
  *ops = hgpu_platform(kind, NULL, why);
  if (!*ops)
    return herr_set(err,
                    kind_valid((int)kind) ? HIPOBJ_E_UNSUPPORTED
                                          : HIPOBJ_E_INVALID_ARGUMENT,
                    op, "%s", why);
  return HIPOBJ_OK;
}

int hipobj_gpu_alloc(enum hipobj_mem_kind kind, int device, size_t len,
                     struct hipobj_mem *out, struct hipobj_error *err) {
  const char *op = "GpuAlloc";
  const struct hgpu_ops *ops;
  /* An empty descriptor first: after a failure out is still one that
   * hipobj_gpu_free() takes. */
  struct hipobj_mem m = hipobj_mem_host(NULL, 0);
  int rc = hmem_export(op, out, &m, err);
  if (rc)
    return rc;
  if (kind == HIPOBJ_MEM_FILE)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "file memory is not allocated: open a file and describe "
                    "it with hipobj_mem_file()");
  rc = platform_or_fail(op, kind, &ops, err);
  if (rc)
    return rc;
  char why[HGPU_WHY];
  void *p = NULL;
  if (kind == HIPOBJ_MEM_HOST) {
    device = 0;
    if (len && !(p = malloc(len)))
      return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op,
                      "cannot allocate %zu bytes", len);
  } else {
    int n = 0;
    if (ops->device_count(&n, why) != 0)
      return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
    if (device < 0 || device >= n)
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "%s device %d does not exist (%d device%s)",
                      kind_name(kind), device, n, n == 1 ? "" : "s");
    if (len && ops->dev_alloc(device, len, &p, why) != 0)
      return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "%s", why);
  }
  m = hipobj_mem_gpu(kind, device, p, len);
  hmem_export(op, out, &m, NULL); /* its size was checked above */
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}

void hipobj_gpu_free(struct hipobj_mem *mem) {
  if (!mem || mem->struct_size < HMEM_MIN_SIZE || !mem->ptr ||
      mem->kind == HIPOBJ_MEM_FILE)
    return;
  char why[HGPU_WHY];
  if (mem->kind == HIPOBJ_MEM_HOST) {
    free(mem->ptr);
  } else {
    const struct hgpu_ops *ops = hgpu_platform(mem->kind, NULL, why);
    if (ops)
      ops->dev_free(mem->device, mem->ptr);
  }
  mem->ptr = NULL;
  mem->len = 0;
}

int hipobj_gpu_copy(const struct hipobj_mem *dst_in,
                    const struct hipobj_mem *src_in, struct hipobj_error *err) {
  const char *op = "GpuCopy";
  const struct hgpu_ops *dops, *sops;
  struct hipobj_mem d, s;
  int rc;
  if ((rc = hmem_import(op, dst_in, &d, err)) ||
      (rc = hmem_import(op, src_in, &s, err)))
    return rc;
  const struct hipobj_mem *dst = &d, *src = &s;
  if (dst->kind == HIPOBJ_MEM_FILE || src->kind == HIPOBJ_MEM_FILE)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                    "file memory is read and written with pread/pwrite, not "
                    "hipobj_gpu_copy()");
  if ((rc = hgpu_check_mem(op, dst, NULL, &dops, err)) ||
      (rc = hgpu_check_mem(op, src, NULL, &sops, err)))
    return rc;
  if (dst->len < src->len)
    return herr_set(err, HIPOBJ_E_BUFFER_TOO_SMALL, op,
                    "%zu bytes do not fit the %zu-byte destination", src->len,
                    dst->len);
  if (src->len == 0) {
    hipobj_error_clear(err);
    return HIPOBJ_OK;
  }
  const struct hipobj_mem *gpu = dst->kind != HIPOBJ_MEM_HOST ? dst : src;
  if (dst->kind != HIPOBJ_MEM_HOST && src->kind != HIPOBJ_MEM_HOST &&
      dst->kind != src->kind)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                    "copies between %s and %s memory are not supported",
                    kind_name(src->kind), kind_name(dst->kind));
  const struct hgpu_ops *ops = gpu == dst ? dops : sops;
  char why[HGPU_WHY];
  if (ops->copy(gpu->device, dst->ptr, src->ptr, src->len, why) != 0)
    return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}

int hipobj_gpu_platform_info(enum hipobj_mem_kind kind,
                             struct hipobj_gpu_platform_info *out,
                             struct hipobj_error *err) {
  const char *op = "GpuPlatformInfo";
  struct hipobj_gpu_platform_info o;
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "out is NULL");
  int rc = hstruct_out_begin(op, out, &o, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (!kind_valid((int)kind) && kind != HIPOBJ_MEM_FILE)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "memory kind %d is not HOST, HIP, CUDA or FILE", (int)kind);
  if (kind == HIPOBJ_MEM_FILE) {
    /* Files need no runtime: always there (mem_file.c). */
    o.available = 1;
    hstrlcpy(o.name, "file", sizeof o.name);
    hstrlcpy(o.version, "file descriptors (pread/pwrite)", sizeof o.version);
    hstruct_out_end(out, &o);
    hipobj_error_clear(err);
    return HIPOBJ_OK;
  }
  pthread_mutex_lock(&reg_lock);
  const struct hgpu_ops *declared =
      slots[kind].ops ? slots[kind].ops : slots[kind].builtin;
  pthread_mutex_unlock(&reg_lock);
  hstrlcpy(o.name, declared->name, sizeof o.name);
  hstrlcpy(o.library, declared->library, sizeof o.library);
  char why[HGPU_WHY];
  const struct hgpu_ops *ops = hgpu_platform(kind, NULL, why);
  if (!ops) {
    hstrlcpy(o.reason, why, sizeof o.reason);
  } else {
    o.available = 1;
    ops->version(o.version, sizeof o.version);
    int n = 0;
    if (ops->device_count(&n, why) != 0)
      return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
    o.device_count = n;
  }
  hstruct_out_end(out, &o);
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}

int hipobj_gpu_device_info(enum hipobj_mem_kind kind, int device,
                           struct hipobj_gpu_device_info *out,
                           struct hipobj_error *err) {
  const char *op = "GpuDeviceInfo";
  const struct hgpu_ops *ops;
  struct hipobj_gpu_device_info o;
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "out is NULL");
  int rc = hstruct_out_begin(op, out, &o, err);
  if (rc != HIPOBJ_OK)
    return rc;
  rc = platform_or_fail(op, kind, &ops, err);
  if (rc)
    return rc;
  char why[HGPU_WHY];
  int n = 0;
  if (ops->device_count(&n, why) != 0)
    return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
  if (device < 0 || device >= n)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "%s device %d does not exist (%d device%s)",
                    kind_name(kind), device, n, n == 1 ? "" : "s");
  if (ops->device_info(device, o.pci_bus_id, o.name, sizeof o.name, why) != 0)
    return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
  o.dmabuf = ops->dmabuf_supported(device, why);
  if (!o.dmabuf)
    hstrlcpy(o.dmabuf_reason, why, sizeof o.dmabuf_reason);
  hrdma_nic_for_gpu(o.pci_bus_id, o.rdma_nic, sizeof o.rdma_nic,
                    o.rdma_nic_reason, sizeof o.rdma_nic_reason);
  hstruct_out_end(out, &o);
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}
