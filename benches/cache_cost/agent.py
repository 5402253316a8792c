"""The cache-cost bench's scripted agent: what the mock models (mock_anthropic.py, mock_openai.py) answer in the
"bench" scenario, written once over a client-neutral view of the request.

Each mock process serves one client session (the loaded-but-unused count keeps what was callable at the start). The
task is a list of task tools (MOCK_BENCH_TASKS, JSON: [{"tool": suffix, "args": {...}, "queries": [[text, regex],
...]}]). For each in turn the agent acts only on what a search returned:

  native path (the servers registered directly): the tool if it is callable by its
    own name; else the client's own tool search (Claude Code ToolSearch and Codex tool_search take the query text,
    Copilot's tool_search_tool the regex) with the next query of the task; the tool is found when the client loaded
    it (tool_reference, tool_search_output); after the last query the task is given up (failed).
  native+meta (mcp-defer with exposure "all"): the native path, then, when the client's search did not find the
    tool, the meta path, as mcp-defer's instructions say.
  meta path (mcp-defer deferred): search_tools with the next query; in its answer, the target hit (a name whose
    tool part is the task tool) decides, in this order:
      1. the target callable by its own name (search_tools loaded it and the client re-listed) -> call it;
      2. the hit was loaded or carries an input_schema and call_tool is callable -> call_tool {name, arguments};
      3. the hit is listed -> select_tools [it], then the loaded tool by name (after a client-search load where the
         client deferred it), else call_tool;
      4. no target hit -> search_tools again with the next query; after the last one the task is given up.
    When the client defers the meta tools themselves (Codex; Copilot with more than 30 tools), the agent first loads
    them with the client's own search by exact name.

The agent is stateless: every decision is recomputed from the conversation in the request, as a model does. Each
decision carries a tag {"task": index, "step": ...} that the bench counts (searches and requests per task); steps:
search (the client's own search for a task tool), search_tools, load_meta (client search for the meta tools),
select, load (client search for a selected tool), call, call_tool, stuck (no way on: a bench defect), and "done" at
the end (tasks completed, and the MCP tools loaded during the task but never called).
"""
import json
import os
import re

TASKS = json.loads(os.environ.get("MOCK_BENCH_TASKS") or json.dumps([
    {"tool": "get-sum", "args": {"a": 2, "b": 3},
     "queries": [["sum of two numbers", "sum"], ["add two numbers", "add"], ["get sum", "get.?sum"]]},
    {"tool": "read_graph", "args": {},
     "queries": [["read the knowledge graph", "knowledge graph"], ["knowledge graph entities", "graph"],
                 ["read graph", "read.?graph"]]},
]))
PATH = os.environ.get("MOCK_BENCH_PATH", "meta")  # "meta" | "native" | "native+meta"
META = ("search_tools", "select_tools", "call_tool")
HIT_LINE = re.compile(r"^(\S+) \(([^/()\s]+)/([^()\s]+)\)( \[loaded\])?", re.M)


def variants(suffix):
    """The names a tool may carry: Codex turns `get-sum` into `get_sum`."""
    return [suffix] if "-" not in suffix else [suffix, suffix.replace("-", "_")]


def named(name, suffix):
    """Whether a client-side tool name is the tool `suffix` of some server (mcp__srv__t, srv-t, srv__t, t)."""
    return any(name == v or name.endswith("__" + v) or name.endswith("-" + v) for v in variants(suffix))


