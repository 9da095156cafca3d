/* hstruct.c - the struct_size rule (hstruct.h): structs of any version of
 * the header, older or newer than the library, the way the Linux kernel's
 * copy_struct_from_user() and copy_struct_to_user() take them. */
#include "hstruct.h"

#include <ctype.h>
#include <string.h>

#include "base/error.h"

/* A struct starts with its size_t struct_size; the library's struct,
 * always at least that large, has the field at offset 0. */
static size_t user_size(const void *user) {
  size_t n;
  memcpy(&n, user, sizeof n);
  return n;
}

/* "HIPOBJ_GET_OPTS_INIT" from "hipobj_get_opts". */
static void init_name(const char *name, char *out, size_t n) {
  size_t i = 0;
  for (; name[i] && i + sizeof "_INIT" < n; i++)
    out[i] = (char)toupper((unsigned char)name[i]);
  memcpy(out + i, "_INIT", sizeof "_INIT");
}

/* The checks common to both directions. */
static int check_size(const char *op, const char *name, size_t have,
                      struct hipobj_error *err) {
  char init[64];
  init_name(name, init, sizeof init);
  if (have == 0)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "struct %s has struct_size 0: initialise it with %s", name,
                    init);
  if (have < sizeof(size_t))
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "struct %s has struct_size %zu, smaller than the "
                    "struct_size field itself: initialise it with %s",
                    name, have, init);
  return HIPOBJ_OK;
}

int hstruct_in_(const char *op, const char *name, const void *user, void *lib,
                size_t size, struct hipobj_error *err) {
  memset(lib, 0, size);
  memcpy(lib, &size, sizeof size);
  if (!user)
    return HIPOBJ_OK;
  size_t have = user_size(user);
  int rc = check_size(op, name, have, err);
  if (rc != HIPOBJ_OK)
    return rc;
  /* A newer program's struct: what this library does not know must be
   * unset (zero), else the caller asked for something it would ignore. */
  const unsigned char *tail = (const unsigned char *)user;
  for (size_t i = size; i < have; i++)
    if (tail[i])
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "struct %s has struct_size %zu and a non-zero byte at "
                      "offset %zu, past the %zu bytes this library knows "
                      "(version %s): a field it does not have is set",
                      name, have, i, size, hipobj_version());
  /* An older program's struct: the fields it has; the rest stay zero. A
   * size no header produced, ending inside a field, gives that field the
   * bytes it covers. */
  memcpy((char *)lib + sizeof have, (const char *)user + sizeof have,
         (have < size ? have : size) - sizeof have);
  return HIPOBJ_OK;
}

int hstruct_out_begin_(const char *op, const char *name, const void *user,
                       void *lib, size_t size, struct hipobj_error *err) {
  memset(lib, 0, size);
  memcpy(lib, &size, sizeof size);
  return user ? check_size(op, name, user_size(user), err) : HIPOBJ_OK;
}

void hstruct_out_end_(void *user, const void *lib, size_t size) {
  if (!user)
    return;
  size_t have = user_size(user);
  if (have < sizeof have)
    return; /* refused by hstruct_out_begin_ */
  size_t n = have < size ? have : size;
  memcpy((char *)user + sizeof have, (const char *)lib + sizeof have,
         n - sizeof have);
  /* A newer program's struct: the fields this library cannot fill read as
   * zero ("unknown"), whatever the struct held before. Unlike options, a
   * result's old contents are never refused: a caller may hand in a struct
   * that only struct_size initialises. */
  if (have > size)
    memset((char *)user + size, 0, have - size);
}
