#!/bin/bash
# tests/bench/compare.sh - hipobj against other S3 clients, on one server in
# one run: a big GET and PUT (default 1 GiB) and N small (4 KiB) GETs with
#   hipobj   the CLI (`hipobj cp`; `hipobj bench --small N` for small GETs)
#            (default --integrity auto: CRC32C part checksums where the
#            server checks them, else signed SHA-256)
#   hipobj-s the same with --integrity sha256, PUT only: every payload's
#            SHA-256 signed
#   hipobj-u the same with --unsigned-payload, PUT only: what curl and
#            aws-c-s3 send, so their PUTs compare like for like
#   hipobj-p the same with HIPOBJ_FILE_MAP=0, GET and PUT: files through
#            pwrite/pread and staging chunks even where hipobj would map
#            them (tmpfs with 8 CPUs or more)
#   awscrt   aws-c-s3 through Debian's python3-awscrt (awscrt_cp.py)
#   curl     --aws-sigv4, one stream; one process for all small GETs
#   aws      Debian's awscli v2 (/usr/bin/aws), `aws s3 cp`
#   s3cmd    `s3cmd get/put`
# and memory to memory (`hipobj bench`, `awscrt_cp.py mem`; PUT from and
# GET into the process's memory, each checked byte for byte) beside the
# file rows. The small GETs run once more with 16 in flight, into files
# (hipobj cp --recursive --jobs 16, curl --parallel --parallel-max 16,
# awscrt_cp.py get-many --jobs 16): a loader's many small objects rather
# than one request's latency. The tools take turns run by run (the order rotates), every
# download is checked by sha256 (uploads too, read back with curl), and the
# table gives medians, the ratio hipobj/tool, client CPU s/GiB and peak
# RSS. --server memory is hipobj-server --storage memory (objects on tmpfs,
# no fsync, no MD5): a server that costs less than the clients. Loopback only; servers
# and temp files are removed on exit. See tests/bench/README.md.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: tests/bench/compare.sh [--server hipobj|memory|rgw] [--size 1GiB] [--runs 3]
                              [--small-count 1000] [--build DIR] [--tmp DIR]
                              [--server-poll US]
                              [--tools hipobj,hipobj-s,hipobj-u,hipobj-p,awscrt,curl,aws,s3cmd]
  --server hipobj  build/tests/server/hipobj-server on 127.0.0.1:80 (default)
  --server memory  the same with --storage memory: objects in RAM (tmpfs),
                   no fsync, no MD5 ETags, capped at 4 x --size + 1 GiB;
                   --server-poll US gives it --busy-poll US (after the
                   last answer a thread polls US for the next request
                   instead of sleeping; default 0: off, as it slows big
                   transfers, see tests/bench/README.md)
  --server rgw     tests/ceph-rgw.sh on 127.0.0.1:18080 (RGW_ACCESS_KEY /
                   RGW_SECRET_KEY); awscrt reaches it through a forwarder
                   on :80 (awscrt 0.16 only connects to port 80)
  --build DIR      meson build directory with examples/hipobj (default build)
  --tmp DIR        where the data, downloads and hipobj-server's root go
                   (default /tmp; /dev/shm keeps the server off the disk)
The peer tools are Debian's (/usr/bin/python3 with awscrt, /usr/bin/aws,
s3cmd on PATH, /usr/bin/time); HIPOBJ_COMPARE_PY, HIPOBJ_COMPARE_AWS and
HIPOBJ_COMPARE_TIME name others (tests/bench/peers-env.sh sets them).
EOF
}

die() {
  echo "compare.sh: $*" >&2
  exit 1
}

