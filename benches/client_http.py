#!/usr/bin/env python3
"""What a call costs `mcp-defer serve --http` for a client that keeps its connection (issue 31).

usage: benches/client_http.py [--calls N] [--runs R] [BIN ...]   (Linux; from the project root)

The rmcp client of `cargo bench --bench e2e -- pipe-http` opens a connection per call; the
TypeScript SDK's `fetch` keeps one. For each build named (default target/release/mcp-defer),
this starts `mcp-defer serve --http` over one fixture server and makes N sequential calls of
the fixture's `add` on one kept-alive connection, in each era, alternating, R runs each: a
handshake-era session (`initialize`, then calls with its `Mcp-Session-Id`), and 2026-07-28
requests (no session, the envelope in each request's `_meta` and the version header). It
prints, per run, the p50 round trip, mcp-defer's CPU a call (the scheduler's nanoseconds on
a CPU, every thread, from /proc/<pid>/task/*/schedstat), how many connections the calls
took, and how the answers came (JSON or SSE). The fixture server's own CPU is not counted.
A bench, not a test: figures go to docs/benchmarks.md.
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client_stdio import ENVELOPE, builds, cpu_seconds, servers_toml  # noqa: E402



class Client:
    """One kept-alive connection; counts the connections it had to open."""

    def __init__(self, host, port, path):
        self.host, self.port, self.path = host, port, path
        self.conn = None
        self.opened = 0
        self.kinds = {}
        self.headers = {}

    def post(self, body, extra=None):
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port)
            self.opened += 1
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream", **self.headers,
                   **(extra or {})}
        self.conn.request("POST", self.path, json.dumps(body), headers)
        response = self.conn.getresponse()
        data = response.read()
        kind = (response.getheader("Content-Type") or "").split(";")[0]
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if response.getheader("Connection", "").lower() == "close" or response.will_close:
            self.conn.close()
            self.conn = None
        session = response.getheader("Mcp-Session-Id")
        messages = []
        for line in data.decode().splitlines() if kind == "text/event-stream" else [data]:
            line = line[len("data: "):] if isinstance(line, str) and line.startswith("data: ") \
                else line
            try:
                messages.append(json.loads(line))
            except (ValueError, TypeError):
                pass
        return session, messages


def run(binary, config, calls, era):
    server = subprocess.Popen([binary, "serve", "--http", "127.0.0.1:0", "--config", config],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, RUST_LOG="info,rmcp=warn", MCP_DEFER_HUB="off"))
    url = None
    for line in server.stderr:
        found = re.search(r"url=http://([\d.]+):(\d+)(/\S*)", line)
        if found:
            url = found.groups()
            break
    if url is None:
        sys.exit(f"client_http: {binary} did not say where it serves")
    # Its log is read to the end, or a full pipe would stop it.
    threading.Thread(target=server.stderr.read, daemon=True).start()
    client = Client(url[0], int(url[1]), url[2])
    if era == "2026":
        client.headers = {"MCP-Protocol-Version": "2026-07-28"}
    else:
        session, _ = client.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "client_http", "version": "1"}}})
        client.headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
        client.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(id_, i):
        meta = ENVELOPE if era == "2026" else {}
        # 2026-07-28's standard headers repeat the method and the tool's name.
        extra = {"Mcp-Method": "tools/call", "Mcp-Name": "s1__add"} if era == "2026" else {}
        _, messages = client.post({"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                                   "params": {"name": "s1__add", "arguments": {"a": i, "b": 1},
                                              "_meta": meta}}, extra)
        answer = next(m for m in messages if m.get("id") == id_)
        assert answer.get("result", {}).get("structuredContent", {}).get("sum") == i + 1, answer

    time.sleep(1)  # the server's tools listed
    for i in range(200):  # warm up
        call(10 + i, i)
    client.opened, client.kinds = 0, {}
    cpu0 = cpu_seconds(server.pid)
    times = []
    for i in range(calls):
        start = time.perf_counter()
        call(1000 + i, i)
        times.append(time.perf_counter() - start)
    cpu = cpu_seconds(server.pid) - cpu0
    server.terminate()
    server.wait(timeout=30)
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(client.kinds.items()))
    return statistics.median(times) * 1e6, cpu / calls * 1e6, client.opened, kinds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("bins", nargs="*")
    args = parser.parse_args()
    bins = builds(args.bins)
    with tempfile.TemporaryDirectory() as tmp:
        config = servers_toml(tmp, bins[0], 'client_era = "any"')
        print(f"load average {os.getloadavg()[0]:.1f}; {args.calls} calls a run, one kept-alive "
              "connection")
        print("| build | era | p50 round trip | mcp-defer CPU a call | connections | answers |")
        print("|---|---|---:|---:|---:|---|")
        for _ in range(args.runs):
            for binary in bins:
                for era in ("2025", "2026"):
                    p50, cpu, opened, kinds = run(binary, config, args.calls, era)
                    print(f"| {binary} | {era} | {p50:.0f} us | {cpu:.0f} us | {opened} "
                          f"| {kinds} |", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
