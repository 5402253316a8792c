#!/usr/bin/env python3
"""A real Claude Code and a real Codex session side by side through one hub (issue 29, "done when").

usage: KIT=<the real-client kit> benches/hub_clients.py        (from the project root)

KIT is the directory of the real-client kit (e2e.py, run_claude.sh, run_codex.sh, the mock models;
its setup-clients.sh installs the CLIs into PEERS). Both of its end-to-end runs start at once, each
with its own throwaway HOME and mock model, and each registers the same command as its MCP server:
`mcp-defer serve --config <one servers.toml>` (a wrapper ignores the per-run config e2e.py
writes, so the two sessions share a config and so a hub). Each run asserts search_tools ->
select_tools -> the tool used -> mcp-server-time's real result reaching the model. The servers
are lazy (`start = "lazy"`) and their tool cache is filled first (`mcp-defer check`), as a user's
first session leaves it, so only a used server starts. Meanwhile `ps` is
sampled every 100 ms: hubs, mcp-defer sessions, and the reference servers under them.

Prints each run's assertion lines, the largest process counts seen, the `ps` rows of the moment
with the most processes, and one verdict line. Exit 0 when both runs pass, one hub served both
sessions, and no server ran twice at once.

Env: KIT (required), PEERS (default ~/.cache/mcp-defer-peers), MCP_DEFER_BIN (default
     target/debug/mcp-defer), LOGROOT (default target/hub_clients; a directory per run inside),
     CLIENT_TIMEOUT (seconds per client session, default 180).
"""
import datetime
import json
import os
import shlex
import subprocess
import sys
import threading
import time

ROOT = os.getcwd()
KIT = os.environ.get("KIT")
PEERS = os.environ.get("PEERS") or os.path.expanduser("~/.cache/mcp-defer-peers")
BIN = os.path.abspath(os.environ.get("MCP_DEFER_BIN", "target/debug/mcp-defer"))


def node():
    base = os.path.join(PEERS, "node22", "node_modules")
    for d in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        n = os.path.join(base, d, "bin", "node")
        if d.startswith("node-linux-") and os.access(n, os.X_OK):
            return n
    return "node"


def processes():
    """pid -> (ppid, rss kB, argv) of every live process."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read().rsplit(")", 1)[1].split()
            if stat[0] in ("Z", "X"):
                continue
            rss = int(stat[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
            out[int(pid)] = (int(stat[1]), rss, argv)
        except (OSError, IndexError, ValueError):
            continue
    return out


def classify(procs, config):
    """The hubs of `config`, its stdio sessions, and the reference servers under the hubs."""
    hubs = [p for p, (_, _, a) in procs.items() if a[:1] == [BIN] and "--hub" in a and config in a]
    sessions = [p for p, (_, _, a) in procs.items() if a[:1] == [BIN] and "--hub" not in a and config in a]

    def under(pid, tops):
        seen = set()
        while pid in procs and pid not in seen:
            if pid in tops:
                return True
            seen.add(pid)
            pid = procs[pid][0]
        return False

    servers = {}
    for p, (_, _, a) in procs.items():
        line = " ".join(a)
        name = "time" if "mcp-server-time" in line else "everything" if "server-everything" in line else None
        if name and under(p, set(hubs) | set(sessions)):
            servers.setdefault(name, []).append(p)
    return hubs, sessions, servers


def main():
    if not KIT or not os.path.isfile(os.path.join(KIT, "e2e.py")):
        sys.exit("set KIT to the real-client kit's directory (the one with e2e.py)")
    if not os.access(BIN, os.X_OK):
        sys.exit(f"{BIN} missing: cargo build (or set MCP_DEFER_BIN)")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run = os.path.abspath(os.path.join(os.environ.get("LOGROOT", "target/hub_clients"), stamp))
    os.makedirs(run)
    config = os.path.join(run, "servers.toml")
    server_everything = os.path.join(PEERS, "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
    with open(config, "w") as f:
        f.write(f"""[mcp_servers.time]
command = {json.dumps(os.path.join(PEERS, "venv/bin/mcp-server-time"))}
args = ["--local-timezone", "UTC"]
start = "lazy"
startup_timeout_sec = 60

