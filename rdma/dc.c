/* dc.c - the DC target of cuObject single-request mode (see dc.h; wire spec
 * §7): an mlx5 DCT, its SRQ and CQ, and a registration of the buffer that
 * the server's DC initiator writes (GET) or reads (PUT) with the DC key
 * 0xffeeddcc.
 *
 * Built only with -DHIPOBJ_HAVE_DC (meson -Ddc, rdma/meson.build); without
 * it every call reports RDMA_DC_NOT_BUILT. UNTESTED on hardware: no
 * ConnectX device is available to this project, so the mlx5 half has only
 * ever been compiled; its refusal of a device that is not mlx5 (Soft-RoCE)
 * is what the rdma suite runs. The calls follow mlx5dv_create_qp(3) and
 * rdma-core's own DC tests (tests/mlx5_base.py). */
#include "dc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/error.h"

#define OP "RDMA DC"

static atomic_long live_dcts;

long rdma_dc_live_count(void) {
  return atomic_load(&live_dcts);
}

#ifdef HIPOBJ_HAVE_DC

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "device.h"
#include "mr.h"

struct rdma_dc_target {
  struct rdma_mr *mr; /* REMOTE_WRITE | REMOTE_READ over the buffer */
  struct ibv_cq *cq;
  struct ibv_srq *srq;
  struct ibv_qp *dct;
  uint32_t dctn; /* known only after RTR (see create) */
  uint16_t lid;
  uint8_t gid[16];
  unsigned port;
  unsigned gid_index;
  int mtu_enum;
  char device[64];
};

int rdma_dc_built(void) {
  return 1;
}

static int verbs_fail(struct hipobj_error *err, const char *dev,
                      const char *what, int e) {
  if (!e)
    e = EIO;
  int rc = herr_set(err, e == ENOMEM ? HIPOBJ_E_OUT_OF_MEMORY : HIPOBJ_E_IO, OP,
                    "%s on %s: %s", what, dev, strerror(e));
  if (err)
    err->sys_errno = e;
  return rc;
}

/* path_mtu from a byte count; 0 when it is not one of the five. */
static int mtu_enum_of(unsigned bytes) {
  int e = IBV_MTU_256;
  for (unsigned b = 256; b <= 4096; b *= 2, e++)
    if (b == bytes)
      return e;
  return 0;
}

/* The port, GID and MTU of `name` that rdma_dev_open() would choose with
 * cfg: the same environment and overrides with the device fixed to the
 * PD's, so the DCT answers on the port and GID the engine uses. */