def parse_hits(text):
    """search_tools' hits as [{"name", "tool", "loaded", "schema"}], from structured JSON or the text lines."""
    hits, data, text = [], None, text or ""
    # The structured answer as the client passes it on: the whole text (Claude Code), after a preamble (Codex:
    # "Wall time: ...\nOutput:\n{...}") or after the text lines (Copilot).
    at = text.find('{"tools"')
    if at >= 0:
        try:
            data = json.JSONDecoder().raw_decode(text[at:])[0]
        except ValueError:
            data = None
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        for t in data["tools"]:
            if isinstance(t, dict) and t.get("name"):
                hits.append({"name": t["name"], "tool": t.get("tool") or t["name"], "loaded": bool(t.get("loaded")),
                             "schema": "input_schema" in t})
        return hits
    for m in HIT_LINE.finditer(text):
        line_end = text.find("\n", m.end())
        line = text[m.start(): len(text) if line_end < 0 else line_end]
        hits.append({"name": m.group(1), "tool": m.group(3), "loaded": bool(m.group(4)),
                     "schema": "input_schema" in line})
    return hits


class View:
    """What the agent sees in one request, client-neutral. The mock fills it:
    names       every tool name the request mentions (offered, deferred, loaded)
    callable    a predicate: can the model call this name now
    search      the client's own search tool: "claude" | "codex" | "copilot" | None
    uses        [(id, name, args)] the model's earlier calls, in order (the client's own search included, with its
                args: {"query"} or {"pattern"})
    results     id -> text of each call's result
    go          whether the task's user message has arrived"""

    def __init__(self, names, callable_, search, uses, results, go):
        self.names, self.callable, self.search, self.uses, self.results, self.go = \
            names, callable_, search, uses, results, go

    def find(self, suffix):
        """The names of tool `suffix`, a callable one first."""
        c = sorted(n for n in self.names if n and named(n, suffix))
        return sorted(c, key=lambda n: not self.callable(n))

    def meta(self, which):
        c = self.find(which)
        return c[0] if c else None


def search_args(kind, query):
    text, regex = query
    if kind == "copilot":
        return {"pattern": regex}
    if kind == "claude":
        return {"query": text, "max_results": 5}
    return {"query": text}


def load_args(kind, names):
    """The client's own search for exact names (tools whose names the model sees but that are deferred)."""
    if kind == "copilot":
        return {"pattern": "^(" + "|".join(re.escape(n) for n in names) + ")$"}
    if kind == "claude":
        return {"query": "select:" + ",".join(names), "max_results": 5}
    return {"query": " ".join(n.split("__")[-1] for n in names)}


CLIENT_SEARCH = "__client_search__"  # the name View.uses gives the client's own search tool


def is_search(v, u):
    return u[1] == CLIENT_SEARCH


def load(v, name, tag, step="load_meta"):
    """The client's own search for a tool the model knows by name but cannot call (deferred), once."""
    if not v.search or v.callable(name):
        return None
    a = load_args(v.search, [name])
    if any(is_search(v, u) and u[2] == a for u in v.uses):
        return None
    return ("search", a, dict(tag, step=step))


def decide(v, tasks=TASKS, path=PATH):
    """-> ("call", name, args, tag) | ("search", args, tag) | ("text", message, tag); never the previous call again
    (a client that answers a call without effect would otherwise loop the session until its timeout)."""
    d = decide_fresh(v, tasks, path)
    last = v.uses[-1] if v.uses else None
    if last and d[0] != "text" and (d[1] if d[0] == "call" else CLIENT_SEARCH) == last[1] \
            and (d[2] if d[0] == "call" else d[1]) == last[2]:
        return ("text", f"stuck: the same call again ({last[1]})", dict(d[-1], step="stuck"))
    return d


