#!/bin/bash
# put-cpu.sh - where the CPU of a `hipobj cp` PUT goes: the server's and
# the client's CPU seconds (from /proc and GNU time) for a PUT of a file,
# with each --integrity in turn (none: UNSIGNED-PAYLOAD; auto: CRC32C part
# checksums where the server checks them; sha256: signed payloads). On a machine where client and server share
# few cores, their sum bounds the throughput: cores / (server + client).
#   tests/bench/put-cpu.sh SERVER_BIN HIPOBJ_CLI [SIZE] [RUNS]
set -euo pipefail
server=$1 cli=$2 size=${3:-1GiB} runs=${4:-2}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bytes=$(to_bytes "$size") || { echo "put-cpu.sh: bad size $size" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "put-cpu.sh: needs GNU time" >&2; exit 2; }
work=$(mktemp -d /tmp/hipobj-putcpu.XXXXXX)
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
export AWS_ACCESS_KEY_ID=HIPOBJPUTCPUKEY00001
export AWS_SECRET_ACCESS_KEY=hipobjPutCpuSecret00000000000000000000001
start_server "$server" "$work" || exit 1
H=("$cli" --endpoint-url "$server_url" -q)
"${H[@]}" mb s3://putcpu >/dev/null
head -c "$bytes" /dev/urandom >"$work/data"
tck=$(getconf CLK_TCK)
server_cpu() { awk -v t="$tck" '{print ($14 + $15) / t}' "/proc/$server_pid/stat"; }
echo "put-cpu: $(nproc) CPUs, $size, server $server_url"
printf '%-9s %8s %12s %12s %14s\n' integrity wall_s server_cpu_s client_cpu_s "cores/(s+c)"
for ((i = 0; i < runs; i++)); do
  for mode in none auto sha256; do
    flag=(--integrity "$mode")
    a=$(server_cpu) t0=$EPOCHREALTIME
    /usr/bin/time -f '%U %S' -o "$work/time" "${H[@]}" "${flag[@]}" cp "$work/data" s3://putcpu/obj
    t1=$EPOCHREALTIME b=$(server_cpu)
    read -r u s <"$work/time"
    awk -v m="$mode" -v w="$(awk "BEGIN {print $t1 - $t0}")" -v sc="$(awk "BEGIN {print $b - $a}")" \
      -v cc="$(awk "BEGIN {print $u + $s}")" -v n="$(nproc)" -v by="$bytes" \
      'BEGIN {printf "%-9s %8.2f %12.2f %12.2f %11.0f MB/s\n", m, w, sc, cc, n / (sc + cc) * by / 1e6}'
  done
done
