/* staging.c - GPU data over HTTP through pinned host chunks (see staging.h):
 * the bounded pool, the GET sink pipeline (host chunk -> GPU copies queued
 * while the next chunk arrives) and the PUT source pipeline (GPU -> host
 * copies queued ahead of the engine reading the body), each over one stream
 * of the transfer's own with one event per chunk. */
#include "staging.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../s3/checksum.h"
#include "../s3/crypto.h"
#include "base/codec.h"
#include "base/strutil.h"
#include "copy.h"
#include "gpu.h"
#include "mem.h"

/* ---- pool ---------------------------------------------------------------- */

struct chunk {
  struct chunk *next;
  char *buf;
  int alloc_dev; /* device whose context allocated it */
};

struct plat_pool {
  const struct hcopy_ops *cops; /* what allocated the chunks ... */
  const struct hgpu_ops *gpu;   /* ... and with which GPU platform */
  struct chunk *free;
  unsigned allocated, in_use, peak, waits;
};

struct hstage_pool {
  void (*on_give)(void *arg); /* chunks came back (the scheduler) */
  void *on_give_arg;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  size_t chunk_bytes;
  unsigned max_chunks;
  struct plat_pool plat[HSTAGE_N_KINDS];
};

int hstage_pool_create(size_t pool_bytes, size_t chunk_bytes,
                       struct hstage_pool **out) {
  struct hstage_pool *p = calloc(1, sizeof *p);
  if (!p)
    return -1;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->cond, NULL);
  p->chunk_bytes = chunk_bytes;
  size_t n = chunk_bytes ? pool_bytes / chunk_bytes : 0;
  p->max_chunks = n < 1 ? 1 : n > 1u << 20 ? 1u << 20 : (unsigned)n;
  *out = p;
  return 0;
}

void hstage_pool_on_give(struct hstage_pool *p, void (*fn)(void *arg),
                         void *arg) {
  p->on_give = fn;
  p->on_give_arg = arg;
}

