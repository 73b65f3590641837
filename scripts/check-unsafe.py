#!/usr/bin/env python3
"""`make test`: `unsafe` lives in rnull/kapi/ only, and every unsafe block
has a `// SAFETY:` comment right above it (or on the lines of the statement
it starts), every unsafe fn a `# Safety` doc section, every unsafe impl a
`// SAFETY:` comment.

Prints one line per violation and exits 1 if there is any.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
UNSAFE_BLOCK = re.compile(r"\bunsafe\s*\{")
# A function, not a function pointer type (`unsafe extern "C" fn(...)`).
UNSAFE_FN = re.compile(r"\bunsafe\s+(extern\s+\"C\"\s+)?fn\s+[A-Za-z_]")
UNSAFE_IMPL = re.compile(r"\bunsafe\s+impl\b")


def code_of(line):
    """The line without its // comment (strings with // are not used here)."""
    return line.split("//", 1)[0]


def has_safety_comment(lines, i):
    """A `// SAFETY:` comment in the comment run right above line i, or in
    the lines of the same statement before it (e.g. `let x =` on one line,
    `unsafe {` on the next)."""
    j = i - 1
    while j >= 0:
        s = lines[j].strip()
        if s.startswith("//"):
            if "SAFETY:" in s:
                return True
            j -= 1
            continue
        if s.startswith("#[") or s == "":
            j -= 1
            continue
        # Part of the same statement: keep looking up to its start.
        if not s.endswith((";", "{", "}")) or s.endswith("= {"):
            j -= 1
            continue
        return False
    return False


def has_safety_doc(lines, i):
    """A `# Safety` section in the doc comment above line i."""
    j = i - 1
    while j >= 0 and (lines[j].strip().startswith(("///", "#[")) or lines[j].strip() == ""):
        if lines[j].strip() == "/// # Safety":
            return True
        j -= 1
    return False


def main():
    bad = []
    for path in sorted((ROOT / "rnull").rglob("*.rs")):
        rel = path.relative_to(ROOT)
        in_kapi = rel.parts[:2] == ("rnull", "kapi")
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            code = code_of(line)
            if "unsafe" not in code:
                continue
            if not in_kapi and re.search(r"\bunsafe\b", code):
                bad.append(f"{rel}:{i + 1}: unsafe outside rnull/kapi/")
                continue
            if UNSAFE_FN.search(code):
                if not has_safety_doc(lines, i):
                    bad.append(f"{rel}:{i + 1}: unsafe fn without a `# Safety` doc section")
            elif UNSAFE_IMPL.search(code) or UNSAFE_BLOCK.search(code):
                if not has_safety_comment(lines, i):
                    bad.append(f"{rel}:{i + 1}: unsafe without a `// SAFETY:` comment above it")
    for b in bad:
        print(b)
    print(f"check-unsafe: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
