/* xfer.c - transfers as objects: the asynchronous API (start, wait, poll,
 * cancel, progress and completion callbacks) and the blocking GET/PUT calls,
 * which run the same transfer to completion on the caller's thread.
 * Asynchronous transfers are driven by a small per-client pool of threads
 * (created on first use); the HTTP work itself always happens on the
 * client's I/O thread, so many parts are in flight whatever drives them. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/strutil.h"
#include "base/workq.h"
#include "client_int.h"
#include "gpu.h"
#include "ops.h"

#define POOL_MAX_THREADS 16u

enum xfer_kind { XFER_GET, XFER_PUT };

struct hipobj_xfer {
  struct hxctl ctl; /* first: cancellation and progress */
  enum xfer_kind kind;
  char *bucket, *key;
  struct hipobj_mem mem;
  struct hipobj_get_opts gopts;
  struct hipobj_put_opts popts;
  char *if_match, *content_type; /* owned copies of the options' strings */
  hipobj_xfer_done_fn done;
  void *user;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int finished;    /* result final */
  int callback_ok; /* the completion callback has returned */
  int status;
  struct hipobj_error err;
  struct hipobj_xfer_result res;
  double t0;
  struct hworkq_item qitem; /* in the client's transfer-thread queue */
};

/* ---- running one transfer ------------------------------------------------ */

static void xfer_run(struct hipobj_xfer *x) {
  struct hipobj_client *c = x->ctl.client;
  x->res.struct_size = sizeof x->res;
  if (x->ctl.cancel)
    x->status = herr_set(&x->err, HIPOBJ_E_CANCELLED,
                         x->kind == XFER_GET ? "GetObject" : "PutObject",
                         "cancelled before it started");
  else if (x->kind == XFER_GET)
    x->status = hops_get(c, x->bucket, x->key, &x->mem, &x->gopts, &x->ctl,
                         &x->res, &x->err);
  else
    x->status = hops_put(c, x->bucket, x->key, &x->mem, &x->popts, &x->ctl,
                         &x->res, &x->err);
  x->res.seconds = hnow_seconds() - x->t0;
  if (x->status == HIPOBJ_OK) {
    hipobj_error_clear(&x->err);
    /* The last report says everything arrived. */
    hxctl_report(&x->ctl, x->res.bytes, x->res.bytes);
  }
  pthread_mutex_lock(&x->lock);
  x->finished = 1;
  pthread_cond_broadcast(&x->cond);
  pthread_mutex_unlock(&x->lock);
  if (x->done)
    x->done(x, x->status, x->user);
  pthread_mutex_lock(&x->lock);
  x->callback_ok = 1;
  pthread_cond_broadcast(&x->cond);
  pthread_mutex_unlock(&x->lock);
}

static void pool_run(struct hworkq_item *it) {
  xfer_run(
      (struct hipobj_xfer *)((char *)it - offsetof(struct hipobj_xfer, qitem)));
}

static int pool_submit(struct hipobj_client *c, struct hipobj_xfer *x,
                       struct hipobj_error *err) {
  pthread_mutex_lock(&c->async_lock);
  if (!c->async_pool)
    c->async_pool = hworkq_create(POOL_MAX_THREADS, pool_run);
  struct hworkq *q = c->async_pool;
  pthread_mutex_unlock(&c->async_lock);
  if (!q)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "StartTransfer",
                    "out of memory");
  /* A thread per waiting transfer, up to the cap; beyond it transfers
   * queue (each one already keeps `concurrency` requests in flight). */
  if (hworkq_push(q, &x->qitem) != 0)
    return herr_set(err, HIPOBJ_E_INTERNAL, "StartTransfer",
                    "cannot start a transfer thread");
  return HIPOBJ_OK;
}

void hxfer_pool_destroy(struct hipobj_client *c) {
  hworkq_destroy(c->async_pool);
  c->async_pool = NULL;
}

/* ---- creating transfers ----------------------------------------------------
 */

static void xfer_free_fields(struct hipobj_xfer *x) {
  free(x->bucket);
  free(x->key);
  free(x->if_match);
  free(x->content_type);
  pthread_cond_destroy(&x->cond);
  pthread_mutex_destroy(&x->lock);
  hxctl_destroy(&x->ctl);
}

