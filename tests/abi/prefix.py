#!/usr/bin/env python3
"""tests/abi/prefix.py - every global symbol of the installed libraries
begins with "hipobj".

A program linking libhipobj.a or libhipobj.so gets the library's global
symbols in its own namespace: any not prefixed (hbuf_append, s3_xml_*,
rdma_*, which is librdmacm's) can collide with the program's or another
library's. `nm -g --defined-only` of each library given must list only
hipobj* names; the version node of the shared library's symbol versions
(an absolute symbol such as HIPOBJ_0.2) is no code or data and passes.
Fails naming each offending symbol and the library holding it.

Usage: prefix.py NM LIBRARY...
"""
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    nm, libs = sys.argv[1], sys.argv[2:]
    bad = 0
    for lib in libs:
        out = subprocess.run([nm, "-g", "--defined-only", lib], check=True,
                             capture_output=True, text=True).stdout
        count = 0
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 3:
                continue  # blank lines and "member.o:" headers of an archive
            kind, name = parts[1], parts[2].split("@")[0]
            if kind == "A" and re.fullmatch(r"HIPOBJ_[0-9.]+", name):
                continue
            count += 1
            if not name.startswith("hipobj"):
                print(f"{lib}: global symbol {name} ({kind}) does not begin "
                      "with hipobj")
                bad += 1
        if count == 0:
            print(f"{lib}: no global symbol at all")
            bad += 1
        print(f"{lib}: {count} global symbols")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
