#!/bin/bash
# RDMA vs HTTP data path on the same objects: throughput and client CPU time
# per GiB (getrusage), through `hipobj bench`, against hipobj-server
# --rdma auto. Run it where RDMA verbs work (it re-executes itself under
# tests/rxe/with-rdma.sh: a real device, native Soft-RoCE, or the qemu
# guest). Soft-RoCE numbers are emulation: only the ratio means anything.
#   tests/bench/rdma-vs-http.sh [BUILD_DIR] [SIZES]   (default build, 1MiB,8MiB)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
sizes=${2:-1MiB,8MiB}
if [ -z "${HIPOBJ_IN_RDMA:-}" ]; then
  export HIPOBJ_IN_RDMA=1
  exec "$root/tests/rxe/with-rdma.sh" "$0" "$build" "$sizes"
fi
export HIPOBJ_SERVER_OPTS="--rdma auto"
for mode in off require; do
  echo "== data path: --rdma $mode"
  "$root/tests/with-server.sh" "$build/tests/server/hipobj-server" \
    sh -c "AWS_ACCESS_KEY_ID=\$HIPOBJ_TEST_ACCESS_KEY \
      AWS_SECRET_ACCESS_KEY=\$HIPOBJ_TEST_SECRET_KEY \
      \"$build/examples/hipobj\" --endpoint-url \"\$HIPOBJ_TEST_ENDPOINT\" \
      bench --sizes $sizes --runs 3 --rdma $mode" \
    2>&1 | grep -v '^with-server'
done
