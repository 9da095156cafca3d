/* test_rdma_select.c - device, port and GID selection as pure functions over
 * synthetic device lists: the environment overrides, GID preference
 * (IPv4-mapped RoCEv2 first, never RoCEv1), NUMA and PCIe placement, the
 * `hipobj info` text, the sysfs readers over a fake sysfs tree, and the
 * "no RDMA device" answer of a host without RDMA (never a crash). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdma/device.h"
#include "src/base/error.h"

/* ---- synthetic lists
 * --------------------------------------------------------- */

static struct rdma_gid_info gid(unsigned idx, enum rdma_gid_type t,
                                const char *hex32) {
  struct rdma_gid_info g;
  memset(&g, 0, sizeof g);
  g.index = idx;
  g.type = t;
  for (int i = 0; i < 16; i++) {
    unsigned b;
    sscanf(hex32 + 2 * i, "%2x", &b);
    g.gid[i] = (uint8_t)b;
  }
  snprintf(g.ndev, sizeof g.ndev, "eth%u", idx);
  return g;
}

#define LL "fe800000000000004ced9ffffe296204"
#define V4 "00000000000000000000ffff0a630001"
#define V6 "20010db8000000000000000000000005"

static struct rdma_port_info port(unsigned num, int active,
                                  enum rdma_link_layer ll,
                                  struct rdma_gid_info *gids, size_t n) {
  struct rdma_port_info p;
  memset(&p, 0, sizeof p);
  p.port_num = num;
  p.active = active;
  snprintf(p.state, sizeof p.state, "%s", active ? "ACTIVE" : "DOWN");
  p.link_layer = ll;
  p.active_mtu = 1024;
  p.max_mtu = 4096;
  p.gid_tbl_len = 16;
  p.gids = gids;
  p.ngids = n;
  return p;
}

static struct rdma_device_info dev(const char *name, int numa, const char *pci,
                                   struct rdma_port_info *ports, size_t n) {
  struct rdma_device_info d;
  memset(&d, 0, sizeof d);
  snprintf(d.name, sizeof d.name, "%s", name);
  d.numa_node = numa;
  snprintf(d.pci_path, sizeof d.pci_path, "%s", pci ? pci : "");
  d.max_mr_size = UINT64_MAX;
  d.ports = ports;
  d.nports = n;
  return d;
}

/* ---- environment
 * -------------------------------------------------------------- */

Test(env, defaults_and_values) {
  struct rdma_env e;
  cr_assert_eq(rdma_env_parse(NULL, NULL, NULL, &e, NULL), HIPOBJ_OK);
  cr_expect_eq(e.mode, RDMA_MODE_AUTO);
  cr_expect_str_eq(e.device, "");
  cr_expect_eq(e.port, 0);
  cr_expect_eq(e.gid_index, -1);
  cr_assert_eq(rdma_env_parse("", "", "", &e, NULL), HIPOBJ_OK);
  cr_expect_eq(e.gid_index, -1);
  cr_assert_eq(rdma_env_parse("off", "mlx5_0", "3", &e, NULL), HIPOBJ_OK);
  cr_expect_eq(e.mode, RDMA_MODE_OFF);
  cr_expect_str_eq(e.device, "mlx5_0");
  cr_expect_eq(e.gid_index, 3);
  cr_assert_eq(rdma_env_parse("REQUIRE", "mlx5_1:2", "0", &e, NULL), HIPOBJ_OK);
  cr_expect_eq(e.mode, RDMA_MODE_REQUIRE);
  cr_expect_str_eq(e.device, "mlx5_1");
  cr_expect_eq(e.port, 2);
  cr_expect_eq(e.gid_index, 0);
  cr_expect_str_eq(rdma_mode_name(RDMA_MODE_REQUIRE), "require");
}

