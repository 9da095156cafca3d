#!/usr/bin/env python3
"""tests/abi/exports.py - the exported functions of libhipobj, three ways.

The public header declares each function of the API with HIPOBJ_API
(include/hipobj.h and the include/hipobj/*.h it includes), the linker
version script src/libhipobj.map lists each by name under its version
node, and libhipobj.so exports what the two let through. A function
declared but not in the map would be missing from the library (an
undefined symbol for its users); one in the map but not declared, or
exported but in neither, is ABI nobody meant to promise. Fails naming
each function that is not in all three. With a Debian symbols file
(debian/libhipobj1.symbols), its symbols must be the map's too, each at
the map's version node, so that dpkg-gensymbols checks the same ABI.

Usage: exports.py INCLUDE_DIR MAP LIBHIPOBJ_SO [NM [SYMBOLS]]
"""
import glob
import os
import re
import subprocess
import sys


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_functions(include_dir):
    """Names of the functions declared with HIPOBJ_API."""
    paths = [os.path.join(include_dir, "hipobj.h")]
    paths += sorted(glob.glob(os.path.join(include_dir, "hipobj", "*.h")))
    names = set()
    for path in paths:
        with open(path) as f:
            text = strip_comments(f.read())
        # The definition of the macro itself is no declaration.
        text = re.sub(r"#\s*define\s+HIPOBJ_API[^\n]*", " ", text)
        # The declared name is the last identifier before the first "(".
        for m in re.finditer(r"\bHIPOBJ_API\b([^;(]*)\(", text):
            ids = re.findall(r"[A-Za-z_]\w*", m.group(1))
            if ids:
                names.add(ids[-1])
    return names


def map_functions(path):
    """Names listed under global: in the version script, and its nodes."""
    with open(path) as f:
        text = strip_comments(f.read())
    nodes = re.findall(r"([A-Za-z_][\w.]*)\s*\{", text)
    names = set()
    problems = []
    for block in re.findall(r"global\s*:(.*?)(?:local\s*:|\})", text, re.S):
        for entry in block.split(";"):
            entry = entry.strip()
            if not entry:
                continue
            if not re.fullmatch(r"[A-Za-z_]\w*", entry):
                problems.append(f"{path}: '{entry}' is not a plain name "
                                "(list every symbol explicitly)")
            names.add(entry)
    return names, set(nodes), problems


def exported_functions(so, nm, nodes):
    out = subprocess.run([nm, "-D", "--defined-only", so], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, name = parts[1], parts[2].split("@")[0]
        if kind == "A" and name in nodes:
            continue  # the version node's own symbol
        names.add(name)
    return names


def debian_symbols(path, nodes):
    """The symbols of a dpkg symbols file, and what is wrong with them."""
    names, problems = set(), []
    with open(path) as f:
        for line in f:
            if not line.startswith(" "):
                continue  # the library's header line
            sym = line.split()[0]
            name, _, node = sym.partition("@")
            if node not in nodes:
                problems.append(f"{path}: {sym}: not at a node of the map")
            if name not in nodes:
                names.add(name)
    return names, problems


def main():
    if len(sys.argv) not in (4, 5, 6):
        sys.exit(__doc__)
    include_dir, map_path, so = sys.argv[1:4]
    nm = sys.argv[4] if len(sys.argv) >= 5 else "nm"
    declared = header_functions(include_dir)
    listed, nodes, problems = map_functions(map_path)
    exported = exported_functions(so, nm, nodes)
    if not declared:
        problems.append(f"no HIPOBJ_API declaration found under {include_dir}")
    for name in sorted(declared | listed | exported):
        where = [w for w, s in (("declared with HIPOBJ_API", declared),
                                ("listed in the map", listed),
                                ("exported by the .so", exported))
                 if name in s]
        if len(where) != 3:
            problems.append(f"{name}: only {' and '.join(where)}")
    if len(sys.argv) == 6:
        debian, more = debian_symbols(sys.argv[5], nodes)
        problems += more
        for name in sorted(debian ^ listed):
            problems.append(f"{name}: " + ("in the Debian symbols file, not "
                            "in the map" if name in debian else "in the map, "
                            f"not in {sys.argv[5]}"))
    for p in problems:
        print(p)
    print(f"{len(declared)} declared, {len(listed)} in the map "
          f"(nodes {', '.join(sorted(nodes))}), {len(exported)} exported")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
