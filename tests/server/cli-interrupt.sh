#!/bin/bash
# cli-interrupt.sh - `hipobj cp` interrupted mid-transfer (issue "Integrity
# and safety", item 6). hipobj-server holds every UploadPart (or GetObject)
# back with a delay fault, so the copy is surely under way when it gets
# SIGINT or SIGTERM; then:
#   - an upload exits 130 (SIGINT) or 143 (SIGTERM), leaves no multipart
#     upload (ListMultipartUploads, signed by curl) and no object;
#   - with --keep-failed-upload it prints the upload id, which is still
#     listed;
#   - a download exits likewise and leaves neither the file nor its temp
#     file;
#   - cp --recursive of small objects (blocking GETs on its workers,
#     stopped by their cancellation token) exits 130, no file left.
# Waits are bounded (a hang fails the test); nothing is asserted about how
# long anything took.
#
# Usage: cli-interrupt.sh path/to/hipobj-server path/to/hipobj
set -euo pipefail

SERVER=${1:?usage: cli-interrupt.sh SERVER HIPOBJ}
CLI=${2:?usage: cli-interrupt.sh SERVER HIPOBJ}
WORK=$(mktemp -d /tmp/hipobj-cli-interrupt-XXXXXX)
SERVER_PID=
CP_PID=
cleanup() {
  if [ -n "$CP_PID" ]; then kill -9 "$CP_PID" 2>/dev/null || true; fi
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  if [ "${HIPOBJ_TEST_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  sed 's/^/   cp: /' "$WORK/err" 2>/dev/null || true
  tail -20 "$WORK/server.log" 2>/dev/null || true
  exit 1
}
step() { echo "== $*"; }

if ! command -v curl >/dev/null; then
  echo "SKIP: curl is needed to list multipart uploads"
  exit 77
fi

export AWS_ACCESS_KEY_ID=AKIDCLIINTR AWS_SECRET_ACCESS_KEY=cli-interrupt-secret
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL
BUCKET=intr

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

# A request signed by curl (SigV4), the body to stdout.
signed() {
  curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

# The upload ids ListMultipartUploads lists, one a line.
upload_ids() {
  signed "$URL/$BUCKET?uploads=" |
    grep -o '<UploadId>[0-9a-f]*</UploadId>' | sed 's/<[^>]*>//g' || true
}

# Waits (bounded) until the test says the copy is under way.
wait_for() {
  local what=$1
  shift
  for _ in $(seq 300); do
    "$@" && return 0
    kill -0 "$CP_PID" 2>/dev/null || fail "cp ended before $what"
    sleep 0.1
  done
  fail "cp never got to $what"
}
upload_started() { [ -n "$(upload_ids)" ]; }
temp_file_made() { compgen -G "$WORK/.dl.out.hipobj-*" >/dev/null; }

# Sends sig to the copy and waits (bounded) for it to end; sets rc.
interrupt() {
  kill "-$1" "$CP_PID"
  for _ in $(seq 300); do
    kill -0 "$CP_PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$CP_PID" 2>/dev/null; then
    fail "cp did not end within 30 s of SIG$1"
  fi
  rc=0
  wait "$CP_PID" || rc=$?
  CP_PID=
}

# An upload of 40 MiB in parts of 5 MiB, every UploadPart held back.
upload_interrupted() {
  local sig=$1 want=$2
  shift 2
  step "cp upload, SIG$sig mid-upload $*"
  start_server "op=UploadPart,action=delay:30000"
  "${H[@]}" "$@" --part-size 5MiB cp "$WORK/data" "s3://$BUCKET/big" \
    >"$WORK/out" 2>"$WORK/err" &
  CP_PID=$!
  wait_for "the multipart upload" upload_started
  interrupt "$sig"
  [ "$rc" -eq "$want" ] || fail "exit status $rc, not $want"
  grep -q "interrupted" "$WORK/err" || fail "no 'interrupted' message"
  signed -o /dev/null -w '%{http_code}' -I "$URL/$BUCKET/big" >"$WORK/head"
  [ "$(cat "$WORK/head")" = 404 ] || fail "the object exists"
}

start_server ""
"${H[@]}" mb "s3://$BUCKET" >/dev/null
head -c $((40 * 1024 * 1024)) /dev/urandom >"$WORK/data"
head -c $((1024 * 1024)) /dev/urandom >"$WORK/small"
"${H[@]}" cp "$WORK/small" "s3://$BUCKET/small" >/dev/null

upload_interrupted INT 130
[ -z "$(upload_ids)" ] || fail "an upload is left: $(upload_ids)"

upload_interrupted TERM 143
[ -z "$(upload_ids)" ] || fail "an upload is left: $(upload_ids)"

upload_interrupted INT 130 --keep-failed-upload
kept=$(upload_ids)
[ "$(echo "$kept" | wc -w)" -eq 1 ] || fail "not one upload kept: '$kept'"
grep -qF "multipart upload $kept was kept" "$WORK/err" ||
  fail "the kept upload's id is not printed"
signed -X DELETE "$URL/$BUCKET/big?uploadId=$kept" >/dev/null

for sig in INT TERM; do
  want=$([ $sig = INT ] && echo 130 || echo 143)
  step "cp download, SIG$sig mid-download"
  start_server "op=GetObject,action=delay:30000"
  "${H[@]}" cp "s3://$BUCKET/small" "$WORK/dl.out" >"$WORK/out" \
    2>"$WORK/err" &
  CP_PID=$!
  wait_for "its temp file" temp_file_made
  interrupt "$sig"
  [ "$rc" -eq "$want" ] || fail "exit status $rc, not $want"
  grep -q "interrupted" "$WORK/err" || fail "no 'interrupted' message"
  [ ! -e "$WORK/dl.out" ] || fail "dl.out exists"
  ! temp_file_made || fail "the temp file is left: $(ls -a "$WORK")"
done

# Small objects (at most 256 KiB) come through the library's blocking GET
# on the worker's own thread: the workers' cancellation token stops them.
step "cp --recursive of small objects, SIGINT mid-download"
start_server ""
head -c 1000 /dev/urandom >"$WORK/tiny"
for f in f1 f2 f3 sub/f4 sub/f5 sub/f6; do
  "${H[@]}" cp "$WORK/tiny" "s3://$BUCKET/tree/$f" >/dev/null
done
# Held back longer than interrupt() waits: only the token ends them in time.
start_server "op=GetObject,action=delay:120000"
mkdir -p "$WORK/tree"
"${H[@]}" cp --recursive --jobs 4 "s3://$BUCKET/tree/" "$WORK/tree" \
  >"$WORK/out" 2>"$WORK/err" &
CP_PID=$!
tree_temp_made() { [ -n "$(find "$WORK/tree" -name '.*.hipobj-*')" ]; }
wait_for "its temp files" tree_temp_made
interrupt INT
[ "$rc" -eq 130 ] || fail "exit status $rc, not 130"
grep -q "interrupted" "$WORK/err" || fail "no 'interrupted' message"
[ -z "$(find "$WORK/tree" -type f)" ] ||
  fail "files left: $(find "$WORK/tree" -type f)"

step "cp download completes without a signal"
start_server ""
"${H[@]}" cp "s3://$BUCKET/small" "$WORK/dl.out" >/dev/null
cmp -s "$WORK/small" "$WORK/dl.out" || fail "dl.out differs from the object"
echo "PASS"
