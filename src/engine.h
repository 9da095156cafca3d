/* engine.h - the transfer engine (docs/engine.md): every GET and PUT is a
 * job whose plan hands out parts (byte ranges) and steps (requests that
 * move no payload); one scheduler per client starts them within the job's
 * and the client's limits, fairly between jobs, each part on the data path
 * chosen for it (http, http-staged, rdma-direct, rdma-staged).
 *
 * Threads: plans are called under their job's lock and never block. HTTP
 * parts complete on the HTTP engine's I/O threads; steps and RDMA parts
 * (whose sessions block) run on the scheduler's workers, a bounded set per
 * client. No thread is created per job or per part. */
#ifndef HIPOBJ_ENGINE_H
#define HIPOBJ_ENGINE_H

#include <pthread.h>
#include <stdint.h>

#include "base/workq.h"
#include "cks.h"
#include "client_int.h"
#include "mem_file.h"

struct hjob;
struct hpart;
struct hstage;

/* Work for the scheduler's workers: a blocking part, a step, a user's
 * completion callback. */
struct htask {
  struct hworkq_item it; /* first */
  void (*fn)(struct htask *t);
};

/* ---- data paths (path.c, path_http.c, path_rdma.c) ----------------------- */

/* prepare() results besides HIPOBJ_OK and errors. */
#define HPATH_AGAIN (-1) /* the staging pool has no chunk now: try later */

struct hpath {
  const char *name;         /* "http", "http-staged", ... */
  enum hipobj_data_path id; /* what results report */
  int blocking;             /* start() runs on a worker and blocks */
  int rdma;                 /* moves the bytes by RDMA */
  /* Takes what the part needs (staging chunks) without waiting: HIPOBJ_OK,
   * HPATH_AGAIN, or a status (p->err filled). */
  int (*prepare)(struct hpart *p);
  /* Moves the part. Every outcome ends in hpart_done(p), from the thread
   * that finished it (an I/O thread, or this worker for blocking paths). */
  void (*start)(struct hpart *p);
  /* Gives back what prepare() took (any thread). */
  void (*release)(struct hpart *p);
};

extern const struct hpath hpath_http, hpath_http_staged, hpath_http_mapped,
    hpath_rdma_direct, hpath_rdma_staged;

/* Whether RDMA will probably move j's parts (policy, engine, endpoint):
 * plans that must name sizes up front for RDMA ask this. */
int hpath_rdma_likely(struct hjob *j);
/* The path for part p of job j from what is known now (policy, RDMA engine,
 * endpoint facts, memory kind, size). *err filled and NULL returned when
 * RDMA is required and impossible. */
const struct hpath *hpath_choose(struct hjob *j, struct hpart *p,
                                 struct hipobj_error *err);
/* The HTTP path for j's memory (a part that RDMA could not move). */
const struct hpath *hpath_http_for(const struct hjob *j, const struct hpart *p);

/* ---- parts ------------------------------------------------------------------
 */

/* One byte range of a job: what the plan asks for (request), and what the
 * path reports (results). The scheduler owns the storage (the job's slots);
 * the plan fills the request in next(). */
struct hpart {
  struct hjob *job;
  const struct hpath *path;
  /* request */
  char name[64];    /* "GetObject part #2", "UploadPart #3", "PutObject" */
  unsigned number;  /* 1-based part number (0: not a numbered part) */
  uint64_t mem_off; /* where the bytes are in the job's memory */
  uint64_t len;     /* bytes (GET: capacity of the window) */
  /* GET: the object range [off, off+range_len) (range_len 0: to the end);
   * has_range 0: the whole object, whole_ok: a 200 with it is fine. */
  int is_put;
  int has_range, whole_ok;
  /* GET: the part that learns the object's size; its answer may hold
   * fewer bytes than len (a smaller object, a range past the end). */
  int sizing;
  uint64_t off, range_len;
  char range_text[64];
  const char *if_match;     /* GET: If-Match (borrowed from the plan) */
  const char *content_type; /* PUT: Content-Type, NULL: none */
  /* UploadPart: the query (partNumber, uploadId), else nq 0. */
  struct hparam query[2];
  size_t nq;
  char number_text[16];
  int crc32c;     /* PUT over HTTP: send x-amz-checksum-crc32c */
  int sign;       /* PUT over HTTP: HREQ_SIGN_* */
  unsigned share; /* staging chunks this part may hold (0: up to 3) */
  int http_only;  /* RDMA declined or failed for it: HTTP alone */
  /* results */
  int status;
  struct hipobj_error err;
  uint64_t bytes;       /* payload bytes moved */
  uint64_t object_size; /* GET: from Content-Range or the whole body */
  int ranged_answer;    /* GET: a 206 (0: the whole object came) */
  int64_t mtime;        /* GET: Last-Modified, Unix time; 0 when none */
  int fallback;         /* RDMA did not move it: run it over HTTP */
  int declined;         /* ... because the server declined RDMA */
  unsigned retries;
  char etag[HIPOBJ_ETAG_MAX];
  char crc32c_b64[12];  /* the CRC32C sent, "" when none */
  int crc32c_confirmed; /* the server echoed it */
  /* GET: what its checksums ask, compute and verified (cks.h); the plan
   * sets ck.ask and ck.want64. */
  struct hcks_part ck;
  /* path state */
  struct hstage *stage;
  struct hfile_window win; /* http-mapped: the part's window of the file */
  struct htask task;       /* a blocking part on the workers' queue */
  struct hpart *redo_next; /* in the job's redo list */
  int busy;
  /* Last: the HTTP paths clear it themselves (hreq_init), so a part is
   * cleared only up to here. */
  struct hreq r;
};

