#!/bin/bash
# profile.sh - where the client's CPU goes in a big GET and PUT of a file:
# starts hipobj-server (root in --tmp, default /dev/shm), uploads SIZE
# (default 1 GiB), then for each of GET (object -> file) and PUT (file ->
# object) prints `perf stat` (CPU, context switches, page faults) and the
# top symbols of a `perf record -g` of the `hipobj cp` process, with and
# without HIPOBJ_FILE_MAP=0. Needs perf (Debian's linux-perf; on a machine
# without it, tests/bench/pack-perf.sh carries Debian's in .dev/perf) and
# perf_event_open allowed (kernel.perf_event_paranoid <= 1 or root).
# Usage: tests/bench/profile.sh [--build DIR] [--size 1GiB] [--tmp DIR]
#        (run by tests/gpu/device-run.sh as HIPOBJ_DEVICE_JOB=profile)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/tests/bench/lib.sh" # to_bytes
build=$root/build size_arg=1GiB tmpbase=/dev/shm
while [ $# -gt 0 ]; do
  case "$1" in
  --build) build=$2 && shift 2 ;;
  --size) size_arg=$2 && shift 2 ;;
  --tmp) tmpbase=$2 && shift 2 ;;
  *) echo "usage: $0 [--build DIR] [--size SIZE] [--tmp DIR]" >&2 && exit 2 ;;
  esac
done
size=$(to_bytes "$size_arg")

PERF=$(command -v perf || true)
if [ -z "$PERF" ] && [ -x "$root/.dev/perf/bin/perf" ]; then
  lib=/tmp/hipobj-perf-libs
  rm -rf "$lib" && mkdir -p "$lib"
  for _ in 1 2 3 4; do
    missing=$(LD_LIBRARY_PATH=$lib ldd "$root/.dev/perf/bin/perf" |
      sed -n 's/^[[:space:]]*\([^[:space:]]*\) => not found.*/\1/p')
    [ -z "$missing" ] && break
    for m in $missing; do
      [ -e "$root/.dev/perf/lib/$m.gz" ] && gunzip -c "$root/.dev/perf/lib/$m.gz" >"$lib/$m"
    done
  done
  # perf runs the command it measures: that keeps the rest of the path.
  PERF="env LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} $root/.dev/perf/bin/perf"
fi
[ -n "$PERF" ] || { echo "profile.sh: no perf (tests/bench/pack-perf.sh)"; exit 77; }
$PERF --version

tmp=$(mktemp -d "$tmpbase/hipobj-profile.XXXXXX")
srv_pid=""
trap '[ -z "$srv_pid" ] || kill "$srv_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
port=18097 AK=profileak SK=profile-secret-0123456789
threads=$(nproc)
[ "$threads" -ge 4 ] || threads=4
"$build/tests/server/hipobj-server" --root "$tmp/root" --listen 127.0.0.1:$port \
  --access-key $AK --secret-key $SK --threads "$threads" --log-level warn \
  >"$tmp/srv.out" 2>&1 &
srv_pid=$!
for _ in $(seq 50); do grep -q listening "$tmp/srv.out" && break; sleep 0.1; done
export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK AWS_REGION=us-east-1
H=("$build/examples/hipobj" --endpoint-url "http://127.0.0.1:$port" -q)
"${H[@]}" mb s3://profile
head -c "$size" /dev/urandom >"$tmp/data"
"${H[@]}" cp "$tmp/data" s3://profile/src

report() { # NAME CMD...: perf stat, then perf record + the top symbols
  local name=$1
  shift
  rm -f "$tmp/out"
  echo "==== $name: perf stat"
  $PERF stat -e task-clock,context-switches,cpu-migrations,page-faults \
    "$@" 2>&1 | sed -n '/Performance/,$p' | grep -v '^$'
  rm -f "$tmp/out"
  echo "==== $name: perf record -g, top symbols (self)"
  $PERF record -q -F 2999 -g -o "$tmp/perf.data" "$@" 2>/dev/null
  $PERF report -i "$tmp/perf.data" --no-children --sort dso,sym --stdio \
    -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40
  echo "==== $name: callers of the kernel's copies and faults"
  $PERF report -i "$tmp/perf.data" --no-children --sort sym --stdio \
    -g caller,0.5,callee --percent-limit 3 2>/dev/null | grep -v '^#' |
    grep -v '^$' | head -80
}
for map in default 0 1; do
  env=()
  [ "$map" = default ] || env=(env HIPOBJ_FILE_MAP=$map)
  report "GET map=$map" "${env[@]}" "${H[@]}" cp s3://profile/src "$tmp/out"
  report "PUT map=$map" "${env[@]}" "${H[@]}" cp "$tmp/data" s3://profile/put
done
