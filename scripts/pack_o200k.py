#!/usr/bin/env python3
"""Packs OpenAI's o200k_base BPE table (the `.tiktoken` file shipped in the tiktoken-rs crate)
into src/tokens/o200k_base.bin: for each rank 0, 1, 2, ... one length byte and the token's
bytes. The text file is base64 plus the rank on every line (3.6 MB); this is the same table in
1.6 MB, read without base64 (`src/tokens/mod.rs`; its unit test checks every rank against
tiktoken-rs's own table).

    scripts/pack_o200k.py [~/.cargo/registry/src/*/tiktoken-rs-0.12.1/assets/o200k_base.tiktoken]
"""
import base64
import glob
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "src", "tokens", "o200k_base.bin")
if len(sys.argv) > 1:
    source = sys.argv[1]
else:
    found = glob.glob(os.path.expanduser(
        "~/.cargo/registry/src/*/tiktoken-rs-0.12.1/assets/o200k_base.tiktoken"))
    if not found:
        sys.exit("pack_o200k: no tiktoken-rs 0.12.1 in ~/.cargo/registry; run `cargo fetch` "
                 "or pass the .tiktoken file")
    source = found[0]

packed = bytearray()
with open(source) as lines:
    for expected, line in enumerate(lines):
        token, rank = line.split()
        if int(rank) != expected:
            sys.exit(f"pack_o200k: rank {rank} on line {expected + 1}; ranks must count up from 0")
        token = base64.b64decode(token)
        if not 0 < len(token) < 256:
            sys.exit(f"pack_o200k: token of rank {rank} has {len(token)} bytes")
        packed.append(len(token))
        packed += token
with open(out, "wb") as f:
    f.write(packed)
print(f"{expected + 1} tokens, {len(packed)} bytes -> {os.path.relpath(out)}")
