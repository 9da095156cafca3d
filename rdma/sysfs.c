/* sysfs.c - what the kernel tells about RDMA devices through sysfs and
 * libibverbs does not: the PCI function, NUMA node and parent netdev of a
 * device, and (for libibverbs older than ibv_query_gid_table) the type and
 * netdev of each GID.
 *
 * Layout read (root is normally "/sys"):
 *   class/infiniband/DEV/device          -> the PCI function (absent: rxe)
 *   class/infiniband/DEV/device/numa_node
 *   class/infiniband/DEV/parent           rxe/siw: the netdev underneath
 *   class/infiniband/DEV/ports/N/gids/IDX            "fe80:0000:...:6204"
 *   class/infiniband/DEV/ports/N/gid_attrs/types/IDX "RoCE v2", "IB/RoCE v1"
 *   class/infiniband/DEV/ports/N/gid_attrs/ndevs/IDX "eth0"
 * Reading an unused entry's type fails (EINVAL): such entries are skipped. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "token.h"

/* Reads a one-line sysfs attribute without its newline; -1 if unreadable. */
static int read_line(const char *path, char *out, size_t outsz) {
  FILE *f = fopen(path, "re");
  if (!f)
    return -1;
  errno = 0;
  int ok = fgets(out, (int)outsz, f) != NULL;
  int saved = errno; /* callers tell "no entry" (EINVAL) from "no file" */
  fclose(f);
  if (!ok) {
    errno = saved ? saved : EIO;
    return -1;
  }
  out[strcspn(out, "\n")] = '\0';
  return 0;
}

/* Bounded copy of a netdev name (names are < 16 bytes; longer junk is cut). */
static void copy_name(char *dst, size_t dstsz, const char *src) {
  size_t l = strnlen(src, dstsz - 1);
  memcpy(dst, src, l);
  dst[l] = '\0';
}

/* "fe80:0000:0000:0000:4ced:9fff:fe29:6204": 8 groups of 4 hex digits. */
static int parse_sysfs_gid(const char *s, uint8_t gid[16]) {
  unsigned w[8];
  char tail;
  if (sscanf(s, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x%c", &w[0], &w[1], &w[2], &w[3],
             &w[4], &w[5], &w[6], &w[7], &tail) != 8)
    return -1;
  for (int i = 0; i < 8; i++) {
    gid[2 * i] = (uint8_t)(w[i] >> 8);
    gid[2 * i + 1] = (uint8_t)w[i];
  }
  return 0;
}

int rdma_sysfs_read_gids(const char *root, const char *dev, unsigned port,
                         unsigned tbl_len, enum rdma_link_layer link_layer,
                         struct rdma_gid_info **gids, size_t *ngids) {
  char base[PATH_MAX], path[PATH_MAX + 64], line[128];
  *gids = NULL;
  *ngids = 0;
  if (!root || !dev)
    return -1;
  int bl = snprintf(base, sizeof base, "%s/class/infiniband/%s/ports/%u", root,
                    dev, port);
  if (bl < 0 || (size_t)bl >= sizeof base)
    return -1;
  struct rdma_gid_info *v = NULL;
  size_t n = 0, cap = 0;
  for (unsigned i = 0; i < tbl_len; i++) {
    uint8_t raw[16];
    snprintf(path, sizeof path, "%s/gids/%u", base, i);
    if (read_line(path, line, sizeof line) != 0) {
      /* A missing file: the table is shorter than announced and ends. */
      if (errno == ENOENT)
        break;
      continue;
    }
    if (parse_sysfs_gid(line, raw) != 0 || rdma_gid_is_zero(raw))
      continue;
    snprintf(path, sizeof path, "%s/gid_attrs/types/%u", base, i);
    enum rdma_gid_type type = RDMA_GID_TYPE_UNKNOWN;
    if (read_line(path, line, sizeof line) == 0) {
      if (!strcmp(line, "RoCE v2"))
        type = RDMA_GID_TYPE_ROCE_V2;
      else if (!strcmp(line, "IB/RoCE v1"))
        type = link_layer == RDMA_LINK_IB ? RDMA_GID_TYPE_IB
                                          : RDMA_GID_TYPE_ROCE_V1;
    } else if (errno == EINVAL) {
      continue; /* a stale entry the kernel no longer backs */
    } else if (link_layer == RDMA_LINK_IB) {
      type = RDMA_GID_TYPE_IB; /* old kernels: no gid_attrs on IB */
    }
    if (n == cap) {
      size_t nc = cap ? 2 * cap : 8;
      struct rdma_gid_info *nv = realloc(v, nc * sizeof *v);
      if (!nv) {
        free(v);
        return -1;
      }
      v = nv;
      cap = nc;
    }
    struct rdma_gid_info *g = &v[n++];
    memset(g, 0, sizeof *g);
    g->index = i;
    memcpy(g->gid, raw, 16);
    g->type = type;
    snprintf(path, sizeof path, "%s/gid_attrs/ndevs/%u", base, i);
    if (read_line(path, line, sizeof line) == 0)
      copy_name(g->ndev, sizeof g->ndev, line);
  }
  *gids = v;
  *ngids = n;
  return 0;
}

void rdma_sysfs_placement(const char *root, struct rdma_device_info *dev) {
  char path[PATH_MAX], resolved[PATH_MAX], line[64];
  dev->pci_path[0] = dev->pci_busid[0] = dev->parent_netdev[0] = '\0';
  dev->numa_node = -1;
  if (!root)
    return;
  snprintf(path, sizeof path, "%s/class/infiniband/%s/parent", root, dev->name);
  if (read_line(path, line, sizeof line) == 0)
    copy_name(dev->parent_netdev, sizeof dev->parent_netdev, line);
  snprintf(path, sizeof path, "%s/class/infiniband/%s/device", root, dev->name);
  if (!realpath(path, resolved))
    return; /* virtual device: no PCI function, no NUMA node */
  if (strlen(resolved) < sizeof dev->pci_path)
    memcpy(dev->pci_path, resolved, strlen(resolved) + 1);
  const char *slash = strrchr(resolved, '/');
  if (slash && rdma_pci_busid_normalize(slash + 1, dev->pci_busid) != 0)
    dev->pci_busid[0] = '\0';
  snprintf(path, sizeof path, "%s/class/infiniband/%s/device/numa_node", root,
           dev->name);
  if (read_line(path, line, sizeof line) == 0) {
    char *end;
    long v = strtol(line, &end, 10);
    if (end != line && *end == '\0' && v >= 0 && v < 4096)
      dev->numa_node = (int)v;
  }
}
