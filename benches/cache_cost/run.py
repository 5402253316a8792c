#!/usr/bin/env python3
"""The cache-cost bench: one scripted task through the real Claude Code and Codex CLIs, in three setups, with a
mock model that bills each request as a prefix-caching provider would (cache_model.py).

usage: benches/cache_cost/run.py [claude|codex ...]     (from the project root; both clients by default)

Setups (same four MCP servers each time: mcp-server-time, server-everything, server-filesystem, server-memory):
  direct    the servers registered in the client itself (its native handling: Claude Code's tool search defers
            every MCP tool; Codex with a recent model defers them behind its tool_search)
  all       mcp-defer with exposure = "all" (every tool listed; Claude Code entry with "alwaysLoad": true)
  deferred  mcp-defer with the default exposure (meta tools; search_tools -> select_tools -> the tool)
  adopted   (SETUPS=adopted; not by default) the servers written into the client's own user config, as a user has
            them, then `mcp-defer adopt <client>`: the session runs on what adopt wrote (mcp-defer registered
            there, the originals off, servers.toml in the throwaway HOME), so it is adopt's end-to-end check
The task (the mock's "bench" scenario): activate and call two tools in turn, everything's get-sum and memory's
read_graph, then answer. In the mcp-defer setups the mock goes search_tools -> select_tools -> the loaded tool
(call_tool where the client never re-lists); in the others it calls the tool, loading it first through the
client's own tool search where it is deferred.

Per client and setup it prints every main-loop request (prompt tokens, tool-schema tokens, cache read / written,
uncached input, what the model did) and a side-by-side summary: requests, tool-schema tokens per request, cache
read / written, uncached input, tokens re-billed after each activation and the session total, and the input
cost in uncached-token equivalents (Anthropic: input + 1.25 x write + 0.1 x read; OpenAI: uncached + 0.1 x
cached). It then runs `mcp-defer report` on the transcripts the real CLIs wrote and checks that it reads the
same totals. Logs, configs and transcripts stay in $LOGROOT (default target/cache_cost).

Env: PEERS (default ~/.cache/mcp-defer-peers, filled by shared/clients/setup-clients.sh)
     MCP_DEFER_BIN (default target/release/mcp-defer; build it once with `cargo build --release`)
     MOCK_PYTHON (a python3 with `tiktoken`; default python3; without tiktoken the counts are bytes/4)
     CLIENT_TIMEOUT (seconds per client session, default 240)
Loopback only: the mock listens on 127.0.0.1, every proxy variable points at a dead port, HOME is a throwaway.
"""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

H = os.path.dirname(os.path.abspath(__file__))
ROOT = os.getcwd()
PEERS = os.environ.get("PEERS") or os.path.expanduser("~/.cache/mcp-defer-peers")
BIN = os.path.abspath(os.environ.get("MCP_DEFER_BIN") or os.path.join(ROOT, "target/release/mcp-defer"))
PY = os.environ.get("MOCK_PYTHON") or sys.executable
LOGROOT = os.path.abspath(os.environ.get("LOGROOT") or os.path.join(ROOT, "target/cache_cost"))
TIMEOUT = float(os.environ.get("CLIENT_TIMEOUT", "240"))
SETUPS = os.environ.get("SETUPS", "direct,all,deferred").split(",")
# Claude Code only, with its tool search off (ENABLE_TOOL_SEARCH=false): every MCP tool is sent in full and sorted by
# name, so a tool that appears later is inserted, not appended.
CLAUDE_EXTRA = os.environ.get("CLAUDE_SETUPS", "direct-nosearch,deferred-nosearch").split(",")
# [tool name suffix, arguments, what the model searches for]
ACTIVATIONS = [["get-sum", {"a": 2, "b": 3}, "sum of two numbers"], ["read_graph", {}, "read the knowledge graph"]]
# A cache loss below this is not a re-write (as in `mcp-defer report`): OpenAI caches in 128-token steps, so the last
# <128 tokens of a prompt are uncached next time without anything being re-billed.
MIN_REWRITE = 1024
FIRST_DELAY_S = "8"
# Two user turns: a greeting (answered at once; the MCP servers come up meanwhile, and Codex builds its deferred
# tool set per turn) and the task.
PROMPTS = ["hello", "do the task"]
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
NO_NET = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9",
          "NO_PROXY": "127.0.0.1,localhost"}


