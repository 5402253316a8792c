"""Many clients of one `mcp-defer serve --http`, through the official Python SDK's Streamable
HTTP client.

Usage: python http_sessions.py MODE URL [ARGS...]
Modes:
  two TOOL_A TOOL_B
            two handshake-era sessions at once: A selects TOOL_A, then B selects TOOL_B. A's
            list_changed must not reach B; each re-list shows only its own tool appended.
  stateless TOOL
            2026-07-28 requests without a session: the fixed list (meta and core tools),
            select_tools returns the schema without appending, call_tool works.
  token TOKEN
            a handshake-era session with `Authorization: Bearer TOKEN`; lists tools.
Prints one JSON line with what it saw; exits non-zero with a message on any failure.
"""

import json
import sys

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def names(tools):
    return [t.name for t in tools]


def dumps(tools):
    return [json.dumps(t.model_dump(mode="json", by_alias=True, exclude_none=True)) for t in tools]


class Counted:
    """Counts the tools/list_changed notifications one session receives."""

    def __init__(self):
        self.count = 0
        self.event = anyio.Event()

    async def __call__(self, message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.count += 1
            self.event.set()


async def two(url, tool_a, tool_b):
    notes_a, notes_b = Counted(), Counted()
    async with (
        Client(url, mode="legacy", message_handler=notes_a) as a,
        Client(url, mode="legacy", message_handler=notes_b) as b,
    ):
        first_a = (await a.list_tools()).tools
        first_b = (await b.list_tools()).tools
        check(dumps(first_a) == dumps(first_b), "both sessions start from the same list")

        selected = await a.call_tool("select_tools", {"names": [tool_a]})
        check(not selected.is_error, f"A's select_tools failed: {selected.content}")
        with anyio.fail_after(10):
            await notes_a.event.wait()
        # Give a stray notification time to arrive where it must not.
        await anyio.sleep(0.3)
        b_before = notes_b.count

        selected = await b.call_tool("select_tools", {"names": [tool_b]})
        check(not selected.is_error, f"B's select_tools failed: {selected.content}")
        with anyio.fail_after(10):
            await notes_b.event.wait()

        list_a = (await a.list_tools()).tools
        list_b = (await b.list_tools()).tools
        check(dumps(list_a)[: len(first_a)] == dumps(first_a), "A's earlier tools keep their bytes")
        check(dumps(list_b)[: len(first_b)] == dumps(first_b), "B's earlier tools keep their bytes")

        called = await a.call_tool(tool_a, {"message": "from A"})
        text = " ".join(c.text for c in called.content if getattr(c, "text", None))
        check(not called.is_error and "from A" in text, f"A calls its tool directly: {text}")
        print(json.dumps({
            "a": names(list_a),
            "b": names(list_b),
            "a_notifications": notes_a.count,
            "b_notifications_before_its_select": b_before,
        }))


async def stateless(url, tool):
    async with Client(url, mode="2026-07-28") as client:
        first = (await client.list_tools()).tools
        selected = await client.call_tool("select_tools", {"names": [tool]})
        check(not selected.is_error, f"select_tools failed: {selected.content}")
        loaded = selected.structured_content.get("loaded", [])
        again = (await client.list_tools()).tools
        called = await client.call_tool("call_tool", {"name": tool, "arguments": {"message": "stateless"}})
        text = " ".join(c.text for c in called.content if getattr(c, "text", None))
        check(not called.is_error and "stateless" in text, f"call_tool answered: {text}")
        select_def = next(t for t in first if t.name == "select_tools")
        print(json.dumps({
            "first": names(first),
            "again": names(again),
            "same_bytes": dumps(first) == dumps(again),
            "loaded": loaded,
            "select_description": select_def.description,
            "call": text,
        }))


async def token(url, value):
    headers = {"Authorization": f"Bearer {value}"}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                print(json.dumps({"tools": names(tools)}))


if __name__ == "__main__":
    mode, url, *rest = sys.argv[1:]
    runner = {"two": two, "stateless": stateless, "token": token}[mode]
    anyio.run(runner, url, *rest)
