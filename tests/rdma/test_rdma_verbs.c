/* test_rdma_verbs.c - the RDMA foundations on a real verbs device: device
 * enumeration and GID choice (cross-checked against sysfs and the harness's
 * RXE_* variables), explicit registration and splitting, the registration
 * cache (hit, miss, overlap, drop, eviction, threads), the dma-buf hook, and
 * an RC loopback: two QPs on one device connected to each other with the
 * attributes of wire spec §4.2, moving data by RDMA WRITE WITH IMMEDIATE
 * (the cookie as immediate, §4.5).
 *
 * Needs a device: run it through tests/rxe/with-rdma.sh (a real device or
 * the Soft-RoCE VM). Without one it prints why and exits 77 (skipped). It
 * includes verbs.h itself only to drive the QPs of the loopback. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rdma/device.h"
#include "rdma/mr.h"
#include "rdma/token.h"
#include "src/base/crc64nvme.h"
#include "src/base/error.h"

#define MiB (1u << 20)

/* The device, port and GID the library chooses, opened with a PD. */
struct env {
  struct rdma_devlist *list;
  struct rdma_choice choice;
  struct ibv_context *ctx;
  struct ibv_pd *pd;
};

static void env_open(struct env *e) {
  struct hipobj_error err;
  memset(e, 0, sizeof *e);
  memset(&err, 0, sizeof err);
  cr_assert_eq(rdma_devlist_get(&e->list, &err), HIPOBJ_OK, "%s", err.message);
  cr_assert_eq(rdma_choose(e->list, NULL, rdma_current_numa_node(), NULL,
                           &e->choice, &err),
               HIPOBJ_OK, "%s", err.message);
  int n = 0;
  struct ibv_device **l = ibv_get_device_list(&n);
  cr_assert_not_null(l, "ibv_get_device_list: %s", strerror(errno));
  for (int i = 0; i < n && !e->ctx; i++)
    if (!strcmp(ibv_get_device_name(l[i]), e->choice.dev->name))
      e->ctx = ibv_open_device(l[i]);
  ibv_free_device_list(l);
  cr_assert_not_null(e->ctx, "cannot open %s", e->choice.dev->name);
  e->pd = ibv_alloc_pd(e->ctx);
  cr_assert_not_null(e->pd, "ibv_alloc_pd: %s", strerror(errno));
}

static void env_close(struct env *e) {
  if (e->pd)
    ibv_dealloc_pd(e->pd);
  if (e->ctx)
    ibv_close_device(e->ctx);
  rdma_devlist_free(e->list);
  cr_expect_eq(rdma_mr_live_count(), 0, "MRs leaked: %ld",
               rdma_mr_live_count());
}

static void *page_buf(size_t len) {
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  cr_assert_neq(p, MAP_FAILED);
  return p;
}

/* ---- enumeration ----------------------------------------------------------
 */

Test(device, enumerate_and_choose) {
  struct env e;
  env_open(&e);
  const struct rdma_choice *c = &e.choice;
  cr_expect_gt(e.list->n, 0);
  cr_expect(c->port->active);
  cr_expect_str_eq(c->port->state, "ACTIVE");
  cr_expect_geq(c->port->active_mtu, 256);
  cr_expect_leq(c->port->active_mtu, 4096);
  cr_expect_gt(c->port->max_msg_sz, 0);
  cr_expect_gt(c->dev->max_mr_size, 0);
  if (c->port->link_layer == RDMA_LINK_ETHERNET) {
    cr_expect_eq(c->gid->type, RDMA_GID_TYPE_ROCE_V2);
    cr_expect(rdma_gid_is_ipv4_mapped(c->gid->gid), "chose %s", c->reason);
    cr_expect_neq(c->gid->ndev[0], '\0', "no netdev behind the GID");
  }
  /* The harness computed the IPv4-mapped RoCEv2 index its own way. */
  const char *dev = getenv("RXE_DEV"), *idx = getenv("RXE_GID_INDEX");
  if (dev && *dev)
    cr_expect_str_eq(c->dev->name, dev);
  if (idx && *idx)
    cr_expect_eq(c->gid->index, (unsigned)atoi(idx), "%s", c->reason);
  const char *ip = getenv("RXE_IP");
  if (ip && *ip) {
    char text[64], want[64];
    rdma_gid_format(c->gid->gid, text, sizeof text);
    snprintf(want, sizeof want, "::ffff:%s", ip);
    cr_expect_str_eq(text, want);
  }
  struct hbuf info = HBUF_INIT;
  struct hipobj_error err;
  cr_assert_eq(rdma_info(&info, &err), HIPOBJ_OK);
  cr_expect(strstr(hbuf_str(&info), c->dev->name) != NULL);
  cr_expect(strstr(hbuf_str(&info), "<- preferred") != NULL);
  cr_expect(strstr(hbuf_str(&info), "RDMA choice (host memory") != NULL);
  cr_log_info("rdma_info:\n%s", hbuf_str(&info));
  hbuf_free(&info);
  env_close(&e);
}

