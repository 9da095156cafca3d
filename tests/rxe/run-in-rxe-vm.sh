#!/bin/bash
# run-in-rxe-vm.sh CMD [ARGS...] - runs CMD in a throw-away qemu guest that
# has a Soft-RoCE (rdma_rxe) device, for hosts whose kernel has no RDMA.
#
# The guest boots the host's Debian kernel (/boot/vmlinuz-*, modules from
# /lib/modules) under qemu, with KVM when the kernel boots under it, else TCG
# software emulation. Its root file system is the host's / shared read-only
# over 9p under a tmpfs overlay (writes outside the working directory are
# discarded); the working directory is shared read-write at the same path.
# The guest has no network card, so nothing it sends leaves it. Inside, one
# rxe device sits on a dummy netdev (RXE_VM_NET=veth: two, on the ends of a
# veth pair, for "two hosts"), and CMD runs as root in the working directory
# with the caller's environment plus:
#   RXE_DEV RXE_IP RXE_GID_INDEX       (veth: also RXE_DEV2 RXE_IP2 RXE_GID_INDEX2)
# RXE_GID_INDEX is the IPv4-mapped RoCEv2 GID; use the port's active_mtu
# (1024 here) for path_mtu.
#
# Exit status: CMD's; 77 when qemu, a kernel image or the rxe module is
# missing (skip); 124 on timeout; 125 when the guest could not be set up.
# CMD's stdout and stderr arrive merged on our stdout; its stdin is empty.
# Build on the host: compiling in an emulated guest is 20-45x slower.
#
# Knobs: RXE_VM_NET=dummy|veth  RXE_VM_MEM=2G  RXE_VM_SMP=<host CPUs>
#        RXE_VM_TIMEOUT=900 (s)  RXE_VM_KLOG=FILE (keep the guest kernel log)
#        RXE_VM_ACCEL=auto|tcg  RXE_VM_BOOT_TIMEOUT=180 (s: a guest that
#        has not reached CMD by then is stopped, and tried once more under
#        TCG if it ran under KVM)
# Packages (Debian 12): qemu-system-x86 linux-image-amd64 busybox-static cpio
#   kmod iproute2 libibverbs1 ibverbs-providers (INITRD=No saves a useless
#   initramfs build when installing the kernel).
set -euo pipefail

skip() { echo "run-in-rxe-vm: SKIP: $*" >&2; exit 77; }
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }

qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || skip "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
# The initramfs has no libraries: busybox must be the static build.
busybox=/bin/busybox
[ -x "$busybox" ] && ! ldd "$busybox" >/dev/null 2>&1 ||
  skip "no static /bin/busybox (apt-get install busybox-static)"
command -v cpio >/dev/null || skip "cpio not installed"
command -v modprobe >/dev/null || skip "modprobe not installed (apt-get install kmod)"

# The newest kernel image whose modules are installed and include rdma_rxe.
kver=
for img in $(ls /boot/vmlinuz-* 2>/dev/null | sort -V); do
  v=${img#/boot/vmlinuz-}
  [ -r "$img" ] && modprobe -S "$v" --show-depends rdma_rxe >/dev/null 2>&1 && kver=$v
done
[ -n "$kver" ] || skip "no readable /boot/vmlinuz-* with the rdma_rxe module (apt-get install linux-image-amd64)"

net=${RXE_VM_NET:-dummy}
case $net in dummy|veth) ;; *) echo "run-in-rxe-vm: RXE_VM_NET=$net: use dummy or veth" >&2; exit 125;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/rxe-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/share" "$work/initrd"/{bin,mods,proc,sys,dev,ro,rw,root,share}

# --- initramfs: static busybox and the modules needed to reach the 9p root.
cp "$busybox" "$work/initrd/bin/busybox"
i=0
for ko in $(modprobe -a -S "$kver" --show-depends 9p 9pnet_virtio virtio_pci overlay |
            awk '$1 == "insmod" && !seen[$2]++ { print $2 }'); do
  i=$((i + 1)); name=$(printf '%02d-%s' "$i" "$(basename "${ko%%.ko*}")")
  case $ko in
    *.xz) xz -dc "$ko" ;; *.zst) zstd -qdc "$ko" ;; *.gz) gzip -dc "$ko" ;; *) cat "$ko" ;;
  esac > "$work/initrd/mods/$name.ko" || { echo "run-in-rxe-vm: cannot read $ko" >&2; exit 125; }