[mcp_servers.everything]
command = {json.dumps(node())}
args = [{json.dumps(server_everything)}, "stdio"]
start = "lazy"
startup_timeout_sec = 60
""")
    # Lazy servers (issue 29 item 4: servers no session uses stay stopped), their tool cache
    # filled first, as a user's first session leaves it: the sessions' searches answer from
    # it at once, and a server starts when it is used (on a loaded machine mcp-server-time
    # may take more than 10 s to start, after the model has searched).
    data, cache = os.path.join(run, "data"), os.path.join(run, "cache")
    warm = subprocess.run([BIN, "check", "--config", config],
                          env=dict(os.environ, MCP_DEFER_DATA_DIR=data, MCP_DEFER_CACHE_DIR=cache),
                          capture_output=True, text=True, timeout=180)
    print(f"info  tool cache filled by `mcp-defer check` (exit {warm.returncode})", flush=True)
    # The clients pass their servers different environments (Codex: HOME, PATH, TMPDIR and a
    # few more; each run its own HOME); the wrapper pins what this run needs, the same for
    # both: the hub directory, the data and cache directories (this run's own), the log level.
    wrapper = os.path.join(run, "mcp-defer-shared")
    with open(wrapper, "w") as f:
        f.write(f"""#!/bin/sh
# e2e.py appends `serve --config <its own config>`: both clients get this run's one config.
export XDG_RUNTIME_DIR={shlex.quote(os.path.join(run, "runtime"))}
export MCP_DEFER_DATA_DIR={shlex.quote(data)} MCP_DEFER_CACHE_DIR={shlex.quote(cache)}
export RUST_LOG=mcp_defer=info
exec {shlex.quote(BIN)} serve --config {shlex.quote(config)} 2>>{shlex.quote(os.path.join(run, "sessions.log"))}
""")
    os.chmod(wrapper, 0o755)
    os.makedirs(os.path.join(run, "runtime"), mode=0o700)

    runs = {}
    for client in ("claude", "codex"):
        env = dict(os.environ, MCP_DEFER_CMD=wrapper, BAR_LOGDIR=os.path.join(run, client), PEERS=PEERS,
                   CLIENT_TIMEOUT=os.environ.get("CLIENT_TIMEOUT", "180"))
        env.pop("MCP_DEFER_HUB", None)  # the default (on), as a user has it
        out = open(os.path.join(run, f"{client}.out"), "w")
        runs[client] = (subprocess.Popen([sys.executable, os.path.join(KIT, "e2e.py"), client], env=env,
                                         stdout=out, stderr=subprocess.STDOUT), out)
    print(f"info  logs: {run}", flush=True)

    peak = {"hubs": 0, "sessions": 0, "time": 0, "everything": 0}
    busiest = (0, [], {})
    both_at_once = False
    hub_pids = set()
    done = threading.Event()

    def sample():
        nonlocal busiest, both_at_once
        while not done.is_set():
            procs = processes()
            hubs, sessions, servers = classify(procs, config)
            hub_pids.update(hubs)
            both_at_once |= len(sessions) >= 2
            for key, n in [("hubs", len(hubs)), ("sessions", len(sessions))] + \
                    [(k, len(v)) for k, v in servers.items()]:
                peak[key] = max(peak[key], n)
            total = len(hubs) + len(sessions) + sum(len(v) for v in servers.values())
            if total > busiest[0]:
                shown = set(hubs) | set(sessions) | {p for v in servers.values() for p in v}
                busiest = (total, [(p, procs[p]) for p in sorted(shown)], {k: len(v) for k, v in servers.items()})
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    codes = {}
    for client, (proc, out) in runs.items():
        codes[client] = proc.wait()
        out.close()
    done.set()
    sampler.join()

    for client in runs:
        print(f"--- {client} (e2e.py through the hub)")
        with open(os.path.join(run, f"{client}.out")) as f:
            print(f.read().rstrip())
    print("--- ps at the busiest moment (pid ppid rss_kB command)")
    for pid, (ppid, rss, argv) in busiest[1]:
        print(f"{pid:>7} {ppid:>7} {rss:>8}  {' '.join(argv)[:150]}")
    print(f"--- peak at once: hubs {peak['hubs']}, mcp-defer sessions {peak['sessions']} "
          f"(both clients connected at once: {'yes' if both_at_once else 'no'}), "
          f"mcp-server-time {peak['time']}, server-everything {peak['everything']}; "
          f"hub processes over the run: {len(hub_pids)}")
    ok = (all(c == 0 for c in codes.values()) and peak["hubs"] == 1 and len(hub_pids) == 1 and both_at_once
          and peak["time"] == 1 and peak["everything"] <= 1)
    print(f"hub clients: {'PASS' if ok else 'FAIL'} (claude exit {codes['claude']}, codex exit {codes['codex']})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
