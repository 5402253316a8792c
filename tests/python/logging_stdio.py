"""MCP logging through `mcp-defer serve` over stdio, with the official Python SDK's client.

Usage: python logging_stdio.py MCP_DEFER_BINARY SERVERS_TOML ERA TOOL LEVEL
ERA "legacy": the `initialize` handshake, then `logging/setLevel LEVEL`.
ERA "2026-07-28": no setLevel in that era; the client opts in with `log_level=LEVEL`, which
the SDK stamps as `io.modelcontextprotocol/logLevel` on every request.
Calls TOOL through `call_tool` and prints one JSON line: the call's text and the
`notifications/message` params received by the time the result came (over stdio they come
first). Exits non-zero with a message on any failure.
"""

import json
import sys
import warnings

import anyio
from mcp import Client
from launch import serve_params

warnings.simplefilter("ignore")  # MCP logging is deprecated in 2026-07-28, used on purpose


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


async def main(binary, config, era, tool, level):
    seen = []

    async def on_log(params):
        seen.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))

    params = serve_params(binary, config)
    opt_in = None if era == "legacy" else level
    async with Client(params, mode=era, logging_callback=on_log, log_level=opt_in) as client:
        if era == "legacy":
            await client.set_logging_level(level)
        result = await client.call_tool("call_tool", {"name": tool, "arguments": {}})
        check(not result.is_error, f"call failed: {result}")
        text = "".join(c.text for c in result.content if getattr(c, "text", None))
        logs = list(seen)
    print(json.dumps({"text": text, "logs": logs}))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:6])
