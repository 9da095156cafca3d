/* device.h - RDMA devices, ports and GIDs as plain data, and the choice of
 * the device/port/GID a transfer uses.
 *
 * Enumeration (device.c) talks to libibverbs and sysfs once and returns a
 * snapshot; everything else here (environment overrides, GID preference,
 * NUMA and PCIe placement, the text `hipobj info` prints) is a pure
 * function over that snapshot (select.c), so it is unit-tested with
 * synthetic device lists. This header includes no verbs header: src/ may use
 * it. Built without libibverbs, enumeration reports "no RDMA device"
 * and names the reason. */
#ifndef HIPOBJ_RDMA_DEVICE_H
#define HIPOBJ_RDMA_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "../src/base/buf.h"

struct hipobj_error;

enum rdma_gid_type {
  RDMA_GID_TYPE_UNKNOWN = 0,
  RDMA_GID_TYPE_IB = 1,      /* InfiniBand link layer */
  RDMA_GID_TYPE_ROCE_V1 = 2, /* "IB/RoCE v1" */
  RDMA_GID_TYPE_ROCE_V2 = 3, /* "RoCE v2": UDP/IP, routable */
};

enum rdma_link_layer {
  RDMA_LINK_UNKNOWN = 0,
  RDMA_LINK_IB = 1,
  RDMA_LINK_ETHERNET = 2,
};

struct rdma_gid_info {
  unsigned index;  /* sgid_index */
  uint8_t gid[16]; /* raw network order */
  enum rdma_gid_type type;
  char ndev[32]; /* netdev behind the GID ("" on IB or unknown) */
};

struct rdma_port_info {
  unsigned port_num; /* 1-based */
  int active;        /* state is ACTIVE */
  char state[16];    /* "ACTIVE", "DOWN", ... */
  enum rdma_link_layer link_layer;
  unsigned active_mtu; /* bytes: 256..4096 (use it for path_mtu) */
  int active_mtu_enum; /* the raw enum ibv_mtu value (1..5) */
  unsigned max_mtu;    /* bytes */
  uint16_t lid;
  uint32_t max_msg_sz; /* largest message: a PUT must fit in one */
  unsigned gid_tbl_len;
  size_t ngids;               /* valid (non-zero) GIDs only */
  struct rdma_gid_info *gids; /* by ascending index */
};

struct rdma_device_info {
  char name[64];          /* "mlx5_0", "rxe0" */
  char pci_path[256];     /* resolved sysfs path of the PCI function, "" for
                             virtual devices (rxe, siw) */
  char pci_busid[16];     /* "0000:03:00.0", "" when not PCI */
  char parent_netdev[32]; /* rxe/siw: the netdev it sits on, else "" */
  int numa_node;          /* -1 when unknown */
  uint64_t max_mr_size;
  uint64_t node_guid; /* host order */
  size_t nports;
  struct rdma_port_info *ports;
};

struct rdma_devlist {
  size_t n;
  struct rdma_device_info *devs; /* sorted by name */
  /* Why n is 0: "this build has no libibverbs", "the kernel has no RDMA
   * support (ibv_get_device_list: ...)", "no RDMA device". "" when n > 0. */
  char why_empty[160];
};

/* Enumerates every device, port and GID (opening each device briefly).
 * Finding no device is not an error: the list is empty and why_empty says
 * why. A device that cannot be opened or queried is skipped. Fails only on
 * allocation failure. */
int rdma_devlist_get(struct rdma_devlist **out, struct hipobj_error *err);
void rdma_devlist_free(struct rdma_devlist *l);

/* Internal (device.c and tests): sysfs readers. root is "/sys" or a fake
 * tree. rdma_sysfs_read_gids() lists the non-zero GIDs of a port with their
 * type (gid_attrs/types) and netdev (gid_attrs/ndevs); it is the fallback
 * when libibverbs lacks ibv_query_gid_table(). rdma_sysfs_placement() fills
 * pci_path, pci_busid, numa_node and parent_netdev of dev->name. */
int rdma_sysfs_read_gids(const char *root, const char *dev, unsigned port,
                         unsigned tbl_len, enum rdma_link_layer link_layer,
                         struct rdma_gid_info **gids, size_t *ngids);
void rdma_sysfs_placement(const char *root, struct rdma_device_info *dev);

/* The NUMA node of the CPU the caller runs on, -1 when unknown. */
int rdma_current_numa_node(void);

/* ---- overrides from the environment ----------------------------------- */

