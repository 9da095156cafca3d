#!/bin/bash
# device-run.sh - on the GPU machine, from the repository root: hipObject's
# GPU paths end to end (tests/gpu/gpu-e2e.sh): the GPU suite, `hipobj cp
# --gpu 0` round trips compared by sha256, and the 1 GiB host-vs-GPU
# benchmark, all against a hipobj-server on 127.0.0.1.
#
#   bash tests/gpu/device-run.sh            # programs from .dev/ (carried;
#                                           # see prepare-device.sh)
#   bash tests/gpu/device-run.sh BUILDDIR   # programs built there
#
# Logs go to $OUT (the device tool's result folder) when it is set.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp}
log() { echo "device-run: $*"; }

log "$(uname -srm); $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
nvidia-smi -L 2>/dev/null || log "nvidia-smi: not available"

if [ $# -ge 1 ]; then
  b=$1
  server=$b/tests/server/hipobj-server cli=$b/examples/hipobj
  suite=$b/tests/gpu/gpu_suite bench=$b/tests/gpu/gpu_bench
  mgpu=$b/tests/gpu/multi_gpu mbench=$b/tests/gpu/mgpu_bench
else
  server=.dev/bin/hipobj-server cli=.dev/bin/hipobj
  suite=.dev/bin/gpu_suite bench=.dev/bin/gpu_bench
  mgpu=.dev/bin/multi_gpu mbench=.dev/bin/mgpu_bench
  # The libraries built with the programs; then, only for what this
  # machine lacks, the copies from the build machine (.dev/fallback).
  extra=/tmp/hipobj-missing-libs
  rm -rf "$extra"
  mkdir -p "$extra"
  export LD_LIBRARY_PATH=$root/.dev/lib:$extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  for _ in 1 2 3 4 5 6; do
    missing=$(ldd .dev/bin/* "$extra"/* 2>&1 |
      sed -n -e 's/^[[:space:]]*\([^[:space:]]*\) => not found.*/\1/p' \
        -e "s/.*: \([^:]*\): version .* not found.*/\1/p" |
      xargs -r -n1 basename | sort -u)
    [ -z "$missing" ] && break
    for m in $missing; do
      copy=.dev/fallback/$m.gz
      [ -e "$copy" ] || copy=.dev/fallback-icu/$m.gz
      if [ -e "$copy" ]; then
        log "this machine lacks $m: using the carried copy"
        gunzip -c "$copy" >"$extra/$m"
      else
        log "this machine lacks $m and no copy was carried"
      fi
    done
  done
fi
for f in "$server" "$cli" "$suite" "$bench"; do
  if [ ! -x "$f" ]; then
    log "$f is missing: run tests/gpu/prepare-device.sh on the build machine and carry .dev"
    exit 2
  fi
done

# The CUDA driver library is loaded with dlopen("libcuda.so.1").
if ! grep -q 'libcuda\.so\.1 ' <<<"$(ldconfig -p 2>/dev/null)"; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64 \
    /usr/local/cuda/compat /usr/lib/x86_64-linux-gnu; do
    if [ -e "$d/libcuda.so.1" ]; then
      log "libcuda.so.1 found in $d"
      export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
      break
    fi
  done
fi

# HIPOBJ_DEVICE_JOB: a comma-separated list of benchmarks of tests/bench to
# run instead of the GPU end-to-end checks:
#   scaling  GET/PUT throughput against concurrency (scaling.sh)
#   compare  hipobj against aws-c-s3, curl, awscli and s3cmd (compare.sh),
#            with the tools packed by tests/bench/pack-peers.sh into .dev,
#            on hipobj-server --storage memory (HIPOBJ_COMPARE_SERVER:
#            memory, the default, hipobj or rgw), files and memory rows;
#            HIPOBJ_COMPARE_ARGS adds compare.sh options (--size 10GiB
#            --tools hipobj,awscrt --runs 2 ...)
#   profile  where hipobj's CPU goes in a big GET and PUT of a file
#            (profile.sh), with Debian's perf packed by
#            tests/bench/pack-perf.sh into .dev/perf; HIPOBJ_PROFILE_ARGS
#            adds profile.sh options (--small 2000: small GETs instead)
#   filesweep  a GET into a tmpfs file by pwrite and by mapped windows
#            with 1..16 writers faulting pages in (file-get-sweep.sh;
#            HIPOBJ_FILESWEEP_ARGS adds its options)
#   sweep    `hipobj cp` over concurrency x staging pool (cp-sweep.sh;
#            HIPOBJ_SWEEP_CONCURRENCY, HIPOBJ_SWEEP_POOL,
#            HIPOBJ_SWEEP_IO_THREADS: the values)
#   python   the Python package's tests and load_safetensors benchmark
#            (python/bench/device-python.sh)
#   multigpu two GPUs filled at once by one client (issue 19; machine kind
#            nvidia-h200-x2): multi_gpu, gpu-e2e.sh on device 1, mgpu_bench
#            and python/bench/load_safetensors_2gpu.py
#            (tests/gpu/multigpu-job.sh)
# compare.sh and profile.sh want a build directory: one of links to the
# programs.
fake=/tmp/hipobj-device-build
fake_build() {
  rm -rf "$fake" && mkdir -p "$fake/examples" "$fake/tests/server"
  ln -s "$(realpath "$cli")" "$fake/examples/hipobj"
  ln -s "$(realpath "$server")" "$fake/tests/server/hipobj-server"
}
if [ -n "${HIPOBJ_DEVICE_JOB:-}" ]; then
  rc=0
  IFS=, read -r -a jobs <<<"$HIPOBJ_DEVICE_JOB"
  # Files and the server's root in memory when there is room: the disk of
  # this machine is not what the clients are compared on.
  tmpdir=/tmp
  free_kib=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
  [ "${free_kib:-0}" -gt $((12 << 20)) ] && tmpdir=/dev/shm
  for job in "${jobs[@]}"; do
    case "$job" in
    scaling)
      bash tests/bench/scaling.sh "$server" "$cli" 2>&1 | tee "$out/scaling.log"
      [ "${PIPESTATUS[0]}" = 0 ] || rc=1
      ;;
    compare)
      fake_build
      if (. tests/bench/peers-env.sh .dev/peers.tar.xz &&
        bash tests/bench/compare.sh --build "$fake" --tmp "$tmpdir" \
          --server "${HIPOBJ_COMPARE_SERVER:-memory}" ${HIPOBJ_COMPARE_ARGS:-}) 2>&1 |
        tee "$out/compare.log"; then
        :
      else
        rc=1
      fi
      ;;
    profile)
      fake_build
      bash tests/bench/profile.sh --build "$fake" --tmp "$tmpdir" ${HIPOBJ_PROFILE_ARGS:-} 2>&1 |
        tee "$out/profile.log"
      [ "${PIPESTATUS[0]}" = 0 ] || rc=1
      ;;
    filesweep)
      fake_build
      bash tests/bench/file-get-sweep.sh --build "$fake" --tmp "$tmpdir" \
        ${HIPOBJ_FILESWEEP_ARGS:-} 2>&1 | tee "$out/filesweep.log"
      [ "${PIPESTATUS[0]}" = 0 ] || rc=1
      ;;
    sweep)
      bash tests/bench/cp-sweep.sh "$server" "$cli" --tmp "$tmpdir" \
        --concurrency "${HIPOBJ_SWEEP_CONCURRENCY:-default 16 32}" \
        --pool "${HIPOBJ_SWEEP_POOL:-default 128MiB}" \
        --io-threads "${HIPOBJ_SWEEP_IO_THREADS:-default}" 2>&1 | tee "$out/sweep.log"
      [ "${PIPESTATUS[0]}" = 0 ] || rc=1
      ;;
    python)
      # The Python package: its tests and python/bench/load_safetensors.py
      # (carried by python/bench/prepare-device.sh).
      bash python/bench/device-python.sh "$server" || rc=1
      ;;
    multigpu)
      bash tests/gpu/multigpu-job.sh "$server" "$cli" "$suite" "$mgpu" \
        "$mbench" "$tmpdir" || rc=1
      ;;
    *)
      log "HIPOBJ_DEVICE_JOB: unknown job '$job' (scaling, compare, profile, sweep, python, multigpu)"
      rc=2
      ;;
    esac
  done
  exit "$rc"
fi
bash tests/gpu/gpu-e2e.sh "$server" "$cli" "$suite" "$bench" 2>&1 |
  tee "$out/gpu-e2e.log"
rc=${PIPESTATUS[0]}
log "exit status $rc (log: $out/gpu-e2e.log)"
exit "$rc"
