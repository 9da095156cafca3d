/* rc_engine_int.h - the client engine's state (struct rdma_engine), shared
 * by rc_engine.c (creation, settings, accessors) and rc_client.c (the
 * sessions, which take a slot of max_live under lock). Private to rdma/. */
#ifndef HIPOBJ_RDMA_RC_ENGINE_INT_H
#define HIPOBJ_RDMA_RC_ENGINE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "device.h"
#include "mr.h"
#include "qp.h"
#include "rc_client.h"

struct rdma_engine {
  struct rdma_dev *dev;
  struct rdma_mr_cache *cache;
  struct rdma_retired *retired;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  unsigned live, max_live;
  struct rdma_dmabuf_ops dmabuf;
  int have_dmabuf;
  double timeout, connect_timeout, cancel_timeout, grace;
  uint32_t session_max;
  int verify;
  char describe[400];
};

#endif
