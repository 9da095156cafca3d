#!/bin/bash
# The project's one test command: checks formatting, builds `build` (normal)
# and `build-asan` (ASan + UBSan), runs every meson suite in both, installs
# the Python package with pip into a venv and tests that install, fuzzes
# the parsers for a bounded time (tests/fuzz/run.sh, clang's libFuzzer;
# skipped when clang is absent), builds, installs and uses the Debian
# packages (tests/package-check.sh; skipped without root), and ends with one line "N passed, N
# failed, N skipped" over everything. Exits non-zero when anything failed
# (a test, a build, the format check, or a fuzz harness).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
start=$SECONDS
passed=0
failed=0
skipped=0

section() { printf '\n===== %s\n' "$*"; }

# Adds one build's results from meson's testlog.json (one JSON object per
# line) to the totals; python3 is there because meson needs it. Criterion
# runs each test in a child and ignores how that child exits, so a leak that
# LeakSanitizer reports at exit would pass: a sanitizer report anywhere in a
# passing test's output counts as a failure.
count_results() {
  local log=$1 counts
  if [ ! -f "$log" ]; then
    echo "run-tests.sh: no $log: counting the run as one failure" >&2
    failed=$((failed + 1))
    return
  fi
  counts=$(
    python3 - "$log" <<'PY'
import json, sys
markers = ("ERROR: LeakSanitizer", "ERROR: AddressSanitizer",
           "runtime error:", "WARNING: ThreadSanitizer")
ok = bad = skip = 0
with open(sys.argv[1]) as f:
    for line in f:
        if not line.strip():
            continue
        t = json.loads(line)
        r = t.get("result", "")
        out = (t.get("stdout") or "") + (t.get("stderr") or "")
        if r in ("OK", "EXPECTEDFAIL") and any(m in out for m in markers):
            print(f"run-tests.sh: {t.get('name')}: passed but its output "
                  f"has a sanitizer report (see {sys.argv[1][:-4]}txt): "
                  "counted as failed", file=sys.stderr)
            r = "FAIL"
        if r in ("OK", "EXPECTEDFAIL"):
            ok += 1
        elif r == "SKIP":
            skip += 1
        else:
            bad += 1
print(ok, bad, skip)
PY
  ) || counts="0 1 0"
  local p f s
  read -r p f s <<<"$counts"
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
}

check_format() {
  section "format (clang-format --dry-run --Werror)"
  if ! command -v clang-format >/dev/null 2>&1; then
    echo "clang-format not installed: format check skipped"
    skipped=$((skipped + 1))
    return
  fi
  local files=()
  mapfile -t files < <({
    find include src s3 rdma examples python/src -type f -name '*.[ch]' 2>/dev/null
    find tests -type f -name '*.c'
  } | sort)
  # One line per badly formatted file: the per-line diagnostics of a whole
  # unformatted header would drown the test output.
  local f bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -eq 0 ]; then
    echo "format: ${#files[@]} files OK"
    passed=$((passed + 1))
  else
    printf 'format: not clang-formatted: %s\n' "${bad[@]}"
    echo "format: FAILED for ${#bad[@]} of ${#files[@]} files" \
      "(see: clang-format --dry-run FILE; fix: clang-format -i FILE)"
    failed=$((failed + 1))
  fi
}

# setup_and_test NAME [meson setup options...]
setup_and_test() {
  local dir=$1 rc=0
  shift
  section "$dir: configure and build"
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" || rc=$?
  else
    meson setup "$dir" "$@" || rc=$?
  fi
  if [ $rc -eq 0 ]; then
    ninja -C "$dir" || rc=$?
  fi
  if [ $rc -ne 0 ]; then
    echo "run-tests.sh: $dir: configure/build FAILED (status $rc)"
    failed=$((failed + 1))
    return
  fi
  section "$dir: meson test"
  rm -f "$dir/meson-logs/testlog.json"
  local mult=1
  [ "$dir" = build-asan ] && mult=2
  meson test -C "$dir" --print-errorlogs --timeout-multiplier "$mult" ||
    echo "run-tests.sh: $dir: meson test reported failures"
  count_results "$dir/meson-logs/testlog.json"
  if [ "$dir" = build-asan ]; then
    # A small machine gets one HTTP worker by default: the suites that
    # move data run again on four, under the sanitizers.
    section "$dir: meson test, HIPOBJ_IO_THREADS=4"
    rm -f "$dir/meson-logs/testlog.json"
    HIPOBJ_IO_THREADS=4 meson test -C "$dir" --print-errorlogs \
      --timeout-multiplier "$mult" engine server file-memory s3-server \
      gpu-staging gpu-mock-cuda gpu-mock-hip gpu-multi-fake \
      gpu-multi-mock-cuda ||
      echo "run-tests.sh: $dir: meson test (4 I/O threads) reported failures"
    count_results "$dir/meson-logs/testlog.json"
  fi
}

