"""Client under test for the official MCP conformance suite: mcp-defer's downstream client side.

The suite starts a scenario's server and runs `python client.py SERVER_URL` with
MCP_CONFORMANCE_SCENARIO set. This script puts mcp-defer between a real client (the official
Python SDK) and that server: it writes a servers.toml with `[mcp_servers.conf] url = SERVER_URL`,
starts `mcp-defer serve --config` on it over stdio, and does what the scenario expects of a
client *through mcp-defer's meta tools* (search_tools, then call_tool "conf__<tool>"), so what
the suite checks is what mcp-defer did as that server's client. The SDK client declares sampling
and elicitation with callbacks that answer as a user would, so a downstream request that
mcp-defer forwards gets a real answer.

Auth scenarios (`auth/*`): the server answers 401 until it gets a token. The script first runs
`mcp-defer login conf` (discovery, registration, authorization code with PKCE through a
loopback redirect) and plays the browser: it fetches the printed authorization URL and follows
its redirects to mcp-defer's callback, as conformance clients do. Then it calls the scenario's
tool through mcp-defer with the stored token. XDG_DATA_HOME points into a temporary folder, so
the user's own logins are never touched. A scenario's client credentials
(MCP_CONFORMANCE_CONTEXT) become `oauth_client_id` and `oauth_client_secret_env_var`.

Exits 0 when the client saw what the scenario should give it, 1 with a message otherwise (the
suite then fails the scenario even where its own checks passed). MCP_DEFER_BIN overrides the
binary (default: target/debug/mcp-defer of this repository).
"""

import json
import os
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client, types

REPO = Path(__file__).resolve().parents[2]
SERVER = "conf"


class Failure(Exception):
    pass


def fail(message):
    print(f"FAILED: {message}", file=sys.stderr)
    raise Failure(message)


def text_of(result):
    return " ".join(c.text for c in result.content if getattr(c, "text", None))


def write_config(folder, url, context):
    config = Path(folder) / "servers.toml"
    oauth = ""
    if context.get("client_id"):
        oauth += f"oauth_client_id = {json.dumps(context['client_id'])}\n"
    if context.get("client_secret"):
        os.environ["CONFORMANCE_CLIENT_SECRET"] = context["client_secret"]
        oauth += 'oauth_client_secret_env_var = "CONFORMANCE_CLIENT_SECRET"\n'
    config.write_text(
        "[mcp_servers.conf]\n"
        f"url = {json.dumps(url)}\n"
        "startup_timeout_sec = 10\n"
        # A scenario's client has 30 s in all: a call that hangs should fail inside that.
        "tool_timeout_sec = 15\n"
        + oauth
    )
    return config


def login(binary, config):
    """`mcp-defer login conf`, with this script as the browser: open the printed URL and
    follow the authorization server's redirect to mcp-defer's loopback callback."""
    process = subprocess.Popen(
        [binary, "login", "conf", "--config", str(config), "--no-browser", "--timeout", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    opened = False
    for line in process.stdout:
        line = line.strip()
        if not opened and line.startswith("http"):
            opened = True
            try:
                with urllib.request.urlopen(line, timeout=15) as page:
                    page.read()
            except Exception as error:  # the login's own output says what went wrong
                print(f"browser step: {error}", file=sys.stderr)
    process.wait(timeout=30)
    errors = process.stderr.read()
    if process.returncode != 0:
        fail(f"mcp-defer login exited {process.returncode}: {errors.strip()}")


class Client:
    """The real client in front of mcp-defer: what the downstream server asked for, and its answers."""

    def __init__(self):
        self.elicitations = []
        self.samplings = []

    async def elicit(self, context, params):
        """Accepts, with each field's schema default, as a form shown prefilled and submitted."""
        self.elicitations.append(params)
        if getattr(params, "mode", "form") == "url":
            return types.ElicitResult(action="accept")
        schema = params.requested_schema or {}
        content = {
            name: spec["default"]
            for name, spec in (schema.get("properties") or {}).items()
            if isinstance(spec, dict) and "default" in spec
        }
        return types.ElicitResult(action="accept", content=content)

    async def sample(self, context, params):
        self.samplings.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="sampled through mcp-defer"),
            model="conformance-stub",
            stop_reason="endTurn",
        )


