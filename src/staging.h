/* staging.h - GPU data over HTTP through pinned host memory.
 *
 * A client owns one pool of pinned chunks per GPU platform, bounded by
 * staging_pool_bytes. A transfer takes its chunks (up to three: triple
 * buffering) in the calling thread before it is submitted, waiting there
 * while the pool is exhausted, and gives them back when it ends; so the
 * engine thread never waits for memory, only (briefly) for the GPU copy that
 * last used a chunk.
 *
 * GET into GPU memory: the response body fills chunks that are copied to the
 * GPU asynchronously while the next chunk arrives (hstage_get_*).
 * PUT / UploadPart from GPU memory: asynchronous copies from the GPU fill
 * chunks ahead of the engine, which reads them as the streamed request body
 * (hstage_put_attach). A signed payload is hashed in a first pass over the
 * same pipeline. Never more than the transfer's chunks of host memory,
 * whatever the object size. */
#ifndef HIPOBJ_STAGING_H
#define HIPOBJ_STAGING_H

#include <stddef.h>
#include <stdint.h>

#include "client_int.h"

struct hstage_pool;
struct hstage;

#define HSTAGE_MAX_SLOTS 3 /* chunks one transfer holds at most */
/* Pools by memory kind (HIPOBJ_MEM_HOST .. HIPOBJ_MEM_FILE): pinned chunks
 * of one GPU platform serve only that platform. */
#define HSTAGE_N_KINDS 4
/* A begin call with nowait found no chunk free: nothing was taken. */
#define HSTAGE_AGAIN (-1)

/* A pool of chunk_bytes chunks, at most pool_bytes per platform. Chunks are
 * allocated on first use and kept until hstage_pool_destroy(). */
int hstage_pool_create(size_t pool_bytes, size_t chunk_bytes,
                       struct hstage_pool **out);
/* No transfer may be in progress. NULL is allowed. */
void hstage_pool_destroy(struct hstage_pool *p);
/* fn(arg) is called (outside the pool's lock) whenever chunks come back,
 * so that work that found the pool empty can be tried again. */
void hstage_pool_on_give(struct hstage_pool *p, void (*fn)(void *arg),
                         void *arg);

struct hstage_pool_stats {
  unsigned max_chunks; /* the bound */
  unsigned allocated;  /* pinned chunks allocated so far */
  unsigned in_use;     /* held by transfers now */
  unsigned peak;       /* most ever held at once */
  unsigned waits;      /* reservations that had to wait */
};
void hstage_pool_stats(struct hstage_pool *p, enum hipobj_mem_kind kind,
                       struct hstage_pool_stats *out);

/* GET into GPU memory dst (checked: runtime, pointer, range). Takes the
 * chunks: waits for them, or with nowait returns HSTAGE_AGAIN when none is
 * free. err is filled on failure. */
int hstage_get_begin(struct hipobj_client *c, const char *op,
                     const struct hipobj_mem *dst, int nowait,
                     struct hstage **out, struct hipobj_error *err);
/* n body bytes for dst offset off, which continues the previous write
 * (engine thread). Returns 0, or -1 with hstage_reason(). */
int hstage_get_write(struct hstage *s, uint64_t off, const char *data,
                     size_t n);
/* Queues the last partial chunk and waits for every copy. 0 or -1. */
int hstage_get_flush(struct hstage *s);
/* Before another attempt: waits for the copies still running and starts
 * over at offset 0. */
void hstage_get_rewind(struct hstage *s);

/* PUT of [off, off+len) of GPU memory src. Takes the chunks (may wait),
 * at most `share` of them (0: up to HSTAGE_MAX_SLOTS): parts sent side by
 * side pass hstage_share() so that every one of them gets its chunks. */
int hstage_put_begin(struct hipobj_client *c, const char *op,
                     const struct hipobj_mem *src, uint64_t off, uint64_t len,
                     unsigned share, int nowait, struct hstage **out,
                     struct hipobj_error *err);
/* The chunks each of `transfers` concurrent transfers may hold so that
 * all of them run at once (at least 1). */
unsigned hstage_share(const struct hipobj_client *c, unsigned transfers);
/* Makes the range r's request body: source, rewind per attempt, hash. */
void hstage_put_attach(struct hstage *s, struct hreq *r);

/* RDMA-staged transfers (src/rdma_gpu.c): the same chunks, stream and
 * events, but the RDMA path fills (GET) or sends (PUT) chunk i itself and
 * queues its GPU side here. Offsets are relative to the range given to
 * hstage_rdma_begin(). The slot functions return 0, or -1 with
 * hstage_reason(). */
/* [0, len) of m. A PUT takes every chunk it needs at once (waiting for
 * them; HIPOBJ_E_UNSUPPORTED when the pool is smaller), as the NIC gathers
 * them in one send; a GET takes up to HSTAGE_MAX_SLOTS. */
int hstage_rdma_begin(struct hipobj_client *c, const char *op,
                      const struct hipobj_mem *m, int is_put, uint64_t len,
                      struct hstage **out, struct hipobj_error *err);
unsigned hstage_nslots(const struct hstage *s);
size_t hstage_chunk_size(const struct hstage *s);
void *hstage_slot_buf(struct hstage *s, unsigned i);
/* Waits for the copy queued on slot i. */
int hstage_slot_wait(struct hstage *s, unsigned i);
/* After the slot's previous copy: queues chunk i -> [off, off+n) of the
 * range (to_gpu), or [off, off+n) -> chunk i (from_gpu). */
int hstage_slot_to_gpu(struct hstage *s, unsigned i, uint64_t off, size_t n);
int hstage_slot_from_gpu(struct hstage *s, unsigned i, uint64_t off, size_t n);
/* Waits for every queued copy. */
int hstage_wait_all(struct hstage *s);

/* Why the last call failed ("GPU copy failed: ..."). */
const char *hstage_reason(const struct hstage *s);
/* Waits for copies still running, gives the chunks back and frees s (any
 * thread). NULL is allowed. */
void hstage_end(struct hstage *s);

#endif
