#!/bin/bash
# multigpu-job.sh - the `multigpu` job of tests/gpu/device-run.sh (issue 19:
# one client filling two GPUs of one host), on a machine with two GPUs:
#
#   multigpu-job.sh SERVER HIPOBJ GPU_SUITE MULTI_GPU MGPU_BENCH TMPDIR
#
#   1. multi_gpu (tests/gpu/multi_gpu.c): GET/PUT into both GPUs at once,
#      byte-exact; device 0's context untouched by a device-1 client; the
#      staging pool serving both (multi-gpu.log);
#   2. gpu-e2e.sh on device 1: gpu_suite there, `hipobj --gpu 1 cp` round
#      trips, and the second-GPU step (through GPU 0) (gpu-e2e-gpu1.log);
#   3. mgpu_bench: 2 x HIPOBJ_MGPU_BENCH_MIB (4096) GETs into the two GPUs
#      at once vs GPU 0 alone vs both into GPU 0, the same for PUTs, medians
#      of HIPOBJ_MGPU_BENCH_RUNS (5) (mgpu-bench.log, mgpu-bench.json);
#   4. python/bench/load_safetensors_2gpu.py: a checkpoint of
#      HIPOBJ_MGPU_PY_SIZE (8GiB) in two shards loaded into cuda:0 and
#      cuda:1 at once (python-2gpu.log, python-2gpu.json); needs torch and
#      .dev/python (python/bench/prepare-device.sh); HIPOBJ_MGPU_PY_SKIP=1
#      leaves it out.
# Each step has a time limit of its own, so that a hung step leaves time
# for the others; logs go to $OUT (default /tmp). HIPOBJ_MGPU_STEPS (a
# comma-separated subset of test,e2e,bench,python) picks steps. Ends with
# one line per step and exits 1 when one failed (a skip is not a failure
# only where the machine has fewer than two GPUs: then every step skips).
set -uo pipefail

if [ $# -lt 6 ]; then
  echo "usage: $0 SERVER HIPOBJ GPU_SUITE MULTI_GPU MGPU_BENCH TMPDIR" >&2
  exit 2
fi
server=$1 cli=$2 suite=$3 multi=$4 mbench=$5 tmp=$6
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-/tmp}
steps=",${HIPOBJ_MGPU_STEPS:-test,e2e,bench,python},"
log() { echo "multigpu: $*"; }
summary=()
rc=0

for f in "$multi" "$mbench"; do
  if [ ! -x "$f" ]; then
    log "$f is missing: run tests/gpu/prepare-device.sh (it packs multi_gpu and mgpu_bench) and carry .dev"
    exit 2
  fi
done
# The server holds up to four objects of the benchmark's size at once
# (16 GiB by default), more while a multipart upload completes.
if [ "$tmp" = /dev/shm ]; then
  free_kib=$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')
  if [ "${free_kib:-0}" -lt $((40 << 20)) ]; then
    log "/dev/shm has $((${free_kib:-0} >> 20)) GiB free: the server's files go to /tmp"
    tmp=/tmp
  fi
fi
nvidia-smi topo -m 2>/dev/null | tee "$out/topo.txt" || log "nvidia-smi topo: not available"

# A hipobj-server on a root under $tmp (memory when device-run.sh found
# room in /dev/shm: the server's disk is not what is measured).
srv_pid=
work=$(mktemp -d "$tmp/hipobj-mgpu.XXXXXX")
stop_server() {
  if [ -n "$srv_pid" ]; then
    kill "$srv_pid" 2>/dev/null
    wait "$srv_pid" 2>/dev/null
  fi
  srv_pid=
}
trap 'stop_server; rm -rf "$work"' EXIT
start_server() {
  rm -rf "$work/root" && mkdir -p "$work/root"
  export HIPOBJ_TEST_ACCESS_KEY=HIPOBJMGPUKEY0000001
  export HIPOBJ_TEST_SECRET_KEY=hipobjMgpuSecret000000000000000000000001
  export HIPOBJ_TEST_REGION=us-east-1
  "$server" --root "$work/root" --listen 127.0.0.1:0 \
    --threads "$(nproc)" --access-key "$HIPOBJ_TEST_ACCESS_KEY" \
    --secret-key "$HIPOBJ_TEST_SECRET_KEY" --region us-east-1 \
    >"$work/ready" 2>"$out/mgpu-server.log" &
  srv_pid=$!
  local url=
  for _ in $(seq 100); do
    url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/ready" | head -n 1)
    [ -n "$url" ] && break
    kill -0 "$srv_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    log "hipobj-server did not start:"
    cat "$out/mgpu-server.log"
    return 1
  fi
  export HIPOBJ_TEST_ENDPOINT=$url
}

