/* gpu.c - the memory platform registry: each GPU runtime is initialised once,
 * on first use, and a failure is remembered with its reason (logged once);
 * pointer classification and the checks of a GPU descriptor. The public
 * GPU calls are gpu_api.c. */
#include "gpu.h"

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
int hgpu_kind_valid(int kind) {
  return kind >= 0 && kind < HGPU_N_KINDS;
}

const char *hgpu_kind_name(int kind) {
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
  if (!hgpu_kind_valid((int)kind)) {
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
               hgpu_kind_name((int)kind),
               w[0] ? w : "the runtime failed to start");
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
  if (!hgpu_kind_valid((int)kind))
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
int hgpu_check_range(const char *op, const void *ptr, size_t len,
                     const struct hgpu_mem_info *info,
                     struct hipobj_error *err) {
  if (!info->base || !info->size)
    return HIPOBJ_OK;
  uintptr_t p = (uintptr_t)ptr, b = (uintptr_t)info->base;
  if (p < b || p - b > info->size || len > info->size - (p - b))
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "%zu bytes at %p run past the end of their %zu-byte %s "
                    "allocation at %p",
                    len, ptr, info->size, hgpu_kind_name(info->kind),
                    info->base);
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
                    hgpu_kind_valid((int)m->kind) ? HIPOBJ_E_UNSUPPORTED
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
                    hgpu_kind_name(m->kind), m->device, n, n == 1 ? "" : "s");
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
                    m->ptr, hgpu_kind_name(m->kind), ops->name);
  if (info.device >= 0 && info.device != m->device)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "the descriptor names %s device %d but %p is memory of "
                    "device %d",
                    hgpu_kind_name(m->kind), m->device, m->ptr, info.device);
  return hgpu_check_range(op, m->ptr, m->len, &info, err);
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

const struct hgpu_ops *hgpu_declared(enum hipobj_mem_kind kind) {
  if (!hgpu_kind_valid((int)kind))
    return NULL;
  pthread_mutex_lock(&reg_lock);
  const struct hgpu_ops *o =
      slots[kind].ops ? slots[kind].ops : slots[kind].builtin;
  pthread_mutex_unlock(&reg_lock);
  return o;
}