Test(env, invalid_values_name_the_variable) {
  struct hipobj_error err;
  struct rdma_env e = {RDMA_MODE_REQUIRE, "keep", 7, 7};
  const struct {
    const char *mode, *dev, *gid, *var;
  } bad[] = {{"on", NULL, NULL, "HIPOBJ_RDMA="},
             {"yes", NULL, NULL, "HIPOBJ_RDMA="},
             {NULL, "mlx5_0:", NULL, "HIPOBJ_RDMA_DEVICE"},
             {NULL, "mlx5_0:0", NULL, "HIPOBJ_RDMA_DEVICE"},
             {NULL, "mlx5_0:256", NULL, "HIPOBJ_RDMA_DEVICE"},
             {NULL, ":1", NULL, "HIPOBJ_RDMA_DEVICE"},
             {NULL, "a b", NULL, "HIPOBJ_RDMA_DEVICE"},
             {NULL, "../x", NULL, "HIPOBJ_RDMA_DEVICE"},
             {NULL,
              "a_very_long_device_name_that_does_not_fit_in_sixty_four_"
              "bytes_at_all",
              NULL, "HIPOBJ_RDMA_DEVICE"},
             {NULL, NULL, "-1", "HIPOBJ_RDMA_GID_INDEX"},
             {NULL, NULL, "x", "HIPOBJ_RDMA_GID_INDEX"},
             {NULL, NULL, "65536", "HIPOBJ_RDMA_GID_INDEX"},
             {NULL, NULL, "1 ", "HIPOBJ_RDMA_GID_INDEX"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&err, 0, sizeof err);
    cr_expect_eq(rdma_env_parse(bad[i].mode, bad[i].dev, bad[i].gid, &e, &err),
                 HIPOBJ_E_CONFIG, "case %zu", i);
    cr_expect(strstr(err.message, bad[i].var) != NULL, "case %zu: %s", i,
              err.message);
  }
  /* A failed parse leaves the output alone. */
  cr_expect_str_eq(e.device, "keep");
}

/* ---- GID preference
 * ------------------------------------------------------------ */

Test(gid_pick, prefers_ipv4_mapped_rocev2) {
  struct rdma_gid_info g[] = {
      gid(0, RDMA_GID_TYPE_ROCE_V1, LL), gid(1, RDMA_GID_TYPE_ROCE_V2, LL),
      gid(2, RDMA_GID_TYPE_ROCE_V1, V4), gid(3, RDMA_GID_TYPE_ROCE_V2, V4),
      gid(4, RDMA_GID_TYPE_ROCE_V2, V6)};
  struct rdma_port_info p = port(1, 1, RDMA_LINK_ETHERNET, g, 5);
  cr_expect_eq(rdma_port_pick_gid(&p, -1), 3);
  /* Without the IPv4 entry: global IPv6 v2, then link-local v2. */
  p.ngids = 3;
  cr_expect_eq(rdma_port_pick_gid(&p, -1), 1);
  struct rdma_gid_info g2[] = {gid(1, RDMA_GID_TYPE_ROCE_V2, LL),
                               gid(5, RDMA_GID_TYPE_ROCE_V2, V6)};
  p = port(1, 1, RDMA_LINK_ETHERNET, g2, 2);
  cr_expect_eq(rdma_port_pick_gid(&p, -1), 1);
  /* RoCEv1 only: nothing (§8 item 16); forced index: that entry. */
  struct rdma_gid_info g3[] = {gid(0, RDMA_GID_TYPE_ROCE_V1, LL),
                               gid(1, RDMA_GID_TYPE_ROCE_V1, V4)};
  p = port(1, 1, RDMA_LINK_ETHERNET, g3, 2);
  cr_expect_eq(rdma_port_pick_gid(&p, -1), -1);
  cr_expect_eq(rdma_port_pick_gid(&p, 1), 1);
  cr_expect_eq(rdma_port_pick_gid(&p, 9), -1);
  /* InfiniBand: the IB GID. */
  struct rdma_gid_info g4[] = {gid(0, RDMA_GID_TYPE_IB, LL)};
  p = port(1, 1, RDMA_LINK_IB, g4, 1);
  cr_expect_eq(rdma_port_pick_gid(&p, -1), 0);
  cr_expect_eq(rdma_port_pick_gid(NULL, -1), -1);
}

/* ---- PCIe
 * --------------------------------------------------------------------- */

