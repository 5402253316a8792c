"""MCP logging through `mcp-defer serve --http`, with the official Python SDK's Streamable HTTP
client in the handshake era: `logging/setLevel`, then a tool that logs at four levels.

Usage: python logging_http.py URL TOOL LEVEL COUNT
Sets LEVEL, calls TOOL through `call_tool`, and waits (at most 20 s) for COUNT
`notifications/message` (they ride the session's GET stream, so they may come after the
result). Prints one JSON line: the call's text and the messages seen, in order.
Exits non-zero with a message on any failure.
"""

import json
import sys
import warnings

import anyio
from mcp.client.client import Client

warnings.simplefilter("ignore")  # logging/setLevel is deprecated in 2026-07-28, used on purpose

WAIT = 20


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


async def main(url, tool, level, count):
    seen = []

    async def on_log(params):
        seen.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))

    async with Client(url, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level(level)
        result = await client.call_tool("call_tool", {"name": tool, "arguments": {}})
        check(not result.is_error, f"call failed: {result}")
        text = "".join(c.text for c in result.content if getattr(c, "text", None))
        with anyio.move_on_after(WAIT):
            while len(seen) < count:
                await anyio.sleep(0.05)
    print(json.dumps({"text": text, "logs": seen}))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
