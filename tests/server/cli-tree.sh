#!/bin/bash
# cli-tree.sh - the `hipobj` commands a user of `aws s3` reaches for,
# against a real server: hipobj-server (started here), or with
# HIPOBJ_TEST_ENDPOINT set (tests/with-rgw.sh) against Ceph RGW.
#
# ls of the buckets (text and JSON), ls --recursive --human-readable
# --summarize; cp --recursive of a tree (nested directories, an empty
# file, a name with a space, a multipart-sized file) up and back compared
# with diff -r, and S3 to S3; sync both ways (a second run copies
# nothing; --delete; --exclude/--include; --dryrun changes nothing); mv
# and rm --recursive; presign fetched by curl without credentials; cp
# s3://b/a s3://b/c; --range; stdin and stdout; a prefix to stdout
# refused; mpu ls and abort; did-you-mean, per-command help and the exit
# statuses; errors naming their cause (wrong secret, unknown host, no such
# bucket, a bucket name S3 refuses, an untrusted TLS certificate) in text
# and as JSON objects; and the bash completion of commands, options and
# s3:// URLs.
#
# Usage: cli-tree.sh path/to/hipobj-server path/to/hipobj [completion.bash]
set -euo pipefail

SERVER=${1:?usage: cli-tree.sh SERVER HIPOBJ [COMPLETION]}
CLI=${2:?usage: cli-tree.sh SERVER HIPOBJ [COMPLETION]}
COMPLETION=${3:-}
WORK=$(mktemp -d /tmp/hipobj-cli-tree-XXXXXX)
SERVER_PID=
TLS_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  if [ -n "$TLS_PID" ]; then kill "$TLS_PID" 2>/dev/null || true; fi
  if [ "${HIPOBJ_TEST_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [ -f "$WORK/out" ] && { echo "-- stdout:"; tail -20 "$WORK/out"; }
  [ -f "$WORK/err" ] && { echo "-- stderr:"; tail -20 "$WORK/err"; }
  exit 1
}
step() { echo "== $*"; }

unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3
if [ -n "${HIPOBJ_TEST_ENDPOINT:-}" ]; then
  URL=$HIPOBJ_TEST_ENDPOINT
  export AWS_ACCESS_KEY_ID=$HIPOBJ_TEST_ACCESS_KEY
  export AWS_SECRET_ACCESS_KEY=$HIPOBJ_TEST_SECRET_KEY
  KIND=rgw
else
  export AWS_ACCESS_KEY_ID=AKIDCLITREE AWS_SECRET_ACCESS_KEY=cli-tree-secret
  "$SERVER" --root "$WORK/root" --listen 127.0.0.1:0 \
    --access-key "$AWS_ACCESS_KEY_ID" --secret-key "$AWS_SECRET_ACCESS_KEY" \
    --region us-east-1 --log-level warn >"$WORK/ready" 2>"$WORK/server.log" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    grep -q 'listening on' "$WORK/ready" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || fail "hipobj-server exited at start"
    sleep 0.1
  done
  URL=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$WORK/ready")
  [ -n "$URL" ] || fail "hipobj-server did not print its URL"
  KIND=server
fi
export AWS_REGION=us-east-1
H=("$CLI" --endpoint-url "$URL")
B=cli-tree-$$-$RANDOM

# run EXPECTED_STATUS ARGS...: runs hipobj, stdout in out, stderr in err.
run() {
  local want=$1 rc=0
  shift
  timeout 120 "${H[@]}" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "hipobj $* exited $rc, not $want"
}
has() { grep -q -- "$2" "$WORK/$1" || fail "$1 of the last command lacks '$2'"; }
json_ok() { # every line of FILE is a JSON object
  /usr/bin/python3 -c 'import json,sys
for l in open(sys.argv[1]):
    json.loads(l)' "$WORK/$1" || fail "$1 is not JSON lines"
}

step "mb, and a name S3 refuses, refused before any request"
run 0 mb "s3://$B"
run 1 mb s3://Bad_Name
has err "upper-case"
run 0 ls
has out " $B\$"
run 0 --json ls
json_ok out
has out "\"bucket\":\"$B\""

step "cp --recursive up and back, diff -r"
T=$WORK/tree
mkdir -p "$T/a/b" "$T/empty-dir-is-not-copied" "$T/with space"
head -c 12345 /dev/urandom >"$T/one.bin"
: >"$T/zero.txt"
echo "a text" >"$T/a/t.txt"
head -c $((9 * 1024 * 1024 + 7)) /dev/urandom >"$T/a/b/big.bin"
echo spaced >"$T/with space/s p.txt"
for i in $(seq 1 20); do echo "$i" >"$T/a/n$i.txt"; done
run 0 cp --recursive "$T" "s3://$B/up/"
[ "$(grep -c '^upload: ' "$WORK/out")" -eq 25 ] || fail "25 uploads expected"
run 0 ls --recursive --human-readable --summarize "s3://$B/up/"
has out "Total Objects: 25"
has out "MiB up/a/b/big.bin"
run 0 cp --recursive "s3://$B/up/" "$WORK/back"
rmdir "$T/empty-dir-is-not-copied"
diff -r "$T" "$WORK/back" >/dev/null || fail "the tree came back different"
[ "$(stat -c %Y "$WORK/back/one.bin")" -gt 0 ] || fail "no mtime"
# One download, no HEAD of the tool's: verified against the object's
# checksum where the server keeps one (hipobj-server does).
run 0 --json cp "s3://$B/up/a/b/big.bin" "$WORK/big.json.out"
json_ok out
cmp "$WORK/big.json.out" "$T/a/b/big.bin" || fail "download differs"
[ "$KIND" = server ] && has out '"verified":"crc64nvme"'

