/* rc_async.c - the blocking hipobj-rc-v2 transfers of rc_client.c on a
 * thread of their own (rdma_rc_start / rdma_rc_join, rc_async.h), for
 * callers that run several sessions at once without a thread pool of their
 * own: the tests. Built into hipobj-server-int, not libhipobj. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/error.h"
#include "rc_async.h"

struct rdma_rc_async {
  pthread_t th;
  struct rdma_engine *e;
  int is_put, rc;
  const struct rdma_rc_request *rq;
  struct rdma_rc_result *res;
  struct hipobj_error *err;
};

static void *async_main(void *arg) {
  struct rdma_rc_async *a = arg;
  a->rc = a->is_put ? rdma_rc_put(a->e, a->rq, a->res, a->err)
                    : rdma_rc_get(a->e, a->rq, a->res, a->err);
  return NULL;
}

int rdma_rc_start(struct rdma_engine *e, int is_put,
                  const struct rdma_rc_request *rq, struct rdma_rc_result *res,
                  struct hipobj_error *err, struct rdma_rc_async **out) {
  struct rdma_rc_async *a = calloc(1, sizeof *a);
  if (!a)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "RDMA", "out of memory");
  *a = (struct rdma_rc_async){
      .e = e, .is_put = is_put, .rq = rq, .res = res, .err = err};
  int r = pthread_create(&a->th, NULL, async_main, a);
  if (r != 0) {
    free(a);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "RDMA", "pthread_create: %s",
                    strerror(r));
  }
  *out = a;
  return HIPOBJ_OK;
}

int rdma_rc_join(struct rdma_rc_async *a) {
  pthread_join(a->th, NULL);
  int rc = a->rc;
  free(a);
  return rc;
}
