#!/usr/bin/env python3
"""Capture the real `tools/list` of the reference MCP servers into servers.json.

Speaks raw JSON-RPC over stdio (initialize, notifications/initialized, tools/list with
pagination) so it needs nothing but Python 3. Run from the repository root:

    python3 benches/data/reference/capture.py [PEERS_DIR]

PEERS_DIR defaults to `.peers` (node servers under node/node_modules/.bin, Python ones under
py/bin). Output: benches/data/reference/servers.json in the MetaTool data set format
(`server`, `description`, `tools` with full `inputSchema`); `description` is a one-line config
description followed by the server's handshake `instructions`, as the index receives it.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".peers")
NODE = os.path.join(PEERS, "node", "node_modules", ".bin")
PY = os.path.join(PEERS, "py", "bin")

# name, one-line description as a user would write it in servers.toml, command
SANDBOX = tempfile.mkdtemp(prefix="mcp-capture-")
SERVERS = [
    ("everything", "MCP reference test server exercising every protocol feature",
     [os.path.join(NODE, "mcp-server-everything")]),
    ("filesystem", "Files and directories on this machine",
     [os.path.join(NODE, "mcp-server-filesystem"), SANDBOX]),
    ("memory", "Knowledge graph memory that persists across conversations",
     [os.path.join(NODE, "mcp-server-memory")]),
    ("time", "Current time and time zone conversion",
     [os.path.join(PY, "mcp-server-time"), "--local-timezone", "UTC"]),
    ("git", "Git repository operations",
     [os.path.join(PY, "mcp-server-git")]),
]


def rpc(proc, msg_id, method, params=None):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    if msg_id is not None:
        msg["id"] = msg_id
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()
    if msg_id is None:
        return None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{method}: server closed stdout")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            continue
        if reply.get("id") == msg_id:
            if "error" in reply:
                raise RuntimeError(f"{method}: {reply['error']}")
            return reply["result"]


def capture(name, description, command):
    env = dict(os.environ, MEMORY_FILE_PATH=os.path.join(SANDBOX, "memory.json"))
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env, cwd=SANDBOX)
    try:
        init = rpc(proc, 1, "initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp-defer-capture", "version": "0"},
        })
        rpc(proc, None, "notifications/initialized")
        tools, cursor, n = [], None, 2
        while True:
            result = rpc(proc, n, "tools/list", {"cursor": cursor} if cursor else {})
            tools.extend(result.get("tools", []))
            cursor = result.get("nextCursor")
            n += 1
            if not cursor:
                break
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=10)
    text = description
    if init.get("instructions"):
        text += "\n" + init["instructions"].strip()
    info = init.get("serverInfo", {})
    print(f"{name}: {info.get('name')} {info.get('version')}, {len(tools)} tools", file=sys.stderr)
    return {"server": name, "description": text, "tools": tools}


def main():
    out = [capture(*s) for s in SERVERS]
    path = os.path.join(HERE, "servers.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
