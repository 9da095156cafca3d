/* qp.h - the verbs resources one hipobj-rc-v2 transfer uses, for both roles
 * (wire spec shared/docs/rdma-wire-protocol.md; § numbers refer to it):
 *
 *  - struct rdma_dev: an opened device/port/GID choice (rdma/select.c) with
 *    its protection domain, shared by every transfer of a client or server;
 *  - struct rdma_qp: one CQ (16 entries, its own completion channel) and one
 *    RC QP (16 WRs each way, 1 SGE), RESET -> INIT -> RTR -> RTS with the
 *    attributes of §4.2, completion waits with a deadline that sleep in
 *    poll() on the channel instead of spinning (the Soft-RoCE guest is
 *    emulated: a spinning poller steals the CPU rxe needs), teardown QP
 *    before CQ (§6.2);
 *  - the retired (QPN, PSN) ring of §4.3 step 4;
 *  - CSPRNG draws for PSNs, cookies and session ids (§6.4).
 *
 * No verbs type appears here, so rc_client.h / rc_server.h (and src/) stay
 * free of verbs headers. Built without libibverbs, opening a device fails
 * with HIPOBJ_E_UNSUPPORTED and the reason. */
#ifndef HIPOBJ_RDMA_QP_H
#define HIPOBJ_RDMA_QP_H

#include <stddef.h>
#include <stdint.h>

struct hipobj_error;
struct ibv_pd;

/* CLOCK_MONOTONIC seconds: every deadline below is one of these. */
double rdma_now(void);

/* Fills buf from getrandom(); -1 when the kernel CSPRNG fails (never a weak
 * fallback: PSNs, cookies and session ids must be unguessable, §6.4). */
int rdma_random(void *buf, size_t n);
/* A random PSN in 1..0xffffff / cookie in 1..0xffffffff; -1 on failure. */
int rdma_random_psn(uint32_t *psn);
int rdma_random_cookie(uint32_t *cookie);

/* ---- device ---------------------------------------------------------------
 */

struct rdma_dev;

struct rdma_dev_cfg {
  const char *device;    /* name, NULL/"": choose (HIPOBJ_RDMA_DEVICE applies
                            when use_environ) */
  unsigned port;         /* 0: choose */
  int gid_index;         /* -1: choose */
  const char *gpu_busid; /* memory of this GPU: the NIC nearest it */
  int use_environ;       /* honour HIPOBJ_RDMA / _DEVICE / _GID_INDEX */
  unsigned mtu;          /* path MTU override in bytes (256..4096), 0: the
                            port's active_mtu (§8 item 15) */
};

/* Chooses (rdma_choose), opens the device and allocates the PD. Fails with
 * HIPOBJ_E_UNSUPPORTED naming the reason when there is nothing usable. */
int rdma_dev_open(const struct rdma_dev_cfg *cfg, struct rdma_dev **out,
                  struct hipobj_error *err);
void rdma_dev_close(struct rdma_dev *d);
struct ibv_pd *rdma_dev_pd(const struct rdma_dev *d);
const char *rdma_dev_name(const struct rdma_dev *d);
unsigned rdma_dev_port(const struct rdma_dev *d);
/* The chosen GID (raw network order) and its index. */
const uint8_t *rdma_dev_gid(const struct rdma_dev *d);
unsigned rdma_dev_gid_index(const struct rdma_dev *d);
/* The port's max_msg_sz: no single RDMA message may be larger (§4.4). */
uint32_t rdma_dev_max_msg(const struct rdma_dev *d);
/* Why this device/port/GID was chosen (for logs). */
const char *rdma_dev_reason(const struct rdma_dev *d);
/* The local GID to talk to a peer GID: same family as the peer (IPv4-mapped
 * for an IPv4-mapped peer, else a global, then link-local IPv6 RoCEv2 GID),
 * the chosen one when nothing better exists (§8 item 16). */
void rdma_dev_gid_for_peer(const struct rdma_dev *d, const uint8_t peer[16],
                           unsigned *index, uint8_t gid[16]);

/* ---- queue pair -----------------------------------------------------------
 */

struct rdma_qp;

/* qp_access_flags at INIT: the minimum of §4.2 (client GET and server PUT
 * need REMOTE_WRITE; everything else none). */
enum { RDMA_QP_REMOTE_WRITE = 1u << 0 };

/* Creates the completion channel, CQ and QP and moves the QP to INIT. */
int rdma_qp_create(struct rdma_dev *d, unsigned access, struct rdma_qp **out,
                   struct hipobj_error *err);
uint32_t rdma_qp_num(const struct rdma_qp *q);
/* INIT -> RTR towards the peer: dest_qp_num, the peer's PSN as rq_psn, the
 * peer GID as dgid, sgid_index the local GID to use. */
