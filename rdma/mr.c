/* mr.c - memory registration and the per-PD registration cache (see mr.h).
 *
 * Registering pins pages and costs a system call per MR (milliseconds for
 * large ranges), so transfers reuse registrations through the cache: an
 * acquire is a hit when a cached registration covers the range; a miss
 * registers the union of the range and every cached registration it
 * overlaps, so ranges that grow or slide settle into one registration
 * instead of piling up. Registrations that were absorbed or dropped while
 * still in use move to a retired list and are deregistered at their last
 * release, never under a user.
 *
 * The slow verbs calls (ibv_reg_mr, ibv_dereg_mr) run outside the cache lock
 * so lookups are not blocked behind a large registration. */
#include "mr.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/base/error.h"

const struct rdma_mr_piece *rdma_mr_find_piece(const struct rdma_mr *m,
                                               const void *addr, size_t len) {
  uintptr_t a = (uintptr_t)addr;
  if (!m || a + len < a)
    return NULL;
  for (size_t i = 0; i < m->npieces; i++) {
    const struct rdma_mr_piece *p = &m->pieces[i];
    if (a >= p->addr && a + len <= p->addr + p->len)
      return p;
  }
  return NULL;
}

#ifdef HIPOBJ_HAVE_VERBS

#include <infiniband/verbs.h>

#define OP "RDMA registration"

static atomic_long live_mrs;

long rdma_mr_live_count(void) {
  return atomic_load(&live_mrs);
}

static int ibv_access_of(unsigned a) {
  if (!a)
    a = RDMA_MR_ACCESS_DEFAULT;
  int f = 0;
  if (a & (RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE))
    f |= IBV_ACCESS_LOCAL_WRITE;
  if (a & RDMA_MR_REMOTE_WRITE)
    f |= IBV_ACCESS_REMOTE_WRITE;
  if (a & RDMA_MR_REMOTE_READ)
    f |= IBV_ACCESS_REMOTE_READ;
  return f;
}

static size_t page_size(void) {
  long pg = sysconf(_SC_PAGESIZE);
  return pg > 0 ? (size_t)pg : 4096;
}

/* The split size: max_mr_size (or the forced value) rounded down to whole
 * pages so that pieces never pin one page twice. */
static size_t chunk_of(struct ibv_pd *pd, uint64_t max) {
  if (max == 0) {
    struct ibv_device_attr da;
    max = ibv_query_device(pd->context, &da) == 0 && da.max_mr_size
              ? da.max_mr_size
              : UINT64_MAX;
  }
  if (max > SIZE_MAX)
    max = SIZE_MAX;
  size_t pg = page_size();
  if (max >= pg)
    max -= max % pg;
  return (size_t)max;
}

static void set_errno_detail(struct hipobj_error *err, int e) {
  if (err)
    err->sys_errno = e;
}

static void dereg_pieces(struct rdma_mr *m) {
  for (size_t i = 0; i < m->npieces; i++) {
    /* A failing dereg leaves the MR leaked (reported by rdma_mr_dereg);
     * the count keeps it, so leak tests see it. */
    if (m->pieces[i].mr && ibv_dereg_mr(m->pieces[i].mr) == 0)
      atomic_fetch_sub(&live_mrs, 1);
  }
  free(m->pieces);
  m->pieces = NULL;
  m->npieces = 0;
}

/* The exported dma-buf fd is only needed while registering. */
static void release_fd(const struct rdma_dmabuf_ops *ops, int fd) {
  if (fd < 0)
    return;
  if (ops->release)
    ops->release(ops->user, fd);
  else
    close(fd);
}

/* Registers [addr, addr+len) into m, in pieces of `chunk` bytes. For
 * dma-buf memory, ops exports the range first and the pieces are at
 * fd offsets matching their addresses. */
static int register_into(struct rdma_mr *m, struct ibv_pd *pd,
                         enum rdma_mem_kind kind,
                         const struct rdma_dmabuf_ops *ops, uintptr_t addr,
                         size_t len, unsigned access, size_t chunk,
                         struct hipobj_error *err) {
  memset(m, 0, sizeof *m);
  if (!pd || !len || addr + len < addr || !chunk)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "invalid range or protection domain (len %zu)", len);
  int fd = -1;
  uint64_t fd_off = 0;
  rdma_reg_dmabuf_fn reg = NULL;
  if (kind == RDMA_MEM_DMABUF) {
    if (!ops || !ops->export_range)
      return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP,
                      "device memory needs a dma-buf exporter, none is set");
