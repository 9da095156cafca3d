/* endpoint.c - facts the endpoint showed, each with the time it was learnt
 * and forgotten after HENDPOINT_TTL_S (endpoint.h): a server that declined
 * RDMA may be reconfigured, so the decline is not kept forever, but within
 * the window a GET of known size costs the same requests as with RDMA off. */
#include "endpoint.h"

#include "client_int.h"

static uint64_t now_ms(void) {
  return (uint64_t)(hnow_seconds() * 1000.0) + 1;
}

int hendpoint_rdma_declined(struct hipobj_client *c) {
  uint64_t at = __atomic_load_n(&c->facts.rdma_declined_ms, __ATOMIC_RELAXED);
  return at && now_ms() - at < (uint64_t)(HENDPOINT_TTL_S * 1000);
}

void hendpoint_note_rdma_declined(struct hipobj_client *c) {
  __atomic_store_n(&c->facts.rdma_declined_ms, now_ms(), __ATOMIC_RELAXED);
  HLOG_INFO(&c->log, "the endpoint declined RDMA: HTTP for %.0f s",
            HENDPOINT_TTL_S);
}
