/* test_rdma_loopback.c - an RC loopback on one device: two QPs, "server" and
 * "client", connected to each other exactly as hipobj-rc-v2 peers are: each
 * side's RC token, PSN, cookie, QPN and MR travel as the wire strings the
 * rdma/ codecs produce and parse, the QPs go RESET -> INIT -> RTR -> RTS with
 * the attributes of §4.2, and data moves by RDMA WRITE WITH IMMEDIATE with
 * the cookie as immediate (§4.4, §4.5). Registrations come from rdma/mr.
 * Part of the test_rdma_verbs executable (needs a device). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "rdma/device.h"
#include "rdma/mr.h"
#include "rdma/token.h"
#include "src/base/crc64nvme.h"
#include "src/base/error.h"

struct end {
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  struct ibv_cq *cq;
  struct ibv_qp *qp;
  const struct rdma_choice *ch;
  uint32_t psn;
};

static struct rdma_devlist *list;
static struct rdma_choice choice;
static struct ibv_context *ctx;
static struct ibv_pd *pd;

static void setup(void) {
  struct hipobj_error err;
  memset(&err, 0, sizeof err);
  cr_assert_eq(rdma_devlist_get(&list, &err), HIPOBJ_OK, "%s", err.message);
  cr_assert_eq(rdma_choose(list, NULL, -1, NULL, &choice, &err), HIPOBJ_OK,
               "%s", err.message);
  int n = 0;
  struct ibv_device **l = ibv_get_device_list(&n);
  for (int i = 0; l && i < n && !ctx; i++)
    if (!strcmp(ibv_get_device_name(l[i]), choice.dev->name))
      ctx = ibv_open_device(l[i]);
  if (l)
    ibv_free_device_list(l);
  cr_assert_not_null(ctx, "cannot open %s", choice.dev->name);
  pd = ibv_alloc_pd(ctx);
  cr_assert_not_null(pd);
}

static void teardown(void) {
  if (pd)
    ibv_dealloc_pd(pd);
  if (ctx)
    ibv_close_device(ctx);
  rdma_devlist_free(list);
  cr_expect_eq(rdma_mr_live_count(), 0, "MRs leaked");
}

/* Creates the CQ (16 entries) and QP (16 WRs, 1 SGE) and moves it to INIT
 * (§4.1, §4.2), with a random non-zero 24-bit PSN. */
static void create_end(struct end *e, int remote_write) {
  memset(e, 0, sizeof *e);
  e->ch = &choice;
  e->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
  cr_assert_not_null(e->cq, "ibv_create_cq: %s", strerror(errno));
  struct ibv_qp_init_attr ia = {.send_cq = e->cq,
                                .recv_cq = e->cq,
                                .qp_type = IBV_QPT_RC,
                                .cap = {.max_send_wr = 16,
                                        .max_recv_wr = 16,
                                        .max_send_sge = 1,
                                        .max_recv_sge = 1}};
  e->qp = ibv_create_qp(pd, &ia);
  cr_assert_not_null(e->qp, "ibv_create_qp: %s", strerror(errno));
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
                          .pkey_index = 0,
                          .port_num = (uint8_t)choice.port->port_num,
                          .qp_access_flags =
                              remote_write ? IBV_ACCESS_REMOTE_WRITE : 0};
  cr_assert_eq(ibv_modify_qp(e->qp, &a,
                             IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                 IBV_QP_ACCESS_FLAGS),
               0, "INIT");
  e->psn = 1 + (uint32_t)rand() % 0xfffffe;
}

static void destroy_end(struct end *e) {
  /* The QP goes before the CQ (§6.2). */
  if (e->qp)
    cr_expect_eq(ibv_destroy_qp(e->qp), 0);
  if (e->cq)
    cr_expect_eq(ibv_destroy_cq(e->cq), 0);
}