#ifdef HIPOBJ_HAVE_IBV_REG_DMABUF_MR
    reg = ops->reg ? ops->reg : ibv_reg_dmabuf_mr;
#else
    reg = ops->reg;
#endif
    if (!reg)
      return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP,
                      "this libibverbs has no ibv_reg_dmabuf_mr()");
    int rc =
        ops->export_range(ops->user, (const void *)addr, len, &fd, &fd_off);
    if (rc != 0 || fd < 0)
      return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP,
                      "exporting %zu bytes of device memory as a dma-buf "
                      "failed (%d)",
                      len, rc);
  }
  size_t n = len / chunk + (len % chunk != 0);
  m->pieces = calloc(n, sizeof *m->pieces);
  if (!m->pieces) {
    release_fd(ops, fd);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  }
  int flags = ibv_access_of(access);
  int rc = HIPOBJ_OK;
  for (size_t i = 0; i < n; i++) {
    uintptr_t a = addr + i * chunk;
    size_t l = i + 1 < n ? chunk : len - i * chunk;
    struct ibv_mr *mr;
    if (kind == RDMA_MEM_DMABUF)
      mr = reg(pd, fd_off + i * chunk, l, a, fd, flags);
    else
      mr = ibv_reg_mr(pd, (void *)a, l, flags);
    if (!mr) {
      int e = errno ? errno : EIO;
      rc = e == ENOMEM ? HIPOBJ_E_OUT_OF_MEMORY : HIPOBJ_E_IO;
      herr_set(err, rc, OP, "%s of %zu bytes at piece %zu/%zu failed: %s%s",
               kind == RDMA_MEM_DMABUF ? "ibv_reg_dmabuf_mr" : "ibv_reg_mr", l,
               i + 1, n, strerror(e),
               e == ENOMEM || e == EPERM
                   ? " (is RLIMIT_MEMLOCK too low for pinning?)"
                   : "");
      set_errno_detail(err, e);
      dereg_pieces(m);
      break;
    }
    atomic_fetch_add(&live_mrs, 1);
    m->pieces[i] = (struct rdma_mr_piece){a, l, mr->lkey, mr->rkey, mr};
    m->npieces = i + 1;
  }
  release_fd(ops, fd);
  if (rc != HIPOBJ_OK)
    return rc;
  m->addr = addr;
  m->len = len;
  m->access = access ? access : RDMA_MR_ACCESS_DEFAULT;
  m->kind = kind;
  return HIPOBJ_OK;
}

int rdma_mr_reg(struct ibv_pd *pd, void *addr, size_t len, unsigned access,
                uint64_t max_piece, struct rdma_mr **out,
                struct hipobj_error *err) {
  if (!out || !pd)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "no protection domain or output given");
  *out = NULL;
  struct rdma_mr *m = malloc(sizeof *m);
  if (!m)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  int rc = register_into(m, pd, RDMA_MEM_HOST, NULL, (uintptr_t)addr, len,
                         access, chunk_of(pd, max_piece), err);
  if (rc != HIPOBJ_OK) {
    free(m);
    return rc;
  }
  *out = m;
  return HIPOBJ_OK;
}

int rdma_mr_reg_dmabuf(struct ibv_pd *pd, const struct rdma_dmabuf_ops *ops,
                       const void *ptr, size_t len, unsigned access,
                       uint64_t max_piece, struct rdma_mr **out,
                       struct hipobj_error *err) {
  if (!out || !pd)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "no protection domain or output given");
  *out = NULL;
  struct rdma_mr *m = malloc(sizeof *m);
  if (!m)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  int rc = register_into(m, pd, RDMA_MEM_DMABUF, ops, (uintptr_t)ptr, len,
                         access, chunk_of(pd, max_piece), err);
  if (rc != HIPOBJ_OK) {
    free(m);
    return rc;
  }
  *out = m;
  return HIPOBJ_OK;
}