server=hipobj size_arg=1GiB runs=3 small=1000 build=build tmpbase=/tmp
server_poll=0
tools_arg=hipobj,hipobj-s,hipobj-u,awscrt,curl,aws,s3cmd
while [ $# -gt 0 ]; do
  case "$1" in
  --server | --size | --runs | --small-count | --build | --tools | --tmp | --server-poll)
    [ $# -ge 2 ] || die "$1 needs a value"
    case "$1" in
    --server) server=$2 ;; --size) size_arg=$2 ;; --runs) runs=$2 ;;
    --small-count) small=$2 ;; --build) build=$2 ;; --tools) tools_arg=$2 ;;
    --tmp) tmpbase=$2 ;; --server-poll) server_poll=$2 ;;
    esac
    shift 2
    ;;
  -h | --help) usage && exit 0 ;;
  *) usage >&2 && die "unknown argument '$1'" ;;
  esac
done
[[ "$server" =~ ^(hipobj|memory|rgw)$ ]] || die "--server: hipobj, memory or rgw, not '$server'"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "--runs: a positive number, not '$runs'"
[[ "$small" =~ ^[1-9][0-9]*$ ]] || die "--small-count: a positive number"
[[ "$server_poll" =~ ^[0-9]+$ ]] && [ "$server_poll" -le 10000 ] ||
  die "--server-poll: microseconds, 0..10000"

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # to_bytes
size=$(to_bytes "$size_arg") || die "--size: '$size_arg' is not a size"
[ "$size" -gt 0 ] || die "--size: must not be 0"
small_size=4096

