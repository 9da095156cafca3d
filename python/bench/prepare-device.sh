#!/bin/bash
# prepare-device.sh - run HERE (Debian 12, after tests/install-deps.sh)
# before a Python run on the GPU machine: tests/gpu/prepare-device.sh
# (hipobj-server and the libraries into .dev/), then
#   .dev/python/hipobj/  the package, extension included (_hipobj.abi3.so:
#                        CPython's limited API, so Debian's 3.11 build
#                        imports on the newer Python there)
#   .dev/pytest.tar.xz   Debian's pytest, used there only if it has none
#   .dev/peers.tar.xz    Debian's python3.11 with awscrt (aws-c-s3) and
#                        the other peer tools (tests/bench/pack-peers.sh),
#                        for the usual path of load_safetensors.py
# Then, with the device tool (carry [".dev"]):
#   HIPOBJ_DEVICE_JOB=python bash tests/gpu/device-run.sh
# HIPOBJ_PREPARE_PACKAGE_ONLY=1 stops after .dev/python: the multigpu job
# needs neither pytest nor the peers (carry .dev/bin, .dev/lib,
# .dev/fallback and .dev/python then, not the whole .dev).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
bash tests/gpu/prepare-device.sh
meson configure build-dev -Dpython=enabled >/dev/null
ninja -C build-dev python/hipobj/_hipobj.abi3.so
rm -rf .dev/python
mkdir -p .dev/python/hipobj
cp python/hipobj/*.py build-dev/python/hipobj/_hipobj.abi3.so \
  .dev/python/hipobj/
strip .dev/python/hipobj/_hipobj.abi3.so
if [ "${HIPOBJ_PREPARE_PACKAGE_ONLY:-0}" = 1 ]; then
  chmod -R a+rX .dev
  echo "prepare-device.sh: $(du -scm .dev/bin .dev/lib .dev/fallback .dev/python | tail -1 | cut -f1) MiB in .dev/{bin,lib,fallback,python} (limit: 64 MiB with the tree)"
  exit 0
fi
tar -C /usr/lib/python3/dist-packages -cJf .dev/pytest.tar.xz \
  pytest _pytest pluggy iniconfig attr attrs packaging py py.py
[ -e .dev/peers.tar.xz ] || bash tests/bench/pack-peers.sh
chmod -R a+rX .dev
du -sh .dev/python .dev/pytest.tar.xz .dev/peers.tar.xz
echo "prepare-device.sh: $(du -sm .dev | cut -f1) MiB in .dev (limit: 64 MiB with the tree)"