# step NAME LIMIT_S LOG CMD...: runs one step, records its outcome.
step() {
  local name=$1 limit=$2 file=$3 s
  shift 3
  case "$steps" in *",$name,"*) ;; *) return 0 ;; esac
  log "== $name: $*"
  timeout -k 10 "$limit" "$@" 2>&1 | tee "$out/$file"
  s=${PIPESTATUS[0]}
  case $s in
  0) summary+=("PASS $name") ;;
  77) summary+=("SKIP $name (see $file)") ;;
  124 | 137) summary+=("FAIL $name: over its ${limit} s limit") && rc=1 ;;
  *) summary+=("FAIL $name: exit status $s (see $file)") && rc=1 ;;
  esac
}

start_server || exit 1
step test 180 multi-gpu.log env HIPOBJ_MGPU_MIB="${HIPOBJ_MGPU_MIB:-512}" \
  "$multi"
stop_server

# gpu-e2e.sh starts its own server; its files under $tmp.
step e2e 240 gpu-e2e-gpu1.log env TMPDIR="$tmp" HIPOBJ_E2E_GPU=1 \
  HIPOBJ_E2E_GPU_KIND=cuda HIPOBJ_E2E_MAX_MIB="${HIPOBJ_MGPU_E2E_MIB:-256}" \
  bash "$root/tests/gpu/gpu-e2e.sh" "$server" "$cli" "$suite"

start_server || exit 1
step bench 300 mgpu-bench.log env \
  HIPOBJ_BENCH_MIB="${HIPOBJ_MGPU_BENCH_MIB:-4096}" \
  HIPOBJ_BENCH_RUNS="${HIPOBJ_MGPU_BENCH_RUNS:-5}" \
  HIPOBJ_BENCH_JSON="$out/mgpu-bench.json" "$mbench"
stop_server

if [ "${HIPOBJ_MGPU_PY_SKIP:-0}" = 1 ]; then
  case "$steps" in *",python,"*) summary+=("SKIP python (HIPOBJ_MGPU_PY_SKIP=1)") ;; esac
elif [ ! -e "$root/.dev/python/hipobj/_hipobj.abi3.so" ]; then
  case "$steps" in *",python,"*)
    summary+=("FAIL python: no .dev/python (run python/bench/prepare-device.sh)")
    rc=1
    ;;
  esac
else
  pkg=/tmp/hipobj-python-2gpu
  rm -rf "$pkg" && mkdir -p "$pkg/hipobj"
  cp "$root"/python/hipobj/*.py "$root/.dev/python/hipobj/_hipobj.abi3.so" \
    "$pkg/hipobj/"
  step python 300 python-2gpu.log env PYTHONPATH="$pkg" \
    PYTHONDONTWRITEBYTECODE=1 python3 \
    "$root/python/bench/load_safetensors_2gpu.py" --server "$server" \
    --tmp "$tmp" --size "${HIPOBJ_MGPU_PY_SIZE:-8GiB}" \
    --runs "${HIPOBJ_MGPU_PY_RUNS:-5}" --json "$out/python-2gpu.json" \
    --server-log "$out/python-2gpu-server.log"
fi

log "== summary"
for s in "${summary[@]}"; do
  log "$s"
done
exit "$rc"