Test(device, sysfs_agrees_with_verbs) {
  struct env e;
  env_open(&e);
  for (size_t d = 0; d < e.list->n; d++) {
    const struct rdma_device_info *dev = &e.list->devs[d];
    for (size_t p = 0; p < dev->nports; p++) {
      const struct rdma_port_info *port = &dev->ports[p];
      struct rdma_gid_info *g = NULL;
      size_t n = 0;
      cr_assert_eq(rdma_sysfs_read_gids("/sys", dev->name, port->port_num,
                                        port->gid_tbl_len, port->link_layer, &g,
                                        &n),
                   0);
      cr_expect_eq(n, port->ngids, "%s port %u", dev->name, port->port_num);
      for (size_t i = 0; i < n && i < port->ngids; i++) {
        cr_expect_eq(g[i].index, port->gids[i].index);
        cr_expect(memcmp(g[i].gid, port->gids[i].gid, 16) == 0);
        cr_expect_eq(g[i].type, port->gids[i].type, "GID %u", g[i].index);
        cr_expect_str_eq(g[i].ndev, port->gids[i].ndev);
      }
      free(g);
    }
  }
  env_close(&e);
}

Test(device, environment_overrides) {
  struct env e;
  env_open(&e);
  struct rdma_env env;
  struct rdma_choice c;
  struct hipobj_error err;
  char idx[16];
  snprintf(idx, sizeof idx, "%u", e.choice.port->gids[0].index);
  cr_assert_eq(rdma_env_parse("require", e.choice.dev->name, idx, &env, &err),
               HIPOBJ_OK);
  cr_assert_eq(rdma_choose(e.list, &env, -1, NULL, &c, &err), HIPOBJ_OK, "%s",
               err.message);
  cr_expect_eq(c.gid->index, e.choice.port->gids[0].index);
  cr_expect(strstr(c.reason, "HIPOBJ_RDMA_GID_INDEX") != NULL);
  cr_assert_eq(rdma_env_parse(NULL, "no_such_dev0", NULL, &env, &err),
               HIPOBJ_OK);
  cr_expect_eq(rdma_choose(e.list, &env, -1, NULL, &c, &err),
               HIPOBJ_E_UNSUPPORTED);
  cr_expect(strstr(err.message, "no such RDMA device") != NULL);
  env_close(&e);
}

/* ---- explicit registration ------------------------------------------------
 */

