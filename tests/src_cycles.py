#!/usr/bin/env python3
"""src_cycles.py - the modules of src/ include each other in one direction
only (docs/architecture.md): a module is a .c file and its .h, and module A
depends on B when a file of A includes B's header. Prints every cycle
(strongly connected group of modules) with the include lines that make it,
and exits 1 when there is one; 0 otherwise.

Usage: src_cycles.py [REPOSITORY_ROOT]   (default: this script's parent)
"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
src = os.path.join(root, "src")
inc = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)\.h"')
deps, why = {}, {}
for name in sorted(os.listdir(src)):
    base, ext = os.path.splitext(name)
    if ext not in (".c", ".h"):
        continue
    deps.setdefault(base, set())
    with open(os.path.join(src, name), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = inc.match(line)
            if (m and m.group(1) != base and
                    os.path.exists(os.path.join(src, m.group(1) + ".h"))):
                deps[base].add(m.group(1))
                why.setdefault((base, m.group(1)), f"src/{name}:{n}")

# Tarjan's strongly connected components, iteratively.
index, low, on, stack, groups, counter = {}, {}, set(), [], [], [0]
for start in sorted(deps):
    if start in index:
        continue
    work = [(start, iter(sorted(deps[start])))]
    index[start] = low[start] = counter[0]
    counter[0] += 1
    stack.append(start)
    on.add(start)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(deps.get(w, ())))))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

for g in groups:
    print("src_cycles.py: modules that include each other: " + ", ".join(g))
    for a in g:
        for b in sorted(deps[a] & set(g)):
            print(f"  {why[(a, b)]}: {a} includes {b}.h")
if groups:
    sys.exit(1)
print(f"src_cycles.py: {len(deps)} modules of src/, no include cycle")
