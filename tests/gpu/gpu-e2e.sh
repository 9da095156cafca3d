#!/bin/bash
# gpu-e2e.sh - hipObject's GPU paths end to end against a local hipobj-server:
#
#   tests/gpu/gpu-e2e.sh SERVER HIPOBJ GPU_SUITE [GPU_BENCH]
#
# Starts SERVER on 127.0.0.1 (a free port, a temp root), then runs
#   1. `hipobj info`;
#   2. GPU_SUITE (GET/PUT/multipart/ranges/threads/dma-buf on the GPU);
#   3. round trips of files through `hipobj --gpu N cp`, upload and download,
#      files and stdin/stdout, compared by sha256 with the original and with
#      a host-memory download;
#   4. with a second GPU of the platform (device 1, or 0 when GPU is 1):
#      `hipobj info` lists both, and a file goes up through one GPU and
#      down through each, compared by sha256; with HIPOBJ_E2E_CTX_STATS=1
#      (the stand-in libcuda.so.1 only) its MOCK_CUDA_STATS counters show
#      that `hipobj --gpu 1 cp` made no call in device 0's context;
#   5. with HIPOBJ_E2E_FAULT_ENV, a download and an upload through the GPU
#      with that environment (a stand-in runtime's fault injection) must
#      fail, naming HIPOBJ_E2E_FAULT_MSG;
#   6. with GPU_BENCH, the host-vs-GPU benchmark.
# Ends with "N passed, N failed" for the cp checks. Exit status: 0 all passed,
# 1 something failed, 77 no GPU (GPU_SUITE skipped).
#
# Environment: HIPOBJ_E2E_GPU (device, default 0), HIPOBJ_E2E_GPU_KIND (cuda
# or hip; default the first platform with the device), HIPOBJ_E2E_MAX_MIB
# (largest cp file, default 1024), HIPOBJ_BENCH_MIB (benchmark size, default
# 1024), HIPOBJ_E2E_REQUIRE_GPU=1 (no GPU is a failure, not a skip: for the
# stand-in runtimes), HIPOBJ_E2E_EXPECT_INFO (text `hipobj info` must print),
# HIPOBJ_E2E_FAULT_ENV and HIPOBJ_E2E_FAULT_MSG (step 5),
# HIPOBJ_E2E_CTX_STATS (step 4).
set -uo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 SERVER HIPOBJ GPU_SUITE [GPU_BENCH]" >&2
  exit 2
fi
server=$1 cli=$2 suite=$3 bench=${4:-}
gpu=${HIPOBJ_E2E_GPU:-0}
gpu_kind=${HIPOBJ_E2E_GPU_KIND:-}
gpu_arg=${gpu_kind:+$gpu_kind:}$gpu
max_mib=${HIPOBJ_E2E_MAX_MIB:-1024}

work=$(mktemp -d "${TMPDIR:-/tmp}/hipobj-gpu-e2e.XXXXXX")
srv_pid=
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

key=HIPOBJGPUE2EKEY
secret=hipobjGpuE2eSecret0000000000000000000001
mkdir -p "$work/root"
AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret \
  "$server" --listen 127.0.0.1:0 --root "$work/root" --log-level warn \
  >"$work/server.out" 2>"$work/server.err" &
srv_pid=$!
url=
for _ in $(seq 100); do
  url=$(grep -o 'http://[0-9.]*:[0-9]*' "$work/server.out" 2>/dev/null | head -1)
  [ -n "$url" ] && break
  kill -0 "$srv_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "gpu-e2e: $server did not start:" >&2
  cat "$work/server.err" >&2
  exit 1
fi
echo "gpu-e2e: hipobj-server at $url"

export HIPOBJ_TEST_ENDPOINT=$url HIPOBJ_TEST_ACCESS_KEY=$key
export HIPOBJ_TEST_SECRET_KEY=$secret HIPOBJ_TEST_REGION=us-east-1
export HIPOBJ_TEST_GPU=$gpu HIPOBJ_TEST_GPU_KIND=$gpu_kind
export AWS_ENDPOINT_URL=$url AWS_ACCESS_KEY_ID=$key
export AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1
unset AWS_PROFILE AWS_ENDPOINT_URL_S3