def servers():
    node = shutil.which("node")
    npm = os.path.join(PEERS, "npm/node_modules/@modelcontextprotocol")
    work = os.path.join(LOGROOT, "files")
    os.makedirs(work, exist_ok=True)
    return {
        "time": (os.path.join(PEERS, "venv/bin/mcp-server-time"), ["--local-timezone", "UTC"]),
        "everything": (node, [os.path.join(npm, "server-everything/dist/index.js"), "stdio"]),
        "filesystem": (node, [os.path.join(npm, "server-filesystem/dist/index.js"), work]),
        "memory": (node, [os.path.join(npm, "server-memory/dist/index.js")]),
    }


def tiktoken_cache():
    """TIKTOKEN_CACHE_DIR holding the o200k_base table that the tiktoken-rs crate ships (no download)."""
    found = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tiktoken-rs-*/assets/o200k_base.tiktoken")))
    if not found:
        return None
    d = os.path.join(LOGROOT, "tiktoken")
    os.makedirs(d, exist_ok=True)
    dst = os.path.join(d, hashlib.sha1(O200K_URL.encode()).hexdigest())
    if not os.path.exists(dst):
        shutil.copy(found[-1], dst)
    return d


def write_defer_config(path, exposure):
    """The default settings but `exposure`. (With a long core_wait_ms in "all", so that the first list holds every
    tool, Codex dropped the whole server in our runs: it does not wait seconds for a tools/list.)"""
    q = json.dumps
    with open(path, "w") as f:
        f.write(f"[settings]\nexposure = {q(exposure)}\n\n")
        for name, (cmd, args) in servers().items():
            f.write(f"[mcp_servers.{name}]\ncommand = {q(cmd)}\nargs = {q(args)}\nstartup_timeout_sec = 60\n\n")


def adopt(kind, home, out):
    """`mcp-defer adopt <kind>` on the throwaway HOME (its servers.toml lands there too); exits if it fails."""
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
               XDG_DATA_HOME=os.path.join(home, ".local/share"), CODEX_HOME=home)  # run_codex: HOME is CODEX_HOME
    env.pop("MCP_DEFER_CONFIG", None)
    res = subprocess.run([BIN, "adopt", kind], env=env, cwd=out, capture_output=True, text=True)
    with open(os.path.join(out, "adopt.out"), "w") as f:
        f.write(res.stdout + res.stderr)
    if res.returncode != 0:
        sys.exit(f"mcp-defer adopt {kind} failed (exit {res.returncode}): see {out}/adopt.out")
    return env


def start_mock(kind, out, setup):
    env = dict(os.environ, MOCK_SCENARIO="bench", MOCK_BENCH_TOOLS=json.dumps(ACTIVATIONS),
               MOCK_BENCH_PATH="meta" if setup.startswith(("deferred", "adopted")) else "native",
               MOCK_FIRST_DELAY_S=FIRST_DELAY_S, **NO_NET)
    tk = tiktoken_cache()
    if tk:
        env["TIKTOKEN_CACHE_DIR"] = tk
    script = os.path.join(H, "mock_anthropic.py" if kind == "claude" else "mock_openai.py")
    proc = subprocess.Popen([PY, script, "0", out], env=env, stdout=open(os.path.join(out, "mock.out"), "w"),
                            stderr=subprocess.STDOUT)
    for _ in range(600):  # the tokenizer loads first: up to a minute on a loaded machine
        if os.path.exists(os.path.join(out, "port")):
            return proc, int(open(os.path.join(out, "port")).read())
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    sys.exit(f"the mock did not start: see {out}/mock.out")


