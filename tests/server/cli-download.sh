#!/bin/bash
# cli-download.sh - `hipobj cp` downloads into files against hipobj-server:
# into a disk file (space reserved with fallocate) and into a tmpfs file
# (free space checked; the library's writes mapped or not, both forced),
# every download compared by SHA-256; a destination too small for the
# object (a 1 MiB tmpfs in a private mount namespace, and a size limit on
# a disk file) fails with "No space left on device" / "File too large",
# exits non-zero and leaves neither the file nor its temp file behind.
# cp --recursive of small objects (sizes around the 256 KiB that come
# through a buffer, nested directories) arrives byte for byte with the
# modes the umask gives; an object that grew between the listing and its
# GET arrives whole. cp --recursive downloads the first page of keys while
# the next page is still being listed (the server holds page 2 back), and
# a listing that fails on a later page fails the command, naming it. Result
# lines written into a pipe whose reader has gone end the tool with 141,
# quietly.
# A byte flipped in the stored object (in place, behind the server's back)
# fails the download with the checksum mismatch named, nothing left
# behind; with HIPOBJ_CHECKSUM_MODE=off the damage is downloaded.
#
# Usage: cli-download.sh path/to/hipobj-server path/to/hipobj
set -euo pipefail

SERVER=${1:?usage: cli-download.sh SERVER HIPOBJ}
CLI=${2:?usage: cli-download.sh SERVER HIPOBJ}
WORK=$(mktemp -d /tmp/hipobj-cli-dl-XXXXXX)
SHM=
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  if [ "${HIPOBJ_TEST_KEEP:-0}" != 1 ]; then
    rm -rf "$WORK"
    [ -n "$SHM" ] && rm -rf "$SHM"
  fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  tail -20 "$WORK/server.log" 2>/dev/null || true
  exit 1
}
step() { echo "== $*"; }

export AWS_ACCESS_KEY_ID=AKIDCLIDOWNLOAD AWS_SECRET_ACCESS_KEY=cli-download-secret
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL
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
H=("$CLI" --endpoint-url "$URL" --region us-east-1 -q)

# 17 MiB + 5 bytes: three parts of the default 8 MiB, a short last one.
head -c $((17 * 1024 * 1024 + 5)) /dev/urandom >"$WORK/data"
want=$(sha256sum <"$WORK/data")
"${H[@]}" mb s3://cli-download >/dev/null
"${H[@]}" cp "$WORK/data" s3://cli-download/obj

same() { [ "$(sha256sum <"$1")" = "$want" ] || fail "$1 differs from the object"; }
no_leftovers() { # DIR: no temp file of hipobj cp is left in DIR
  local f
  for f in "$1"/.*.hipobj-*; do
    [ -e "$f" ] && fail "temp file left in $1: $f"
  done
  return 0
}

step "download into a disk file"
"${H[@]}" cp s3://cli-download/obj "$WORK/disk.out"
same "$WORK/disk.out"

if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
  SHM=$(mktemp -d /dev/shm/hipobj-cli-dl-XXXXXX)
  for map in 0 1; do
    step "download into a tmpfs file, HIPOBJ_FILE_MAP=$map"
    HIPOBJ_FILE_MAP=$map "${H[@]}" cp s3://cli-download/obj "$SHM/out$map"
    same "$SHM/out$map"
  done
  no_leftovers "$SHM"
else
  echo "(no tmpfs at /dev/shm: tmpfs downloads not checked)"
fi

step "a file size limit ends the download with its cause"
rc=0
(
  trap '' XFSZ
  ulimit -f 1024 # KiB
  exec "${H[@]}" cp s3://cli-download/obj "$WORK/limited.out"
) 2>"$WORK/err" || rc=$?
[ "$rc" -ne 0 ] || fail "a download over the size limit exited 0"
grep -q "File too large" "$WORK/err" || fail "unexpected error: $(cat "$WORK/err")"
[ ! -e "$WORK/limited.out" ] || fail "limited.out exists after the failure"
no_leftovers "$WORK"

