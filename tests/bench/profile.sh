#!/bin/bash
# profile.sh - where the client's CPU goes in a big GET and PUT of a file:
# starts hipobj-server (root in --tmp, default /dev/shm), uploads SIZE
# (default 1 GiB), then for each of GET (object -> file) and PUT (file ->
# object) prints `perf stat` (CPU, context switches, page faults) and the
# top symbols of a `perf record -g` of the `hipobj cp` process, with and
# without HIPOBJ_FILE_MAP=0. Needs perf (Debian's linux-perf; on a machine
# without it, tests/bench/pack-perf.sh carries Debian's in .dev/perf) and
# perf_event_open allowed (kernel.perf_event_paranoid <= 1 or root).
# --small N instead: N serial 4 KiB GETs (`hipobj bench --small N`, then
# curl over the same objects) against hipobj-server --storage memory, with
# perf stat of the whole machine (client and server CPU per request) and
# a system-wide perf record of the hipobj run, by command and symbol.
# --conn-memory A,B (with --small): the server's --conn-memory, each in
# turn, with a 1 GiB `hipobj bench` PUT and GET beside (what a smaller
# pool costs big bodies).
# Usage: tests/bench/profile.sh [--build DIR] [--size 1GiB] [--tmp DIR]
#                               [--small N [--conn-memory A,B]]
#        (run by tests/gpu/device-run.sh as HIPOBJ_DEVICE_JOB=profile)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/tests/bench/lib.sh" # to_bytes, start_server
build=$root/build size_arg=1GiB tmpbase=/dev/shm small=0 conn_memory=""
while [ $# -gt 0 ]; do
  case "$1" in
  --build) build=$2 && shift 2 ;;
  --size) size_arg=$2 && shift 2 ;;
  --tmp) tmpbase=$2 && shift 2 ;;
  --small) small=$2 && shift 2 ;;
  --conn-memory) conn_memory=$2 && shift 2 ;;
  *) echo "usage: $0 [--build DIR] [--size SIZE] [--tmp DIR] [--small N [--conn-memory A,B]]" >&2 && exit 2 ;;
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
[[ "$small" =~ ^[0-9]+$ ]] || { echo "profile.sh: --small: a count" >&2 && exit 2; }
$PERF --version

tmp=$(mktemp -d "$tmpbase/hipobj-profile.XXXXXX")
srv_pid=""
trap '[ -z "$srv_pid" ] || kill "$srv_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
AK=profileak SK=profile-secret-0123456789
# A fresh server (memory mode for --small) with [extra options]; H is the
# hipobj command line for it.
restart_server() {
  if [ -n "$srv_pid" ]; then kill "$srv_pid" && wait "$srv_pid" 2>/dev/null || true; fi
  local store=()
  [ "$small" = 0 ] || store=(--storage memory)
  rm -rf "$tmp/root"
  start_server "$build/tests/server/hipobj-server" "$tmp" "${store[@]}" "$@" \
    --access-key $AK --secret-key $SK || exit 1
  # shellcheck disable=SC2154 # set by start_server (lib.sh)
  srv_pid=$server_pid
  H=("$build/examples/hipobj" --endpoint-url "$server_url" -q)
}
export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK AWS_REGION=us-east-1
if [ "$small" != 0 ]; then
  # One measured client run: perf stat of the client and, beside it, of the
  # server's process; then CPU and wall microseconds per request of each.
  measure() { # NAME REQUESTS CMD...
    local name=$1 n=$2
    shift 2
    $PERF stat -x, -e task-clock,context-switches -p "$srv_pid" -o "$tmp/srv.stat" &
    local sp=$!
    sleep 0.2
    local s0
    s0=$(date +%s%N)
    $PERF stat -x, -e task-clock,context-switches -o "$tmp/cli.stat" "$@" >"$tmp/cli.out"
    local wall=$((($(date +%s%N) - s0) / 1000))
    kill -INT $sp; wait $sp || true
    awk -F, -v name="$name" -v n="$n" -v wall="$wall" '
      FNR == 1 { f++ }
      $3 == "task-clock" { cpu[f] = $1 * 1000 }
      $3 == "context-switches" { cs[f] = $1 }
      END { printf "%-8s %6d req  wall %6.1f us/req  client CPU %5.1f us/req, %4.1f cs/req" \
              "  server CPU %5.1f us/req, %4.1f cs/req\n", name, n, wall / n, \
              cpu[1] / n, cs[1] / n, cpu[2] / n, cs[2] / n }' "$tmp/cli.stat" "$tmp/srv.stat"
  }
  mkdir -p "$tmp/small"
  for i in $(seq "$small"); do head -c 4096 /dev/urandom >"$tmp/small/o$i"; done
  C=(curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK"
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -K "$tmp/curl.cfg")
  B=(bench --small "$small" --runs 3 --warmup 1 --ops get)
  IFS=, read -r -a pools <<<"${conn_memory:-default}"
  for pool in "${pools[@]}"; do
    if [ "$pool" = default ]; then restart_server; else restart_server --conn-memory "$pool"; fi
    for i in $(seq "$small"); do
      printf 'url = "%s/small/f/o%s"\noutput = "/dev/null"\n' "$server_url" "$i"
    done >"$tmp/curl.cfg"
    # The objects: a tree PUT once by hipobj; hipobj (its bench, through
    # the library, no files) and curl (one process, keep-alive) GET them.
    "${H[@]}" mb s3://small
    "${H[@]}" cp --recursive "$tmp/small" s3://small/f/
    echo "==== small GETs ($small objects of 4 KiB), server --conn-memory $pool: CPU and wall per request"
    echo "     (hipobj: bench's $small PUTs, 1 warm-up and 3 timed rounds of GETs)"
    for _ in 1 2 3; do
      measure hipobj $((small * 5)) "${H[@]}" "${B[@]}"
      measure curl "$small" "${C[@]}"
    done
    [ -z "$conn_memory" ] || "${H[@]:0:3}" bench --sizes 1GiB --runs 3 | grep -v '^hipobj bench'
  done
  echo "==== small GETs: perf record -a -g of hipobj bench, by command, dso, symbol"
  $PERF record -q -a -F 4999 -g -o "$tmp/perf.data" "${H[@]}" "${B[@]}" 2>/dev/null
  for comm in hipobj MHD-worker; do
    echo "---- $comm (the ${comm/MHD-worker/server}), self symbols"
    $PERF report -i "$tmp/perf.data" --no-children --comms "$comm" --percentage relative --sort comm,dso,sym \
      --stdio -g none --percent-limit 0.3 2>/dev/null | grep -v '^#' | grep -v '^$' | head -50 || true
  done
  $PERF report -i "$tmp/perf.data" --no-children --sort comm --stdio -g none \
    2>/dev/null | grep -v '^#' | grep -v '^$' | head -12 || true
  exit 0
fi
restart_server
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
    -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40 || true
  echo "==== $name: callers of the kernel's copies and faults"
  $PERF report -i "$tmp/perf.data" --no-children --sort sym --stdio \
    -g caller,0.5,callee --percent-limit 3 2>/dev/null | grep -v '^#' |
    grep -v '^$' | head -80 || true
}
for map in default 0 1; do
  env=()
  [ "$map" = default ] || env=(env "HIPOBJ_FILE_MAP=$map")
  report "GET map=$map" "${env[@]}" "${H[@]}" cp s3://profile/src "$tmp/out"
  report "PUT map=$map" "${env[@]}" "${H[@]}" cp "$tmp/data" s3://profile/put
done
