#!/bin/bash
# cli-hostile.sh - the `hipobj` tool against a misbehaving hipobj-server
# (issue "Integrity and safety"): `hipobj ls` against listings whose
# continuation token comes back (the library's check) or goes round a
# cycle of three (the tool's own), and `hipobj cp` of a parallel download
# whose second ranged GET is answered with a short 206, or whose body
# drips (the temp file must take disk space only as bytes arrive). Each must exit
# non-zero with a message naming the cause, in bounded time, and the
# download must leave neither the destination nor its temp file behind.
#
# Every command runs under `timeout`: a tool that loops fails the test
# (exit 124 is reported as such) instead of hanging it. The bounds are
# generous; they only prove "bounded, not forever".
#
# Usage: cli-hostile.sh path/to/hipobj-server path/to/hipobj
set -euo pipefail

SERVER=${1:?usage: cli-hostile.sh SERVER HIPOBJ}
CLI=${2:?usage: cli-hostile.sh SERVER HIPOBJ}
WORK=$(mktemp -d /tmp/hipobj-cli-hostile-XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  if [ "${HIPOBJ_TEST_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  tail -20 "$WORK/server.log" 2>/dev/null || true
  exit 1
}
step() { echo "== $*"; }

export AWS_ACCESS_KEY_ID=AKIDCLIHOSTILE AWS_SECRET_ACCESS_KEY=cli-hostile-secret
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL

# (Re)starts the server on the same root with the faults given ("" none).
start_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  local faults=()
  [ -n "$1" ] && faults=(--faults "$1")
  rm -f "$WORK/ready"
  "$SERVER" --root "$WORK/root" --listen 127.0.0.1:0 \
    --access-key "$AWS_ACCESS_KEY_ID" --secret-key "$AWS_SECRET_ACCESS_KEY" \
    --region us-east-1 --log-level info "${faults[@]}" \
    >"$WORK/ready" 2>>"$WORK/server.log" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    grep -q 'listening on' "$WORK/ready" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || fail "hipobj-server exited at start"
    sleep 0.1
  done
  URL=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$WORK/ready")
  [ -n "$URL" ] || fail "hipobj-server did not print its URL"
  H=("$CLI" --endpoint-url "$URL" --region us-east-1 -q)
}

# Runs the tool under a 60 s timeout; stdout and stderr to $WORK/out and
# $WORK/err; sets rc. A timeout is a failure of the test itself.
run() {
  rc=0
  timeout 60 "${H[@]}" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -ne 124 ] || fail "hipobj $* did not end within 60 s"
  sed 's/^/   /' "$WORK/err"
}

# The hex of a string: hipobj-server's v2 continuation tokens.
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

start_server ""
# 12 MiB + 5 bytes: three parts of 5 MiB, the last one short.
head -c $((12 * 1024 * 1024 + 5)) /dev/urandom >"$WORK/data"
echo small >"$WORK/small"
"${H[@]}" mb s3://hostile >/dev/null
"${H[@]}" cp "$WORK/data" s3://hostile/big
# Keys that sort after the server's fixed tokens (hipobj-repeat-token-N,
# the marker of the pages that follow them), so every page lists them.
KEYS=3
for k in $(seq "$KEYS"); do "${H[@]}" cp "$WORK/small" "s3://hostile/zz/$k"; done

step "ls: a continuation token that comes straight back"
start_server "op=ListObjectsV2,action=repeat-token"
run ls --recursive s3://hostile/zz/
[ "$rc" -ne 0 ] || fail "ls against a repeated token exited 0"
t1=$(hex hipobj-repeat-token-1)
grep -q "never end" "$WORK/err" || fail "unexpected error: $(cat "$WORK/err")"
grep -qF "${t1:0:24}" "$WORK/err" || fail "the token is not named: $(cat "$WORK/err")"

step "ls: continuation tokens going round a cycle of three"
start_server "op=ListObjectsV2,action=repeat-token:3"
run ls --recursive s3://hostile/zz/
[ "$rc" -ne 0 ] || fail "ls against a cycle of tokens exited 0"
# Page 1 gives token 1, pages 2 to 4 tokens 2, 3 and 1 again: the first
# token, shortened to its two ends, is named after page 4.
shown="${t1:0:24}...${t1: -12}"
grep -qF "continuation token '$shown' again after page 4" "$WORK/err" ||
  fail "unexpected error: $(cat "$WORK/err")"
# Those four pages were printed, and nothing more.
[ "$(wc -l <"$WORK/out")" -eq $((4 * KEYS)) ] ||
  fail "ls printed $(wc -l <"$WORK/out") lines, not 4 pages of $KEYS keys"

step "cp: a parallel download with a short 206 part"
start_server "op=GetObject,nth=2,action=partial"
run cp --part-size 5MiB s3://hostile/big "$WORK/dl.out"
[ "$rc" -ne 0 ] || fail "a download with a short part exited 0"
grep -q "short answer" "$WORK/err" || fail "unexpected error: $(cat "$WORK/err")"
[ ! -e "$WORK/dl.out" ] || fail "dl.out exists after the failure"
for f in "$WORK"/.*.hipobj-*; do
  [ -e "$f" ] && fail "temp file left: $f"
done

step "cp: disk space is taken as the bytes arrive, not as announced"
# The body drips at 64 KiB/s: after 2 s, the 12 MiB temp file must hold
# about what arrived, not blocks for the whole size (fallocate up front).
start_server "op=GetObject,action=drip:65536"
timeout 60 "${H[@]}" cp --part-size 5MiB s3://hostile/big "$WORK/drip.out" \
  >/dev/null 2>"$WORK/err" &
cp_pid=$!
sleep 2
tmpf=$(ls -d "$WORK"/.*.hipobj-* 2>/dev/null | head -1)
[ -n "$tmpf" ] || fail "no temp file while the download runs"
blocks=$(( $(stat -c '%b * %B' "$tmpf") ))
kill -TERM "$cp_pid" 2>/dev/null || true
wait "$cp_pid" 2>/dev/null || true
echo "   temp file: $blocks bytes allocated after 2 s of a 64 KiB/s body"
[ "$blocks" -lt $((4 * 1024 * 1024)) ] ||
  fail "$blocks bytes allocated for a download that has received ~128 KiB"
[ ! -e "$tmpf" ] || fail "temp file left after SIGTERM: $tmpf"

step "cp: the same download from a healthy server is whole"
start_server ""
run cp --part-size 5MiB s3://hostile/big "$WORK/dl.out"
[ "$rc" -eq 0 ] || fail "download: $(cat "$WORK/err")"
cmp -s "$WORK/data" "$WORK/dl.out" || fail "dl.out differs from the object"
echo "PASS"