int rdma_mr_dereg(struct rdma_mr *m, struct hipobj_error *err) {
  int rc = HIPOBJ_OK;
  if (!m)
    return HIPOBJ_OK;
  for (size_t i = 0; i < m->npieces; i++) {
    int e = m->pieces[i].mr ? ibv_dereg_mr(m->pieces[i].mr) : 0;
    if (e == 0) {
      if (m->pieces[i].mr)
        atomic_fetch_sub(&live_mrs, 1);
    } else if (rc == HIPOBJ_OK) {
      /* e.g. EBUSY with a memory window bound: leak it, never reuse it. */
      rc = herr_set(err, HIPOBJ_E_IO, OP,
                    "ibv_dereg_mr of piece %zu/%zu failed: %s (leaked)", i + 1,
                    m->npieces, strerror(e));
      set_errno_detail(err, e);
    }
  }
  free(m->pieces);
  free(m);
  return rc;
}

/* ---- cache ------------------------------------------------------------------
 */

struct entry {
  struct rdma_mr mr; /* first: acquire hands out &entry->mr */
  struct entry *prev, *next;
  unsigned refs;
  int retired; /* absorbed or dropped: deregister at the last release */
};

struct rdma_mr_cache {
  struct ibv_pd *pd;
  pthread_mutex_t lock;
  size_t chunk;
  unsigned access;
  unsigned max_entries;
  struct rdma_dmabuf_ops dmabuf;
  int have_dmabuf;
  struct entry *head, *tail; /* cached, most recently used first */
  struct entry *retired;     /* still referenced, no longer cached */
  size_t n;
  struct rdma_mr_cache_stats st;
};

static void unlink_entry(struct entry **head, struct entry **tail,
                         struct entry *e) {
  if (e->prev)
    e->prev->next = e->next;
  else
    *head = e->next;
  if (e->next)
    e->next->prev = e->prev;
  else if (tail)
    *tail = e->prev;
  e->prev = e->next = NULL;
}

static void push_front(struct rdma_mr_cache *c, struct entry *e) {
  e->prev = NULL;
  e->next = c->head;
  if (c->head)
    c->head->prev = e;
  else
    c->tail = e;
  c->head = e;
}

/* Takes e out of the cache (lock held). Unreferenced: chained onto *gone
 * for deregistration after the unlock; referenced: retired. */
static void remove_entry(struct rdma_mr_cache *c, struct entry *e,
                         struct entry **gone) {
  unlink_entry(&c->head, &c->tail, e);
  c->n--;
  c->st.bytes -= e->mr.len;
  if (e->refs) {
    c->st.in_use--;
    e->retired = 1;
    e->next = c->retired;
    if (c->retired)
      c->retired->prev = e;
    c->retired = e;
  } else {
    e->next = *gone;
    *gone = e;
  }
}

static void free_entries(struct entry *gone) {
  while (gone) {
    struct entry *next = gone->next;
    dereg_pieces(&gone->mr);
    free(gone);
    gone = next;
  }
}

int rdma_mr_cache_create(struct ibv_pd *pd,
                         const struct rdma_mr_cache_opts *opts,
                         struct rdma_mr_cache **out, struct hipobj_error *err) {
  if (!pd || !out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "no protection domain or output given");
  struct rdma_mr_cache *c = calloc(1, sizeof *c);
  if (!c)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    return herr_set(err, HIPOBJ_E_INTERNAL, OP, "pthread_mutex_init failed");
  }
  c->pd = pd;
  c->chunk = chunk_of(pd, opts ? opts->max_mr_size : 0);
  c->access = opts && opts->access ? opts->access : RDMA_MR_ACCESS_DEFAULT;
  c->max_entries = opts && opts->max_entries ? opts->max_entries : 256;
  *out = c;
  return HIPOBJ_OK;
}

size_t rdma_mr_cache_destroy(struct rdma_mr_cache *c) {
  if (!c)
    return 0;
  size_t busy = 0;
  struct entry *gone = NULL;
  while (c->head) {
    busy += c->head->refs != 0;
    c->head->refs = 0;
    remove_entry(c, c->head, &gone);
  }
  while (c->retired) {
    struct entry *e = c->retired;
    busy++;
    unlink_entry(&c->retired, NULL, e);
    e->next = gone;
    gone = e;
  }
  free_entries(gone);
  pthread_mutex_destroy(&c->lock);
  free(c);
  return busy;
}

void rdma_mr_cache_set_dmabuf(struct rdma_mr_cache *c,
                              const struct rdma_dmabuf_ops *ops) {
  if (!c)
    return;
  pthread_mutex_lock(&c->lock);
  c->have_dmabuf = ops != NULL;
  if (ops)
    c->dmabuf = *ops;
  pthread_mutex_unlock(&c->lock);
}