Test(mr, register_deregister_and_split) {
  struct env e;
  env_open(&e);
  struct hipobj_error err;
  size_t len = 4 * MiB + 100;
  char *buf = page_buf(len);
  struct rdma_mr *m = NULL;
  cr_assert_eq(rdma_mr_reg(e.pd, buf, len, 0, 0, &m, &err), HIPOBJ_OK, "%s",
               err.message);
  cr_expect_eq(m->npieces, 1);
  cr_expect_eq(rdma_mr_live_count(), 1);
  cr_expect_eq(m->access, RDMA_MR_ACCESS_DEFAULT);
  const struct rdma_mr_piece *p = rdma_mr_find_piece(m, buf + 10, 1000);
  cr_assert_not_null(p);
  cr_expect_eq(p->lkey, p->mr->lkey);
  cr_expect_eq(rdma_mr_dereg(m, &err), HIPOBJ_OK);
  cr_expect_eq(rdma_mr_live_count(), 0);

  /* Forced split: 1 MiB pieces (the internal knob). */
  cr_assert_eq(rdma_mr_reg(e.pd, buf, len, RDMA_MR_REMOTE_WRITE, MiB, &m, &err),
               HIPOBJ_OK, "%s", err.message);
  cr_expect_eq(m->npieces, 5);
  cr_expect_eq(rdma_mr_live_count(), 5);
  for (size_t i = 0; i < m->npieces; i++) {
    cr_expect_eq(m->pieces[i].addr, (uintptr_t)buf + i * MiB);
    cr_expect_eq(m->pieces[i].len, i < 4 ? MiB : 100);
  }
  cr_expect_not_null(rdma_mr_find_piece(m, buf + MiB, MiB));
  cr_expect_null(rdma_mr_find_piece(m, buf + MiB - 1, 2));
  cr_expect_null(rdma_mr_find_piece(m, buf + len, 1));
  cr_expect_eq(rdma_mr_dereg(m, &err), HIPOBJ_OK);
  cr_expect_eq(rdma_mr_live_count(), 0);

  /* A range that is not mapped fails with the call and errno named. */
  munmap(buf, len);
  memset(&err, 0, sizeof err);
  cr_expect_neq(rdma_mr_reg(e.pd, buf, len, 0, 0, &m, &err), HIPOBJ_OK);
  cr_expect(strstr(err.message, "ibv_reg_mr") != NULL, "%s", err.message);
  cr_expect_neq(err.sys_errno, 0);
  cr_expect_eq(rdma_mr_live_count(), 0);
  env_close(&e);
}

/* ---- cache -----------------------------------------------------------------
 */

