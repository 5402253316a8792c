#!/usr/bin/env python3
"""The cache-cost bench: a scripted task through the real Claude Code, Codex and GitHub Copilot CLIs, in three setups and
at several catalog sizes, with a mock model that bills each request as a prefix-caching provider would (cache_model.py)
and acts only on what search returns (agent.py).

usage: benches/cache_cost/run.py [claude|codex|copilot ...]     (from the project root; the three clients by default)

Catalog sizes (SIZES, default 38,150,500,2000 tools): the four reference servers (mcp-server-time, server-everything,
server-filesystem, server-memory: 38 tools) plus, above 38, fixture servers (`mcp-defer-fixture --tools FILE`) serving
MetaTool's 199 public tools (benches/data/metatool) in servers of at most 100 tools named mt1, mt2, ...; past 199
tools the set repeats on further servers (the same tool under several servers, as replicated deployments have).

Setups (the same servers each time):
  direct    the servers registered in the client itself (its native handling: Claude Code's tool search defers
            every MCP tool; Codex with a recent model defers them behind its tool_search; Copilot with an Anthropic
            model and more than 30 tools defers every MCP tool behind its regex tool_search_tool)
  all       mcp-defer with exposure = "all" (every tool listed; Claude Code entry with "alwaysLoad": true)
  deferred  mcp-defer with the default exposure (meta tools: search_tools, select_tools, call_tool); search_tools
            loads its confident hits itself (appended, as select_tools does; with their input_schema for call_tool)
  deferred-select (SETUPS=...,deferred-select) deferred with `search_loads = 0`: search -> select_tools -> the tool
  adopted   (SETUPS=adopted; not by default; 38 tools, Claude Code and Codex) the servers written into the client's
            own user config, then `mcp-defer adopt <client>`: the session runs on what adopt wrote
The task (agent.py): activate and call everything's get-sum, then memory's read_graph, and above 38 tools also
MetaTool's ChatOCR (searched for with MetaTool's own queries), each found only through search: up to three queries
per tool (the client's own search in direct and all, search_tools in deferred), then the tool counts as failed.

Per client, size and setup it prints every main-loop request (prompt tokens, tool-schema tokens, cache read /
written, uncached input, what the model did) and a summary: requests, tool-schema tokens per request, cache read /
written, uncached input, tokens re-billed after each activation and in total, the input cost in uncached-token
equivalents (Anthropic: input + 1.25 x write + 0.1 x read; OpenAI: uncached + 0.1 x cached) and its ratio to direct,
tasks completed, searches per task and model requests per task. For Claude Code and Codex it runs `mcp-defer report`
on the transcripts the real CLIs wrote and checks that it reads the same totals. Each run writes to its own
directory, $LOGROOT/<UTC time> (LOGROOT default target/cache_cost): logs, configs, transcripts, summary.json and the
table as summary.md.

Env: SIZES (38,150,500,2000), CLIENTS (claude,codex,copilot; the arguments win), SETUPS (direct,all,deferred),
     CLAUDE_SETUPS (extra Claude Code setups: direct-nosearch,deferred-nosearch = its tool search off; none by default)
     PEERS (default ~/.cache/mcp-defer-peers, filled by shared/clients/setup-clients.sh; Copilot in clients3)
     MCP_DEFER_BIN (default target/release/mcp-defer), MCP_DEFER_FIXTURE (default mcp-defer-fixture beside it)
     MOCK_PYTHON (a python3 with `tiktoken`; default python3; without tiktoken the counts are bytes/4)
     COPILOT_MODEL (claude-sonnet-4.6: Copilot's default model family, Anthropic API, its tool search on)
     CLIENT_TIMEOUT (seconds per client session, default 300), RUN (the run directory's name),
     WITH (an earlier run's directory: its rows join this run's table where this run has none)
     MCP_DEFER_LABEL (what the binary is, e.g. its commit and build kind: written to summary.json)
Loopback only: the mock listens on 127.0.0.1, every proxy variable points at a dead port, HOME is a throwaway.
"""
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

