#!/bin/bash
# with-rdma.sh CMD [ARGS...] - runs CMD where real RDMA verbs work, picking
# the cheapest of:
#   1. native: this host already has an RDMA device with an ACTIVE port;
#   2. native Soft-RoCE: running as root with the rdma tool and a loadable
#      rdma_rxe module, an rxe device is created on a private dummy netdev for
#      the duration of CMD and removed afterwards;
#   3. the Soft-RoCE VM (run-in-rxe-vm.sh) on kernels without RDMA.
# Exits with CMD's status, or 77 (skip) with the reason when none works.
# RXE_DEV, RXE_IP and RXE_GID_INDEX are exported in cases 2 and 3.
# HIPOBJ_RXE_MODE=auto|native|vm forces a choice.
# CMD runs under with-deadline.sh: after HIPOBJ_TEST_DEADLINE seconds
# (default 600, below meson's 900 and the VM's own limit) it prints what
# each of CMD's processes is doing and ends them, so that a hang seen once
# on CI leaves its stacks in the log.
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${HIPOBJ_RXE_MODE:-auto}
set -- "$here/../with-deadline.sh" "${HIPOBJ_TEST_DEADLINE:-600}" "$@"

active_device() {
  local s
  for s in /sys/class/infiniband/*/ports/*/state; do
    [ -r "$s" ] && grep -q ACTIVE "$s" && return 0
  done
  return 1
}

if [ "$mode" != vm ] && active_device; then
  echo "with-rdma: using the host's RDMA device(s)" >&2
  exec "$@"
fi

# The IPv4-mapped RoCEv2 GID index of port 1 of device $1.
roce_v2_v4_index() {
  local g val type
  for g in /sys/class/infiniband/$1/ports/1/gids/*; do
    read -r val < "$g" || continue
    read -r type < "/sys/class/infiniband/$1/ports/1/gid_attrs/types/${g##*/}" 2>/dev/null || continue
    case "$val|$type" in 0000:0000:0000:0000:0000:ffff:*"|RoCE v2") echo "${g##*/}"; return 0 ;; esac
  done
  return 1
}

if [ "$mode" != vm ] && [ "$(id -u)" = 0 ] && command -v rdma >/dev/null &&
   command -v ip >/dev/null && modprobe -q rdma_rxe 2>/dev/null && modprobe -q dummy 2>/dev/null; then
  # Names and a /32 address unlikely to meet anything on the host.
  ndev=hobjrxe$$ dev=hobj_rxe$$ addr=${HIPOBJ_RXE_NATIVE_IP:-10.254.77.1}
  cleanup() { rdma link delete "$dev" 2>/dev/null; ip link delete "$ndev" 2>/dev/null; }
  trap cleanup EXIT
  if ip link add "$ndev" type dummy && ip addr add "$addr/32" dev "$ndev" &&
     ip link set "$ndev" up && rdma link add "$dev" type rxe netdev "$ndev"; then
    idx=
    for _ in 1 2 3 4 5 6 7 8 9 10; do     # GIDs appear asynchronously
      idx=$(roce_v2_v4_index "$dev") && break
      sleep 0.2
    done
    if [ -n "$idx" ]; then
      echo "with-rdma: using native Soft-RoCE $dev on $ndev ($addr)" >&2
      RXE_DEV=$dev RXE_IP=$addr RXE_GID_INDEX=$idx "$@"
      exit $?
    fi
    echo "with-rdma: $dev has no IPv4 RoCEv2 GID; trying the VM" >&2
  else
    echo "with-rdma: cannot create a native rxe device; trying the VM" >&2
  fi
  cleanup
  trap - EXIT
elif [ "$mode" = native ]; then
  echo "with-rdma: SKIP: no RDMA device and no native Soft-RoCE (need root, rdma(8), rdma_rxe)" >&2
  exit 77
fi

echo "with-rdma: no RDMA device here; running in the Soft-RoCE VM" >&2
"$here/run-in-rxe-vm.sh" "$@"
rc=$?
[ $rc -ne 77 ] || echo "with-rdma: skipped (exit 77; the reason is above)" >&2
exit $rc
