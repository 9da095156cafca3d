/* rdma_glue.h - what the operations ask of the RDMA data path (see
 * rdma_glue.c): one GET or PUT attempted by RDMA under the client's and the
 * request's policy, with the outcome saying whether HTTP must move the
 * bytes instead. */
#ifndef HIPOBJ_RDMA_GLUE_H
#define HIPOBJ_RDMA_GLUE_H

#include <stdint.h>

#include "base/uri.h"
#include "hipobj.h"

struct hrdma_job {
  int is_put;
  const char *bucket, *key;
  const struct hparam *query; /* UploadPart: partNumber + uploadId */
  size_t query_n;
  uint64_t offset; /* GET */
  uint64_t size;
  const struct hipobj_mem *mem; /* size bytes at mem->ptr */
  int policy;                   /* the request's HIPOBJ_RDMA_* */
  int staged_only; /* GPU memory: through pinned chunks, no dma-buf */
};

struct hrdma_outcome {
  int done;     /* the bytes moved by RDMA */
  int fallback; /* not done: HTTP must move them (auto policy) */
  int declined; /* the server declined RDMA (501, no such route) */
  int no_mp;    /* a part, to a server that does not advertise parts */
  int mp;       /* the server advertised parts (PREPARE reply) */
  int staged;   /* done through pinned host memory (GPU data) */
  uint64_t bytes;
  char etag[HIPOBJ_ETAG_MAX]; /* quoted */
  /* GET: the CRC-64/NVME of the bytes from the server's FINALs (crc_ok),
   * and whether it was recomputed over them here (crc_checked: host
   * memory and staging chunks; not GPU memory the NIC wrote). */
  int crc_ok, crc_checked;
  uint64_t crc;
};

/* Effective policy of a request (HIPOBJ_RDMA_DEFAULT: the client's). */
int hrdma_policy(const struct hipobj_client *c, int request_policy);
/* 1 when RDMA can be tried for this memory now, 0 when HTTP must be used,
 * -status (err filled) when RDMA is required but impossible. */
int hrdma_ready(struct hipobj_client *c, int request_policy,
                const struct hipobj_mem *mem, const char *op,
                struct hipobj_error *err);
/* The control requests of hipobj-rc-v2 as the engine wants them: signed
 * S3 requests on the client's HTTP engine (rdma/rc_client.h's contract). */
struct rdma_control_ops;
void hrdma_control_ops_of(struct hipobj_client *c,
                          struct rdma_control_ops *ops);
/* Whether GPU memory m can go to the NIC directly (dma-buf), as far as
 * this client knows: the platform exports it and no registration on that
 * device was refused. */
int hrdma_direct_possible(struct hipobj_client *c, const struct hipobj_mem *m);
void hrdma_client_destroy(struct hipobj_client *c);
/* The NIC (name and port) RDMA would use for memory of the GPU at PCIe
 * address busid, with the reason; 0, or -1 with why there is none in
 * reason. The environment's overrides apply. */
int hrdma_nic_for_gpu(const char *busid, char *nic, size_t nic_len,
                      char *reason, size_t reason_len);

/* The client's engine, created on first use; NULL with the reason in *why
 * when RDMA cannot be used from this client. */
struct rdma_engine *hrdma_engine(struct hipobj_client *c, const char **why);
/* The engine for memory m: a GPU's own (on the NIC nearest it), else the
 * client's. */
struct rdma_engine *hrdma_engine_for(struct hipobj_client *c,
                                     const struct hipobj_mem *m,
                                     const char **why);

/* Explicit registrations (rdma_api.c). hrdma_reg_acquire() returns the
 * registration of a buffer registered with hipobj_buffer_register() that
 * holds all of [ptr, ptr+size), referenced through *ref until
 * hrdma_reg_release(c, *ref) (NULL allowed), or NULL (and *ref NULL) when
 * none does. hrdma_regs_destroy() deregisters them all (client destroy,
 * before the engine goes). */
struct rdma_mr;
struct hrdma_reg;
const struct rdma_mr *hrdma_reg_acquire(struct hipobj_client *c,
                                        const void *ptr, uint64_t size,
                                        struct hrdma_reg **ref);
void hrdma_reg_release(struct hipobj_client *c, struct hrdma_reg *ref);
void hrdma_regs_destroy(struct hipobj_client *c);

#endif
