#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the project's markdown: relative links, anchors, README length.

Every relative link (inline `[text](target)`, image `![alt](target)` or
reference definition `[label]: target`) in README.md, docs/*.md,
rtags/README.md, rnull/kapi/README.md, bench/results/README.md and
blktests/README* must name an existing file or directory; a `#anchor` into a
markdown file (or into the same file) must name one of its headings, spelt
as GitHub spells heading ids. README.md may have at most MAX_README_LINES
lines, and every docs/*.md must be reachable from README.md by following
links. Links inside code spans and fenced code blocks, and links with a
scheme (https:, mailto:), are not checked.

usage: scripts/check-links.py [--root DIR]
       scripts/check-links.py --self-test

Prints one line per problem, `file:line: what`, and exits 1 if there is
any; exits 0 and prints nothing otherwise.
"""

import contextlib
import io
import re
import shutil
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote

MAX_README_LINES = 320

# The markdown files checked, relative to the root (globs allowed).
CHECKED = [
    "README.md",
    "docs/*.md",
    "rtags/README.md",
    "rnull/kapi/README.md",
    "bench/results/README.md",
    "blktests/README*",
]

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
# [text](target) and ![alt](target); the text may hold one level of
# brackets (an image inside a link, `[a [b] c]`).
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def slug(text: str) -> str:
    """GitHub's id for a heading: its text lowercased, without punctuation
    but `-` and `_`, spaces turned into `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    return "".join(c for c in text if c.isalnum() or c in "-_ ").replace(" ", "-")


def lines_outside_code(text: str, blank_spans: bool = True):
    """(line number, line) of every line outside fenced code blocks, code
    spans blanked unless told otherwise."""
    fenced = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fenced:
            if m and m.group(1) == fenced:
                fenced = None
            continue
        if m:
            fenced = m.group(1)
            continue
        yield n, CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line) if blank_spans else line


def anchors(path: Path, cache: dict) -> set:
    """The heading ids of a markdown file (duplicates numbered as GitHub
    numbers them), plus explicit `<a name|id="...">` anchors."""
    if path not in cache:
        seen, ids = {}, set()
        text = path.read_text(encoding="utf-8")
        for _, line in lines_outside_code(text, blank_spans=False):
            for m in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                ids.add(m.group(1))
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            ids.add(s if k == 0 else f"{s}-{k}")
        cache[path] = ids
    return cache[path]


def links(path: Path):
    """(line number, target) of every link in a markdown file."""
    for n, line in lines_outside_code(path.read_text(encoding="utf-8")):
        for m in INLINE.finditer(line):
            yield n, m.group(1).strip("<>")
        m = REF_DEF.match(line)
        if m:
            yield n, m.group(1).strip("<>")


def checked_files(root: Path) -> list:
    files = []
    for pattern in CHECKED:
        files.extend(sorted(p for p in root.glob(pattern) if p.is_file()))
    return files


def check(root: Path) -> list:
    """Every problem found under root, as `file:line: what` strings."""
    root = root.resolve()
    problems, cache = [], {}
    # Markdown files each checked file links to, for the reachability check.
    graph = {}

    def rel(p: Path) -> str:
        try:
            return str(p.relative_to(root))
        except ValueError:
            return str(p)

    for md in checked_files(root):
        md = md.resolve()
        graph[md] = set()
        for n, target in links(md):
            if SCHEME.match(target):
                continue
            where = f"{rel(md)}:{n}"
            file_part, _, anchor = target.partition("#")
            dest = (md.parent / unquote(file_part)).resolve() if file_part else md
            if not dest.exists():
                problems.append(f"{where}: broken link '{target}': {rel(dest)} does not exist")
                continue
            if dest.suffix == ".md" and dest.is_file():
                graph[md].add(dest)
                if anchor and unquote(anchor) not in anchors(dest, cache):
                    problems.append(f"{where}: broken link '{target}': "
                                    f"{rel(dest)} has no heading #{anchor}")

    readme = root / "README.md"
    if not readme.is_file():
        problems.append("README.md: missing")
        return problems
    n = len(readme.read_text(encoding="utf-8").splitlines())
    if n > MAX_README_LINES:
        problems.append(f"README.md: {n} lines, more than {MAX_README_LINES}")

    # Every doc reachable from the README through the checked files' links
    # (and the links of the docs they reach).
    reached, todo = set(), [readme.resolve()]
    while todo:
        md = todo.pop()
        if md in reached:
            continue
        reached.add(md)
        if md not in graph:
            graph[md] = {(md.parent / unquote(t.partition("#")[0])).resolve()
                         for _, t in links(md)
                         if not SCHEME.match(t) and t.partition("#")[0].endswith(".md")}
        todo.extend(d for d in graph[md] if d.is_file())
    for doc in sorted((root / "docs").glob("*.md")):
        if doc.resolve() not in reached:
            problems.append(f"{rel(doc)}: not reachable from README.md")
    return problems


def self_test() -> int:
    """Builds small trees in a temporary directory and checks that the
    checker passes the good one and names each fault of the bad ones."""
    def tree(files: dict) -> Path:
        d = Path(tempfile.mkdtemp(prefix="check-links-"))
        for name, text in files.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(text, encoding="utf-8")
        return d

    good = {
        "README.md": "# rnull\n\n## Quick start\n\nSee [the budget](docs/host-budget.md#the-policies),\n"
                     "[start](#quick-start), [src](src/), ![plot](docs/p.png) and "
                     "[web](https://example.org/x.md).\n\n`[not a link](nowhere.md)`\n\n"
                     "```\n[nor this](nowhere.md)\n```\n\n[ref]: docs/testing.md\n",
        "docs/host-budget.md": "# Host budget\n\n## The policies\n\n[back](../README.md)\n"
                               "[testing](testing.md#make-check-and-make-test)\n",
        "docs/testing.md": "# Testing\n\n## `make check` and `make test`\n",
        "docs/p.png": "",
        "src/x.rs": "",
    }
    cases = [
        ("good tree", {}, []),
        ("missing file", {"README.md": good["README.md"] + "[gone](docs/gone.md)\n"},
         ["README.md:15: broken link 'docs/gone.md'"]),
        ("missing anchor", {"docs/testing.md": "# Testing\n\n[x](host-budget.md#no-such)\n"},
         ["docs/testing.md:3: broken link 'host-budget.md#no-such'",
          "docs/host-budget.md:6: broken link 'testing.md#make-check-and-make-test'"]),
        ("unreachable doc", {"docs/orphan.md": "# Orphan\n"},
         ["docs/orphan.md: not reachable from README.md"]),
        ("README too long", {"README.md": good["README.md"] + "x\n" * MAX_README_LINES},
         [f"README.md: {MAX_README_LINES + 14} lines, more than {MAX_README_LINES}"]),
    ]
    failed = 0
    for name, change, expected in cases:
        root = tree({**good, **change})
        got = check(root)
        # The command line too: exit 1 with the problems on stdout, or 0.
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(["check-links.py", "--root", str(root)])
        shutil.rmtree(root)
        ok = (len(got) == len(expected)
              and all(any(g.startswith(e) for g in got) for e in expected)
              and rc == (1 if expected else 0)
              and out.getvalue().splitlines() == got)
        print(f"{'ok' if ok else 'FAILED'}: self-test {name}")
        if not ok:
            failed += 1
            print(f"  expected {expected}\n  got      {got} (exit {rc})")
    return 1 if failed else 0


def main(argv: list) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = Path(__file__).resolve().parent.parent
    if len(argv) == 3 and argv[1] == "--root":
        root = Path(argv[2])
    elif len(argv) != 1:
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    problems = check(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
