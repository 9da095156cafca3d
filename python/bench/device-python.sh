#!/bin/bash
# device-python.sh SERVER - on the GPU machine, from the repository root,
# called by `HIPOBJ_DEVICE_JOB=python bash tests/gpu/device-run.sh` (which
# has put the carried libraries on LD_LIBRARY_PATH and found libcuda):
#   1. the package's pytest suite (python/tests) with this machine's
#      python3, its GPU cases included (torch, cupy, safetensors there);
#   2. python/bench/load_safetensors.py: load_safetensors against awscrt +
#      safetensors.torch.load_file (HIPOBJ_BENCH_SIZES, default
#      4GiB,16GiB; HIPOBJ_BENCH_RUNS, default 3; HIPOBJ_BENCH_SKIP=1 skips
#      it, HIPOBJ_PYTEST_SKIP=1 skips the tests).
# Logs and bench.json go to $OUT when it is set.
set -uo pipefail

server=$1
out=${OUT:-/tmp}
log() { echo "device-python: $*"; }
py=python3
# The package: the tree's modules with the extension built on Debian
# (.dev/python, python/bench/prepare-device.sh).
pkg=/tmp/hipobj-python
rm -rf "$pkg" && mkdir -p "$pkg/hipobj"
cp python/hipobj/*.py .dev/python/hipobj/_hipobj.abi3.so "$pkg/hipobj/" || exit 2
export PYTHONPATH=$pkg
"$py" - <<'PY'
import importlib, sys
print("device-python:", sys.version.split()[0], sys.executable)
for m in ("torch", "safetensors", "cupy", "numpy", "awscrt", "pytest"):
    try:
        mod = importlib.import_module(m)
        print(f"device-python: {m} {getattr(mod, '__version__', '?')}")
    except Exception as e:
        print(f"device-python: {m}: {type(e).__name__}: {e}")
import torch
print("device-python: torch.cuda:", torch.cuda.is_available(),
      torch.version.cuda, torch.cuda.device_count())
import hipobj
print("device-python: hipobj", hipobj.__version__, hipobj.gpu_platform("cuda"))
PY
[ $? = 0 ] || { log "cannot import torch or hipobj"; exit 2; }

rc=0
if [ -z "${HIPOBJ_PYTEST_SKIP:-}" ]; then
  pyt=$PYTHONPATH
  if ! "$py" -c 'import pytest' 2>/dev/null; then
    log "no pytest here: Debian's, carried"
    rm -rf /tmp/hipobj-pytest && mkdir -p /tmp/hipobj-pytest
    tar -C /tmp/hipobj-pytest -xJf .dev/pytest.tar.xz
    pyt=$pyt:/tmp/hipobj-pytest
  fi
  PYTHONPATH=$pyt HIPOBJ_TEST_SERVER=$server PYTHONDONTWRITEBYTECODE=1 \
    timeout 300 "$py" python/tests/run.py python/tests 2>&1 |
    tee "$out/pytest.log"
  [ "${PIPESTATUS[0]}" = 0 ] || { log "pytest failed"; rc=1; }
fi

if [ -z "${HIPOBJ_BENCH_SKIP:-}" ]; then
  awscrt_py=
  if "$py" -c 'import awscrt.s3' 2>/dev/null; then
    awscrt_py=$py
  elif [ -e .dev/peers.tar.xz ] &&
    . tests/bench/peers-env.sh .dev/peers.tar.xz >/dev/null; then
    awscrt_py=$HIPOBJ_COMPARE_PY
  else
    log "no awscrt: hipobj alone"
  fi
  # The checkpoint lives twice in memory at worst (the server's copy and
  # the usual path's file), three times while the upload completes.
  tmp=/tmp
  free_kib=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
  [ "${free_kib:-0}" -gt $((40 << 20)) ] && tmp=/dev/shm
  log "files in $tmp ($((${free_kib:-0} >> 20)) GiB free in /dev/shm)"
  "$py" python/bench/load_safetensors.py --server "$server" --tmp "$tmp" \
    ${awscrt_py:+--awscrt-python "$awscrt_py"} \
    --sizes "${HIPOBJ_BENCH_SIZES:-4GiB,16GiB}" \
    --runs "${HIPOBJ_BENCH_RUNS:-3}" --json "$out/bench.json" \
    --server-log "$out/bench-server.log" 2>&1 |
    tee "$out/bench.log"
  [ "${PIPESTATUS[0]}" = 0 ] || { log "benchmark failed"; rc=1; }
fi
exit "$rc"