void hstage_pool_destroy(struct hstage_pool *p) {
  if (!p)
    return;
  for (int k = 0; k < HSTAGE_N_KINDS; k++) {
    struct plat_pool *pp = &p->plat[k];
    for (struct chunk *c = pp->free, *next; c; c = next) {
      next = c->next;
      pp->cops->chunk_free(pp->gpu, c->alloc_dev, c->buf);
      free(c);
    }
  }
  pthread_cond_destroy(&p->cond);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

void hstage_pool_stats(struct hstage_pool *p, enum hipobj_mem_kind kind,
                       struct hstage_pool_stats *out) {
  memset(out, 0, sizeof *out);
  if (!p || (int)kind < 0 || (int)kind >= HSTAGE_N_KINDS)
    return;
  pthread_mutex_lock(&p->lock);
  const struct plat_pool *pp = &p->plat[kind];
  out->max_chunks = p->max_chunks;
  out->allocated = pp->allocated;
  out->in_use = pp->in_use;
  out->peak = pp->peak;
  out->waits = pp->waits;
  pthread_mutex_unlock(&p->lock);
}

/* Takes up to `want` chunks, at least one: waits while none is free and the
 * bound is reached. Returns the number taken, 0 with why when even one
 * chunk cannot be allocated. */
static unsigned free_chunks(const struct hstage_pool *p,
                            const struct plat_pool *pp) {
  unsigned n = p->max_chunks - pp->allocated;
  for (const struct chunk *c = pp->free; c; c = c->next)
    n++;
  return n;
}

/* With all set, waits until `want` chunks can be had at once (an RDMA
 * PUT sends them in one go; the caller checks want <= max_chunks). With
 * nowait, returns 0 and sets *again instead of waiting. */
static unsigned pool_take(struct hstage_pool *p, const struct hcopy *cp,
                          enum hipobj_mem_kind kind, int dev, unsigned want,
                          int all, int nowait, int *again, struct chunk **out,
                          char why[HCOPY_WHY]) {
  struct plat_pool *pp = &p->plat[kind];
  unsigned got = 0;
  unsigned need = all ? want : 1;
  pthread_mutex_lock(&p->lock);
  if (free_chunks(p, pp) < need) {
    pp->waits++;
    if (nowait) {
      *again = 1;
      pthread_mutex_unlock(&p->lock);
      return 0;
    }
  }
  while (free_chunks(p, pp) < need)
    pthread_cond_wait(&p->cond, &p->lock);
  while (got < want) {
    struct chunk *c = pp->free;
    if (c) {
      pp->free = c->next;
    } else if (pp->allocated < p->max_chunks) {
      /* Allocated under the lock: rare (the pool only grows), and a
       * second thread would only allocate past the bound. */
      c = calloc(1, sizeof *c);
      if (c &&
          cp->ops->chunk_alloc(cp, p->chunk_bytes, (void **)&c->buf, why)) {
        free(c);
        c = NULL;
      } else if (!c) {
        snprintf(why, HCOPY_WHY, "out of memory");
      }
      if (!c)
        break;
      c->alloc_dev = dev;
      pp->cops = cp->ops;
      pp->gpu = cp->gpu;
      pp->allocated++;
    } else {
      break;
    }
    out[got++] = c;
  }
  pp->in_use += got;
  if (pp->in_use > pp->peak)
    pp->peak = pp->in_use;
  pthread_mutex_unlock(&p->lock);
  return got;
}

static void pool_give(struct hstage_pool *p, enum hipobj_mem_kind kind,
                      struct chunk **chunks, unsigned n) {
  if (!n)
    return;
  struct plat_pool *pp = &p->plat[kind];
  pthread_mutex_lock(&p->lock);
  for (unsigned i = 0; i < n; i++) {
    chunks[i]->next = pp->free;
    pp->free = chunks[i];
  }
  pp->in_use -= n;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
  /* Parts that found the pool empty are waiting for this. */
  if (p->on_give)
    p->on_give(p->on_give_arg);
}

/* ---- one transfer -------------------------------------------------------- */

struct slot {
  struct chunk *c;
  void *event;
  int pending;  /* a copy is queued on this chunk */
  int active;   /* holds data of chunk `seq` */
  int issued;   /* GET: its copy to the GPU was queued */
  uint64_t seq; /* which chunk of the range */
  size_t n;     /* valid bytes */
};

struct hstage {
  struct hstage_pool *pool;
  struct hcopy cp; /* the memory's side: GPU streams or file threads */
  enum hipobj_mem_kind kind;
  void *stream;
  uint64_t len; /* bytes in the range (GET: the buffer's capacity) */
  size_t cb;    /* chunk bytes */
  unsigned k;   /* slots (chunks held) */
  struct slot slot[HSTAGE_MAX_SLOTS];
  /* PUT */
  uint64_t pos;      /* bytes handed to the engine */
  uint64_t next_seq; /* next chunk to copy from the GPU */
  int resident;      /* the whole range fits in the chunks held */
  enum hmem_dir dir; /* HMEM_READ: the data leaves the memory (PUT) */
  struct hreq *req;
  /* the first failure since the last rewind */
  int failed;
  char reason[HCOPY_WHY + 64];
};

const char *hstage_reason(const struct hstage *s) {
  return s->reason[0] ? s->reason : "GPU staging failed";
}

static int stage_fail(struct hstage *s, const char *why) {
  if (!s->failed) {
    s->failed = 1;
    const char *what =
        s->dir == HMEM_READ ? s->cp.ops->from_what : s->cp.ops->to_what;
    snprintf(s->reason, sizeof s->reason, "%s failed: %s", what, why);
  }
  return -1;
}

/* Waits for the copy queued on sl. */
static int slot_wait(struct hstage *s, struct slot *sl) {
  if (!sl->pending)
    return 0;
  char why[HCOPY_WHY];
  sl->pending = 0;
  if (s->cp.ops->event_sync(&s->cp, sl->event, why) != 0)
    return stage_fail(s, why);
  return 0;
}

/* Waits for every queued copy; -1 when one of them failed. */
static int wait_all(struct hstage *s) {
  int rc = 0;
  for (unsigned i = 0; i < s->k; i++)
    if (slot_wait(s, &s->slot[i]) != 0)
      rc = -1;
  return rc;
}

static int begin_n(struct hipobj_client *c, const char *op,
                   const struct hipobj_mem *m, enum hmem_dir dir, uint64_t off,
                   uint64_t len, int all, int nowait, unsigned cap,
                   struct hstage **out, struct hipobj_error *err);

static int begin(struct hipobj_client *c, const char *op,
                 const struct hipobj_mem *m, enum hmem_dir dir, uint64_t off,
                 uint64_t len, int nowait, struct hstage **out,
                 struct hipobj_error *err) {
  return begin_n(c, op, m, dir, off, len, 0, nowait, 0, out, err);
}

/* all: every chunk the range needs (up to HSTAGE_MAX_SLOTS), or none.
 * cap: at most this many chunks (0: HSTAGE_MAX_SLOTS). nowait: HSTAGE_AGAIN
 * instead of waiting for chunks. */
static int begin_n(struct hipobj_client *c, const char *op,
                   const struct hipobj_mem *m, enum hmem_dir dir, uint64_t off,
                   uint64_t len, int all, int nowait, unsigned cap,
                   struct hstage **out, struct hipobj_error *err) {
  *out = NULL;
  /* The memory was checked when its transfer began (hmem_check): a part
   * that finds the pool empty comes back on every turn of the scheduler,
   * and each turn would pay a check's system calls again. */
  struct hstage *s = calloc(1, sizeof *s);
  if (!s)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  s->pool = c->stage_pool;
  s->kind = m->kind;
  s->dir = dir;
  if (m->kind == HIPOBJ_MEM_FILE) {
    s->cp.ops = &hcopy_file_ops;
    s->cp.fd = m->fd;
    s->cp.off = m->offset + off;
    s->cp.fileq = c->fileq;
  } else {
    char why[HGPU_WHY];
    s->cp.ops = &hcopy_gpu_ops;
    s->cp.gpu = hgpu_platform(m->kind, &c->log, why); /* checked: loads */
    s->cp.dev = m->device;
    s->cp.base = (char *)m->ptr + off;
    if (!s->cp.gpu) {
      free(s); /* nothing taken yet: *out stays NULL */
      return herr_set(err, HIPOBJ_E_UNSUPPORTED, op, "%s", why);
    }
  }
  s->len = len;
  s->cb = s->pool->chunk_bytes;
  uint64_t chunks = (len + s->cb - 1) / s->cb;
  unsigned most = cap && cap < HSTAGE_MAX_SLOTS ? cap : HSTAGE_MAX_SLOTS;
  unsigned want = chunks < most ? (unsigned)chunks : most;
  *out = s;
  if (want == 0)
    return HIPOBJ_OK; /* an empty range moves no data */
  char why[HCOPY_WHY] = "";
  struct chunk *got[HSTAGE_MAX_SLOTS];
  if (all && want > s->pool->max_chunks)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                    "%u staging chunks are needed at once, the pool has %u",
                    want, s->pool->max_chunks);
  int again = 0;
  s->k = pool_take(s->pool, &s->cp, s->kind, s->cp.dev, want, all, nowait,
                   &again, got, why);
  if (again)
    return HSTAGE_AGAIN;
  if (s->k == 0)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op,
                    "cannot allocate pinned staging memory: %s", why);
  for (unsigned i = 0; i < s->k; i++)
    s->slot[i].c = got[i];
  if (s->cp.ops->stream_create(&s->cp, &s->stream, why) != 0) {
    s->stream = NULL;
    return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
  }
  for (unsigned i = 0; i < s->k; i++)
    if (s->cp.ops->event_create(&s->cp, &s->slot[i].event, why) != 0) {
      s->slot[i].event = NULL;
      return herr_set(err, HIPOBJ_E_IO, op, "%s", why);
    }
  if (s->pool->plat[s->kind].waits)
    HLOG_DBG(&c->log, "%s: staging through %u pinned chunk(s) of %zu bytes", op,
             s->k, s->cb);
  return HIPOBJ_OK;
}