done
cat > "$work/initrd/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc && mount -t sysfs sys /sys && mount -t devtmpfs dev /dev
for m in /mods/*.ko; do insmod "$m" || echo "insmod $m failed"; done
o=trans=virtio,version=9p2000.L,msize=512000
if mount -t 9p -o $o,ro,cache=loose hostroot /ro && mount -t 9p -o $o share /share &&
   mount -t tmpfs -o size=50% rw /rw && mkdir /rw/upper /rw/work &&
   mount -t overlay -o lowerdir=/ro,upperdir=/rw/upper,workdir=/rw/work root /root; then
  mkdir -p /root/.rxe-share && mount --move /share /root/.rxe-share
  umount /proc /sys /dev
  exec switch_root /root /bin/bash /.rxe-share/guest.sh
fi
echo "run-in-rxe-vm: the guest cannot mount its root"; poweroff -f
EOF
chmod +x "$work/initrd/init"
(cd "$work/initrd" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.gz"

# --- what the guest runs as PID 1 once on the overlay root.
export -p | grep -vE '^declare -x (PWD|OLDPWD|SHLVL|_|SHELLOPTS|BASHOPTS)=' > "$work/share/env.sh"
printf '%q ' "$@" > "$work/share/cmd.sh"
{
  printf 'cwd=%q net=%q\n' "$PWD" "$net"
  cat <<'EOF'
bb() { busybox "$@"; }   # static busybox: far cheaper to start than util-linux when emulated
bb mount -t proc proc /proc; bb mount -t sysfs sys /sys; bb mount -t devtmpfs dev /dev
stty -F /dev/ttyS1 raw -echo 2>/dev/null; exec > /dev/ttyS1 2>&1  # ttyS1 is the host's stdout
fail() { echo "run-in-rxe-vm: $*"; echo 125 > /.rxe-share/status; sync; bb poweroff -f; }
bb mkdir -p /dev/pts /dev/shm
bb mount -t devpts pts /dev/pts; bb mount -t tmpfs shm /dev/shm; bb mount -t tmpfs run /run
bb mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap cwd "$cwd" ||
  fail "cannot mount the working directory $cwd"
# The IPv4-mapped RoCEv2 entry of port 1 of device $1.
roce_v2_v4_index() {
  local g val type
  for g in /sys/class/infiniband/$1/ports/1/gids/*; do
    read -r val < "$g" || continue
    read -r type < "/sys/class/infiniband/$1/ports/1/gid_attrs/types/${g##*/}" 2>/dev/null || continue
    case "$val|$type" in 0000:0000:0000:0000:0000:ffff:*"|RoCE v2") echo "${g##*/}"; return 0 ;; esac
  done
  return 1
}
modprobe -a rdma_rxe dummy veth || fail "modprobe rdma_rxe failed"
# One ip(8) batch: every program start costs a lot under emulation.
if [ "$net" = veth ]; then
  RXE_IP=10.99.0.1 RXE_IP2=10.99.0.2
  # Two local addresses talk through lo unless policy routing sends each
  # peer address out of the other veth end, through the second rxe device.
  printf '%s\n' "link set lo up" "link add rxev0 type veth peer name rxev1" \
    "addr add $RXE_IP/24 dev rxev0" "addr add $RXE_IP2/24 dev rxev1" \
    "link set rxev0 up" "link set rxev1 up" \
    "rule add pref 10 iif lo to $RXE_IP2 lookup 102" \
    "route add $RXE_IP2 dev rxev0 src $RXE_IP table 102" \
    "rule add pref 10 iif lo to $RXE_IP lookup 101" \
    "route add $RXE_IP dev rxev1 src $RXE_IP2 table 101" \
    "rule add pref 100 lookup local" "rule del pref 0" | ip -b - &&
    rdma link add rxe0 type rxe netdev rxev0 && rdma link add rxe1 type rxe netdev rxev1 ||
    fail "cannot create the rxe devices on the veth pair"
  export RXE_DEV2=rxe1 RXE_IP2
  RXE_GID_INDEX2=$(roce_v2_v4_index rxe1) || fail "rxe1 has no IPv4 RoCEv2 GID"
  export RXE_GID_INDEX2
else
  RXE_IP=10.99.0.1
  printf '%s\n' "link set lo up" "link add rxed0 type dummy" "addr add $RXE_IP/24 dev rxed0" \
    "link set rxed0 up" | ip -b - && rdma link add rxe0 type rxe netdev rxed0 ||
    fail "cannot create rxe0 on a dummy netdev"
fi
RXE_GID_INDEX=$(roce_v2_v4_index rxe0) || fail "rxe0 has no IPv4 RoCEv2 GID"
export RXE_DEV=rxe0 RXE_IP RXE_GID_INDEX
ulimit -l unlimited
. /.rxe-share/env.sh
cd "$cwd" || fail "cannot enter $cwd"
: > /.rxe-share/started   # the host's boot watchdog waits for this
bash /.rxe-share/cmd.sh < /dev/null
echo $? > /.rxe-share/status
sync; bb poweroff -f
EOF
} > "$work/share/guest.sh"