def decide_fresh(v, tasks, path):
    if not v.go:
        return ("text", "ready", {"step": "ready"})
    FIRST_CALLABLE.setdefault("names", mcp_callable(v))
    st, sel, ct = v.meta("search_tools"), v.meta("select_tools"), v.meta("call_tool")
    outcome = []
    for i, task in enumerate(tasks):
        tool, args, queries = task["tool"], task.get("args") or {}, task["queries"]
        tag = {"task": i}
        targets = v.find(tool)
        done = [u for u in v.uses if any(u[1] == t for t in targets) and not is_search(v, u)
                or (ct and u[1] == ct and named(str(u[2].get("name", "")), tool))]
        if done:
            outcome.append((tool, "ok"))
            continue
        if path.startswith("native"):
            if targets and v.callable(targets[0]):
                return ("call", targets[0], args, dict(tag, step="call"))
            asked = [u for u in v.uses if is_search(v, u) and u[2] in [search_args(v.search, q) for q in queries]]
            if v.search and len(asked) < len(queries):
                return ("search", search_args(v.search, queries[len(asked)]), dict(tag, step="search"))
            if path != "native+meta":
                outcome.append((tool, "failed"))
                continue
            # mcp-defer is there ("all"): its instructions offer search_tools when the client's search finds nothing
        # meta path
        if not (st and v.callable(st)):
            want = [n for n in (st, sel, ct) if n and not v.callable(n)]
            asked = [u for u in v.uses if is_search(v, u) and u[2] == load_args(v.search, want or list(META))]
            if v.search and not asked:
                return ("search", load_args(v.search, want or list(META)), dict(tag, step="load_meta"))
            return ("text", f"RESULT: search_tools not callable (seen: {st})", dict(tag, step="stuck"))
        searches = [u for u in v.uses if u[1] == st and u[2].get("query") in [q[0] for q in queries]]
        hit = None
        if searches:
            hits = parse_hits(v.results.get(searches[-1][0], ""))
            hit = next((h for h in hits if named(h["tool"], tool) or named(h["name"], tool)), None)
        if not hit:
            if len(searches) < len(queries):
                return ("call", st, {"query": queries[len(searches)][0]}, dict(tag, step="search_tools"))
            outcome.append((tool, "failed"))
            continue
        q = hit["name"]
        loaded_targets = v.find(q)
        if loaded_targets and v.callable(loaded_targets[0]):
            return ("call", loaded_targets[0], args, dict(tag, step="call"))
        selected = any(u[1] == sel and q in (u[2].get("names") or []) for u in v.uses)
        if (hit["loaded"] or hit["schema"]) and not selected:
            if ct and v.callable(ct):
                return ("call", ct, {"name": q, "arguments": args}, dict(tag, step="call_tool"))
            r = load(v, ct or "call_tool", tag)
            if r:
                return r
        if not selected:
            if sel and v.callable(sel):
                return ("call", sel, {"names": [q]}, dict(tag, step="select"))
            return load(v, sel or "select_tools", tag) or ("text", "RESULT: select_tools not callable",
                                                           dict(tag, step="stuck"))
        if loaded_targets:
            r = load(v, loaded_targets[0], tag, "load")
            if r:
                return r
        if ct and v.callable(ct):
            return ("call", ct, {"name": q, "arguments": args}, dict(tag, step="call_tool"))
        return load(v, ct or "call_tool", tag) or ("text", f"RESULT: neither {q} nor call_tool callable",
                                                   dict(tag, step="stuck"))
    ok = [t for t, o in outcome if o == "ok"]
    failed = [t for t, o in outcome if o != "ok"]
    called = {u[1] for u in v.uses}
    unused = sorted(n for n in mcp_callable(v) - FIRST_CALLABLE.get("names", set()) if n not in called)
    return ("text", f"done: {len(ok)}/{len(tasks)} tasks" + (f"; failed: {', '.join(failed)}" if failed else ""),
            {"step": "done", "ok": len(ok), "tasks": len(tasks), "loaded_unused": len(unused),
             "unused": unused[:20]})


# The MCP tools callable when the task began (one mock process serves one session): what became callable later
# and was never called is what a search loaded for nothing.
FIRST_CALLABLE = {}


def mcp_callable(v):
    """Callable MCP tools but the meta tools (Claude Code, Codex: mcp__...; Copilot: <server>-<tool>)."""
    return {n for n in v.names if (n.startswith("mcp__") or "-" in n) and v.callable(n)
            and not any(named(n, m) for m in META)}
