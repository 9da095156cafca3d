/* hipobj_wait.c - how `hipobj` waits for a transfer: started with the
 * library's asynchronous API, so that it can be cancelled.
 *
 * On the main thread (one cp) the wait sleeps in poll() on the self-pipe
 * of hipobj_sys.c. Two things write to it: the transfer's completion
 * callback (a library thread), and the signal handler, which only sets a
 * flag and writes a byte (both async-signal-safe). Woken by a signal, the
 * main thread cancels the transfer through the library: requests in
 * flight stop, and a multipart upload is aborted on the server unless it
 * is to be kept. The library is never called from a signal handler.
 *
 * On a worker of the many-files engine (hipobj_batch.c) the wait is
 * hipobj_xfer_wait(); the transfer sits in a registry meanwhile, and the
 * main thread, which is the one woken by signals, cancels all of them
 * with xfers_cancel_all(). */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "hipobj_cli.h"

struct waiter {
  struct progress *p;
  uint64_t last;       /* the library's count at the last callback */
  atomic_int finished; /* set by the completion callback, then the wake */
  /* A download into a file of unknown size: the file system's free space
   * is checked as soon as the first answer tells the size (reserve_space),
   * and the transfer cancelled when it cannot hold the object. */
  int reserve_fd; /* -1: none */
  int reserved;
  atomic_int reserve_err;
  _Atomic(struct hipobj_xfer *) x;
};

/* The library counts bytes per transfer (and may count a retried part
 * twice, going back): the display gets the forward steps. */
static void on_progress(void *user, uint64_t done, uint64_t total) {
  struct waiter *w = user;
  if (w->reserve_fd >= 0 && !w->reserved && total) {
    w->reserved = 1;
    int e = total > SIZE_MAX ? EFBIG : reserve_space(w->reserve_fd, total);
    if (e) {
      atomic_store(&w->reserve_err, e);
      struct hipobj_xfer *x = atomic_load(&w->x);
      if (x)
        hipobj_xfer_cancel(x); /* does not wait: allowed here */
    }
  }
  /* One cp learns its total here (a batch knows its own already). */
  if (total && w->p && !atomic_load(&w->p->total))
    progress_set_total(w->p, total);
  if (done > w->last) {
    progress_add(w->p, done - w->last);
    w->last = done;
  }
}

static void on_done(struct hipobj_xfer *x, int status, void *user) {
  (void)x;
  (void)status;
  struct waiter *w = user;
  atomic_store(&w->finished, 1);
  signals_wake();
}

static void drain(int fd) {
  char buf[64];
  while (read(fd, buf, sizeof buf) > 0)
    ;
}

/* ---- the registry of the workers' transfers ------------------------------ */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hipobj_xfer *reg[CLI_MAX_JOBS];
static int reg_cancelled; /* under reg_lock: later ones start cancelled */
static _Thread_local int is_worker;

void xfer_thread_is_worker(void) {
  is_worker = 1;
}

static int reg_add(struct hipobj_xfer *x) {
  pthread_mutex_lock(&reg_lock);
  int slot = -1;
  for (int i = 0; i < CLI_MAX_JOBS && slot < 0; i++)
    if (!reg[i])
      slot = i;
  if (slot >= 0)
    reg[slot] = x;
  if (reg_cancelled)
    hipobj_xfer_cancel(x);
  pthread_mutex_unlock(&reg_lock);
  return slot;
}

static void reg_drop(int slot) {
  if (slot < 0)
    return;
  pthread_mutex_lock(&reg_lock);
  reg[slot] = NULL;
  pthread_mutex_unlock(&reg_lock);
}

/* Blocking calls (a worker's small downloads) cannot be reached through a
 * transfer: they carry this token instead. */
static struct hipobj_cancel *token;

void xfers_init(void) {
  if (hipobj_cancel_create(&token) != HIPOBJ_OK)
    token = NULL; /* the workers then use transfers only */
}

void xfers_cleanup(void) {
  hipobj_cancel_free(token);
  token = NULL;
}

struct hipobj_cancel *xfers_token(void) {
  return token;
}

void xfers_cancel_all(void) {
  hipobj_cancel_set(token);
  pthread_mutex_lock(&reg_lock);
  reg_cancelled = 1;
  for (int i = 0; i < CLI_MAX_JOBS; i++)
    if (reg[i])
      hipobj_xfer_cancel(reg[i]);
  pthread_mutex_unlock(&reg_lock);
}

/* ---- waiting --------------------------------------------------------------
 */

/* Main thread: sleeps until the transfer's callback has run, cancelling
 * it once when a signal came; then collects its result. */
