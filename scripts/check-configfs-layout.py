#!/usr/bin/env python3
"""`make test`: the configfs structures kapi declares by hand match C.

6.12's `bindings` have no configfs, so rnull/kapi/configfs.rs declares the
structures itself and asserts their sizes and field offsets at build time
(`size_of::<T>() == N`, `offset_of!(T, field) == N`). This script checks
those numbers against the kernel's own header: it runs bindgen over
`include/linux/configfs.h` with the flags the kernel build used for its
bindings (from `rust/bindings/.bindings_generated.rs.cmd` of KDIR), with
layout tests on, and compares every asserted number with bindgen's.

Prints one line per mismatch and exits 1 if there is any, or if no
assertion could be checked.

usage: scripts/check-configfs-layout.py KDIR
"""

import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "rnull" / "kapi" / "configfs.rs"
# Assertions on the C structures (`config_*`, `configfs_*`) only.
SIZE = re.compile(r"size_of::<((?:config|configfs)_\w+)>\(\)\s*==\s*(\d+)")
OFFSET = re.compile(r"offset_of!\(((?:config|configfs)_\w+),\s*(\w+)\)\s*==\s*(\d+)")


def bindgen_layout(kdir):
    """{"T": size, "T::field": offset} for configfs.h, from bindgen."""
    cmd_file = pathlib.Path(kdir) / "rust" / "bindings" / ".bindings_generated.rs.cmd"
    line = cmd_file.read_text().splitlines()[0]
    cmd = line.split(":=", 1)[1].split(";", 1)[0]
    args = shlex.split(cmd)
    bindgen = args[0]
    cflags = [a for a in args[args.index("--") + 1:] if not a.startswith("-Wp,-MMD")]
    with tempfile.TemporaryDirectory() as tmp:
        header = pathlib.Path(tmp) / "configfs.h"
        header.write_text("#include <linux/configfs.h>\n")
        out = pathlib.Path(tmp) / "configfs.rs"
        subprocess.run(
            [bindgen, str(header), "--use-core", "--ctypes-prefix", "ffi",
             "--allowlist-type", "config_.*|configfs_.*", "--no-recursive-allowlist",
             "-o", str(out), "--"] + cflags + ["-DMODULE"],
            check=True, cwd=kdir)
        text = out.read_text()
    layout = {}
    for part in text.split("fn bindgen_test_layout_")[1:]:
        name = re.match(r"\w+", part).group(0)
        size = re.search(r"size_of::<\w+>\(\),\s*(\d+)usize", part)
        if size:
            layout[name] = int(size.group(1))
        for field, off in re.findall(
                r"addr_of!\(\(\*ptr\)\.(\w+)\) as usize - ptr as usize\s*\},\s*(\d+)usize", part):
            layout[f"{name}::{field}"] = int(off)
    return layout


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    layout = bindgen_layout(sys.argv[1])
    src = SOURCE.read_text()
    checked, bad = 0, []
    for name, n in SIZE.findall(src):
        key = name
        checked += 1
        if layout.get(key) != int(n):
            bad.append(f"size of {key}: rnull says {n}, C says {layout.get(key)}")
    for name, field, n in OFFSET.findall(src):
        key = f"{name}::{field}"
        checked += 1
        if layout.get(key) != int(n):
            bad.append(f"offset of {key}: rnull says {n}, C says {layout.get(key)}")
    for b in bad:
        print(b)
    print(f"check-configfs-layout: {checked} size/offset assertions, {len(bad)} mismatch(es)")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
