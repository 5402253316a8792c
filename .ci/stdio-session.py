#!/usr/bin/env python3
"""A real MCP stdio session through an installed mcp-defer: `initialize`, then `tools/list`.

    .ci/stdio-session.py <command...>

Runs the command, speaks newline-delimited JSON-RPC on its stdin/stdout as a client does,
and exits non-zero (saying why) unless the handshake answers and the list carries the meta
tools. Bounded: every answer must come within 30 s. With STDIO_SESSION_TRANSCRIPT=1 each
message sent (>) and received (<) is printed to stderr, cut at 400 characters. With
STDIO_SESSION_CALL='<JSON>' it then sends `call_tool` with those arguments (e.g.
'{"name": "fx__add", "arguments": {"a": 2, "b": 3}}': a downstream server is spawned and
answers) and fails unless the result is a success.
"""

import json
import os
import selectors
import subprocess
import sys
import time

TIMEOUT_S = 30
TRANSCRIPT = os.environ.get("STDIO_SESSION_TRANSCRIPT") == "1"


def show(direction, text):
    if TRANSCRIPT:
        text = text.strip()
        cut = text if len(text) <= 400 else text[:400] + f"... ({len(text)} chars)"
        print(f"{direction} {cut}", file=sys.stderr, flush=True)


def main():
    command = sys.argv[1:]
    if not command:
        sys.exit("usage: stdio-session.py <command...>")
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = b""

    def send(message):
        show(">", json.dumps(message))
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def answer(id_):
        nonlocal buf
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                show("<", line.decode(errors="replace"))
                message = json.loads(line)
                if message.get("id") == id_ and "method" not in message:
                    return message
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                sys.exit(f"no answer to request {id_} within {TIMEOUT_S} s")
            chunk = proc.stdout.read1(65536)
            if not chunk:
                sys.exit(f"mcp-defer closed stdout before answering request {id_}")
            buf += chunk

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "stdio-session", "version": "1"},
                },
            }
        )
        init = answer(1)
        server = init.get("result", {}).get("serverInfo", {})
        if "result" not in init:
            sys.exit(f"initialize failed: {init}")
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        listed = answer(2)
        names = [t["name"] for t in listed.get("result", {}).get("tools", [])]
        for meta in ("search_tools", "select_tools", "call_tool"):
            if meta not in names:
                sys.exit(f"tools/list lacks {meta}: {names}")
        print(
            f"stdio session: initialize -> {server.get('name')} {server.get('version')}, "
            f"tools/list -> {len(names)} tools ({', '.join(names)})"
        )
        call = os.environ.get("STDIO_SESSION_CALL")
        if call:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "call_tool", "arguments": json.loads(call)},
                }
            )
            result = answer(3).get("result", {})
            texts = [c.get("text", "") for c in result.get("content", [])]
            if not result or result.get("isError"):
                sys.exit(f"call_tool {call} failed: {result}")
            print(f"stdio session: call_tool {call} -> {' '.join(texts)}")
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            sys.exit("mcp-defer did not exit after stdin closed")
    if proc.returncode != 0:
        sys.exit(f"mcp-defer exited with {proc.returncode} after the session")


if __name__ == "__main__":
    main()
