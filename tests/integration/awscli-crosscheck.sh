#!/bin/bash
# Cross-checks the hipobj CLI against Debian's AWS CLI on the server named
# by HIPOBJ_TEST_* (run it under tests/with-rgw.sh):
#   awscli-crosscheck.sh PATH/TO/hipobj
# Objects written by one tool (multipart included) must read back
# bit-identical with the other. Exits 77 when /usr/bin/aws or the server is
# missing.
set -euo pipefail

AWS=/usr/bin/aws # explicitly Debian's: another `aws` may come first on PATH
STEP_TIMEOUT=180

if [ $# -ne 1 ]; then
  echo "usage: $0 PATH/TO/hipobj" >&2
  exit 2
fi
HIPOBJ=$(realpath "$1")
if [ ! -x "$AWS" ]; then
  echo "SKIP: $AWS not found (apt-get install awscli)"
  exit 77
fi
if [ -z "${HIPOBJ_TEST_ENDPOINT:-}" ]; then
  echo "SKIP: HIPOBJ_TEST_ENDPOINT is not set (run under tests/with-rgw.sh)"
  exit 77
fi
[ -x "$HIPOBJ" ] || {
  echo "awscli-crosscheck: $HIPOBJ is not an executable" >&2
  exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/hipobj-xcheck.XXXXXX")
bucket="hipobj-xcheck-$(date +%s)-$$"
bucket_made=0

# Both tools see the same credentials and nothing from the user's ~/.aws.
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_PROFILE AWS_ENDPOINT_URL_S3
export AWS_ACCESS_KEY_ID=${HIPOBJ_TEST_ACCESS_KEY:?}
export AWS_SECRET_ACCESS_KEY=${HIPOBJ_TEST_SECRET_KEY:?}
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export AWS_ENDPOINT_URL=$HIPOBJ_TEST_ENDPOINT
export AWS_EC2_METADATA_DISABLED=true
export AWS_PAGER=""
export AWS_CONFIG_FILE=$work/aws-config
export AWS_SHARED_CREDENTIALS_FILE=$work/aws-credentials
# RGW has no wildcard DNS here: path-style URLs only.
cat >"$AWS_CONFIG_FILE" <<EOF
[default]
region = us-east-1
s3 =
    addressing_style = path
EOF
: >"$AWS_SHARED_CREDENTIALS_FILE"

ep=(--endpoint-url "$HIPOBJ_TEST_ENDPOINT" --region us-east-1)

cleanup() {
  if [ "$bucket_made" = 1 ]; then
    timeout 120 "$AWS" "${ep[@]}" s3 rb --force "s3://$bucket" >/dev/null 2>&1 ||
      echo "awscli-crosscheck: could not remove bucket $bucket" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step() { echo "== $*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
aws_() { timeout "$STEP_TIMEOUT" "$AWS" "${ep[@]}" "$@"; }
hipobj_() {
  local sub=$1
  shift
  timeout "$STEP_TIMEOUT" "$HIPOBJ" "$sub" "${ep[@]}" "$@"
}
sha() { sha256sum "$1" | cut -d' ' -f1; }

same_file() {
  local a b
  a=$(sha "$1")
  b=$(sha "$2")
  [ "$a" = "$b" ] || fail "$3: sha256 $a ($1) != $b ($2)"
  echo "   sha256 match: $a"
}

etag_of() {
  aws_ s3api head-object --bucket "$bucket" --key "$1" --query ETag \
    --output text
}

step "hipobj mb s3://$bucket"
hipobj_ mb "s3://$bucket" || fail "hipobj mb s3://$bucket"
bucket_made=1
aws_ s3api head-bucket --bucket "$bucket" || fail "aws does not see the bucket made by hipobj mb"

head -c $((9 * 1024 * 1024)) /dev/urandom >"$work/nine.bin"
head -c $((1024 * 1024 + 7)) /dev/urandom >"$work/small.bin"

step "aws s3 cp (multipart) -> hipobj cp"
aws_ s3 cp --only-show-errors "$work/nine.bin" "s3://$bucket/from-aws/nine.bin"
etag=$(etag_of from-aws/nine.bin)
[[ "$etag" == *-2\" ]] || fail "aws upload was not multipart (ETag $etag)"
hipobj_ cp "s3://$bucket/from-aws/nine.bin" "$work/nine.hipobj" ||
  fail "hipobj cp s3://$bucket/from-aws/nine.bin"
same_file "$work/nine.bin" "$work/nine.hipobj" "aws put, hipobj get"

step "hipobj cp --part-size 5MiB -> aws s3 cp"
hipobj_ cp --part-size 5MiB "$work/nine.bin" "s3://$bucket/from-hipobj/nine.bin" ||
  fail "hipobj cp --part-size 5MiB upload"
etag=$(etag_of from-hipobj/nine.bin)
[[ "$etag" == *-2\" ]] || fail "hipobj 9 MiB upload with 5 MiB parts: ETag $etag, want 2 parts"
aws_ s3 cp --only-show-errors "s3://$bucket/from-hipobj/nine.bin" "$work/nine.aws"
same_file "$work/nine.bin" "$work/nine.aws" "hipobj put, aws get"

step "key with a space, both directions"
aws_ s3 cp --only-show-errors "$work/small.bin" "s3://$bucket/dir with space/by aws.bin"
hipobj_ cp "s3://$bucket/dir with space/by aws.bin" "$work/space.hipobj" ||
  fail "hipobj cp of a key with a space"
same_file "$work/small.bin" "$work/space.hipobj" "space key, aws put, hipobj get"
hipobj_ cp "$work/small.bin" "s3://$bucket/dir with space/by hipobj.bin" ||
  fail "hipobj cp upload to a key with a space"
aws_ s3 cp --only-show-errors "s3://$bucket/dir with space/by hipobj.bin" "$work/space.aws"
same_file "$work/small.bin" "$work/space.aws" "space key, hipobj put, aws get"
listed=$(aws_ s3api list-objects-v2 --bucket "$bucket" --prefix "dir with space/" \
  --query 'Contents[].Key' --output text)
[[ "$listed" == *"dir with space/by hipobj.bin"* ]] ||
  fail "aws does not list the key hipobj wrote: $listed"

echo "awscli-crosscheck: all checks passed"
