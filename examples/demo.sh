#!/bin/bash
# The README's main job: build hipObject, start the bundled S3 server
# (hipobj-server on a temporary directory, loopback only), copy a generated
# file up (multipart) and back with the `hipobj` tool, verify it byte for
# byte, print a summary, clean up.
#   examples/demo.sh [SIZE_MiB]   (default 64)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size_mib=${1:-64}
work=$(mktemp -d /tmp/hipobj-demo.XXXXXX)
server_pid=

cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

cd "$root"
if [ ! -f build/build.ninja ]; then
  meson setup build >/dev/null
fi
ninja -C build >/dev/null
hipobj=$root/build/examples/hipobj

echo "== starting hipobj-server on $work/root"
export AWS_ACCESS_KEY_ID=HIPOBJDEMOACCESSKEY1
export AWS_SECRET_ACCESS_KEY=hipobjDemoSecretKey00000000000000000001
export AWS_REGION=us-east-1
mkdir -p "$work/root"
: >"$work/ready" # exists before the background redirection
"$root/build/tests/server/hipobj-server" --root "$work/root" \
  --listen 127.0.0.1:0 >"$work/ready" 2>"$work/server.log" &
server_pid=$!
endpoint=
for _ in $(seq 100); do
  endpoint=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/ready")
  [ -n "$endpoint" ] && break
  sleep 0.1
done
if [ -z "$endpoint" ]; then
  echo "FAILED: hipobj-server did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
export AWS_ENDPOINT_URL=$endpoint
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
print(f"summary: {up['bytes']} bytes; upload {up['MiBps']:.1f} MiB/s in "
      f"{up['parts']} parts, download {down['MiBps']:.1f} MiB/s, "
      f"data path {down['data_path']}, retries {up['retries'] + down['retries']}")
PY
