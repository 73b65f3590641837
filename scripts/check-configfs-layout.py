#!/usr/bin/env python3
"""`make test`: the C declarations kapi writes by hand match C.

6.12's `bindings` have no configfs, no badblocks functions and no fault
injection, so rnull/kapi/configfs.rs, rnull/kapi/badblocks.rs and
rnull/kapi/fault.rs declare the structures (and the last two the
functions) themselves and assert sizes and field
offsets at build time (`size_of::<T>() == N`, `offset_of!(T, field) == N`).
This script checks them against the kernel's own headers: it runs bindgen
over `include/linux/configfs.h` and `include/linux/badblocks.h` with the
flags the kernel build used for its bindings (from
`rust/bindings/.bindings_generated.rs.cmd` of KDIR), with layout tests on,
and compares every asserted number with bindgen's. For badblocks, whose
`seqlock_t` makes the later offsets depend on the configuration, it also
compares the structure's fields (names and types, in order) and the
functions' prototypes with bindgen's; so for `fault_attr` (with its
configuration-dependent `ratelimit_state`), checked only where KDIR's
kernel has fault injection (fault.rs is built only there).

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
KAPI = ROOT / "rnull" / "kapi"
# (header, kapi source, bindgen's type allowlist, its function allowlist,
# the C structure names the source's assertions are about, the kernel
# options the source is built with)
UNITS = [
    ("configfs.h", KAPI / "configfs.rs", "config_.*|configfs_.*", None, r"(?:config|configfs)_\w+", []),
    ("badblocks.h", KAPI / "badblocks.rs", "badblocks", "badblocks_.*", r"badblocks", []),
    ("fault-inject.h", KAPI / "fault.rs", "fault_attr|fault_config",
     "setup_fault_attr|should_fail|fault_config_init", r"fault_attr",
     ["CONFIG_FAULT_INJECTION", "CONFIG_FAULT_INJECTION_CONFIGFS"]),
]


def configured(kdir, options):
    """Whether KDIR's kernel has every option of `options` built in."""
    config = (pathlib.Path(kdir) / ".config").read_text().splitlines()
    return all(f"{o}=y" in config for o in options)


def bindgen_text(kdir, header, types, functions):
    """bindgen's output for `linux/<header>`."""
    cmd_file = pathlib.Path(kdir) / "rust" / "bindings" / ".bindings_generated.rs.cmd"
    line = cmd_file.read_text().splitlines()[0]
    cmd = line.split(":=", 1)[1].split(";", 1)[0]
    args = shlex.split(cmd)
    bindgen = args[0]
    cflags = [a for a in args[args.index("--") + 1:] if not a.startswith("-Wp,-MMD")]
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "h.h"
        src.write_text(f"#include <linux/{header}>\n")
        out = pathlib.Path(tmp) / "out.rs"
        allow = ["--allowlist-type", types]
        if functions:
            allow += ["--allowlist-function", functions]
        subprocess.run(
            [bindgen, str(src), "--use-core", "--ctypes-prefix", "ffi"] + allow +
            ["--no-recursive-allowlist", "-o", str(out), "--"] + cflags + ["-DMODULE"],
            check=True, cwd=kdir)
        return out.read_text()


def bindgen_layout(text):
    """{"T": size, "T::field": offset} from bindgen's output."""
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


def normalise(text):
    """A declaration with paths, visibility and spacing taken out."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"\bpub(\((?:crate|super)\))?\s+", "", text)
    text = re.sub(r"\b(?:kernel::)?(?:bindings|ffi)::", "", text)
    text = re.sub(r"\bu64_\b", "u64", text)
    text = re.sub(r"\bbool_\b", "bool", text)
    text = re.sub(r"\b(\d+)usize\b", r"\1", text)
    text = re.sub(r"\s+", "", text)
    return text.replace(",)", ")").replace(",}", "}")


def struct_fields(text, name):
    """The normalised field list of `struct name` in Rust source."""
    m = re.search(r"struct\s+" + name + r"\s*\{(.*?)\n\s*\}", text, re.S)
    return normalise(m.group(1)) if m else None


def functions(text):
    """{name: normalised prototype} of the `fn` declarations in extern blocks."""
    out = {}
    for block in re.findall(r'extern\s+"C"\s*\{(.*?)\n\s*\}', text, re.S):
        for m in re.finditer(r"fn\s+(\w+)\s*\((.*?)\)\s*(->\s*[^;]+)?;", block, re.S):
            out[m.group(1)] = normalise(f"({m.group(2)}){m.group(3) or ''}")
    return out


def check_unit(kdir, header, source, types, funcs, cname, _options):
    """(checks made, mismatches) for one header."""
    text = bindgen_text(kdir, header, types, funcs)
    layout = bindgen_layout(text)
    src = source.read_text()
    size = re.compile(r"size_of::<(" + cname + r")>\(\)\s*==\s*(\d+)")
    offset = re.compile(r"offset_of!\((" + cname + r"),\s*(\w+)\)\s*==\s*(\d+)")
    checked, bad = 0, []
    for name, n in size.findall(src):
        checked += 1
        if layout.get(name) != int(n):
            bad.append(f"{header}: size of {name}: rnull says {n}, C says {layout.get(name)}")
    for name, field, n in offset.findall(src):
        key = f"{name}::{field}"
        checked += 1
        if layout.get(key) != int(n):
            bad.append(f"{header}: offset of {key}: rnull says {n}, C says {layout.get(key)}")
    if funcs:
        # The whole structure, field by field, and every prototype.
        checked += 1
        ours, theirs = struct_fields(src, cname), struct_fields(text, cname)
        if ours is None or ours != theirs:
            bad.append(f"{header}: struct {cname}: rnull has {ours}, C has {theirs}")
        c_fns = functions(text)
        for name, proto in functions(src).items():
            checked += 1
            if c_fns.get(name) != proto:
                bad.append(f"{header}: {name}: rnull declares {proto}, C has {c_fns.get(name)}")
    return checked, bad


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    checked, bad = 0, []
    for unit in UNITS:
        if not configured(sys.argv[1], unit[5]):
            print(f"check-configfs-layout: {unit[0]}: not built for this kernel ({', '.join(unit[5])} unset)")
            continue
        c, b = check_unit(sys.argv[1], *unit)
        if c == 0:
            b.append(f"{unit[0]}: nothing checked in {unit[1].name}")
        checked += c
        bad += b
    for b in bad:
        print(b)
    print(f"check-configfs-layout: {checked} layout and prototype checks, {len(bad)} mismatch(es)")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
