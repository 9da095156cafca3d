/* mr.h - memory registration: explicit registration of host ranges, a
 * per-PD registration cache, and the dma-buf hook GPU memory comes in by.
 *
 * A registration (struct rdma_mr) covers [addr, addr+len) with one or more
 * verbs MRs ("pieces"): a range larger than the device's max_mr_size is
 * split, so one work request must stay inside one piece
 * (rdma_mr_find_piece()). This header includes no verbs header; struct
 * ibv_pd and struct ibv_mr stay opaque outside rdma/.
 *
 * Pinned pages stay pinned while registered: a range must be dropped from
 * the cache (rdma_mr_cache_drop()) or deregistered before its memory is
 * freed, else a later allocation at the same address would hit a stale
 * registration of the old pages. */
#ifndef HIPOBJ_RDMA_MR_H
#define HIPOBJ_RDMA_MR_H

#include <stddef.h>
#include <stdint.h>

struct hipobj_error;
struct ibv_pd;
struct ibv_mr;

/* Access rights (mapped onto IBV_ACCESS_*). REMOTE_WRITE implies
 * LOCAL_WRITE, as verbs requires. 0 means RDMA_MR_ACCESS_DEFAULT. */
enum {
  RDMA_MR_LOCAL_WRITE = 1u << 0,
  RDMA_MR_REMOTE_WRITE = 1u << 1,
  RDMA_MR_REMOTE_READ = 1u << 2,
  /* Local read only (the source of an RDMA WRITE): no IBV_ACCESS flag, so
   * read-only mappings (constants, files mapped PROT_READ) register too. */
  RDMA_MR_LOCAL_READ = 1u << 3,
  RDMA_MR_ACCESS_DEFAULT =
      RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE | RDMA_MR_REMOTE_READ,
};

/* Where registered memory lives. */
enum rdma_mem_kind {
  RDMA_MEM_HOST = 0,   /* ordinary host memory: ibv_reg_mr */
  RDMA_MEM_DMABUF = 1, /* device memory exported as a dma-buf */
};

struct rdma_mr_piece {
  uintptr_t addr; /* first byte (for dma-buf: the iova = device address) */
  size_t len;
  uint32_t lkey;
  uint32_t rkey;
  struct ibv_mr *mr;
};

struct rdma_mr {
  uintptr_t addr; /* first byte covered */
  size_t len;     /* bytes covered */
  unsigned access;
  enum rdma_mem_kind kind;
  size_t npieces;
  struct rdma_mr_piece *pieces; /* ascending, contiguous */
};

/* The piece that holds all of [addr, addr+len), NULL when the range is not
 * inside one piece. */
const struct rdma_mr_piece *rdma_mr_find_piece(const struct rdma_mr *m,
                                               const void *addr, size_t len);

/* ---- dma-buf hook ----------------------------------------------------------
 */

/* Filled in by the GPU code (src/ cannot include verbs): export_range()
 * turns device memory [ptr, ptr+len) into a dma-buf fd and the offset of
 * ptr inside it (hipMemGetHandleForAddressRange / cuMemGetHandleForAddress-
 * Range); release() closes that fd after registration (NULL: close()).
 * The hook gets no device index: it classifies ptr itself. reg, when set,
 * replaces ibv_reg_dmabuf_mr() itself (same arguments; access is the
 * IBV_ACCESS_* mask) for tests or provider quirks; it returns NULL with
 * errno set on failure. */
typedef struct ibv_mr *(*rdma_reg_dmabuf_fn)(struct ibv_pd *pd, uint64_t offset,
                                             size_t len, uint64_t iova, int fd,
                                             int access);
struct rdma_dmabuf_ops {
  int (*export_range)(void *user, const void *ptr, size_t len, int *fd,
                      uint64_t *offset);
  void (*release)(void *user, int fd);
  rdma_reg_dmabuf_fn reg; /* NULL: ibv_reg_dmabuf_mr() */
  void *user;
};

