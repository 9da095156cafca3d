/* endpoint.c - facts the endpoint showed, each with the time it was learnt
 * and forgotten after HENDPOINT_TTL_S (endpoint.h): a server that declined
 * RDMA may be reconfigured, so the decline is not kept forever, but within
 * the window a GET of known size costs the same requests as with RDMA off. */
#include "endpoint.h"

#include "client_int.h"

static uint64_t now_ms(void) {
  return (uint64_t)(hnow_seconds() * 1000.0) + 1;
}

/* Whether the fact learnt at `at` still holds. */
static int fresh(const uint64_t *at) {
  uint64_t t = __atomic_load_n(at, __ATOMIC_RELAXED);
  return t && now_ms() - t < (uint64_t)(HENDPOINT_TTL_S * 1000);
}

static void note(uint64_t *at) {
  __atomic_store_n(at, now_ms(), __ATOMIC_RELAXED);
}

int hendpoint_rdma_declined(struct hipobj_client *c) {
  return fresh(&c->facts.rdma_declined_ms);
}

int hendpoint_rdma_mp(struct hipobj_client *c) {
  int yes = fresh(&c->facts.rdma_mp_ms), no = fresh(&c->facts.rdma_no_mp_ms);
  if (yes && no) /* both within the window: the later answer counts */
    return c->facts.rdma_mp_ms > c->facts.rdma_no_mp_ms;
  return yes ? 1 : no ? 0 : -1;
}

void hendpoint_note_rdma_mp(struct hipobj_client *c, int mp) {
  note(mp ? &c->facts.rdma_mp_ms : &c->facts.rdma_no_mp_ms);
}

int hendpoint_crc32c(struct hipobj_client *c) {
  return fresh(&c->facts.crc32c_ms);
}

void hendpoint_note_crc32c(struct hipobj_client *c) {
  note(&c->facts.crc32c_ms);
}

void hendpoint_note_rdma_declined(struct hipobj_client *c) {
  note(&c->facts.rdma_declined_ms);
  HLOG_INFO(&c->log, "the endpoint declined RDMA: HTTP for %.0f s",
            HENDPOINT_TTL_S);
}
