/* hipobj_batch.c - the many-files engine of cp/mv/sync --recursive and rm
 * --recursive: a list of items (upload, download, copy, delete) run by
 * --jobs worker threads over the one client (thread-safe), so that many
 * small files are in flight at once while each large one still moves in
 * parallel parts inside the library. Memory stays bounded: the library's
 * staging pool is shared, and each download holds one chunk-sized buffer.
 *
 * The workers block every signal; the main thread sleeps in poll() on the
 * self-pipe (woken by workers that finish and by signals). On SIGINT or
 * SIGTERM it cancels every transfer in flight (hipobj_wait.c), the
 * workers take no new item, partial downloads are removed, and the exit
 * status is 128 + the signal. Each item prints its own result or failure
 * line (one JSON object under --json) as it ends; a failed item does not
 * stop the others, and the exit status says that one failed.
 *
 * Fed batches (batch_run_fed): the main thread adds the items a page at a
 * time while the workers already run the first ones (cp --recursive from
 * S3 downloads the first page of keys while the next is listed). Workers
 * then wait for more on a condition variable until the feed is closed. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hipobj_xfer.h"

int batch_add(struct batch *b, enum item_op op, const char *src,
              const char *dst, uint64_t size) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 64;
    struct item *it = realloc(b->items, cap * sizeof *it);
    if (!it)
      return -1;
    b->items = it;
    b->cap = cap;
  }
  struct item *it = &b->items[b->n];
  memset(it, 0, sizeof *it);
  it->op = op;
  it->size = size;
  it->src = strdup(src);
  it->dst = dst ? strdup(dst) : NULL;
  if (!it->src || (dst && !it->dst)) {
    free(it->src);
    free(it->dst);
    return -1;
  }
  b->n++;
  return 0;
}

void batch_free(struct batch *b) {
  for (size_t i = 0; i < b->n; i++) {
    free(b->items[i].src);
    free(b->items[i].dst);
  }
  free(b->items);
  memset(b, 0, sizeof *b);
}

struct run {
  struct cli *c;
  struct batch *b;
  const char *op;
  struct progress p;
  pthread_mutex_t lock; /* next, closed and b's items while fed */
  pthread_cond_t more;  /* items were added, or the feed closed */
  size_t next;
  int closed; /* no more items will come */
  atomic_int workers_left;
  atomic_int worst;   /* the highest exit status of an item */
  atomic_uint failed; /* items that failed */
  atomic_uint_fast64_t bytes;
};

/* Display names: a local path as it is, a key as s3://bucket/key. */
static char *shown(const char *bucket, const char *name) {
  return bucket ? s3_url(bucket, name) : strdup(name);
}

static const char *verb_of(const struct item *it) {
  if (it->remove_src)
    return "move";
  switch (it->op) {
  case IT_UPLOAD:
    return "upload";
  case IT_DOWNLOAD:
    return "download";
  case IT_COPY:
    return "copy";
  default:
    return "delete";
  }
}