H = os.path.dirname(os.path.abspath(__file__))
ROOT = os.getcwd()
PEERS = os.environ.get("PEERS") or os.path.expanduser("~/.cache/mcp-defer-peers")
BIN = os.path.abspath(os.environ.get("MCP_DEFER_BIN") or os.path.join(ROOT, "target/release/mcp-defer"))
FIXTURE = os.path.abspath(os.environ.get("MCP_DEFER_FIXTURE") or os.path.join(os.path.dirname(BIN), "mcp-defer-fixture"))
PY = os.path.abspath(os.environ["MOCK_PYTHON"]) if os.environ.get("MOCK_PYTHON") else sys.executable
RUN = os.environ.get("RUN") or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
LOGROOT = os.path.join(os.path.abspath(os.environ.get("LOGROOT") or os.path.join(ROOT, "target/cache_cost")), RUN)
TIMEOUT = float(os.environ.get("CLIENT_TIMEOUT", "300"))
SIZES = [int(x) for x in os.environ.get("SIZES", "38,150,500,2000").split(",") if x]
CLIENTS = os.environ.get("CLIENTS", "claude,codex,copilot").split(",")
SETUPS = os.environ.get("SETUPS", "direct,all,deferred").split(",")
# Claude Code only, with its tool search off (ENABLE_TOOL_SEARCH=false): every MCP tool is sent in full and sorted by
# name, so a tool that appears later is inserted, not appended.
CLAUDE_EXTRA = os.environ.get("CLAUDE_SETUPS", "").split(",")
COPILOT_MODEL = os.environ.get("COPILOT_MODEL", "claude-sonnet-4.6")
METATOOL = os.path.join(ROOT, "benches/data/metatool/servers.json")
REFERENCE_TOOLS = 38  # the four reference servers
FIXTURE_CHUNK = 100  # tools per fixture server
# The task tools: what the agent searches for (text for Claude Code's ToolSearch, Codex's tool_search and
# search_tools; a regex for Copilot's tool_search_tool), up to three queries each.
TASKS = [
    {"tool": "get-sum", "args": {"a": 2, "b": 3},
     "queries": [["sum of two numbers", "sum"], ["add two numbers", "add"], ["get sum", "get.?sum"]]},
    {"tool": "read_graph", "args": {},
     "queries": [["read the knowledge graph", "knowledge graph"], ["knowledge graph entities and relations", "graph"],
                 ["read graph", "read.?graph"]]},
]
# Above 38 tools: a MetaTool tool, searched for with the first three of MetaTool's own queries for it
# (benches/data/metatool/queries.jsonl), and the regex a model would write for each.
METATOOL_TASK = {"tool": "ChatOCR", "args": {},
                 "queries": [["Can you help me read text from a scanned document?", "scan"],
                             ["Is it possible to extract text from a PDF?", "extract.*text|pdf"],
                             ["How can I extract text from a photo using ChatOCR?", "ocr"]]}
ACTIVATION_STEPS = ("search", "search_tools", "select", "load", "load_meta")
# A cache loss below this is not a re-write (as in `mcp-defer report`): OpenAI caches in 128-token steps, so the last
# <128 tokens of a prompt are uncached next time without anything being re-billed.
MIN_REWRITE = 1024
FIRST_DELAY_S = "8"
# Two user turns: a greeting (answered at once; the MCP servers come up meanwhile, and Codex builds its deferred
# tool set per turn) and the task. Copilot's `-p` takes one prompt: the task.
PROMPTS = ["hello", "do the task"]
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
NO_NET = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9",
          "NO_PROXY": "127.0.0.1,localhost", "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
          "all_proxy": "http://127.0.0.1:9", "no_proxy": "127.0.0.1,localhost"}


def tasks(size):
    return TASKS + ([METATOOL_TASK] if size > REFERENCE_TOOLS else [])


def reference_servers():
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


CURRENT = {"size": REFERENCE_TOOLS}  # the catalog size being run
_CATALOGS = {}


def servers():
    """The servers of the current catalog size."""
    size = CURRENT["size"]
    if size not in _CATALOGS:
        _CATALOGS[size] = catalog(size)
    return _CATALOGS[size]


def catalog(size):
    """The reference servers and, past their 38 tools, fixture servers mt1, mt2, ... with MetaTool's tools (at most
    FIXTURE_CHUNK each, no name twice on one server; the set repeats on further servers past 199 tools)."""
    out = reference_servers()
    extra = size - REFERENCE_TOOLS
    if extra <= 0:
        return out
    pool = [t for s in json.load(open(METATOOL)) for t in s["tools"]]
    d = os.path.join(LOGROOT, "catalog", str(size))
    os.makedirs(d, exist_ok=True)
    k = 0
    while k < extra:
        n = min(FIXTURE_CHUNK, extra - k)
        chunk = [pool[(k + j) % len(pool)] for j in range(n)]
        name = f"mt{k // FIXTURE_CHUNK + 1}"
        path = os.path.join(d, name + ".json")
        with open(path, "w") as f:
            json.dump(chunk, f)
        out[name] = (FIXTURE, ["--tools", path, "--name", name])
        k += n
    return out


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


