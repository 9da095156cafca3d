#!/bin/bash
# run.sh - builds the libFuzzer harnesses of tests/fuzz/ with clang
# (-fsanitize=fuzzer,address,undefined, UBSan fatal) in their own build
# directory, then for each harness: runs every input of its corpus once
# (seeds and the regression inputs of crashes found before), and fuzzes it
# for FUZZ_SECONDS (default 30). Any crash, leak, timeout or UBSan report
# fails the harness; its input is kept in the build directory, to be added
# to tests/fuzz/corpus/HARNESS/ (as regress-NAME) with its fix.
#
# The normal builds never need clang: without it (or without libFuzzer)
# this exits 77 (skipped) saying why.
#
# Environment: FUZZ_SECONDS (per harness), FUZZ_BUILD (default
# build-fuzz/), FUZZ_CC (default clang), FUZZ_ONLY (names, space
# separated). The last line is "fuzz-summary: P passed, F failed, S
# skipped", which tests/run-tests.sh adds to its totals.
# Usage: tests/fuzz/run.sh [harness...]
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here="$root/tests/fuzz"
cc=${FUZZ_CC:-clang}
secs=${FUZZ_SECONDS:-30}
out=${FUZZ_BUILD:-$root/build-fuzz}
all=(xml_client xml_server sigv4_uri server_req chunked rdma ranges xmlw
  frame)
