/* sched.c - the client's scheduler (docs/engine.md): a ring of running
 * jobs served in turn, one part per job per turn, within each job's
 * concurrency and the client's budget of parts in flight; blocking work
 * (steps, RDMA sessions, completion callbacks) on a bounded set of worker
 * threads. pump() runs on whatever thread made something possible and only
 * does non-blocking things: ask a plan what comes next, take staging chunks
 * without waiting, submit an HTTP part, queue a worker item. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/strutil.h"
#include "engine.h"

#define WORKERS_MIN 4u
#define WORKERS_MAX 64u

struct hsched {
  struct hipobj_client *c;
  pthread_mutex_t lock;
  struct hjob *ring;  /* the next job to serve; NULL when none runs */
  unsigned in_flight; /* parts started and not finished, all jobs */
  unsigned limit;
  int pumping; /* one thread pumps at a time ... */
  int again;   /* ... and others leave word that it must look again */
  /* Threads still inside the scheduler after their part or step let its
   * job end: the job's owner may destroy the client as soon as it ends,
   * and hsched_destroy() waits for them. */
  unsigned users;
  pthread_cond_t idle;
  struct hworkq *workers;
};

static void task_run(struct hworkq_item *it) {
  struct htask *t = (struct htask *)it;
  t->fn(t);
}

int hsched_create(struct hipobj_client *c, struct hsched **out) {
  struct hsched *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  s->c = c;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->idle, NULL);
  unsigned conc = c->cfg.concurrency, conns = c->cfg.max_connections;
  s->limit = conc > conns ? conc : conns;
  unsigned w = conc < WORKERS_MIN   ? WORKERS_MIN
               : conc > WORKERS_MAX ? WORKERS_MAX
                                    : conc;
  /* Threads start as work arrives (never more than w) and stay until the
   * client goes: none is made per job or per part. */
  s->workers = hworkq_create(w, task_run);
  if (!s->workers) {
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return -1;
  }
  *out = s;
  return 0;
}

