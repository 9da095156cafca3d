/* endpoint.c - facts the endpoint showed, each with the time it was learnt
 * and forgotten after HENDPOINT_TTL_S (endpoint.h): a server that declined
 * RDMA may be reconfigured, so the decline is not kept forever, but within
 * the window a GET of known size costs the same requests as with RDMA off. */
#include "endpoint.h"

#include <time.h>

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 + 1;
}

/* Whether the fact learnt at `at` still holds. */
static int fresh(const uint64_t *at) {
  uint64_t t = __atomic_load_n(at, __ATOMIC_RELAXED);
  return t && now_ms() - t < (uint64_t)(HENDPOINT_TTL_S * 1000);
}

static void note(uint64_t *at) {
  __atomic_store_n(at, now_ms(), __ATOMIC_RELAXED);
}

int hendpoint_rdma_declined(struct hendpoint_facts *f) {
  return fresh(&f->rdma_declined_ms);
}

int hendpoint_rdma_mp(struct hendpoint_facts *f) {
  int yes = fresh(&f->rdma_mp_ms), no = fresh(&f->rdma_no_mp_ms);
  if (yes && no) /* both within the window: the later answer counts */
    return f->rdma_mp_ms > f->rdma_no_mp_ms;
  return yes ? 1 : no ? 0 : -1;
}

void hendpoint_note_rdma_mp(struct hendpoint_facts *f, int mp) {
  note(mp ? &f->rdma_mp_ms : &f->rdma_no_mp_ms);
}

int hendpoint_crc32c(struct hendpoint_facts *f) {
  return fresh(&f->crc32c_ms);
}

void hendpoint_note_crc32c(struct hendpoint_facts *f) {
  note(&f->crc32c_ms);
}

void hendpoint_note_rdma_declined(struct hendpoint_facts *f) {
  note(&f->rdma_declined_ms);
}
