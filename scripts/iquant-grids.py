#!/usr/bin/env python3
"""Writes the I-quant codebooks of the GGUF format as the engine's resource iquant-grids.bin.

The I-quant types (IQ1_S/IQ1_M, IQ2_XXS/IQ2_XS/IQ2_S, IQ3_XXS/IQ3_S) store indices into fixed grids of 4 or 8
small values and 7-bit indices into a table of sign patterns; a decoder cannot read them without these tables. ggml
(MIT licence) defines them in ggml-common.h; this script reads them from a ggml or llama.cpp source tree and writes
them as plain little-endian data, so that the engine carries the data, not ggml's code.

usage: scripts/iquant-grids.py SOURCE_TREE_OR_HEADER [OUT]
  SOURCE_TREE_OR_HEADER: a ggml checkout (src/ggml-common.h), a llama.cpp one (ggml/src/ggml-common.h), the header
  itself, or '-' for the header on stdin, e.g.
    git --git-dir /work/.mirror/ggml-org+ggml/repo show HEAD:src/ggml-common.h | scripts/iquant-grids.py -
  OUT defaults to backend-kt-native/kernels/src/main/resources/dev/lazarus/kt/gguf/iquant-grids.bin

Format: b"IQGRIDS1", u32 table count, then per table: u8 name length, name (ASCII), u8 bytes per entry,
u32 entry count, the entries (little-endian).
"""
import os
import re
import struct
import sys

TABLES = [  # name, bytes per entry, entries
    ("ksigns_iq2xs", 1, 128),
    ("iq2xxs_grid", 8, 256),
    ("iq2xs_grid", 8, 512),
    ("iq2s_grid", 8, 1024),
    ("iq3xxs_grid", 4, 256),
    ("iq3s_grid", 4, 512),
    ("iq1s_grid", 8, 2048),
]

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "backend-kt-native", "kernels", "src", "main",
                           "resources", "dev", "lazarus", "kt", "gguf", "iquant-grids.bin")


def header_text(source):
    if source == "-":
        return sys.stdin.read()
    if os.path.isfile(source):
        return open(source, encoding="utf-8").read()
    for rel in ("src/ggml-common.h", "ggml/src/ggml-common.h"):
        path = os.path.join(source, rel)
        if os.path.isfile(path):
            return open(path, encoding="utf-8").read()
    sys.exit(f"no ggml-common.h under {source}")


def table(text, name, count):
    m = re.search(r"GGML_TABLE_BEGIN\(\s*\w+\s*,\s*" + re.escape(name) + r"\s*,[^)]*\)(.*?)GGML_TABLE_END\(\)",
                  text, re.S)
    if not m:
        sys.exit(f"table {name} not found")
    body = re.sub(r"//[^\n]*", "", m.group(1))
    values = [int(v, 0) for v in re.findall(r"0x[0-9a-fA-F]+|\d+", body)]
    if len(values) != count:
        sys.exit(f"table {name}: {len(values)} entries, expected {count}")
    return values


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    text = header_text(sys.argv[1])
    out = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_OUT
    fmt = {1: "B", 4: "I", 8: "Q"}
    data = bytearray(b"IQGRIDS1") + struct.pack("<I", len(TABLES))
    for name, width, count in TABLES:
        values = table(text, name, count)
        data += struct.pack("<B", len(name)) + name.encode("ascii") + struct.pack("<BI", width, count)
        data += struct.pack("<%d%s" % (count, fmt[width]), *values)
    with open(out, "wb") as f:
        f.write(data)
    print(f"wrote {out}: {len(data)} bytes")


if __name__ == "__main__":
    main()
