"""Requests downstream servers send their client, through mcp-defer, with the official Python SDK.

Usage: python client_requests.py MODE MCP_DEFER_BINARY SERVERS_TOML [ARGS...]
Modes:
  legacy       initialize; declares sampling, elicitation (form+url) and roots; drives
               server-everything's sampling/elicitation/roots tools and the fixture's `ask`.
  no-sampling  initialize; declares elicitation and roots but not sampling.
  roots DIR_A DIR_B
               initialize with roots [DIR_A]; server-filesystem may read DIR_A only; then the
               roots become [DIR_B] and list_changed is sent: DIR_B readable, DIR_A refused.
  modern       Client(mode="2026-07-28"): no initialize; elicitation and sampling arrive
               as InputRequiredResult rounds of tools/call.
Prints one JSON line with what it saw; exits non-zero with a message on any failure.
"""

import json
import os
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.client import Client

from searching import search

SAMPLED = "sampled-answer-42"
NAME = "Ada Lovelace"


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def text(result):
    return " ".join(c.text for c in result.content if getattr(c, "text", None))


class Callbacks:
    """Client callbacks that record what reached them."""

    def __init__(self, roots):
        self.seen = []
        self.roots = roots

    async def sampling(self, context, params):
        asked = " ".join(getattr(m.content, "text", "") for m in params.messages)
        self.seen.append({"sampling": asked})
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"{SAMPLED} for: {asked}"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(self, context, params):
        self.seen.append({"elicitation": params.mode, "message": params.message})
        if params.mode == "url":
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="accept", content={"name": NAME, "check": True})

    async def list_roots(self, context):
        self.seen.append({"roots": list(self.roots)})
        return types.ListRootsResult(roots=[types.Root(uri=Path(p).as_uri(), name=Path(p).name) for p in self.roots])


def params(binary, config):
    env = dict(os.environ)
    env.setdefault("RUST_LOG", "mcp_defer=debug")
    return StdioServerParameters(command=binary, args=["serve", "--config", config], env=env)


async def call(session, name, arguments):
    result = await session.call_tool(name, arguments)
    return result, text(result)


async def legacy(binary, config):
    cb = Callbacks(["/tmp"])
    async with stdio_client(params(binary, config)) as (read, write):
        async with ClientSession(
            read,
            write,
            sampling_callback=cb.sampling,
            elicitation_callback=cb.elicitation,
            list_roots_callback=cb.list_roots,
        ) as session:
            await session.initialize()
            out = {}
            # Called by qualified name: routed without being listed.
            result, said = await call(session, "everything__trigger-sampling-request", {"prompt": "tell a joke"})
            check(not result.is_error and SAMPLED in said and "tell a joke" in said, f"sampling answer in result: {said}")
            out["sampling"] = said
            # Through call_tool: the same route.
            result, said = await call(
                session, "call_tool", {"name": "everything__trigger-elicitation-request", "arguments": {}}
            )
            check(not result.is_error and NAME in said, f"elicitation answer in result: {said}")
            out["elicitation"] = said
            result, said = await call(
                session,
                "everything__trigger-url-elicitation",
                {"url": "https://example.com/authorize", "message": "open it"},
            )
            check(not result.is_error and "completed the URL elicitation" in said, f"url elicitation: {said}")
            out["url_elicitation"] = said
            result, said = await call(session, "everything__get-roots-list", {})
            check(not result.is_error and Path("/tmp").as_uri() in said, f"roots in result: {said}")
            out["roots"] = said
            # An rmcp-built server asking all three in one call.
            result, said = await call(session, "fixture__ask", {"asks": ["sampling", "elicitation", "roots"]})
            answers = result.structured_content["answers"]
            check(all("answer" in a for a in answers), f"fixture got every answer: {answers}")
            check(SAMPLED in json.dumps(answers[0]) and NAME in json.dumps(answers[1]), f"answers: {answers}")
            out["fixture"] = answers
            out["seen"] = cb.seen
            print(json.dumps(out))