enum rdma_mode {
  RDMA_MODE_AUTO = 0,    /* use RDMA when a device and the server allow it */
  RDMA_MODE_OFF = 1,     /* never */
  RDMA_MODE_REQUIRE = 2, /* fail instead of falling back to HTTP */
};

struct rdma_env {
  enum rdma_mode mode; /* HIPOBJ_RDMA=auto|off|require */
  char device[64];     /* HIPOBJ_RDMA_DEVICE=name[:port], "" = choose */
  unsigned port;       /* the ":port" part, 0 = choose */
  int gid_index;       /* HIPOBJ_RDMA_GID_INDEX, -1 = choose */
};

/* Pure: parses the three values (NULL or "" = default). The error message
 * names the variable and the expected form. */
int rdma_env_parse(const char *mode, const char *device, const char *gid_index,
                   struct rdma_env *out, struct hipobj_error *err);
/* rdma_env_parse() over getenv(). */
int rdma_env_from_environ(struct rdma_env *out, struct hipobj_error *err);
const char *rdma_mode_name(enum rdma_mode mode);

/* ---- choice ----------------------------------------------------------------
 */

const char *rdma_gid_type_name(enum rdma_gid_type t);
const char *rdma_link_layer_name(enum rdma_link_layer l);

/* The GID a port should use (index into port->gids), or -1 when it has no
 * usable one: the IPv4-mapped RoCEv2 GID first, then a global RoCEv2 GID,
 * then a link-local RoCEv2 GID; on an InfiniBand port, the first IB GID.
 * RoCEv1 is never chosen (§8 item 16). gid_index >= 0 forces that index. */
int rdma_port_pick_gid(const struct rdma_port_info *port, int gid_index);

/* Pure: PCIe distance between two resolved sysfs device paths
 * ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"): the number of
 * bridge hops from each up to their deepest common ancestor, plus 1000 when
 * they sit under different PCI host bridges. -1 when a path is not under a
 * PCI root. */
int rdma_pci_distance(const char *a, const char *b);
/* Pure: normalises a PCI bus id as HIP ("0000:03:00.0") or CUDA
 * ("00000000:03:00.0") print it to "dddd:bb:dd.f", lowercase. */
int rdma_pci_busid_normalize(const char *busid, char out[16]);
/* The resolved sysfs path of a bus id (realpath of
 * /sys/bus/pci/devices/<id>). -1 when it does not exist. */
int rdma_pci_path_of_busid(const char *busid, char *out, size_t outsz);

struct rdma_choice {
  const struct rdma_device_info *dev; /* pointers into the devlist */
  const struct rdma_port_info *port;
  const struct rdma_gid_info *gid;
  char reason[320]; /* why this one, for logs and `hipobj info` */
};

/* Chooses a device, port and GID: the HIPOBJ_RDMA_DEVICE / _GID_INDEX
 * overrides when set; else, when gpu_pci_path is given, the usable port on
 * the device closest to the GPU over PCIe; else one on the caller's NUMA
 * node (numa_node >= 0), then one whose node is unknown; ties go to the
 * first by name. Fails with HIPOBJ_E_UNSUPPORTED and a message naming the
 * cause ("no RDMA device: ...", "mlx5_1 port 1 is DOWN", "no RoCEv2 GID",
 * "HIPOBJ_RDMA=off") when nothing usable exists. */
int rdma_choose(const struct rdma_devlist *l, const struct rdma_env *env,
                int numa_node, const char *gpu_pci_path,
                struct rdma_choice *out, struct hipobj_error *err);

/* The GPU hook: the choice for memory of the GPU at PCI bus id `busid`
 * (as HIP or CUDA print it). When the bus id cannot be found under
 * /sys/bus/pci/devices (containers often hide it), the host-memory choice
 * on numa_node is returned and the reason says so. */
int rdma_choose_for_gpu(const struct rdma_devlist *l,
                        const struct rdma_env *env, const char *busid,
                        int numa_node, struct rdma_choice *out,
                        struct hipobj_error *err);

/* Appends the text `hipobj info` shows: each device with its ports (state,
 * link layer, MTU) and GIDs (index, type, address, netdev), then the mode
 * and the choice the library would make, or why there is none. */
int rdma_info_format(struct hbuf *out, const struct rdma_devlist *l,
                     const struct rdma_env *env, int numa_node);
/* Enumerates, reads the environment and appends rdma_info_format()'s text
 * (an invalid environment value is reported in the text). */
int rdma_info(struct hbuf *out, struct hipobj_error *err);

#endif
