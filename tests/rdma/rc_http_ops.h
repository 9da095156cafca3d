/* rc_http_ops.h - struct rdma_control_ops over real HTTP for the tests that
 * run the client engine against hipobj-server: each control request is a
 * SigV4-signed POST with Content-Length: 0 signed too (§3.3), on a
 * connection of its own (tests/server/harness.c http_send), READY on a
 * thread so the data phase runs while the server holds FINAL. It follows
 * the contract of rdma/rc_client.h to the letter, as a model for src/. */
#ifndef HIPOBJ_TESTS_RC_HTTP_OPS_H
#define HIPOBJ_TESTS_RC_HTTP_OPS_H

#include <stdatomic.h>

#include "rdma/rc_client.h"

struct http_ops {
  const char *url;      /* http://127.0.0.1:PORT */
  int unsigned_payload; /* 1: UNSIGNED-PAYLOAD, 0: SHA-256 of "" */
  atomic_int threads;   /* READY threads still running */
  atomic_int prepares, readies, cancels;
  struct rdma_control_ops ops;
};

void http_ops_init(struct http_ops *h, const char *url);
/* Waits (bounded) until no READY thread runs any more. */
void http_ops_drain(struct http_ops *h);

#endif