static int choose_port(struct rdma_dc_target *t, const struct rdma_dev_cfg *cfg,
                       struct hipobj_error *err) {
  if (cfg->mtu && !mtu_enum_of(cfg->mtu))
    return herr_set(err, HIPOBJ_E_CONFIG, OP,
                    "MTU %u is invalid (256, 512, 1024, 2048 or 4096)",
                    cfg->mtu);
  struct rdma_env env;
  memset(&env, 0, sizeof env);
  env.gid_index = -1;
  if (cfg->use_environ && rdma_env_from_environ(&env, err) != HIPOBJ_OK)
    return err ? err->status : HIPOBJ_E_CONFIG;
  snprintf(env.device, sizeof env.device, "%s", t->device);
  if (cfg->port)
    env.port = cfg->port;
  if (cfg->gid_index >= 0)
    env.gid_index = cfg->gid_index;
  struct rdma_devlist *l = NULL;
  int rc = rdma_devlist_get(&l, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct rdma_choice ch;
  rc = rdma_choose(l, &env, rdma_current_numa_node(), NULL, &ch, err);
  if (rc == HIPOBJ_OK) {
    t->port = ch.port->port_num;
    t->gid_index = ch.gid->index;
    memcpy(t->gid, ch.gid->gid, 16);
    /* A LID exists only on InfiniBand; the descriptor carries 0 on RoCE. */
    t->lid = ch.port->link_layer == RDMA_LINK_IB ? ch.port->lid : 0;
    /* The rule of qp.c (§8 item 15): the override, else the port's
     * active_mtu, where one below 512 means a misreporting port. */
    t->mtu_enum = cfg->mtu                     ? mtu_enum_of(cfg->mtu)
                  : ch.port->active_mtu >= 512 ? ch.port->active_mtu_enum
                                               : IBV_MTU_1024;
  }
  rdma_devlist_free(l);
  return rc;
}

/* INIT -> RTR. A DCT never reaches RTS: it only answers. */
static int dct_bring_up(struct rdma_dc_target *t, struct hipobj_error *err) {
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = (uint8_t)t->port;
  /* The server WRITEs a GET's bytes and READs a PUT's: both rights, no
   * atomics. */
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int e = ibv_modify_qp(t->dct, &a,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                            IBV_QP_ACCESS_FLAGS);
  if (e)
    return verbs_fail(err, t->device, "ibv_modify_qp(DCT RESET->INIT)", e);
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = (enum ibv_mtu)t->mtu_enum;
  a.min_rnr_timer = 12; /* 0.64 ms, as §4.2 */
  /* A DCT has no fixed peer: the address vector only gives the local
   * side (port, source GID, hop limit). dgid is set to our own GID, as
   * rdma-core's DC tests do, because on RoCE the kernel resolves a MAC
   * for the AV's dgid and an all-zero one does not resolve. */
  a.ah_attr.is_global = 1;
  memcpy(a.ah_attr.grh.dgid.raw, t->gid, 16);
  a.ah_attr.grh.sgid_index = (uint8_t)t->gid_index;
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = (uint8_t)t->port;
  e = ibv_modify_qp(t->dct, &a,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                        IBV_QP_MIN_RNR_TIMER);
  if (e)
    return verbs_fail(err, t->device, "ibv_modify_qp(DCT INIT->RTR)", e);
  return HIPOBJ_OK;
}

int rdma_dc_target_create(struct ibv_pd *pd, const struct rdma_dev_cfg *cfg,
                          void *addr, size_t len, struct rdma_dc_target **out,
                          struct hipobj_error *err) {
  static const struct rdma_dev_cfg defaults = {.gid_index = -1,
                                               .use_environ = 1};
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP, "no output given");
  *out = NULL;
  if (!pd || !addr || !len)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "no protection domain or an empty buffer");
  if (!cfg)
    cfg = &defaults;
  struct ibv_context *ctx = pd->context;
  const char *name = ibv_get_device_name(ctx->device);
  /* First, before anything is allocated: only mlx5 has DC. */
  if (!mlx5dv_is_supported(ctx->device))
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP,
                    "RDMA device %s is not an mlx5 (ConnectX) device: the "
                    "cuObject DC descriptor needs an mlx5 DC target",
                    name ? name : "?");
  struct rdma_dc_target *t = calloc(1, sizeof *t);
  if (!t)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  snprintf(t->device, sizeof t->device, "%s", name ? name : "?");
  int rc = choose_port(t, cfg, err);
  if (rc != HIPOBJ_OK)
    goto fail;
  /* The buffer's own registration with REMOTE_READ: the hipobj-rc-v2
   * registration of the same memory (hipobj_buffer_register) has none,
   * since that protocol never pulls, but here a PUT is the server's READ. */
  rc = rdma_mr_reg(pd, addr, len,
                   RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE |
                       RDMA_MR_REMOTE_READ,
                   0, &t->mr, err);
  if (rc != HIPOBJ_OK)
    goto fail;
  /* The DCT needs a CQ and an SRQ though no receive is ever posted: the
   * server moves data with RDMA WRITE and READ, which consume none. */
  if (!(t->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0))) {
    rc = verbs_fail(err, t->device, "ibv_create_cq", errno);
    goto fail;
  }
  struct ibv_srq_init_attr sa;
  memset(&sa, 0, sizeof sa);
  sa.attr.max_wr = 16;
  sa.attr.max_sge = 1;
  if (!(t->srq = ibv_create_srq(pd, &sa))) {
    rc = verbs_fail(err, t->device, "ibv_create_srq", errno);
    goto fail;
  }
  struct ibv_qp_init_attr_ex ia;
  memset(&ia, 0, sizeof ia);
  ia.qp_type = IBV_QPT_DRIVER;
  ia.send_cq = t->cq;
  ia.recv_cq = t->cq;
  ia.srq = t->srq;
  ia.comp_mask = IBV_QP_INIT_ATTR_PD;
  ia.pd = pd;
  struct mlx5dv_qp_init_attr dv;
  memset(&dv, 0, sizeof dv);
  dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
  dv.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCT;
  dv.dc_init_attr.dct_access_key = RDMA_DC_ACCESS_KEY;
  if (!(t->dct = mlx5dv_create_qp(ctx, &ia, &dv))) {
    rc = verbs_fail(err, t->device, "mlx5dv_create_qp(DCT)", errno);
    goto fail;
  }
  atomic_fetch_add(&live_dcts, 1);
  if ((rc = dct_bring_up(t, err)) != HIPOBJ_OK)
    goto fail;
  /* The hardware DCT, and with it the number peers address, comes to be
   * at RTR (mlx5 updates qp_num there): read it only now. */
  t->dctn = t->dct->qp_num & RDMA_QPN_MAX;
  *out = t;
  return HIPOBJ_OK;
