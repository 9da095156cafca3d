#!/bin/bash
# Runs a test program under valgrind (memcheck, children traced: Criterion
# runs each test in a child process and ignores how it exits) and fails when
# any process reports a memory error or a definite/indirect leak.
#   tests/valgrind-check.sh PROGRAM ARGS...
set -euo pipefail
if ! command -v valgrind >/dev/null 2>&1; then
  echo "SKIP: valgrind not installed"
  exit 77
fi
logs=$(mktemp -d /tmp/hipobj-vg.XXXXXX)
trap 'rm -rf "$logs"' EXIT
status=0
valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
  --show-leak-kinds=definite,indirect --trace-children=yes \
  --log-file="$logs/vg.%p" "$@" || status=$?
bad=0
for f in "$logs"/vg.*; do
  [ -s "$f" ] || continue
  echo "valgrind-check.sh: report from process ${f##*.}:" >&2
  cat "$f" >&2
  bad=1
done
if [ "$status" -ne 0 ]; then
  echo "valgrind-check.sh: program exited $status" >&2
  exit "$status"
fi
if [ "$bad" -ne 0 ]; then
  exit 1
fi
echo "valgrind-check.sh: no memory errors or leaks"
