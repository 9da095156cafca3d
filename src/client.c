/* client.c - client lifecycle: resolves the configuration, parses the
 * endpoint, starts the HTTP engine and sets up the (lazily filled) pool of
 * pinned staging chunks for GPU memory. A client is immutable after
 * creation, apart from that internally locked pool, which is what makes it
 * safe to share between threads. */
#include <stdlib.h>
#include <string.h>

#include "base/cpus.h"
#include "client_int.h"
#include "engine.h"
#include "hstruct.h"
#include "mem_file.h"
#include "rdma_glue.h"
#include "rdma_gpu.h"
#include "staging.h"

int hipobj_client_create(const struct hipobj_client_config *cfg,
                         struct hipobj_client **out, struct hipobj_error *err) {
  const char *op = "CreateClient";
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "out is NULL");
  *out = NULL;
  struct hipobj_client_config in;
  int rc = hstruct_in(op, cfg, &in, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct hipobj_client *c = calloc(1, sizeof *c);
  if (!c)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  pthread_mutex_init(&c->async_lock, NULL);
  s3_sigv4_key_cache_init(&c->sign_cache);
  pthread_mutex_init(&c->hash_lock, NULL);
  rc = hcfg_resolve(&in, NULL, &c->cfg, err);
  if (rc != HIPOBJ_OK) {
    free(c);
    return rc;
  }
  hlog_init(&c->log, in.log_level, in.log_fn, in.log_user);

  rc = herr_op(
      err, op,
      s3_endpoint_parse(c->cfg.endpoint_url, c->cfg.addressing, &c->ep, err));
  if (rc != HIPOBJ_OK)
    goto fail;
  struct s3_http_config hc = {
      .connect_timeout_ms = c->cfg.connect_timeout_ms,
      .request_timeout_ms = c->cfg.request_timeout_ms,
      .stall_timeout_ms = c->cfg.stall_timeout_ms,
      .low_speed_bytes_per_s = c->cfg.low_speed_bytes_per_s,
      .max_connections = c->cfg.max_connections,
      .io_threads = c->cfg.io_threads,
      .busy_poll_us = c->cfg.busy_poll_us,
      .busy_pollers = hcpu_usable() / 2,
      .wire = c->cfg.http_wire,
      .tls_skip_verify = c->cfg.tls_skip_verify,
      .ca_bundle = c->cfg.ca_bundle,
      .log = &c->log,
  };
  /* File copies: a thread per part in flight at most, shared by every
   * transfer (mem_file.c). */
  unsigned fthreads = c->cfg.concurrency < 2    ? 2
                      : c->cfg.concurrency > 64 ? 64
                                                : c->cfg.concurrency;
  if (hstage_pool_create(c->cfg.staging_pool_bytes, c->cfg.staging_chunk_bytes,
                         &c->stage_pool) != 0 ||
      !(c->fileq = hfileq_create(fthreads))) {
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
    goto fail;
  }
  rc = herr_op(err, op, s3_http_create(&hc, &c->http, err));
  if (rc != HIPOBJ_OK)
    goto fail;
  if (hsched_create(c, &c->sched) != 0) {
    s3_http_destroy(c->http);
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
    goto fail;
  }
  hstage_pool_on_give(c->stage_pool, hsched_pump_cb, c->sched);
  if (c->cfg.tls_skip_verify)
    HLOG_WARN(&c->log, "TLS certificate verification is disabled");
  HLOG_INFO(&c->log,
            "client for %s (region %s, %s-style, credentials from %s, %u I/O "
            "thread%s)",
            c->cfg.endpoint_url, c->cfg.region,
            c->ep.virtual_hosted ? "virtual-hosted" : "path",
            c->cfg.anonymous ? "nowhere (anonymous)" : c->cfg.creds_source,
            c->cfg.io_threads, c->cfg.io_threads == 1 ? "" : "s");
  hipobj_error_clear(err);
  *out = c;
  return HIPOBJ_OK;
fail:
  hfileq_destroy(c->fileq);
  hstage_pool_destroy(c->stage_pool);
  s3_endpoint_free(&c->ep);
  hcfg_free(&c->cfg);
  s3_sigv4_key_cache_destroy(&c->sign_cache);
  free(c);
  return rc;
}

void hipobj_client_free(struct hipobj_client *c) {
  if (!c)
    return;
  hsched_destroy(c->sched);
  hreq_hash_pool_destroy(c);
  hrdma_gpu_client_destroy(c); /* before the engines they belong to */
  hrdma_client_destroy(c);
  s3_http_destroy(c->http);
  hfileq_destroy(c->fileq);
  hstage_pool_destroy(c->stage_pool);
  s3_endpoint_free(&c->ep);
  hcfg_free(&c->cfg);
  pthread_mutex_destroy(&c->async_lock);
  pthread_mutex_destroy(&c->hash_lock);
  s3_sigv4_key_cache_destroy(&c->sign_cache);
  free(c);
}

const char *hipobj_client_endpoint(const struct hipobj_client *c) {
  return c ? c->cfg.endpoint_url : "";
}

const char *hipobj_client_region(const struct hipobj_client *c) {
  return c ? c->cfg.region : "";
}