step "a full tmpfs fails at once, nothing left behind"
mkdir -p "$WORK/small"
if unshare -m true 2>/dev/null; then
  rc=0
  # shellcheck disable=SC2016 # expanded by the inner shell
  unshare -m bash -c '
    mount -t tmpfs -o size=1m hipobj-test "$0" || exit 77
    "$@" cp s3://cli-download/obj "$0/out" 2>"$0/err"
    rc=$?
    cp "$0/err" "$0.err"
    ls -A "$0" >"$0.ls"
    exit $rc' "$WORK/small" "${H[@]}" || rc=$?
  if [ "$rc" -eq 77 ]; then
    echo "(cannot mount a tmpfs here: the full-tmpfs case is not checked)"
  else
    [ "$rc" -ne 0 ] || fail "a download into a full tmpfs exited 0"
    grep -q "No space left on device" "$WORK/small.err" ||
      fail "unexpected error: $(cat "$WORK/small.err")"
    [ "$(grep -cv '^err$' "$WORK/small.ls")" = 0 ] ||
      fail "left in the full tmpfs: $(cat "$WORK/small.ls")"
  fi
else
  echo "(unshare -m is not allowed here: the full-tmpfs case is not checked)"
fi
step "cp --recursive: small objects through a buffer, modes from the umask"
# Up to 256 KiB (the listing's size) an object comes through a buffer on
# the worker's thread; 262145 bytes takes the file path. The directories
# are made only when the first file in them misses its parent.
mkdir -p "$WORK/tree/a/b/c"
: >"$WORK/tree/zero"
head -c 1 /dev/urandom >"$WORK/tree/one"
head -c 4096 /dev/urandom >"$WORK/tree/a/b/c/four"
head -c 262144 /dev/urandom >"$WORK/tree/a/edge"
head -c 262145 /dev/urandom >"$WORK/tree/a/b/over"
"${H[@]}" cp --recursive "$WORK/tree/" s3://cli-download/tree/
(umask 027 && "${H[@]}" cp --recursive --jobs 3 s3://cli-download/tree/ \
  "$WORK/back/")
diff -r "$WORK/tree" "$WORK/back" || fail "the tree came back different"
for f in zero one a/b/c/four a/edge a/b/over; do
  [ "$(stat -c %a "$WORK/back/$f")" = 640 ] ||
    fail "$f has mode $(stat -c %a "$WORK/back/$f"), not 640 (umask 027)"
  [ "$(stat -c %Y "$WORK/back/$f")" -gt 0 ] || fail "$f has no mtime"
done
for d in a a/b a/b/c; do
  [ "$(stat -c %a "$WORK/back/$d")" = 750 ] ||
    fail "directory $d has mode $(stat -c %a "$WORK/back/$d"), not 750"
done
no_leftovers "$WORK/back"
no_leftovers "$WORK/back/a/b/c"