async def find(session, query, tool):
    """search_tools must list the scenario's tool under its qualified name."""
    found = await session.call_tool("search_tools", {"query": query, "limit": 20})
    if found.is_error:
        fail(f"search_tools failed: {text_of(found)}")
    names = [hit["name"] for hit in (found.structured_content or {}).get("tools", [])]
    wanted = f"{SERVER}__{tool}"
    if wanted not in names:
        fail(f"search_tools did not list {wanted}: {names}; {text_of(found)}")
    return wanted


async def call(session, name, arguments):
    result = await session.call_tool("call_tool", {"name": name, "arguments": arguments})
    return result, text_of(result)


async def run(scenario, session, client):
    if scenario == "initialize":
        # The server offers no tools: a search makes mcp-defer wait for its handshake.
        found = await session.call_tool("search_tools", {"query": "anything"})
        if found.is_error:
            fail(f"search_tools failed: {text_of(found)}")
    elif scenario == "tools_call":
        name = await find(session, "add two numbers", "add_numbers")
        result, text = await call(session, name, {"a": 5, "b": 3})
        if result.is_error or "The sum of 5 and 3 is 8" not in text:
            fail(f"add_numbers through call_tool answered: {text!r}")
    elif scenario == "elicitation-sep1034-client-defaults":
        name = await find(session, "elicitation defaults", "test_client_elicitation_defaults")
        result, text = await call(session, name, {})
        if not client.elicitations:
            fail(f"the downstream elicitation/create never reached the client; call answered: {text!r}")
        if result.is_error or not text.startswith("Elicitation completed"):
            fail(f"test_client_elicitation_defaults answered: {text!r}")
    elif scenario == "sse-retry":
        name = await find(session, "reconnection", "test_reconnection")
        result, text = await call(session, name, {})
        if result.is_error or "Reconnection test completed successfully" not in text:
            fail(f"test_reconnection answered: {text!r}")
    elif scenario.startswith("auth/"):
        # By name, not through search_tools: what these scenarios judge is the login and the
        # token on each request (and a search can run between a list entering the catalog
        # and the index: see ingest::Registry::apply).
        result, text = await call(session, f"{SERVER}__test-tool", {})
        if result.is_error or text != "test":
            fail(f"test-tool answered: {text!r}")
    else:
        fail(f"no client behaviour written for scenario {scenario!r}")


async def main(url):
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    binary = os.environ.get("MCP_DEFER_BIN", str(REPO / "target" / "debug" / "mcp-defer"))
    client = Client()
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory(prefix="mcp-defer-conformance-") as folder:
        os.environ["XDG_DATA_HOME"] = str(Path(folder) / "data")
        config = write_config(folder, url, context)
        if scenario.startswith("auth/"):
            login(binary, config)
        # The SDK passes a child only a few variables unless told: XDG_DATA_HOME must reach it.
        params = StdioServerParameters(
            command=binary, args=["serve", "--config", str(config)], env=dict(os.environ)
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(
                read,
                write,
                sampling_callback=client.sample,
                elicitation_callback=client.elicit,
                client_info=types.Implementation(name="mcp-defer-conformance", version="1.0.0"),
            ) as session:
                await session.initialize()
                with anyio.fail_after(28):
                    await run(scenario, session, client)
    print(json.dumps({"scenario": scenario, "ok": True,
                      "elicitations": len(client.elicitations), "samplings": len(client.samplings)}))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: client.py SERVER_URL (MCP_CONFORMANCE_SCENARIO names the scenario)", file=sys.stderr)
        sys.exit(2)
    try:
        anyio.run(main, sys.argv[-1])
    except* Failure:
        sys.exit(1)