void hstage_end(struct hstage *s) {
  if (!s)
    return;
  struct chunk *chunks[HSTAGE_MAX_SLOTS];
  /* No chunk goes back while a copy may still read or write it. */
  wait_all(s);
  for (unsigned i = 0; i < s->k; i++) {
    if (s->slot[i].event)
      s->cp.ops->event_destroy(&s->cp, s->slot[i].event);
    chunks[i] = s->slot[i].c;
  }
  if (s->stream)
    s->cp.ops->stream_destroy(&s->cp, s->stream);
  pool_give(s->pool, s->kind, chunks, s->k);
  free(s);
}

/* ---- GET: body -> chunk -> GPU ------------------------------------------ */

int hstage_get_begin(struct hipobj_client *c, const char *op,
                     const struct hipobj_mem *dst, int nowait,
                     struct hstage **out, struct hipobj_error *err) {
  int rc =
      begin(c, op, dst, HMEM_WRITE, 0, dst ? dst->len : 0, nowait, out, err);
  if (rc) {
    hstage_end(*out);
    *out = NULL;
  }
  return rc;
}

/* Queues the copy of a filled chunk to its place in GPU memory (or the
 * file). last: the range's final chunk, which the caller waits for next. */
static int get_issue(struct hstage *s, struct slot *sl, int last) {
  char why[HCOPY_WHY];
  if (s->cp.ops->to_mem(&s->cp, s->stream, sl->seq * s->cb, sl->c->buf, sl->n,
                        last, why) != 0 ||
      s->cp.ops->event_record(&s->cp, sl->event, s->stream, why) != 0)
    return stage_fail(s, why);
  sl->issued = 1;
  sl->pending = 1;
  return 0;
}