Test(pci, distance_and_busid) {
  const char *gpu = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/"
                    "0000:02:08.0/0000:03:00.0";
  const char *nic_same_switch = "/sys/devices/pci0000:00/0000:00:01.0/"
                                "0000:01:00.0/0000:02:10.0/0000:04:00.0";
  const char *nic_same_root = "/sys/devices/pci0000:00/0000:00:02.0/"
                              "0000:05:00.0";
  const char *nic_other_root = "/sys/devices/pci0000:80/0000:80:01.0/"
                               "0000:81:00.0";
  int a = rdma_pci_distance(gpu, nic_same_switch);
  int b = rdma_pci_distance(gpu, nic_same_root);
  int c = rdma_pci_distance(gpu, nic_other_root);
  cr_expect_eq(a, 4);
  cr_expect_eq(b, 6);
  cr_expect_gt(c, 1000);
  cr_expect_eq(rdma_pci_distance(gpu, gpu), 0);
  cr_expect_eq(rdma_pci_distance(gpu, ""), -1);
  cr_expect_eq(rdma_pci_distance(gpu, "/sys/devices/virtual/net/lo"), -1);
  cr_expect_eq(rdma_pci_distance(NULL, gpu), -1);
  char id[16];
  cr_expect_eq(rdma_pci_busid_normalize("0000:03:00.0", id), 0);
  cr_expect_str_eq(id, "0000:03:00.0");
  cr_expect_eq(rdma_pci_busid_normalize("00000000:C3:1F.7", id), 0);
  cr_expect_str_eq(id, "0000:c3:1f.7");
  cr_expect_eq(rdma_pci_busid_normalize("0000:03:00", id), -1);
  cr_expect_eq(rdma_pci_busid_normalize("0000:03:00.8", id), -1);
  cr_expect_eq(rdma_pci_busid_normalize("0000:03:00.0x", id), -1);
  cr_expect_eq(rdma_pci_busid_normalize("10000:03:00.0", id), -1);
  cr_expect_eq(rdma_pci_path_of_busid("0000:ff:1f.7", id, sizeof id), -1);
}

/* ---- choice
 * ------------------------------------------------------------------- */

struct fixture {
  struct rdma_gid_info g_v4[2], g_v1[1], g_ib[1];
  struct rdma_port_info p_a[1], p_b[2], p_c[1];
  struct rdma_device_info d[3];
  struct rdma_devlist l;
};

/* mlx5_0: NUMA 0, host bridge pci0000:00, one usable port.
 * mlx5_1: NUMA 1, host bridge pci0000:80, port 1 DOWN, port 2 usable.
 * mlx5_2: virtual (no PCI, node unknown), RoCEv1 GID only: never usable. */
static void make_fixture(struct fixture *f) {
  memset(f, 0, sizeof *f);
  f->g_v4[0] = gid(0, RDMA_GID_TYPE_ROCE_V2, LL);
  f->g_v4[1] = gid(1, RDMA_GID_TYPE_ROCE_V2, V4);
  f->g_v1[0] = gid(0, RDMA_GID_TYPE_ROCE_V1, V4);
  f->g_ib[0] = gid(0, RDMA_GID_TYPE_IB, LL);
  f->p_a[0] = port(1, 1, RDMA_LINK_ETHERNET, f->g_v4, 2);
  f->p_b[0] = port(1, 0, RDMA_LINK_ETHERNET, f->g_v4, 2);
  f->p_b[1] = port(2, 1, RDMA_LINK_ETHERNET, f->g_v4, 2);
  f->p_c[0] = port(1, 1, RDMA_LINK_ETHERNET, f->g_v1, 1);
  f->d[0] = dev("mlx5_0", 0,
                "/sys/devices/pci0000:00/0000:00:02.0/0000:05:00.0", f->p_a, 1);
  f->d[1] = dev("mlx5_1", 1,
                "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", f->p_b, 2);
  f->d[2] = dev("mlx5_2", -1, NULL, f->p_c, 1);
  f->l.n = 3;
  f->l.devs = f->d;
}