repo=$(cd "$(dirname "$0")/../.." && pwd)
case "$build" in /*) ;; *) build=$repo/$build ;; esac
HIPOBJ=$build/examples/hipobj
# Debian's python3, which has awscrt (pyenv's may come first on PATH), and
# Debian's awscli v2 (another aws may come first).
PY=${HIPOBJ_COMPARE_PY:-/usr/bin/python3}
AWS=${HIPOBJ_COMPARE_AWS:-/usr/bin/aws}
TIME=${HIPOBJ_COMPARE_TIME:-/usr/bin/time}
for b in curl sha256sum timeout "$PY"; do
  command -v "$b" >/dev/null || die "missing $b"
done
[ -x "$TIME" ] || die "missing GNU time $TIME (apt-get install time)"
[ -d "$tmpbase" ] || die "--tmp: no directory $tmpbase"

# Tools that cannot run are left out with the reason, not failed.
tools=()
IFS=, read -r -a wanted <<<"$tools_arg"
for t in "${wanted[@]}"; do
  why=""
  case "$t" in
  hipobj | hipobj-s | hipobj-u | hipobj-p) [ -x "$HIPOBJ" ] || why="no $HIPOBJ (build it: meson setup build && ninja -C build)" ;;
  awscrt) "$PY" -c 'import awscrt.s3' 2>/dev/null || why="python3-awscrt is not installed" ;;
  curl) ;;
  aws) [ -x "$AWS" ] || why="no /usr/bin/aws (apt-get install awscli)" ;;
  s3cmd) command -v s3cmd >/dev/null || why="s3cmd is not installed" ;;
  *) die "--tools: unknown tool '$t'" ;;
  esac
  if [ -n "$why" ]; then echo "compare.sh: skipping $t: $why" >&2; else tools+=("$t"); fi
done
[ ${#tools[@]} -gt 0 ] || die "no tool to run"
bench_ok=0
if [[ " ${tools[*]} " == *" hipobj "* ]] && "$HIPOBJ" bench --help >/dev/null 2>&1; then
  bench_ok=1
elif [[ " ${tools[*]} " == *" hipobj "* ]]; then
  echo "compare.sh: $HIPOBJ has no bench command: no hipobj small GETs" >&2
fi

# hipobj bench's memory rows run at the concurrency hipobj cp uses by
# default here (the library's: 2 per I/O thread, half the CPUs as I/O
# threads, 1..8 of them; 8 to 16 parts).
mem_conc=$(($(nproc) / 2))
[ "$mem_conc" -ge 1 ] || mem_conc=1
[ "$mem_conc" -le 8 ] || mem_conc=8
mem_conc=$((2 * mem_conc))
[ "$mem_conc" -ge 8 ] || mem_conc=8
many_jobs=16 # small GETs in flight at once in the "many" rows

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

tmp=$(mktemp -d "$tmpbase/hipobj-compare.XXXXXX")
server_pid="" fwd_pid="" rgw_dir=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -z "$fwd_pid" ] || kill "$fwd_pid" 2>/dev/null || true
  if [ -n "$server_pid" ]; then
    if kill "$server_pid" 2>/dev/null; then wait "$server_pid" 2>/dev/null || true; fi
  fi
  [ -z "$rgw_dir" ] || "$repo/tests/ceph-rgw.sh" stop "$rgw_dir" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "compare.sh: interrupted" >&2; exit 130' INT TERM

# ---- server ----------------------------------------------------------------
if [ "$server" = hipobj ] || [ "$server" = memory ]; then
  port=80
  bin=$build/tests/server/hipobj-server
  [ -x "$bin" ] || die "no $bin (build it: ninja -C $build)"
  ! port_busy $port || die "port $port is in use"
  AK=comparebench SK=compare-bench-secret-0123456789
  # A worker thread per core (at least its default 4): the server should
  # not be what limits a parallel client on a big machine.
  threads=$(nproc)
  [ "$threads" -ge 4 ] || threads=4
  store=(--root "$tmp/root")
  if [ "$server" = memory ]; then
    # The source, one upload's parts and its assembled copy, the small
    # objects, and slack. Without a tmpfs --tmp the server makes its root
    # in /dev/shm.
    store=(--storage memory --memory-cap $((4 * size + (1 << 30))))
    # --server-poll: a keep-alive client's next request finds a thread
    # awake (tests/bench/README.md, "The server's wake-up").
    [ "$server_poll" = 0 ] || store+=(--busy-poll "$server_poll")
    [ "$(stat -f -c %T "$tmp")" = tmpfs ] && store+=(--root "$tmp/root")
  fi
  "$bin" "${store[@]}" --listen 127.0.0.1:$port --access-key "$AK" --threads "$threads" \
    --secret-key "$SK" --log-level warn >"$tmp/server.out" 2>"$tmp/server.err" &
  server_pid=$!
  for _ in $(seq 100); do
    grep -q "listening on" "$tmp/server.out" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.err" >&2; die "hipobj-server exited"; }
    sleep 0.1
  done
  grep -q "listening on" "$tmp/server.out" || die "hipobj-server did not start in 10 s"
else
  port=18080
  : "${RGW_ACCESS_KEY:=HIPOBJTESTACCESSKEY1}"
  : "${RGW_SECRET_KEY:=hipobjTestSecretKey000000000000000000001}"
  export RGW_ACCESS_KEY RGW_SECRET_KEY
  # memstore keeps objects in RAM: the source, one upload and some slack.
  export RGW_STORE_BYTES=${RGW_STORE_BYTES:-$((3 * size + (1 << 30)))}
  AK=$RGW_ACCESS_KEY SK=$RGW_SECRET_KEY
  rgw_dir=$tmp/rgw
  echo "compare.sh: starting Ceph RGW (about a minute)" >&2
  "$repo/tests/ceph-rgw.sh" start "$rgw_dir" $port >/dev/null || die "RGW did not start"
fi
EP=http://127.0.0.1:$port
B=compare-bench

# awscrt 0.16 connects to port 80 whatever the URL says. RGW cannot listen
# there through ceph-rgw.sh, so a splice() forwarder bridges :80 to it.
awscrt_ep=$EP awscrt_note=""
if [ "$port" != 80 ] && [[ " ${tools[*]} " == *" awscrt "* ]]; then
  port_busy 80 && die "port 80 is in use (needed by awscrt's forwarder)"
  "$PY" - "$port" >"$tmp/fwd.out" 2>"$tmp/fwd.err" <<'EOF' &
import os, socket, sys, threading
def pump(src, dst):
    r, w = os.pipe()
    try:
        while (n := os.splice(src.fileno(), w, 1 << 20)) > 0:
            while n > 0:
                n -= os.splice(r, dst.fileno(), n)
    except OSError:
        pass
    finally:
        for fd in (r, w):
            os.close(fd)
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
def serve(c):
    u = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    t = threading.Thread(target=pump, args=(u, c), daemon=True)
    t.start()
    pump(c, u)
    t.join()
    c.close(), u.close()
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 80))
ls.listen(128)
print("ready", flush=True)
while True:
    threading.Thread(target=serve, args=(ls.accept()[0],), daemon=True).start()
EOF
  fwd_pid=$!
  for _ in $(seq 50); do grep -q ready "$tmp/fwd.out" && break; sleep 0.1; done
  grep -q ready "$tmp/fwd.out" || die "the forwarder for awscrt did not start"
  awscrt_ep=http://127.0.0.1 awscrt_note=" (via a :80 forwarder)"
fi

export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK AWS_DEFAULT_REGION=us-east-1
export AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
export AWS_CONFIG_FILE=$tmp/aws-config AWS_SHARED_CREDENTIALS_FILE=$tmp/aws-credentials
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN
: >"$AWS_CONFIG_FILE"
: >"$AWS_SHARED_CREDENTIALS_FILE"
cat >"$tmp/s3cfg" <<EOF
[default]
access_key = $AK
secret_key = $SK
host_base = 127.0.0.1:$port
host_bucket = 127.0.0.1:$port
use_https = False
signature_v2 = False
bucket_location = us-east-1
EOF
CURL=(curl -sS --fail --max-time 900 --aws-sigv4 "aws:amz:us-east-1:s3"
  --user "$AK:$SK" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")

# ---- data --------------------------------------------------------------------
echo "compare.sh: writing $size_arg of test data and $small small objects" >&2
data=$tmp/data.bin out=$tmp/out.bin dl=$tmp/dl
head -c "$size" /dev/urandom >"$data"
data_sha=$(sha256sum "$data" | cut -d' ' -f1)
mkdir -p "$tmp/small"
"$PY" - "$tmp/small" "$small" "$small_size" <<'EOF'
import os, sys
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    with open(os.path.join(d, "obj-%06d" % i), "wb") as f:
        f.write(os.urandom(size))
EOF
(cd "$tmp/small" && sha256sum obj-* >"$tmp/small.sha256")
(cd "$tmp/small" && printf 'small/%s\n' obj-*) >"$tmp/small.keys"
"${CURL[@]}" -X PUT "$EP/$B" -o /dev/null || die "cannot create bucket $B"
# S3 takes at most 5 GiB in one PUT: a bigger source goes up in parts.
if [ "$size" -le $((5 << 30)) ]; then
  "${CURL[@]}" -T "$data" "$EP/$B/src" -o /dev/null || die "cannot upload the source object"
else
  "$HIPOBJ" --endpoint-url "$EP" -q cp "$data" "s3://$B/src" || die "cannot upload the source object"
fi
for f in "$tmp"/small/obj-*; do
  printf 'upload-file = "%s"\nurl = "%s/%s/small/%s"\noutput = "/dev/null"\n' \
    "$f" "$EP" "$B" "${f##*/}"