static int covers(const struct entry *e, enum rdma_mem_kind kind, uintptr_t a,
                  uintptr_t end) {
  return e->mr.kind == kind && e->mr.addr <= a && end <= e->mr.addr + e->mr.len;
}

int rdma_mr_cache_acquire(struct rdma_mr_cache *c, enum rdma_mem_kind kind,
                          const void *addr, size_t len,
                          const struct rdma_mr **out,
                          struct hipobj_error *err) {
  uintptr_t a = (uintptr_t)addr, end = a + len;
  if (!c || !out || !len || end < a)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "invalid cache, output or range (len %zu)", len);
  *out = NULL;
  pthread_mutex_lock(&c->lock);
  for (struct entry *e = c->head; e; e = e->next) {
    if (covers(e, kind, a, end)) {
      if (e->refs++ == 0)
        c->st.in_use++;
      c->st.hits++;
      unlink_entry(&c->head, &c->tail, e);
      push_front(c, e);
      pthread_mutex_unlock(&c->lock);
      *out = &e->mr;
      return HIPOBJ_OK;
    }
  }
  c->st.misses++;
  /* Host ranges widen to whole pages: the pinned pages are the same, and
   * neighbours in one page then share the registration. */
  uintptr_t lo = a, hi = end;
  if (kind == RDMA_MEM_HOST) {
    size_t pg = page_size();
    lo = a - a % pg;
    if (hi % pg && hi + (pg - hi % pg) > hi)
      hi += pg - hi % pg;
  }
  uintptr_t want_lo = lo, want_hi = hi;
  /* Grow to the union with every overlapping registration of the kind,
   * until no other one overlaps the union. */
  for (int changed = 1; changed;) {
    changed = 0;
    for (struct entry *e = c->head; e; e = e->next) {
      uintptr_t elo = e->mr.addr, ehi = e->mr.addr + e->mr.len;
      if (e->mr.kind != kind || elo >= hi || lo >= ehi)
        continue;
      if (elo < lo || ehi > hi) {
        lo = elo < lo ? elo : lo;
        hi = ehi > hi ? ehi : hi;
        changed = 1;
      }
    }
  }
  struct rdma_dmabuf_ops ops = c->dmabuf;
  int have_ops = c->have_dmabuf;
  pthread_mutex_unlock(&c->lock);

  struct entry *ne = calloc(1, sizeof *ne);
  if (!ne)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  const struct rdma_dmabuf_ops *opsp = have_ops ? &ops : NULL;
  int merged = lo != want_lo || hi != want_hi;
  /* A failed union is retried below: only the final attempt reports. */
  int rc = register_into(&ne->mr, c->pd, kind, opsp, lo, hi - lo, c->access,
                         c->chunk, merged ? NULL : err);
  if (rc != HIPOBJ_OK && merged) {
    /* Part of the union may have been unmapped since it was registered:
     * register just what was asked for. */
    merged = 0;
    lo = want_lo;
    hi = want_hi;
    rc = register_into(&ne->mr, c->pd, kind, opsp, lo, hi - lo, c->access,
                       c->chunk, err);
  }
  if (rc != HIPOBJ_OK) {
    free(ne);
    return rc;
  }
  ne->refs = 1;
  struct entry *gone = NULL;
  pthread_mutex_lock(&c->lock);
  c->st.merges += merged;
  /* Registrations the new one covers are redundant now. */
  for (struct entry *e = c->head, *next; e; e = next) {
    next = e->next;
    if (e->mr.kind == kind && e->mr.addr >= lo && e->mr.addr + e->mr.len <= hi)
      remove_entry(c, e, &gone);
  }
  push_front(c, ne);
  c->n++;
  c->st.in_use++;
  c->st.bytes += ne->mr.len;
  /* Keep at most max_entries: evict the least recently used unreferenced. */
  for (struct entry *e = c->tail, *prev; e && c->n > c->max_entries; e = prev) {
    prev = e->prev;
    if (!e->refs) {
      remove_entry(c, e, &gone);
      c->st.evictions++;
    }
  }
  pthread_mutex_unlock(&c->lock);
  free_entries(gone);
  *out = &ne->mr;
  return HIPOBJ_OK;
}