int hstage_get_write(struct hstage *s, uint64_t off, const char *data,
                     size_t n) {
  if (s->failed)
    return -1;
  if (n > s->len || off > s->len - n || (n && !s->k))
    return stage_fail(s, "body bytes beyond the staged range (bug)");
  while (n > 0) {
    uint64_t seq = off / s->cb;
    size_t in = (size_t)(off % s->cb);
    struct slot *sl = &s->slot[seq % s->k];
    if (!sl->active || sl->seq != seq) {
      /* Reusing the chunk: its data must have been sent on, and the copy
       * that read it must be over. */
      if (sl->active && !sl->issued)
        return stage_fail(s, "chunk reused before its copy (bug)");
      if (slot_wait(s, sl) != 0)
        return -1;
      sl->active = 1;
      sl->issued = 0;
      sl->seq = seq;
      sl->n = 0;
    }
    if (in != sl->n)
      return stage_fail(s, "body bytes out of order (bug)");
    size_t m = s->cb - in < n ? s->cb - in : n;
    memcpy(sl->c->buf + in, data, m);
    sl->n += m;
    off += m;
    data += m;
    n -= m;
    if ((sl->n == s->cb || off == s->len) &&
        get_issue(s, sl, off == s->len) != 0)
      return -1;
  }
  return 0;
}

int hstage_get_flush(struct hstage *s) {
  if (s->failed)
    return -1;
  for (unsigned i = 0; i < s->k; i++) {
    struct slot *sl = &s->slot[i];
    if (sl->active && !sl->issued && sl->n > 0 && get_issue(s, sl, 1) != 0)
      break;
  }
  int rc = wait_all(s);
  return s->failed ? -1 : rc;
}

void hstage_get_rewind(struct hstage *s) {
  /* Copies of the failed attempt may still be reading the chunks; their
   * errors belong to that attempt. */
  wait_all(s);
  for (unsigned i = 0; i < s->k; i++) {
    s->slot[i].active = 0;
    s->slot[i].issued = 0;
    s->slot[i].n = 0;
  }
  s->failed = 0;
  s->reason[0] = '\0';
}

/* ---- PUT: GPU -> chunk -> body ------------------------------------------ */

unsigned hstage_share(const struct hipobj_client *c, unsigned transfers) {
  unsigned n = transfers ? c->stage_pool->max_chunks / transfers : 0;
  return n ? n : 1;
}

