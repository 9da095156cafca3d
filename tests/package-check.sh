#!/bin/bash
# package-check.sh - the Debian packages as a user gets them: builds
# libhipobj1, libhipobj-dev and hipobj-tools with `dpkg-buildpackage -b -us
# -uc` from a copy of the checkout, checks them with lintian (no error),
# installs them, compiles the README's C example out of tree with
# `pkg-config --cflags --libs hipobj` (and statically with --static), and
# runs it against the installed hipobj-server with an object put there by
# the installed hipobj; `man` must find both manual pages. The packages are
# removed again at the end (unless HIPOBJ_TEST_KEEP=1).
#
# Needs root (dpkg -i) and dpkg-dev, debhelper, lintian (tests/
# install-deps.sh installs them); exits 77 (skipped) saying why otherwise.
# The version in debian/changelog must be meson.build's.
#
# Usage: tests/package-check.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  exit 1
}
step() { echo "== $*"; }

[ "$(id -u)" -eq 0 ] || skip "installing the packages needs root"
for t in dpkg-buildpackage dh lintian pkg-config cc; do
  command -v "$t" >/dev/null 2>&1 || skip "$t not found (tests/install-deps.sh)"
done

ver=$(sed -n "s/^ *version *: *'\([0-9.]*\)'.*/\1/p" "$root/meson.build" | head -1)
deb_ver=$(sed -n '1s/^hipobj (\([^)]*\)).*/\1/p' "$root/debian/changelog")
[ "$deb_ver" = "$ver" ] ||
  fail "debian/changelog says $deb_ver, meson.build $ver: add a changelog entry"

WORK=$(mktemp -d /tmp/hipobj-pkg-XXXXXX)
SERVER_PID=
INSTALLED=()
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  if [ "${HIPOBJ_TEST_KEEP:-0}" != 1 ]; then
    [ ${#INSTALLED[@]} -gt 0 ] && dpkg --purge "${INSTALLED[@]}" >/dev/null 2>&1
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

step "dpkg-buildpackage -b -us -uc (a copy of the checkout, version $ver)"
src=$WORK/hipobj-$ver
mkdir -p "$src"
(cd "$root" && git ls-files --cached --others --exclude-standard -z |
  xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$src"
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$WORK/build.log" 2>&1 || {
  tail -30 "$WORK/build.log"
  fail "dpkg-buildpackage failed (log above)"
}
debs=()
for p in libhipobj1 libhipobj-dev hipobj-tools; do
  f=$WORK/${p}_${ver}_$(dpkg --print-architecture).deb
  [ -f "$f" ] || fail "no $f"
  debs+=("$f")
done

step "lintian: no error"
lintian --fail-on error "$WORK"/hipobj_"${ver}"_*.changes ||
  fail "lintian found errors"

step "dpkg -i"
for p in libhipobj1 libhipobj-dev hipobj-tools; do
  dpkg -s "$p" >/dev/null 2>&1 && skip "$p is installed already: not replacing it"
done
dpkg -i "${debs[@]}" >"$WORK/dpkg.log" 2>&1 || {
  cat "$WORK/dpkg.log"
  fail "the packages do not install (missing dependencies?)"
}
INSTALLED=(hipobj-tools libhipobj-dev libhipobj1)
[ "$(pkg-config --modversion hipobj)" = "$ver" ] || fail "pkg-config version"
if command -v man >/dev/null 2>&1; then
  man -w hipobj >/dev/null && man -w hipobj-server >/dev/null ||
    fail "man does not find hipobj(1) and hipobj-server(1)"
else
  [ -f /usr/share/man/man1/hipobj.1.gz ] || fail "no hipobj.1.gz"
fi

step "the README's example, out of tree, with pkg-config"
awk '/^## Example/ {e = 1} e && /^```c$/ {c = 1; next} c && /^```$/ {exit}
     c {print}' "$root/README.md" >"$WORK/example.c"
[ -s "$WORK/example.c" ] || fail "no C example in README.md"
(cd "$WORK" && cc -Wall -Werror -o example example.c \
  $(pkg-config --cflags --libs hipobj)) || fail "the example does not build"
# ldd's output is read whole before grep looks at it: `ldd | grep -q` under
# pipefail fails at random when grep leaves before ldd has written all of it
# (SIGPIPE), which the CI machine once did.
deps=$(ldd "$WORK/example") || fail "ldd of the example failed"
grep -Eq "libhipobj.so.1 => (/usr)?/lib/" <<<"$deps" || {
  echo "$deps"
  fail "the example is not linked to the installed libhipobj.so.1"
}
# libhipobj.a, with the libraries it needs (hipobj.pc's Requires.private)
# linked as shared ones: `pkg-config --static --libs hipobj` would also ask
# for the static dependencies of libcurl (krb5, ldap, ...), which Debian's
# -dev packages do not pull in.
libdir=$(pkg-config --variable=libdir hipobj)
(cd "$WORK" && cc -o example-static example.c $(pkg-config --cflags hipobj) \
  "$libdir/libhipobj.a" \
  $(pkg-config --libs $(pkg-config --print-requires-private hipobj |
    awk '{print $1}')) -pthread) ||
  fail "the example does not link with libhipobj.a"
deps=$(ldd "$WORK/example-static") || fail "ldd of example-static failed"
grep -q libhipobj <<<"$deps" && fail "example-static loads libhipobj.so"

step "run it against the installed hipobj-server"
export AWS_ACCESS_KEY_ID=AKIDPACKAGE AWS_SECRET_ACCESS_KEY=package-secret
export AWS_REGION=us-east-1
/usr/bin/hipobj-server --root "$WORK/s3" --listen 127.0.0.1:0 \
  --log-level warn >"$WORK/ready" 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do
  grep -q 'listening on' "$WORK/ready" 2>/dev/null && break
  sleep 0.1
done
url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$WORK/ready")
[ -n "$url" ] || fail "hipobj-server did not start"
export AWS_ENDPOINT_URL=$url
head -c 4096 /dev/urandom >"$WORK/obj"
/usr/bin/hipobj -q mb s3://bucket
/usr/bin/hipobj -q cp "$WORK/obj" s3://bucket/dir/key
for ex in example example-static; do
  out=$("$WORK/$ex") || fail "$ex failed: $out"
  echo "$ex: $out"
  case $out in
  "4096 bytes, ETag \""*) ;;
  *) fail "$ex printed '$out', not the object's size and ETag" ;;
  esac
done
echo "package-check: all passed"