void rdma_mr_cache_release(struct rdma_mr_cache *c, const struct rdma_mr *m) {
  if (!c || !m)
    return;
  struct entry *e = (struct entry *)(uintptr_t)m, *gone = NULL;
  pthread_mutex_lock(&c->lock);
  if (e->refs && --e->refs == 0) {
    if (e->retired) {
      unlink_entry(&c->retired, NULL, e);
      gone = e;
    } else {
      c->st.in_use--;
    }
  }
  pthread_mutex_unlock(&c->lock);
  free_entries(gone);
}

size_t rdma_mr_cache_drop(struct rdma_mr_cache *c, const void *addr,
                          size_t len) {
  uintptr_t a = (uintptr_t)addr, end = a + len;
  if (!c || !len)
    return 0;
  if (end < a)
    end = UINTPTR_MAX;
  size_t dropped = 0;
  struct entry *gone = NULL;
  pthread_mutex_lock(&c->lock);
  for (struct entry *e = c->head, *next; e; e = next) {
    next = e->next;
    if (e->mr.addr < end && a < e->mr.addr + e->mr.len) {
      remove_entry(c, e, &gone);
      dropped++;
    }
  }
  c->st.drops += dropped;
  pthread_mutex_unlock(&c->lock);
  free_entries(gone);
  return dropped;
}

void rdma_mr_cache_get_stats(struct rdma_mr_cache *c,
                             struct rdma_mr_cache_stats *st) {
  if (!c || !st)
    return;
  pthread_mutex_lock(&c->lock);
  *st = c->st;
  st->entries = c->n;
  pthread_mutex_unlock(&c->lock);
}

#else /* !HIPOBJ_HAVE_VERBS: every registration fails with the reason. */

#define NO_VERBS "this build of hipObject has no libibverbs support"

long rdma_mr_live_count(void) {
  return 0;
}

int rdma_mr_reg(struct ibv_pd *pd, void *addr, size_t len, unsigned access,
                uint64_t max_piece, struct rdma_mr **out,
                struct hipobj_error *err) {
  (void)pd, (void)addr, (void)len, (void)access, (void)max_piece;
  if (out)
    *out = NULL;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, "RDMA registration", NO_VERBS);
}

int rdma_mr_reg_dmabuf(struct ibv_pd *pd, const struct rdma_dmabuf_ops *ops,
                       const void *ptr, size_t len, unsigned access,
                       uint64_t max_piece, struct rdma_mr **out,
                       struct hipobj_error *err) {
  (void)pd, (void)ops, (void)ptr, (void)len, (void)access, (void)max_piece;
  if (out)
    *out = NULL;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, "RDMA registration", NO_VERBS);
}

int rdma_mr_dereg(struct rdma_mr *m, struct hipobj_error *err) {
  (void)err;
  if (m) {
    free(m->pieces);
    free(m);
  }
  return HIPOBJ_OK;
}

int rdma_mr_cache_create(struct ibv_pd *pd,
                         const struct rdma_mr_cache_opts *opts,
                         struct rdma_mr_cache **out, struct hipobj_error *err) {
  (void)pd, (void)opts;
  if (out)
    *out = NULL;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, "RDMA registration", NO_VERBS);
}

size_t rdma_mr_cache_destroy(struct rdma_mr_cache *c) {
  (void)c;
  return 0;
}

void rdma_mr_cache_set_dmabuf(struct rdma_mr_cache *c,
                              const struct rdma_dmabuf_ops *ops) {
  (void)c, (void)ops;
}

int rdma_mr_cache_acquire(struct rdma_mr_cache *c, enum rdma_mem_kind kind,
                          const void *addr, size_t len,
                          const struct rdma_mr **out,
                          struct hipobj_error *err) {
  (void)c, (void)kind, (void)addr, (void)len;
  if (out)
    *out = NULL;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, "RDMA registration", NO_VERBS);
}

void rdma_mr_cache_release(struct rdma_mr_cache *c, const struct rdma_mr *m) {
  (void)c, (void)m;
}

size_t rdma_mr_cache_drop(struct rdma_mr_cache *c, const void *addr,
                          size_t len) {
  (void)c, (void)addr, (void)len;
  return 0;
}

void rdma_mr_cache_get_stats(struct rdma_mr_cache *c,
                             struct rdma_mr_cache_stats *st) {
  (void)c;
  if (st)
    memset(st, 0, sizeof *st);
}

#endif
