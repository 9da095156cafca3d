/* dc.h - the client's DC target for cuObject single-request mode (wire spec
 * shared/docs/rdma-wire-protocol.md §7): an mlx5 DCT (DC target QP) with
 * its SRQ and CQ, and a registration of one buffer the server may write
 * (GET) and read (PUT) through it, so that the 81-character descriptor of
 * §7.1 can name it (addr, size, rkey, lid, dctn, GID).
 *
 * DC is mlx5 (ConnectX) only and goes through mlx5dv. Built without it
 * (meson -Ddc=disabled, or auto without infiniband/mlx5dv.h) the same
 * functions exist and fail with HIPOBJ_E_UNSUPPORTED and RDMA_DC_NOT_BUILT,
 * so callers need no #ifdef. No verbs type appears here: src/ uses it.
 *
 * UNTESTED on hardware: this project has no ConnectX device. The mlx5 half
 * compiles in CI; only the refusals (not built, not an mlx5 device) run. */
#ifndef HIPOBJ_RDMA_DC_H
#define HIPOBJ_RDMA_DC_H

#include <stddef.h>
#include <stdint.h>

#include "qp.h"
#include "token.h"

struct hipobj_error;
struct ibv_pd;

/* The DC access key: both sides use it unless configured otherwise (§7.1,
 * [CE-doc]); a DC initiator must present it to reach the DCT. */
#define RDMA_DC_ACCESS_KEY 0xffeeddccULL

/* A descriptor's size field is 32 bits: at most 4 GiB - 1 bytes (§7.1). */
#define RDMA_DC_SIZE_MAX 0xffffffffULL

/* The reason every call gives in a build without DC. */
#define RDMA_DC_NOT_BUILT                                                      \
  "built without DC support (meson -Ddc=enabled needs mlx5dv.h)"

struct rdma_dc_target;

/* 1 when this build has the DC transport (HIPOBJ_HAVE_DC), else 0. */
int rdma_dc_built(void);

/* Creates the DC target for host memory [addr, addr+len) on pd, which must
 * be the PD of an mlx5 device (else HIPOBJ_E_UNSUPPORTED naming the
 * device). Port, GID and MTU are the choice rdma_dev_open() makes with cfg
 * (rdma/select.c: the environment when cfg->use_environ, cfg->port,
 * cfg->gid_index, cfg->mtu) restricted to pd's device, so they match the
 * engine that owns pd; cfg->device and cfg->gpu_busid are ignored, cfg may
 * be NULL (defaults with the environment).
 *
 * Creates a registration of the range with LOCAL_WRITE | REMOTE_WRITE |
 * REMOTE_READ (a single-request PUT is the server's RDMA READ of it), a
 * CQ, an SRQ and the DCT (access key RDMA_DC_ACCESS_KEY, REMOTE_WRITE |
 * REMOTE_READ), INIT -> RTR. Every failing verbs call is reported by name
 * with its errno text. */
int rdma_dc_target_create(struct ibv_pd *pd, const struct rdma_dev_cfg *cfg,
                          void *addr, size_t len, struct rdma_dc_target **out,
                          struct hipobj_error *err);

/* Fills the §7.1 descriptor for [addr, addr+len) inside the target's range
 * (1 .. RDMA_DC_SIZE_MAX bytes, inside one registration piece): addr and
 * size as given, the rkey of the piece, lid (0 on RoCE), dctn and the GID
 * (gid_present 1). Encode it with rdma_dc_encode(). */
int rdma_dc_target_describe(const struct rdma_dc_target *t, const void *addr,
                            size_t len, struct rdma_dc_desc *d,
                            struct hipobj_error *err);

/* The device the target is on ("mlx5_0"), for messages. */
const char *rdma_dc_target_device(const struct rdma_dc_target *t);

/* Destroys the DCT, then the SRQ, the CQ and the registration (NULL
 * allowed). Returns -1 when the DCT could not be destroyed: a peer may then
 * still reach the memory, so everything it references (and the
 * registration) is leaked rather than freed. */
int rdma_dc_target_destroy(struct rdma_dc_target *t);

/* DCTs alive in this process (for leak tests). */
long rdma_dc_live_count(void);

#endif
