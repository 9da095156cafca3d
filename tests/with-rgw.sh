#!/bin/bash
# Runs one command against a private, throw-away Ceph RGW:
#   tests/with-rgw.sh CMD ARGS...
# Starts RGW (tests/ceph-rgw.sh) in a fresh temp dir on a free port block,
# exports HIPOBJ_TEST_ENDPOINT / _ACCESS_KEY / _SECRET_KEY / _REGION, runs
# CMD, always stops RGW, and exits with CMD's status. Exits 77 (meson's
# "skipped") when Ceph is not installed.
#
# Each invocation owns its dir and a randomly chosen 32-port block, so
# concurrent runs do not collide; meson still runs these tests with
# is_parallel: false because each cluster takes ~1 GiB and the CPU of a core.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ $# -lt 1 ]; then
  echo "usage: $0 CMD [ARGS...]" >&2
  exit 2
fi

for b in ceph-mon ceph-osd radosgw; do
  if ! command -v "$b" >/dev/null 2>&1; then
    echo "SKIP: Ceph RGW not installed (apt-get install radosgw ceph-mon ceph-osd)"
    exit 77
  fi
done

# A port counts as taken when something accepts a connection on it.
port_busy() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Picks a block of 32 ports below the Linux ephemeral range (32768+) so that
# outgoing connections cannot grab them in the meantime.
pick_port_block() {
  local tries base p busy
  for ((tries = 0; tries < 50; tries++)); do
    base=$((20000 + (RANDOM % 380) * 32))
    busy=0
    for ((p = base; p < base + 32; p++)); do
      if port_busy "$p"; then
        busy=1
        break
      fi
    done
    if [ $busy -eq 0 ]; then
      echo "$base"
      return 0
    fi
  done
  echo "with-rgw.sh: no free block of 32 ports found in 20000..32159" >&2
  return 1
}

export RGW_ACCESS_KEY=HIPOBJTESTACCESSKEY1
export RGW_SECRET_KEY=hipobjTestSecretKey000000000000000000001

dir=$(mktemp -d "${TMPDIR:-/tmp}/hipobj-rgw.XXXXXX")
cleanup() {
  bash "$here/ceph-rgw.sh" stop "$dir/ceph" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
child=
# On a signal, pass it on to CMD, then stop RGW (through the EXIT trap).
on_signal() {
  if [ -n "$child" ]; then
    kill "-$1" "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  exit "$2"
}
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP

# Another process may take the ports between the check and the bind; a
# second block then usually works.
endpoint=
for attempt in 1 2 3; do
  port=$(pick_port_block)
  echo "with-rgw.sh: starting Ceph RGW in $dir/ceph on port $port (attempt $attempt)" >&2
  if endpoint=$(bash "$here/ceph-rgw.sh" start "$dir/ceph" "$port"); then
    break
  fi
  endpoint=
done
if [ -z "$endpoint" ]; then
  echo "with-rgw.sh: could not start Ceph RGW (see the log tails above)" >&2
  exit 1
fi
echo "with-rgw.sh: RGW ready at $endpoint" >&2

export HIPOBJ_TEST_ENDPOINT=$endpoint
export HIPOBJ_TEST_ACCESS_KEY=$RGW_ACCESS_KEY
export HIPOBJ_TEST_SECRET_KEY=$RGW_SECRET_KEY
export HIPOBJ_TEST_REGION=us-east-1

# A script that lost its executable bit (e.g. checked out without modes)
# still runs.
cmd=("$@")
if [ ! -x "${cmd[0]}" ] && [ -f "${cmd[0]}" ] && [[ "${cmd[0]}" == *.sh ]]; then
  cmd=(bash "${cmd[@]}")
fi

# Not exec: RGW must be stopped after CMD, whatever its status. In the
# background (stdin kept) so that a signal is handled at once rather than
# when CMD ends.
"${cmd[@]}" <&0 &
child=$!
status=0
wait "$child" || status=$?
child=
exit $status