Test(choose, numa_and_default) {
  struct fixture f;
  make_fixture(&f);
  struct rdma_choice c;
  struct hipobj_error err;
  cr_assert_eq(rdma_choose(&f.l, NULL, 1, NULL, &c, &err), HIPOBJ_OK);
  cr_expect_str_eq(c.dev->name, "mlx5_1");
  cr_expect_eq(c.port->port_num, 2); /* port 1 is DOWN */
  cr_expect_eq(c.gid->index, 1);     /* the IPv4-mapped RoCEv2 GID */
  cr_expect(strstr(c.reason, "NUMA") != NULL, "%s", c.reason);
  cr_assert_eq(rdma_choose(&f.l, NULL, 0, NULL, &c, &err), HIPOBJ_OK);
  cr_expect_str_eq(c.dev->name, "mlx5_0");
  /* Unknown caller node: the first usable by name. */
  cr_assert_eq(rdma_choose(&f.l, NULL, -1, NULL, &c, &err), HIPOBJ_OK);
  cr_expect_str_eq(c.dev->name, "mlx5_0");
  /* A node no device is on: mlx5_0 and mlx5_1 are both remote and tie;
   * the first by name wins. */
  cr_assert_eq(rdma_choose(&f.l, NULL, 3, NULL, &c, &err), HIPOBJ_OK);
  cr_expect_str_eq(c.dev->name, "mlx5_0");
}

Test(choose, gpu_placement) {
  struct fixture f;
  make_fixture(&f);
  struct rdma_choice c;
  const char *gpu_far = "/sys/devices/pci0000:80/0000:80:03.0/0000:83:00.0";
  cr_assert_eq(rdma_choose(&f.l, NULL, 0, gpu_far, &c, NULL), HIPOBJ_OK);
  cr_expect_str_eq(c.dev->name, "mlx5_1");
  cr_expect(strstr(c.reason, "GPU") != NULL, "%s", c.reason);
  const char *gpu_near = "/sys/devices/pci0000:00/0000:00:02.0/0000:05:00.0/x";
  cr_assert_eq(rdma_choose(&f.l, NULL, 1, gpu_near, &c, NULL), HIPOBJ_OK);
  cr_expect_str_eq(c.dev->name, "mlx5_0");
}

Test(choose, gpu_busid_not_found_falls_back_to_host_choice) {
  struct fixture f;
  make_fixture(&f);
  struct rdma_choice c;
  cr_assert_eq(rdma_choose_for_gpu(&f.l, NULL, "0000:ff:1f.7", 1, &c, NULL),
               HIPOBJ_OK);
  cr_expect_str_eq(c.dev->name, "mlx5_1");
  cr_expect(strstr(c.reason, "GPU 0000:ff:1f.7 not found") != NULL, "%s",
            c.reason);
  cr_assert_eq(rdma_choose_for_gpu(&f.l, NULL, "junk", 0, &c, NULL), HIPOBJ_OK);
  cr_expect_str_eq(c.dev->name, "mlx5_0");
}

Test(choose, overrides_and_failures) {
  struct fixture f;
  make_fixture(&f);
  struct rdma_choice c;
  struct hipobj_error err;
  struct rdma_env e;
  cr_assert_eq(rdma_env_parse(NULL, "mlx5_1", NULL, &e, NULL), HIPOBJ_OK);
  cr_assert_eq(rdma_choose(&f.l, &e, 0, NULL, &c, &err), HIPOBJ_OK);
  cr_expect_str_eq(c.dev->name, "mlx5_1");
  cr_expect(strstr(c.reason, "HIPOBJ_RDMA_DEVICE") != NULL);
  cr_assert_eq(rdma_env_parse(NULL, NULL, "0", &e, NULL), HIPOBJ_OK);
  cr_assert_eq(rdma_choose(&f.l, &e, 0, NULL, &c, &err), HIPOBJ_OK);
  cr_expect_eq(c.gid->index, 0);
  const struct {
    const char *mode, *dev, *gid, *msg;
  } fail[] = {{"off", NULL, NULL, "HIPOBJ_RDMA=off"},
              {NULL, "mlx5_9", NULL, "no such RDMA device"},
              {NULL, "mlx5_1:1", NULL, "mlx5_1 port 1 is not ACTIVE"},
              {NULL, "mlx5_1:3", NULL, "no port 3"},
              {NULL, "mlx5_2", NULL, "no RoCEv2 GID"},
              {NULL, "mlx5_0", "7", "HIPOBJ_RDMA_GID_INDEX"}};
  for (size_t i = 0; i < sizeof fail / sizeof fail[0]; i++) {
    cr_assert_eq(
        rdma_env_parse(fail[i].mode, fail[i].dev, fail[i].gid, &e, NULL),
        HIPOBJ_OK);
    memset(&err, 0, sizeof err);
    cr_expect_eq(rdma_choose(&f.l, &e, 0, NULL, &c, &err), HIPOBJ_E_UNSUPPORTED,
                 "case %zu", i);
    cr_expect(strstr(err.message, fail[i].msg) != NULL, "case %zu: %s", i,
              err.message);
    cr_expect_null(c.dev);
  }
  /* No device at all, with and without a reason. */
  struct rdma_devlist empty = {0, NULL, "the kernel has no RDMA support"};
  cr_expect_eq(rdma_choose(&empty, NULL, 0, NULL, &c, &err),
               HIPOBJ_E_UNSUPPORTED);
  cr_expect(strstr(err.message, "no RDMA device: the kernel") != NULL, "%s",
            err.message);
  cr_expect_eq(rdma_choose(NULL, NULL, 0, NULL, &c, &err),
               HIPOBJ_E_UNSUPPORTED);
  cr_expect(strstr(err.message, "no RDMA device") != NULL);
}

