"""Calls downstream tools through mcp-defer with the official Python SDK, in one protocol era.

Usage: python era_matrix.py initialize|discover MCP_DEFER_BINARY SERVERS_TOML CALLS_JSON
CALLS_JSON is a list of {"name": <qualified tool>, "arguments": {...}}. Each tool is called
through `call_tool` first, then selected and called directly. Prints one JSON line:
{"era": <negotiated version>, "calls": [{"name", "path", "is_error", "text"}...]}.
"""

import json
import sys

import anyio
from mcp import ClientSession, stdio_client
from launch import serve_params


def text_of(result):
    return " ".join(c.text for c in result.content if getattr(c, "text", None))


async def main(mode, binary, config, calls):
    params = serve_params(binary, config)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            if mode == "discover":
                result = await session.discover()
                era = "2026-07-28" if "2026-07-28" in result.supported_versions else "?"
            else:
                era = (await session.initialize()).protocol_version
            out = []
            for call in calls:
                proxied = await session.call_tool(
                    "call_tool", {"name": call["name"], "arguments": call["arguments"]}
                )
                out.append({"name": call["name"], "path": "call_tool",
                            "is_error": bool(proxied.is_error), "text": text_of(proxied)})
            selected = await session.call_tool("select_tools", {"names": [c["name"] for c in calls]})
            if selected.is_error:
                print(f"select_tools failed: {text_of(selected)}", file=sys.stderr)
                sys.exit(1)
            await session.list_tools()
            for call in calls:
                direct = await session.call_tool(call["name"], call["arguments"])
                out.append({"name": call["name"], "path": "direct",
                            "is_error": bool(direct.is_error), "text": text_of(direct)})
            print(json.dumps({"era": era, "calls": out}))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))