/* The token this end would send, as its 88 hex characters. */
static void token_of(const struct end *e, char hex[RDMA_TOKEN_HEX_LEN + 1]) {
  struct rdma_rc_token t = {.transport = RDMA_TRANSPORT_RC,
                            .qpn = e->qp->qp_num,
                            .port = (uint8_t)choice.port->port_num};
  memcpy(t.gid, choice.gid->gid, 16);
  rdma_token_encode(&t, hex);
}

/* RTR then RTS towards the peer described by its wire token and PSN. */
static void connect_end(struct end *e, const char *peer_token,
                        const char *peer_psn_hex) {
  struct rdma_rc_token peer;
  uint32_t peer_psn;
  struct hipobj_error why = {0};
  cr_assert_eq(rdma_token_decode(peer_token, strlen(peer_token),
                                 RDMA_TOKEN_PREPARE, &peer, NULL, &why),
               0, "%s", why.message);
  cr_assert_eq(rdma_psn_parse(peer_psn_hex, strlen(peer_psn_hex), &peer_psn),
               0);
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  /* The port's active_mtu (§4.2, §8 item 15): 1024 on rxe over a dummy or
   * veth netdev; anything larger there retries silently forever. */
  a.path_mtu = choice.port->active_mtu >= 512
                   ? (enum ibv_mtu)choice.port->active_mtu_enum
                   : IBV_MTU_1024;
  a.dest_qp_num = peer.qpn & 0xffffff;
  a.rq_psn = peer_psn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  memcpy(a.ah_attr.grh.dgid.raw, peer.gid, 16);
  a.ah_attr.grh.sgid_index = (uint8_t)choice.gid->index;
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = (uint8_t)choice.port->port_num;
  cr_assert_eq(ibv_modify_qp(e->qp, &a,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                 IBV_QP_MAX_DEST_RD_ATOMIC |
                                 IBV_QP_MIN_RNR_TIMER),
               0, "RTR: %s", strerror(errno));
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = e->psn;
  a.max_rd_atomic = 1;
  cr_assert_eq(ibv_modify_qp(e->qp, &a,
                             IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                 IBV_QP_MAX_QP_RD_ATOMIC),
               0, "RTS: %s", strerror(errno));
}

/* Pairs two ends through their wire strings, as PREPARE and its reply do. */
static void pair(struct end *server, struct end *client) {
  char st[RDMA_TOKEN_HEX_LEN + 1], ct[RDMA_TOKEN_HEX_LEN + 1], sp[7], cp[7];
  token_of(server, st);
  token_of(client, ct);
  cr_assert_eq(rdma_psn_format(server->psn, sp), 0);
  cr_assert_eq(rdma_psn_format(client->psn, cp), 0);
  /* The client reads the server token from "200:<token>". */
  char reply[4 + RDMA_TOKEN_HEX_LEN + 1];
  snprintf(reply, sizeof reply, "200:%s", st);
  struct rdma_reply r;
  cr_assert_eq(rdma_reply_parse(reply, strlen(reply), &r, NULL), 0);
  cr_assert_eq(r.token.qpn, server->qp->qp_num);
  connect_end(client, st, sp);
  connect_end(server, ct, cp);
}

/* Polls one completion without spinning hard: rxe's work competes with the
 * poller for the same CPUs under emulation. */
static struct ibv_wc wait_wc(struct ibv_cq *cq) {
  struct ibv_wc wc;
  struct timespec nap = {0, 100000}, t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int n = ibv_poll_cq(cq, 1, &wc);
    cr_assert_geq(n, 0, "ibv_poll_cq failed");
    if (n == 1)
      return wc;
    clock_gettime(CLOCK_MONOTONIC, &t);
    cr_assert_lt(t.tv_sec - t0.tv_sec, 60, "no completion within 60 s");
    nanosleep(&nap, NULL);
  }
}

