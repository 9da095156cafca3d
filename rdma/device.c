/* device.c - enumeration of RDMA devices, ports and GIDs through libibverbs
 * (the verbs half of device.h; the choice itself is in select.c).
 *
 * GID types matter because RoCEv1 and RoCEv2 entries of one port can hold
 * identical bytes (mlx5) and both peers must use the same RoCE version
 * (wire spec §2.3): ibv_query_gid_table() reports the type of every entry
 * in one call; without it (old rdma-core) the types come from sysfs.
 * Built without libibverbs (HIPOBJ_HAVE_VERBS unset) the list is always
 * empty and says why. */
#include "device.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/error.h"
#include "token.h"

#define OP "RDMA device list"

static int cmp_dev(const void *a, const void *b) {
  return strcmp(((const struct rdma_device_info *)a)->name,
                ((const struct rdma_device_info *)b)->name);
}

static void sort_devs(struct rdma_devlist *l) {
  if (l->n > 1)
    qsort(l->devs, l->n, sizeof l->devs[0], cmp_dev);
}

#ifdef HIPOBJ_HAVE_VERBS

#include <endian.h>
#include <infiniband/verbs.h>
#include <net/if.h>

static unsigned mtu_bytes(enum ibv_mtu m) {
  switch (m) {
  case IBV_MTU_256:
    return 256;
  case IBV_MTU_512:
    return 512;
  case IBV_MTU_1024:
    return 1024;
  case IBV_MTU_2048:
    return 2048;
  case IBV_MTU_4096:
    return 4096;
  }
  return 0;
}

