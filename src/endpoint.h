/* endpoint.h - what the client's endpoint has shown, remembered for a
 * bounded time (docs/engine.md): RDMA declined, so that later transfers do
 * not ask again; the `mp` capability; CRC32C checked. One endpoint per
 * client, so the facts live in the client (c->facts). Thread-safe: each
 * fact is one atomic word. */
#ifndef HIPOBJ_ENDPOINT_H
#define HIPOBJ_ENDPOINT_H

#include <stdint.h>

/* How long a fact holds before the endpoint is asked again. */
#define HENDPOINT_TTL_S 300.0

/* Each fact is the monotonic millisecond (+1) it was learnt, 0: unknown. */
struct hendpoint_facts {
  uint64_t rdma_declined_ms; /* PREPARE answered 501 / no such route */
  uint64_t rdma_mp_ms;       /* PREPARE's reply advertised parts (mp) */
  uint64_t rdma_no_mp_ms;    /* ... or did not */
  uint64_t crc32c_ms;        /* an answer echoed a CRC32C we sent */
};

/* Non-zero while a decline of RDMA is remembered. */
int hendpoint_rdma_declined(struct hendpoint_facts *f);
void hendpoint_note_rdma_declined(struct hendpoint_facts *f);
/* What is known of the `mp` capability: 1 advertised, 0 not advertised, -1
 * unknown (then a part may ask: its PREPARE's reply tells). */
int hendpoint_rdma_mp(struct hendpoint_facts *f);
void hendpoint_note_rdma_mp(struct hendpoint_facts *f, int mp);
/* Whether the server checks CRC32C checksums (it echoed one). */
int hendpoint_crc32c(struct hendpoint_facts *f);
void hendpoint_note_crc32c(struct hendpoint_facts *f);

#endif