/* ---- explicit registration -------------------------------------------------
 */

/* Registers host memory [addr, addr+len) with `access` (0: default), split
 * into pieces of at most max_piece bytes (0: the device's max_mr_size).
 * Errors name the call and errno (ENOMEM usually means RLIMIT_MEMLOCK). */
int rdma_mr_reg(struct ibv_pd *pd, void *addr, size_t len, unsigned access,
                uint64_t max_piece, struct rdma_mr **out,
                struct hipobj_error *err);
/* Registers device memory through ops (see above); iova = ptr, so remote
 * peers address it by its device virtual address. */
int rdma_mr_reg_dmabuf(struct ibv_pd *pd, const struct rdma_dmabuf_ops *ops,
                       const void *ptr, size_t len, unsigned access,
                       uint64_t max_piece, struct rdma_mr **out,
                       struct hipobj_error *err);
/* Deregisters every piece and frees m (NULL allowed). A failed
 * ibv_dereg_mr() is reported; the MR is then leaked, never reused. */
int rdma_mr_dereg(struct rdma_mr *m, struct hipobj_error *err);

/* Verbs MRs currently registered by this module, all PDs together (for leak
 * tests). */
long rdma_mr_live_count(void);

/* ---- registration cache ----------------------------------------------------
 */

struct rdma_mr_cache;

struct rdma_mr_cache_opts {
  uint64_t max_mr_size; /* split size; 0: the device's max_mr_size (tests
                           force a small value here) */
  unsigned max_entries; /* unreferenced registrations kept; 0: 256 */
  unsigned access;      /* for every registration; 0: default */
};

struct rdma_mr_cache_stats {
  uint64_t hits;      /* acquires served by an existing registration */
  uint64_t misses;    /* acquires that registered */
  uint64_t merges;    /* misses whose registration absorbed overlapping ones */
  uint64_t evictions; /* unreferenced registrations dropped for room */
  uint64_t drops;     /* registrations dropped by rdma_mr_cache_drop() */
  size_t entries;     /* registrations in the cache */
  size_t in_use;      /* of which referenced */
  uint64_t bytes;     /* bytes covered by the cached registrations */
};

/* One cache per PD; thread-safe. opts may be NULL. */
int rdma_mr_cache_create(struct ibv_pd *pd,
                         const struct rdma_mr_cache_opts *opts,
                         struct rdma_mr_cache **out, struct hipobj_error *err);
/* Deregisters everything and frees the cache (NULL allowed). No acquired
 * registration may still be in use; returns how many were (0 normally). */
size_t rdma_mr_cache_destroy(struct rdma_mr_cache *c);
/* Sets the dma-buf exporter used for RDMA_MEM_DMABUF ranges (copied). */
void rdma_mr_cache_set_dmabuf(struct rdma_mr_cache *c,
                              const struct rdma_dmabuf_ops *ops);

/* A registration covering [addr, addr+len): an existing one when one covers
 * the range (hit), else a new one (miss) that also absorbs the cached
 * registrations it overlaps. Host ranges are widened to page boundaries.
 * Release each acquire with rdma_mr_cache_release(). */
int rdma_mr_cache_acquire(struct rdma_mr_cache *c, enum rdma_mem_kind kind,
                          const void *addr, size_t len,
                          const struct rdma_mr **out, struct hipobj_error *err);
void rdma_mr_cache_release(struct rdma_mr_cache *c, const struct rdma_mr *m);
/* Forgets every registration overlapping [addr, addr+len) (the memory is
 * being freed or was deregistered by the user): unreferenced ones are
 * deregistered now, referenced ones at their last release. Returns how
 * many registrations were dropped. */
size_t rdma_mr_cache_drop(struct rdma_mr_cache *c, const void *addr,
                          size_t len);
void rdma_mr_cache_get_stats(struct rdma_mr_cache *c,
                             struct rdma_mr_cache_stats *st);

#endif