def write_defer_config(path, setup):
    """The default settings but the exposure ("all" for the setup all, else the default "deferred"); the setup
    deferred-select also with `search_loads = 0` (search_tools loads nothing: search -> select_tools -> the tool, the
    path before issue 34). (With a long core_wait_ms in "all", so that the first list holds every tool, Codex dropped
    the whole server in our runs: it does not wait seconds for a tools/list.)"""
    q = json.dumps
    with open(path, "w") as f:
        f.write(f"[settings]\nexposure = {q('all' if setup == 'all' else 'deferred')}\n")
        if setup == "deferred-select":
            f.write("search_loads = 0\n")
        f.write("\n")
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
    env = dict(os.environ, MOCK_SCENARIO="bench", MOCK_BENCH_TASKS=json.dumps(tasks(CURRENT["size"])),
               MOCK_BENCH_PATH="meta" if setup.startswith(("deferred", "adopted")) else
               "native" if setup.startswith("direct") else "native+meta",
               MOCK_FIRST_DELAY_S=FIRST_DELAY_S, **NO_NET)
    tk = tiktoken_cache()
    if tk:
        env["TIKTOKEN_CACHE_DIR"] = tk
    script = os.path.join(H, "mock_openai.py" if kind == "codex" else "mock_anthropic.py")
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


def run_copilot(out, setup, port):
    """GitHub Copilot CLI 1.0.102 in its offline BYOK mode against the Anthropic mock, with its defaults: an Anthropic
    model (COPILOT_MODEL), so that past 30 tools its own tool_search_tool defers every MCP tool (ours included)."""
    home = os.path.join(out, "home")
    work = os.path.join(out, "work")
    for d in (home, work, os.path.join(home, ".config"), os.path.join(home, ".local/share"),
              os.path.join(home, ".local/state")):
        os.makedirs(d, exist_ok=True)
    if setup == "direct":
        entries = {n: {"type": "local", "command": c, "args": a, "tools": ["*"]} for n, (c, a) in servers().items()}
    else:
        toml = os.path.join(out, "servers.toml")
        write_defer_config(toml, setup)
        entries = {"defer": {"type": "local", "command": BIN, "args": ["serve", "--config", toml], "tools": ["*"]}}
    with open(os.path.join(out, "mcp.json"), "w") as f:
        json.dump({"mcpServers": entries}, f, indent=1)
    cop = os.path.join(PEERS, "clients3/node_modules/@github/copilot-linux-x64/copilot")
    if not os.access(cop, os.X_OK):
        sys.exit(f"{cop} missing: npm install --prefix {PEERS}/clients3 @github/copilot@1.0.102")
    # Each fresh HOME would unpack ~235 MB into $XDG_CACHE_HOME/copilot/pkg: one shared cache.
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
               XDG_DATA_HOME=os.path.join(home, ".local/share"), XDG_STATE_HOME=os.path.join(home, ".local/state"),
               XDG_CACHE_HOME=os.path.join(PEERS, "copilot-cache"), COPILOT_OFFLINE="true",
               COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{port}", COPILOT_PROVIDER_TYPE="anthropic",
               COPILOT_PROVIDER_API_KEY="dummy", COPILOT_MODEL=COPILOT_MODEL, COPILOT_AUTO_UPDATE="false",
               DO_NOT_TRACK="1", **NO_NET)
    cmd = [cop, "-p", PROMPTS[-1], "--allow-all-tools", "--no-ask-user", "--no-auto-update",
           "--disable-client-telemetry", "--output-format", "json", "--log-level", "all", "--log-dir",
           os.path.join(out, "cplogs"), "--additional-mcp-config", "@" + os.path.join(out, "mcp.json")]
    return run_client(cmd, env, out, cwd=work), None


