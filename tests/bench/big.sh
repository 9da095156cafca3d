#!/bin/bash
# tests/bench/big.sh - the bounded-memory benchmark of issue 6: generates a
# large file of deterministic data (default 10 GiB: AES-CTR keystream of a
# fixed key, `openssl enc` over /dev/zero), PUTs it with `hipobj cp`, GETs
# it back, checks sha256 (the object read back equals the file, and the
# stored object equals it too), and reports per direction the throughput
# and the peak RSS (GNU time's "Maximum resident set size"), compared with
# the goal "peak RSS <= staging pool + 64 MiB" (PASS/MISS). Against
# hipobj-server on loopback. A benchmark, not a test: it fails only when a
# transfer fails or the bytes differ. Big files are deleted on exit.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: tests/bench/big.sh [--size 10GiB] [--build DIR] [--dir DIR]
  --size SIZE  file size (default 10GiB); needs about 3x SIZE of free disk
  --build DIR  meson build directory (default build)
  --dir DIR    where the file, the server's root and the copy go
               (default: a temp directory under /var/tmp)
EOF
}

die() {
  echo "big.sh: $*" >&2
  exit 1
}

size_arg=10GiB build=build parent=/var/tmp
while [ $# -gt 0 ]; do
  case "$1" in
  --size | --build | --dir)
    [ $# -ge 2 ] || die "$1 needs a value"
    case "$1" in --size) size_arg=$2 ;; --build) build=$2 ;; --dir) parent=$2 ;; esac
    shift 2
    ;;
  -h | --help) usage && exit 0 ;;
  *) usage >&2 && die "unknown argument '$1'" ;;
  esac
done

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # to_bytes
size=$(to_bytes "$size_arg") || die "--size: '$size_arg' is not a size"

repo=$(cd "$(dirname "$0")/../.." && pwd)
case "$build" in /*) ;; *) build=$repo/$build ;; esac
HIPOBJ=$build/examples/hipobj
SERVER=$build/tests/server/hipobj-server
[ -x "$HIPOBJ" ] && [ -x "$SERVER" ] || die "build $build first (ninja -C $build)"
[ -x /usr/bin/time ] || die "missing GNU time (apt-get install time)"
for b in openssl sha256sum head; do command -v $b >/dev/null || die "missing $b"; done

# The staging pool, given to hipobj explicitly: the library's default
# grows with the machine's cores (src/config.c), and the goal allows
# 64 MiB on top of whatever pool was used. 64 MiB is the default on a
# machine with up to 9 cores.
pool_mib=64
goal_kib=$(((pool_mib + 64) * 1024))

need_kib=$((size / 1024 * 3))
free_kib=$(df -Pk "$parent" | awk 'NR==2 {print $4}')
[ "$free_kib" -gt "$need_kib" ] ||
  die "$parent has $((free_kib >> 20)) GiB free, needs $((need_kib >> 20)) GiB"

tmp=$(mktemp -d "$parent/hipobj-big.XXXXXX")
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export AWS_ACCESS_KEY_ID=bigbenchkey AWS_SECRET_ACCESS_KEY=bigbenchsecret
export AWS_REGION=us-east-1
"$SERVER" --root "$tmp/root" --listen 127.0.0.1:0 --log-level warn \
  >"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!
for _ in $(seq 100); do
  grep -q "listening on" "$tmp/server.out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.err" >&2; die "hipobj-server exited"; }
  sleep 0.1
done
url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$tmp/server.out")
[ -n "$url" ] || die "hipobj-server did not start"
H=("$HIPOBJ" --endpoint-url "$url" --staging-pool "${pool_mib}MiB")
"${H[@]}" mb s3://big-bench >/dev/null

echo "== generating $size_arg ($size bytes) of AES-CTR keystream"
openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0f \
  -iv 00000000000000000000000000000000 </dev/zero 2>/dev/null |
  head -c "$size" >"$tmp/src" || true # openssl ends on SIGPIPE
[ "$(stat -c %s "$tmp/src")" = "$size" ] || die "could not generate $size bytes"
want=$(sha256sum "$tmp/src" | cut -d' ' -f1)
echo "   sha256 $want"

# Runs a hipobj command under GNU time; sets secs and rss_kib.
timed() {
  sync
  /usr/bin/time -v -o "$tmp/time.txt" "${H[@]}" "$@" >/dev/null
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {
    n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$tmp/time.txt")
  rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt")
}

verdict() {
  [ "$1" -le "$goal_kib" ] && echo PASS || echo MISS
}

report() { # direction
  local mbs
  mbs=$(awk -v b="$size" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? b / s / 1e6 : 0) }')
  printf '%-4s %8.1f s %7s MB/s   peak RSS %6d MiB   goal <= %d MiB: %s\n' \
    "$1" "$secs" "$mbs" $((rss_kib / 1024)) $((goal_kib / 1024)) "$(verdict "$rss_kib")"
}

echo "== PUT (hipobj cp file -> s3)"
timed cp "$tmp/src" s3://big-bench/big
report PUT
put_line=$(report PUT)
# The stored object (the server keeps objects as files under its root).
stored=$(find "$tmp/root" -type f -size "${size}c" -print -quit 2>/dev/null || true)
if [ -n "$stored" ]; then
  got=$(sha256sum "$stored" | cut -d' ' -f1)
  [ "$got" = "$want" ] || die "the stored object's sha256 is $got, not $want"
  echo "   stored object sha256 matches"
fi

echo "== GET (hipobj cp s3 -> file)"
timed cp s3://big-bench/big "$tmp/dst"
report GET
get_line=$(report GET)
got=$(sha256sum "$tmp/dst" | cut -d' ' -f1)
[ "$got" = "$want" ] || die "the downloaded file's sha256 is $got, not $want"
echo "   downloaded file sha256 matches"

echo
echo "== summary ($size_arg, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo "$put_line"
echo "$get_line"
