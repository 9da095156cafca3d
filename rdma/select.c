/* select.c - the pure half of device.h: environment overrides, GID
 * preference, NUMA/PCIe placement, the choice of device/port/GID and the
 * `hipobj info` text. Everything works on the plain-data snapshot that
 * rdma_devlist_get() returns, so unit tests drive it with synthetic lists
 * (no device, several NICs, a GPU behind a switch, RoCEv1-only ports). */
#include "device.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../src/base/codec.h"
#include "../src/base/error.h"
#include "token.h"

#define OP "RDMA"

/* ---- devlist lifetime ------------------------------------------------------
 */

void rdma_devlist_free(struct rdma_devlist *l) {
  if (!l)
    return;
  for (size_t i = 0; i < l->n; i++) {
    for (size_t p = 0; p < l->devs[i].nports; p++)
      free(l->devs[i].ports[p].gids);
    free(l->devs[i].ports);
  }
  free(l->devs);
  free(l);
}

int rdma_current_numa_node(void) {
  unsigned cpu = 0, node = 0;
  /* getcpu() reports the node directly where the kernel knows it. */
  if (getcpu(&cpu, &node) == 0)
    return (int)node;
  return -1;
}

/* ---- environment ------------------------------------------------------------
 */

const char *rdma_mode_name(enum rdma_mode mode) {
  switch (mode) {
  case RDMA_MODE_AUTO:
    return "auto";
  case RDMA_MODE_OFF:
    return "off";
  case RDMA_MODE_REQUIRE:
    return "require";
  }
  return "?";
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out) {
  if (!*s)
    return -1;
  unsigned long v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    v = v * 10 + (unsigned long)(*p - '0');
    if (v > max)
      return -1;
  }
  *out = v;
  return 0;
}

int rdma_env_parse(const char *mode, const char *device, const char *gid_index,
                   struct rdma_env *out, struct hipobj_error *err) {
  struct rdma_env e = {RDMA_MODE_AUTO, "", 0, -1};
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP, "no output given");
  if (mode && *mode) {
    if (!strcasecmp(mode, "auto"))
      e.mode = RDMA_MODE_AUTO;
    else if (!strcasecmp(mode, "off"))
      e.mode = RDMA_MODE_OFF;
    else if (!strcasecmp(mode, "require"))
      e.mode = RDMA_MODE_REQUIRE;
    else
      return herr_set(err, HIPOBJ_E_CONFIG, OP,
                      "HIPOBJ_RDMA=\"%.32s\" is invalid (expected auto, off "
                      "or require)",
                      mode);
  }
  if (device && *device) {
    const char *colon = strchr(device, ':');
    size_t len = colon ? (size_t)(colon - device) : strlen(device);
    int bad = len == 0 || len >= sizeof e.device;
    for (size_t i = 0; !bad && i < len; i++)
      bad = device[i] == ' ' || device[i] == '\t' || device[i] == '/';
    unsigned long port = 0;
    if (!bad && colon && (parse_uint(colon + 1, 255, &port) != 0 || !port))
      bad = 1;
    if (bad)
      return herr_set(err, HIPOBJ_E_CONFIG, OP,
                      "HIPOBJ_RDMA_DEVICE=\"%.64s\" is invalid (expected a "
                      "device name such as mlx5_0, optionally :PORT)",
                      device);
    memcpy(e.device, device, len);
    e.device[len] = '\0';
    e.port = (unsigned)port;
  }
  if (gid_index && *gid_index) {
    unsigned long v;
    if (parse_uint(gid_index, 65535, &v) != 0)
      return herr_set(err, HIPOBJ_E_CONFIG, OP,
                      "HIPOBJ_RDMA_GID_INDEX=\"%.32s\" is invalid (expected "
                      "a decimal index 0..65535)",
                      gid_index);
    e.gid_index = (int)v;
  }
  *out = e;
  return HIPOBJ_OK;
}

int rdma_env_from_environ(struct rdma_env *out, struct hipobj_error *err) {
  return rdma_env_parse(getenv("HIPOBJ_RDMA"), getenv("HIPOBJ_RDMA_DEVICE"),
                        getenv("HIPOBJ_RDMA_GID_INDEX"), out, err);
}

/* ---- GIDs ------------------------------------------------------------------
 */

const char *rdma_gid_type_name(enum rdma_gid_type t) {
  switch (t) {
  case RDMA_GID_TYPE_IB:
    return "IB";
  case RDMA_GID_TYPE_ROCE_V1:
    return "RoCE v1";
  case RDMA_GID_TYPE_ROCE_V2:
    return "RoCE v2";
  case RDMA_GID_TYPE_UNKNOWN:
    break;
  }
  return "unknown";
}

