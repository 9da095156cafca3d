#!/bin/bash
# small-split.sh - where a serial small GET's time goes on this machine:
# hipobj (get_loop, the library into host memory) and curl (one process,
# -K, the same URL N times) against three answerers in turn, rounds
# alternating so the machine's drift falls on all of them alike:
#   poll    answerer --poll: a stored answer at once, no wake-up
#   sleep   answerer: the same, its thread asleep between requests
#   server  hipobj-server --storage memory, the server compare.sh uses
# poll is each client's own ceiling, sleep minus poll a server's wake-up,
# server minus sleep the server's own work on the request's path. Two
# more on request, same rounds:
#   spoll   hipobj-server --storage memory --busy-poll US (--server-poll US)
#   other   another hipobj-server build, memory mode (--other-server BIN):
#           an A/B of a server change within one run
# Beside them, `hipobj bench --small` against the server, as compare.sh
# runs it. Prints requests/s per client and answerer, each round, and the
# medians
# (tests/bench/README.md, "What a serial GET costs the client").
# Usage: tests/bench/small-split.sh [--build DIR | --bin DIR] [--n N]
#                                   [--rounds R] [--size BYTES] [--tmp DIR]
#                                   [--server-poll US] [--other-server BIN]
#   --bin DIR  programs in one folder (.dev/bin on the device machine)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/tests/bench/lib.sh" # start_server
build=$root/build bin="" n=5000 rounds=3 size=4096 tmpbase=/dev/shm
server_poll="" other=""
while [ $# -gt 0 ]; do
  case "$1" in
  --build) build=$2 ;; --bin) bin=$2 ;; --n) n=$2 ;; --rounds) rounds=$2 ;;
  --size) size=$2 ;; --tmp) tmpbase=$2 ;; --server-poll) server_poll=$2 ;;
  --other-server) other=$2 ;;
  *) echo "usage: $0 [--build DIR | --bin DIR] [--n N] [--rounds R] [--size BYTES] [--tmp DIR]" \
    "[--server-poll US] [--other-server BIN]" >&2 && exit 2 ;;
  esac
  shift 2
done
for v in "$n" "$rounds" "$size"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "small-split.sh: $v: a positive count" >&2 && exit 2; }
done
if [ -n "$bin" ]; then
  SERVER=$bin/hipobj-server CLI=$bin/hipobj ANSWERER=$bin/answerer GETLOOP=$bin/get_loop
else
  SERVER=$build/tests/server/hipobj-server CLI=$build/examples/hipobj
  ANSWERER=$build/tests/answerer GETLOOP=$build/tests/get_loop
fi
for p in "$SERVER" "$CLI" "$ANSWERER" "$GETLOOP" ${other:+"$other"}; do
  [ -x "$p" ] || { echo "small-split.sh: $p is missing" >&2 && exit 2; }
done
command -v curl >/dev/null || { echo "small-split.sh: no curl" >&2 && exit 77; }

tmp=$(mktemp -d "$tmpbase/hipobj-split.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
AK=splitak SK=split-secret-0123456789
export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK AWS_REGION=us-east-1
# A memory-mode server in DIR: NAME BIN DIR [ARGS...]; its URL in url[NAME].
declare -A url
serve() {
  local name=$1 bin=$2 dir=$3
  shift 3
  mkdir -p "$dir"
  start_server "$bin" "$dir" --storage memory --access-key $AK --secret-key $SK "$@" || exit 1
  # shellcheck disable=SC2154 # both set by start_server (lib.sh)
  pids+=("$server_pid") && url[$name]=$server_url
}
modes=(poll sleep server)
serve server "$SERVER" "$tmp/server"
if [ -n "$server_poll" ]; then
  serve spoll "$SERVER" "$tmp/spoll" --busy-poll "$server_poll" && modes+=(spoll)
fi
[ -z "$other" ] || { serve other "$other" "$tmp/other" && modes+=(other); }
srv_url=${url[server]}
head -c "$size" /dev/urandom >"$tmp/obj"
for m in "${modes[@]:2}"; do
  "$CLI" --endpoint-url "${url[$m]}" -q mb s3://split
  "$CLI" --endpoint-url "${url[$m]}" -q cp "$tmp/obj" s3://split/obj
done
C=(curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK"
  -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
# The answerers' stored answer: the server's own, headers and all.
"${C[@]}" -i "$srv_url/split/obj" >"$tmp/answer"

# A free loopback port for each answerer: bind to 0, read it back.
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
for mode in poll sleep; do
  port=$(free_port)
  extra=()
  [ "$mode" = poll ] && extra=(--poll)
  "$ANSWERER" "$tmp/answer" "$port" "${extra[@]}" 2>"$tmp/answerer-$mode.log" &
  pids+=($!)
  url[$mode]=http://127.0.0.1:$port
  for _ in $(seq 50); do
    curl -s -o /dev/null "${url[$mode]}/split/obj" && break
    sleep 0.1
  done
done

for mode in "${modes[@]}"; do
  for _ in $(seq "$n"); do printf 'url = "%s/split/obj"\noutput = "/dev/null"\n' "${url[$mode]}"; done \
    >"$tmp/curl-$mode.cfg"
done
now_ns() { date +%s%N; }
echo "small-split.sh: $n serial GETs of $size bytes per client and answerer, $rounds rounds"
for r in $(seq "$rounds"); do
  for mode in "${modes[@]}"; do
    # get_loop: 1 untimed and 3 timed rounds; their median, as bench and
    # curl get no best-of-three (the best made get_loop look up to a tenth
    # faster than `hipobj bench --small` on the 2-vCPU VM).
    h=$(AWS_ENDPOINT_URL=${url[$mode]} "$GETLOOP" split obj "$n" |
      awk '{ print $(NF - 1) }' | sort -n | sed -n 2p)
    t0=$(now_ns)
    "${C[@]}" -K "$tmp/curl-$mode.cfg"
    c=$((n * 1000000000 / ($(now_ns) - t0)))
    printf 'round %d %-6s hipobj %6d req/s  curl %6d req/s  ratio %.2f\n' "$r" "$mode" "$h" "$c" \
      "$(awk -v a="$h" -v b="$c" 'BEGIN { print a / b }')"
  done
  # compare.sh's hipobj small row: `hipobj bench --small` (its own PUTs,
  # then timed GETs of 1000 objects in turn; the median of 3 runs).
  b=$("$CLI" --endpoint-url "$srv_url" bench --small 1000 --small-size "$size" --runs 3 --ops get |
    awk '$1 == "small-get" { print $NF }')
  printf 'round %d bench  hipobj %6d req/s (hipobj bench --small 1000 against server)\n' "$r" "$b" >&2
done | tee "$tmp/rounds"
echo "medians over the rounds (requests/s; microseconds per GET):"
awk '{ h[$3] = h[$3] " " $5; c[$3] = c[$3] " " $8 }
  function med(s,   a, k, i, j, t) {
    k = split(s, a, " ")
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    k = split(modes, m, " ")
    for (i = 1; i <= k; i++) {
      x = med(h[m[i]]); y = med(c[m[i]])
      printf "  %-6s hipobj %6d (%5.1f us)  curl %6d (%5.1f us)  ratio %.2f\n", m[i], x, 1e6 / x, y, 1e6 / y, x / y
    }
  }' modes="${modes[*]}" "$tmp/rounds"