step "cp --recursive S3 to S3 (server-side), with filters"
run 0 cp -r --exclude '*' --include '*.txt' --exclude 'a/n1*' \
  "s3://$B/up/" "s3://$B/copy/"
run 0 ls -r "s3://$B/copy/"
has out "copy/a/t.txt"
has out "copy/a/n2.txt"
grep -q 'n1\|one.bin\|big.bin' "$WORK/out" && fail "filters let too much through"
run 0 rm --recursive "s3://$B/copy/"

step "sync: a second run copies nothing, --delete, --dryrun"
run 0 sync "$T" "s3://$B/up/"
[ -s "$WORK/out" ] && fail "a sync of an unchanged tree copied: $(cat "$WORK/out")"
echo changed >"$T/a/t.txt"
echo new >"$T/new.txt"
rm "$T/one.bin"
run 0 sync --dryrun --delete "$T" "s3://$B/up/"
has out "(dryrun) upload: .*new.txt"
has out "(dryrun) delete: s3://$B/up/one.bin"
run 0 sync --delete "$T" "s3://$B/up/"
has out "upload: .*a/t.txt"
has out "delete: s3://$B/up/one.bin"
[ "$(wc -l <"$WORK/out")" -eq 3 ] || fail "sync did more than 3 things"
run 0 sync --delete "s3://$B/up/" "$WORK/back"
has out "delete: .*back/one.bin"
diff -r "$T" "$WORK/back" >/dev/null || fail "sync down: trees differ"
run 0 sync "s3://$B/up/" "$WORK/back"
[ -s "$WORK/out" ] && fail "a sync down of an unchanged tree copied"

step "cp of one object S3 to S3, stat, presign fetched by curl"
run 0 cp "s3://$B/up/a/t.txt" "s3://$B/c/t-copy.txt"
has out "copy: s3://$B/up/a/t.txt to s3://$B/c/t-copy.txt"
run 0 stat "s3://$B/c/t-copy.txt"
has out "Size:          8"
has out "Content type:  text/plain"
run 0 presign --expires-in 120 "s3://$B/up/a/b/big.bin"
curl -sS --fail "$(cat "$WORK/out")" | cmp - "$T/a/b/big.bin" ||
  fail "the presigned URL did not give the object"

step "--range, stdin, stdout, a prefix to stdout refused"
run 0 cp --range bytes=100-199 "s3://$B/up/a/b/big.bin" -
cmp "$WORK/out" <(tail -c +101 "$T/a/b/big.bin" | head -c 100) ||
  fail "--range to stdout"
