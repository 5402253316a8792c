"""A session with mcp-defer through the official Python SDK, against real third-party servers.

search (which loads its best hits: notification, re-list) -> call by name, then select of a
hit that is already loaded; every list extends the one before byte for byte. Usage: python defer_session.py MCP_DEFER_BINARY SERVERS_TOML.
Prints one JSON line with what it saw; exits non-zero with a message on any failure.
"""

import json
import sys

import anyio
from mcp import ClientSession, stdio_client
from launch import serve_params

from searching import search


def dumps(tools):
    return [json.dumps(t.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=False) for t in tools]


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


async def main(binary, config):
    changed = anyio.Event()

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    params = serve_params(binary, config)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            check("search_tools" in (init.instructions or ""), "instructions explain search_tools")
            first = (await session.list_tools()).tools
            check([t.name for t in first] == ["search_tools", "select_tools", "call_tool"],
                  f"first list is the meta tools, got {[t.name for t in first]}")

            found = await search(session, {"query": "what time is it in another timezone"})
            hits = found.structured_content["tools"]
            check(hits and hits[0]["server"] == "time", f"time tool ranked first: {hits[:3]}")
            wanted = hits[0]["name"]
            check(hits[0]["loaded"], f"the search loaded its best hit: {hits[0]}")
            # An SDK client the server does not know gets the schema too (it may not re-list).
            check("input_schema" in hits[0], f"the best hit carries its schema: {hits[0]}")

            with anyio.fail_after(10):
                await changed.wait()
            relisted = (await session.list_tools()).tools
            check(dumps(relisted)[: len(first)] == dumps(first), "earlier tools keep their bytes")
            appended = [t.name for t in relisted[len(first):]]
            check(appended and appended[0] == wanted, f"{wanted} appended first at the end: {appended}")

            result = await session.call_tool("select_tools", {"names": [wanted]})
            check(not result.is_error, f"select_tools failed: {result.content}")
            check(result.structured_content["already_loaded"] == [wanted], f"already loaded: {result.structured_content}")
            check(dumps((await session.list_tools()).tools) == dumps(relisted), "select of a loaded tool changes nothing")

            now = await session.call_tool(wanted, {"timezone": "Europe/Paris"})
            text = " ".join(c.text for c in now.content if getattr(c, "text", None))
            check(not now.is_error and "Europe/Paris" in text, f"time call answered: {text}")

            echo = await session.call_tool(
                "call_tool", {"name": "everything__echo", "arguments": {"message": "through the proxy"}}
            )
            echoed = " ".join(c.text for c in echo.content if getattr(c, "text", None))
            check(not echo.is_error and "through the proxy" in echoed, f"echo through call_tool: {echoed}")

            print(json.dumps({"selected": wanted, "listed": [t.name for t in relisted], "time": text}))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
