/* rdma_parts.c - a large GET by RDMA as parts on several threads: each
 * part is its own transfer (its own sessions and QP) into its window of the
 * destination, so several sessions move data at once, as the HTTP path
 * keeps several ranged GETs in flight. The parts must all read one version
 * of the object: their FINAL ETags are compared, and a part shorter than
 * planned means the object changed since its size was learnt. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/strutil.h"
#include "client_int.h"
#include "rdma_glue.h"

#define MAX_PART_WORKERS 16

struct parts {
  pthread_mutex_t lock;
  struct hipobj_client *c;
  const struct hrdma_job *job;
  struct hxctl *ctl;
  uint64_t part_size;
  unsigned n_parts, next;
  int stop;     /* an error or a fallback: no new part starts */
  int fallback; /* HTTP must do the whole GET */
  int declined;
  int staged;
  int status; /* the first error */
  struct hipobj_error err;
  uint64_t bytes;
  char etag[HIPOBJ_ETAG_MAX];
};

static void part_error(struct parts *p, int status,
                       const struct hipobj_error *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void part_error(struct parts *p, int status,
                       const struct hipobj_error *e, const char *fmt, ...) {
  if (p->status == HIPOBJ_OK) {
    p->status = status;
    if (e) {
      p->err = *e;
    } else {
      char text[256];
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(text, sizeof text, fmt, ap);
      va_end(ap);
      herr_set(&p->err, status, "GetObject", "%s", text);
    }
  }
  p->stop = 1;
}

static void *worker_main(void *arg) {
  struct parts *p = arg;
  const struct hrdma_job *job = p->job;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    if (p->stop || p->next >= p->n_parts || hxctl_cancelled(p->ctl)) {
      pthread_mutex_unlock(&p->lock);
      return NULL;
    }
    unsigned i = p->next++;
    pthread_mutex_unlock(&p->lock);
    uint64_t off = (uint64_t)i * p->part_size;
    uint64_t len =
        job->size - off < p->part_size ? job->size - off : p->part_size;
    struct hipobj_mem win = *job->mem;
    win.ptr = (char *)job->mem->ptr + off;
    win.len = (size_t)len;
    struct hrdma_job sub = *job;
    sub.offset = job->offset + off;
    sub.size = len;
    sub.mem = &win;
    struct hrdma_outcome o;
    struct hipobj_error e;
    memset(&e, 0, sizeof e);
    int rc = hrdma_transfer(p->c, &sub, &o, &e);
    pthread_mutex_lock(&p->lock);
    if (rc != HIPOBJ_OK) {
      part_error(p, rc, &e, "%s", "");
    } else if (!o.done) {
      p->fallback = 1;
      p->declined |= o.declined;
      p->stop = 1;
    } else if (o.bytes != len) {
      part_error(p, HIPOBJ_E_PRECONDITION, NULL,
                 "the object changed during the download (part %u: %llu of "
                 "%llu bytes)",
                 i + 1, (unsigned long long)o.bytes, (unsigned long long)len);
    } else if (p->etag[0] && strcmp(p->etag, o.etag) != 0) {
      part_error(p, HIPOBJ_E_PRECONDITION, NULL,
                 "the object changed during the download (ETag %s, then %s)",
                 p->etag, o.etag);
    } else {
      hstrlcpy(p->etag, o.etag, sizeof p->etag);
      p->bytes += o.bytes;
      p->staged |= o.staged;
    }
    pthread_mutex_unlock(&p->lock);
    if (rc == HIPOBJ_OK && o.done)
      hxctl_add(p->ctl, o.bytes);
  }
}

int hrdma_get_parts(struct hipobj_client *c, const struct hrdma_job *job,
                    uint64_t part_size, unsigned conc, struct hxctl *ctl,
                    struct hrdma_outcome *out, struct hipobj_error *err) {
  if (!part_size || conc <= 1 || job->size <= part_size) {
    int rc = hrdma_transfer(c, job, out, err);
    if (rc == HIPOBJ_OK && out->done)
      hxctl_add(ctl, out->bytes);
    return rc;
  }
  memset(out, 0, sizeof *out);
  struct parts p;
  memset(&p, 0, sizeof p);
  pthread_mutex_init(&p.lock, NULL);
  p.c = c;
  p.job = job;
  p.ctl = ctl;
  p.part_size = part_size;
  p.n_parts = (unsigned)((job->size + part_size - 1) / part_size);
  if (conc > p.n_parts)
    conc = p.n_parts;
  if (conc > MAX_PART_WORKERS)
    conc = MAX_PART_WORKERS;
  pthread_t th[MAX_PART_WORKERS];
  unsigned started = 0;
  /* Fewer threads when one cannot be made: slower, still correct. */
  while (started + 1 < conc &&
         pthread_create(&th[started], NULL, worker_main, &p) == 0)
    started++;
  worker_main(&p); /* the caller's thread is a worker too */
  for (unsigned i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  pthread_mutex_destroy(&p.lock);
  if (p.status != HIPOBJ_OK) {
    herr_copy(err, &p.err);
    return p.status;
  }
  if (hxctl_cancelled(ctl))
    return herr_set(err, HIPOBJ_E_CANCELLED, "GetObject", "cancelled");
  if (p.fallback) {
    /* Some parts may have landed: HTTP writes the whole range again. */
    out->fallback = 1;
    out->declined = p.declined;
    return HIPOBJ_OK;
  }
  out->done = 1;
  out->bytes = p.bytes;
  out->staged = p.staged;
  hstrlcpy(out->etag, p.etag, sizeof out->etag);
  return HIPOBJ_OK;
}
