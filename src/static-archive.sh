#!/bin/sh
# static-archive.sh LD OBJCOPY AR INPUT.a OUTPUT.a - makes libhipobj.a
# (meson.build, custom target libhipobj.a) from the archive of the
# library's objects, compiled with -fvisibility=hidden: links them into
# one relocatable object, so that every reference between them is
# resolved inside it, then makes the hidden symbols local, so that only
# the default-visibility API (HIPOBJ_API, hipobj_*) stays global.
set -eu
ld=$1 objcopy=$2 ar=$3 in=$4 out=$5
dir=$out.d
rm -rf "$dir" "$out"
mkdir "$dir"
"$ld" -r --whole-archive "$in" -o "$dir/hipobj.o"
"$objcopy" --localize-hidden "$dir/hipobj.o"
# D: no timestamps or owners, the same archive from the same objects.
"$ar" rcsD "$out" "$dir/hipobj.o"
rm -rf "$dir"
