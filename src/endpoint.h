/* endpoint.h - what the client's endpoint has shown, remembered for a
 * bounded time (docs/engine.md): RDMA declined, so that later transfers do
 * not ask again; the `mp` capability; CRC32C checked. One endpoint per
 * client, so the facts live in the client. Thread-safe. */
#ifndef HIPOBJ_ENDPOINT_H
#define HIPOBJ_ENDPOINT_H

#include <stdint.h>

struct hipobj_client;

/* How long a fact holds before the endpoint is asked again. */
#define HENDPOINT_TTL_S 300.0

struct hendpoint_facts {
  uint64_t rdma_declined_ms; /* monotonic milliseconds + 1, 0: never */
};

/* Non-zero while a decline of RDMA is remembered. */
int hendpoint_rdma_declined(struct hipobj_client *c);
void hendpoint_note_rdma_declined(struct hipobj_client *c);

#endif