int rdma_qp_rtr(struct rdma_qp *q, uint32_t dest_qpn, const uint8_t dgid[16],
                unsigned sgid_index, uint32_t peer_psn,
                struct hipobj_error *err);
/* RTR -> RTS with the own PSN as sq_psn. */
int rdma_qp_rts(struct rdma_qp *q, uint32_t own_psn, struct hipobj_error *err);
/* Posts one receive: one SGE over [addr, addr+len) with lkey, or no SGE at
 * all when addr is NULL (enough for a WRITE WITH IMM, §4.3 step 7). */
int rdma_qp_post_recv(struct rdma_qp *q, void *addr, uint32_t len,
                      uint32_t lkey, uint64_t wr_id, struct hipobj_error *err);
/* Posts one signaled RDMA WRITE WITH IMM of [src, src+len) to raddr/rkey;
 * imm is in host order (sent as htonl(imm), §4.5). */
int rdma_qp_post_write_imm(struct rdma_qp *q, const void *src, uint32_t len,
                           uint32_t lkey, uint64_t raddr, uint32_t rkey,
                           uint32_t imm, uint64_t wr_id,
                           struct hipobj_error *err);

/* One local piece of a gathered WRITE. */
struct rdma_sge {
  const void *addr;
  uint32_t len;
  uint32_t lkey;
};
/* Scatter-gather entries one send may carry: a PUT must be exactly one
 * WRITE WITH IMM (§4.4), so a source in several registered buffers (the
 * pinned staging chunks of GPU memory) is gathered by the NIC. Every
 * provider offers at least this many (rxe 32, mlx5 30). */
#define RDMA_QP_MAX_SEND_SGE 4
/* The same WRITE WITH IMM gathered from n (1..RDMA_QP_MAX_SEND_SGE)
 * pieces, in order. */
int rdma_qp_post_write_imm_sgl(struct rdma_qp *q, const struct rdma_sge *sg,
                               unsigned n, uint64_t raddr, uint32_t rkey,
                               uint32_t imm, uint64_t wr_id,
                               struct hipobj_error *err);

/* One completion as plain data. */
enum rdma_wc_opcode {
  RDMA_WC_OTHER = 0,
  RDMA_WC_RDMA_WRITE = 1,         /* our WRITE (WITH IMM) completed */
  RDMA_WC_RECV_RDMA_WITH_IMM = 2, /* a peer's WRITE WITH IMM arrived */
};
struct rdma_wc {
  int status; /* enum ibv_wc_status, 0 = success */
  const char *status_str;
  enum rdma_wc_opcode opcode;
  int with_imm; /* IBV_WC_WITH_IMM */
  uint32_t imm; /* host order (ntohl applied) */
  uint32_t byte_len;
  uint64_t wr_id;
};

enum {
  RDMA_WAIT_OK = 0,      /* *wc holds a completion */
  RDMA_WAIT_TIMEOUT = 1, /* the deadline passed */
  RDMA_WAIT_WOKEN = 2,   /* wake_fd became readable (not consumed) */
  RDMA_WAIT_ERROR = 3,   /* polling failed (errno kept) */
};
/* Waits for the next completion until `deadline` (rdma_now() seconds):
 * polls the CQ, arms it, and sleeps in poll() on the completion channel
 * (and wake_fd when >= 0). */
int rdma_qp_wait(struct rdma_qp *q, double deadline, int wake_fd,
                 struct rdma_wc *wc);
/* Moves the QP to ERROR: outstanding work requests flush, no packet is
 * accepted any more (failure paths, the server's fault hook). */
int rdma_qp_to_error(struct rdma_qp *q);
/* Destroys the QP, then the CQ, then the channel (NULL allowed). Returns -1
 * when the QP could not be destroyed: its memory may still be written then,
 * so the caller must leak the registration and buffer (§6.2). */
int rdma_qp_destroy(struct rdma_qp *q);
/* QPs currently alive in this process, both roles (for leak tests). */
long rdma_qp_live_count(void);

/* ---- retired (QPN, PSN) pairs (§4.3 step 4) --------------------------------
 */

struct rdma_retired;

/* capacity 0: 4096; window_ms 0: 60 s. Thread-safe. */
int rdma_retired_create(unsigned capacity, unsigned window_ms,
                        struct rdma_retired **out);
void rdma_retired_destroy(struct rdma_retired *r);
enum {
  RDMA_RETIRED_FREE = 0, /* the pair may be used */
  RDMA_RETIRED_USED = 1, /* retired within the window: draw another PSN */
  RDMA_RETIRED_FULL = 2, /* every slot is younger than the window: a new
                            retirement would forget a live pair (503) */
};
int rdma_retired_check(struct rdma_retired *r, uint32_t qpn, uint32_t psn);
void rdma_retired_add(struct rdma_retired *r, uint32_t qpn, uint32_t psn);

#endif
