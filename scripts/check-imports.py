#!/usr/bin/env python3
"""`make test`: the modules of the driver (rnull/*.rs) import each other
without cycles.

Each top-level module is a node: `rnull/foo.rs` and everything under
`rnull/foo/` is `foo`; the crate root `rnull/rnull.rs` is `rnull`. An edge
`a -> b` is any path in a's files that names module b: `crate::b::...`
(`$crate::` in macros too), the members of `crate::{b::..., c}`, and
`super::` paths that climb out of a. The root's own paths to its child
modules (`device::create_all`) count as well; its `mod` lines do not. A
path to an item of the root itself (`crate::SOMETHING`) is an edge to
`rnull`. Comments and string literals are skipped.

Prints the graph, then every cycle found (one per strongly connected
component) and exits 1 if there is one; exits 0 otherwise.

usage: scripts/check-imports.py [DIR]   (default: the rnull/ next to scripts/)
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")
RAW_STRING = re.compile(r'r(#*)"')
ROOT_NAME = "rnull"


def strip_code(text):
    """`text` with comments, string and char literals replaced by spaces
    (newlines kept), so only code is searched."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif RAW_STRING.match(text, i) and (i == 0 or not IDENT_CHAR.match(text[i - 1])):
            hashes = RAW_STRING.match(text, i).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def group_heads(code, start):
    """First segments of the members of the `{...}` group opening at
    `start` (nested groups belong to their member)."""
    heads, depth, member, i = [], 0, "", start
    while i < len(code):
        c = code[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
        elif c == "," and depth == 1:
            member = ""
            i += 1
            continue
        if depth == 1 and not member:
            m = IDENT.match(code, i)
            if m:
                member = m.group(0)
                heads.append(member)
                i = m.end()
                continue
        i += 1
    return heads


def module_path(path, top):
    """The module path of a file: rnull.rs -> [], a.rs -> [a], a/b.rs -> [a, b]."""
    rel = path.relative_to(top).with_suffix("")
    parts = list(rel.parts)
    return [] if parts == [ROOT_NAME] else parts


def edges_of(path, top, modules):
    """Top-level modules (or the root) that the file at `path` names."""
    mpath = module_path(path, top)
    code = strip_code(path.read_text())
    found = set()

    def add(head):
        if head in ("self", "super", "crate"):
            return
        found.add(head if head in modules else ROOT_NAME)

    def add_path(rest):
        """The head(s) of a path starting at `rest`: `x::...` or `{x, y::z}`."""
        if code.startswith("{", rest):
            for h in group_heads(code, rest):
                add(h)
        else:
            h = IDENT.match(code, rest)
            if h:
                add(h.group(0))

    # crate::x, $crate::x, crate::{x, y::z}
    for m in re.finditer(r"(?<![A-Za-z0-9_])\$?crate\s*::\s*", code):
        add_path(m.end())
    # super::...: climbs out of this file's module.
    for m in re.finditer(r"(?<![A-Za-z0-9_:])((?:super\s*::\s*)+)", code):
        ups = m.group(1).count("super")
        base = mpath[: max(len(mpath) - ups, 0)]
        rest = m.end()
        if base:
            found.add(base[0])
        else:
            add_path(rest)
    # The root names its children without `crate::`.
    if not mpath:
        for m in re.finditer(r"(?<![A-Za-z0-9_:$])([a-z_][a-z0-9_]*)\s*::", code):
            if m.group(1) in modules:
                found.add(m.group(1))
    node = mpath[0] if mpath else ROOT_NAME
    found.discard(node)
    return node, found


def cycles(graph):
    """One cycle per strongly connected component with more than one node,
    with the component."""
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(set(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    found = []
    for comp in sccs:
        start = min(comp)
        # Shortest way back to `start` inside the component (BFS).
        prev, frontier, done = {start: None}, [start], None
        while frontier and done is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v] & comp):
                    if w == start:
                        done = v
                        break
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if done is not None:
                    break
            frontier = nxt
        path, v = [], done
        while v is not None:
            path.append(v)
            v = prev[v]
        path.reverse()
        found.append((path + [start], comp))
    return found


def main():
    top = pathlib.Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT / "rnull"
    # A symlink is another name of a file already read (`null_blk.rs`, the
    # crate root again for the null_blk face): not a module of its own.
    files = sorted(p for p in top.rglob("*.rs") if not p.is_symlink())
    if not (top / f"{ROOT_NAME}.rs").is_file():
        print(f"check-imports: no {ROOT_NAME}.rs in {top}")
        return 2
    modules = {p.stem for p in files if p.parent == top and p.stem != ROOT_NAME}
    modules |= {p.name for p in top.iterdir() if p.is_dir()}
    graph = {m: set() for m in modules | {ROOT_NAME}}
    for f in files:
        node, deps = edges_of(f, top, modules)
        graph.setdefault(node, set()).update(deps)
    for node in sorted(graph):
        print(f"{node} -> {', '.join(sorted(graph[node])) or '(nothing)'}")
    found = cycles(graph)
    for path, comp in found:
        line = "check-imports: cycle: " + " -> ".join(path)
        if len(comp) > len(path) - 1:
            line += f" (all of {', '.join(sorted(comp))} reach each other)"
        print(line)
    if found:
        return 1
    print("check-imports: no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
