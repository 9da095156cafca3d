/* test_rdma_dc_stub.c - rdma/dc.c compiled without HIPOBJ_HAVE_DC (as in a
 * build with -Ddc=disabled or without mlx5dv.h), whatever the library
 * targets were built with: every entry point exists and refuses with
 * HIPOBJ_E_UNSUPPORTED and "built without DC support", so src/ needs no
 * #ifdef. Unit suite: no device needed. */
#include <criterion/criterion.h>
#include <string.h>

#include "rdma/dc.h"
#include "src/base/error.h"

Test(rdma_dc_stub, every_call_refuses_with_the_reason) {
  cr_assert_eq(rdma_dc_built(), 0);
  struct hipobj_error err;
  memset(&err, 0, sizeof err);
  char buf[64];
  struct rdma_dc_target *t = (struct rdma_dc_target *)buf; /* must be reset */
  cr_assert_eq(rdma_dc_target_create(NULL, NULL, buf, sizeof buf, &t, &err),
               HIPOBJ_E_UNSUPPORTED);
  cr_assert_null(t);
  cr_assert_eq(err.status, HIPOBJ_E_UNSUPPORTED);
  cr_assert(strstr(err.message, "built without DC support"), "%s", err.message);
  cr_assert(strstr(err.message, "-Ddc=enabled"), "%s", err.message);

  struct rdma_dc_desc d;
  memset(&d, 0xa5, sizeof d);
  memset(&err, 0, sizeof err);
  cr_assert_eq(rdma_dc_target_describe(NULL, buf, 16, &d, &err),
               HIPOBJ_E_UNSUPPORTED);
  cr_assert(strstr(err.message, "built without DC support"), "%s", err.message);
  cr_assert_eq(d.dctn, 0, "descriptor not cleared");
  cr_assert_eq(d.rkey, 0, "descriptor not cleared");

  cr_assert_eq(rdma_dc_target_destroy(NULL), 0);
  cr_assert_str_eq(rdma_dc_target_device(NULL), "");
  cr_assert_eq(rdma_dc_live_count(), 0);
  /* err may be NULL, as everywhere. */
  cr_assert_eq(rdma_dc_target_create(NULL, NULL, buf, 1, &t, NULL),
               HIPOBJ_E_UNSUPPORTED);
}