Test(info, text_lists_everything_and_the_choice) {
  struct fixture f;
  make_fixture(&f);
  struct hbuf out = HBUF_INIT;
  cr_assert_eq(rdma_info_format(&out, &f.l, NULL, 1), 0);
  const char *t = hbuf_str(&out);
  const char *want[] = {"RDMA devices: 3",
                        "mlx5_0",
                        "NUMA node 0",
                        "port 1: DOWN",
                        "port 2: ACTIVE, link Ethernet",
                        "active_mtu 1024",
                        "GID[1] RoCE v2  ::ffff:10.99.0.1",
                        "dev eth1",
                        "<- preferred",
                        "GID[0] RoCE v1",
                        "RDMA mode: auto",
                        "RDMA choice (host memory, this NUMA node): mlx5_1 "
                        "port 2 GID 1"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    cr_expect(strstr(t, want[i]) != NULL, "missing \"%s\" in:\n%s", want[i], t);
  hbuf_free(&out);
  struct rdma_devlist empty = {0, NULL, "this build has no libibverbs"};
  cr_assert_eq(rdma_info_format(&out, &empty, NULL, -1), 0);
  cr_expect(strstr(hbuf_str(&out), "RDMA devices: none (this build") != NULL);
  cr_expect(strstr(hbuf_str(&out), "RDMA choice: none") != NULL);
  hbuf_free(&out);
}

/* ---- sysfs readers over a fake tree ----------------------------------------
 */

static void put(const char *root, const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  /* mkdir -p of every parent below root. */
  for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
    *s = '\0';
    cr_assert(mkdir(path, 0755) == 0 || errno == EEXIST, "%s", path);
    *s = '/';
  }
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  fputs(text, f);
  fclose(f);
}