Test(mr_cache, hit_miss_overlap_drop_evict) {
  struct env e;
  env_open(&e);
  struct hipobj_error err;
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 64 * pg;
  char *buf = page_buf(len);
  struct rdma_mr_cache_opts o = {.max_mr_size = 8 * pg, .max_entries = 3};
  struct rdma_mr_cache *c = NULL;
  cr_assert_eq(rdma_mr_cache_create(e.pd, &o, &c, &err), HIPOBJ_OK);
  struct rdma_mr_cache_stats st;
  const struct rdma_mr *a, *b, *m;

  /* Miss, widened to the page; then hits inside it. */
  cr_assert_eq(rdma_mr_cache_acquire(c, RDMA_MEM_HOST, buf + 10, 100, &a, &err),
               HIPOBJ_OK, "%s", err.message);
  cr_expect_eq(a->addr, (uintptr_t)buf);
  cr_expect_eq(a->len, pg);
  cr_assert_eq(
      rdma_mr_cache_acquire(c, RDMA_MEM_HOST, buf + 200, pg - 200, &b, &err),
      HIPOBJ_OK);
  cr_expect_eq(a, b);
  rdma_mr_cache_release(c, b);
  rdma_mr_cache_get_stats(c, &st);
  cr_expect_eq(st.hits, 1);
  cr_expect_eq(st.misses, 1);
  cr_expect_eq(st.entries, 1);
  cr_expect_eq(st.in_use, 1);

  /* Overlap: x = [4, 8) pages, then [6, 24) pages overlaps it: one
   * registration of the union [4, 24), split into 8-page pieces; x, still
   * referenced, is retired rather than deregistered under its user. */
  const struct rdma_mr *x;
  cr_assert_eq(
      rdma_mr_cache_acquire(c, RDMA_MEM_HOST, buf + 4 * pg, 4 * pg, &x, &err),
      HIPOBJ_OK);
  cr_assert_eq(rdma_mr_cache_acquire(c, RDMA_MEM_HOST, buf + 6 * pg + 1,
                                     18 * pg - 1, &m, &err),
               HIPOBJ_OK);
  cr_expect_eq(m->addr, (uintptr_t)buf + 4 * pg);
  cr_expect_eq(m->len, 20 * pg);
  cr_expect_eq(m->npieces, 3);
  cr_expect_eq(m->pieces[2].len, 4 * pg);
  rdma_mr_cache_get_stats(c, &st);
  cr_expect_eq(st.merges, 1);
  cr_expect_eq(st.entries, 2); /* a and the union */
  cr_expect_eq(rdma_mr_live_count(), 1 + 1 + 3);
  cr_expect_not_null(rdma_mr_find_piece(x, buf + 4 * pg, 4 * pg));
  rdma_mr_cache_release(c, x);
  cr_expect_eq(rdma_mr_live_count(), 1 + 3);
  /* x's pages are now served by the union. */
  cr_assert_eq(
      rdma_mr_cache_acquire(c, RDMA_MEM_HOST, buf + 5 * pg, 10, &b, &err),
      HIPOBJ_OK);
  cr_expect_eq(b, m);
  rdma_mr_cache_release(c, b);
  rdma_mr_cache_release(c, m);
  rdma_mr_cache_release(c, a);

  /* Disjoint ranges past the entry limit (3): least recently used go. */
  const struct rdma_mr *r[3];
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(rdma_mr_cache_acquire(c, RDMA_MEM_HOST,
                                       buf + (30 + 4 * i) * pg, pg, &r[i],
                                       &err),
                 HIPOBJ_OK);
    rdma_mr_cache_release(c, r[i]);
  }
  rdma_mr_cache_get_stats(c, &st);
  cr_expect_eq(st.entries, 3);
  cr_expect_eq(st.evictions, 2); /* a, then the union */
  cr_expect_eq(st.in_use, 0);
  cr_expect_eq(rdma_mr_live_count(), 3);

  /* Drop (the memory is about to be freed): overlapping ones go. */
  cr_assert_eq(
      rdma_mr_cache_acquire(c, RDMA_MEM_HOST, buf + 34 * pg, 10, &b, &err),
      HIPOBJ_OK);
  cr_expect_eq(b, r[1]);
  cr_expect_eq(rdma_mr_cache_drop(c, buf + 33 * pg, 2 * pg), 1);
  cr_expect_eq(rdma_mr_live_count(), 3); /* r[1] still referenced */
  rdma_mr_cache_release(c, b);
  cr_expect_eq(rdma_mr_live_count(), 2);
  cr_expect_eq(rdma_mr_cache_drop(c, buf, len), 2);
  rdma_mr_cache_get_stats(c, &st);
  cr_expect_eq(st.entries, 0);
  cr_expect_eq(st.drops, 3);
  cr_expect_eq(st.bytes, 0);
  cr_expect_eq(rdma_mr_live_count(), 0);

  /* An acquire of unmapped memory fails cleanly and caches nothing. */
  munmap(buf, len);
  memset(&err, 0, sizeof err);
  cr_expect_neq(rdma_mr_cache_acquire(c, RDMA_MEM_HOST, buf, pg, &b, &err),
                HIPOBJ_OK);
  cr_expect(strstr(err.message, "ibv_reg_mr") != NULL, "%s", err.message);
  cr_expect_eq(rdma_mr_cache_destroy(c), 0);
  env_close(&e);
}

struct hammer {
  struct rdma_mr_cache *c;
  char *buf;
  size_t len;
  unsigned seed;
  int failures;
};

