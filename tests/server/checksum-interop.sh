#!/bin/bash
# checksum-interop.sh - hipobj-server's flexible checksums against real
# clients. Debian's awscli v2 (botocore) sends a requested checksum as an
# aws-chunked trailer (STREAMING-UNSIGNED-PAYLOAD-TRAILER, x-amz-trailer:
# x-amz-checksum-<alg>) over HTTPS and as a header over plain HTTP:
# put-object with CRC32 and CRC32C trailers, a 20 MiB multipart upload
# with CRC32 trailers on its parts (the composite checksum of the result
# checked against one computed here with zlib), a wrong checksum refused,
# and put-object with a CRC32C header. GETs with --checksum-mode ENABLED:
# botocore verifies the values hipobj-server returns (a full-object CRC32
# and CRC32C; the composite of a multipart object it skips, as it must),
# and fails on a byte flipped in the stored object, as hipObject does.
# Then awscrt_checksums.py drives aws-c-s3 (python3-awscrt). Every upload
# is read back and compared.
#
# Usage: checksum-interop.sh path/to/hipobj-server
# awscrt 0.16 connects to port 80 whatever the endpoint says, so the script
# re-runs itself in a private network namespace (unshare -n, or -rn when
# not root), where 127.0.0.1:80 is free and nothing else is disturbed;
# without one, the awscrt steps are skipped. Steps whose client is missing
# are skipped with a SKIP line; exit 77 (skipped) when both are.
set -euo pipefail

SERVER=${1:?usage: checksum-interop.sh path/to/hipobj-server}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AWS=/usr/bin/aws
PY=/usr/bin/python3

if [ -z "${HIPOBJ_INTEROP_NETNS:-}" ] && command -v ip >/dev/null; then
  for u in "unshare -n" "unshare -rn"; do
    if $u true 2>/dev/null; then
      HIPOBJ_INTEROP_NETNS=1 exec $u "$0" "$@"
    fi
  done
fi
if [ "${HIPOBJ_INTEROP_NETNS:-}" = 1 ]; then
  ip link set lo up
fi

have_aws=1 have_crt=1
for tool in "$PY" cmp split; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
[ -x "$AWS" ] || have_aws=0
"$PY" -c 'import awscrt.s3' 2>/dev/null || have_crt=0
[ $have_aws = 1 ] || echo "SKIP: awscli steps: $AWS is not installed"
[ $have_crt = 1 ] || echo "SKIP: awscrt steps: python3-awscrt is not importable"
if [ $have_crt = 1 ] && [ "${HIPOBJ_INTEROP_NETNS:-}" != 1 ]; then
  echo "SKIP: awscrt steps: awscrt 0.16 needs 127.0.0.1:80, and no private" \
    "network namespace could be made (unshare -n)"
  have_crt=0
fi
[ $have_aws = 1 ] || [ $have_crt = 1 ] || exit 77

WORK=$(mktemp -d /tmp/hipobj-checksum-interop-XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "${HIPOBJ_TEST_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  for log in "$WORK"/*.log; do
    echo "--- last lines of $log:"
    tail -20 "$log" || true
  done
  exit 1
}
step() { echo "== $*"; }

AK=AKIDINTEROP
SK=interop-secret-key
# start NAME LISTEN [options]: a server on its own root; its URL in $URL.
start() {
  local name=$1 listen=$2
  shift 2
  "$SERVER" --root "$WORK/$name-root" --listen "$listen" --access-key "$AK" \
    --secret-key "$SK" --region us-east-1 --log-level debug "$@" \
    >"$WORK/$name.ready" 2>"$WORK/$name.log" &
  PIDS+=($!)
  for _ in $(seq 100); do
    grep -q 'listening on' "$WORK/$name.ready" 2>/dev/null && break
    kill -0 "${PIDS[-1]}" 2>/dev/null || fail "hipobj-server ($name) exited at start"
    sleep 0.1
  done
  URL=$(sed -n 's/.*listening on //p' "$WORK/$name.ready")
  [ -n "$URL" ] || fail "hipobj-server ($name) did not print its URL"
  echo "server $name: $URL"
}