/* Called by the paths when a part has finished (any thread). */
void hpart_done(struct hpart *p);

/* ---- jobs and plans ---------------------------------------------------------
 */

enum hnext {
  HNEXT_PART, /* start the part the plan filled */
  HNEXT_STEP, /* run ops->step(j, step) on a worker */
  HNEXT_WAIT, /* nothing now: something in flight will call back */
  HNEXT_DONE, /* finished: nothing in flight, nothing more to do */
};

struct hjob_ops {
  /* Under the job's lock. PART: fill *p (a free slot); STEP: set *step. */
  enum hnext (*next)(struct hjob *j, struct hpart *p, int *step);
  /* On a worker, without the lock: a request that moves no payload. Returns
   * a status (j->err-like detail in *err). */
  int (*step)(struct hjob *j, int step, struct hipobj_error *err);
  /* Under the lock: a part or step ended (p NULL for a step) with rc. */
  void (*finished)(struct hjob *j, struct hpart *p, int step, int rc,
                   const struct hipobj_error *err);
  /* After the end: the job's result (res zeroed, struct_size set). */
  void (*result)(struct hjob *j, struct hipobj_xfer_result *res);
  /* Frees the plan's state. */
  void (*free)(struct hjob *j);
};

struct hjob {
  struct hipobj_client *c;
  const struct hjob_ops *ops;
  void *plan;     /* the plan's state */
  const char *op; /* "GetObject", "PutObject", "UploadPart" */
  const char *bucket, *key;
  const struct hipobj_mem *mem;
  struct hxctl *ctl;
  int policy;    /* effective RDMA policy (HIPOBJ_RDMA_AUTO/OFF/REQUIRE) */
  unsigned conc; /* parts in flight at most */
  /* state, under lock */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  struct hpart *slots; /* conc of them */
  struct hpart *redo;  /* a part waiting to (re)start: memory, fallback */
  unsigned parts_in_flight, steps_in_flight;
  int failed; /* the first failure is in status/err */
  int status;
  struct hipobj_error err;
  int finished; /* the plan said DONE and nothing runs */
  /* results kept by the scheduler */
  uint64_t bytes_by[5]; /* payload bytes per enum hipobj_data_path */
  unsigned retries;
  /* completion: the waiter (blocking call) or the asynchronous transfer's
   * callback, run on a worker */
  void (*on_finish)(struct hjob *j);
  /* A blocking call's thread, which waits for the job: small parts it
   * starts itself run on it (path_http.c) */
  int has_waiter;
  pthread_t waiter;
  /* scheduler links (sched lock) */
  struct hjob *ring_next, *ring_prev;
  int in_ring;
  int step; /* the step running */
  struct htask step_task;
};

/* Fills the common part of j (the plan sets ops and plan after). Checks
 * nothing: callers validated their arguments. */
int hjob_init(struct hjob *j, struct hipobj_client *c, const char *op,
              const char *bucket, const char *key, const struct hipobj_mem *mem,
              struct hxctl *ctl, int policy, unsigned conc,
              struct hipobj_error *err);
void hjob_destroy(struct hjob *j);
/* Under the lock: non-zero once j failed or was cancelled (a cancel is
 * recorded then as its failure, HIPOBJ_E_CANCELLED). Plans ask before
 * handing out more work. */
int hjob_stopped(struct hjob *j);
/* Records the first failure (under the lock). */
void hjob_fail(struct hjob *j, int status, const struct hipobj_error *err);
/* The path the payload took as a whole: RDMA when every byte went by RDMA,
 * else HTTP of the memory kind (NONE when no byte moved). */
enum hipobj_data_path hjob_path(const struct hjob *j);
uint64_t hjob_rdma_bytes(const struct hjob *j);

/* ---- the scheduler (sched.c) -----------------------------------------------
 */

struct hsched;
int hsched_create(struct hipobj_client *c, struct hsched **out);
/* No job may be running. NULL allowed. */
void hsched_destroy(struct hsched *s);
/* Starts j (any thread; never blocks for long). j->on_finish is called
 * once it has finished, on whatever thread finished it. */
void hsched_start(struct hsched *s, struct hjob *j);
/* Blocks until j has finished; returns j->status. */
int hsched_wait(struct hjob *j);
/* Pokes the scheduler: something may have become possible (chunks came
 * back, a job was cancelled). */
void hsched_pump(struct hsched *s);
/* The same as a plain callback (arg: the scheduler). */
void hsched_pump_cb(void *arg);
/* Runs t->fn(t) on a worker (a user's completion callback). -1 when no
 * worker could be started. */
int hsched_defer(struct hsched *s, struct htask *t);

#endif
