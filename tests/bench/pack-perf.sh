#!/bin/bash
# pack-perf.sh - run HERE (Debian 12 with linux-perf installed) to take
# Debian's perf to a machine that has none and reaches no package registry
# (the GPU machine: tests/bench/profile.sh runs it there). Writes
# .dev/perf/ (git-ignored, carried with `carry: [".dev"]`): bin/perf and,
# gzipped under lib/, every non-glibc library it loads; profile.sh puts a
# library on the path only where the machine lacks it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
perf=$(command -v perf) || {
  echo "pack-perf.sh: no perf here (apt-get install linux-perf)" >&2
  exit 1
}
out=$root/.dev/perf
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
cp -L "$perf" "$out/bin/perf"
glibc='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64|libmvec|libanl)\.so'
ldd "$out/bin/perf" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  while read -r soname path; do
    [[ $soname =~ $glibc ]] && continue
    cp -L "$path" "$out/lib/$soname"
  done
strip "$out/bin/perf" 2>/dev/null || true
gzip -9 "$out"/lib/*
echo "pack-perf.sh: $(du -sh "$out" | cut -f1) in $out"
