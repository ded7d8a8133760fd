#!/usr/bin/env python3
"""Pack an already built mcp-fuzz binary into its wheel, without building anything.

    python3 packaging/wheel.py --binary PATH --version VERSION --out DIR

The wheel is what maturin's `bindings = "bin"` makes of `pyproject.toml` (which `pip install .`
still builds with maturin): `mcp_fuzz-VERSION.data/scripts/mcp-fuzz` and the `.dist-info` with
METADATA (from `[project]` in pyproject.toml, README.md as the description, LICENSE), WHEEL and
RECORD. Its platform tag is read off the binary the way auditwheel reads it: the newest
`GLIBC_x.y` symbol version the binary needs gives `manylinux_x_y_ARCH`, and a shared library
outside the manylinux policy (anything but glibc's own and libgcc_s) is refused, as PyPI would.

scripts/package.sh uses it on Linux so that packaging reuses the release build instead of
compiling the workspace a second time (issue 28). The zip is deterministic: entries in a fixed
order with a fixed time, so the same binary gives the same wheel. Prints the wheel's path.
"""

import argparse
import base64
import hashlib
import os
import struct
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Libraries a manylinux wheel may link against (PEP 600 / auditwheel's policy), by soname prefix.
ALLOWED = ("libc.so.", "libm.so.", "libpthread.so.", "libdl.so.", "librt.so.", "libgcc_s.so.",
           "ld-linux", "libutil.so.", "libresolv.so.")
ARCH = {62: "x86_64", 183: "aarch64"}  # ELF e_machine
SHT_GNU_VERNEED = 0x6FFFFFFE
SHT_DYNAMIC = 6
DT_NEEDED = 1
# 1980-01-01, the earliest time a zip entry can hold.
EPOCH = (1980, 1, 1, 0, 0, 0)


def die(msg):
    print(f"wheel.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def elf_facts(data):
    """The binary's architecture, the sonames it needs and the glibc versions it needs."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        die("the binary is not a 64-bit little-endian ELF file (only Linux hosts are packed here)")
    machine, = struct.unpack_from("<H", data, 18)
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]

    def strtab(index):
        _, _, _, _, off, size, *_ = sections[index]
        return data[off:off + size]

    def string(table, at):
        return table[at:table.index(b"\0", at)].decode()

    needed, glibc = [], set()
    for _, kind, _, _, off, size, link, info, _, entsize in sections:
        if kind == SHT_DYNAMIC:
            names = strtab(link)
            for at in range(off, off + size, entsize):
                tag, val = struct.unpack_from("<qQ", data, at)
                if tag == DT_NEEDED:
                    needed.append(string(names, val))
        elif kind == SHT_GNU_VERNEED:
            names = strtab(link)
            at = off
            for _ in range(info):
                _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", data, at)
                a = at + aux
                for _ in range(cnt):
                    _, _, _, name, anext = struct.unpack_from("<IHHII", data, a)
                    version = string(names, name)
                    if version.startswith("GLIBC_") and version[6:].replace(".", "").isdigit():
                        glibc.add(tuple(int(p) for p in version[6:].split(".")))
                    a += anext
                at += nxt
    return ARCH.get(machine), needed, glibc


def platform_tag(binary):
    arch, needed, glibc = elf_facts(binary)
    if arch is None:
        die("the binary is for a CPU this script does not tag (x86_64 and aarch64 only)")
    foreign = [n for n in needed if not n.startswith(ALLOWED)]
    if foreign:
        die(f"the binary needs {', '.join(foreign)}, which no manylinux system promises")
    # manylinux_2_17 is the oldest tag pip and PyPI still take.
    major, minor = max(max(glibc, default=(2, 17))[:2], (2, 17))
    tag = f"manylinux_{major}_{minor}_{arch}"
    # The legacy alias pip < 20.3 knows (PEP 600).
    if (major, minor) <= (2, 17):
        tag = f"manylinux_2_17_{arch}.manylinux2014_{arch}"
    return tag


def metadata(version):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = [
        "Metadata-Version: 2.4",
        f"Name: {project['name']}",
        f"Version: {version}",
    ]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    lines += [f"License-File: {f}" for f in project.get("license-files", [])]
    lines.append(f"Summary: {project['description']}")
    if project.get("keywords"):
        lines.append(f"Keywords: {','.join(project['keywords'])}")
    lines.append(f"License-Expression: {project['license']}")
    lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Project-URL: {k}, {v}" for k, v in project.get("urls", {}).items()]
    lines.append("Description-Content-Type: text/markdown; charset=UTF-8; variant=GFM")
    readme = (ROOT / project["readme"]).read_text()
    return ("\n".join(lines) + "\n\n" + readme).encode()


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, type=Path)
    parser.add_argument("--version", required=True)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    binary = args.binary.read_bytes()
    tag = platform_tag(binary)
    dist = f"mcp_fuzz-{args.version}"
    info = f"{dist}.dist-info"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    files = [(f"{dist}.data/scripts/mcp-fuzz", binary, 0o755)]
    files += [(f"{info}/METADATA", metadata(args.version), 0o644)]
    files += [
        (f"{info}/WHEEL",
         f"Wheel-Version: 1.0\nGenerator: mcp-fuzz packaging/wheel.py\nRoot-Is-Purelib: false\n"
         f"Tag: py3-none-{tag}\n".encode(), 0o644)
    ]
    files += [(f"{info}/licenses/{f}", (ROOT / f).read_bytes(), 0o644)
              for f in project.get("license-files", [])]
    record = "\n".join([record_line(n, d) for n, d, _ in files] + [f"{info}/RECORD,,"]) + "\n"
    files.append((f"{info}/RECORD", record.encode(), 0o644))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{dist}-py3-none-{tag}.whl"
    tmp = path.with_suffix(".whl.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data, mode in files:
            entry = zipfile.ZipInfo(name, EPOCH)
            entry.external_attr = (0o100000 | mode) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    os.replace(tmp, path)
    print(path)


if __name__ == "__main__":
    main()
