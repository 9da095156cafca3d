#!/bin/bash
# conformance.sh - hipobj-server against two independent S3 clients,
# Debian's awscli (/usr/bin/aws, explicitly: another `aws` may come first on
# PATH) and s3cmd: buckets, multipart uploads and downloads, listing with
# pagination, ranged GETs, deletes, presigned URLs (fetched with curl), and
# a wrong secret. Every download is compared by SHA-256.
#
# Usage: conformance.sh path/to/hipobj-server [disk|memory]
# (memory: the server's --storage memory, the one compare.sh measures
# clients on, with its own root in /dev/shm.)
# Exit 77 (skipped) when aws, s3cmd or curl is missing, or memory is asked
# without a tmpfs at /dev/shm.
set -euo pipefail

SERVER=${1:?usage: conformance.sh path/to/hipobj-server [disk|memory]}
MODE=${2:-disk}
case "$MODE" in
disk | memory) ;;
*)
  echo "conformance.sh: mode '$MODE': expected disk or memory" >&2
  exit 2
  ;;
esac
if [ "$MODE" = memory ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" != tmpfs ]; then
  echo "SKIP: no tmpfs at /dev/shm for --storage memory"
  exit 77
fi
AWS=/usr/bin/aws
for tool in "$AWS" s3cmd curl sha256sum; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed"
    exit 77
  fi
done

WORK=$(mktemp -d /tmp/hipobj-conformance-XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  if [ "${HIPOBJ_TEST_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  echo "--- last lines of the server log ($WORK/server.log):"
  tail -20 "$WORK/server.log" || true
  exit 1
}
step() { echo "== $*"; }

AK=AKIDCONFORMANCE
SK=conformance-secret-key
store=(--root "$WORK/root")
[ "$MODE" = disk ] || store=(--storage memory) # a root of its own, removed at exit
"$SERVER" "${store[@]}" --listen 127.0.0.1:0 --access-key "$AK" \
  --secret-key "$SK" --region us-east-1 --log-level info \
  >"$WORK/ready" 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do
  grep -q 'listening on' "$WORK/ready" 2>/dev/null && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "hipobj-server exited at start"
  sleep 0.1
done
URL=$(sed -n 's/.*listening on //p' "$WORK/ready")
[ -n "$URL" ] || fail "hipobj-server did not print its URL"
echo "server: $URL"

# A private awscli configuration: nothing from the user's files.
cat >"$WORK/aws-config" <<EOF
[default]
region = us-east-1
s3 =
  multipart_threshold = 5MB
  multipart_chunksize = 5MB
EOF
export AWS_CONFIG_FILE="$WORK/aws-config" AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK AWS_DEFAULT_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true AWS_PAGER=""
# awscli >= 2.23 adds a CRC32 checksum to every upload by default, which
# hipobj-server checks (checksum-interop.sh covers checksums); this keeps
# these steps on the plain paths whatever the version (older ones ignore it).
export AWS_REQUEST_CHECKSUM_CALCULATION=when_required
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN AWS_REGION
aws() { timeout 120 "$AWS" --endpoint-url "$URL" --no-cli-pager "$@"; }

HOSTPORT=${URL#http://}
cat >"$WORK/s3cfg" <<EOF
[default]
access_key = $AK
secret_key = $SK
host_base = $HOSTPORT
host_bucket = $HOSTPORT
use_https = False
signature_v2 = False
bucket_location = us-east-1
check_ssl_certificate = False
EOF
s3c() { timeout 120 s3cmd -c "$WORK/s3cfg" --no-progress "$@"; }

sha() { sha256sum "$1" | cut -d' ' -f1; }
same() { [ "$(sha "$1")" = "$(sha "$2")" ] || fail "$3: $1 and $2 differ"; }

head -c $((20 * 1024 * 1024 + 12345)) /dev/urandom >"$WORK/big.bin"
head -c 4096 /dev/urandom >"$WORK/small.bin"

step "awscli: mb, multipart cp up and down"
aws s3 mb s3://aws-bkt >/dev/null || fail "aws s3 mb"
aws s3 cp --only-show-errors "$WORK/big.bin" s3://aws-bkt/dir/big.bin || fail "aws s3 cp up"
aws s3 cp --only-show-errors s3://aws-bkt/dir/big.bin "$WORK/big.aws" || fail "aws s3 cp down"
same "$WORK/big.bin" "$WORK/big.aws" "aws multipart round trip"
etag=$(aws s3api head-object --bucket aws-bkt --key dir/big.bin --query ETag --output text)
case "$etag" in *-5\"|*-5) ;; *) fail "multipart ETag $etag is not <md5>-5" ;; esac

step "awscli: ranged get-object"
aws s3api get-object --bucket aws-bkt --key dir/big.bin --range bytes=1000-1999 \
  "$WORK/range.aws" >/dev/null || fail "aws get-object --range"
dd if="$WORK/big.bin" of="$WORK/range.want" bs=1000 skip=1 count=1 status=none
same "$WORK/range.want" "$WORK/range.aws" "range bytes=1000-1999"
aws s3api get-object --bucket aws-bkt --key dir/big.bin --range bytes=-100 \
  "$WORK/suffix.aws" >/dev/null || fail "aws get-object suffix range"
tail -c 100 "$WORK/big.bin" >"$WORK/suffix.want"
same "$WORK/suffix.want" "$WORK/suffix.aws" "range bytes=-100"

step "awscli: list-objects-v2 pagination"
for i in 1 2 3 4 5 6 7; do
  aws s3 cp --only-show-errors "$WORK/small.bin" "s3://aws-bkt/page/k$i" || fail "aws cp k$i"
done
out=$(aws s3api list-objects-v2 --bucket aws-bkt --prefix page/ --page-size 2 \
  --max-items 5 --output json)
n=$(echo "$out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["Contents"]))')
[ "$n" = 5 ] || fail "first page has $n keys, want 5"
token=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["NextToken"])')
rest=$(aws s3api list-objects-v2 --bucket aws-bkt --prefix page/ --page-size 2 \
  --starting-token "$token" --query 'Contents[].Key' --output text |
  tr -s '\t\n' '  ')
[ "$rest" = "page/k6 page/k7 " ] || fail "second page is '$rest'"
keys=$(aws s3 ls s3://aws-bkt/ | awk '{print $NF}' | tr '\n' ' ')
[ "$keys" = "dir/ page/ " ] || fail "aws s3 ls with delimiter gave '$keys'"

step "awscli: presign + curl"
purl=$(aws s3 presign s3://aws-bkt/page/k1 --expires-in 300)
timeout 60 curl -sf -o "$WORK/presigned" "$purl" || fail "curl of a presigned URL"
same "$WORK/small.bin" "$WORK/presigned" "presigned download"
code=$(timeout 60 curl -s -o /dev/null -w '%{http_code}' "${purl/k1/k2}")
[ "$code" = 403 ] || fail "a presigned URL for another key gave $code"

step "awscli: wrong secret -> 403 SignatureDoesNotMatch"
if msg=$(AWS_SECRET_ACCESS_KEY=wrong "$AWS" --endpoint-url "$URL" s3api \
  list-objects-v2 --bucket aws-bkt 2>&1); then
  fail "a wrong secret was accepted"
fi
echo "$msg" | grep -q SignatureDoesNotMatch || fail "wrong secret: $msg"

step "awscli: rm, rb"
aws s3 rm --only-show-errors --recursive s3://aws-bkt/page/ || fail "aws s3 rm --recursive"
aws s3 rm --only-show-errors s3://aws-bkt/dir/big.bin || fail "aws s3 rm"
aws s3api head-object --bucket aws-bkt --key dir/big.bin >/dev/null 2>&1 &&
  fail "deleted object still there"
aws s3 rb s3://aws-bkt >/dev/null || fail "aws s3 rb"

step "s3cmd: mb, multipart put, get, ls, del, rb"
s3c mb s3://s3cmd-bkt >/dev/null || fail "s3cmd mb"
s3c put --multipart-chunk-size-mb=5 "$WORK/big.bin" s3://s3cmd-bkt/big.bin \
  >/dev/null || fail "s3cmd put"
s3c put "$WORK/small.bin" s3://s3cmd-bkt/small.bin >/dev/null || fail "s3cmd put small"
s3c get --force s3://s3cmd-bkt/big.bin "$WORK/big.s3cmd" >/dev/null || fail "s3cmd get"
same "$WORK/big.bin" "$WORK/big.s3cmd" "s3cmd multipart round trip"
s3c get --force s3://s3cmd-bkt/small.bin "$WORK/small.s3cmd" >/dev/null || fail "s3cmd get small"
same "$WORK/small.bin" "$WORK/small.s3cmd" "s3cmd small round trip"
n=$(s3c ls s3://s3cmd-bkt/ | wc -l)
[ "$n" = 2 ] || fail "s3cmd ls shows $n objects, want 2"
grep -q 's3://s3cmd-bkt' <<<"$(s3c ls)" || fail "s3cmd ls of buckets"
# Cross-check: what s3cmd stored, awscli reads.
aws s3 cp --only-show-errors s3://s3cmd-bkt/big.bin "$WORK/big.cross" || fail "aws cp of s3cmd's object"
same "$WORK/big.bin" "$WORK/big.cross" "s3cmd upload read by awscli"
if msg=$(s3cmd -c "$WORK/s3cfg" --secret_key=wrong ls s3://s3cmd-bkt 2>&1); then
  fail "s3cmd with a wrong secret was accepted"
fi
echo "$msg" | grep -q 403 || fail "s3cmd wrong secret: $msg"
s3c del s3://s3cmd-bkt/big.bin s3://s3cmd-bkt/small.bin >/dev/null || fail "s3cmd del"
s3c rb s3://s3cmd-bkt >/dev/null || fail "s3cmd rb"

echo "PASS: awscli and s3cmd conformance"