Test(sysfs, gids_types_ndevs_and_placement) {
  char root[] = "/tmp/hipobj-fake-sysfs.XXXXXX";
  cr_assert_not_null(mkdtemp(root));
  const char *p = "class/infiniband/mlx5_0/ports/1";
  char rel[256];
  const char *gids[] = {"fe80:0000:0000:0000:4ced:9fff:fe29:6204\n",
                        "0000:0000:0000:0000:0000:ffff:0a63:0001\n",
                        "0000:0000:0000:0000:0000:0000:0000:0000\n",
                        "0000:0000:0000:0000:0000:ffff:0a63:0001\n"};
  const char *types[] = {"IB/RoCE v1\n", "IB/RoCE v1\n", NULL, "RoCE v2\n"};
  for (int i = 0; i < 4; i++) {
    snprintf(rel, sizeof rel, "%s/gids/%d", p, i);
    put(root, rel, gids[i]);
    if (types[i]) {
      snprintf(rel, sizeof rel, "%s/gid_attrs/types/%d", p, i);
      put(root, rel, types[i]);
      snprintf(rel, sizeof rel, "%s/gid_attrs/ndevs/%d", p, i);
      put(root, rel, "enp65s0f0np0\n");
    }
  }
  struct rdma_gid_info *g = NULL;
  size_t n = 0;
  /* The announced table is longer than the files: reading stops there. */
  cr_assert_eq(
      rdma_sysfs_read_gids(root, "mlx5_0", 1, 128, RDMA_LINK_ETHERNET, &g, &n),
      0);
  cr_assert_eq(n, 3);
  cr_expect_eq(g[0].index, 0);
  cr_expect_eq(g[0].type, RDMA_GID_TYPE_ROCE_V1);
  cr_expect_eq(g[2].index, 3);
  cr_expect_eq(g[2].type, RDMA_GID_TYPE_ROCE_V2);
  cr_expect_eq(g[2].gid[15], 1);
  cr_expect_str_eq(g[2].ndev, "enp65s0f0np0");
  struct rdma_port_info pi = port(1, 1, RDMA_LINK_ETHERNET, g, n);
  cr_expect_eq(rdma_port_pick_gid(&pi, -1), 2);
  free(g);
  cr_assert_eq(rdma_sysfs_read_gids(root, "mlx5_0", 1, 4, RDMA_LINK_IB, &g, &n),
               0);
  cr_expect_eq(g[0].type, RDMA_GID_TYPE_IB);
  free(g);
  cr_expect_eq(rdma_sysfs_read_gids(root, "nodev", 1, 4, RDMA_LINK_IB, &g, &n),
               0);
  cr_expect_eq(n, 0);

  /* Placement: a PCI device with a NUMA node, and an rxe-like one. */
  put(root, "devices/pci0000:00/0000:00:02.0/0000:41:00.0/numa_node", "1\n");
  char link[512], target[512];
  snprintf(link, sizeof link, "%s/class/infiniband/mlx5_0/device", root);
  snprintf(target, sizeof target,
           "%s/devices/pci0000:00/0000:00:02.0/0000:41:00.0", root);
  cr_assert_eq(symlink(target, link), 0);
  put(root, "class/infiniband/rxe0/parent", "rxed0\n");
  struct rdma_device_info d;
  memset(&d, 0, sizeof d);
  snprintf(d.name, sizeof d.name, "mlx5_0");
  rdma_sysfs_placement(root, &d);
  cr_expect_eq(d.numa_node, 1);
  cr_expect_str_eq(d.pci_busid, "0000:41:00.0");
  cr_expect(strstr(d.pci_path, "/0000:00:02.0/0000:41:00.0") != NULL);
  snprintf(d.name, sizeof d.name, "rxe0");
  rdma_sysfs_placement(root, &d);
  cr_expect_eq(d.numa_node, -1);
  cr_expect_str_eq(d.pci_path, "");
  cr_expect_str_eq(d.parent_netdev, "rxed0");
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  cr_expect_eq(system(cmd), 0);
}

/* ---- a host without RDMA
 * ----------------------------------------------------- */

Test(no_device, enumeration_and_info_explain_why) {
  struct rdma_devlist *l = NULL;
  struct hipobj_error err;
  memset(&err, 0, sizeof err);
  cr_assert_eq(rdma_devlist_get(&l, &err), HIPOBJ_OK, "%s", err.message);
  cr_assert_not_null(l);
  if (l->n > 0) {
    rdma_devlist_free(l);
    cr_skip_test("this host has %s RDMA devices", "real");
  }
  cr_expect_neq(l->why_empty[0], '\0');
  struct rdma_choice c;
  cr_expect_eq(rdma_choose(l, NULL, 0, NULL, &c, &err), HIPOBJ_E_UNSUPPORTED);
  cr_expect(strstr(err.message, "no RDMA device") != NULL, "%s", err.message);
  rdma_devlist_free(l);
  struct hbuf out = HBUF_INIT;
  cr_assert_eq(rdma_info(&out, &err), HIPOBJ_OK);
  cr_expect(strstr(hbuf_str(&out), "RDMA devices: none") != NULL, "%s",
            hbuf_str(&out));
  cr_log_info("%s", hbuf_str(&out));
  hbuf_free(&out);
}
