/* rdma_gpu_regs.c - the per-(client, GPU) cache of dma-buf registrations
 * (rdma_gpu_regs.h): a short list of whole-allocation registrations with
 * reference counts, least recently used first out. */
#include "rdma_gpu_regs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../rdma/mr.h"
#include "base/error.h"
#include "gpu.h"

/* Registrations kept per GPU: each maps an allocation into the NIC, so
 * they are few; unreferenced ones beyond this are dropped oldest first. */
#define MAX_KEPT 64

struct hgpu_reg {
  struct hgpu_reg *next;
  uintptr_t base;
  size_t size;
  uint64_t id;
  unsigned access; /* RDMA_MR_*: a GET's and a PUT's differ */
  struct rdma_mr *mr;
  unsigned refs;
  int pinned;
  int dead;     /* stale or evicted: deregistered at the last release */
  int cached;   /* in the list (else registered for one transfer) */
  uint64_t use; /* last use, for LRU */
};

struct hgpu_regs {
  pthread_mutex_t lock;
  struct hgpu_reg *head;
  unsigned n;
  uint64_t clock;
  struct hgpu_regs_stats st;
};

struct hgpu_regs *hgpu_regs_create(void) {
  struct hgpu_regs *t = calloc(1, sizeof *t);
  if (t)
    pthread_mutex_init(&t->lock, NULL);
  return t;
}

static void reg_free(struct hgpu_reg *g) {
  rdma_mr_dereg(g->mr, NULL);
  free(g);
}

void hgpu_regs_destroy(struct hgpu_regs *t) {
  if (!t)
    return;
  for (struct hgpu_reg *g = t->head, *next; g; g = next) {
    next = g->next;
    reg_free(g);
  }
  pthread_mutex_destroy(&t->lock);
  free(t);
}

/* Takes g out of the list (lock held): freed now when unused, else by its
 * last release. */
static void unlink_reg(struct hgpu_regs *t, struct hgpu_reg **pp) {
  struct hgpu_reg *g = *pp;
  *pp = g->next;
  t->n--;
  g->cached = 0;
  g->dead = 1;
  if (!g->refs)
    reg_free(g);
}

/* Drops unreferenced registrations, least recently used first, until at
 * most MAX_KEPT remain (lock held). */
static void evict(struct hgpu_regs *t) {
  while (t->n > MAX_KEPT) {
    struct hgpu_reg **victim = NULL;
    for (struct hgpu_reg **pp = &t->head; *pp; pp = &(*pp)->next)
      if (!(*pp)->refs && !(*pp)->pinned &&
          (!victim || (*pp)->use < (*victim)->use))
        victim = pp;
    if (!victim)
      return; /* everything is in use: the bound waits */
    unlink_reg(t, victim);
  }
}

int hgpu_regs_acquire(struct hgpu_regs *t, const struct hgpu_mem_info *info,
                      const void *ptr, size_t len, unsigned access, int pin,
                      hgpu_reg_fn reg, void *ctx, const struct rdma_mr **mr,
                      struct hgpu_reg **ref, struct hipobj_error *err) {
  *mr = NULL;
  *ref = NULL;
  uintptr_t base = (uintptr_t)info->base;
  int cacheable = info->buffer_id && info->base && info->size &&
                  (uintptr_t)ptr >= base &&
                  (uintptr_t)ptr - base <= info->size &&
                  len <= info->size - ((uintptr_t)ptr - base);
  struct hgpu_reg *g = calloc(1, sizeof *g);
  if (!g)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, NULL, "out of memory");
  if (!cacheable) {
    /* No way to tell a reallocation apart: this transfer only. */
    int rc = reg(ctx, ptr, len, access, &g->mr, err);
    if (rc != HIPOBJ_OK) {
      free(g);
      return rc;
    }
    g->refs = 1;
    g->dead = 1;
    pthread_mutex_lock(&t->lock);
    t->st.uncached++;
    pthread_mutex_unlock(&t->lock);
    *mr = g->mr;
    *ref = g;
    return HIPOBJ_OK;
  }
  pthread_mutex_lock(&t->lock);
  struct hgpu_reg *hit = NULL;
  for (struct hgpu_reg **pp = &t->head; *pp;) {
    struct hgpu_reg *e = *pp;
    int overlaps = e->base < base + info->size && base < e->base + e->size;
    int same =
        e->base == base && e->size == info->size && e->id == info->buffer_id;
    /* A registration with more rights serves (local reads need none). */
    if (same && (access & ~(unsigned)RDMA_MR_LOCAL_READ & ~e->access) == 0) {
      hit = e;
    } else if (overlaps && !same && !e->pinned) {
      /* (An explicit registration is its owner's to end: freeing memory
       * before deregistering it is the caller's error, documented.) */
      /* Memory freed and allocated again where this registration was:
       * it maps the old pages and must never be used again. */
      t->st.stale++;
      unlink_reg(t, pp);
      continue;
    }
    pp = &e->next;
  }
  if (hit) {
    free(g);
    g = hit;
    t->st.hits++;
  } else {
    /* Registered under the lock: rare (once per allocation), and two
     * threads must not register the same allocation twice. */
    int rc = reg(ctx, info->base, info->size, access, &g->mr, err);
    if (rc != HIPOBJ_OK) {
      pthread_mutex_unlock(&t->lock);
      free(g);
      return rc;
    }
    g->base = base;
    g->size = info->size;
    g->id = info->buffer_id;
    g->access = access;
    g->cached = 1;
    g->next = t->head;
    t->head = g;
    t->n++;
    t->st.misses++;
  }
  g->refs++;
  g->use = ++t->clock;
  if (pin)
    g->pinned = 1;
  evict(t);
  *mr = g->mr;
  *ref = g;
  pthread_mutex_unlock(&t->lock);
  return HIPOBJ_OK;
}

void hgpu_regs_release(struct hgpu_regs *t, struct hgpu_reg *g) {
  if (!g)
    return;
  pthread_mutex_lock(&t->lock);
  int gone = --g->refs == 0 && g->dead;
  if (!gone)
    evict(t);
  pthread_mutex_unlock(&t->lock);
  if (gone)
    reg_free(g); /* after the transfer: its QP is gone */
}

int hgpu_regs_unpin(struct hgpu_regs *t, const void *ptr) {
  int rc = -1;
  pthread_mutex_lock(&t->lock);
  for (struct hgpu_reg *g = t->head; g; g = g->next)
    if (g->pinned && (uintptr_t)ptr >= g->base &&
        (uintptr_t)ptr < g->base + g->size) {
      g->pinned = 0;
      g->refs--; /* the explicit registration's own reference */
      rc = 0;
      break;
    }
  evict(t);
  pthread_mutex_unlock(&t->lock);
  return rc;
}

void hgpu_regs_get_stats(struct hgpu_regs *t, struct hgpu_regs_stats *st) {
  pthread_mutex_lock(&t->lock);
  *st = t->st;
  st->entries = t->n;
  pthread_mutex_unlock(&t->lock);
}