def run_claude(out, setup, port):
    nosearch = setup.endswith("-nosearch")
    setup = setup.removesuffix("-nosearch")
    home = os.path.join(out, "home")
    os.makedirs(home, exist_ok=True)
    config = ["--mcp-config", os.path.join(out, "mcp.json"), "--strict-mcp-config"]
    env = dict(os.environ)
    if setup == "direct":
        entries = {n: {"type": "stdio", "command": c, "args": a} for n, (c, a) in servers().items()}
        allowed = ",".join(f"mcp__{n}__*" for n in entries)
    elif setup == "adopted":
        # User scope, as `claude mcp add -s user` writes it; the session reads ~/.claude.json as adopt left it.
        user = {n: {"type": "stdio", "command": c, "args": a, "env": {}} for n, (c, a) in servers().items()}
        with open(os.path.join(home, ".claude.json"), "w") as f:
            json.dump({"mcpServers": user}, f, indent=1)
        env = adopt("claude", home, out)
        entries, config = {}, []
        allowed = "mcp__mcp-defer__*"
    else:
        toml = os.path.join(out, "servers.toml")
        write_defer_config(toml, setup)
        entries = {"defer": {"type": "stdio", "command": BIN, "args": ["serve", "--config", toml],
                             "alwaysLoad": True}}
        allowed = "mcp__defer__*"
    with open(os.path.join(out, "mcp.json"), "w") as f:
        json.dump({"mcpServers": entries}, f, indent=1)
    env = dict(env, HOME=home, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY="dummy",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
               DISABLE_ERROR_REPORTING="1", IS_SANDBOX="1", MCP_TIMEOUT="60000", **NO_NET)
    if nosearch:
        env["ENABLE_TOOL_SEARCH"] = "false"
    env.pop("CLAUDE_CONFIG_DIR", None)
    claude = os.path.join(PEERS, "clients/node_modules/.bin/claude")
    cmd = [PY, os.path.join(H, "drive_multi.py"), os.path.join(out, "claude.stream.jsonl"), *PROMPTS, "--",
           claude, "-p", *config, "--allowedTools", allowed, "--permission-mode", "bypassPermissions"]
    return run_client(cmd, env, out), os.path.join(home, ".claude/projects")


