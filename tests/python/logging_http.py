"""MCP logging through `mcp-defer serve --http`, with the official Python SDK's Streamable HTTP
client: a tool that logs at four levels.

Usage: python logging_http.py URL TOOL LEVEL COUNT [ERA]
ERA "legacy" (the default): the `initialize` handshake, then `logging/setLevel LEVEL`; waits
(at most 20 s) for COUNT `notifications/message` (they ride the session's GET stream, so they
may come after the result).
ERA "2026-07-28": no session and no setLevel; the client opts in with `log_level=LEVEL`, which
the SDK stamps as `io.modelcontextprotocol/logLevel` on every request, and the messages come on
the call's own response stream: only those seen by the time the result came are reported.
Calls TOOL through `call_tool` and prints one JSON line: the call's text and the messages
seen, in order. Exits non-zero with a message on any failure.
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


async def main(url, tool, level, count, era):
    seen = []

    async def on_log(params):
        seen.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))

    opt_in = None if era == "legacy" else level
    async with Client(url, mode=era, logging_callback=on_log, log_level=opt_in) as client:
        if era == "legacy":
            await client.set_logging_level(level)
        result = await client.call_tool("call_tool", {"name": tool, "arguments": {}})
        check(not result.is_error, f"call failed: {result}")
        text = "".join(c.text for c in result.content if getattr(c, "text", None))
        if era == "legacy":
            with anyio.move_on_after(WAIT):
                while len(seen) < count:
                    await anyio.sleep(0.05)
        logs = list(seen)
    print(json.dumps({"text": text, "logs": logs}))


if __name__ == "__main__":
    era = sys.argv[5] if len(sys.argv) > 5 else "legacy"
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), era)
