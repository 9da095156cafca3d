#!/bin/bash
# Runs one command against a private hipobj-server on a free loopback port:
#   tests/with-server.sh SERVER_BIN CMD ARGS...
# Starts the server on a fresh temp root, exports HIPOBJ_TEST_ENDPOINT /
# _ACCESS_KEY / _SECRET_KEY / _REGION (the variables the integration suite
# reads, as with-rgw.sh does for Ceph), runs CMD, stops the server and exits
# with CMD's status. Extra server options can be passed in
# HIPOBJ_SERVER_OPTS (e.g. "--faults op=GetObject,nth=1,action=status:503").
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 SERVER_BIN CMD [ARGS...]" >&2
  exit 2
fi
server=$1
shift
work=$(mktemp -d /tmp/hipobj-with-server.XXXXXX)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export HIPOBJ_TEST_ACCESS_KEY=HIPOBJSERVERTESTKEY1
export HIPOBJ_TEST_SECRET_KEY=hipobjServerTestSecret000000000000000001
export HIPOBJ_TEST_REGION=us-east-1
mkdir -p "$work/root"
# The server's redirection happens in the background job, possibly after
# the first look below: the file must exist before it starts.
: >"$work/ready"
# shellcheck disable=SC2086 # HIPOBJ_SERVER_OPTS is a list of options
"$server" --root "$work/root" --listen 127.0.0.1:0 \
  --access-key "$HIPOBJ_TEST_ACCESS_KEY" \
  --secret-key "$HIPOBJ_TEST_SECRET_KEY" --region "$HIPOBJ_TEST_REGION" \
  ${HIPOBJ_SERVER_OPTS:-} >"$work/ready" 2>"$work/server.log" &
pid=$!
url=
for _ in $(seq 100); do
  url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/ready" | head -n 1)
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "with-server.sh: hipobj-server did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
export HIPOBJ_TEST_ENDPOINT=$url
status=0
"$@" || status=$?
if [ "$status" -ne 0 ]; then
  echo "with-server.sh: server log tail:" >&2
  tail -n 40 "$work/server.log" >&2
fi
exit "$status"