done >"$tmp/small-put.cfg"
"${CURL[@]}" -K "$tmp/small-put.cfg" || die "cannot upload the small objects"
for f in "$tmp"/small/obj-*; do
  printf 'url = "%s/%s/small/%s"\noutput = "%s/%s"\n' "$EP" "$B" "${f##*/}" "$dl" "${f##*/}"
done >"$tmp/small-get.cfg"

# ---- one measurement -------------------------------------------------------
# run_one OP TOOL RUN: times one command, checks what it moved, and appends
# "op tool run seconds cpu_seconds peak_rss_kib" to $tmp/results.
tool_cmd() { # OP TOOL -> the command in cmd[]
  local op=$1 t=$2 key=put-$2
  case "$op:$t" in
  get:hipobj) cmd=("$HIPOBJ" --endpoint-url "$EP" -q cp "s3://$B/src" "$out") ;;
  get:hipobj-p) cmd=(env HIPOBJ_FILE_MAP=0 "$HIPOBJ" --endpoint-url "$EP" -q cp "s3://$B/src" "$out") ;;
  get:awscrt) cmd=("$PY" "$repo/tests/bench/awscrt_cp.py" get --endpoint "$awscrt_ep" --bucket "$B" --key src "$out") ;;
  get:curl) cmd=("${CURL[@]}" -o "$out" "$EP/$B/src") ;;
  get:aws) cmd=("$AWS" --endpoint-url "$EP" s3 cp --only-show-errors "s3://$B/src" "$out") ;;
  get:s3cmd) cmd=(s3cmd -c "$tmp/s3cfg" -q --no-progress get --force "s3://$B/src" "$out") ;;
  put:hipobj) cmd=("$HIPOBJ" --endpoint-url "$EP" -q cp "$data" "s3://$B/$key") ;;
  put:hipobj-p) cmd=(env HIPOBJ_FILE_MAP=0 "$HIPOBJ" --endpoint-url "$EP" -q cp "$data" "s3://$B/$key") ;;
  put:hipobj-s) cmd=("$HIPOBJ" --endpoint-url "$EP" -q --integrity sha256 cp "$data" "s3://$B/$key") ;;
  put:hipobj-u) cmd=("$HIPOBJ" --endpoint-url "$EP" -q --unsigned-payload cp "$data" "s3://$B/$key") ;;
  put:awscrt) cmd=("$PY" "$repo/tests/bench/awscrt_cp.py" put --endpoint "$awscrt_ep" --bucket "$B" --key "$key" "$data") ;;
  put:curl) cmd=("${CURL[@]}" -T "$data" -o /dev/null "$EP/$B/$key") ;;
  put:aws) cmd=("$AWS" --endpoint-url "$EP" s3 cp --only-show-errors "$data" "s3://$B/$key") ;;
  put:s3cmd) cmd=(s3cmd -c "$tmp/s3cfg" -q --no-progress put "$data" "s3://$B/$key") ;;
  small:hipobj) cmd=("$HIPOBJ" --endpoint-url "$EP" bench --small "$small" --small-size "$small_size"
    --runs 1 --warmup 1 -q --csv "$tmp/bench.csv") ;;
  mem:hipobj) cmd=("$HIPOBJ" --endpoint-url "$EP" bench --sizes "$size" --concurrency "$mem_conc"
    --runs 1 --warmup 0 -q --bucket "$B" --csv "$tmp/bench.csv") ;;
  mem:awscrt) cmd=("$PY" "$repo/tests/bench/awscrt_cp.py" mem --endpoint "$awscrt_ep" --bucket "$B"
    --key put-mem-awscrt "$data") ;;
  small:awscrt) cmd=("$PY" "$repo/tests/bench/awscrt_cp.py" get-many --endpoint "$awscrt_ep" --bucket "$B"
    --keys-file "$tmp/small.keys" "$dl") ;;
  small:curl) cmd=("${CURL[@]}" -K "$tmp/small-get.cfg") ;;
  small:aws) cmd=("$AWS" --endpoint-url "$EP" s3 cp --recursive --only-show-errors "s3://$B/small/" "$dl/") ;;
  small:s3cmd) cmd=(s3cmd -c "$tmp/s3cfg" -q --no-progress get --recursive --force "s3://$B/small/" "$dl/") ;;
  many:hipobj) cmd=("$HIPOBJ" --endpoint-url "$EP" -q cp --recursive --jobs "$many_jobs" "s3://$B/small/" "$dl/") ;;
  many:awscrt) cmd=("$PY" "$repo/tests/bench/awscrt_cp.py" get-many --endpoint "$awscrt_ep" --bucket "$B"
    --keys-file "$tmp/small.keys" --jobs "$many_jobs" "$dl") ;;
  many:curl) cmd=("${CURL[@]}" --parallel --parallel-max "$many_jobs" -K "$tmp/small-get.cfg") ;;
  esac
}

