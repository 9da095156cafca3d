/* rc_engine.c - the hipobj-rc-v2 client engine (see rc_client.h): opens
 * the RDMA device once per client, owns its registration cache and the
 * retired-QP list, and holds the timeouts and limits every session reads.
 * The sessions themselves are in rc_client.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/base/error.h"
#include "rc_engine_int.h"

static double secs(unsigned ms, unsigned dflt_ms) {
  return (ms ? ms : dflt_ms) / 1000.0;
}

int rdma_engine_create(const struct rdma_engine_opts *o,
                       struct rdma_engine **out, struct hipobj_error *err) {
  static const struct rdma_engine_opts defaults = RDMA_ENGINE_OPTS_INIT;
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "RDMA", "no output");
  *out = NULL;
  if (!o)
    o = &defaults;
  struct rdma_engine *e = calloc(1, sizeof *e);
  if (!e)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "RDMA", "out of memory");
  struct rdma_dev_cfg dc = {.device = o->device,
                            .port = o->port,
                            .gid_index = o->gid_index,
                            .gpu_busid = o->gpu_busid,
                            .use_environ = 1,
                            .mtu = o->mtu};
  int rc = rdma_dev_open(&dc, &e->dev, err);
  if (rc != HIPOBJ_OK) {
    free(e);
    return rc;
  }
  /* Cached registrations serve as GET destinations: REMOTE_WRITE, never
   * REMOTE_READ (§6.4: no peer reads client memory). */
  struct rdma_mr_cache_opts co = {.access = RDMA_MR_LOCAL_WRITE |
                                            RDMA_MR_REMOTE_WRITE};
  if ((rc = rdma_mr_cache_create(rdma_dev_pd(e->dev), &co, &e->cache, err)) !=
      HIPOBJ_OK)
    goto fail;
  if (rdma_retired_create(o->retired_capacity, 0, &e->retired) != 0 ||
      pthread_mutex_init(&e->lock, NULL) != 0) {
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "RDMA", "out of memory");
    goto fail;
  }
  pthread_cond_init(&e->cond, NULL);
  e->max_live = o->max_live ? o->max_live : 64;
  e->timeout = secs(o->timeout_ms, 60000);
  e->connect_timeout = secs(o->connect_timeout_ms, 10000);
  e->cancel_timeout = secs(o->cancel_timeout_ms, 1000);
  e->grace = secs(o->put_grace_ms, 100);
  uint32_t max = rdma_dev_max_msg(e->dev);
  e->session_max = max < RDMA_SIZE_MAX ? max : RDMA_SIZE_MAX;
  if (o->max_session_bytes && o->max_session_bytes < e->session_max)
    e->session_max = o->max_session_bytes;
  e->verify = o->verify_checksum >= 0;
  snprintf(e->describe, sizeof e->describe, "%s, max %u bytes per session",
           rdma_dev_reason(e->dev), e->session_max);
  *out = e;
  return HIPOBJ_OK;
fail:
  rdma_mr_cache_destroy(e->cache);
  rdma_retired_destroy(e->retired);
  rdma_dev_close(e->dev);
  free(e);
  return rc;
}

void rdma_engine_destroy(struct rdma_engine *e) {
  if (!e)
    return;
  rdma_mr_cache_destroy(e->cache);
  rdma_retired_destroy(e->retired);
  rdma_dev_close(e->dev);
  pthread_cond_destroy(&e->cond);
  pthread_mutex_destroy(&e->lock);
  free(e);
}

struct ibv_pd *rdma_engine_pd(struct rdma_engine *e) {
  return rdma_dev_pd(e->dev);
}
struct rdma_mr_cache *rdma_engine_mr_cache(struct rdma_engine *e) {
  return e->cache;
}
uint32_t rdma_engine_session_max(const struct rdma_engine *e) {
  return e->session_max;
}
const char *rdma_engine_describe(const struct rdma_engine *e) {
  return e->describe;
}

void rdma_engine_set_dmabuf(struct rdma_engine *e,
                            const struct rdma_dmabuf_ops *ops) {
  pthread_mutex_lock(&e->lock);
  e->have_dmabuf = ops != NULL;
  if (ops)
    e->dmabuf = *ops;
  pthread_mutex_unlock(&e->lock);
  rdma_mr_cache_set_dmabuf(e->cache, ops);
}