async def no_sampling(binary, config):
    cb = Callbacks(["/tmp"])
    async with stdio_client(params(binary, config)) as (read, write):
        async with ClientSession(
            read, write, elicitation_callback=cb.elicitation, list_roots_callback=cb.list_roots
        ) as session:
            await session.initialize()
            found = await search(session, {"query": "trigger sampling request llm", "server": "everything", "limit": 50})
            names = [t["name"] for t in found.structured_content["tools"]]
            check("everything__trigger-sampling-request" not in names, f"sampling tool not offered: {names}")
            check("everything__trigger-elicitation-request" in names, f"elicitation tool offered: {names}")
            result, said = await call(session, "fixture__ask", {"asks": ["sampling", "url-elicitation", "elicitation"]})
            answers = result.structured_content["answers"]
            check("did not declare the sampling capability" in answers[0].get("error", ""), f"sampling refused: {answers}")
            check("answer" in answers[1] and "answer" in answers[2], f"elicitation answered: {answers}")
            check(not any("sampling" in s for s in cb.seen), f"no sampling reached the client: {cb.seen}")
            print(json.dumps({"offered": names, "answers": answers}))


async def roots(binary, config, dir_a, dir_b):
    cb = Callbacks([dir_a])
    async with stdio_client(params(binary, config)) as (read, write):
        async with ClientSession(read, write, list_roots_callback=cb.list_roots) as session:
            await session.initialize()
            file_a = os.path.join(dir_a, "inside.txt")
            file_b = os.path.join(dir_b, "outside.txt")

            async def read_file(path):
                result, said = await call(session, "fs__read_text_file", {"path": path})
                return (not result.is_error), said

            async def once_readable(path):
                """What reading `path` says once it is allowed (20 s at most)."""
                with anyio.fail_after(20):
                    while True:
                        ok, said = await read_file(path)
                        if ok:
                            return said
                        await anyio.sleep(0.1)

            # The server asks for roots once it is initialized; wait until it has them.
            said = await once_readable(file_a)
            check("inside the root" in said, f"read inside the root: {said}")
            ok, said = await read_file(file_b)
            check(not ok and "denied" in said.lower(), f"outside the root refused: {said}")

            cb.roots = [dir_b]
            await session.send_roots_list_changed()
            said = await once_readable(file_b)
            check("outside the first root" in said, f"new root readable: {said}")
            ok, said = await read_file(file_a)
            check(not ok and "denied" in said.lower(), f"old root refused after list_changed: {said}")
            print(json.dumps({"seen": cb.seen}))


async def modern(binary, config):
    cb = Callbacks(["/tmp"])
    async with Client(
        params(binary, config),
        mode="2026-07-28",
        elicitation_callback=cb.elicitation,
        sampling_callback=cb.sampling,
    ) as client:
        check(client.session.protocol_version == "2026-07-28", f"modern era: {client.session.protocol_version}")
        out = {}
        # Two requests in sequence: two input_required rounds of the same call.
        result = await client.call_tool("fixture__ask", {"asks": ["elicitation", "sampling"]})
        answers = result.structured_content["answers"]
        check(NAME in json.dumps(answers[0]) and SAMPLED in json.dumps(answers[1]), f"both rounds answered: {answers}")
        out["fixture"] = answers
        # One round by hand: the result carries the request and an opaque requestState.
        first = await client.session.call_tool(
            "call_tool", {"name": "everything__trigger-elicitation-request", "arguments": {}}, allow_input_required=True
        )
        check(isinstance(first, types.InputRequiredResult), f"input_required first: {first}")
        check(first.request_state and len(first.input_requests) == 1, f"one request and a state: {first}")
        # An unknown requestState is an error, not a hang.
        try:
            await client.session.call_tool(
                "call_tool",
                {"name": "everything__trigger-elicitation-request", "arguments": {}},
                input_responses={},
                request_state="not-a-state",
                allow_input_required=True,
            )
            check(False, "a forged requestState must fail")
        except Exception as err:  # noqa: BLE001
            check("requestState" in str(err), f"forged state named: {err}")
        (key, request), = first.input_requests.items()
        answer = await cb.elicitation(None, request.params)
        final = await client.session.call_tool(
            "call_tool",
            {"name": "everything__trigger-elicitation-request", "arguments": {}},
            input_responses={key: answer},
            request_state=first.request_state,
            allow_input_required=True,
        )
        check(isinstance(final, types.CallToolResult) and NAME in text(final), f"final result: {final}")
        out["elicitation"] = text(final)
        out["seen"] = cb.seen
        print(json.dumps(out))


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    runs = {"legacy": legacy, "no-sampling": no_sampling, "roots": roots, "modern": modern}
    anyio.run(runs[mode], *rest)
