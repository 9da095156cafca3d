#!/bin/bash
# prepare-device.sh - run HERE (Debian 12, the development machine) before a
# GPU run: builds hipObject in build-dev/ (release) and gathers into .dev/
# (git-ignored; carried to the GPU machine with `carry: [".dev"]`) what
# tests/gpu/device-run.sh needs there. The GPU machine (Ubuntu 24.04, CUDA,
# newer glibc) has no libxml2 headers, Criterion or libmicrohttpd, so the
# programs are built here and run there:
#   .dev/bin/       hipobj, hipobj-server, gpu_suite, gpu_bench, multi_gpu,
#                   mgpu_bench, pingpong, answerer, get_loop (stripped)
#   .dev/lib/       libhipobj.so.1, libmicrohttpd.so.12 (always used there)
#   .dev/fallback/  every other non-glibc library they load, from this
#                   machine, gzipped; device-run.sh unpacks one only where
#                   the GPU machine lacks it (ldd says "not found")
# Needs the build dependencies of tests/install-deps.sh.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
build="build-dev"
if [ -d "$build" ]; then
  meson setup --reconfigure "$build" --buildtype=release >/dev/null
else
  meson setup "$build" --buildtype=release >/dev/null
fi
ninja -C "$build" examples/hipobj tests/server/hipobj-server \
  tests/gpu/gpu_suite tests/gpu/gpu_bench tests/gpu/multi_gpu \
  tests/gpu/mgpu_bench tests/pingpong tests/answerer tests/get_loop

rm -rf .dev/bin .dev/lib .dev/fallback .dev/fallback-icu
mkdir -p .dev/bin .dev/lib .dev/fallback .dev/fallback-icu
for b in examples/hipobj tests/server/hipobj-server tests/gpu/gpu_suite \
  tests/gpu/gpu_bench tests/gpu/multi_gpu tests/gpu/mgpu_bench tests/pingpong \
  tests/answerer tests/get_loop; do
  cp "$build/$b" .dev/bin/
done
cp -L "$build/libhipobj.so.1" .dev/lib/
strip .dev/bin/* .dev/lib/libhipobj.so.1

# glibc's own libraries are newer there and must not be replaced.
glibc='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64|libmvec|libanl|libnss_.*)\.so'
# Every library the programs load (directly or not), resolved here.
LD_LIBRARY_PATH=$root/.dev/lib ldd .dev/bin/* | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  sort -u | while read -r soname path; do
  [[ $soname =~ $glibc ]] && continue
  [[ $soname == libhipobj.so.1 ]] && continue
  if [[ $soname == libmicrohttpd.so.* ]]; then
    cp -L "$path" ".dev/lib/$soname"
  elif [[ $soname == libicu* ]]; then
    # ICU (14 MiB gzipped) is loaded only by the carried libxml2, which a
    # machine with its own libxml2 never uses: a folder of its own, carried
    # only where libxml2 is missing, so the rest stays under the limit.
    cp -L "$path" ".dev/fallback-icu/$soname"
  else
    cp -L "$path" ".dev/fallback/$soname"
  fi
done
# Compressed: ICU's data alone is 30 MiB; gzip is on every machine.
gzip -9 .dev/fallback/* .dev/fallback-icu/*
chmod -R a+rX .dev
echo "prepare-device.sh: .dev is ready:"
du -sh .dev/bin .dev/lib .dev/fallback .dev/fallback-icu
total=$(du -sm .dev/bin .dev/lib .dev/fallback | awk '{s += $1} END {print s}')
echo "prepare-device.sh: ${total} MiB to carry (limit: 64 MiB with the tree)"
