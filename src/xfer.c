/* xfer.c - the public GET and PUT calls on the engine: the blocking calls
 * start a job on the client's scheduler and sleep until it ends; the
 * asynchronous API (start, wait, poll, cancel, progress and completion
 * callbacks) keeps the job in a struct hipobj_xfer. No thread is made per
 * transfer: the job's parts run on the HTTP engine's I/O threads and the
 * scheduler's workers, and the completion callback runs on a worker. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/strutil.h"
#include "base/workq.h"
#include "client_int.h"
#include "engine.h"
#include "gpu.h"
#include "hstruct.h"
#include "jobs.h"
#include "mem.h"

enum xfer_kind { XFER_GET, XFER_PUT };

struct hipobj_xfer {
  struct hxctl ctl; /* cancellation and progress */
  struct hjob job;
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
  struct htask cb_task; /* the completion callback, on a worker */
};

/* ---- cancellation tokens --------------------------------------------------
 */

/* Nothing wakes the I/O threads when a token is set (it knows no client):
 * a request in flight sees it at libcurl's next progress call, which comes
 * at least once a second because stall detection is always on (its
 * low-speed check runs on a one-second timer); a part not started sees it
 * at the scheduler's next turn. */
struct hipobj_cancel {
  volatile int set; /* read through hxctl.token by every part and request */
};

int hipobj_cancel_create(struct hipobj_cancel **out) {
  if (!out)
    return HIPOBJ_E_INVALID_ARGUMENT;
  *out = calloc(1, sizeof **out);
  return *out ? HIPOBJ_OK : HIPOBJ_E_OUT_OF_MEMORY;
}

void hipobj_cancel_set(struct hipobj_cancel *t) {
  if (t)
    __atomic_store_n(&t->set, 1, __ATOMIC_RELAXED);
}

int hipobj_cancel_is_set(const struct hipobj_cancel *t) {
  return t ? __atomic_load_n(&t->set, __ATOMIC_RELAXED) : 0;
}

void hipobj_cancel_free(struct hipobj_cancel *t) {
  free(t);
}

static const volatile int *token_flag(struct hipobj_cancel *t) {
  return t ? &t->set : NULL;
}

/* ---- running a job ------------------------------------------------------- */

/* The job's outcome, once it has ended. */
static int job_outcome(struct hjob *j, struct hipobj_xfer_result *res,
                       struct hipobj_error *err) {
  if (res) {
    size_t size = res->struct_size;
    memset(res, 0, sizeof *res);
    res->struct_size = size;
    j->ops->result(j, res);
  }
  if (j->status == HIPOBJ_OK)
    hipobj_error_clear(err);
  else
    herr_copy(err, &j->err);
  return j->status;
}

int hjob_run(struct hjob *j, struct hipobj_xfer_result *res,
             struct hipobj_error *err) {
  j->on_finish = NULL;
  j->waiter = pthread_self();
  j->has_waiter = 1;
  /* The parts this thread's pump starts may run here, after the pump:
   * this thread only waits otherwise (s3_http_here_begin). */
  int armed = s3_http_here_begin();
  hsched_start(j->c->sched, j);
  s3_http_here_run(armed);
  hsched_wait(j);
  int rc = job_outcome(j, res, err);
  j->ops->free(j);
  hjob_destroy(j);
  return rc;
}

/* ---- checks shared by both forms ----------------------------------------- */

/* Checks the arguments; *mem becomes the full, checked copy of the
 * caller's descriptor that the transfer uses. */
static int check_args(enum xfer_kind kind, struct hipobj_client *c,
                      const char *bucket, const char *key,
                      const struct hipobj_mem *in, struct hipobj_mem *mem,
                      struct hipobj_error *err) {
  const char *op = kind == XFER_GET ? "GetObject" : "PutObject";
  int rc;
  if (!c)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "client is NULL");
  if ((rc = hcheck_bucket_key(op, bucket, key, 1, err)) ||
      (rc = hmem_import(op, in, mem, err)))
    return rc;
  /* GPU memory and files: refuse a missing runtime, a bad pointer or a
   * file opened the wrong way up front, before anything (a multipart
   * upload) is created on the server. */
  if (mem->kind != HIPOBJ_MEM_HOST)
    return hmem_check(op, mem, kind == XFER_GET ? HMEM_WRITE : HMEM_READ,
                      &c->log, err);
  return HIPOBJ_OK;
}

/* ---- the blocking calls ---------------------------------------------------
 */