run_one() {
  local op=$1 t=$2 run=$3 t0 t1 secs cpu cpu_u cpu_s rss sha
  [ "$op" = small ] && [ "$t" = hipobj ] && [ $bench_ok = 0 ] && return 0
  [[ "$t" == hipobj-[su] ]] && [ "$op" != put ] && return 0
  [ "$t" = hipobj-p ] && [ "$op" = small ] && return 0
  # Many in flight: the tools that can be told how many.
  [ "$op" = many ] && [[ ! "$t" =~ ^(hipobj|awscrt|curl)$ ]] && return 0
  # curl sends one PUT, and S3 refuses one over 5 GiB.
  [ "$t" = curl ] && [ "$op" = put ] && [ "$size" -gt $((5 << 30)) ] && return 0
  # Memory to memory: hipobj (the library, through hipobj bench) and
  # aws-c-s3 only.
  if [ "$op" = mem ]; then
    case "$t" in
    hipobj) [ $bench_ok = 1 ] || return 0 ;;
    awscrt) ;;
    *) return 0 ;;
    esac
  fi
  tool_cmd "$op" "$t"
  rm -rf "$out" "$dl" && mkdir -p "$dl"
  sync # no tool pays for the write-back of another's files
  t0=$EPOCHREALTIME
  if ! "$TIME" -f '%M %U %S' -o "$tmp/time" timeout 900 "${cmd[@]}" >"$tmp/stdout" 2>"$tmp/stderr"; then
    cat "$tmp/stderr" >&2
    die "$t $op (run $run) failed: ${cmd[*]}"
  fi
  t1=$EPOCHREALTIME
  secs=$("$PY" -c "print(float('$t1') - float('$t0'))")
  read -r rss cpu_u cpu_s < <(tail -n 1 "$tmp/time")
  cpu=$("$PY" -c "print($cpu_u + $cpu_s)")
  # awscrt: the engine's own time and CPU (no Python start-up); hipobj
  # small: the in-process rate and CPU of `hipobj bench` (no set-up PUTs).
  if [ "$t" = awscrt ] && [ "$op" != mem ]; then
    read -r secs cpu < <(sed -n 's/^seconds=\([0-9.]*\) cpu=\([0-9.]*\)$/\1 \2/p' "$tmp/stdout")
  fi
  # Memory rows: each tool times its PUT and its GET in-process (hipobj
  # bench checks every GET with memcmp, awscrt_cp.py by sha256).
  if [ "$op" = mem ]; then
    local ps="" pc="" gs="" gc=""
    if [ "$t" = awscrt ]; then
      read -r ps pc gs gc < <(sed -n 's/^put_seconds=\([0-9.]*\) put_cpu=\([0-9.]*\) get_seconds=\([0-9.]*\) get_cpu=\([0-9.]*\)$/\1 \2 \3 \4/p' "$tmp/stdout")
      sha=$("${CURL[@]}" "$EP/$B/put-mem-awscrt" | sha256sum | cut -d' ' -f1)
      [ "$sha" = "$data_sha" ] || die "awscrt mem: the object read back has another sha256"
      "${CURL[@]}" -X DELETE "$EP/$B/put-mem-awscrt" -o /dev/null
    else
      read -r ps pc gs gc < <("$PY" - "$tmp/bench.csv" "$size" <<'EOF'
import csv, sys
rows = {r["op"]: r for r in csv.DictReader(open(sys.argv[1]))}
gib = int(sys.argv[2]) / 2**30
out = []
for op in ("put", "get"):
    r = rows[op]
    secs = int(r["size_bytes"]) / (float(r["mbps_median"]) * 1e6)
    out += [secs, float(r["cpu_s_per_gib_median"]) * gib]
print(*out)
EOF
      )
    fi
    [ -n "$gc" ] || { cat "$tmp/stdout" "$tmp/stderr" >&2; die "$t mem: no timings"; }
    echo "memput $t $run $ps $pc $rss" >>"$tmp/results"
    echo "memget $t $run $gs $gc $rss" >>"$tmp/results"
    printf 'compare.sh: run %d mem   %-6s put %8.3f s, get %8.3f s\n' "$run" "$t" "$ps" "$gs" >&2
    return 0
  fi
  if [ "$op" = small ] && [ "$t" = hipobj ]; then
    read -r secs cpu < <("$PY" - "$tmp/bench.csv" "$small" <<'EOF'
import csv, sys
row = [r for r in csv.DictReader(open(sys.argv[1])) if r["op"] == "small-get"][0]
n = int(sys.argv[2])
print(n / float(row["reqps_median"]), float(row["cpu_us_per_req_median"]) * n / 1e6)
EOF
    )
  fi
  case "$op" in
  get) sha=$(sha256sum "$out" | cut -d' ' -f1)
    [ "$sha" = "$data_sha" ] || die "$t get: sha256 mismatch" ;;
  put) sha=$("${CURL[@]}" "$EP/$B/put-$t" | sha256sum | cut -d' ' -f1)
    [ "$sha" = "$data_sha" ] || die "$t put: the object read back has another sha256"
    "${CURL[@]}" -X DELETE "$EP/$B/put-$t" -o /dev/null
    # RGW frees deleted data only at garbage collection (hours later by
    # default): collect now, or uploads fill the in-memory OSD.
    if [ -n "$rgw_dir" ]; then
      timeout 300 radosgw-admin -c "$rgw_dir/ceph.conf" gc process --include-all \
        >/dev/null 2>&1 || echo "compare.sh: radosgw-admin gc process failed" >&2
    fi ;;
  small) [ "$t" = hipobj ] || (cd "$dl" && sha256sum --quiet -c "$tmp/small.sha256") ||
    die "$t small: sha256 mismatch" ;;
  many) (cd "$dl" && sha256sum --quiet -c "$tmp/small.sha256") || die "$t many: sha256 mismatch" ;;
  esac
  echo "$op $t $run $secs $cpu $rss" >>"$tmp/results"
  printf 'compare.sh: run %d %-5s %-6s %8.3f s\n' "$run" "$op" "$t" "$secs" >&2
}