def run_client(cmd, env, out, cwd=None):
    """Runs a client session in its own process group, which is ended afterwards (MCP servers it left behind)."""
    with open(os.path.join(out, "client.stdout"), "w") as so, open(os.path.join(out, "client.stderr"), "w") as se:
        proc = subprocess.Popen(cmd, env=env, stdout=so, stderr=se, stdin=subprocess.DEVNULL, cwd=cwd or out,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            rc = "timeout"
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        return rc


def load(out):
    p = os.path.join(out, "cache.jsonl")
    return [json.loads(line) for line in open(p)] if os.path.exists(p) else []


def tag(r):
    """The agent's tag on a request's decision ({"task", "step"}; agent.py)."""
    d = r.get("decision") or []
    return d[-1] if d and isinstance(d[-1], dict) and "step" in d[-1] else {}


def analyse(kind, reqs):
    """Per request re-billed tokens (as `mcp-defer report` defines them) and the activation requests: a search (the
    client's own or search_tools), a select_tools or a load through the client's search; what it costs is what the
    next request re-bills."""
    rows, prev_cached = [], None
    for r in reqs:
        lost = max(0, prev_cached - r["cache_read"]) if prev_cached is not None else 0
        prev_cached = r["cache_read"] + r["cache_write"] if kind != "codex" else r["prompt"]
        rows.append(dict(r, rebilled=lost if lost >= MIN_REWRITE else 0))
    acts = [(i + 2, rows[i + 1]["rebilled"]) for i, r in enumerate(rows[:-1])
            if tag(r).get("step") in ACTIVATION_STEPS]
    return rows, acts


def task_figures(rows, n_tasks):
    """Tasks completed (the agent's final answer), searches and model requests per task."""
    final = tag(rows[-1]) if rows else {}
    steps = [tag(r) for r in rows]
    searches = sum(1 for t in steps if t.get("step") in ("search", "search_tools"))
    task_reqs = sum(1 for t in steps if "task" in t)
    return {"tasks": n_tasks, "completed": final.get("ok", 0) if final.get("step") == "done" else 0,
            "loaded_unused": final.get("loaded_unused"),
            "searches_per_task": searches / n_tasks, "requests_per_task": task_reqs / n_tasks,
            "steps": [t.get("step") for t in steps if t]}


def cost(kind, t):
    if kind != "codex":
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


def one(size, kind, setup):
    """One session: the mock, the client, the figures."""
    out = os.path.join(LOGROOT, str(size), kind, setup)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    mock, port = start_mock(kind, out, setup)
    t0 = time.time()
    try:
        rc, transcripts = {"claude": run_claude, "codex": run_codex, "copilot": run_copilot}[kind](out, setup, port)
    finally:
        mock.terminate()
        mock.wait()
    rows, acts = analyse(kind, load(out))
    totals = {k: sum(r[k] for r in rows) for k in ("prompt", "input", "cache_read", "cache_write", "rebilled")}
    totals["requests"] = len(rows)
    totals["cost"] = cost(kind, totals)
    figures = task_figures(rows, len(tasks(size)))
    final = rows[-1]["decision"] if rows else None
    print(f"\n{kind} / {setup} / {size} tools: exit {rc}, {time.time() - t0:.0f} s, {len(rows)} main-loop requests, "
          f"last answer {final[1] if final and len(final) > 1 else final}")
    print(f"  {'req':>3} {'prompt':>8} {'tools':>7} {'read':>8} {'written':>8} {'uncached':>8} "
          f"{'re-billed':>9}  model did")
    for i, r in enumerate(rows[:60], 1):
        did = " ".join(x if isinstance(x, str) else json.dumps(x) for x in r["decision"][:-1] if x)
        print(f"  {i:>3} {r['prompt']:>8} {r['tool_tokens']:>7} {r['cache_read']:>8} {r['cache_write']:>8} "
              f"{r['input']:>8} {r['rebilled']:>9}  {tag(r).get('step', '')}: {did[:90]}")
    if rows and kind != "copilot":
        print("  " + report_check(kind, transcripts, totals, out))
    return {"size": size, "client": kind, "setup": setup, "exit": rc, "seconds": round(time.time() - t0),
            "finished": bool(final and str(final[1] if len(final) > 1 else "").startswith("done")),
            "tool_tokens": max((r["tool_tokens"] for r in rows), default=0), "activations": acts,
            "totals": totals, **figures, "tokenizer": rows[0].get("tokenizer") if rows else "?",
            "per_request": [{k: r[k] for k in ("prompt", "tool_tokens", "cache_read", "cache_write", "input",
                                                "rebilled")} for r in rows]}


ORDER = ["direct", "direct-nosearch", "adopted", "all", "deferred", "deferred-select", "deferred-nosearch"]


def table(results):
    """The summary, one row per client x size x setup; cost against direct of the same client and size."""
    direct = {(r["client"], r["size"]): r["totals"]["cost"] for r in results if r["setup"] == "direct"}
    lines = ["| client | tools | setup | requests | tool tokens/request | prompt total | cache read | written | "
             "uncached | re-billed | cost-equiv | vs direct | tasks done | searches/task | requests/activation | "
             "loaded, unused |", "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in sorted(results, key=lambda r: (CLIENTS.index(r["client"]) if r["client"] in CLIENTS else 9, r["size"],
                                            ORDER.index(r["setup"]) if r["setup"] in ORDER else 9)):
        t = r["totals"]
        base = direct.get((r["client"], r["size"]))
        vs = f"{t['cost'] / base:.2f}" if base else "-"
        lines.append(f"| {r['client']} | {r['size']:,} | {r['setup']} | {t['requests']} | {r['tool_tokens']:,} | "
                     f"{t['prompt']:,} | {t['cache_read']:,} | {t['cache_write']:,} | {t['input']:,} | "
                     f"{t['rebilled']:,} | {t['cost']:,.0f} | {vs} | {r['completed']}/{r['tasks']} | "
                     f"{r['searches_per_task']:.2f} | {r['requests_per_task']:.2f} | "
                     f"{'-' if r['loaded_unused'] is None else r['loaded_unused']} |")
    return "\n".join(lines)


