#!/bin/bash
# cp-sweep.sh - `hipobj cp` of one file (GET and PUT) against a local
# hipobj-server, over a grid of --concurrency x --staging-pool x payload
# signing (and --io-threads): which settings a machine wants, and what the
# defaults give.
#   tests/bench/cp-sweep.sh SERVER_BIN HIPOBJ_CLI [options]
#     --size 1GiB  --runs 3  --tmp DIR (default /tmp; files and server root)
#     --concurrency "default 8 16 32"  --pool "default 32MiB 128MiB"
#     --io-threads "default 1 4"
# Prints one line per setting: the median MB/s of the runs and the
# [min .. max]; every download is compared with the source (cmp).
set -euo pipefail

server=$1 cli=$2
shift 2
size=1GiB runs=3 tmpbase=/tmp concs="default 8 16 32" pools="default 32MiB 128MiB"
iots=default
while [ $# -gt 0 ]; do
  case "$1" in
  --size) size=$2 ;; --runs) runs=$2 ;; --tmp) tmpbase=$2 ;;
  --concurrency) concs=$2 ;; --pool) pools=$2 ;; --io-threads) iots=$2 ;;
  *) echo "cp-sweep.sh: unknown argument $1" >&2 && exit 2 ;;
  esac
  shift 2
done

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bytes=$(to_bytes "$size") || { echo "cp-sweep.sh: --size: '$size' is not a size" >&2 && exit 2; }
work=$(mktemp -d "$tmpbase/hipobj-sweep.XXXXXX")
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
export AWS_ACCESS_KEY_ID=HIPOBJSWEEPKEY000001
export AWS_SECRET_ACCESS_KEY=hipobjSweepSecret00000000000000000000001
start_server "$server" "$work" || exit 1
url=$server_url threads=$(nproc)
[ "$threads" -ge 4 ] || threads=4
head -c "$bytes" /dev/urandom >"$work/src"
"$cli" --endpoint-url "$url" -q mb s3://sweep
"$cli" --endpoint-url "$url" -q --unsigned-payload cp "$work/src" s3://sweep/src
echo "cp-sweep: $(nproc) CPUs, $size, $runs run(s), files in $tmpbase ($(stat -f -c %T "$work")), server --threads $threads"

one() { # OP OPTS... -> seconds
  local op=$1 t0 t1
  shift
  rm -f "$work/dst"
  t0=$EPOCHREALTIME
  if [ "$op" = get ]; then
    "$cli" --endpoint-url "$url" -q "$@" cp s3://sweep/src "$work/dst"
    t1=$EPOCHREALTIME
    cmp -s "$work/src" "$work/dst" || { echo "cp-sweep: GET returned other bytes" >&2; exit 1; }
  else
    "$cli" --endpoint-url "$url" -q "$@" cp "$work/src" s3://sweep/put
    t1=$EPOCHREALTIME
  fi
  python3 -c "print($t1 - $t0)"
}

for io in $iots; do
 for c in $concs; do
  for p in $pools; do
    opts=()
    [ "$io" = default ] || opts+=(--io-threads "$io")
    [ "$c" = default ] || opts+=(--concurrency "$c")
    [ "$p" = default ] || opts+=(--staging-pool "$p")
    for op in get put put-u; do
      extra=()
      [ "$op" = put-u ] && extra=(--unsigned-payload)
      secs=()
      for ((r = 0; r < runs; r++)); do
        secs+=("$(one "${op%-u}" "${opts[@]}" "${extra[@]}")")
      done
      python3 - "$op" "$io" "$c" "$p" "$bytes" "${secs[@]}" <<'EOF'
import statistics, sys
op, io, c, p, n = sys.argv[1:5] + [int(sys.argv[5])]
r = [n / float(s) / 1e6 for s in sys.argv[6:]]
print("%-6s io %-8s conc %-8s pool %-8s %8.1f MB/s  [%.1f .. %.1f]" % (
    op, io, c, p, statistics.median(r), min(r), max(r)))
EOF
    done
  done
 done
done