started=$SECONDS
for ((run = 1; run <= runs; run++)); do
  order=("${tools[@]:$(((run - 1) % ${#tools[@]}))}" "${tools[@]:0:$(((run - 1) % ${#tools[@]}))}")
  for op in get put small many mem; do
    for t in "${order[@]}"; do run_one "$op" "$t" "$run"; done
  done
done
rm -rf "$out" "$dl"

# ---- table -----------------------------------------------------------------
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
mem=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
echo
echo "hipobj vs other S3 clients: server $server ($EP), $(nproc) CPU(s) ${cpu_model:-?}, $mem RAM, Linux $(uname -r)"
echo "big object $size_arg, $small x $small_size B small GETs, $runs run(s) each, tools in rotating order, $((SECONDS - started)) s"
echo "files and server root in $tmpbase ($(stat -f -c %T "$tmp")${threads:+, hipobj-server --threads $threads}$( [ "$server" = memory ] && [ "$server_poll" != 0 ] && echo ", --busy-poll $server_poll"))"
"$PY" - "$tmp/results" "$size" "$small" "$awscrt_note" "$many_jobs" <<'EOF'
import statistics, sys
path, size, small, note = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
many_jobs = int(sys.argv[5])
rows, by_run = {}, {}
for line in open(path):
    op, tool, run, secs, cpu, rss = line.split()
    rows.setdefault((op, tool), []).append((float(secs), float(cpu), int(rss)))
    by_run.setdefault((op, tool), {})[int(run)] = float(secs)
