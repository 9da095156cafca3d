# peers-env.sh - sourced (bash) on a machine without the peer tools:
#   . tests/bench/peers-env.sh .dev/peers.tar.xz [DIR]
# unpacks what tests/bench/pack-peers.sh packed into DIR (default
# /tmp/hipobj-peers), puts the carried copy of a library on the path only
# where this machine lacks it, and exports what tests/bench/compare.sh
# reads: HIPOBJ_COMPARE_PY, HIPOBJ_COMPARE_AWS, HIPOBJ_COMPARE_TIME, and a
# PATH whose s3cmd is the carried one. Returns non-zero when it cannot.

peers_setup() {
  local tarball=$1 dir=${2:-/tmp/hipobj-peers} p m missing
  [ -r "$tarball" ] || {
    echo "peers-env.sh: no $tarball (run tests/bench/pack-peers.sh where the tools are)" >&2
    return 1
  }
  rm -rf "$dir" && mkdir -p "$dir" || return 1
  tar -C "$dir" -xJf "$tarball" || return 1
  p=$dir/peers
  mkdir -p "$p/extra-libs" "$p/wrap"
  # This machine's own libraries first; a carried one only where missing.
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$p/extra-libs
  for _ in 1 2 3 4 5 6; do
    missing=$(find "$p/usr" "$p/extra-libs" -name '*.so*' -o -path '*/usr/bin/*' -type f |
      while read -r f; do ldd "$f" 2>/dev/null; done |
      sed -n 's/^[[:space:]]*\([^[:space:]]*\) => not found.*/\1/p' | sort -u)
    [ -z "$missing" ] && break
    for m in $missing; do
      if [ -e "$p/fallback/$m" ]; then
        echo "peers-env.sh: this machine lacks $m: using Debian's copy" >&2
        cp "$p/fallback/$m" "$p/extra-libs/"
      else
        echo "peers-env.sh: this machine lacks $m and none was packed" >&2
      fi
    done
  done
  # Debian's python3.11 finds its library from its own path (prefix $p/usr).
  printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$p/usr/bin/python3.11" "$p/usr/bin/aws" >"$p/wrap/aws"
  printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$p/usr/bin/python3.11" "$p/usr/bin/s3cmd" >"$p/wrap/s3cmd"
  chmod +x "$p/wrap/aws" "$p/wrap/s3cmd"
  export HIPOBJ_COMPARE_PY=$p/usr/bin/python3.11
  export HIPOBJ_COMPARE_AWS=$p/wrap/aws
  export HIPOBJ_COMPARE_TIME=$p/usr/bin/time
  export PATH=$p/wrap:$PATH
  "$HIPOBJ_COMPARE_PY" -c 'import awscrt.s3' || return 1
  "$HIPOBJ_COMPARE_AWS" --version >&2 || return 1
  s3cmd --version >&2 || return 1
}

peers_setup "$@"