/* Runs one item; 0 or its exit status after reporting. */
static int run_item(struct run *r, struct item *it, struct hipobj_error *err) {
  struct cli *c = r->c;
  const struct batch *b = r->b;
  int local_src = it->op == IT_UPLOAD || it->op == IT_DELETE_LOCAL;
  int local_dst = it->op == IT_DOWNLOAD;
  const char *src_bucket = it->op == IT_DELETE_S3 ? b->db : b->sb;
  char *src = shown(local_src ? NULL : src_bucket, it->src);
  char *dst = it->dst ? shown(local_dst ? NULL : b->db, it->dst) : NULL;
  struct xctx x = {.c = c, .p = &r->p, .err = err, .many = 1};
  struct cp_stats s = {.start = now_seconds()};
  int rc = 0;
  if (!src || (it->dst && !dst)) {
    rc = report_errno(it->src, ENOMEM);
    goto out;
  }
  if (c->dryrun) {
    print_result(c, r->op, verb_of(it), src, dst, &s, 0);
    goto out;
  }
  switch (it->op) {
  case IT_UPLOAD:
    rc = upload_file(&x, it->src, b->db, it->dst, &s);
    break;
  case IT_DOWNLOAD:
    rc = download_file(&x, b->sb, it->src, src, it->dst, it->size, &s);
    break;
  case IT_COPY:
    rc = copy_object(&x, b->sb, it->src, b->db, it->dst, &s);
    break;
  case IT_DELETE_S3:
    if (hipobj_s3_delete(c->client, b->db, it->src, err) != HIPOBJ_OK)
      rc = xfail_lib(&x, src);
    break;
  case IT_DELETE_LOCAL:
    if (unlink(it->src) != 0)
      rc = xfail_errno(&x, src, errno);
    break;
  }
  /* mv: the source goes once its copy is complete. */
  if (rc == 0 && it->remove_src) {
    if (it->op == IT_UPLOAD && unlink(it->src) != 0)
      rc = xfail_errno(&x, src, errno);
    else if (it->op != IT_UPLOAD &&
             hipobj_s3_delete(c->client, b->sb, it->src, err) != HIPOBJ_OK)
      rc = xfail_lib(&x, src);
  }
  if (rc == 0) {
    if (s.path == HIPOBJ_PATH_NONE && s.bytes > 0 && it->op != IT_COPY)
      s.path = HIPOBJ_PATH_HTTP;
    atomic_fetch_add(&r->bytes, s.bytes);
    print_result(c, r->op, verb_of(it), src, dst, &s, 0);
  } else {
    rc = xctx_report(&x);
  }
out:
  free(src);
  free(dst);
  return rc;
}

/* The next item to run (a copy: a fed batch's array may move), waiting
 * for a feed to add one; 0 when there is none left. */
static int take(struct run *r, struct item *it) {
  pthread_mutex_lock(&r->lock);
  while (r->next >= r->b->n && !r->closed && !cli_interrupted)
    pthread_cond_wait(&r->more, &r->lock);
  int got = r->next < r->b->n && !cli_interrupted;
  if (got)
    *it = r->b->items[r->next++];
  pthread_mutex_unlock(&r->lock);
  return got;
}

static void *worker(void *arg) {
  struct run *r = arg;
  xfer_thread_is_worker();
  struct hipobj_error *err = NULL;
  if (hipobj_error_create(&err) != HIPOBJ_OK) {
    atomic_store(&r->worst, CLI_EXIT_FAIL);
  } else {
    struct item it;
    while (take(r, &it)) {
      int rc = run_item(r, &it, err);
      if (rc != 0) {
        atomic_fetch_add(&r->failed, 1);
        int w = atomic_load(&r->worst);
        while (rc > w && !atomic_compare_exchange_weak(&r->worst, &w, rc))
          ;
      }
      atomic_fetch_add(&r->p.files_done, 1);
    }
    hipobj_error_free(err);
  }
  atomic_fetch_sub(&r->workers_left, 1);
  signals_wake();
  return NULL;
}

/* Moves a page of items to the running batch and wakes the workers. */
static int add_page(struct run *r, struct batch *page) {
  struct batch *b = r->b;
  uint64_t bytes = 0;
  size_t n = 0;
  int rc = 0;
  pthread_mutex_lock(&r->lock);
  if (b->n + page->n > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + page->n)
      cap *= 2;
    struct item *items = realloc(b->items, cap * sizeof *items);
    if (items) {
      b->items = items;
      b->cap = cap;
    } else {
      rc = -1;
    }
  }
  if (rc == 0) {
    for (size_t i = 0; i < page->n; i++)
      bytes += page->items[i].size;
    memcpy(b->items + b->n, page->items, page->n * sizeof *page->items);
    b->n += page->n;
    n = b->n;
    page->n = 0; /* the strings belong to b now */
    pthread_cond_broadcast(&r->more);
  }
  pthread_mutex_unlock(&r->lock);
  if (rc == 0) {
    progress_add_total(&r->p, bytes);
    atomic_store(&r->p.files_total, (unsigned)n);
  }
  return rc;
}