static void *hammer_main(void *arg) {
  struct hammer *h = arg;
  for (int i = 0; i < 300; i++) {
    size_t off = (size_t)rand_r(&h->seed) % (h->len - 1);
    size_t n = 1 + (size_t)rand_r(&h->seed) %
                       (h->len - off < 65536 ? h->len - off : 65536);
    const struct rdma_mr *m;
    if (i % 50 == 49) {
      rdma_mr_cache_drop(h->c, h->buf + off, n);
      continue;
    }
    if (rdma_mr_cache_acquire(h->c, RDMA_MEM_HOST, h->buf + off, n, &m, NULL) !=
        HIPOBJ_OK) {
      h->failures++;
      continue;
    }
    if (!rdma_mr_find_piece(m, h->buf + off, n) &&
        !(m->addr <= (uintptr_t)h->buf + off &&
          (uintptr_t)h->buf + off + n <= m->addr + m->len))
      h->failures++;
    rdma_mr_cache_release(h->c, m);
  }
  return NULL;
}

Test(mr_cache, threads, .timeout = 300) {
  struct env e;
  env_open(&e);
  struct rdma_mr_cache *c;
  size_t len = 2 * MiB;
  char *buf = page_buf(len);
  struct rdma_mr_cache_opts o = {.max_entries = 8};
  cr_assert_eq(rdma_mr_cache_create(e.pd, &o, &c, NULL), HIPOBJ_OK);
  enum { T = 6 };
  pthread_t th[T];
  struct hammer h[T];
  for (int i = 0; i < T; i++) {
    h[i] = (struct hammer){c, buf, len, (unsigned)i * 7919u + 1, 0};
    cr_assert_eq(pthread_create(&th[i], NULL, hammer_main, &h[i]), 0);
  }
  for (int i = 0; i < T; i++) {
    pthread_join(th[i], NULL);
    cr_expect_eq(h[i].failures, 0, "thread %d", i);
  }
  struct rdma_mr_cache_stats st;
  rdma_mr_cache_get_stats(c, &st);
  cr_expect_eq(st.in_use, 0);
  cr_expect_leq(st.entries, 8);
  cr_log_info("cache after %d acquires: %llu hits, %llu misses, %llu merges, "
              "%llu evictions, %zu entries",
              T * 300, (unsigned long long)st.hits,
              (unsigned long long)st.misses, (unsigned long long)st.merges,
              (unsigned long long)st.evictions, st.entries);
  cr_expect_eq(rdma_mr_cache_destroy(c), 0);
  munmap(buf, len);
  env_close(&e);
}

/* ---- dma-buf hook -----------------------------------------------------------
 */

struct fake_dmabuf {
  int exports, releases, regs;
  int fd;
  uint64_t offset, iova;
  size_t len;
  int access;
  char *backing; /* host memory standing in for device memory */
};

static int fake_export(void *user, const void *ptr, size_t len, int *fd,
                       uint64_t *offset) {
  struct fake_dmabuf *f = user;
  (void)ptr, (void)len;
  f->exports++;
  *fd = f->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  *offset = 4096;
  return *fd >= 0 ? 0 : -1;
}

static void fake_release(void *user, int fd) {
  struct fake_dmabuf *f = user;
  f->releases++;
  close(fd);
}

static struct fake_dmabuf *fake_current;

static struct ibv_mr *fake_reg(struct ibv_pd *pd, uint64_t offset, size_t len,
                               uint64_t iova, int fd, int access) {
  struct fake_dmabuf *f = fake_current;
  f->regs++;
  f->offset = offset;
  f->iova = iova;
  f->len = len;
  f->access = access;
  cr_expect_eq(fd, f->fd);
  return ibv_reg_mr(pd, f->backing, len, access);
}