check_format

# -Ddocs=enabled: the API reference is generated in the build (Doxygen,
# any warning an error).
setup_and_test build -Ddc=enabled -Dtests=enabled -Ddocs=enabled

# The Python package as users install it: pip (meson-python, no network)
# into a venv over Debian's packages, then the host and safetensors tests
# against that install instead of the build tree (the meson suite python
# covers the rest).
python_wheel() {
  section "python: pip install ./python into a venv, tests against it"
  local venv=build/pyvenv log=build/pyvenv-install.log
  if ! /usr/bin/python3 -c 'import mesonpy, venv, ensurepip' 2>/dev/null; then
    echo "python: skipped: python3-mesonpy or python3-venv is not installed"
    skipped=$((skipped + 1))
    return
  fi
  local rc=0
  # (set -e stops at no step of an if's condition.)
  if rm -rf "$venv" && /usr/bin/python3 -m venv --system-site-packages "$venv" &&
    "$venv/bin/pip" install --no-index --no-build-isolation ./python >"$log" 2>&1 &&
    (cd / && "$root/$venv/bin/python" -c \
      'import hipobj, sys; sys.exit(not hipobj.__file__.startswith(sys.prefix))') &&
    HIPOBJ_TEST_SERVER=build/tests/server/hipobj-server "$venv/bin/python" \
      python/tests/run.py python/tests/test_client.py \
      python/tests/test_safetensors.py -q; then
    rc=0
  else
    rc=$?
  fi
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
  else
    echo "run-tests.sh: python: the installed package FAILED (status $rc; pip's log: $log)"
    tail -20 "$log"
    failed=$((failed + 1))
  fi
}
python_wheel

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
setup_and_test build-asan -Ddc=enabled -Dtests=enabled -Ddocs=disabled \
  -Db_sanitize=address,undefined -Db_lundef=false

# Each harness counts as one test: its seeds and regression inputs once,
# then FUZZ_SECONDS (30) of fuzzing, any crash, leak or UBSan report a
# failure. run.sh ends with "fuzz-summary: P passed, F failed, S skipped".
run_fuzz() {
  section "fuzz (tests/fuzz/run.sh, ${FUZZ_SECONDS:-30} s per harness)"
  local log="${FUZZ_BUILD:-build-fuzz}/run-tests.log" summary p f s
  mkdir -p "$(dirname "$log")"
  bash tests/fuzz/run.sh 2>&1 | tee "$log" || true
  summary=$(grep '^fuzz-summary:' "$log" | tail -1)
  if [ -z "$summary" ]; then
    echo "run-tests.sh: fuzz: no summary line: counting one failure"
    failed=$((failed + 1))
    return
  fi
  read -r p f s < <(echo "$summary" | sed 's/[^0-9]\+/ /g')
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
}
run_fuzz

# The Debian packages built, lintian-checked, installed, and the README's
# example built against them with pkg-config and run (needs root: skipped
# otherwise).
run_packages() {
  section "Debian packages (tests/package-check.sh)"
  local rc=0
  bash tests/package-check.sh || rc=$?
  case $rc in
  0) passed=$((passed + 1)) ;;
  77) skipped=$((skipped + 1)) ;;
  *)
    echo "run-tests.sh: packages: FAILED (status $rc)"
    failed=$((failed + 1))
    ;;
  esac
}
run_packages

section "summary ($((SECONDS - start)) s)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