int hipobj_s3_get(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *dst,
                  const struct hipobj_get_opts *opts,
                  struct hipobj_xfer_result *res, struct hipobj_error *err) {
  const char *op = "GetObject";
  double t0 = hnow_seconds();
  struct hipobj_xfer_result r;
  struct hipobj_get_opts o;
  struct hipobj_mem mem;
  int rc = hstruct_out_begin(op, res, &r, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if ((rc = hstruct_in(op, opts, &o, err)) == HIPOBJ_OK &&
      (rc = check_args(XFER_GET, c, bucket, key, dst, &mem, err)) ==
          HIPOBJ_OK) {
    struct hxctl ctl;
    memset(&ctl, 0, sizeof ctl);
    ctl.client = c;
    ctl.token = token_flag(o.cancel);
    struct hjob j;
    rc = hjob_get_init(c, bucket, key, &mem, &o, &ctl, &j, err);
    if (rc == HIPOBJ_OK)
      rc = hjob_run(&j, &r, err);
    r.seconds = hnow_seconds() - t0;
  }
  hstruct_out_end(res, &r);
  return rc;
}

int hipobj_s3_put(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *src,
                  const struct hipobj_put_opts *opts,
                  struct hipobj_xfer_result *res, struct hipobj_error *err) {
  const char *op = "PutObject";
  double t0 = hnow_seconds();
  struct hipobj_xfer_result r;
  struct hipobj_put_opts o;
  struct hipobj_mem mem;
  int rc = hstruct_out_begin(op, res, &r, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if ((rc = hstruct_in(op, opts, &o, err)) == HIPOBJ_OK &&
      (rc = check_args(XFER_PUT, c, bucket, key, src, &mem, err)) ==
          HIPOBJ_OK) {
    struct hxctl ctl;
    memset(&ctl, 0, sizeof ctl);
    ctl.client = c;
    ctl.token = token_flag(o.cancel);
    struct hjob j;
    rc = hjob_put_init(c, bucket, key, &mem, &o, &ctl, &j, err);
    if (rc == HIPOBJ_OK)
      rc = hjob_run(&j, &r, err);
    r.seconds = hnow_seconds() - t0;
  }
  hstruct_out_end(res, &r);
  return rc;
}

/* ---- the asynchronous API --------------------------------------------------
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

static void callback_task(struct htask *t) {
  struct hipobj_xfer *x =
      (struct hipobj_xfer *)((char *)t - offsetof(struct hipobj_xfer, cb_task));
  x->done(x, x->status, x->user);
  pthread_mutex_lock(&x->lock);
  x->callback_ok = 1;
  pthread_cond_broadcast(&x->cond);
  pthread_mutex_unlock(&x->lock);
}

/* The job has ended (on the thread that ended it, maybe an I/O thread):
 * the result becomes final, the callback goes to a worker. */
static void xfer_on_finish(struct hjob *j) {
  struct hipobj_xfer *x =
      (struct hipobj_xfer *)((char *)j - offsetof(struct hipobj_xfer, job));
  x->res.struct_size = sizeof x->res;
  x->status = job_outcome(j, &x->res, &x->err);
  x->res.seconds = hnow_seconds() - x->t0;
  if (x->status == HIPOBJ_OK)
    hxctl_report(&x->ctl, x->res.bytes, x->res.bytes); /* all arrived */
  int deferred = 0;
  if (x->done) {
    x->cb_task.fn = callback_task;
    deferred = hsched_defer(j->c->sched, &x->cb_task) == 0;
  }
  pthread_mutex_lock(&x->lock);
  x->finished = 1;
  if (!deferred)
    x->callback_ok = !x->done;
  pthread_cond_broadcast(&x->cond);
  pthread_mutex_unlock(&x->lock);
  if (x->done && !deferred)
    callback_task(&x->cb_task); /* no worker: here, rather than never */
}

static int xfer_new(enum xfer_kind kind, struct hipobj_client *c,
                    const char *bucket, const char *key,
                    const struct hipobj_mem *mem,
                    const struct hipobj_xfer_opts *xopts,
                    struct hipobj_xfer **out, struct hipobj_error *err) {
  const char *op = kind == XFER_GET ? "GetObject" : "PutObject";
  struct hipobj_xfer_opts xo;
  struct hipobj_mem m;
  int rc = hstruct_in(op, xopts, &xo, err);
  if (rc == HIPOBJ_OK)
    rc = check_args(kind, c, bucket, key, mem, &m, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct hipobj_xfer *x = calloc(1, sizeof *x);
  if (!x)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  x->t0 = hnow_seconds();
  x->kind = kind;
  x->ctl.client = c;
  x->mem = m;
  x->bucket = strdup(bucket);
  x->key = strdup(key);
  pthread_mutex_init(&x->lock, NULL);
  pthread_cond_init(&x->cond, NULL);
  hxctl_init(&x->ctl);
  x->done = xo.done;
  x->user = xo.user;
  x->ctl.progress = xo.progress;
  x->ctl.user = xo.user;
  if (!x->bucket || !x->key) {
    xfer_free_fields(x);
    free(x);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  }
  *out = x;
  return HIPOBJ_OK;
}

static int xfer_start(struct hipobj_xfer *x, struct hipobj_xfer **out,
                      struct hipobj_error *err, int rc) {
  if (rc != HIPOBJ_OK) {
    xfer_free_fields(x);
    free(x);
    return rc;
  }
  x->job.on_finish = xfer_on_finish;
  *out = x;
  hipobj_error_clear(err);
  hsched_start(x->ctl.client->sched, &x->job);
  return HIPOBJ_OK;
}

int hipobj_s3_get_start(struct hipobj_client *c, const char *bucket,
                        const char *key, const struct hipobj_mem *dst,
                        const struct hipobj_get_opts *opts,
                        const struct hipobj_xfer_opts *xopts,
                        struct hipobj_xfer **out, struct hipobj_error *err) {
  const char *op = "GetObject";
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "out is NULL");
  *out = NULL;
  struct hipobj_get_opts o;
  int rc = hstruct_in(op, opts, &o, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct hipobj_xfer *x;
  if ((rc = xfer_new(XFER_GET, c, bucket, key, dst, xopts, &x, err)) !=
      HIPOBJ_OK)
    return rc;
  x->gopts = o;
  x->ctl.token = token_flag(o.cancel);
  if (o.if_match && !(x->gopts.if_match = x->if_match = strdup(o.if_match)))
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  if (rc == HIPOBJ_OK)
    rc = hjob_get_init(c, x->bucket, x->key, &x->mem, &x->gopts, &x->ctl,
                       &x->job, err);
  return xfer_start(x, out, err, rc);
}

int hipobj_s3_put_start(struct hipobj_client *c, const char *bucket,
                        const char *key, const struct hipobj_mem *src,
                        const struct hipobj_put_opts *opts,
                        const struct hipobj_xfer_opts *xopts,
                        struct hipobj_xfer **out, struct hipobj_error *err) {
  const char *op = "PutObject";
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "out is NULL");
  *out = NULL;
  struct hipobj_put_opts o;
  int rc = hstruct_in(op, opts, &o, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct hipobj_xfer *x;
  if ((rc = xfer_new(XFER_PUT, c, bucket, key, src, xopts, &x, err)) !=
      HIPOBJ_OK)
    return rc;
  x->popts = o;
  x->ctl.token = token_flag(o.cancel);
  if (o.content_type &&
      !(x->popts.content_type = x->content_type = strdup(o.content_type)))
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  if (rc == HIPOBJ_OK)
    rc = hjob_put_init(c, x->bucket, x->key, &x->mem, &x->popts, &x->ctl,
                       &x->job, err);
  return xfer_start(x, out, err, rc);
}

int hipobj_xfer_wait(struct hipobj_xfer *x, struct hipobj_xfer_result *res,
                     struct hipobj_error *err) {
  if (!x)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "WaitTransfer",
                    "transfer is NULL");
  struct hipobj_xfer_result r;
  int rc = hstruct_out_begin("WaitTransfer", res, &r, err);
  if (rc != HIPOBJ_OK)
    return rc;
  pthread_mutex_lock(&x->lock);
  while (!x->finished)
    pthread_cond_wait(&x->cond, &x->lock);
  pthread_mutex_unlock(&x->lock);
  hstruct_out_end(res, &x->res);
  if (x->status == HIPOBJ_OK)
    hipobj_error_clear(err);
  else
    herr_copy(err, &x->err);
  return x->status;
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
  struct hipobj_client *c = x->ctl.client;
  __atomic_store_n(&x->ctl.cancel, 1, __ATOMIC_RELAXED);
  /* Requests waiting for data notice at the I/O thread's next pass; a job
   * waiting for staging chunks at the scheduler's next turn. */
  s3_http_wakeup(c->http);
  hsched_pump(c->sched);
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
  /* The scheduler lets go of the job last. */
  hsched_wait(&x->job);
  x->job.ops->free(&x->job);
  hjob_destroy(&x->job);
  xfer_free_fields(x);
  free(x);
}