void hsched_destroy(struct hsched *s) {
  if (!s)
    return;
  pthread_mutex_lock(&s->lock);
  while (s->users || s->pumping)
    pthread_cond_wait(&s->idle, &s->lock);
  pthread_mutex_unlock(&s->lock);
  hworkq_destroy(s->workers);
  pthread_cond_destroy(&s->idle);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

int hsched_defer(struct hsched *s, struct htask *t) {
  return hworkq_push(s->workers, &t->it);
}

/* ---- jobs ------------------------------------------------------------------
 */

int hjob_init(struct hjob *j, struct hipobj_client *c, const char *op,
              const char *bucket, const char *key, const struct hipobj_mem *mem,
              struct hxctl *ctl, int policy, unsigned conc,
              struct hipobj_error *err) {
  memset(j, 0, sizeof *j);
  j->c = c;
  j->op = op;
  j->bucket = bucket;
  j->key = key;
  j->mem = mem;
  j->ctl = ctl;
  j->policy = policy;
  j->conc = conc ? conc : 1;
  j->slots = calloc(j->conc, sizeof *j->slots);
  if (!j->slots)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  pthread_mutex_init(&j->lock, NULL);
  pthread_cond_init(&j->cond, NULL);
  return HIPOBJ_OK;
}

void hjob_destroy(struct hjob *j) {
  if (!j->slots)
    return;
  free(j->slots);
  j->slots = NULL;
  pthread_cond_destroy(&j->cond);
  pthread_mutex_destroy(&j->lock);
}

void hjob_fail(struct hjob *j, int status, const struct hipobj_error *err) {
  if (j->failed || status == HIPOBJ_OK)
    return;
  j->failed = 1;
  j->status = status;
  if (err && err->message[0]) {
    j->err = *err;
    j->err.status = status;
  } else {
    herr_set(&j->err, status, j->op, "%s", hipobj_strerror(status));
  }
}

int hjob_stopped(struct hjob *j) {
  if (!j->failed && hxctl_cancelled(j->ctl)) {
    j->failed = 1;
    j->status = herr_set(&j->err, HIPOBJ_E_CANCELLED, j->op, "cancelled");
  }
  return j->failed;
}

uint64_t hjob_rdma_bytes(const struct hjob *j) {
  return j->bytes_by[HIPOBJ_PATH_RDMA_DIRECT] +
         j->bytes_by[HIPOBJ_PATH_RDMA_STAGED];
}

enum hipobj_data_path hjob_path(const struct hjob *j) {
  uint64_t all = 0;
  for (int i = 0; i < 5; i++)
    all += j->bytes_by[i];
  if (all && hjob_rdma_bytes(j) == all)
    return j->bytes_by[HIPOBJ_PATH_RDMA_STAGED] ? HIPOBJ_PATH_RDMA_STAGED
                                                : HIPOBJ_PATH_RDMA_DIRECT;
  /* Files on tmpfs move over HTTP through mapped windows (reported as
   * HTTP: no staging chunk) unless some part went through chunks. */
  if (j->mem->kind == HIPOBJ_MEM_HOST ||
      (j->bytes_by[HIPOBJ_PATH_HTTP] && !j->bytes_by[HIPOBJ_PATH_HTTP_STAGED]))
    return HIPOBJ_PATH_HTTP;
  return HIPOBJ_PATH_HTTP_STAGED;
}

/* ---- the ring -------------------------------------------------------------
 */

static void ring_add(struct hsched *s, struct hjob *j) {
  if (!s->ring) {
    j->ring_next = j->ring_prev = j;
    s->ring = j;
  } else {
    /* Behind the job served next: a new job waits one turn at most. */
    j->ring_next = s->ring;
    j->ring_prev = s->ring->ring_prev;
    j->ring_prev->ring_next = j;
    s->ring->ring_prev = j;
  }
  j->in_ring = 1;
}

static void ring_remove(struct hsched *s, struct hjob *j) {
  if (!j->in_ring)
    return;
  if (j->ring_next == j) {
    s->ring = NULL;
  } else {
    j->ring_prev->ring_next = j->ring_next;
    j->ring_next->ring_prev = j->ring_prev;
    if (s->ring == j)
      s->ring = j->ring_next;
  }
  j->ring_next = j->ring_prev = NULL;
  j->in_ring = 0;
}

/* ---- running parts and steps ----------------------------------------------
 */

static void enter(struct hsched *s) {
  pthread_mutex_lock(&s->lock);
  s->users++;
  pthread_mutex_unlock(&s->lock);
}

/* The last thing a thread does in the scheduler after it let a job end. */
static void leave_pumping(struct hsched *s) {
  hsched_pump(s);
  pthread_mutex_lock(&s->lock);
  if (--s->users == 0 && !s->pumping)
    pthread_cond_broadcast(&s->idle);
  pthread_mutex_unlock(&s->lock);
}

static void part_task(struct htask *t) {
  struct hpart *p = (struct hpart *)((char *)t - offsetof(struct hpart, task));
  p->path->start(p);
}

static void step_task(struct htask *t) {
  struct hjob *j =
      (struct hjob *)((char *)t - offsetof(struct hjob, step_task));
  struct hipobj_error err;
  memset(&err, 0, sizeof err);
  int rc = j->ops->step(j, j->step, &err);
  struct hsched *s = j->c->sched;
  enter(s); /* j may end (and go) as soon as its lock is let go */
  pthread_mutex_lock(&j->lock);
  j->steps_in_flight--;
  j->ops->finished(j, NULL, j->step, rc, &err);
  pthread_mutex_unlock(&j->lock);
  leave_pumping(s);
}

/* Ends part p without running it (under the job's lock). */
static void part_end_locked(struct hjob *j, struct hpart *p, int rc,
                            const struct hipobj_error *err) {
  p->status = rc;
  j->ops->finished(j, p, 0, rc, err);
  p->busy = 0;
  j->parts_in_flight--;
}

void hpart_done(struct hpart *p) {
  struct hjob *j = p->job;
  struct hsched *s = j->c->sched;
  const struct hpath *path = p->path;
  /* Chunks go back before anyone looks for them. */
  path->release(p);
  enter(s); /* j may end (and go) as soon as its lock is let go */
  pthread_mutex_lock(&j->lock);
  j->retries += p->retries;
  if (p->fallback && p->status == HIPOBJ_OK && !j->failed &&
      !hxctl_cancelled(j->ctl)) {
    /* RDMA did not move it: the same part over HTTP, next turn. */
    p->http_only = 1;
    p->fallback = 0;
    p->path = NULL;
    p->redo_next = j->redo;
    j->redo = p;
  } else {
    if (p->status == HIPOBJ_OK)
      j->bytes_by[path->id] += p->bytes;
    part_end_locked(j, p, p->status, &p->err);
  }
  pthread_mutex_unlock(&j->lock);
  pthread_mutex_lock(&s->lock);
  s->in_flight--;
  pthread_mutex_unlock(&s->lock);
  leave_pumping(s);
}

/* What one turn of a job did. */
enum turn { T_IDLE, T_PART, T_STEP, T_FINISHED };

/* Under j's lock: chooses p's path and takes what it needs. T_PART when it
 * can start now, T_IDLE when it waits for chunks (kept in redo), else it
 * ended (failed) and the turn is T_STEP-like progress. */
static enum turn part_ready(struct hjob *j, struct hpart *p) {
  struct hipobj_error err;
  memset(&err, 0, sizeof err);
  if (!p->path && !(p->path = p->http_only ? hpath_http_for(j, p)
                                           : hpath_choose(j, p, &err))) {
    part_end_locked(j, p, err.status ? err.status : HIPOBJ_E_INTERNAL, &err);
    return T_STEP;
  }
  int rc = p->path->prepare(p);
  if (rc == HPATH_AGAIN) {
    p->redo_next = j->redo;
    j->redo = p;
    return T_IDLE;
  }
  if (rc != HIPOBJ_OK) {
    part_end_locked(j, p, rc, &p->err);
    return T_STEP;
  }
  return T_PART;
}

static struct hpart *free_slot(struct hjob *j) {
  for (unsigned i = 0; i < j->conc; i++)
    if (!j->slots[i].busy)
      return &j->slots[i];
  return NULL;
}

/* Hands j's step to a worker (outside j's lock); a worker that cannot be
 * started fails the step. */
static void step_defer(struct hjob *j) {
  j->step_task.fn = step_task;
  if (hsched_defer(j->c->sched, &j->step_task) == 0)
    return;
  struct hipobj_error e;
  memset(&e, 0, sizeof e);
  herr_set(&e, HIPOBJ_E_OUT_OF_MEMORY, j->op, "cannot start a worker thread");
  pthread_mutex_lock(&j->lock);
  j->steps_in_flight--;
  j->ops->finished(j, NULL, j->step, e.status, &e);
  pthread_mutex_unlock(&j->lock);
}

/* One turn of job j: starts at most one part or step. *part is the part
 * to start (outside every lock) for T_PART. */
static enum turn job_turn(struct hjob *j, struct hpart **part) {
  enum turn t = T_IDLE;
  int defer = 0;
  pthread_mutex_lock(&j->lock);
  if (j->redo) {
    struct hpart *p = j->redo;
    j->redo = p->redo_next;
    if (hxctl_cancelled(j->ctl) || j->failed) {
      struct hipobj_error e;
      memset(&e, 0, sizeof e);
      herr_set(&e, HIPOBJ_E_CANCELLED, p->name, "cancelled");
      part_end_locked(j, p, j->failed ? j->status : HIPOBJ_E_CANCELLED, &e);
      t = T_STEP;
    } else if ((t = part_ready(j, p)) == T_PART) {
      *part = p;
    }
    pthread_mutex_unlock(&j->lock);
    return t;
  }
  struct hpart *slot = free_slot(j);
  if (slot) {
    memset(slot, 0, offsetof(struct hpart, r)); /* r: hreq_init's job */
    slot->job = j;
  }
  int step = 0;
  switch (j->ops->next(j, slot, &step)) {
  case HNEXT_PART:
    slot->busy = 1;
    j->parts_in_flight++;
    if ((t = part_ready(j, slot)) == T_PART)
      *part = slot;
    break;
  case HNEXT_STEP:
    j->steps_in_flight++;
    j->step = step;
    defer = 1;
    t = T_STEP;
    break;
  case HNEXT_WAIT:
    break;
  case HNEXT_DONE:
    if (!j->parts_in_flight && !j->steps_in_flight && !j->redo)
      t = T_FINISHED;
    break;
  }
  pthread_mutex_unlock(&j->lock);
  if (defer)
    step_defer(j);
  return t;
}

static void part_start(struct hsched *s, struct hpart *p) {
  if (!p->path->blocking) {
    p->path->start(p);
    return;
  }
  p->task.fn = part_task;
  if (hsched_defer(s, &p->task) != 0) {
    p->status = herr_set(&p->err, HIPOBJ_E_OUT_OF_MEMORY, p->name,
                         "cannot start a worker thread");
    hpart_done(p);
  }
}

static void job_finished(struct hjob *j) {
  /* on_finish may hand the job to its owner's thread: nothing here
   * touches j after the waiters are woken. */
  if (j->on_finish)
    j->on_finish(j);
  pthread_mutex_lock(&j->lock);
  j->finished = 1;
  pthread_cond_broadcast(&j->cond);
  pthread_mutex_unlock(&j->lock);
}

void hsched_pump(struct hsched *s) {
  pthread_mutex_lock(&s->lock);
  if (s->pumping) {
    s->again = 1;
    pthread_mutex_unlock(&s->lock);
    return;
  }
  s->pumping = 1;
  do {
    s->again = 0;
    int progress = 1;
    while (progress && s->ring) {
      progress = 0;
      /* One turn per job, starting with the one served next. */
      struct hjob *j = s->ring, *stop = s->ring->ring_prev;
      for (;;) {
        struct hjob *last = j == stop ? j : NULL;
        if (s->in_flight >= s->limit)
          break;
        struct hpart *p = NULL;
        pthread_mutex_unlock(&s->lock);
        enum turn t = job_turn(j, &p);
        pthread_mutex_lock(&s->lock);
        /* Read after the turn: while it ran without the lock, hsched_start
         * may have put a job next to j. Read before it, a ring of one
         * stayed one: when j then finished, the ring was emptied with the
         * new job still linked to it alone, and that job never had another
         * turn (an asynchronous GET whose answer had come never ended). */
        struct hjob *next = j->ring_next;
        if (t == T_PART)
          s->in_flight++;
        if (t != T_IDLE)
          progress = 1;
        if (t == T_FINISHED) {
          ring_remove(s, j); /* moves s->ring past j if it pointed there */
          if (next == j)
            next = NULL;
        } else if (t == T_PART || t == T_STEP) {
          s->ring = next; /* the next turn starts after this job */
        }
        if (t == T_PART || t == T_FINISHED) {
          pthread_mutex_unlock(&s->lock);
          if (t == T_PART)
            part_start(s, p);
          else
            job_finished(j);
          pthread_mutex_lock(&s->lock);
        }
        if (last || !s->ring || !next)
          break;
        j = next;
      }
    }
  } while (s->again);
  s->pumping = 0;
  if (!s->users)
    pthread_cond_broadcast(&s->idle);
  pthread_mutex_unlock(&s->lock);
}

void hsched_pump_cb(void *arg) {
  hsched_pump(arg);
}

void hsched_start(struct hsched *s, struct hjob *j) {
  /* The job's first turn is taken here, on the thread that starts it, even
   * while another thread pumps: a blocking call's first part can then run
   * on its caller (run_here). Left to the pumping thread, it would go to an
   * HTTP worker while its caller sleeps, two wake-ups per small GET, and
   * with many callers at once some thread is nearly always pumping. The
   * job is in no ring yet, so no pump turns it meanwhile. */
  enter(s); /* the job may end here: the client outlives this call */
  pthread_mutex_lock(&s->lock);
  int room = s->in_flight < s->limit;
  if (room)
    s->in_flight++; /* held for the part this turn may start */
  pthread_mutex_unlock(&s->lock);
  struct hpart *p = NULL;
  enum turn t = room ? job_turn(j, &p) : T_IDLE;
  pthread_mutex_lock(&s->lock);
  if (room && t != T_PART)
    s->in_flight--;
  if (t != T_FINISHED)
    ring_add(s, j);
  pthread_mutex_unlock(&s->lock);
  if (t == T_PART)
    part_start(s, p);
  else if (t == T_FINISHED)
    job_finished(j);
  leave_pumping(s); /* the job's next turns, and others' */
}

int hsched_wait(struct hjob *j) {
  pthread_mutex_lock(&j->lock);
  while (!j->finished)
    pthread_cond_wait(&j->cond, &j->lock);
  pthread_mutex_unlock(&j->lock);
  return j->status;
}