int hstage_put_begin(struct hipobj_client *c, const char *op,
                     const struct hipobj_mem *src, uint64_t off, uint64_t len,
                     unsigned share, int nowait, struct hstage **out,
                     struct hipobj_error *err) {
  if (src && (off > src->len || len > src->len - off))
    return herr_set(err, HIPOBJ_E_INTERNAL, op,
                    "range %" PRIu64 "+%" PRIu64 " outside the buffer", off,
                    len);
  int rc = begin_n(c, op, src, HMEM_READ, off, len, 0, nowait, share, out, err);
  if (rc) {
    hstage_end(*out);
    *out = NULL;
  } else {
    (*out)->resident = (len + (*out)->cb - 1) / (*out)->cb <= (*out)->k;
  }
  return rc;
}

/* Queues copies from the GPU into every chunk that is free, up to k chunks
 * ahead of the one being read. */
static int put_fill(struct hstage *s) {
  uint64_t cur = s->pos / s->cb;
  while (s->next_seq * s->cb < s->len && s->next_seq < cur + s->k) {
    struct slot *sl = &s->slot[s->next_seq % s->k];
    char why[HCOPY_WHY];
    uint64_t off = s->next_seq * s->cb;
    size_t n = s->len - off < s->cb ? (size_t)(s->len - off) : s->cb;
    if (slot_wait(s, sl) != 0)
      return -1;
    if (s->cp.ops->from_mem(&s->cp, s->stream, sl->c->buf, off, n, why) != 0 ||
        s->cp.ops->event_record(&s->cp, sl->event, s->stream, why) != 0)
      return stage_fail(s, why);
    sl->pending = 1;
    sl->active = 1;
    sl->seq = s->next_seq++;
    sl->n = n;
  }
  return 0;
}

static int put_rewind(struct hstage *s) {
  wait_all(s);
  /* A range that fits in the transfer's chunks is copied out of the GPU
   * once: the hash pass and every attempt read the same chunks. */
  if (s->resident && !s->failed && s->next_seq * s->cb >= s->len) {
    s->pos = 0;
    return 0;
  }
  for (unsigned i = 0; i < s->k; i++)
    s->slot[i].active = 0;
  s->pos = 0;
  s->next_seq = 0;
  s->failed = 0;
  s->reason[0] = '\0';
  return put_fill(s);
}

/* The bytes available next (waiting for their copy); *n = 0 at the end. */
static int put_peek(struct hstage *s, const char **p, size_t *n) {
  *n = 0;
  if (s->failed)
    return -1;
  if (s->pos >= s->len)
    return 0;
  uint64_t seq = s->pos / s->cb;
  struct slot *sl = &s->slot[seq % s->k];
  if (!sl->active || sl->seq != seq)
    return stage_fail(s, "chunk not queued (bug)");
  if (slot_wait(s, sl) != 0)
    return -1;
  size_t in = (size_t)(s->pos % s->cb);
  *p = sl->c->buf + in;
  *n = sl->n - in;
  return 0;
}

static int put_advance(struct hstage *s, size_t m) {
  s->pos += m;
  if (s->pos % s->cb == 0 || s->pos == s->len)
    return put_fill(s); /* a chunk was used up: refill it */
  return 0;
}

static size_t put_source(void *ctx, char *buf, size_t want) {
  struct hstage *s = ctx;
  size_t done = 0;
  while (done < want) {
    const char *p;
    size_t n;
    if (put_peek(s, &p, &n) != 0)
      goto failed;
    if (n == 0)
      break;
    if (n > want - done)
      n = want - done;
    memcpy(buf + done, p, n);
    done += n;
    if (put_advance(s, n) != 0)
      goto failed;
  }
  return done;
failed:
  if (s->req) {
    s->req->sink_status = HIPOBJ_E_IO;
    hstrlcpy(s->req->sink_reason, hstage_reason(s), sizeof s->req->sink_reason);
  }
  return (size_t)-1;
}

static int put_before_attempt(struct hreq *r) {
  struct hstage *s = r->source_ctx;
  /* A failure to queue the first copies is reported by the source. */
  put_rewind(s);
  return 0;
}

