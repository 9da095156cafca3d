/* gpu_api.c - the public GPU calls (hipobj_mem_classify, hipobj_gpu_*)
 * over the platform registry (gpu.c): descriptors for bare pointers,
 * device allocations and copies for programs that do not link a GPU
 * runtime, and what each platform and device can do (incl. the RDMA NIC
 * paired with a GPU). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strutil.h"
#include "gpu.h"
#include "hstruct.h"
#include "mem.h"
#include "rdma_glue.h"

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
  int rc = hgpu_check_range(op, ptr, len, &info, err);
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
                    hgpu_kind_valid((int)kind) ? HIPOBJ_E_UNSUPPORTED
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
                      hgpu_kind_name(kind), device, n, n == 1 ? "" : "s");
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
                    hgpu_kind_name(src->kind), hgpu_kind_name(dst->kind));
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
  if (!hgpu_kind_valid((int)kind) && kind != HIPOBJ_MEM_FILE)
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
  const struct hgpu_ops *declared = hgpu_declared(kind);
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
                    hgpu_kind_name(kind), device, n, n == 1 ? "" : "s");
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