step "an object grown since the listing comes whole"
# The GET is held back by the server until the object has been replaced by
# a longer one: the listed size no longer holds it.
if command -v curl >/dev/null; then
  head -c 100 /dev/urandom >"$WORK/short"
  head -c 70000 /dev/urandom >"$WORK/long"
  "${H[@]}" cp "$WORK/short" s3://cli-download/grow/g
  admin() {
    curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" \
      --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@" "$URL/.hipobj-admin/faults"
  }
  admin -X POST --data-binary 'op=GetObject,nth=1,action=delay:8000' >/dev/null
  "${H[@]}" cp --recursive s3://cli-download/grow/ "$WORK/grown/" &
  cp_pid=$!
  for _ in $(seq 100); do
    grep -q 'fired=1' <<<"$(admin)" && break
    sleep 0.1
  done
  grep -q 'fired=1' <<<"$(admin)" || fail "the GET never reached the server"
  "${H[@]}" cp "$WORK/long" s3://cli-download/grow/g
  wait "$cp_pid" || fail "cp --recursive of the grown object failed"
  admin -X DELETE >/dev/null
  cmp -s "$WORK/long" "$WORK/grown/g" ||
    fail "got $(stat -c %s "$WORK/grown/g") bytes, not the 70000 of the object"

  step "cp --recursive starts on the first page of keys"
  mkdir -p "$WORK/many"
  for i in $(seq -w 1 150); do printf 'object %s\n' "$i" >"$WORK/many/o$i"; done
  "${H[@]}" cp --recursive "$WORK/many/" s3://cli-download/many/
  # Page 1 (100 keys) comes at once, page 2 eight seconds late.
  admin -X POST --data-binary 'op=ListObjectsV2,nth=2,action=delay:8000' >/dev/null
  "${H[@]}" cp --recursive s3://cli-download/many/ "$WORK/many-back/" &
  cp_pid=$!
  early=0
  for _ in $(seq 60); do
    # (no directory yet: find fails, which pipefail must not take as ours)
    n=$({ find "$WORK/many-back" -type f -name 'o*' 2>/dev/null || true; } | wc -l)
    [ "$n" -ge 100 ] && kill -0 "$cp_pid" 2>/dev/null && grep -q 'fired=1' <<<"$(admin)" &&
      { early=1; break; }
    sleep 0.1
  done
  [ "$early" = 1 ] || fail "no download of page 1 finished while page 2 was held back"
  wait "$cp_pid" || fail "cp --recursive with a slow second page failed"
  admin -X DELETE >/dev/null
  diff -r "$WORK/many" "$WORK/many-back" || fail "the 150 objects came back different"

  step "a listing that fails on a later page fails cp --recursive"
  admin -X POST --data-binary 'op=ListObjectsV2,nth=2,action=status:403:AccessDenied' >/dev/null
  rc=0
  "${H[@]}" cp --recursive s3://cli-download/many/ "$WORK/many-fail/" 2>"$WORK/err" || rc=$?
  admin -X DELETE >/dev/null
  [ "$rc" -ne 0 ] || fail "cp --recursive exited 0 though page 2 of the listing failed"
  grep -q "AccessDenied" "$WORK/err" || fail "unexpected error: $(cat "$WORK/err")"
else
  echo "(no curl for the fault endpoint: the grown object and the listing pages are not checked)"
fi

step "results written to a pipe nobody reads end the tool quietly, 141"
# The pipe's read end is closed before the tool starts: every result line
# of the --dryrun fails with EPIPE, which must not be reported as another
# error (errno changes between the write and the exit).
"${H[@]}" cp "$WORK/short" s3://cli-download/pipe/a
"${H[@]}" cp "$WORK/short" s3://cli-download/pipe/b
rc=$(/usr/bin/python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
print(subprocess.run(sys.argv[1:], stdout=w).returncode)' \
  "$CLI" --endpoint-url "$URL" --region us-east-1 \
  cp --recursive --dryrun s3://cli-download/pipe/ "$WORK/pipe-out/" 2>"$WORK/err")
[ "$rc" = 141 ] || fail "exit status $rc, not 141: $(cat "$WORK/err")"
[ ! -s "$WORK/err" ] || fail "a closed pipe was reported: $(cat "$WORK/err")"

step "a byte flipped in the stored object fails the download, named"
"${H[@]}" cp "$WORK/data" s3://cli-download/flip
stored="$WORK/root/cli-download/kflip"
b=$(od -An -tu1 -j 12345678 -N1 "$stored" | tr -d ' ')
# shellcheck disable=SC2059 # the format is the byte
printf "\\x$(printf %02x $((b ^ 1)))" |
  dd of="$stored" bs=1 seek=12345678 conv=notrunc status=none
rc=0
"${H[@]}" cp s3://cli-download/flip "$WORK/flip.out" 2>"$WORK/err" || rc=$?
[ "$rc" -ne 0 ] || fail "the download of a damaged object exited 0"
grep -q "CRC64NVME mismatch" "$WORK/err" ||
  fail "unexpected error: $(cat "$WORK/err")"
[ ! -e "$WORK/flip.out" ] || fail "flip.out exists after the failure"
no_leftovers "$WORK"
HIPOBJ_CHECKSUM_MODE=off "${H[@]}" cp s3://cli-download/flip "$WORK/flip.out"
cmp -s "$WORK/data" "$WORK/flip.out" && fail "the damage was not downloaded"
rm -f "$WORK/flip.out"
echo "PASS"