static void post_write(struct end *e, const void *src, size_t len,
                       uint32_t lkey, uint64_t raddr, uint32_t rkey,
                       int with_imm, uint32_t cookie, uint64_t wr_id) {
  struct ibv_sge sg = {
      .addr = (uintptr_t)src, .length = (uint32_t)len, .lkey = lkey};
  struct ibv_send_wr wr = {.wr_id = wr_id,
                           .sg_list = &sg,
                           .num_sge = 1,
                           .opcode = with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM
                                              : IBV_WR_RDMA_WRITE,
                           .send_flags = IBV_SEND_SIGNALED},
                     *bad = NULL;
  wr.imm_data = htonl(cookie);
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  cr_assert_eq(ibv_post_send(e->qp, &wr, &bad), 0, "ibv_post_send");
}

static void post_recv0(struct end *e) {
  /* A zero-SGE receive is enough for a WRITE WITH IMM (§4.3 step 7). */
  struct ibv_recv_wr wr = {.wr_id = 7, .sg_list = NULL, .num_sge = 0}, *bad;
  cr_assert_eq(ibv_post_recv(e->qp, &wr, &bad), 0, "ibv_post_recv");
}

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(i * 131 + seed + (i >> 12));
}

static void check_imm(const struct ibv_wc *wc, uint32_t cookie) {
  cr_expect_eq(wc->status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc->status));
  cr_expect_eq(wc->opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  cr_expect(wc->wc_flags & IBV_WC_WITH_IMM);
  cr_expect_eq(ntohl(wc->imm_data), cookie);
}

TestSuite(loopback, .init = setup, .fini = teardown, .timeout = 300);