order = ["hipobj", "hipobj-s", "hipobj-u", "hipobj-p", "awscrt", "curl", "aws", "s3cmd"]
names = {"hipobj": "hipobj", "hipobj-s": "hipobj --integrity sha256",
         "hipobj-u": "hipobj --unsigned-payload",
         "hipobj-p": "hipobj HIPOBJ_FILE_MAP=0",
         "awscrt": "aws-c-s3" + note, "curl": "curl",
         "aws": "awscli v2", "s3cmd": "s3cmd"}
goals = {("get", "awscrt"): 1.0, ("get", "curl"): 1.0, ("get", "aws"): 3.0,
         ("put", "awscrt"): 1.0, ("put", "curl"): 1.0, ("put", "aws"): 3.0,
         ("memget", "awscrt"): 1.3, ("memput", "awscrt"): 1.3,
         ("small", "curl"): 2.0, ("small", "awscrt"): 4.0}
# Client CPU s/GiB, hipobj over the tool: at most this.
cpu_goals = {("memget", "awscrt"): 0.8, ("memput", "awscrt"): 0.8}
verdicts = []
for op, title, unit in (("get", "GET", "MB/s"), ("put", "PUT", "MB/s"),
                        ("memget", "GET to mem", "MB/s"),
                        ("memput", "PUT from mem", "MB/s"),
                        ("small", "%d small GETs" % small, "req/s"),
                        ("many", "%d small GETs, %d in flight" % (small, many_jobs),
                         "req/s")):
    per_req = op in ("small", "many")
    def rate(s):
        return small / s if per_req else size / s / 1e6
    print("\n%-13s %-30s %9s %21s %12s %14s %9s" % (
        title, "tool", unit, "[min .. max]", "hipobj/tool",
        "CPU us/req" if per_req else "CPU s/GiB", "RSS MiB"))
    base = rows.get((op, "hipobj"))
    base_rate = statistics.median(rate(s) for s, _, _ in base) if base else None
    for tool in order:
        r = rows.get((op, tool))
        if not r:
            continue
        rates = [rate(s) for s, _, _ in r]
        med = statistics.median(rates)
        cpu = statistics.median(c for _, c, _ in r)
        cpu = cpu * 1e6 / small if per_req else cpu / (size / 2**30)
        ratio = base_rate / med if base_rate else float("nan")
        print("%-13s %-30s %9.1f %21s %12s %14.3f %9.0f" % (
            "", names[tool], med, "[%.1f .. %.1f]" % (min(rates), max(rates)),
            "%.2fx" % ratio if base_rate else "-", cpu,
            max(x for _, _, x in r) / 1024))
        if (op, tool) in goals and base_rate:
            g = goals[(op, tool)]
            # The same runs paired (the tools of one run follow each other,
            # so a slow spell of a shared machine touches both): how steady
            # the ratio of the medians is.
            a, b = by_run.get((op, "hipobj"), {}), by_run[(op, tool)]
            paired = [b[k] / a[k] for k in a if k in b and a[k] > 0]
            pr = ""
            if len(paired) > 1:
                pr = "; run by run: median %.2fx, %d of %d runs >= %.1fx" % (
                    statistics.median(paired),
                    sum(x >= g for x in paired), len(paired), g)
            verdicts.append("%-6s hipobj/%-9s %5.2fx (goal >= %.1fx): %s%s" % (
                op, tool, ratio, g, "met" if ratio >= g else "NOT met", pr))
        if (op, tool) in cpu_goals and base and cpu > 0:
            g = cpu_goals[(op, tool)]
            cr = statistics.median(c for _, c, _ in base) / (size / 2**30) / cpu
            verdicts.append("%-6s CPU/GiB hipobj/%-9s %5.2fx (goal <= %.1fx): %s"
                            % (op, tool, cr, g, "met" if cr <= g else "NOT met"))
        u = rows.get((op, "hipobj-u"))
        if (op, tool) in goals and u:
            g = goals[(op, tool)]
            ur = statistics.median(rate(s) for s, _, _ in u) / med
            verdicts.append("%-5s hipobj-u/%-7s %5.2fx (goal >= %.1fx, both "
                            "unsigned): %s" % (op, tool, ur, g,
                                               "met" if ur >= g else "NOT met"))
print("\nGoals (hipobj/tool of the medians):")
for v in verdicts:
    print("  " + v)
print("\nTime and CPU (user+sys): of the whole process, except aws-c-s3 "
      "(in-process: the engine, without Python's start-up) and hipobj small "
      "GETs (in-process: `hipobj bench --small`, without its set-up PUTs). "
      "Small GETs land in files for every tool but hipobj (memory); with "
      "many in flight, in files for all. "
      "RSS: the largest peak of the runs.")
EOF