fail:
  rdma_dc_target_destroy(t);
  return rc;
}

int rdma_dc_target_describe(const struct rdma_dc_target *t, const void *addr,
                            size_t len, struct rdma_dc_desc *d,
                            struct hipobj_error *err) {
  if (!t || !addr || !d)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP, "no target");
  if (len == 0 || (uint64_t)len > RDMA_DC_SIZE_MAX)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "a descriptor covers 1 to 4 GiB - 1 bytes, not %zu", len);
  const struct rdma_mr_piece *p = rdma_mr_find_piece(t->mr, addr, len);
  if (!p)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "[%p, +%zu) is not inside one registration of the DC "
                    "target",
                    addr, len);
  memset(d, 0, sizeof *d);
  d->addr = (uintptr_t)addr;
  d->size = (uint32_t)len;
  d->rkey = p->rkey;
  d->lid = t->lid;
  d->dctn = t->dctn;
  d->gid_present = 1;
  memcpy(d->gid, t->gid, 16);
  return HIPOBJ_OK;
}

const char *rdma_dc_target_device(const struct rdma_dc_target *t) {
  return t ? t->device : "";
}

int rdma_dc_target_destroy(struct rdma_dc_target *t) {
  if (!t)
    return 0;
  if (t->dct) {
    if (ibv_destroy_qp(t->dct) != 0) {
      /* Still reachable by peers: keep SRQ, CQ and registration alive. */
      free(t);
      return -1;
    }
    atomic_fetch_sub(&live_dcts, 1);
  }
  int rc = 0;
  if (t->srq && ibv_destroy_srq(t->srq) != 0)
    rc = -1;
  if (t->cq && ibv_destroy_cq(t->cq) != 0)
    rc = -1;
  if (rdma_mr_dereg(t->mr, NULL) != HIPOBJ_OK)
    rc = -1;
  free(t);
  return rc;
}

#else /* !HIPOBJ_HAVE_DC */

/* The same entry points, refusing: callers need no #ifdef. */

int rdma_dc_built(void) {
  return 0;
}

int rdma_dc_target_create(struct ibv_pd *pd, const struct rdma_dev_cfg *cfg,
                          void *addr, size_t len, struct rdma_dc_target **out,
                          struct hipobj_error *err) {
  (void)pd, (void)cfg, (void)addr, (void)len;
  if (out)
    *out = NULL;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, RDMA_DC_NOT_BUILT);
}

int rdma_dc_target_describe(const struct rdma_dc_target *t, const void *addr,
                            size_t len, struct rdma_dc_desc *d,
                            struct hipobj_error *err) {
  (void)t, (void)addr, (void)len;
  if (d)
    memset(d, 0, sizeof *d);
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, RDMA_DC_NOT_BUILT);
}

const char *rdma_dc_target_device(const struct rdma_dc_target *t) {
  (void)t;
  return "";
}

int rdma_dc_target_destroy(struct rdma_dc_target *t) {
  (void)t;
  return 0;
}

#endif
