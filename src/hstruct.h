/* hstruct.h - the struct_size rule of the public structs, in one place for
 * every entry point (the rule: include/hipobj.h, "Structs").
 *
 * The library never reads or writes a caller's struct field by field.
 * Options are copied into a zeroed local of the library's size, so a field
 * the caller's (older) struct lacks reads as zero, its default; results
 * are filled in such a local and copied back within the caller's
 * struct_size. The code after the entry point sees only full-size structs.
 *
 *   struct hipobj_get_opts o;
 *   if ((rc = hstruct_in(op, opts, &o, err)))  // opts may be NULL
 *     return rc;
 *
 *   struct hipobj_xfer_result r;
 *   if ((rc = hstruct_out_begin(op, res, &r, err)))  // checks res
 *     return rc;
 *   ... fill r ...
 *   hstruct_out_end(res, &r);  // res may be NULL
 *
 * The macros take the library's struct by pointer: its type names the
 * struct in messages and gives its size, and a caller's pointer of another
 * type does not compile. */
#ifndef HIPOBJ_HSTRUCT_H
#define HIPOBJ_HSTRUCT_H

#include <stddef.h>

#include "hipobj.h"

/* The name of each public struct that starts with struct_size: messages
 * say "struct hipobj_get_opts" and derive its initialiser,
 * HIPOBJ_GET_OPTS_INIT, from it. A struct missing here does not compile. */
// clang-format off
#define HSTRUCT_NAME(p)                                                        \
  _Generic((p),                                                                \
    struct hipobj_client_config *: "hipobj_client_config",                     \
    struct hipobj_get_opts *: "hipobj_get_opts",                               \
    struct hipobj_put_opts *: "hipobj_put_opts",                               \
    struct hipobj_xfer_opts *: "hipobj_xfer_opts",                             \
    struct hipobj_list_opts *: "hipobj_list_opts",                             \
    struct hipobj_upload_list_opts *: "hipobj_upload_list_opts",               \
    struct hipobj_copy_opts *: "hipobj_copy_opts",                             \
    struct hipobj_xfer_result *: "hipobj_xfer_result",                         \
    struct hipobj_object_info *: "hipobj_object_info",                         \
    struct hipobj_gpu_platform_info *: "hipobj_gpu_platform_info",             \
    struct hipobj_gpu_device_info *: "hipobj_gpu_device_info")
// clang-format on

/* The caller's pointer, checked to point to the library's struct type (a
 * conditional between pointers to different structs is a warning, an
 * error under -Werror). */
#define HSTRUCT_SAME(user, lib) (1 ? (user) : (lib))

/* Copies the caller's options `user` (NULL: all defaults) into *lib:
 * HIPOBJ_OK, or HIPOBJ_E_INVALID_ARGUMENT naming the struct when
 * struct_size is 0 or smaller than the field itself, or larger than the
 * library's struct with a non-zero byte past it (an option this library
 * does not know would be ignored). */
#define hstruct_in(op, user, lib, err)                                         \
  hstruct_in_((op), HSTRUCT_NAME(lib), HSTRUCT_SAME(user, lib), (lib),         \
              sizeof *(lib), (err))
/* Checks the caller's result struct `user` (NULL passes) and zeroes *lib,
 * with its struct_size, for the call to fill. */
#define hstruct_out_begin(op, user, lib, err)                                  \
  hstruct_out_begin_((op), HSTRUCT_NAME(lib), HSTRUCT_SAME(user, lib), (lib),  \
                     sizeof *(lib), (err))
/* Copies *lib into the caller's `user` (NULL: nothing) within its
 * struct_size, keeping that struct_size; the bytes of a larger struct past
 * the library's are zeroed (fields this library cannot fill). */
#define hstruct_out_end(user, lib)                                             \
  hstruct_out_end_(HSTRUCT_SAME(user, lib), (lib), sizeof *(lib))

int hstruct_in_(const char *op, const char *name, const void *user, void *lib,
                size_t size, struct hipobj_error *err);
int hstruct_out_begin_(const char *op, const char *name, const void *user,
                       void *lib, size_t size, struct hipobj_error *err);
void hstruct_out_end_(void *user, const void *lib, size_t size);

#endif