static int wait_main(struct hipobj_xfer *x, struct waiter *w,
                     struct hipobj_xfer_result *res, struct hipobj_error *err) {
  int fd = signals_wake_fd(), cancelled = 0;
  while (fd >= 0 && !atomic_load(&w->finished)) {
    if (cli_interrupted && !cancelled) {
      hipobj_xfer_cancel(x);
      cancelled = 1;
    }
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    if (poll(&pf, 1, -1) > 0)
      drain(fd); /* EINTR: the loop looks again */
  }
  /* The callback has run (or there is no pipe): this returns once the
   * transfer is over. */
  return hipobj_xfer_wait(x, res, err);
}

typedef int (*start_fn)(struct cli *c, const void *args,
                        const struct hipobj_xfer_opts *xo,
                        struct hipobj_xfer **x, struct hipobj_error *err);

struct get_args {
  const char *bucket, *key;
  const struct hipobj_mem *mem;
  const struct hipobj_get_opts *go;
};
struct put_args {
  const char *bucket, *key;
  const struct hipobj_mem *mem;
  const struct hipobj_put_opts *po;
};

static int start_get(struct cli *c, const void *args,
                     const struct hipobj_xfer_opts *xo, struct hipobj_xfer **x,
                     struct hipobj_error *err) {
  const struct get_args *a = args;
  return hipobj_s3_get_start(c->client, a->bucket, a->key, a->mem, a->go, xo, x,
                             err);
}

static int start_put(struct cli *c, const void *args,
                     const struct hipobj_xfer_opts *xo, struct hipobj_xfer **x,
                     struct hipobj_error *err) {
  const struct put_args *a = args;
  return hipobj_s3_put_start(c->client, a->bucket, a->key, a->mem, a->po, xo, x,
                             err);
}

static int run(struct cli *c, struct progress *p, start_fn start,
               const void *args, struct hipobj_xfer_result *res,
               struct hipobj_error *err, int reserve_fd, int *reserve_err) {
  struct waiter w = {.p = p, .reserve_fd = reserve_fd};
  atomic_init(&w.finished, 0);
  atomic_init(&w.reserve_err, 0);
  atomic_init(&w.x, NULL);
  struct hipobj_xfer_opts xo = HIPOBJ_XFER_OPTS_INIT;
  xo.progress = on_progress;
  /* A worker sleeps in hipobj_xfer_wait(): a callback would only cost a
   * hop to a library thread and a wake-up of the main thread per file. */
  xo.done = is_worker ? NULL : on_done;
  xo.user = &w;
  struct hipobj_xfer *x = NULL;
  int st;
  if (!is_worker) {
    if (signals_wake_fd() >= 0)
      drain(signals_wake_fd()); /* a stale byte; the flag stays */
    signals_set_soft(1);
  }
  st = start(c, args, &xo, &x, err);
  if (st == HIPOBJ_OK) {
    atomic_store(&w.x, x);
    if (atomic_load(&w.reserve_err)) /* the callback came before x */
      hipobj_xfer_cancel(x);
  }
  if (st == HIPOBJ_OK && is_worker) {
    int slot = reg_add(x);
    st = hipobj_xfer_wait(x, res, err);
    reg_drop(slot);
  } else if (st == HIPOBJ_OK) {
    st = wait_main(x, &w, res, err);
  }
  if (!is_worker)
    signals_set_soft(0);
  hipobj_xfer_free(x);
  if (reserve_err)
    *reserve_err = atomic_load(&w.reserve_err);
  return st;
}

int xfer_get(struct cli *c, struct progress *p, const char *bucket,
             const char *key, const struct hipobj_mem *mem,
             const struct hipobj_get_opts *go, struct hipobj_xfer_result *res,
             struct hipobj_error *err) {
  struct get_args a = {bucket, key, mem, go};
  return run(c, p, start_get, &a, res, err, -1, NULL);
}

int xfer_get_file(struct cli *c, struct progress *p, const char *bucket,
                  const char *key, const struct hipobj_mem *mem,
                  const struct hipobj_get_opts *go,
                  struct hipobj_xfer_result *res, struct hipobj_error *err,
                  int *reserve_err) {
  struct get_args a = {bucket, key, mem, go};
  return run(c, p, start_get, &a, res, err, mem->fd, reserve_err);
}

int xfer_put(struct cli *c, struct progress *p, const char *bucket,
             const char *key, const struct hipobj_mem *mem,
             const struct hipobj_put_opts *po, struct hipobj_xfer_result *res,
             struct hipobj_error *err) {
  struct put_args a = {bucket, key, mem, po};
  return run(c, p, start_put, &a, res, err, -1, NULL);
}
