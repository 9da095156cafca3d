/* mem.c - memory descriptors at the API's edge (mem.h): struct_size, kinds
 * and the per-kind checks (GPU platforms, files). */
#include "mem.h"

#include <string.h>

#include "base/error.h"
#include "gpu.h"
#include "mem_file.h"

static int kind_known(int kind) {
  return kind == HIPOBJ_MEM_HOST || kind == HIPOBJ_MEM_HIP ||
         kind == HIPOBJ_MEM_CUDA || kind == HIPOBJ_MEM_FILE;
}

int hmem_import(const char *op, const struct hipobj_mem *in,
                struct hipobj_mem *out, struct hipobj_error *err) {
  if (!in)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "memory descriptor is NULL");
  size_t sz = in->struct_size;
  if (sz < HMEM_MIN_SIZE)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "memory descriptor struct_size %zu is too small; build "
                    "it with hipobj_mem_host(), hipobj_mem_gpu() or "
                    "hipobj_mem_file()",
                    sz);
  /* A newer program's descriptor: fields this library does not know must
   * be unused (zero), or it would silently ignore what the caller meant. */
  for (size_t i = sizeof *out; i < sz; i++)
    if (((const unsigned char *)in)[i])
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "memory descriptor has fields this library (%s) does "
                      "not know",
                      hipobj_version());
  memset(out, 0, sizeof *out);
  out->fd = -1;
  memcpy(out, in, sz < sizeof *out ? sz : sizeof *out);
  out->struct_size = sizeof *out;
  if (!kind_known((int)out->kind))
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "memory kind %d is not HOST, HIP, CUDA or FILE",
                    (int)out->kind);
  if (out->kind == HIPOBJ_MEM_FILE) {
    if (sz < offsetof(struct hipobj_mem, offset) + sizeof out->offset)
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "a file descriptor's struct_size %zu has no fd and "
                      "offset; build it with hipobj_mem_file()",
                      sz);
    return HIPOBJ_OK;
  }
  if (!out->ptr && out->len)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "buffer pointer is NULL with length %zu", out->len);
  return HIPOBJ_OK;
}

int hmem_export(const char *op, struct hipobj_mem *out,
                const struct hipobj_mem *m, struct hipobj_error *err) {
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "out is NULL");
  size_t sz = out->struct_size;
  if (sz < HMEM_MIN_SIZE)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "out struct_size %zu is too small; initialise it with "
                    "HIPOBJ_MEM_INIT",
                    sz);
  memcpy(out, m, sz < sizeof *m ? sz : sizeof *m);
  out->struct_size = sz;
  return HIPOBJ_OK;
}

int hmem_check(const char *op, const struct hipobj_mem *m, enum hmem_dir dir,
               const struct hlog *log, struct hipobj_error *err) {
  if (m->kind == HIPOBJ_MEM_FILE) {
    /* The descriptor is checked even when empty, so that a bad fd fails
     * the same way whatever the size. */
    char why[HFILE_WHY];
    if (hfile_check(m->fd, m->offset, m->len, dir, why) != 0)
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "%s", why);
    return HIPOBJ_OK;
  }
  const struct hgpu_ops *ops;
  return hgpu_check_mem(op, m, log, &ops, err);
}
