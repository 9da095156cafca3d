#!/bin/bash
# tests/layering.sh - the include rules of the layers below src/
# (docs/architecture.md, "Direction of dependencies"):
#
#   src/base/  includes only src/base/ and include/hipobj.h
#   s3/        includes only s3/, src/base/ and include/hipobj.h
#   rdma/      includes only rdma/, src/base/ and include/hipobj.h
#   examples/  includes only examples/ and include/ (the tool is a user
#              of the public API like any other)
#
# so s3/ and rdma/ never include each other, and nothing below src/
# includes src/. Every #include "..." of those directories is resolved as
# the compiler would (the including file's directory, then include/, then
# the repository root); one that resolves nowhere, or to another layer,
# fails. An #include <...> naming a project directory fails too.
#
# Usage: layering.sh [REPOSITORY_ROOT]   (default: this script's parent)
# Exit status 0 when every line obeys the rules; 1 with one line per
# offending #include ("file:line: #include ...: why").
set -euo pipefail

root=${1:-$(dirname "${BASH_SOURCE[0]}")/..}
root=$(cd "$root" && pwd)
cd "$root"

# The directories a file of this layer may include from (repository paths).
layer_of() {
  case $1 in
  src/base/*) echo src/base/ ;;
  s3/*) echo s3/ ;;
  rdma/*) echo rdma/ ;;
  examples/*) echo examples/ ;;
  esac
}
allowed_for() {
  case $1 in
  src/base/) echo "src/base/ include/hipobj.h" ;;
  examples/) echo "examples/ include/" ;;
  *) echo "$1 src/base/ include/hipobj.h" ;;
  esac
}

# Prints the repository path a quoted include resolves to, or nothing.
resolve() {
  local dir=$1 inc=$2 cand
  for cand in "$dir/$inc" "include/$inc" "$inc"; do
    if [ -f "$cand" ]; then
      realpath -m --relative-to="$root" "$cand"
      return
    fi
  done
}

bad=0
checked=0
complain() {
  echo "$1: $2"
  bad=$((bad + 1))
}

files=()
for d in src/base s3 rdma examples; do
  [ -d "$d" ] || continue
  while IFS= read -r f; do
    files+=("$f")
  done < <(find "$d" -type f -name '*.[ch]' | sort)
done

for f in "${files[@]}"; do
  layer=$(layer_of "$f")
  allowed=$(allowed_for "$layer")
  dir=$(dirname "$f")
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    # Only preprocessor include lines (spaces allowed around '#').
    [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*(.*)$ ]] ||
      continue
    arg=${BASH_REMATCH[1]}
    checked=$((checked + 1))
    where="$f:$n: #include $arg"
    if [[ $arg =~ ^\<([^\>]*)\> ]]; then
      case ${BASH_REMATCH[1]} in
      src/* | s3/* | rdma/* | tests/* | include/* | examples/*)
        complain "$where" "a project header in <...>: use a quoted path"
        ;;
      esac
      continue
    fi
    if ! [[ $arg =~ ^\"([^\"]*)\" ]]; then
      complain "$where" "not a quoted or <...> include"
      continue
    fi
    target=$(resolve "$dir" "${BASH_REMATCH[1]}")
    if [ -z "$target" ]; then
      complain "$where" "resolves to no file of the repository"
      continue
    fi
    ok=0
    for a in $allowed; do
      case $target in
      "$a"*) ok=1 ;;
      esac
    done
    if [ $ok -eq 0 ]; then
      complain "$where" "includes $target; $layer may include only: $allowed"
    fi
  done <"$f"
done

if [ ${#files[@]} -eq 0 ] || [ $checked -eq 0 ]; then
  echo "layering.sh: no include lines found under $root: wrong root?" >&2
  exit 1
fi
if [ $bad -ne 0 ]; then
  echo "layering.sh: $bad of $checked #include lines break the layering" \
    "(docs/architecture.md, \"Direction of dependencies\")"
  exit 1
fi
echo "layering.sh: $checked #include lines in ${#files[@]} files obey the rules"