/* The main thread feeds the batch until the feed says it is done, fails
 * or an interruption stops it; then no more items come. */
static int feed_all(struct run *r, batch_feed_fn feed, void *ctx) {
  int rc = 0, done = !feed;
  while (!done && !cli_interrupted && rc == 0) {
    struct batch page = {.sb = r->b->sb, .db = r->b->db};
    rc = feed(ctx, &page, &done);
    if (rc == 0 && add_page(r, &page) != 0)
      rc = report_errno(r->op, ENOMEM);
    batch_free(&page);
  }
  pthread_mutex_lock(&r->lock);
  r->closed = 1;
  pthread_cond_broadcast(&r->more);
  pthread_mutex_unlock(&r->lock);
  return rc;
}

int batch_run(struct cli *c, struct batch *b, const char *op) {
  return batch_run_fed(c, b, op, NULL, NULL);
}

int batch_run_fed(struct cli *c, struct batch *b, const char *op,
                  batch_feed_fn feed, void *ctx) {
  struct run r = {.c = c, .b = b, .op = op};
  atomic_init(&r.worst, 0);
  atomic_init(&r.failed, 0);
  atomic_init(&r.bytes, 0);
  uint64_t total = 0;
  for (size_t i = 0; i < b->n; i++)
    if (b->items[i].op != IT_DELETE_S3 && b->items[i].op != IT_DELETE_LOCAL)
      total += b->items[i].size;
  unsigned jobs = c->jobs ? c->jobs : CLI_DEFAULT_JOBS;
  if (jobs > b->n && !feed)
    jobs = (unsigned)b->n;
  if (jobs == 0)
    return 0;
  pthread_mutex_init(&r.lock, NULL);
  pthread_cond_init(&r.more, NULL);
  double start = now_seconds();
  char label[64];
  snprintf(label, sizeof label, "%s", op);
  progress_begin(&r.p, c, label, total);
  atomic_store(&r.p.files_total, (unsigned)b->n);
  if (c->dryrun)
    jobs = 1; /* in the order of the listing */
  pthread_t th[CLI_MAX_JOBS];
  unsigned started = 0;
  atomic_init(&r.workers_left, (int)jobs);
  int fd = signals_wake_fd();
  if (fd >= 0) {
    char buf[64];
    while (read(fd, buf, sizeof buf) > 0)
      ;
  }
  signals_set_soft(1);
  /* The workers leave signals to this thread. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  for (; started < jobs; started++)
    if (pthread_create(&th[started], NULL, worker, &r) != 0)
      break;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  atomic_fetch_sub(&r.workers_left, (int)(jobs - started));
  int rc = 0;
  if (started == 0) {
    rc = report_errno(op, errno ? errno : EAGAIN);
  } else {
    rc = feed_all(&r, feed, ctx);
    int cancelled = 0;
    while (atomic_load(&r.workers_left) > 0) {
      if (cli_interrupted && !cancelled) {
        xfers_cancel_all();
        cancelled = 1;
      }
      struct pollfd pf = {.fd = fd, .events = POLLIN};
      if (fd < 0) {
        usleep(10000);
      } else if (poll(&pf, 1, -1) > 0) {
        char buf[64];
        while (read(fd, buf, sizeof buf) > 0)
          ;
      }
    }
  }
  for (unsigned i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  pthread_cond_destroy(&r.more);
  pthread_mutex_destroy(&r.lock);
  signals_set_soft(0);
  int worst = atomic_load(&r.worst);
  uint64_t bytes = atomic_load(&r.bytes);
  progress_end(&r.p, worst == 0 && !cli_interrupted && !c->dryrun, bytes,
               now_seconds() - start);
  if (cli_interrupted)
    return CLI_EXIT_INTERRUPTED;
  if (rc == 0 && atomic_load(&r.failed) > 1 && !c->json && !c->quiet)
    report_msg(op, "%u of %zu files failed", atomic_load(&r.failed), b->n);
  return rc ? rc : worst;
}