export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK AWS_DEFAULT_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true AWS_PAGER=""
export AWS_CA_BUNDLE=$HERE/tls/ca.pem
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN AWS_REGION
unset AWS_REQUEST_CHECKSUM_CALCULATION

head -c $((20 * 1024 * 1024 + 12345)) /dev/urandom >"$WORK/big.bin"
head -c 4096 /dev/urandom >"$WORK/small.bin"

# crc ALG FILE...: the base64 CRC of each file (CRC32 by zlib, CRC32C bit by
# bit); "composite" instead of one file: the composite of the files as parts.
crc() {
  "$PY" - "$@" <<'EOF'
import base64, sys, zlib
def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
    return c ^ 0xFFFFFFFF
alg, files = sys.argv[1], sys.argv[2:]
f = zlib.crc32 if alg == "CRC32" else crc32c
composite = files[0] == "composite"
crcs = [f(open(p, "rb").read()) for p in files[composite:]]
if composite:
    v = f(b"".join(c.to_bytes(4, "big") for c in crcs))
    print(base64.b64encode(v.to_bytes(4, "big")).decode() + f"-{len(crcs)}")
else:
    print(" ".join(base64.b64encode(c.to_bytes(4, "big")).decode() for c in crcs))
EOF
}
json() { "$PY" -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }

awscli_trailers() {
  start tls 127.0.0.1:0 --tls-cert "$HERE/tls/server.pem" --tls-key "$HERE/tls/server.key"
  aws() { timeout 120 "$AWS" --endpoint-url "$URL" --no-cli-pager "$@"; }
  aws s3 mb s3://cks >/dev/null || fail "aws s3 mb"

  step "awscli over HTTPS: put-object with a CRC32 and a CRC32C trailer"
  for alg in CRC32 CRC32C; do
    out=$(aws s3api put-object --bucket cks --key "small-$alg" \
      --body "$WORK/small.bin" --checksum-algorithm $alg --output json) ||
      fail "put-object --checksum-algorithm $alg"
    got=$(json "Checksum$alg" <<<"$out")
    want=$(crc $alg "$WORK/small.bin")
    [ "$got" = "$want" ] || fail "$alg echoed '$got', want '$want'"
    aws s3api get-object --bucket cks --key "small-$alg" "$WORK/small.back" \
      >/dev/null || fail "get-object small-$alg"
    cmp -s "$WORK/small.bin" "$WORK/small.back" || fail "small-$alg differs"
    # What the server checked, from its debug log: the client did send a
    # trailer (an older awscli would send a header, or nothing).
    grep -q "x-amz-checksum-${alg,,}: $want (unsigned trailer) matches" \
      "$WORK/tls.log" || fail "no $alg trailer was checked (see tls.log)"
  done

  step "awscli over HTTPS: get-object --checksum-mode ENABLED verifies them"
  for alg in CRC32 CRC32C; do
    out=$(aws s3api get-object --bucket cks --key "small-$alg" \
      --checksum-mode ENABLED "$WORK/small.back" --output json) ||
      fail "get-object --checksum-mode ENABLED small-$alg"
    got=$(json "Checksum$alg" <<<"$out")
    [ "$got" = "$(crc $alg "$WORK/small.bin")" ] ||
      fail "get-object small-$alg: Checksum$alg '$got'"
    cmp -s "$WORK/small.bin" "$WORK/small.back" || fail "small-$alg differs"
  done
  # A byte flipped in the stored file, in place: botocore must refuse it.
  "$PY" - "$WORK/tls-root/cks/ksmall-CRC32C" <<'EOF'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(100)
    b = f.read(1)[0]
    f.seek(100)
    f.write(bytes([b ^ 1]))
EOF
  if msg=$(aws s3api get-object --bucket cks --key small-CRC32C \
    --checksum-mode ENABLED "$WORK/small.back" 2>&1); then
    fail "botocore accepted a damaged object: no checksum was returned"
  fi
  echo "$msg" | grep -qi "checksum" || fail "damaged object: $msg"

  step "awscli over HTTPS: a 20 MiB upload in 3 parts with CRC32 trailers"
  split -b 8388608 -d "$WORK/big.bin" "$WORK/part."
  trailers() { grep -c "x-amz-checksum-crc32: .* (unsigned trailer) matches" "$WORK/tls.log"; }
  before=$(trailers)
  id=$(aws s3api create-multipart-upload --bucket cks --key big \
    --checksum-algorithm CRC32 --query UploadId --output text) ||
    fail "create-multipart-upload --checksum-algorithm CRC32"
  n=0
  for p in "$WORK"/part.*; do
    n=$((n + 1))
    aws s3api upload-part --bucket cks --key big --upload-id "$id" \
      --part-number $n --body "$p" --checksum-algorithm CRC32 --output json \
      >"$WORK/upload-part.$n.json" || fail "upload-part $n"
    got=$(json ChecksumCRC32 <"$WORK/upload-part.$n.json")
    [ "$got" = "$(crc CRC32 "$p")" ] || fail "part $n: CRC32 echo '$got'"
  done
  [ $n = 3 ] || fail "big.bin made $n parts, not 3"
  [ $(($(trailers) - before)) = 3 ] || fail "not every part had a CRC32 trailer"
  "$PY" - "$WORK" >"$WORK/parts.json" <<'EOF'
import json, sys
parts = []
for n in (1, 2, 3):
    r = json.load(open(f"{sys.argv[1]}/upload-part.{n}.json"))
    parts.append({"PartNumber": n, "ETag": r["ETag"],
                  "ChecksumCRC32": r["ChecksumCRC32"]})
print(json.dumps({"Parts": parts}))
EOF
  out=$(aws s3api complete-multipart-upload --bucket cks --key big \
    --upload-id "$id" --multipart-upload "file://$WORK/parts.json" \
    --output json) || fail "complete-multipart-upload"
  got=$(json ChecksumCRC32 <<<"$out")
  want=$(crc CRC32 composite "$WORK"/part.*)
  [ "$got" = "$want" ] || fail "composite ChecksumCRC32 '$got', want '$want'"
  aws s3api get-object --bucket cks --key big "$WORK/big.back" \
    --checksum-mode ENABLED >/dev/null || fail "get-object big"
  cmp -s "$WORK/big.bin" "$WORK/big.back" || fail "big differs"
  grep -q 'UploadPart 200' "$WORK/tls.log" || fail "no UploadPart in the log"

  step "awscli over HTTPS: a wrong CRC32 is refused"
  if msg=$(aws s3api put-object --bucket cks --key wrong --body "$WORK/small.bin" \
    --checksum-crc32 AAAAAA== 2>&1); then
    fail "a wrong x-amz-checksum-crc32 was accepted"
  fi
  echo "$msg" | grep -q BadDigest || fail "wrong CRC32: $msg"
  aws s3api head-object --bucket cks --key wrong >/dev/null 2>&1 &&
    fail "the refused object was stored"
  return 0
}

