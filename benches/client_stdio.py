#!/usr/bin/env python3
"""What a call costs mcp-defer when its client starts it on pipes or on socket pairs (issue 31).

usage: benches/client_stdio.py [--calls N] [--runs R] [--hub] [--era 2025|2026] [BIN ...]   (Linux; from the project root)

Node's `child_process` (so Claude Code, Copilot CLI and the TypeScript SDK) starts its children
on Unix socket pairs, Python's and Rust's on pipes. For each build named (default
target/release/mcp-defer), this starts `mcp-defer serve` (no hub) over one fixture server once
on pipes and once on socket pairs, alternating, R runs each, and makes N sequential calls of
the fixture's `add` (called by name after `select_tools`), each with a progress token as Claude
Code sends; `--era 2026` speaks 2026-07-28 as Claude Code does (no handshake, the envelope in
every request's `_meta`). It prints, per run, the p50 round trip, mcp-defer's CPU a call (the
scheduler's nanoseconds on a CPU, every thread, from /proc/<pid>/task/*/schedstat), its
context switches a call (voluntary + involuntary, every thread, from
/proc/<pid>/task/*/status), and its thread count. The fixture server's own CPU is not counted.
With `--hub` the session joins a hub (its own runtime directory), and the figures are the
relay's and the hub's together (the CPU column also gives each: relay / hub). A bench, not a
test: figures go to docs/benchmarks.md.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")


def fixture(first_bin):
    """The fixture server built beside the first build named, else under target/."""
    for folder in (os.path.dirname(first_bin),
                   *(os.path.join(ROOT, "target", p) for p in ("release", "debug"))):
        path = os.path.join(folder, "mcp-defer-fixture")
        if os.path.exists(path):
            return path
    sys.exit("client_stdio: no mcp-defer-fixture beside the build nor under target/; "
             "run `cargo build --release` first")


def builds(named):
    """The builds named on the command line, else target/release/mcp-defer."""
    return named or [os.path.join(ROOT, "target", "release", "mcp-defer")]


def servers_toml(folder, first_bin, settings):
    """A config in `folder` with `settings` and one fixture server, `s1`; its path."""
    config = os.path.join(folder, "servers.toml")
    with open(config, "w") as f:
        f.write(f'[settings]\n{settings}\n[mcp_servers.s1]\n'
                f'command = {json.dumps(fixture(first_bin))}\n')
    return config


def cpu_seconds(pid):
    """Time on a CPU, from the scheduler's per-thread nanoseconds (`schedstat`): exact for
    a process that runs microseconds at a time, where utime + stime are sampled clock ticks.
    Live threads only; ticks where the kernel keeps no schedstat."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (FileNotFoundError, ProcessLookupError):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK


def switches(pid):
    total, threads = 0, 0
    for task in os.listdir(f"/proc/{pid}/task"):
        threads += 1
        with open(f"/proc/{pid}/task/{task}/status") as f:
            for line in f:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
    return total, threads


def hub_of(config):
    """The pid of the hub serving `config` (its command line has `--hub` and the path)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read().decode(errors="replace")
        except OSError:
            continue
        if "--hub" in line and config in line:
            return int(pid)
    sys.exit("client_stdio: no hub found for the session")


# The 2026-07-28 envelope Claude Code puts in every request's `_meta` (tests/support/raw.rs).
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
    "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True},
                                                   "elicitation": {"form": {}, "url": {}}},
}


def run(binary, config, calls, sockets, hub, era):
    env = dict(os.environ, MCP_DEFER_HUB="on" if hub else "off", RUST_LOG="warn",
               XDG_RUNTIME_DIR=os.path.join(os.path.dirname(config), "run"))
    if sockets:
        ours_in, theirs_in = socket.socketpair()
        ours_out, theirs_out = socket.socketpair()
        child = subprocess.Popen([binary, "serve", "--config", config], stdin=theirs_in,
                                 stdout=theirs_out, stderr=subprocess.DEVNULL, env=env)
        theirs_in.close()
        theirs_out.close()
        writer = ours_in.makefile("wb", buffering=0)
        reader = ours_out.makefile("rb")
    else:
        child = subprocess.Popen([binary, "serve", "--config", config], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        writer, reader = child.stdin, child.stdout

    def ask(id_, method, params):
        writer.write(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method,
                                 "params": params}).encode() + b"\n")
        writer.flush()
        while True:
            message = json.loads(reader.readline())
            if message.get("id") == id_:
                return message

    def call(id_, i):
        # A progress token on every call, as Claude Code sends.
        meta = {"progressToken": id_, **(ENVELOPE if era == "2026" else {})}
        return ask(id_, "tools/call", {"name": "s1__add", "arguments": {"a": i, "b": 1},
                                       "_meta": meta})

    if era == "2026":
        ask(2, "tools/list", {"_meta": ENVELOPE})
    else:
        ask(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "client_stdio", "version": "1"}})
        writer.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        writer.flush()
        # `select_tools` answers once the client has listed again (the handshake era's way).
        writer.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "select_tools", "arguments": {"names": ["s1__add"]}}}).encode() + b"\n")
        ask(2, "tools/list", {})
    for i in range(200):  # warm up
        call(3 + i, i)
    pids = [child.pid] + ([hub_of(config)] if hub else [])
    each0 = [cpu_seconds(p) for p in pids]
    cpu0 = sum(each0)
    sw0 = sum(switches(p)[0] for p in pids)
    times = []
    for i in range(calls):
        start = time.perf_counter()
        answer = call(1000 + i, i)
        times.append(time.perf_counter() - start)
        assert answer["result"]["structuredContent"]["sum"] == i + 1, answer
    each = [cpu_seconds(p) for p in pids]
    cpu = sum(each) - cpu0
    sw1 = sum(switches(p)[0] for p in pids)
    threads = sum(switches(p)[1] for p in pids)
    writer.close()
    if sockets:
        ours_in.close()  # the file above was a second handle on it
    child.wait(timeout=30)
    shares = " / ".join(f"{(b - a) / calls * 1e6:.0f}" for a, b in zip(each0, each))
    return statistics.median(times) * 1e6, cpu / calls * 1e6, (sw1 - sw0) / calls, threads, shares


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hub", action="store_true")
    parser.add_argument("--era", choices=("2025", "2026"), default="2025",
                        help="the handshake era (2025-06-18), or 2026-07-28 as Claude Code "
                             "speaks it (no handshake, the envelope in every request)")
    parser.add_argument("bins", nargs="*")
    args = parser.parse_args()
    bins = builds(args.bins)
    with tempfile.TemporaryDirectory() as tmp:
        config = servers_toml(tmp, bins[0], "hub_grace_sec = 0")
        os.makedirs(os.path.join(tmp, "run"), mode=0o700)
        print(f"load average {os.getloadavg()[0]:.1f}; {args.calls} calls a run"
              + ("; through the hub (relay + hub)" if args.hub else "")
              + f"; era {args.era}")
        print("| build | stdio | p50 round trip | mcp-defer CPU a call | context switches a call | threads |")
        print("|---|---|---:|---:|---:|---:|")
        for _ in range(args.runs):
            for binary in bins:
                for sockets in (False, True):
                    p50, cpu, sw, threads, shares = run(binary, config, args.calls, sockets,
                                                        args.hub, args.era)
                    cpu = f"{cpu:.0f} us" + (f" ({shares})" if args.hub else "")
                    print(f"| {binary} | {'socket pair' if sockets else 'pipes'} | {p50:.0f} us "
                          f"| {cpu} | {sw:.2f} | {threads} |", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