echo "== hipobj info"
"$cli" info | tee "$work/info.out"
if [ -n "${HIPOBJ_E2E_EXPECT_INFO:-}" ] &&
  ! grep -qF "$HIPOBJ_E2E_EXPECT_INFO" "$work/info.out"; then
  echo "gpu-e2e: FAIL: hipobj info does not show '$HIPOBJ_E2E_EXPECT_INFO'"
  exit 1
fi

echo "== gpu_suite"
"$suite"
suite_rc=$?
if [ $suite_rc -eq 77 ]; then
  if [ "${HIPOBJ_E2E_REQUIRE_GPU:-0}" = 1 ]; then
    echo "gpu-e2e: FAIL: no GPU, but HIPOBJ_E2E_REQUIRE_GPU=1"
    exit 1
  fi
  echo "gpu-e2e: no GPU: skipped"
  exit 77
fi

echo "== hipobj --gpu $gpu_arg cp round trips"
passed=0
failed=0
check() { # NAME FILE-A FILE-B
  local a b
  a=$(sha256sum <"$2" | cut -d' ' -f1)
  b=$(sha256sum <"$3" | cut -d' ' -f1)
  if [ "$a" = "$b" ]; then
    passed=$((passed + 1))
    echo "PASS $1 ($a)"
  else
    failed=$((failed + 1))
    echo "FAIL $1: $a != $b"
  fi
}
run() { # NAME CMD...: a command that must succeed
  local name=$1 rc=0
  shift
  "$@" >"$work/cmd.out" 2>&1 || rc=$?
  [ $rc -eq 0 ] && return 0
  failed=$((failed + 1))
  echo "FAIL $name (exit status $rc): $*"
  sed 's/^/    /' "$work/cmd.out"
  return 1
}

"$cli" mb s3://gpu-e2e >/dev/null
sizes="0 1 4194305 $((64 << 20))"
[ "$max_mib" -ge 1024 ] && sizes="$sizes $((1 << 30))"
for size in $sizes; do
  [ "$size" -gt $((max_mib << 20)) ] && continue
  f=$work/in.$size
  head -c "$size" /dev/urandom >"$f"
  run "upload $size (gpu)" "$cli" --gpu "$gpu_arg" --json cp "$f" "s3://gpu-e2e/o$size" &&
    grep -q '"data_path":"http-staged"' "$work/cmd.out" ||
    { echo "    (upload of $size did not report http-staged)"; failed=$((failed + 1)); }
  run "download $size (gpu)" "$cli" --gpu "$gpu_arg" cp "s3://gpu-e2e/o$size" "$f.gpu" &&
    check "gpu round trip $size" "$f" "$f.gpu"
  run "download $size (host)" "$cli" cp "s3://gpu-e2e/o$size" "$f.host" &&
    check "host download of gpu upload $size" "$f" "$f.host"
  rm -f "$f.gpu" "$f.host"
done
# stdin -> GPU -> S3 (multipart through the tool's stream path) and back out
# through GPU memory to stdout.
f=$work/in.stream
head -c $(((max_mib < 24 ? max_mib : 24) << 20)) /dev/urandom >"$f"
run "stream upload (gpu)" sh -c "\"$cli\" --gpu $gpu_arg cp - s3://gpu-e2e/stream <\"$f\"" &&
  run "stream download (gpu)" sh -c "\"$cli\" --gpu $gpu_arg cp s3://gpu-e2e/stream - >\"$f.out\"" &&
  check "gpu stream round trip" "$f" "$f.out"
rm -f "$work"/in.*

# The platform in use and its device count, from `hipobj --json info`.
plat_devices=$("$cli" --json info | sed -n \
  's/.*"platform":"\([a-z]*\)",.*"available":1,.*"devices":\([0-9]*\).*/\1 \2/p' |
  while read -r p n; do
    [ -z "$gpu_kind" ] || [ "$p" = "$gpu_kind" ] || continue
    [ "$n" -gt "$gpu" ] && echo "$p $n" && break
  done)
