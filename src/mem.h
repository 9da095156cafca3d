/* mem.h - memory descriptors inside the library: a caller's struct
 * hipobj_mem, of whatever struct_size its program was built with, becomes
 * a full, checked copy at the API's edge (hmem_import), and descriptors the
 * library returns are written only within the caller's size (hmem_export).
 * Every memory kind is then reached through its own checks: GPU memory
 * through its platform (gpu.h), files through mem_file.h. */
#ifndef HIPOBJ_MEM_H
#define HIPOBJ_MEM_H

#include <stddef.h>

#include "hipobj.h"
#include "mem_file.h"

struct hlog;

/* The fields every struct_size must cover: the layout of a program that
 * knows no file fields (host and GPU memory only). */
#define HMEM_MIN_SIZE                                                          \
  (offsetof(struct hipobj_mem, len) + sizeof(((struct hipobj_mem *)0)->len))

/* Copies *in into *out (full size; fields past the caller's struct_size take
 * their defaults) and checks what needs no runtime: struct_size, the kind,
 * a NULL pointer with a length. err filled on failure. */
int hmem_import(const char *op, const struct hipobj_mem *in,
                struct hipobj_mem *out, struct hipobj_error *err);
/* Writes the descriptor m into the caller's out within out->struct_size
 * (which the caller sets, e.g. with HIPOBJ_MEM_INIT). */
int hmem_export(const char *op, struct hipobj_mem *out,
                const struct hipobj_mem *m, struct hipobj_error *err);

/* The checks that load a runtime or ask the kernel: a GPU pointer is its
 * platform's memory inside one allocation, a file is open the right way
 * (and, read, long enough). HIPOBJ_E_UNSUPPORTED when the runtime is
 * missing, HIPOBJ_E_INVALID_ARGUMENT for a bad descriptor. */
int hmem_check(const char *op, const struct hipobj_mem *m, enum hmem_dir dir,
               const struct hlog *log, struct hipobj_error *err);

#endif