def main():
    global CLIENTS
    CLIENTS = sys.argv[1:] or CLIENTS
    if not os.access(BIN, os.X_OK):
        sys.exit(f"{BIN} not found: run `cargo build --release` first, or set MCP_DEFER_BIN")
    if any(s > REFERENCE_TOOLS for s in SIZES) and not os.access(FIXTURE, os.X_OK):
        sys.exit(f"{FIXTURE} not found: `cargo build --bin mcp-defer-fixture`, or set MCP_DEFER_FIXTURE")
    os.makedirs(LOGROOT, exist_ok=True)
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"cache-cost bench: {LOGROOT}; sizes {SIZES}, clients {CLIENTS}, setups {SETUPS}; {BIN} ({version}, "
          f"label {os.environ.get('MCP_DEFER_LABEL', '-')})")
    results = []
    for size in SIZES:
        CURRENT["size"] = size
        for kind in CLIENTS:
            for setup in SETUPS + (CLAUDE_EXTRA if kind == "claude" else []):
                if not setup or (setup == "adopted" and (kind == "copilot" or size != REFERENCE_TOOLS)):
                    continue
                results.append(one(size, kind, setup))
                with open(os.path.join(LOGROOT, "summary.json"), "w") as f:
                    json.dump({"run": RUN, "binary": BIN, "version": version,
                               "label": os.environ.get("MCP_DEFER_LABEL"), "sizes": SIZES, "clients": CLIENTS, "rows": results},
                              f, indent=1)
    if os.environ.get("WITH"):  # rows of an earlier run (e.g. direct, which does not depend on the binary)
        done = {(r["size"], r["client"], r["setup"]) for r in results}
        earlier = json.load(open(os.path.join(os.environ["WITH"], "summary.json")))["rows"]
        results += [dict(r, run=os.path.basename(os.environ["WITH"].rstrip("/"))) for r in earlier
                    if (r["size"], r["client"], r["setup"]) not in done]
        with open(os.path.join(LOGROOT, "summary.json"), "w") as f:
            json.dump({"run": RUN, "binary": BIN, "version": version, "label": os.environ.get("MCP_DEFER_LABEL"),
                       "with": os.environ["WITH"], "sizes": SIZES, "clients": CLIENTS, "rows": results}, f, indent=1)
    md = table(results)
    with open(os.path.join(LOGROOT, "summary.md"), "w") as f:
        f.write(md + "\n")
    tk = results[0]["tokenizer"] if results else "?"
    print(f"\nSide by side (tokens counted with {tk}; Claude and Copilot figures are an o200k_base approximation; "
          f"cost-equiv in uncached-token units)\n{md}")
    unfinished = [f"{r['client']}/{r['setup']}/{r['size']}" for r in results if not r["finished"]]
    if unfinished:
        sys.exit(f"the task did not finish in: {', '.join(unfinished)} (see each one's client.stderr and mock.out)")


if __name__ == "__main__":
    main()
