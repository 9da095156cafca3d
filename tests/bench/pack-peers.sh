#!/bin/bash
# pack-peers.sh - run HERE (Debian 12 with awscli, python3-awscrt, s3cmd and
# time installed: tests/install-deps.sh) to take the peer tools of
# tests/bench/compare.sh to a machine that has none and reaches no package
# registry (the 16-core GPU machine: tests/gpu/device-run.sh compare).
#
# Writes .dev/peers.tar.xz (git-ignored, carried with `carry: [".dev"]`):
# Debian's own python3.11 with its standard library, the Python packages
# awscli v2 (which bundles botocore and s3transfer), aws-c-s3 (awscrt) and
# s3cmd import, /usr/bin/aws, /usr/bin/s3cmd, GNU time, and under fallback/
# every non-glibc library they load (used there only where missing). The
# files are Debian's, unchanged: the tools run there as they run here.
# tests/bench/peers-env.sh unpacks it and says where the tools are.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
for f in /usr/bin/python3.11 /usr/bin/aws /usr/bin/s3cmd /usr/bin/time \
  /usr/lib/python3/dist-packages/awscrt; do
  [ -e "$f" ] || {
    echo "pack-peers.sh: $f is missing (bash tests/install-deps.sh)" >&2
    exit 1
  }
done

stage=$(mktemp -d /tmp/hipobj-peers.XXXXXX)
trap 'rm -rf "$stage"' EXIT
p=$stage/peers
mkdir -p "$p/usr/bin" "$p/usr/lib/python3/dist-packages" "$p/fallback"
cp /usr/bin/python3.11 /usr/bin/time "$p/usr/bin/"
cp /usr/bin/aws /usr/bin/s3cmd "$p/usr/bin/"
# The standard library, less what no command-line tool here imports.
tar -C /usr/lib -cf - --exclude=python3.11/test --exclude=python3.11/idlelib \
  --exclude=python3.11/tkinter --exclude=python3.11/ensurepip \
  --exclude=python3.11/lib2to3 python3.11 | tar -C "$p/usr/lib" -xf -
# What `aws s3`, awscrt and s3cmd import (Debian's dependencies of awscli,
# python3-awscrt and s3cmd; python-magic is left out: s3cmd does without).
dp=/usr/lib/python3/dist-packages
(cd "$dp" && cp -a awscli awscli-*.dist-info awscrt _awscrt.cpython-311-*.so \
  S3 s3cmd-*.egg-info colorama cryptography _cffi_backend.cpython-311-*.so \
  dateutil distro docutils jmespath prompt_toolkit pyasn1 ruamel \
  _ruamel_yaml.cpython-311-*.so ruamel.yaml-*.pth urllib3 six.py wcwidth roman.py \
  "$p/usr/lib/python3/dist-packages/")
# The help examples are 22 of awscli's 116 MiB; the service models stay:
# the CLI builds its command table from all of them.
rm -rf "$p/usr/lib/python3/dist-packages/awscli/examples"

# Libraries: everything non-glibc the binaries and extension modules load.
glibc='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|libcrypt|ld-linux-x86-64|libmvec|libanl|libnsl|libnss_.*)\.so'
find "$p" -name '*.so' -o -path '*/usr/bin/*' -type f | while read -r f; do
  ldd "$f" 2>/dev/null || true
done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r soname path; do
    [[ $soname =~ $glibc ]] && continue
    cp -L "$path" "$p/fallback/$soname"
  done

mkdir -p "$root/.dev"
tar -C "$stage" -cf - peers | xz -T0 -6 >"$root/.dev/peers.tar.xz"
echo "pack-peers.sh: $(du -h "$root/.dev/peers.tar.xz" | cut -f1) in .dev/peers.tar.xz"
echo "pack-peers.sh: awscli $(dpkg-query -W -f='${Version}' awscli)," \
  "python3-awscrt $(dpkg-query -W -f='${Version}' python3-awscrt)," \
  "s3cmd $(dpkg-query -W -f='${Version}' s3cmd)"