const char *rdma_link_layer_name(enum rdma_link_layer l) {
  return l == RDMA_LINK_IB         ? "InfiniBand"
         : l == RDMA_LINK_ETHERNET ? "Ethernet"
                                   : "unknown";
}

static int gid_is_link_local(const uint8_t g[16]) {
  return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

int rdma_port_pick_gid(const struct rdma_port_info *port, int gid_index) {
  if (!port)
    return -1;
  if (gid_index >= 0) {
    for (size_t i = 0; i < port->ngids; i++)
      if (port->gids[i].index == (unsigned)gid_index)
        return (int)i;
    return -1;
  }
  /* Rank: 0 IPv4-mapped RoCEv2, 1 global RoCEv2, 2 link-local RoCEv2,
   * 3 IB (only on an IB port). Lowest rank, then lowest index, wins. */
  int best = -1, best_rank = 4;
  for (size_t i = 0; i < port->ngids; i++) {
    const struct rdma_gid_info *g = &port->gids[i];
    int rank;
    if (rdma_gid_is_zero(g->gid))
      continue;
    if (g->type == RDMA_GID_TYPE_ROCE_V2)
      rank = rdma_gid_is_ipv4_mapped(g->gid) ? 0
             : gid_is_link_local(g->gid)     ? 2
                                             : 1;
    else if (g->type == RDMA_GID_TYPE_IB && port->link_layer == RDMA_LINK_IB)
      rank = 3;
    else
      continue;
    if (rank < best_rank) {
      best_rank = rank;
      best = (int)i;
    }
  }
  return best;
}

/* ---- PCIe placement ---------------------------------------------------------
 */

/* Splits a path into components; returns how many (at most max). */
static size_t split_path(const char *p, const char **comp, size_t *len,
                         size_t max) {
  size_t n = 0;
  while (*p && n < max) {
    while (*p == '/')
      p++;
    if (!*p)
      break;
    const char *end = strchr(p, '/');
    size_t l = end ? (size_t)(end - p) : strlen(p);
    comp[n] = p;
    len[n++] = l;
    p += l;
  }
  return n;
}

/* Index of the "pciDDDD:BB" host-bridge component, -1 when there is none. */
static int pci_root_at(const char **comp, const size_t *len, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (len[i] > 3 && !strncmp(comp[i], "pci", 3))
      return (int)i;
  return -1;
}

int rdma_pci_distance(const char *a, const char *b) {
  enum { MAXC = 64 };
  const char *ca[MAXC], *cb[MAXC];
  size_t la[MAXC], lb[MAXC];
  if (!a || !b)
    return -1;
  size_t na = split_path(a, ca, la, MAXC), nb = split_path(b, cb, lb, MAXC);
  int ra = pci_root_at(ca, la, na), rb = pci_root_at(cb, lb, nb);
  if (ra < 0 || rb < 0 || (size_t)ra + 1 >= na || (size_t)rb + 1 >= nb)
    return -1;
  size_t common = 0;
  while (common < na && common < nb && la[common] == lb[common] &&
         !memcmp(ca[common], cb[common], la[common]))
    common++;
  int hops = (int)(na - common + nb - common);
  /* Sharing no host bridge means crossing the CPU interconnect (or at
   * least the root complex): always worse than any path under one bridge. */
  if (common <= (size_t)ra || common <= (size_t)rb)
    hops += 1000;
  return hops;
}

/* Reads 1..max hex digits up to `stop`; advances *p past the stop char. */
static int hex_field(const char **p, size_t max, char stop, unsigned *out) {
  unsigned v = 0;
  size_t n = 0;
  for (const char *s = *p;; s++, n++) {
    int d = hhex_value((unsigned char)*s);
    if (d < 0) {
      if (n == 0 || n > max || *s != stop)
        return -1;
      *p = stop ? s + 1 : s;
      *out = v;
      return 0;
    }
    v = v << 4 | (unsigned)d;
  }
}

int rdma_pci_busid_normalize(const char *busid, char out[16]) {
  unsigned dom, bus, dev, fn;
  const char *p = busid;
  if (!p || hex_field(&p, 8, ':', &dom) || hex_field(&p, 2, ':', &bus) ||
      hex_field(&p, 2, '.', &dev) || hex_field(&p, 1, '\0', &fn) ||
      dom > 0xffff || dev > 0x1f || fn > 7)
    return -1;
  snprintf(out, 16, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
  return 0;
}

int rdma_pci_path_of_busid(const char *busid, char *out, size_t outsz) {
  char id[16], link[64], resolved[PATH_MAX];
  if (rdma_pci_busid_normalize(busid, id) != 0)
    return -1;
  snprintf(link, sizeof link, "/sys/bus/pci/devices/%s", id);
  if (!realpath(link, resolved) || strlen(resolved) >= outsz)
    return -1;
  memcpy(out, resolved, strlen(resolved) + 1);
  return 0;
}

/* ---- choice -----------------------------------------------------------------
 */

/* Why a port cannot be used, or NULL when it can (gid set). */
static const char *port_unusable(const struct rdma_port_info *p, int gid_index,
                                 int *gid) {
  *gid = -1;
  if (!p->active)
    return "is not ACTIVE";
  *gid = rdma_port_pick_gid(p, gid_index);
  if (*gid >= 0)
    return NULL;
  if (gid_index >= 0)
    return "has no valid GID at HIPOBJ_RDMA_GID_INDEX";
  return p->link_layer == RDMA_LINK_IB ? "has no valid GID"
                                       : "has no RoCEv2 GID";
}

int rdma_choose(const struct rdma_devlist *l, const struct rdma_env *env,
                int numa_node, const char *gpu_pci_path,
                struct rdma_choice *out, struct hipobj_error *err) {
  static const struct rdma_env defaults = {RDMA_MODE_AUTO, "", 0, -1};
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP, "no output given");
  memset(out, 0, sizeof *out);
  if (!env)
    env = &defaults;
  if (env->mode == RDMA_MODE_OFF)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP,
                    "RDMA is disabled (HIPOBJ_RDMA=off)");
  if (!l || l->n == 0)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP, "no RDMA device: %s",
                    l && l->why_empty[0] ? l->why_empty : "none found");
  int found_dev = 0;
  long best_score = LONG_MAX;
  const char *last_why = NULL;
  const struct rdma_device_info *why_dev = NULL;
  unsigned why_port = 0;
  for (size_t d = 0; d < l->n; d++) {
    const struct rdma_device_info *dev = &l->devs[d];
    if (env->device[0] && strcmp(env->device, dev->name))
      continue;
    found_dev = 1;
    for (size_t p = 0; p < dev->nports; p++) {
      const struct rdma_port_info *port = &dev->ports[p];
      int gi;
      if (env->port && port->port_num != env->port)
        continue;
      const char *why = port_unusable(port, env->gid_index, &gi);
      if (why) {
        last_why = why;
        why_dev = dev;
        why_port = port->port_num;
        continue;
      }
      /* Lower is better: PCIe distance to the GPU (when asked), then NUMA
       * placement (same node 0, unknown 1, other 2), then list order. */
      long score = 0;
      if (env->device[0]) {
        score = 0;
      } else if (gpu_pci_path && *gpu_pci_path) {
        int dist = rdma_pci_distance(gpu_pci_path, dev->pci_path);
        score = dist < 0 ? 100000 : dist;
      }
      int numa_rank = numa_node < 0 || dev->numa_node < 0 ? 1
                      : dev->numa_node == numa_node       ? 0
                                                          : 2;
      score = score * 4 + numa_rank;
      if (score < best_score) {
        best_score = score;
        out->dev = dev;
        out->port = port;
        out->gid = &port->gids[gi];
        char gtext[64];
        rdma_gid_format(out->gid->gid, gtext, sizeof gtext);
        const char *rule = env->device[0] ? "HIPOBJ_RDMA_DEVICE"
                           : gpu_pci_path && *gpu_pci_path
                               ? "closest to the GPU over PCIe"
                           : numa_rank == 0 ? "on the caller's NUMA node"
                                            : "first usable device";
        snprintf(out->reason, sizeof out->reason,
                 "%s port %u GID %u (%s, %s): %s%s", dev->name, port->port_num,
                 out->gid->index, gtext, rdma_gid_type_name(out->gid->type),
                 rule, env->gid_index >= 0 ? ", HIPOBJ_RDMA_GID_INDEX" : "");
      }
    }
  }
  if (out->dev)
    return HIPOBJ_OK;
  if (env->device[0] && !found_dev)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP,
                    "HIPOBJ_RDMA_DEVICE=%s: no such RDMA device (%zu present)",
                    env->device, l->n);
  if (env->port && !why_dev)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP,
                    "HIPOBJ_RDMA_DEVICE: no port %u on %s", env->port,
                    env->device);
  if (why_dev)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP,
                    "no usable RDMA port: %s port %u %s", why_dev->name,
                    why_port, last_why);
  return herr_set(err, HIPOBJ_E_UNSUPPORTED, OP,
                  "no usable RDMA port: the devices have no ports");
}

