#!/usr/bin/env python3
"""The README's module parameter table, generated from the module itself.

Each parameter's help, range and default are written once, in
rnull/params.rs; `module_param!` puts them into the module's `.modinfo`
section as `parm=NAME:HELP (RANGE; default DEFAULT)`. This script reads that
section straight from the ELF file (no modinfo needed) and prints the
markdown table, or with --check README.md fails if the table between the
README's `param-table` markers does not have exactly its rows (in any order).

usage: scripts/param-table.py [--check README.md] rnull/rnull.ko
"""

import re
import struct
import sys

BEGIN = "<!-- param-table: generated from rnull.ko by scripts/param-table.py; `make param-table` -->"
END = "<!-- /param-table -->"
DESC = re.compile(r"^(?P<help>.*) \((?P<range>[^()]*); default (?P<default>[^()]*)\)$")


def modinfo(path):
    """The NUL-separated strings of the `.modinfo` section of an ELF64 file."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit(f"{path}: not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def section(i):
        name, _type, _flags, _addr, off, size = struct.unpack_from(
            "<IIQQQQ", data, shoff + i * shentsize)
        return name, off, size

    _, stroff, _ = section(shstrndx)
    for i in range(shnum):
        name, off, size = section(i)
        end = data.index(b"\0", stroff + name)
        if data[stroff + name:end] == b".modinfo":
            return [s.decode() for s in data[off:off + size].split(b"\0") if s]
    raise SystemExit(f"{path}: no .modinfo section")


def table(path):
    rows = ["| parameter | range | default | meaning |", "|---|---|---|---|"]
    for entry in modinfo(path):
        if not entry.startswith("parm="):
            continue
        name, _, desc = entry[len("parm="):].partition(":")
        m = DESC.match(desc)
        if not m:
            raise SystemExit(f"parameter {name}: description '{desc}' lacks '(RANGE; default D)'")
        rows.append(f"| `{name}` | {m['range']} | {m['default']} | {m['help']} |")
    if len(rows) == 2:
        raise SystemExit(f"{path}: no parameters in .modinfo")
    return "\n".join(rows)


def main(argv):
    check = None
    if len(argv) >= 2 and argv[0] == "--check":
        check, argv = argv[1], argv[2:]
    if len(argv) != 1:
        raise SystemExit(__doc__)
    generated = table(argv[0])
    if check is None:
        print(BEGIN)
        print(generated)
        print(END)
        return 0
    text = open(check).read()
    m = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), text, re.S)
    if not m:
        print(f"{check}: no param-table markers", file=sys.stderr)
        return 1
    # Rows may be in any order (the README groups them by topic; the
    # linker decides the section's order), but must be the same rows.
    have, want = set(m.group(1).splitlines()), set(generated.splitlines())
    if have != want:
        for row in sorted(want - have):
            print(f"missing or different in {check}: {row}", file=sys.stderr)
        for row in sorted(have - want):
            print(f"not in {argv[0]}: {row}", file=sys.stderr)
        print(f"{check}: the parameter table differs from {argv[0]}; run `make param-table`",
              file=sys.stderr)
        return 1
    print(f"{check}: parameter table matches {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
