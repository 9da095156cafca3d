#!/bin/bash
# file-get-sweep.sh - a GET of one object into a tmpfs file, the ways the
# library can write it, alternating: pwrite through the staging pool
# (HIPOBJ_FILE_MAP=0) and mapped part windows (HIPOBJ_FILE_MAP=1) with N
# writers faulting a file's pages in at once (HIPOBJ_FILE_POPULATE=N).
# Prints the median MB/s and client CPU s/GiB (user+sys of `hipobj cp`)
# of each. Against hipobj-server --storage memory on 127.0.0.1.
# Usage: tests/bench/file-get-sweep.sh [--build DIR] [--size 1GiB]
#        [--runs 5] [--populate 1,2,4,8,16] [--tmp /dev/shm]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/tests/bench/lib.sh" # to_bytes, start_server
build=$root/build size_arg=1GiB runs=5 fills=1,2,4,8,16 tmpbase=/dev/shm
while [ $# -gt 0 ]; do
  case "$1" in
  --build) build=$2 ;; --size) size_arg=$2 ;; --runs) runs=$2 ;;
  --populate) fills=$2 ;; --tmp) tmpbase=$2 ;;
  *) echo "usage: $0 [--build DIR] [--size S] [--runs N] [--populate A,B] [--tmp DIR]" >&2 && exit 2 ;;
  esac
  shift 2
done
size=$(to_bytes "$size_arg")
tmp=$(mktemp -d "$tmpbase/hipobj-fgs.XXXXXX")
srv_pid=""
trap '[ -z "$srv_pid" ] || kill "$srv_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
AK=sweepak SK=sweep-secret-0123456789
start_server "$build/tests/server/hipobj-server" "$tmp" --storage memory \
  --access-key $AK --secret-key $SK || exit 1
# shellcheck disable=SC2154 # set by start_server (lib.sh)
srv_pid=$server_pid
export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK AWS_REGION=us-east-1
H=("$build/examples/hipobj" --endpoint-url "$server_url" -q)
"${H[@]}" mb s3://sweep
head -c "$size" /dev/urandom >"$tmp/data"
"${H[@]}" cp "$tmp/data" s3://sweep/src
want=$(sha256sum <"$tmp/data")
rm -f "$tmp/data"
IFS=, read -r -a ways <<<"pwrite,$fills"
for run in $(seq "$runs"); do
  for w in "${ways[@]}"; do
    env=(HIPOBJ_FILE_MAP=1 HIPOBJ_FILE_POPULATE="$w")
    [ "$w" = pwrite ] && env=(HIPOBJ_FILE_MAP=0)
    rm -f "$tmp/out"
    /usr/bin/time -f "%e %U %S" -o "$tmp/t" env "${env[@]}" "${H[@]}" cp s3://sweep/src "$tmp/out"
    [ "$run" = 1 ] && { [ "$(sha256sum <"$tmp/out")" = "$want" ] || { echo "$w: wrong bytes"; exit 1; }; }
    echo "$w $(cat "$tmp/t")" >>"$tmp/results"
  done
done
rm -f "$tmp/out"
echo "GET of $size_arg into a file in $tmpbase, $runs alternating runs, $(nproc) CPUs"
med() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for w in "${ways[@]}"; do
  t=$(awk -v w="$w" '$1 == w { print $2 }' "$tmp/results" | med)
  c=$(awk -v w="$w" '$1 == w { print $3 + $4 }' "$tmp/results" | med)
  name=$w && [ "$w" = pwrite ] || name=map/$w
  awk -v n="$name" -v t="$t" -v c="$c" -v size="$size" 'BEGIN {
    printf "%-8s %8.1f MB/s  %6.3f CPU s/GiB\n", n, size / t / 1e6, c / (size / 1073741824) }'
done