def run_codex(out, setup, port):
    home = os.path.join(out, "codex_home")
    work = os.path.join(out, "work")
    os.makedirs(home, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    q = json.dumps
    toml = f'''model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "MOCK_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
'''
    env = dict(os.environ)
    if setup in ("direct", "adopted"):
        for name, (cmd, args) in servers().items():
            toml += f"\n[mcp_servers.{name}]\ncommand = {q(cmd)}\nargs = {q(args)}\nstartup_timeout_sec = 60\n"
    else:
        conf = os.path.join(out, "servers.toml")
        write_defer_config(conf, setup)
        toml += f"\n[mcp_servers.defer]\ncommand = {q(BIN)}\nargs = {q(['serve', '--config', conf])}\n" \
                "startup_timeout_sec = 60\n"
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(toml)
    if setup == "adopted":
        env = adopt("codex", home, out)
    env = dict(env, CODEX_HOME=home, HOME=home, MOCK_OPENAI_KEY="dummy", OPENAI_API_KEY="dummy",
               OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", **NO_NET)
    codex = os.path.join(PEERS, "clients/node_modules/.bin/codex")
    cmd = [PY, os.path.join(H, "drive_codex_appserver.py"), os.path.join(out, "appserver.jsonl"), *PROMPTS, "--",
           codex]
    return run_client(cmd, env, out, cwd=work), os.path.join(home, "sessions")


def run_client(cmd, env, out, cwd=None):
    with open(os.path.join(out, "client.stdout"), "w") as so, open(os.path.join(out, "client.stderr"), "w") as se:
        try:
            return subprocess.run(cmd, env=env, stdout=so, stderr=se, cwd=cwd or out, timeout=TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            return "timeout"


def load(out):
    p = os.path.join(out, "cache.jsonl")
    return [json.loads(line) for line in open(p)] if os.path.exists(p) else []


def analyse(kind, reqs):
    """Per request re-billed tokens (as `mcp-defer report` defines them) and the activation requests."""
    rows, prev_cached = [], None
    for r in reqs:
        lost = max(0, prev_cached - r["cache_read"]) if prev_cached is not None else 0
        prev_cached = r["cache_read"] + r["cache_write"] if kind == "claude" else r["prompt"]
        rows.append(dict(r, rebilled=lost if lost >= MIN_REWRITE else 0))
    # An activation: the model's select_tools call, or its search of the client's own tool search for a task tool
    # (Claude Code ToolSearch, Codex tool_search). What it costs is what the next request re-bills.
    queries = [a[2] for a in ACTIVATIONS] + [a[0] for a in ACTIVATIONS]
    acts = []
    for i, r in enumerate(rows[:-1]):
        what = json.dumps(r.get("decision") or [])
        native = ("ToolSearch" in what or '"search"' in what) and any(q in what for q in queries)
        if "select_tools" in what or native:
            acts.append((i + 2, rows[i + 1]["rebilled"]))
    return rows, acts


def cost(kind, t):
    if kind == "claude":
        return t["input"] + 1.25 * t["cache_write"] + 0.1 * t["cache_read"]
    return t["input"] + 0.1 * t["cache_read"]


def report_check(kind, transcripts, totals, out):
    """`mcp-defer report --json` on what the real CLI wrote: the same requests and cache figures?"""
    flag = "--claude" if kind == "claude" else "--codex"
    res = subprocess.run([BIN, "report", "--json", flag, transcripts], capture_output=True, text=True,
                         env=dict(os.environ, RUST_LOG="error"))
    with open(os.path.join(out, "report.json"), "w") as f:
        f.write(res.stdout)
    if res.returncode != 0:
        return f"report failed: {res.stderr.strip()[:200]}"
    t = json.loads(res.stdout)["total"]
    got = (t["requests"], t["cache_read"], t["cache_write"])
    want = (totals["requests"], totals["cache_read"], totals["cache_write"])
    return f"report on the {kind} transcript: {'same' if got == want else 'DIFFERENT'} requests/read/write " \
           f"{got} (mock {want}), re-writes {t['rewrites']}, re-billed {t['rebilled']}"


def main():
    clients = sys.argv[1:] or ["claude", "codex"]
    if not os.access(BIN, os.X_OK):
        sys.exit(f"{BIN} not found: run `cargo build --release` first, or set MCP_DEFER_BIN")
    results, unfinished = {}, []
    for kind in clients:
        for setup in SETUPS + (CLAUDE_EXTRA if kind == "claude" else []):
            if not setup:
                continue
            out = os.path.join(LOGROOT, kind, setup)
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            mock, port = start_mock(kind, out, setup)
            t0 = time.time()
            try:
                rc, transcripts = (run_claude if kind == "claude" else run_codex)(out, setup, port)
            finally:
                mock.terminate()
                mock.wait()
            rows, acts = analyse(kind, load(out))
            totals = {k: sum(r[k] for r in rows) for k in ("prompt", "input", "cache_read", "cache_write", "rebilled")}
            totals["requests"] = len(rows)
            final = rows[-1]["decision"] if rows else None
            if not (final and str(final[-1]).startswith("done")):
                unfinished.append(f"{kind}/{setup}")
            results[(kind, setup)] = (rows, acts, totals)
            print(f"\n{kind} / {setup}: exit {rc}, {time.time() - t0:.0f} s, {len(rows)} main-loop requests, "
                  f"last answer {final}")
            print(f"  {'req':>3} {'prompt':>8} {'tools':>7} {'read':>8} {'written':>8} {'uncached':>8} "
                  f"{'re-billed':>9}  model did")
            for i, r in enumerate(rows, 1):
                did = " ".join(x if isinstance(x, str) else json.dumps(x) for x in r["decision"] if x)
                print(f"  {i:>3} {r['prompt']:>8} {r['tool_tokens']:>7} {r['cache_read']:>8} {r['cache_write']:>8} "
                      f"{r['input']:>8} {r['rebilled']:>9}  {did[:70]}")
            if rows:
                print("  " + report_check(kind, transcripts, totals, out))
            tk = rows[0].get("tokenizer") if rows else "?"
    print(f"\nSide by side (tokens counted with {tk}; Claude figures are an o200k_base approximation)")
    head = (f"{'client':<7} {'setup':<18} {'reqs':>4} {'tools/req':>9} {'prompt total':>12} {'cache read':>10} "
            f"{'written':>8} {'uncached':>8} {'re-billed by activation':>24} {'re-billed':>9} {'cost-equiv':>10}")
    print(head)
    for (kind, setup), (rows, acts, t) in results.items():
        tools = max((r["tool_tokens"] for r in rows), default=0)
        act = ", ".join(f"#{i}: {n}" for i, n in acts) or "-"  # request after the activation: re-billed
        print(f"{kind:<7} {setup:<18} {t['requests']:>4} {tools:>9} {t['prompt']:>12} {t['cache_read']:>10} "
              f"{t['cache_write']:>8} {t['input']:>8} {act:>24} {t['rebilled']:>9} {cost(kind, t):>10.0f}")
    with open(os.path.join(LOGROOT, "summary.json"), "w") as f:
        json.dump({f"{k}/{s}": {"requests": v[0], "activations": v[1], "totals": v[2]} for (k, s), v in results.items()},
                  f, indent=1)
    if unfinished:
        sys.exit(f"the task did not finish in: {', '.join(unfinished)} (see each one's client.stderr and mock.out)")


if __name__ == "__main__":
    main()
