/* rc_async.h - the blocking transfers of rc_client.h on a thread of their
 * own, for callers that run several sessions at once without a thread pool
 * of their own: the protocol tests. Not part of libhipobj (the library runs
 * its parts on its own threads, src/rdma_parts.c): rc_async.c is built into
 * the internal library hipobj-server-int, which only hipobj-server and the
 * tests link. */
#ifndef HIPOBJ_RDMA_RC_ASYNC_H
#define HIPOBJ_RDMA_RC_ASYNC_H

#include "rc_client.h"

/* rdma_rc_get (is_put 0) or rdma_rc_put on a new thread: returns at once;
 * rdma_rc_join() waits and returns the status (rq and what it points to
 * must stay valid until then; res and err are filled when join returns).
 * Starting fails with HIPOBJ_E_OUT_OF_MEMORY. */
struct rdma_rc_async;
int rdma_rc_start(struct rdma_engine *e, int is_put,
                  const struct rdma_rc_request *rq, struct rdma_rc_result *res,
                  struct hipobj_error *err, struct rdma_rc_async **out);
int rdma_rc_join(struct rdma_rc_async *a);

#endif