/* GET: the server writes its staging buffer into the client's buffer. */
Test(loopback, get_write_with_imm) {
  size_t size = 4u << 20;
  unsigned char *staging = mmap(NULL, size, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  unsigned char *dst = mmap(NULL, size, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert(staging != MAP_FAILED && dst != MAP_FAILED);
  fill(staging, size, 3);
  struct rdma_mr_cache *cache;
  struct rdma_mr_cache_opts o = {.access = RDMA_MR_REMOTE_WRITE};
  cr_assert_eq(rdma_mr_cache_create(pd, &o, &cache, NULL), HIPOBJ_OK);
  const struct rdma_mr *smr, *dmr;
  cr_assert_eq(
      rdma_mr_cache_acquire(cache, RDMA_MEM_HOST, staging, size, &smr, NULL),
      HIPOBJ_OK);
  cr_assert_eq(
      rdma_mr_cache_acquire(cache, RDMA_MEM_HOST, dst, size, &dmr, NULL),
      HIPOBJ_OK);
  struct end server, client;
  create_end(&server, 0);
  create_end(&client, 1);
  pair(&server, &client);
  post_recv0(&client);

  /* READY: the client's cookie, QPN and MR as header strings. */
  uint32_t cookie = 0x1a2b3c4d, got_cookie, rkey, qpn;
  uint64_t addr;
  char ck[9], q[7], a[17], k[9];
  const struct rdma_mr_piece *dp = rdma_mr_find_piece(dmr, dst, size);
  cr_assert_not_null(dp);
  cr_assert_eq(rdma_cookie_format(cookie, ck), 0);
  cr_assert_eq(rdma_qpn_format(client.qp->qp_num, q), 0);
  rdma_mr_addr_format((uintptr_t)dst, a);
  rdma_rkey_format(dp->rkey, k);
  cr_assert_eq(rdma_cookie_parse(ck, strlen(ck), &got_cookie), 0);
  cr_assert_eq(rdma_qpn_parse(q, strlen(q), &qpn), 0);
  cr_assert_eq(rdma_mr_addr_parse(a, strlen(a), &addr), 0);
  cr_assert_eq(rdma_rkey_parse(k, strlen(k), &rkey), 0);
  cr_expect_eq(qpn, client.qp->qp_num);

  const struct rdma_mr_piece *sp = rdma_mr_find_piece(smr, staging, size);
  post_write(&server, staging, size, sp->lkey, addr, rkey, 1, got_cookie, 1);
  struct ibv_wc wc = wait_wc(server.cq);
  cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
  cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE);
  wc = wait_wc(client.cq);
  check_imm(&wc, cookie);
  cr_expect_eq(crc64nvme(dst, size), crc64nvme(staging, size));
  cr_expect(memcmp(dst, staging, size) == 0, "data differs");

  destroy_end(&server);
  destroy_end(&client);
  rdma_mr_cache_release(cache, smr);
  rdma_mr_cache_release(cache, dmr);
  cr_expect_eq(rdma_mr_cache_destroy(cache), 0);
  munmap(staging, size);
  munmap(dst, size);
}

/* PUT: the client pushes into the server's staging buffer; the server
 * posted its receive already in INIT, as §4.4 recommends, and checks
 * byte_len == size. */
Test(loopback, put_write_with_imm) {
  size_t size = 1000003;
  unsigned char *src = malloc(size), *staging = calloc(1, size);
  cr_assert(src && staging);
  fill(src, size, 9);
  struct end server, client;
  create_end(&server, 1);
  create_end(&client, 0);
  post_recv0(&server);
  struct rdma_mr *smr, *cmr;
  cr_assert_eq(rdma_mr_reg(pd, staging, size,
                           RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE, 0, &smr,
                           NULL),
               HIPOBJ_OK);
  cr_assert_eq(rdma_mr_reg(pd, src, size, RDMA_MR_LOCAL_WRITE, 0, &cmr, NULL),
               HIPOBJ_OK);
  pair(&server, &client);
  uint32_t cookie = 0xfeedf00d;
  post_write(&client, src, size, cmr->pieces[0].lkey, smr->pieces[0].addr,
             smr->pieces[0].rkey, 1, cookie, 2);
  struct ibv_wc wc = wait_wc(client.cq);
  cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
  wc = wait_wc(server.cq);
  check_imm(&wc, cookie);
  cr_expect_eq(wc.byte_len, size);
  cr_expect(memcmp(src, staging, size) == 0, "data differs");
  destroy_end(&server);
  destroy_end(&client);
  cr_expect_eq(rdma_mr_dereg(smr, NULL), HIPOBJ_OK);
  cr_expect_eq(rdma_mr_dereg(cmr, NULL), HIPOBJ_OK);
  free(src);
  free(staging);
}

/* A destination registered in pieces (forced split): plain WRITEs into each
 * piece with its own rkey, the last one WITH IMM; RC ordering means every
 * byte has landed when the immediate arrives (the Ceph relay, §4.4). */
Test(loopback, split_destination_relay) {
  size_t size = 1u << 20, piece = 256u << 10;
  unsigned char *src = malloc(size),
                *dst = mmap(NULL, size, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert(src && dst != MAP_FAILED);
  fill(src, size, 1);
  struct rdma_mr *smr, *dmr;
  cr_assert_eq(rdma_mr_reg(pd, src, size, 0, 0, &smr, NULL), HIPOBJ_OK);
  cr_assert_eq(rdma_mr_reg(pd, dst, size, 0, piece, &dmr, NULL), HIPOBJ_OK);
  cr_assert_eq(dmr->npieces, 4);
  struct end server, client;
  create_end(&server, 0);
  create_end(&client, 1);
  pair(&server, &client);
  post_recv0(&client);
  uint32_t cookie = 0x00000001;
  for (size_t i = 0; i < dmr->npieces; i++) {
    const struct rdma_mr_piece *p = &dmr->pieces[i];
    post_write(&server, src + i * piece, p->len, smr->pieces[0].lkey, p->addr,
               p->rkey, i + 1 == dmr->npieces, cookie, 10 + i);
  }
  for (size_t i = 0; i < dmr->npieces; i++) {
    struct ibv_wc wc = wait_wc(server.cq);
    cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
  }
  struct ibv_wc wc = wait_wc(client.cq);
  check_imm(&wc, cookie);
  cr_expect(memcmp(src, dst, size) == 0, "data differs");
  destroy_end(&server);
  destroy_end(&client);
  cr_expect_eq(rdma_mr_dereg(smr, NULL), HIPOBJ_OK);
  cr_expect_eq(rdma_mr_dereg(dmr, NULL), HIPOBJ_OK);
  free(src);
  munmap(dst, size);
}