Test(dmabuf, hook_is_called_with_the_range) {
  struct env e;
  env_open(&e);
  struct fake_dmabuf f = {0};
  f.backing = page_buf(MiB);
  fake_current = &f;
  struct rdma_dmabuf_ops ops = {fake_export, fake_release, fake_reg, &f};
  const void *dev_ptr = (const void *)(uintptr_t)0x7f0000200000ULL;
  struct rdma_mr *m = NULL;
  struct hipobj_error err;
  cr_assert_eq(rdma_mr_reg_dmabuf(e.pd, &ops, dev_ptr, MiB,
                                  RDMA_MR_REMOTE_WRITE, 0, &m, &err),
               HIPOBJ_OK, "%s", err.message);
  cr_expect_eq(f.exports, 1);
  cr_expect_eq(f.releases, 1);
  cr_expect_eq(f.regs, 1);
  cr_expect_eq(f.offset, 4096);
  cr_expect_eq(f.iova, (uintptr_t)dev_ptr);
  cr_expect_eq(f.len, MiB);
  cr_expect_eq(f.access, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  cr_expect_eq(m->kind, RDMA_MEM_DMABUF);
  cr_expect_eq(m->pieces[0].addr, (uintptr_t)dev_ptr);
  cr_expect_eq(rdma_mr_dereg(m, &err), HIPOBJ_OK);

  /* Through the cache, split in two: offsets advance with the pieces. */
  struct rdma_mr_cache *c;
  struct rdma_mr_cache_opts o = {.max_mr_size = MiB / 2};
  cr_assert_eq(rdma_mr_cache_create(e.pd, &o, &c, NULL), HIPOBJ_OK);
  const struct rdma_mr *cm;
  cr_expect_eq(
      rdma_mr_cache_acquire(c, RDMA_MEM_DMABUF, dev_ptr, MiB, &cm, &err),
      HIPOBJ_E_UNSUPPORTED);
  cr_expect(strstr(err.message, "dma-buf exporter") != NULL, "%s", err.message);
  rdma_mr_cache_set_dmabuf(c, &ops);
  cr_assert_eq(
      rdma_mr_cache_acquire(c, RDMA_MEM_DMABUF, dev_ptr, MiB, &cm, &err),
      HIPOBJ_OK, "%s", err.message);
  cr_expect_eq(cm->npieces, 2);
  cr_expect_eq(f.offset, 4096 + MiB / 2);
  cr_expect_eq(f.iova, (uintptr_t)dev_ptr + MiB / 2);
  /* Host memory at the same numbers is another registration. */
  const struct rdma_mr *hm;
  cr_assert_eq(
      rdma_mr_cache_acquire(c, RDMA_MEM_HOST, f.backing, 100, &hm, &err),
      HIPOBJ_OK);
  cr_expect_neq(hm, cm);
  rdma_mr_cache_release(c, hm);
  rdma_mr_cache_release(c, cm);
  cr_expect_eq(rdma_mr_cache_destroy(c), 0);

  /* The real ibv_reg_dmabuf_mr() on an fd that is no dma-buf: a clean
   * error naming the call (or "no ibv_reg_dmabuf_mr" on old rdma-core). */
  ops.reg = NULL;
  memset(&err, 0, sizeof err);
  cr_expect_neq(rdma_mr_reg_dmabuf(e.pd, &ops, dev_ptr, MiB, 0, 0, &m, &err),
                HIPOBJ_OK);
  cr_expect(strstr(err.message, "ibv_reg_dmabuf_mr") != NULL, "%s",
            err.message);
  cr_expect_null(m);
  munmap(f.backing, MiB);
  env_close(&e);
}

/* ---- main: skip (77) without a usable device
 * --------------------------------- */

int main(int argc, char *argv[]) {
  struct rdma_devlist *l = NULL;
  struct rdma_choice c;
  struct hipobj_error err;
  memset(&err, 0, sizeof err);
  if (rdma_devlist_get(&l, &err) != HIPOBJ_OK ||
      rdma_choose(l, NULL, -1, NULL, &c, &err) != HIPOBJ_OK) {
    /* 77 is what meson (and tests/rxe/with-rdma.sh) read as "skipped". */
    printf("SKIP: %s (run through tests/rxe/with-rdma.sh)\n", err.message);
    rdma_devlist_free(l);
    return 77;
  }
  rdma_devlist_free(l);
  struct criterion_test_set *tests = criterion_initialize();
  int rc = 0;
  if (criterion_handle_args(argc, argv, true))
    rc = !criterion_run_all_tests(tests);
  criterion_finalize(tests);
  return rc;
}