/* Checks the common arguments and fills x (on the stack or the heap). */
static int xfer_init(struct hipobj_xfer *x, enum xfer_kind kind,
                     struct hipobj_client *c, const char *bucket,
                     const char *key, const struct hipobj_mem *mem,
                     const struct hipobj_xfer_opts *xopts,
                     struct hipobj_error *err) {
  const char *op = kind == XFER_GET ? "GetObject" : "PutObject";
  int rc;
  memset(x, 0, sizeof *x);
  x->t0 = hnow_seconds();
  if (!c)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "client is NULL");
  if ((rc = hcheck_bucket_key(op, bucket, key, 1, err)) ||
      (rc = hcheck_mem(op, mem, err)))
    return rc;
  if (xopts && xopts->struct_size < sizeof *xopts)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "transfer options struct_size is too small; use "
                    "HIPOBJ_XFER_OPTS_INIT");
  /* GPU memory: refuse a missing runtime or a bad pointer up front, before
   * anything (a multipart upload) is created on the server. */
  const struct hgpu_ops *ops;
  if (mem->kind != HIPOBJ_MEM_HOST &&
      (rc = hgpu_check_mem_dir(op, mem,
                               kind == XFER_GET ? HGPU_WRITE : HGPU_READ,
                               &c->log, &ops, err)) != HIPOBJ_OK)
    return rc;
  x->kind = kind;
  x->ctl.client = c;
  x->mem = *mem;
  x->bucket = strdup(bucket);
  x->key = strdup(key);
  pthread_mutex_init(&x->lock, NULL);
  pthread_cond_init(&x->cond, NULL);
  hxctl_init(&x->ctl);
  if (xopts) {
    x->done = xopts->done;
    x->user = xopts->user;
    x->ctl.progress = xopts->progress;
    x->ctl.user = xopts->user;
  }
  if (!x->bucket || !x->key) {
    xfer_free_fields(x);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  }
  return HIPOBJ_OK;
}

static int init_get(struct hipobj_xfer *x, struct hipobj_client *c,
                    const char *bucket, const char *key,
                    const struct hipobj_mem *dst,
                    const struct hipobj_get_opts *opts,
                    const struct hipobj_xfer_opts *xopts,
                    struct hipobj_error *err) {
  if (opts && opts->struct_size < sizeof *opts) {
    memset(x, 0, sizeof *x);
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "GetObject",
                    "options struct_size is too small; use "
                    "HIPOBJ_GET_OPTS_INIT");
  }
  int rc = xfer_init(x, XFER_GET, c, bucket, key, dst, xopts, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (opts)
    x->gopts = *opts;
  x->gopts.struct_size = sizeof x->gopts;
  if (opts && opts->if_match &&
      !(x->gopts.if_match = x->if_match = strdup(opts->if_match))) {
    xfer_free_fields(x);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "GetObject", "out of memory");
  }
  return HIPOBJ_OK;
}

static int init_put(struct hipobj_xfer *x, struct hipobj_client *c,
                    const char *bucket, const char *key,
                    const struct hipobj_mem *src,
                    const struct hipobj_put_opts *opts,
                    const struct hipobj_xfer_opts *xopts,
                    struct hipobj_error *err) {
  if (opts && opts->struct_size < sizeof *opts) {
    memset(x, 0, sizeof *x);
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "PutObject",
                    "options struct_size is too small; use "
                    "HIPOBJ_PUT_OPTS_INIT");
  }
  int rc = xfer_init(x, XFER_PUT, c, bucket, key, src, xopts, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (opts)
    x->popts = *opts;
  x->popts.struct_size = sizeof x->popts;
  if (opts && opts->content_type &&
      !(x->popts.content_type = x->content_type = strdup(opts->content_type))) {
    xfer_free_fields(x);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "PutObject", "out of memory");
  }
  return HIPOBJ_OK;
}

/* Copies a finished transfer's outcome to the caller. */
static int xfer_result(const struct hipobj_xfer *x,
                       struct hipobj_xfer_result *res,
                       struct hipobj_error *err) {
  if (res) {
    size_t size = res->struct_size;
    memcpy(res, &x->res, sizeof *res);
    res->struct_size = size;
  }
  if (x->status == HIPOBJ_OK)
    hipobj_error_clear(err);
  else
    herr_copy(err, &x->err);
  return x->status;
}

/* ---- the blocking calls: one transfer, run here ------------------------- */