# Whether this kernel boots under KVM here. /dev/kvm can exist and still
# fail at the first vCPU reset (nested virtualisation without MSR support),
# or start a paused machine and then never run the guest: on one host
# (2026-12-02) qemu spun in the host kernel and the guest printed nothing in
# 120 s, while TCG booted it in 8 s and ran rdma-verbs in 12 s, so every
# test of the rdma suite hit its 900 s limit. So the kernel is booted (with
# no root: it prints its banner at once, then panics) until it prints, 15 s
# at most; the verdict is kept for the host's boot.
kvm_cache=${TMPDIR:-/tmp}/hipobj-rxe-kvm.$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
kvm_boots() {
  local out pid i
  if [ -s "$kvm_cache" ]; then
    [ "$(cat "$kvm_cache")" = yes ]
    return
  fi
  out=$work/kvm-probe
  : > "$out"
  "$qemu" -accel kvm -cpu host -M pc -m 256M -smp 1 -nodefaults \
    -no-user-config -display none -no-reboot -kernel "/boot/vmlinuz-$kver" \
    -append "console=ttyS0 panic=-1" -serial file:"$out" \
    < /dev/null > /dev/null 2>&1 &
  pid=$!
  for i in $(seq 150); do
    grep -q "Linux version" "$out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if grep -q "Linux version" "$out" 2>/dev/null; then
    echo yes > "$kvm_cache"
    return 0
  fi
  echo "run-in-rxe-vm: the kernel does not boot under KVM here: TCG" >&2
  echo no > "$kvm_cache"
  return 1
}
accel=(-accel tcg,thread=multi -cpu max)
if [ "${RXE_VM_ACCEL:-auto}" = auto ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
  kvm_boots; then
  accel=(-accel kvm -cpu host)
fi

# Runs the guest with the accelerator in "$@" until it powers off or the
# time left runs out. A guest that has not reached CMD within the boot
# limit (qemu stuck before the guest runs, as KVM was on one host) is
# stopped and rc set to 126 so the caller can try another way; else rc is
# qemu's (under timeout: 124 when the time ran out).
run_guest() {
  local boot_limit=${RXE_VM_BOOT_TIMEOUT:-180} left t0 pid
  left=$((end - $(date +%s)))
  [ "$left" -gt 0 ] || { rc=124; return; }
  rm -f "$work/share/started" "$work/share/status"
  : > "$work/klog"
  t0=$(date +%s)
  timeout -k 10 "$left" "$qemu" "$@" -M pc \
    -m "${RXE_VM_MEM:-2G}" -smp "${RXE_VM_SMP:-$(nproc)}" \
    -nodefaults -no-user-config -display none -no-reboot \
    -kernel "/boot/vmlinuz-$kver" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 loglevel=4 panic=-1" \
    -chardev file,id=klog,path="$work/klog" -serial chardev:klog -serial stdio \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$work/share",mount_tag=share,security_model=none \
    -virtfs local,path="$PWD",mount_tag=cwd,security_model=none,multidevs=remap \
    < /dev/null &
  pid=$!
  while :; do
    [ -e "$work/share/started" ] && break
    kill -0 "$pid" 2>/dev/null || break
    if [ $(($(date +%s) - t0)) -ge "$boot_limit" ]; then
      echo "run-in-rxe-vm: the guest ($*) did not reach the command in $boot_limit s; its console:" >&2
      tail -n 20 "$work/klog" >&2 || true
      kill -TERM "$pid" 2>/dev/null   # timeout passes it on to qemu
      wait "$pid" 2>/dev/null
      rc=126
      return
    fi
    sleep 0.5
  done
  rc=0
  wait "$pid" || rc=$?
}

end=$(($(date +%s) + ${RXE_VM_TIMEOUT:-900}))
run_guest "${accel[@]}"
if [ $rc -eq 126 ] && [ "${accel[1]}" = kvm ]; then
  echo "run-in-rxe-vm: trying TCG instead" >&2
  echo no > "$kvm_cache"   # the later guests of this host's boot too
  run_guest -accel tcg,thread=multi -cpu max
fi
if [ $rc -eq 126 ]; then
  echo "run-in-rxe-vm: the guest never reached the command" >&2
  exit 125
fi
[ -z "${RXE_VM_KLOG:-}" ] || cp "$work/klog" "$RXE_VM_KLOG" 2>/dev/null || true
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  # A guest that stalled as a whole (no in-guest deadline fired) may have
  # said why on its console: soft lockups, hung tasks, RCU stalls.
  echo "run-in-rxe-vm: timed out after ${RXE_VM_TIMEOUT:-900} s; guest kernel log tail:" >&2
  tail -n 40 "$work/klog" >&2 || true
  exit 124
fi
if [ ! -s "$work/share/status" ]; then
  echo "run-in-rxe-vm: the guest reported no exit status (qemu exit $rc); kernel log tail:" >&2
  tail -n 30 "$work/klog" >&2 || true
  exit 125
fi
exit "$(cat "$work/share/status")"
