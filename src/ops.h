/* ops.h - what the operation files share: the check of a caller's result
 * struct. */
#ifndef HIPOBJ_OPS_H
#define HIPOBJ_OPS_H

#include "hipobj.h"

/* Validates and zeroes a caller's result struct (NULL allowed). */
int hops_check_result(const char *op, struct hipobj_xfer_result *res,
                      struct hipobj_error *err);

#endif