awscli_headers() {
  step "awscli over HTTP: put-object with a CRC32C header"
  aws() { timeout 120 "$AWS" --endpoint-url "$HTTP_URL" --no-cli-pager "$@"; }
  aws s3 mb s3://cks-http >/dev/null || fail "aws s3 mb (http)"
  out=$(aws s3api put-object --bucket cks-http --key small --body "$WORK/small.bin" \
    --checksum-algorithm CRC32C --output json) || fail "put-object CRC32C (http)"
  got=$(json ChecksumCRC32C <<<"$out")
  [ "$got" = "$(crc CRC32C "$WORK/small.bin")" ] || fail "CRC32C echo '$got'"
  aws s3api get-object --bucket cks-http --key small "$WORK/small.back" \
    >/dev/null || fail "get-object (http)"
  cmp -s "$WORK/small.bin" "$WORK/small.back" || fail "small (http) differs"
}

[ $have_aws = 1 ] && awscli_trailers
if [ "${HIPOBJ_INTEROP_NETNS:-}" = 1 ]; then
  start http 127.0.0.1:80
else
  start http 127.0.0.1:0
fi
HTTP_URL=$URL
[ $have_aws = 1 ] && awscli_headers

if [ $have_crt = 1 ]; then
  step "awscrt (aws-c-s3): checksums on PutObject, multipart uploads"
  "$PY" "$HERE/awscrt_checksums.py" --endpoint http://127.0.0.1 \
    --bucket crt-bkt --dir "$WORK" || fail "awscrt_checksums.py"
fi

echo "PASS: checksum interop"