static void port_state_name(enum ibv_port_state s, char out[16]) {
  /* The names ibv_devinfo prints ("PORT_ACTIVE") without the prefix;
   * ibv_port_state_str()'s spelling varies between rdma-core versions. */
  static const char *const names[] = {"NOP",   "DOWN",   "INIT",
                                      "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  if ((unsigned)s < sizeof names / sizeof names[0])
    snprintf(out, 16, "%s", names[s]);
  else
    snprintf(out, 16, "UNKNOWN");
}

#ifdef HIPOBJ_HAVE_IBV_QUERY_GID_TABLE
static enum rdma_gid_type gid_type_of(uint32_t t) {
  switch (t) {
  case IBV_GID_TYPE_IB:
    return RDMA_GID_TYPE_IB;
  case IBV_GID_TYPE_ROCE_V1:
    return RDMA_GID_TYPE_ROCE_V1;
  case IBV_GID_TYPE_ROCE_V2:
    return RDMA_GID_TYPE_ROCE_V2;
  }
  return RDMA_GID_TYPE_UNKNOWN;
}

/* All valid GIDs of the device in one call, sorted into their ports.
 * Returns -1 when the call is unsupported (old kernel): use sysfs then. */
static int gids_from_table(struct ibv_context *ctx,
                           struct rdma_device_info *dev, size_t total) {
  if (total == 0)
    return 0;
  struct ibv_gid_entry *e = calloc(total, sizeof *e);
  if (!e)
    return -1;
  ssize_t n = ibv_query_gid_table(ctx, e, total, 0);
  if (n < 0) {
    free(e);
    return -1;
  }
  for (size_t p = 0; p < dev->nports; p++) {
    struct rdma_port_info *port = &dev->ports[p];
    size_t cnt = 0;
    for (ssize_t i = 0; i < n; i++)
      cnt += e[i].port_num == port->port_num;
    if (!cnt)
      continue;
    port->gids = calloc(cnt, sizeof *port->gids);
    if (!port->gids) {
      free(e);
      return -1;
    }
    for (ssize_t i = 0; i < n; i++) {
      if (e[i].port_num != port->port_num || rdma_gid_is_zero(e[i].gid.raw))
        continue;
      struct rdma_gid_info *g = &port->gids[port->ngids++];
      g->index = e[i].gid_index;
      memcpy(g->gid, e[i].gid.raw, 16);
      g->type = gid_type_of(e[i].gid_type);
      if (e[i].ndev_ifindex && !if_indextoname(e[i].ndev_ifindex, g->ndev))
        g->ndev[0] = '\0';
    }
    /* The kernel lists entries by index already; keep that promise
     * explicit for callers (insertion sort: tables are small). */
    for (size_t a = 1; a < port->ngids; a++)
      for (size_t b = a; b > 0 && port->gids[b - 1].index > port->gids[b].index;
           b--) {
        struct rdma_gid_info t = port->gids[b];
        port->gids[b] = port->gids[b - 1];
        port->gids[b - 1] = t;
      }
  }
  free(e);
  return 0;
}
#endif

/* Fills one device; -1 (with *why) when it cannot be opened or queried. */
static int query_device(struct ibv_device *ibdev, struct rdma_device_info *dev,
                        char *why, size_t whysz) {
  memset(dev, 0, sizeof *dev);
  snprintf(dev->name, sizeof dev->name, "%s", ibv_get_device_name(ibdev));
  struct ibv_context *ctx = ibv_open_device(ibdev);
  if (!ctx) {
    snprintf(why, whysz, "%s: ibv_open_device: %s", dev->name, strerror(errno));
    return -1;
  }
  struct ibv_device_attr da;
  int rc = ibv_query_device(ctx, &da);
  if (rc) {
    snprintf(why, whysz, "%s: ibv_query_device: %s", dev->name, strerror(rc));
    ibv_close_device(ctx);
    return -1;
  }
  dev->max_mr_size = da.max_mr_size;
  dev->node_guid = be64toh(da.node_guid);
  dev->ports =
      calloc(da.phys_port_cnt ? da.phys_port_cnt : 1, sizeof *dev->ports);
  if (!dev->ports) {
    snprintf(why, whysz, "out of memory");
    ibv_close_device(ctx);
    return -1;
  }
  size_t total_gids = 0;
  for (unsigned p = 1; p <= da.phys_port_cnt; p++) {
    struct ibv_port_attr pa;
    if ((rc = ibv_query_port(ctx, (uint8_t)p, &pa)) != 0) {
      snprintf(why, whysz, "%s: ibv_query_port(%u): %s", dev->name, p,
               strerror(rc));
      continue;
    }
    struct rdma_port_info *port = &dev->ports[dev->nports++];
    port->port_num = p;
    port->active = pa.state == IBV_PORT_ACTIVE;
    port_state_name(pa.state, port->state);
    port->link_layer = pa.link_layer == IBV_LINK_LAYER_INFINIBAND ? RDMA_LINK_IB
                       : pa.link_layer == IBV_LINK_LAYER_ETHERNET
                           ? RDMA_LINK_ETHERNET
                           : RDMA_LINK_UNKNOWN;
    /* Unspecified link layer is InfiniBand in old providers. */
    if (pa.link_layer == IBV_LINK_LAYER_UNSPECIFIED)
      port->link_layer = RDMA_LINK_IB;
    port->active_mtu = mtu_bytes(pa.active_mtu);
    port->active_mtu_enum = (int)pa.active_mtu;
    port->max_mtu = mtu_bytes(pa.max_mtu);
    port->lid = pa.lid;
    port->max_msg_sz = pa.max_msg_sz;
    port->gid_tbl_len = (unsigned)(pa.gid_tbl_len > 0 ? pa.gid_tbl_len : 0);
    total_gids += port->gid_tbl_len;
  }
  int have_gids = -1;
#ifdef HIPOBJ_HAVE_IBV_QUERY_GID_TABLE
  have_gids = gids_from_table(ctx, dev, total_gids);
#else
  (void)total_gids;
#endif
  ibv_close_device(ctx);
  for (size_t p = 0; have_gids != 0 && p < dev->nports; p++) {
    struct rdma_port_info *port = &dev->ports[p];
    free(port->gids);
    port->gids = NULL;
    port->ngids = 0;
    if (rdma_sysfs_read_gids("/sys", dev->name, port->port_num,
                             port->gid_tbl_len, port->link_layer, &port->gids,
                             &port->ngids) != 0)
      snprintf(why, whysz, "%s: cannot read the GIDs of port %u from sysfs",
               dev->name, port->port_num);
  }
  rdma_sysfs_placement("/sys", dev);
  return 0;
}

int rdma_devlist_get(struct rdma_devlist **out, struct hipobj_error *err) {
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP, "no output given");
  *out = NULL;
  struct rdma_devlist *l = calloc(1, sizeof *l);
  if (!l)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  int num = 0;
  errno = 0;
  struct ibv_device **list = ibv_get_device_list(&num);
  if (!list) {
    /* ENOSYS: no RDMA support in the kernel (no uverbs); others: no
     * permission to /sys or /dev/infiniband. */
    snprintf(l->why_empty, sizeof l->why_empty, "ibv_get_device_list: %s%s",
             strerror(errno ? errno : ENODEV),
             errno == ENOSYS ? " (the kernel has no RDMA support)" : "");
    *out = l;
    return HIPOBJ_OK;
  }
  if (num > 0) {
    l->devs = calloc((size_t)num, sizeof *l->devs);
    if (!l->devs) {
      ibv_free_device_list(list);
      free(l);
      return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
    }
  }
  char why[sizeof l->why_empty] = "no RDMA device";
  for (int i = 0; i < num; i++) {
    struct rdma_device_info *dev = &l->devs[l->n];
    if (query_device(list[i], dev, why, sizeof why) == 0)
      l->n++;
    else
      free(dev->ports);
  }
  ibv_free_device_list(list);
  if (l->n == 0)
    snprintf(l->why_empty, sizeof l->why_empty, "%s", why);
  sort_devs(l);
  *out = l;
  return HIPOBJ_OK;
}

#else /* !HIPOBJ_HAVE_VERBS */

int rdma_devlist_get(struct rdma_devlist **out, struct hipobj_error *err) {
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP, "no output given");
  struct rdma_devlist *l = calloc(1, sizeof *l);
  if (!l)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  snprintf(l->why_empty, sizeof l->why_empty,
           "this build of hipObject has no libibverbs support");
  sort_devs(l);
  *out = l;
  return HIPOBJ_OK;
}

#endif
