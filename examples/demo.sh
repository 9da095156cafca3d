#!/bin/bash
# The README's main job: build hipObject, start a throw-away local S3 server
# (Ceph RGW on loopback), copy a generated file up (multipart) and back with
# the `hipobj` tool, verify it byte for byte, print a summary, clean up.
#   examples/demo.sh [SIZE_MiB]   (default 64)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size_mib=${1:-64}
work=$(mktemp -d /tmp/hipobj-demo.XXXXXX)
port=17480

cleanup() {
  "$root/tests/ceph-rgw.sh" stop "$work/rgw" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

cd "$root"
if [ ! -f build/build.ninja ]; then
  meson setup build >/dev/null
fi
ninja -C build >/dev/null
hipobj=$root/build/examples/hipobj

echo "== starting a local Ceph RGW"
endpoint=$("$root/tests/ceph-rgw.sh" start "$work/rgw" "$port" | tail -n 1)
export AWS_ACCESS_KEY_ID=HIPOBJTESTACCESSKEY1
export AWS_SECRET_ACCESS_KEY=hipobjTestSecretKey000000000000000000001
export AWS_ENDPOINT_URL=$endpoint AWS_REGION=us-east-1
echo "   endpoint $endpoint"

echo "== generating ${size_mib} MiB of random data"
head -c "$((size_mib * 1024 * 1024))" /dev/urandom >"$work/src.bin"

"$hipobj" mb s3://demo >/dev/null
echo "== upload (multipart, 8 MiB parts)"
"$hipobj" --json cp "$work/src.bin" s3://demo/data/src.bin | tee "$work/up.json"
echo "== download"
"$hipobj" --json cp s3://demo/data/src.bin "$work/back.bin" | tee "$work/down.json"
"$hipobj" stat s3://demo/data/src.bin

a=$(sha256sum <"$work/src.bin" | cut -d' ' -f1)
b=$(sha256sum <"$work/back.bin" | cut -d' ' -f1)
if [ "$a" != "$b" ]; then
  echo "FAILED: sha256 differs ($a vs $b)" >&2
  exit 1
fi
echo "== verified: sha256 $a"
python3 - "$work/up.json" "$work/down.json" <<'PY'
import json, sys
up, down = (json.load(open(p)) for p in sys.argv[1:3])
print(f"summary: {up['bytes']} bytes; upload {up['MBps']:.1f} MB/s in "
      f"{up['parts']} parts, download {down['MBps']:.1f} MB/s, "
      f"data path {down['data_path']}, retries {up['retries'] + down['retries']}")
PY
