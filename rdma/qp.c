/* qp.c - verbs resources of hipobj-rc-v2 transfers (see qp.h): the opened
 * device + PD, the per-transfer CQ/QP pair with the §4.2 attributes,
 * completion waits through a completion channel, the retired (QPN, PSN)
 * ring and CSPRNG draws.
 *
 * Completion waits never spin: poll the CQ once, arm it, poll again (a
 * completion may have arrived between the two), then sleep in poll() on the
 * channel fd. Under qemu/TCG rxe does its work in the same few vCPUs a
 * spinning poller would occupy, and on real NICs one transfer's latency is
 * dominated by the HTTP round trips anyway. */
#include "qp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../src/base/error.h"
#include "device.h"
#include "token.h"

#define OP "RDMA"

double rdma_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int rdma_random(void *buf, size_t n) {
  unsigned char *p = buf;
  while (n) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

int rdma_random_psn(uint32_t *psn) {
  uint32_t v = 0;
  for (int i = 0; i < 64 && !v; i++)
    if (rdma_random(&v, sizeof v) != 0)
      return -1;
    else
      v &= RDMA_PSN_MAX;
  if (!v)
    return -1;
  *psn = v;
  return 0;
}

int rdma_random_cookie(uint32_t *cookie) {
  uint32_t v = 0;
  /* Zero is rejected by versitygw and Ceph (§8 item 20): draw again. */
  for (int i = 0; i < 64 && !v; i++)
    if (rdma_random(&v, sizeof v) != 0)
      return -1;
  if (!v)
    return -1;
  *cookie = v;
  return 0;
}

/* ---- retired ring ---------------------------------------------------------
 */

struct retired_slot {
  uint32_t qpn, psn;
  double when; /* 0: empty */
};

struct rdma_retired {
  pthread_mutex_t lock;
  unsigned cap, next;
  double window;
  struct retired_slot *slots;
};

int rdma_retired_create(unsigned capacity, unsigned window_ms,
                        struct rdma_retired **out) {
  struct rdma_retired *r = calloc(1, sizeof *r);
  if (!r)
    return -1;
  r->cap = capacity ? capacity : 4096;
  r->window = (window_ms ? window_ms : 60000) / 1000.0;
  r->slots = calloc(r->cap, sizeof *r->slots);
  if (!r->slots || pthread_mutex_init(&r->lock, NULL) != 0) {
    free(r->slots);
    free(r);
    return -1;
  }
  *out = r;
  return 0;
}

void rdma_retired_destroy(struct rdma_retired *r) {
  if (!r)
    return;
  pthread_mutex_destroy(&r->lock);
  free(r->slots);
  free(r);
}

int rdma_retired_check(struct rdma_retired *r, uint32_t qpn, uint32_t psn) {
  double now = rdma_now();
  int res = RDMA_RETIRED_FREE;
  pthread_mutex_lock(&r->lock);
  /* The slot written next is the oldest: when it is still young, so are
   * all others, and one more retirement would overwrite a live pair. */
  const struct retired_slot *oldest = &r->slots[r->next];
  if (oldest->when > 0 && now - oldest->when < r->window)
    res = RDMA_RETIRED_FULL;
  for (unsigned i = 0; i < r->cap && res == RDMA_RETIRED_FREE; i++) {
    const struct retired_slot *s = &r->slots[i];
    if (s->when > 0 && now - s->when < r->window && s->qpn == qpn &&
        s->psn == psn)
      res = RDMA_RETIRED_USED;
  }
  pthread_mutex_unlock(&r->lock);
  return res;
}

void rdma_retired_add(struct rdma_retired *r, uint32_t qpn, uint32_t psn) {
  if (!r)
    return;
  pthread_mutex_lock(&r->lock);
  r->slots[r->next] = (struct retired_slot){qpn, psn, rdma_now()};
  r->next = (r->next + 1) % r->cap;
  pthread_mutex_unlock(&r->lock);
}

#ifdef HIPOBJ_HAVE_VERBS

#include <arpa/inet.h>
#include <infiniband/verbs.h>

static atomic_long live_qps;

long rdma_qp_live_count(void) {
  return atomic_load(&live_qps);
}

struct rdma_dev {
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  char name[64];
  unsigned port;
  unsigned gid_index;
  uint8_t gid[16];
  int mtu_enum;
  int retry_cnt; /* see rdma_qp_rts() */
  uint32_t max_msg;
  size_t ngids;
  struct rdma_gid_info *gids; /* RoCEv2 / IB GIDs of the port */
  char reason[320];
};

static int mtu_enum_of(unsigned bytes) {
  switch (bytes) {
  case 256:
    return IBV_MTU_256;
  case 512:
    return IBV_MTU_512;
  case 1024:
    return IBV_MTU_1024;
  case 2048:
    return IBV_MTU_2048;
  case 4096:
    return IBV_MTU_4096;
  }
  return 0;
}

static int fill_env(const struct rdma_dev_cfg *cfg, struct rdma_env *env,
                    struct hipobj_error *err) {
  memset(env, 0, sizeof *env);
  env->gid_index = -1;
  if (cfg->use_environ && rdma_env_from_environ(env, err) != HIPOBJ_OK)
    return err ? err->status : HIPOBJ_E_CONFIG;
  if (cfg->device && *cfg->device) {
    if (strlen(cfg->device) >= sizeof env->device)
      return herr_set(err, HIPOBJ_E_CONFIG, OP, "RDMA device name too long");
    snprintf(env->device, sizeof env->device, "%s", cfg->device);
  }
  if (cfg->port)
    env->port = cfg->port;
  if (cfg->gid_index >= 0)
    env->gid_index = cfg->gid_index;
  return HIPOBJ_OK;
}

int rdma_dev_open(const struct rdma_dev_cfg *cfg, struct rdma_dev **out,
                  struct hipobj_error *err) {
  static const struct rdma_dev_cfg defaults = {.gid_index = -1,
                                               .use_environ = 1};
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP, "no output given");
  *out = NULL;
  if (!cfg)
    cfg = &defaults;
  if (cfg->mtu && !mtu_enum_of(cfg->mtu))
    return herr_set(err, HIPOBJ_E_CONFIG, OP,
                    "MTU %u is invalid (256, 512, 1024, 2048 or 4096)",
                    cfg->mtu);
  struct rdma_env env;
  int rc = fill_env(cfg, &env, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct rdma_devlist *l = NULL;
  if ((rc = rdma_devlist_get(&l, err)) != HIPOBJ_OK)
    return rc;
  struct rdma_choice ch;
  rc = cfg->gpu_busid
           ? rdma_choose_for_gpu(l, &env, cfg->gpu_busid,
                                 rdma_current_numa_node(), &ch, err)
           : rdma_choose(l, &env, rdma_current_numa_node(), NULL, &ch, err);
  struct rdma_dev *d = NULL;
  if (rc != HIPOBJ_OK)
    goto out;
  d = calloc(1, sizeof *d);
  if (!d || !(d->gids = calloc(ch.port->ngids + 1, sizeof *d->gids))) {
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
    goto out;
  }
  snprintf(d->name, sizeof d->name, "%s", ch.dev->name);
  snprintf(d->reason, sizeof d->reason, "%s", ch.reason);
  d->port = ch.port->port_num;
  d->gid_index = ch.gid->index;
  memcpy(d->gid, ch.gid->gid, 16);
  /* Below 512 the port is misreporting: 1024 is what every peer uses. */
  d->mtu_enum = cfg->mtu                     ? mtu_enum_of(cfg->mtu)
                : ch.port->active_mtu >= 512 ? ch.port->active_mtu_enum
                                             : IBV_MTU_1024;
  d->max_msg = ch.port->max_msg_sz ? ch.port->max_msg_sz : 1u << 31;
  for (size_t i = 0; i < ch.port->ngids; i++) {
    const struct rdma_gid_info *g = &ch.port->gids[i];
    if (g->type == RDMA_GID_TYPE_ROCE_V2 || g->type == RDMA_GID_TYPE_IB)
      d->gids[d->ngids++] = *g;
  }
  int n = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  for (int i = 0; list && i < n && !d->ctx; i++)
    if (!strcmp(ibv_get_device_name(list[i]), d->name))
      d->ctx = ibv_open_device(list[i]);
  if (list)
    ibv_free_device_list(list);
  if (!d->ctx) {
    rc = herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, "cannot open %s: %s", d->name,
                  strerror(errno ? errno : ENODEV));
    goto out;
  }
  /* Soft-RoCE (vendor 0xffffff) treats retry_cnt 7 as "retry forever",
   * unlike the IBTA meaning of 7 tries that §4.2 counts on: a peer whose
   * QP is gone would hold the transfer until its deadline. 6 there. */
  struct ibv_device_attr da;
  d->retry_cnt = 7;
  if (ibv_query_device(d->ctx, &da) == 0 && da.vendor_id == 0xffffff)
    d->retry_cnt = 6;
  if (!(d->pd = ibv_alloc_pd(d->ctx))) {
    rc = herr_set(err, HIPOBJ_E_IO, OP, "ibv_alloc_pd on %s: %s", d->name,
                  strerror(errno ? errno : EIO));
    goto out;
  }
  *out = d;
  d = NULL;
out:
  rdma_dev_close(d);
  rdma_devlist_free(l);
  return rc;
}

