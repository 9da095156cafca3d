#!/bin/bash
# Installs everything needed to build and test hipObject on a fresh Debian 12
# (compilers and libraries, Criterion, Ceph RGW and the AWS CLI for the
# integration tests, qemu + Debian's kernel for the Soft-RoCE RDMA suite,
# valgrind, clang-format, clang with libFuzzer for tests/fuzz, and Doxygen,
# debhelper and lintian for the API reference and the Debian packages).
# Idempotent.
set -euo pipefail

packages=(
  # build
  meson ninja-build pkg-config gcc
  libcurl4-openssl-dev libssl-dev libxml2-dev libisal-dev
  libibverbs-dev librdmacm-dev rdma-core
  # HIP (AMD GPU) headers: compile check of the HIP backend (runtime dlopen'ed)
  libamdhip64-dev
  # tests
  libcriterion-dev libmicrohttpd-dev curl
  radosgw ceph-mon ceph-osd awscli s3cmd
  # benchmarks (tests/bench): aws-c-s3 through python3-awscrt, GNU time
  python3-awscrt time
  # the Python package (python/): headers, pip install through meson-python
  # into a venv, its tests (pytest; numpy and CPU PyTorch for the array,
  # tensor and safetensors cases)
  python3-dev python3-mesonpy python3-venv python3-pytest python3-numpy
  python3-torch
  valgrind clang-format
  # the API reference; the Debian packages (tests/package-check.sh) and
  # their manual pages
  doxygen dpkg-dev debhelper lintian man-db
  # tests/fuzz: libFuzzer harnesses (clang's -fsanitize=fuzzer runtime)
  clang libclang-rt-14-dev
  # the rdma suite: Debian's kernel in a qemu guest with Soft-RoCE (rdma_rxe)
  qemu-system-x86 linux-image-amd64 busybox-static cpio kmod iproute2
  libibverbs1 ibverbs-providers ibverbs-utils
  # tests/with-deadline.sh: the backtraces of a test that hangs
  gdb
)

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps.sh: need root or sudo to run apt-get" >&2
  exit 1
fi

apt_opts=(-y -q -o DPkg::Lock::Timeout=600 --no-install-recommends)
echo "install-deps.sh: apt-get update"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get -q -o DPkg::Lock::Timeout=600 update
echo "install-deps.sh: apt-get install ${packages[*]}"
# INITRD=No: the guest boots the kernel without an initramfs, so skip its
# 86-second generation when linux-image-amd64 is installed.
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive INITRD=No \
  apt-get "${apt_opts[@]}" install "${packages[@]}"
echo "install-deps.sh: done"