int hipobj_s3_get(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *dst,
                  const struct hipobj_get_opts *opts,
                  struct hipobj_xfer_result *res, struct hipobj_error *err) {
  int rc = hops_check_result("GetObject", res, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct hipobj_xfer x;
  if ((rc = init_get(&x, c, bucket, key, dst, opts, NULL, err)) != HIPOBJ_OK)
    return rc;
  xfer_run(&x);
  rc = xfer_result(&x, res, err);
  xfer_free_fields(&x);
  return rc;
}

int hipobj_s3_put(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *src,
                  const struct hipobj_put_opts *opts,
                  struct hipobj_xfer_result *res, struct hipobj_error *err) {
  int rc = hops_check_result("PutObject", res, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct hipobj_xfer x;
  if ((rc = init_put(&x, c, bucket, key, src, opts, NULL, err)) != HIPOBJ_OK)
    return rc;
  xfer_run(&x);
  rc = xfer_result(&x, res, err);
  xfer_free_fields(&x);
  return rc;
}

/* ---- the asynchronous API
 * ---------------------------------------------------- */

/* Hands a heap transfer (initialised) to the pool. */
static int start(struct hipobj_xfer *h, struct hipobj_xfer **out,
                 struct hipobj_error *err) {
  int rc = pool_submit(h->ctl.client, h, err);
  if (rc != HIPOBJ_OK) {
    xfer_free_fields(h);
    free(h);
    return rc;
  }
  *out = h;
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}

int hipobj_s3_get_start(struct hipobj_client *c, const char *bucket,
                        const char *key, const struct hipobj_mem *dst,
                        const struct hipobj_get_opts *opts,
                        const struct hipobj_xfer_opts *xopts,
                        struct hipobj_xfer **out, struct hipobj_error *err) {
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "GetObject", "out is NULL");
  *out = NULL;
  struct hipobj_xfer *x = malloc(sizeof *x);
  if (!x)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "GetObject", "out of memory");
  int rc = init_get(x, c, bucket, key, dst, opts, xopts, err);
  if (rc != HIPOBJ_OK) {
    free(x);
    return rc;
  }
  return start(x, out, err);
}

int hipobj_s3_put_start(struct hipobj_client *c, const char *bucket,
                        const char *key, const struct hipobj_mem *src,
                        const struct hipobj_put_opts *opts,
                        const struct hipobj_xfer_opts *xopts,
                        struct hipobj_xfer **out, struct hipobj_error *err) {
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "PutObject", "out is NULL");
  *out = NULL;
  struct hipobj_xfer *x = malloc(sizeof *x);
  if (!x)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "PutObject", "out of memory");
  int rc = init_put(x, c, bucket, key, src, opts, xopts, err);
  if (rc != HIPOBJ_OK) {
    free(x);
    return rc;
  }
  return start(x, out, err);
}

int hipobj_xfer_wait(struct hipobj_xfer *x, struct hipobj_xfer_result *res,
                     struct hipobj_error *err) {
  if (!x)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "WaitTransfer",
                    "transfer is NULL");
  if (res && res->struct_size < sizeof *res)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "WaitTransfer",
                    "result struct_size is too small; use "
                    "HIPOBJ_XFER_RESULT_INIT");
  pthread_mutex_lock(&x->lock);
  while (!x->finished)
    pthread_cond_wait(&x->cond, &x->lock);
  pthread_mutex_unlock(&x->lock);
  return xfer_result(x, res, err);
}

int hipobj_xfer_done(struct hipobj_xfer *x) {
  if (!x)
    return 1;
  pthread_mutex_lock(&x->lock);
  int done = x->finished && x->callback_ok;
  pthread_mutex_unlock(&x->lock);
  return done;
}

void hipobj_xfer_cancel(struct hipobj_xfer *x) {
  if (!x)
    return;
  x->ctl.cancel = 1;
  /* Requests waiting for data notice at the I/O thread's next pass. */
  s3_http_wakeup(x->ctl.client->http);
}

void hipobj_xfer_free(struct hipobj_xfer *x) {
  if (!x)
    return;
  pthread_mutex_lock(&x->lock);
  int running = !x->finished;
  pthread_mutex_unlock(&x->lock);
  if (running)
    hipobj_xfer_cancel(x);
  pthread_mutex_lock(&x->lock);
  while (!x->finished || !x->callback_ok)
    pthread_cond_wait(&x->cond, &x->lock);
  pthread_mutex_unlock(&x->lock);
  xfer_free_fields(x);
  free(x);
}
