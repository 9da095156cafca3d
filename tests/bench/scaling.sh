#!/bin/bash
# GET/PUT throughput against concurrency (1, 2, 4, 8 parts in flight) for
# 1 GiB objects from a local hipobj-server, into host memory and, where a
# GPU exists, GPU memory: run on a machine where the client is not starved
# of CPU (the 16-core GPU machine: tests/gpu/device-run.sh scaling).
#   tests/bench/scaling.sh SERVER_BIN HIPOBJ_CLI [SIZE]
set -euo pipefail
server=$1 cli=$2 size=${3:-1GiB}
work=$(mktemp -d /tmp/hipobj-scaling.XXXXXX)
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
export AWS_ACCESS_KEY_ID=HIPOBJSCALINGKEY0001
export AWS_SECRET_ACCESS_KEY=hipobjScalingSecret0000000000000000000001
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_server "$server" "$work" || exit 1
url=$server_url
echo "scaling: $(nproc) CPUs, server $url, object $size"
# Library defaults (signed payloads, 8 MiB parts), except the part count.
"$cli" --endpoint-url "$url" bench --sizes "$size" --concurrency 1,2,4,8 \
  --runs 3 --memory host,gpu