read -r plat n_dev <<<"${plat_devices:-none 0}"
if [ "$n_dev" -ge 2 ]; then
  other=$((gpu == 1 ? 0 : 1))
  echo "== a second GPU: $plat:$other ($n_dev devices)"
  for d in 0 1; do
    if grep -q "^    device $d: " "$work/info.out"; then
      passed=$((passed + 1))
      echo "PASS hipobj info lists $plat device $d"
    else
      failed=$((failed + 1))
      echo "FAIL hipobj info does not list $plat device $d"
    fi
  done
  f=$work/in.second
  head -c $((((max_mib < 64 ? max_mib : 64) << 20) + 5)) /dev/urandom >"$f"
  run "upload (gpu $plat:$other)" "$cli" --gpu "$plat:$other" cp "$f" s3://gpu-e2e/second &&
    for d in "$other" "$gpu"; do
      if [ "$d" = 1 ] && [ "${HIPOBJ_E2E_CTX_STATS:-0}" = 1 ]; then
        export MOCK_CUDA_STATS=$work/ctx.stats
      fi
      run "download (gpu $plat:$d)" "$cli" --gpu "$plat:$d" cp s3://gpu-e2e/second "$f.$d" &&
        check "upload through GPU $other, download through GPU $d" "$f" "$f.$d"
      unset MOCK_CUDA_STATS
      rm -f "$f.$d"
    done
  if [ "${HIPOBJ_E2E_CTX_STATS:-0}" = 1 ]; then
    # "device D calls N h2d N d2h N bytes N", then "violations N unpinned N"
    if awk '$1 == "device" && $2 == 0 && $4 != 0 {bad = 1}
        $1 == "device" && $2 == 1 && $6 == 0 {bad = 1}
        $1 == "violations" && ($2 != 0 || $4 != 0) {bad = 1}
        END {exit bad}' "$work/ctx.stats" 2>/dev/null && [ -s "$work/ctx.stats" ]; then
      passed=$((passed + 1))
      echo "PASS hipobj --gpu $plat:1 cp ran only in device 1's context"
    else
      failed=$((failed + 1))
      echo "FAIL hipobj --gpu $plat:1 cp: the stand-in's context counters:"
      sed 's/^/    /' "$work/ctx.stats" 2>/dev/null || echo "    (no $work/ctx.stats)"
    fi
  fi
  rm -f "$f"
else
  echo "== a second GPU: none ($plat: $n_dev device(s)): skipped"
fi

if [ -n "${HIPOBJ_E2E_FAULT_ENV:-}" ]; then
  # A copy that fails on the device must fail the transfer, never end as a
  # success with wrong bytes.
  echo "== a failed device copy ($HIPOBJ_E2E_FAULT_ENV)"
  f=$work/in.fault
  head -c $(((max_mib < 12 ? max_mib : 12) << 20)) /dev/urandom >"$f"
  "$cli" cp "$f" s3://gpu-e2e/fault >/dev/null
  for dir in download upload; do
    if [ $dir = download ]; then
      args=(s3://gpu-e2e/fault "$work/fault.out")
    else
      args=("$f" s3://gpu-e2e/fault-up)
    fi
    if env "$HIPOBJ_E2E_FAULT_ENV" "$cli" --gpu "$gpu_arg" cp "${args[@]}" \
      >"$work/cmd.out" 2>&1; then
      failed=$((failed + 1))
      echo "FAIL fault $dir: succeeded despite $HIPOBJ_E2E_FAULT_ENV"
    elif ! grep -qF "${HIPOBJ_E2E_FAULT_MSG:-}" "$work/cmd.out"; then
      failed=$((failed + 1))
      echo "FAIL fault $dir: the error does not name ${HIPOBJ_E2E_FAULT_MSG:-}:"
      sed 's/^/    /' "$work/cmd.out"
    else
      passed=$((passed + 1))
      echo "PASS fault $dir: $(tail -1 "$work/cmd.out")"
    fi
  done
  rm -f "$f" "$work/fault.out"
fi

if [ -n "$bench" ]; then
  echo "== gpu_bench"
  "$bench" || failed=$((failed + 1))
fi

echo "gpu_suite exit status $suite_rc"
[ $suite_rc -ne 0 ] && failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
