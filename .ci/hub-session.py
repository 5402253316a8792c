#!/usr/bin/env python3
"""Two real MCP stdio sessions of one config through one hub (issue 29), then one alone.

    .ci/hub-session.py <hub dir> <command...>

<command> is `mcp-defer serve --config <config>` (under `wine` on Linux); the config must
set `hub_grace_sec = 0` so the hub leaves with its last session. Session A starts the hub;
session B starts while A is open and must join it (no second hub log, no "starting the
hub" in its stderr, no fallback to its own servers). Each does initialize, tools/list and,
with HUB_SESSION_CALL='<JSON>', a call_tool that the hub's shared server answers. Then the
hub must leave (its marker file at the socket path goes) within 30 s, and one session
with the hub off (MCP_DEFER_HUB=off) gives the time to compare with. Prints each session's
time from spawn to the tools/list answer; exits non-zero saying why on any failure.
Every answer must come within 30 s.
"""

import glob
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 30


class Session:
    def __init__(self, name, command, hub):
        self.name = name
        self.stderr = tempfile.TemporaryFile()
        env = dict(os.environ, MCP_DEFER_HUB=hub, RUST_LOG="debug,rmcp=warn")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
        )
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = b""
        self.next_id = 1

    def fail(self, why):
        sys.exit(f"session {self.name}: {why}\nits stderr:\n{self.log()}")

    def log(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        id_ = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == id_ and "method" not in message:
                    if "result" not in message:
                        self.fail(f"{method} failed: {message}")
                    return message["result"]
            left = deadline - time.monotonic()
            if left <= 0 or not self.sel.select(left):
                self.fail(f"no answer to {method} within {TIMEOUT_S} s")
            chunk = self.proc.stdout.read1(65536)
            if not chunk:
                self.fail(f"closed stdout before answering {method}")
            self.buf += chunk

    def open(self):
        """initialize and tools/list; returns the milliseconds from spawn to the list."""
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": f"hub-session-{self.name}", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = self.request("tools/list", {}).get("tools", [])
        listed_ms = (time.monotonic() - self.started) * 1000
        names = [t["name"] for t in tools]
        if "call_tool" not in names:
            self.fail(f"tools/list lacks call_tool: {names}")
        call = os.environ.get("HUB_SESSION_CALL")
        if call:
            result = self.request(
                "tools/call", {"name": "call_tool", "arguments": json.loads(call)}
            )
            if result.get("isError"):
                self.fail(f"call_tool {call} failed: {result}")
        return listed_ms

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.fail("did not exit after stdin closed")
        if self.proc.returncode != 0:
            self.fail(f"exited with {self.proc.returncode}")


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: hub-session.py <hub dir> <command...>")
    hub_dir, command = sys.argv[1], sys.argv[2:]
    logs = lambda: glob.glob(os.path.join(hub_dir, "*.log"))
    markers = lambda: glob.glob(os.path.join(hub_dir, "*.sock"))
    for old in logs():
        os.remove(old)

    a = Session("A", command, "on")
    a_ms = a.open()
    b = Session("B", command, "on")
    b_ms = b.open()
    b.close()
    a.close()
    for s in (a, b):
        if "runs its own servers" in s.log():
            s.fail("ran its own servers instead of the hub's")
    if "starting the hub" not in a.log():
        a.fail("did not start the hub")
    if "starting the hub" in b.log() or "joined the hub" not in b.log():
        b.fail("did not join A's hub")
    if len(logs()) != 1:
        sys.exit(f"expected one hub's log in {hub_dir}, found {logs()}")
    deadline = time.monotonic() + TIMEOUT_S
    while markers():
        if time.monotonic() > deadline:
            sys.exit(
                f"the hub did not leave within {TIMEOUT_S} s of its last session: "
                f"{markers()}\nits log:\n{open(logs()[0]).read()}"
            )
        time.sleep(0.05)

    alone = Session("alone", command, "off")
    alone_ms = alone.open()
    alone.close()
    print(
        f"hub session: A started the hub, first tools/list {a_ms:.0f} ms; "
        f"B joined it, first tools/list {b_ms:.0f} ms; the hub left after both; "
        f"a session alone (hub off): {alone_ms:.0f} ms"
    )


if __name__ == "__main__":
    main()