if [ $# -gt 0 ]; then
  harnesses=("$@")
elif [ -n "${FUZZ_ONLY:-}" ]; then
  read -r -a harnesses <<<"$FUZZ_ONLY"
else
  harnesses=("${all[@]}")
fi

skip() {
  echo "fuzz: skipped: $*"
  echo "fuzz-summary: 0 passed, 0 failed, 1 skipped"
  exit 77
}

command -v "$cc" >/dev/null 2>&1 ||
  skip "$cc not found (Debian: apt-get install clang libclang-rt-14-dev)"
mkdir -p "$out/obj" "$out/work" "$out/artifacts" || exit 1
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n'`
  `'{(void)d;(void)n;return 0;}\n' >"$out/probe.c"
"$cc" -fsanitize=fuzzer,address,undefined "$out/probe.c" -o "$out/probe" \
  >"$out/probe.log" 2>&1 ||
  skip "$cc cannot link libFuzzer (Debian: libclang-rt-14-dev): $(head -3 "$out/probe.log")"
for pc in libxml-2.0 libcrypto libmicrohttpd; do
  pkg-config --exists "$pc" || skip "pkg-config does not know $pc"
done

# ---- build ------------------------------------------------------------------

# <hipobj.h> includes hipobj/version.h, which meson generates from
# version.h.in; this build has no meson, so it makes its own copy from the
# version in meson.build's project() call.
ver=$(sed -n "s/^ *version *: *'\([0-9]*\.[0-9]*\.[0-9]*\)'.*/\1/p" \
  "$root/meson.build" | head -1)
[ -n "$ver" ] || { echo "fuzz: no version in meson.build"; exit 1; }
IFS=. read -r vmaj vmin vpat <<<"$ver"
mkdir -p "$out/include/hipobj" || exit 1
sed -e "s/@HIPOBJ_VERSION@/$ver/" -e "s/@HIPOBJ_VERSION_MAJOR@/$vmaj/" \
  -e "s/@HIPOBJ_VERSION_MINOR@/$vmin/" -e "s/@HIPOBJ_VERSION_PATCH@/$vpat/" \
  "$root/include/hipobj/version.h.in" >"$out/include/hipobj/version.h.new" &&
  { cmp -s "$out/include/hipobj/version.h.new" "$out/include/hipobj/version.h" ||
    mv "$out/include/hipobj/version.h.new" "$out/include/hipobj/version.h"; }
rm -f "$out/include/hipobj/version.h.new"

san=(-fsanitize=address,undefined -fno-sanitize-recover=all)
cflags=(-std=c11 -D_GNU_SOURCE -DHIPOBJ_BUILDING -g -O1
  -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter
  "${san[@]}" -I"$root/include" -I"$out/include" -I"$root"
  $(pkg-config --cflags libxml-2.0 libmicrohttpd))
libs=($(pkg-config --libs libxml-2.0 libcrypto) -lpthread)
# The code under test: every file of the library's and the server's that
# the harnesses reach, with coverage for the fuzzer.
srcs=(src/base/buf.c src/base/strutil.c src/base/error.c src/base/codec.c
  src/base/uri.c src/base/crc64nvme.c s3/crypto.c s3/sigv4.c s3/xml.c
  s3/xml_lists.c s3/xml_doc.c s3/xml_write.c s3/xml_server.c s3/http_frame.c
  rdma/token.c rdma/rc_check.c src/plan.c src/size.c tests/server/reqparse.c
  tests/server/xmlw.c tests/server/chunked.c)

build_start=$SECONDS
# A header newer than the last build rebuilds everything (cheap enough).
stamp="$out/obj/.stamp"
if [ -f "$stamp" ] && [ -n "$(find "$root/src" "$root/s3" "$root/rdma" \
  "$root/include" "$out/include" "$root/tests/server" -name '*.h' -newer "$stamp" |
  head -1)" ]; then
  rm -f "$out"/obj/*.o
fi
objs=()
for s in "${srcs[@]}"; do
  o="$out/obj/$(echo "$s" | tr / _).o"
  if [ ! -f "$o" ] || [ "$root/$s" -nt "$o" ]; then
    "$cc" "${cflags[@]}" -fsanitize=fuzzer-no-link -c "$root/$s" -o "$o" ||
      {
        echo "fuzz: cannot compile $s"
        echo "fuzz-summary: 0 passed, 1 failed, 0 skipped"
        exit 1
      }
  fi
  objs+=("$o")
done
touch "$stamp"
rm -f "$out/libunder.a"
ar rcs "$out/libunder.a" "${objs[@]}" || exit 1

passed=0
failed=0
built=()
declare -A rate
for h in "${harnesses[@]}"; do
  if "$cc" "${cflags[@]}" -fsanitize=fuzzer "$here/fuzz_$h.c" \
    "$out/libunder.a" "${libs[@]}" -o "$out/fuzz_$h"; then
    built+=("$h")
  else
    echo "fuzz: $h: cannot build"
    failed=$((failed + 1))
  fi
done
echo "fuzz: built in $((SECONDS - build_start)) s"

# ---- run --------------------------------------------------------------------

# Per harness: the largest input worth trying (XML pages need more room).
max_len() {
  case $1 in
  xml_client | xml_server) echo 65536 ;;
  chunked | frame) echo 16384 ;;
  *) echo 4096 ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for h in "${built[@]}"; do
  bin="$out/fuzz_$h"
  corpus="$here/corpus/$h"
  work="$out/work/$h"
  log="$out/$h.log"
  mkdir -p "$corpus" "$work"
  dict=()
  [ -f "$here/$h.dict" ] && dict=(-dict="$here/$h.dict")
  echo "== fuzz $h: its corpus once, then ${secs} s"
  # Every seed and regression input, once: a fix that regresses fails
  # here before any fuzzing.
  if ! "$bin" -runs=0 -artifact_prefix="$out/artifacts/$h-" "${dict[@]}" \
    "$corpus" >"$log" 2>&1; then
    echo "fuzz: $h: an input of tests/fuzz/corpus/$h fails (log $log):"
    grep -E 'ERROR|runtime error|property failed|Test unit written' "$log" |
      head -5 | grep . || tail -5 "$log"
    failed=$((failed + 1))
    continue
  fi
  if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$(max_len "$h")" -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$h-" "${dict[@]}" "$work" "$corpus" \
    >>"$log" 2>&1; then
    passed=$((passed + 1))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    rate[$h]="$runs runs, $eps exec/s, $cov"
    echo "fuzz: $h: OK (${rate[$h]})"
  else
    failed=$((failed + 1))
    echo "fuzz: $h: FAILED; the log is $log:"
    grep -E 'ERROR|runtime error|property failed|SUMMARY' "$log" | head -8 |
      grep . || tail -5 "$log"
    ls "$out/artifacts/$h-"* 2>/dev/null | sed 's/^/  input: /'
    echo "  add the input as tests/fuzz/corpus/$h/regress-NAME with its fix"
  fi
done
echo "fuzz-summary: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