void rdma_dev_close(struct rdma_dev *d) {
  if (!d)
    return;
  if (d->pd)
    ibv_dealloc_pd(d->pd);
  if (d->ctx)
    ibv_close_device(d->ctx);
  free(d->gids);
  free(d);
}

struct ibv_pd *rdma_dev_pd(const struct rdma_dev *d) {
  return d->pd;
}
const char *rdma_dev_name(const struct rdma_dev *d) {
  return d->name;
}
unsigned rdma_dev_port(const struct rdma_dev *d) {
  return d->port;
}
const uint8_t *rdma_dev_gid(const struct rdma_dev *d) {
  return d->gid;
}
unsigned rdma_dev_gid_index(const struct rdma_dev *d) {
  return d->gid_index;
}
uint32_t rdma_dev_max_msg(const struct rdma_dev *d) {
  return d->max_msg;
}
const char *rdma_dev_reason(const struct rdma_dev *d) {
  return d->reason;
}

static int is_link_local(const uint8_t g[16]) {
  return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

void rdma_dev_gid_for_peer(const struct rdma_dev *d, const uint8_t peer[16],
                           unsigned *index, uint8_t gid[16]) {
  *index = d->gid_index;
  memcpy(gid, d->gid, 16);
  int want_v4 = rdma_gid_is_ipv4_mapped(peer);
  if (want_v4 == rdma_gid_is_ipv4_mapped(d->gid) &&
      (want_v4 || is_link_local(peer) == is_link_local(d->gid)))
    return;
  /* Same family first; for IPv6 the same scope (global / link-local). */
  const struct rdma_gid_info *best = NULL;
  for (size_t i = 0; i < d->ngids; i++) {
    const struct rdma_gid_info *g = &d->gids[i];
    if (rdma_gid_is_ipv4_mapped(g->gid) != want_v4)
      continue;
    if (!best || (!want_v4 && is_link_local(g->gid) == is_link_local(peer) &&
                  is_link_local(best->gid) != is_link_local(peer)))
      best = g;
  }
  if (best) {
    *index = best->index;
    memcpy(gid, best->gid, 16);
  }
}

/* ---- queue pair -------------------------------------------------------------
 */

struct rdma_qp {
  struct rdma_dev *dev;
  struct ibv_comp_channel *ch;
  struct ibv_cq *cq;
  struct ibv_qp *qp;
  int armed;
};

static int verbs_fail(struct hipobj_error *err, const char *what, int e) {
  if (!e)
    e = EIO;
  int rc = herr_set(err, e == ENOMEM ? HIPOBJ_E_OUT_OF_MEMORY : HIPOBJ_E_IO, OP,
                    "%s: %s", what, strerror(e));
  if (err)
    err->sys_errno = e;
  return rc;
}

int rdma_qp_create(struct rdma_dev *d, unsigned access, struct rdma_qp **out,
                   struct hipobj_error *err) {
  *out = NULL;
  struct rdma_qp *q = calloc(1, sizeof *q);
  if (!q)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  q->dev = d;
  int rc;
  if (!(q->ch = ibv_create_comp_channel(d->ctx))) {
    rc = verbs_fail(err, "ibv_create_comp_channel", errno);
    goto fail;
  }
  /* Non-blocking: ibv_get_cq_event() runs only after poll() said so, and
   * must never hang the waiter on a spurious wake-up. */
  int fl = fcntl(q->ch->fd, F_GETFL);
  if (fl < 0 || fcntl(q->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
    rc = verbs_fail(err, "fcntl(O_NONBLOCK) on the completion channel", errno);
    goto fail;
  }
  /* One CQ of 16 shared by send and receive (§4.1): a transfer needs at
   * most one of each. */
  if (!(q->cq = ibv_create_cq(d->ctx, 16, NULL, q->ch, 0))) {
    rc = verbs_fail(err, "ibv_create_cq", errno);
    goto fail;
  }
  struct ibv_qp_init_attr ia = {.send_cq = q->cq,
                                .recv_cq = q->cq,
                                .qp_type = IBV_QPT_RC,
                                .cap = {.max_send_wr = 16,
                                        .max_recv_wr = 16,
                                        .max_send_sge = RDMA_QP_MAX_SEND_SGE,
                                        .max_recv_sge = 1}};
  if (!(q->qp = ibv_create_qp(d->pd, &ia))) {
    rc = verbs_fail(err, "ibv_create_qp", errno);
    goto fail;
  }
  atomic_fetch_add(&live_qps, 1);
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
                          .pkey_index = 0,
                          .port_num = (uint8_t)d->port,
                          .qp_access_flags = access & RDMA_QP_REMOTE_WRITE
                                                 ? IBV_ACCESS_REMOTE_WRITE
                                                 : 0};
  int e = ibv_modify_qp(q->qp, &a,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                            IBV_QP_ACCESS_FLAGS);
  if (e) {
    rc = verbs_fail(err, "ibv_modify_qp(RESET->INIT)", e);
    goto fail;
  }
  *out = q;
  return HIPOBJ_OK;
fail:
  rdma_qp_destroy(q);
  return rc;
}

uint32_t rdma_qp_num(const struct rdma_qp *q) {
  return q->qp->qp_num;
}

int rdma_qp_rtr(struct rdma_qp *q, uint32_t dest_qpn, const uint8_t dgid[16],
                unsigned sgid_index, uint32_t peer_psn,
                struct hipobj_error *err) {
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = (enum ibv_mtu)q->dev->mtu_enum;
  a.dest_qp_num = dest_qpn & RDMA_QPN_MAX;
  a.rq_psn = peer_psn & RDMA_PSN_MAX;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12; /* 0.64 ms */
  a.ah_attr.is_global = 1;
  memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
  a.ah_attr.grh.sgid_index = (uint8_t)sgid_index;
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = (uint8_t)q->dev->port;
  int e = ibv_modify_qp(q->qp, &a,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                            IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                            IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  return e ? verbs_fail(err, "ibv_modify_qp(INIT->RTR)", e) : HIPOBJ_OK;
}

int rdma_qp_rts(struct rdma_qp *q, uint32_t own_psn, struct hipobj_error *err) {
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14; /* 4.096 us * 2^14 = 67 ms */
  a.retry_cnt = (uint8_t)q->dev->retry_cnt;
  a.rnr_retry = 7; /* without limit */
  a.sq_psn = own_psn & RDMA_PSN_MAX;
  a.max_rd_atomic = 1;
  int e = ibv_modify_qp(q->qp, &a,
                        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                            IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                            IBV_QP_MAX_QP_RD_ATOMIC);
  return e ? verbs_fail(err, "ibv_modify_qp(RTR->RTS)", e) : HIPOBJ_OK;
}

int rdma_qp_post_recv(struct rdma_qp *q, void *addr, uint32_t len,
                      uint32_t lkey, uint64_t wr_id, struct hipobj_error *err) {
  struct ibv_sge sg = {.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
  struct ibv_recv_wr wr = {.wr_id = wr_id,
                           .sg_list = addr ? &sg : NULL,
                           .num_sge = addr ? 1 : 0},
                     *bad = NULL;
  int e = ibv_post_recv(q->qp, &wr, &bad);
  return e ? verbs_fail(err, "ibv_post_recv", e) : HIPOBJ_OK;
}

int rdma_qp_post_write_imm(struct rdma_qp *q, const void *src, uint32_t len,
                           uint32_t lkey, uint64_t raddr, uint32_t rkey,
                           uint32_t imm, uint64_t wr_id,
                           struct hipobj_error *err) {
  struct rdma_sge one = {src, len, lkey};
  return rdma_qp_post_write_imm_sgl(q, &one, 1, raddr, rkey, imm, wr_id, err);
}

int rdma_qp_post_write_imm_sgl(struct rdma_qp *q, const struct rdma_sge *sgl,
                               unsigned n, uint64_t raddr, uint32_t rkey,
                               uint32_t imm, uint64_t wr_id,
                               struct hipobj_error *err) {
  struct ibv_sge sg[RDMA_QP_MAX_SEND_SGE];
  if (n < 1 || n > RDMA_QP_MAX_SEND_SGE)
    return herr_set(err, HIPOBJ_E_INTERNAL, "RDMA",
                    "%u scatter-gather entries (1..%d allowed)", n,
                    RDMA_QP_MAX_SEND_SGE);
  for (unsigned i = 0; i < n; i++)
    sg[i] = (struct ibv_sge){.addr = (uintptr_t)sgl[i].addr,
                             .length = sgl[i].len,
                             .lkey = sgl[i].lkey};
  struct ibv_send_wr wr = {.wr_id = wr_id,
                           .sg_list = sg,
                           .num_sge = (int)n,
                           .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                           .send_flags = IBV_SEND_SIGNALED},
                     *bad = NULL;
  wr.imm_data = htonl(imm);
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  int e = ibv_post_send(q->qp, &wr, &bad);
  return e ? verbs_fail(err, "ibv_post_send(RDMA_WRITE_WITH_IMM)", e)
           : HIPOBJ_OK;
}

static void wc_of(const struct ibv_wc *w, struct rdma_wc *wc) {
  memset(wc, 0, sizeof *wc);
  wc->status = (int)w->status;
  wc->status_str = ibv_wc_status_str(w->status);
  wc->wr_id = w->wr_id;
  if (w->status != IBV_WC_SUCCESS)
    return; /* opcode and the rest are undefined on error completions */
  wc->opcode = w->opcode == IBV_WC_RDMA_WRITE ? RDMA_WC_RDMA_WRITE
               : w->opcode == IBV_WC_RECV_RDMA_WITH_IMM
                   ? RDMA_WC_RECV_RDMA_WITH_IMM
                   : RDMA_WC_OTHER;
  wc->with_imm = (w->wc_flags & IBV_WC_WITH_IMM) != 0;
  wc->imm = ntohl(w->imm_data);
  wc->byte_len = w->byte_len;
}

int rdma_qp_wait(struct rdma_qp *q, double deadline, int wake_fd,
                 struct rdma_wc *wc) {
  for (;;) {
    struct ibv_wc w;
    int n = ibv_poll_cq(q->cq, 1, &w);
    if (n < 0)
      return RDMA_WAIT_ERROR;
    if (n == 1) {
      wc_of(&w, wc);
      return RDMA_WAIT_OK;
    }
    if (!q->armed) {
      if (ibv_req_notify_cq(q->cq, 0) != 0)
        return RDMA_WAIT_ERROR;
      q->armed = 1;
      continue; /* a completion may have slipped in before arming */
    }
    double left = deadline - rdma_now();
    if (left <= 0)
      return RDMA_WAIT_TIMEOUT;
    struct pollfd pf[2] = {{q->ch->fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    int ms = left > 3600 ? 3600000 : (int)(left * 1000) + 1;
    int r = poll(pf, wake_fd >= 0 ? 2 : 1, ms);
    if (r < 0 && errno != EINTR)
      return RDMA_WAIT_ERROR;
    if (r > 0 && (pf[0].revents & POLLIN)) {
      struct ibv_cq *ev_cq;
      void *ev_ctx;
      if (ibv_get_cq_event(q->ch, &ev_cq, &ev_ctx) == 0) {
        ibv_ack_cq_events(ev_cq, 1);
        q->armed = 0; /* an event disarms the CQ */
      }
    }
    if (r > 0 && wake_fd >= 0 && (pf[1].revents & (POLLIN | POLLHUP)))
      return RDMA_WAIT_WOKEN;
  }
}

int rdma_qp_to_error(struct rdma_qp *q) {
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
  return q && q->qp && ibv_modify_qp(q->qp, &a, IBV_QP_STATE) == 0 ? 0 : -1;
}

int rdma_qp_destroy(struct rdma_qp *q) {
  if (!q)
    return 0;
  int rc = 0;
  if (q->qp) {
    if (ibv_destroy_qp(q->qp) == 0)
      atomic_fetch_sub(&live_qps, 1);
    else
      rc = -1; /* leaked, and with it the CQ: it still references it */
  }
  if (rc == 0 && q->cq && ibv_destroy_cq(q->cq) != 0)
    rc = -1;
  if (rc == 0 && q->ch && ibv_destroy_comp_channel(q->ch) != 0)
    rc = -1;
  free(q);
  return rc;
}

#else /* !HIPOBJ_HAVE_VERBS */

#define NO_VERBS "this build of hipObject has no libibverbs support"

long rdma_qp_live_count(void) {
  return 0;
}
int rdma_dev_open(const struct rdma_dev_cfg *cfg, struct rdma_dev **out,
                  struct hipobj_error *err) {
  (void)cfg;
  if (out)
    *out = NULL;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, NO_VERBS);
}
void rdma_dev_close(struct rdma_dev *d) {
  (void)d;
}
struct ibv_pd *rdma_dev_pd(const struct rdma_dev *d) {
  (void)d;
  return NULL;
}
const char *rdma_dev_name(const struct rdma_dev *d) {
  (void)d;
  return "";
}
unsigned rdma_dev_port(const struct rdma_dev *d) {
  (void)d;
  return 0;
}
const uint8_t *rdma_dev_gid(const struct rdma_dev *d) {
  static const uint8_t zero[16];
  (void)d;
  return zero;
}
unsigned rdma_dev_gid_index(const struct rdma_dev *d) {
  (void)d;
  return 0;
}
uint32_t rdma_dev_max_msg(const struct rdma_dev *d) {
  (void)d;
  return 0;
}
const char *rdma_dev_reason(const struct rdma_dev *d) {
  (void)d;
  return NO_VERBS;
}
void rdma_dev_gid_for_peer(const struct rdma_dev *d, const uint8_t peer[16],
                           unsigned *index, uint8_t gid[16]) {
  (void)d, (void)peer;
  *index = 0;
  memset(gid, 0, 16);
}
int rdma_qp_create(struct rdma_dev *d, unsigned access, struct rdma_qp **out,
                   struct hipobj_error *err) {
  (void)d, (void)access;
  *out = NULL;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, NO_VERBS);
}
uint32_t rdma_qp_num(const struct rdma_qp *q) {
  (void)q;
  return 0;
}
int rdma_qp_rtr(struct rdma_qp *q, uint32_t dest_qpn, const uint8_t dgid[16],
                unsigned sgid_index, uint32_t peer_psn,
                struct hipobj_error *err) {
  (void)q, (void)dest_qpn, (void)dgid, (void)sgid_index, (void)peer_psn;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, NO_VERBS);
}
int rdma_qp_rts(struct rdma_qp *q, uint32_t own_psn, struct hipobj_error *err) {
  (void)q, (void)own_psn;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, NO_VERBS);
}
int rdma_qp_post_recv(struct rdma_qp *q, void *addr, uint32_t len,
                      uint32_t lkey, uint64_t wr_id, struct hipobj_error *err) {
  (void)q, (void)addr, (void)len, (void)lkey, (void)wr_id;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, NO_VERBS);
}
int rdma_qp_post_write_imm(struct rdma_qp *q, const void *src, uint32_t len,
                           uint32_t lkey, uint64_t raddr, uint32_t rkey,
                           uint32_t imm, uint64_t wr_id,
                           struct hipobj_error *err) {
  (void)q, (void)src, (void)len, (void)lkey, (void)raddr, (void)rkey;
  (void)imm, (void)wr_id;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, NO_VERBS);
}
int rdma_qp_post_write_imm_sgl(struct rdma_qp *q, const struct rdma_sge *sg,
                               unsigned n, uint64_t raddr, uint32_t rkey,
                               uint32_t imm, uint64_t wr_id,
                               struct hipobj_error *err) {
  (void)q, (void)sg, (void)n, (void)raddr, (void)rkey, (void)imm, (void)wr_id;
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, NO_VERBS);
}
int rdma_qp_wait(struct rdma_qp *q, double deadline, int wake_fd,
                 struct rdma_wc *wc) {
  (void)q, (void)deadline, (void)wake_fd, (void)wc;
  return RDMA_WAIT_ERROR;
}
int rdma_qp_to_error(struct rdma_qp *q) {
  (void)q;
  return -1;
}
int rdma_qp_destroy(struct rdma_qp *q) {
  (void)q;
  return 0;
}

#endif
