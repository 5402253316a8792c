#!/usr/bin/env python3
"""Builds the PyPI wheel `mcp-defer` for one platform from a prebuilt binary.

The layout maturin's `bindings = "bin"` produces: no Python code, the executable in
`mcp_defer-<v>.data/scripts/`, which pip (and uv, pipx) install into the environment's
`bin/` (`Scripts\\` on Windows). So `uvx mcp-defer` and `pipx run mcp-defer` run the binary
itself; nothing is downloaded at install time. Standard library only.

    python/build_wheel.py --binary target/release/mcp-defer --tag manylinux_2_17_x86_64 \
        --version 0.1.0 --out dist/
"""

import argparse
import base64
import hashlib
import os
import stat
import sys
import zipfile

NAME = "mcp_defer"
SUMMARY = (
    "An MCP server that aggregates many MCP servers and loads their tools on demand, "
    "append-only, so the client's prompt cache survives."
)


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build(binary, tag, version, out, readme):
    exe = "mcp-defer.exe" if tag.startswith("win") else "mcp-defer"
    dist_info = f"{NAME}-{version}.dist-info"
    with open(binary, "rb") as f:
        payload = f.read()
    description = ""
    if readme and os.path.exists(readme):
        with open(readme, encoding="utf-8") as f:
            description = f.read()
    metadata = "\n".join(
        [
            "Metadata-Version: 2.1",
            "Name: mcp-defer",
            f"Version: {version}",
            f"Summary: {SUMMARY}",
            "License: MIT",
            "Home-page: https://github.com/mcp-defer/mcp-defer",
            "Keywords: mcp,model-context-protocol,agents,tools,proxy",
            "Requires-Python: >=3.8",
            "Description-Content-Type: text/markdown",
            "",
            description,
        ]
    )
    wheel = "\n".join(
        [
            "Wheel-Version: 1.0",
            "Generator: mcp-defer build_wheel.py",
            "Root-Is-Purelib: false",
            f"Tag: py3-none-{tag}",
            "",
        ]
    )
    files = [
        (f"{NAME}-{version}.data/scripts/{exe}", payload, 0o755),
        (f"{dist_info}/METADATA", metadata.encode(), 0o644),
        (f"{dist_info}/WHEEL", wheel.encode(), 0o644),
    ]
    record_path = f"{dist_info}/RECORD"
    record = "\n".join([record_line(p, d) for p, d, _ in files] + [f"{record_path},,", ""])
    files.append((record_path, record.encode(), 0o644))
    os.makedirs(out, exist_ok=True)
    target = os.path.join(out, f"{NAME}-{version}-py3-none-{tag}.whl")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data, mode in files:
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="the mcp-defer executable to carry")
    parser.add_argument(
        "--tag",
        required=True,
        help="platform tag: manylinux_2_17_x86_64, manylinux_2_17_aarch64, "
        "macosx_11_0_arm64, macosx_10_12_x86_64, win_amd64",
    )
    parser.add_argument("--version", required=True)
    parser.add_argument("--out", required=True, help="directory for the .whl")
    parser.add_argument("--readme", default=None, help="long description (markdown)")
    args = parser.parse_args()
    print(build(args.binary, args.tag, args.version, args.out, args.readme))


if __name__ == "__main__":
    sys.exit(main())