int rdma_choose_for_gpu(const struct rdma_devlist *l,
                        const struct rdma_env *env, const char *busid,
                        int numa_node, struct rdma_choice *out,
                        struct hipobj_error *err) {
  char path[PATH_MAX];
  if (busid && rdma_pci_path_of_busid(busid, path, sizeof path) == 0)
    return rdma_choose(l, env, numa_node, path, out, err);
  int rc = rdma_choose(l, env, numa_node, NULL, out, err);
  if (rc == HIPOBJ_OK) {
    size_t at = strlen(out->reason);
    snprintf(out->reason + at, sizeof out->reason - at,
             " (GPU %.16s not found under /sys/bus/pci/devices)",
             busid ? busid : "(none)");
  }
  return rc;
}

/* ---- info -------------------------------------------------------------------
 */

int rdma_info_format(struct hbuf *out, const struct rdma_devlist *l,
                     const struct rdma_env *env, int numa_node) {
  static const struct rdma_env defaults = {RDMA_MODE_AUTO, "", 0, -1};
  if (!out)
    return -1;
  if (!env)
    env = &defaults;
  size_t n = l ? l->n : 0;
  if (n == 0)
    hbuf_printf(out, "RDMA devices: none (%s)\n",
                l && l->why_empty[0] ? l->why_empty : "no RDMA device");
  else
    hbuf_printf(out, "RDMA devices: %zu\n", n);
  for (size_t d = 0; d < n; d++) {
    const struct rdma_device_info *dev = &l->devs[d];
    hbuf_printf(out, "  %s: node_guid %016llx, max_mr_size 0x%llx, ", dev->name,
                (unsigned long long)dev->node_guid,
                (unsigned long long)dev->max_mr_size);
    if (dev->pci_busid[0])
      hbuf_printf(out, "PCI %s, ", dev->pci_busid);
    if (dev->parent_netdev[0])
      hbuf_printf(out, "on netdev %s, ", dev->parent_netdev);
    if (dev->numa_node >= 0)
      hbuf_printf(out, "NUMA node %d\n", dev->numa_node);
    else
      hbuf_puts(out, "NUMA node unknown\n");
    for (size_t p = 0; p < dev->nports; p++) {
      const struct rdma_port_info *port = &dev->ports[p];
      hbuf_printf(out,
                  "    port %u: %s, link %s, active_mtu %u (max %u), lid %u, "
                  "max_msg_sz 0x%x, %zu GIDs of %u\n",
                  port->port_num, port->state,
                  rdma_link_layer_name(port->link_layer), port->active_mtu,
                  port->max_mtu, (unsigned)port->lid,
                  (unsigned)port->max_msg_sz, port->ngids, port->gid_tbl_len);
      int pick = rdma_port_pick_gid(port, env->gid_index);
      for (size_t g = 0; g < port->ngids; g++) {
        const struct rdma_gid_info *gi = &port->gids[g];
        char text[64];
        rdma_gid_format(gi->gid, text, sizeof text);
        hbuf_printf(out, "      GID[%u] %-8s %s%s%s%s\n", gi->index,
                    rdma_gid_type_name(gi->type), text,
                    gi->ndev[0] ? " dev " : "", gi->ndev,
                    (int)g == pick ? "  <- preferred" : "");
      }
    }
  }
  hbuf_printf(out, "RDMA mode: %s", rdma_mode_name(env->mode));
  if (env->device[0])
    hbuf_printf(out, ", HIPOBJ_RDMA_DEVICE=%s", env->device);
  if (env->port)
    hbuf_printf(out, ":%u", env->port);
  if (env->gid_index >= 0)
    hbuf_printf(out, ", HIPOBJ_RDMA_GID_INDEX=%d", env->gid_index);
  hbuf_putc(out, '\n');
  struct rdma_choice c;
  struct hipobj_error e;
  memset(&e, 0, sizeof e);
  if (rdma_choose(l, env, numa_node, NULL, &c, &e) == HIPOBJ_OK)
    hbuf_printf(out, "RDMA choice (host memory%s): %s, path_mtu %u\n",
                numa_node >= 0 ? ", this NUMA node" : "", c.reason,
                c.port->active_mtu);
  else
    hbuf_printf(out, "RDMA choice: none (%s)\n", e.message);
  return out->oom ? -1 : 0;
}

int rdma_info(struct hbuf *out, struct hipobj_error *err) {
  struct rdma_env env;
  struct hipobj_error e;
  struct rdma_devlist *l = NULL;
  memset(&e, 0, sizeof e);
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP, "no output given");
  if (rdma_env_from_environ(&env, &e) != HIPOBJ_OK) {
    hbuf_printf(out, "RDMA environment: %s (using defaults)\n", e.message);
    rdma_env_parse(NULL, NULL, NULL, &env, NULL);
  }
  int rc = rdma_devlist_get(&l, err);
  if (rc != HIPOBJ_OK)
    return rc;
  rc = rdma_info_format(out, l, &env, rdma_current_numa_node());
  rdma_devlist_free(l);
  if (rc != 0)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, OP,
                    "out of memory formatting the device list");
  return HIPOBJ_OK;
}
