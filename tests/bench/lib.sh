# lib.sh - sourced by the benchmark scripts of tests/bench (bash).
# shellcheck shell=bash disable=SC2034 # server_pid and server_url are for the caller

# to_bytes SIZE: "256MiB", "1GiB", "4KiB", "100M", "12345" -> bytes on
# stdout; non-zero for anything else.
to_bytes() {
  local n=${1%%[!0-9]*} unit=${1##*[0-9]}
  [ -n "$n" ] && [ "$n$unit" = "$1" ] || return 1
  case "${unit,,}" in
  "" | b) echo "$n" ;; k | kib) echo $((n << 10)) ;; m | mib) echo $((n << 20)) ;;
  g | gib) echo $((n << 30)) ;; kb) echo $((n * 1000)) ;; mb) echo $((n * 1000000)) ;;
  gb) echo $((n * 1000000000)) ;; *) return 1 ;;
  esac
}

# start_server BIN DIR [ARGS...]: hipobj-server on a free loopback port
# with its root in DIR/root, a worker thread per core (at least 4) and
# ARGS; sets server_pid and server_url, or prints its log and returns 1.
start_server() {
  local bin=$1 dir=$2 threads
  shift 2
  threads=$(nproc)
  [ "$threads" -ge 4 ] || threads=4
  mkdir -p "$dir/root"
  : >"$dir/ready" # exists before the background redirection
  "$bin" --root "$dir/root" --listen 127.0.0.1:0 --threads "$threads" \
    --log-level error "$@" >"$dir/ready" 2>"$dir/server.log" &
  server_pid=$!
  server_url=
  for _ in $(seq 100); do
    server_url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$dir/ready")
    [ -n "$server_url" ] && return 0
    sleep 0.1
  done
  cat "$dir/server.log" >&2
  return 1
}