/* The signing/checksum pass: the whole range through the same pipeline,
 * hashed straight from the chunks. */
static int put_digest(struct hreq *r, char *sha_hex, uint32_t *crc) {
  struct hstage *s = r->source_ctx;
  struct s3_sha256_ctx *h = NULL;
  if (sha_hex && !(h = s3_sha256_begin()))
    return herr_set(&r->err, HIPOBJ_E_OUT_OF_MEMORY, r->op_name,
                    "out of memory");
  int rc = put_rewind(s);
  while (rc == 0) {
    const char *p;
    size_t n;
    if ((rc = put_peek(s, &p, &n)) != 0 || n == 0)
      break;
    if (h)
      s3_sha256_update(h, p, n);
    if (crc)
      *crc = s3_crc32c(*crc, p, n);
    rc = put_advance(s, n);
  }
  uint8_t digest[S3_SHA256_LEN];
  int hrc = h ? s3_sha256_end(h, digest) : 0;
  if (rc != 0)
    return herr_set(&r->err, HIPOBJ_E_IO, r->op_name, "%s", hstage_reason(s));
  if (hrc != 0)
    return herr_set(&r->err, HIPOBJ_E_INTERNAL, r->op_name,
                    "SHA-256 of the payload failed (OpenSSL)");
  if (sha_hex)
    hhex_encode(digest, sizeof digest, sha_hex);
  return HIPOBJ_OK;
}

void hstage_put_attach(struct hstage *s, struct hreq *r) {
  s->req = r;
  r->body = NULL;
  r->source = put_source;
  r->source_ctx = s;
  r->body_len = s->len;
  r->send_body = 1;
  r->before_attempt = put_before_attempt;
  r->digest_source = put_digest;
}

/* ---- RDMA-staged: the RDMA path fills and drains the chunks itself ------- */

int hstage_rdma_begin(struct hipobj_client *c, const char *op,
                      const struct hipobj_mem *m, int is_put, uint64_t len,
                      struct hstage **out, struct hipobj_error *err) {
  int rc = begin_n(c, op, m, is_put ? HMEM_READ : HMEM_WRITE, 0, len, is_put, 0,
                   0, out, err);
  if (rc) {
    hstage_end(*out);
    *out = NULL;
  }
  return rc;
}

unsigned hstage_nslots(const struct hstage *s) {
  return s->k;
}

size_t hstage_chunk_size(const struct hstage *s) {
  return s->cb;
}

void *hstage_slot_buf(struct hstage *s, unsigned i) {
  return s->slot[i].c->buf;
}

int hstage_slot_wait(struct hstage *s, unsigned i) {
  if (s->failed)
    return -1;
  return slot_wait(s, &s->slot[i]);
}

/* Both directions wait for the slot's previous copy first: a chunk is
 * never refilled while a copy still reads or writes it. */
static int slot_copy(struct hstage *s, unsigned i, uint64_t off, size_t n,
                     int to_gpu) {
  struct slot *sl = &s->slot[i];
  char why[HCOPY_WHY];
  if (s->failed || slot_wait(s, sl) != 0)
    return -1;
  if (n > s->cb || off > s->len || n > s->len - off)
    return stage_fail(s, "chunk copy outside the staged range (bug)");
  int rc =
      to_gpu ? s->cp.ops->to_mem(&s->cp, s->stream, off, sl->c->buf, n, 0, why)
             : s->cp.ops->from_mem(&s->cp, s->stream, sl->c->buf, off, n, why);
  if (rc != 0 ||
      s->cp.ops->event_record(&s->cp, sl->event, s->stream, why) != 0)
    return stage_fail(s, why);
  sl->pending = 1;
  return 0;
}

int hstage_slot_to_gpu(struct hstage *s, unsigned i, uint64_t off, size_t n) {
  return slot_copy(s, i, off, n, 1);
}

int hstage_slot_from_gpu(struct hstage *s, unsigned i, uint64_t off, size_t n) {
  return slot_copy(s, i, off, n, 0);
}

int hstage_wait_all(struct hstage *s) {
  int rc = wait_all(s);
  return s->failed ? -1 : rc;
}