run 0 cp --range 9437000- "s3://$B/up/a/b/big.bin" "$WORK/tail.bin"
cmp "$WORK/tail.bin" <(tail -c +9437001 "$T/a/b/big.bin") || fail "--range A-"
echo "from stdin" | "${H[@]}" -q cp - "s3://$B/stdin.txt"
[ "$("${H[@]}" cp "s3://$B/stdin.txt" -)" = "from stdin" ] || fail "stdin"
"${H[@]}" cp "s3://$B/zero-missing" - >/dev/null 2>&1 && fail "missing key"
run 2 cp "s3://$B/up/" -
has err "is a prefix, not an object"
run 0 cp "s3://$B/up/zero.txt" "$WORK/zero.out"
[ -f "$WORK/zero.out" ] && [ ! -s "$WORK/zero.out" ] || fail "empty object"

step "mv and rm --recursive"
run 0 mv "s3://$B/stdin.txt" "s3://$B/moved.txt"
run 1 stat "s3://$B/stdin.txt"
has err "NoSuchKey\|no such key"
cp "$T/new.txt" "$WORK/local.txt"
run 0 mv "$WORK/local.txt" "s3://$B/m/"
[ -e "$WORK/local.txt" ] && fail "mv left the local file"
run 0 mv -r "s3://$B/c/" "$WORK/mvdir"
[ -f "$WORK/mvdir/t-copy.txt" ] || fail "mv -r did not download"
run 0 ls "s3://$B/c/"
[ -s "$WORK/out" ] && fail "mv -r left objects"
run 0 rm -r "s3://$B/"
run 0 ls -r "s3://$B"
[ -s "$WORK/out" ] && fail "rm -r left objects: $(cat "$WORK/out")"

step "mpu ls and abort"
# An upload left behind: stdin from a FIFO that sends one part and then
# nothing, interrupted with --keep-failed-upload.
mkfifo "$WORK/fifo"
(head -c 6000000 /dev/urandom; sleep 60) >"$WORK/fifo" &
writer=$!
"${H[@]}" -q --keep-failed-upload --part-size 5MiB cp - "s3://$B/kept" \
  <"$WORK/fifo" >/dev/null 2>"$WORK/err" &
pid=$!
for _ in $(seq 200); do
  "${H[@]}" mpu ls "s3://$B" >"$WORK/out" 2>/dev/null
  [ -s "$WORK/out" ] && break
  sleep 0.05
done
[ -s "$WORK/out" ] || fail "the upload never appeared in mpu ls"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
kill "$writer" 2>/dev/null || true
[ "$rc" -eq 130 ] || fail "an interrupted cp exited $rc, not 130"
has err "was kept"
run 0 mpu ls "s3://$B"
has out " kept\$"
id=$(awk 'NR == 1 {print $3}' "$WORK/out")
run 0 mpu abort "s3://$B/kept" "$id"
has out "abort: s3://$B/kept"
run 0 mpu ls "s3://$B"
[ -s "$WORK/out" ] && fail "the upload is still listed"
run 1 mpu abort "s3://$B/kept" 0123456789abcdef0123456789abcdef
has err "NoSuchUpload"

step "usage: did you mean, per-command help, exit statuses"
run 2 cpy a b
has err "did you mean 'cp'"
run 2 ls --recurive
has err "did you mean '--recursive'"
run 2 ls --delete "s3://$B"
has err "not an option of ls"
run 0 cp --help
has out "usage: hipobj cp SRC DST"
has out "Exit status"
run 0 help sync
has out "usage: hipobj sync"
run 2 --json cpy
json_ok out
has out '"exit":2'

step "errors name their cause, as text and as JSON"
echo x >"$WORK/x"
run 0 cp "$WORK/x" "s3://$B/x"
AWS_SECRET_ACCESS_KEY=wrong run 1 cp "s3://$B/x" "$WORK/y"
has err "SignatureDoesNotMatch"
has err "secret key"
AWS_SECRET_ACCESS_KEY=wrong run 1 stat "s3://$B/x"
has err "secret key"
AWS_SECRET_ACCESS_KEY=wrong run 1 --json cp "s3://$B/x" "$WORK/y"
json_ok out
has out '"s3_code":"SignatureDoesNotMatch"'
has out '"hint":"check the secret key'
H2=("${H[@]}")
H=("$CLI" --endpoint-url http://no-such-host.invalid:9000)
run 1 ls "s3://$B"
has err "resolve host"
has err "no-such-host.invalid"
run 1 --json ls
json_ok out
has out '"status":"could not connect to the endpoint"'
H=("$CLI" --endpoint-url http://127.0.0.1:1)
run 1 ls
has err "refused"
H=("${H2[@]}")
run 1 ls s3://no-such-bucket-here
has err "NoSuchBucket"
AWS_ACCESS_KEY_ID='' AWS_SECRET_ACCESS_KEY='' HOME=$WORK run 3 ls
has err "credentials"
run 2 presign --no-sign-request "s3://$B/x"
if [ "$KIND" = server ]; then
  # TLS: a certificate of a CA the system does not trust, then that CA.
  tls=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tls
  "$SERVER" --root "$WORK/root" --listen 127.0.0.1:0 \
    --access-key "$AWS_ACCESS_KEY_ID" --secret-key "$AWS_SECRET_ACCESS_KEY" \
    --tls-cert "$tls/server.pem" --tls-key "$tls/server.key" \
    --log-level warn >"$WORK/ready-tls" 2>>"$WORK/server.log" &
  TLS_PID=$!
  for _ in $(seq 100); do
    grep -q 'listening on' "$WORK/ready-tls" 2>/dev/null && break
    sleep 0.1
  done
  TLS_URL=$(sed -n 's/.*listening on \(https[^ ]*\).*/\1/p' "$WORK/ready-tls")
  H=("$CLI" --endpoint-url "$TLS_URL")
  run 1 ls
  has err "certificate"
  has err "ca-bundle"
  run 0 --ca-bundle "$tls/ca.pem" ls
  has out " $B\$"
  kill "$TLS_PID"
  TLS_PID=
  H=("${H2[@]}")
fi

if [ -n "$COMPLETION" ]; then
  step "bash completion"
  out=$(PATH=$(dirname "$CLI"):$PATH bash -c '
    source "$1"; shift
    t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _hipobj
          printf "%s\n" "${COMPREPLY[@]}"; }
    t hipobj sy; t hipobj sync --del; t hipobj --endpoint-url "$1" ls s3://
  ' _ "$COMPLETION" "$URL")
  grep -qx sync <<<"$out" || fail "no command completion: $out"
  grep -qx -- --delete <<<"$out" || fail "no option completion: $out"
  grep -qx "s3://$B/" <<<"$out" || fail "no bucket completion: $out"
fi

step "rb"
run 0 rm -r "s3://$B/"
run 0 rb "s3://$B"
echo "cli-tree ($KIND): all passed"
