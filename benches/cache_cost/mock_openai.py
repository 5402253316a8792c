#!/usr/bin/env python3
"""(Copied from the client kit, shared/clients/mock_openai.py; changes for the cache-cost bench: the "bench" (agent.py)
scenario below, and usage computed by cache_model.OpenAICache for every main-loop request, logged to
LOGDIR/cache.jsonl.)

Mock OpenAI Responses API (POST /v1/responses, SSE) for driving `codex exec` against a dynamic MCP server.

usage: mock_openai.py PORT LOGDIR      (PORT 0: pick a free port; the port is written to LOGDIR/port)
  LOGDIR/requests.jsonl, LOGDIR/raw/NNN.json as in mock_anthropic.py

Requests without tools get a plain text answer. Main-loop requests follow MOCK_SCENARIO:

one_turn (default) | two_turn | force: the dyn server probe
  1. call add_tool {"name": NEW}  (via tool_search first if the MCP tools are only reachable through it)
  2. call NEW if it is offered (top-level/namespace tool or returned by an earlier tool_search output);
     else, if a tool_search tool exists and was not yet asked about NEW, search for it; else text
  3. text "done"
  Env: MOCK_NEW_TOOL (default new_tool_a).

defer: the mcp-defer aggregator. Tools are found where Codex offers them: top-level functions (older models:
  mcp__<server>__<tool>) or namespaces (`mcp__<server>` with bare tool names) in `tools` or in earlier
  tool_search_output items; calls go back with the namespace they came in.
  1. search_tools {"query": MOCK_DEFER_QUERY}; if not offered, first one tool_search "search_tools select_tools
     call_tool" (Codex defers every MCP tool behind its own tool_search with recent models)
  2. select_tools {"names": [Q]}, Q = the first name in the search output that ends with MOCK_DEFER_TOOL
  3. Q itself if it is offered (Codex re-lists only with its mcp_tool_list_changed feature; with
     MOCK_DEFER_SEARCH_LOADED=1 the mock asks tool_search for Q once before giving up on it), else
     call_tool {"name": Q, "arguments": MOCK_DEFER_ARGS}
  4. text "done: ..." naming the path taken
  Env: MOCK_DEFER_SERVER (default defer), MOCK_DEFER_QUERY (default "current time"), MOCK_DEFER_TOOL (default
       get_current_time), MOCK_DEFER_ARGS (JSON, default {"timezone": "UTC"}), MOCK_DEFER_SEARCH_LOADED.
Other env: MOCK_DELAY_S.
"""
import itertools, json, os, re, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent  # noqa: E402
import cache_model  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 8766
LOGDIR = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "logs", "codex_default")
NEW = os.environ.get("MOCK_NEW_TOOL", "new_tool_a")
SCENARIO = os.environ.get("MOCK_SCENARIO", "one_turn")
DELAY = float(os.environ.get("MOCK_DELAY_S", "0"))
os.makedirs(os.path.join(LOGDIR, "raw"), exist_ok=True)
LOG = open(os.path.join(LOGDIR, "requests.jsonl"), "a", buffering=1)
CACHE_LOG = open(os.path.join(LOGDIR, "cache.jsonl"), "a", buffering=1)
CACHE = cache_model.OpenAICache()
LOCK = threading.Lock()
COUNTER = itertools.count(1)
IDS = itertools.count(1)


def flat_tools(tools):
    """[(callable_name, namespace_or_None, tool_obj)] for function tools, incl. those nested in namespaces."""
    out = []
    for t in tools or []:
        if t.get("type") == "namespace" or "tools" in t:
            for tt in t.get("tools") or []:
                out.append((tt.get("name"), t.get("name"), tt))
        else:
            out.append((t.get("name") or t.get("type"), None, t))
    return out


def find_tool(tools, suffix):
    for name, ns, t in flat_tools(tools):
        full = (ns or "") + (name or "")
        if name and (name == suffix or full.endswith(suffix) or name.endswith("__" + suffix)):
            return name, ns
    return None


def decide(body):
    tools = body.get("tools") or []
    if not tools:
        return ("text", "OK (mock side-call answer)")
    if SCENARIO == "defer":
        return decide_defer(body)
    if SCENARIO == "bench":
        return decide_bench(body)
    items = body.get("input") or []
    calls = [(i.get("namespace") or "") + (i.get("name") or "") for i in items
             if i.get("type") in ("function_call", "custom_tool_call")]
    searches = [json.dumps(i) for i in items if i.get("type") in ("tool_search_call",)]
    search_outputs = [i for i in items if i.get("type") == "tool_search_output"]
    ts = next((t for t in tools if t.get("type") == "tool_search" or t.get("name") in ("tool_search", "search_tools")), None)
    # tools visible either directly or via earlier tool_search outputs
    offered = list(tools)
    for so in search_outputs:
        offered += so.get("tools") or []
    turn2 = any(i.get("type") == "message" and i.get("role") == "user" and "turn2" in json.dumps(i.get("content")) for i in items)
    if not any(c.endswith("add_tool") for c in calls):
        hit = find_tool(offered, "add_tool")
        if hit:
            return ("call", hit[0], hit[1], {"name": NEW})
        if ts is not None and not any("add_tool" in s for s in searches):
            return ("search", ts, "add_tool")
        return ("text", "RESULT: add_tool not offered")
    if SCENARIO == "two_turn" and not turn2:
        return ("text", "turn1 finished (add_tool called)")
    if not any(c.endswith(NEW) for c in calls):
        hit = find_tool(offered, NEW)
        if hit:
            return ("call", hit[0], hit[1], {})
        if SCENARIO == "force":
            add = find_tool(offered, "add_tool")
            ns = add[1] if add else None
            return ("call", (add[0].replace("add_tool", NEW) if add else NEW), ns, {})
        if ts is not None and not any(NEW in s for s in searches):
            return ("search", ts, NEW)
        return ("text", f"RESULT: {NEW} NOT offered to the model (mentioned anywhere: {NEW in json.dumps(body)})")
    return ("text", "done")

# ---- scenario "defer": the mcp-defer aggregator -------------------------------------------------------------
DEFER_SERVER = os.environ.get("MOCK_DEFER_SERVER", "defer")
DEFER_QUERY = os.environ.get("MOCK_DEFER_QUERY", "current time")
DEFER_TOOL = os.environ.get("MOCK_DEFER_TOOL", "get_current_time")
DEFER_ARGS = json.loads(os.environ.get("MOCK_DEFER_ARGS", '{"timezone": "UTC"}'))
DEFER_SEARCH_LOADED = os.environ.get("MOCK_DEFER_SEARCH_LOADED") == "1"


def output_text(o):
    """Plain text of a function_call_output `output` (string, or list of input_text items)."""
    if isinstance(o, str):
        return o
    if isinstance(o, list):
        return "\n".join(output_text(x) for x in o)
    if isinstance(o, dict):
        return o.get("text") or output_text(o.get("content")) or ""
    return ""


def pick_qualified(text, tool=None):
    """The first name in a search result that ends with `tool`; a qualified one (containing "__") wins."""
    tool = tool or DEFER_TOOL
    cands = re.findall(r"(?<![A-Za-z0-9_/-])[A-Za-z0-9_-]*" + re.escape(tool) + r"(?![A-Za-z0-9_-])", text or "")
    return next((c for c in cands if "__" in c), cands[0] if cands else None)


def decide_defer(body):
    tools = body.get("tools") or []
    items = body.get("input") or []
    calls, outputs, searches, offered = [], {}, [], list(tools)  # calls: [(call_id, namespace, name, args)]
    for i in items:
        t = i.get("type")
        if t == "function_call":
            try:
                args = json.loads(i.get("arguments") or "{}")
            except Exception:
                args = {}
            calls.append((i.get("call_id"), i.get("namespace") or "", i.get("name") or "", args))
        elif t == "function_call_output":
            outputs[i.get("call_id")] = output_text(i.get("output"))
        elif t == "tool_search_call":
            searches.append(json.dumps(i.get("arguments")))
        elif t == "tool_search_output":
            offered += i.get("tools") or []
    ts = next((t for t in tools if t.get("type") == "tool_search"), None)
    flat = [(n, ns or "") for n, ns, _ in flat_tools(offered) if n]

    def find(suffix):  # -> (name, namespace) of an offered tool, the MOCK_DEFER_SERVER one first
        hits = [(n, ns) for n, ns in flat if ns.startswith("mcp__") and (n == suffix or n.endswith("__" + suffix))
                or n.startswith("mcp__") and n.endswith("__" + suffix)]
        mine = [h for h in hits if h[1] == f"mcp__{DEFER_SERVER}" or h[0].startswith(f"mcp__{DEFER_SERVER}__")]
        return (mine or hits or [None])[0]

    def calls_to(hit, pred=lambda a: True):
        return [c for c in calls if hit and c[2] == hit[0] and c[1] == hit[1] and pred(c[3])]

    def call(hit, args):
        return ("call", hit[0], hit[1] or None, args)

    st, sel, ct = find("search_tools"), find("select_tools"), find("call_tool")
    # 1. search
    if not calls_to(st):
        if st:
            return call(st, {"query": DEFER_QUERY})
        if ts is not None and not any("search_tools" in s for s in searches):
            return ("search", ts, "search_tools select_tools call_tool")
        return ("text", "RESULT: search_tools not offered to the model")
    stext = outputs.get(calls_to(st)[-1][0], "")
    q = pick_qualified(stext)
    if not q:
        return ("text", f"RESULT: search_tools did not return {DEFER_TOOL}: {stext[:300]}")
    # 2. select
    if not calls_to(sel):
        if sel:
            return call(sel, {"names": [q]})
        if ts is not None and not any("select_tools" in s for s in searches):
            return ("search", ts, "select_tools")
        return ("text", "RESULT: select_tools not offered to the model")
    # 3. call the loaded tool (directly if offered, else through call_tool)
    target = find(q)
    done = calls_to(target) + calls_to(ct, lambda a: a.get("name") == q)
    if not done:
        if target:
            return call(target, DEFER_ARGS)
        if DEFER_SEARCH_LOADED and ts is not None and not any(q in s for s in searches):
            return ("search", ts, q)
        if ct:
            return call(ct, {"name": q, "arguments": DEFER_ARGS})
        if ts is not None and not any("call_tool" in s for s in searches):
            return ("search", ts, "call_tool")
        return ("text", f"RESULT: neither {q} nor call_tool offered to the model")
    # 4. done
    c = done[-1]
    via = "direct" if target and c[2] == target[0] else "call_tool"
    return ("text", f"done: {q} via {via}: {outputs.get(c[0], '')[:300]}")


# ---- scenario "bench": the cache-cost bench's scripted agent (agent.py) ---------------------------------------
# Seconds to hold the first main-loop answer: the client's MCP servers come up meanwhile (Codex does not wait for them).
FIRST_DELAY = float(os.environ.get("MOCK_FIRST_DELAY_S", "0"))
FIRST_DONE = threading.Event()
# The task starts with this user message; earlier turns get a short text answer (the MCP servers start meanwhile).
BENCH_GO = os.environ.get("MOCK_BENCH_GO", "do the task")


def tool_key(name, ns):
    """One string per offered tool for the agent: `<namespace>__<name>` (mcp__everything__get_sum), or the name."""
    return f"{ns.rstrip('_')}__{name}" if ns else name


def decide_bench(body):
    """The agent's decision on a Codex request: tools are top-level functions or namespaces, in `tools` or in earlier
    tool_search_output items (what Codex's own tool_search loaded); calls go back with their namespace."""
    tools = body.get("tools") or []
    items = body.get("input") or []
    uses, results, offered = [], {}, list(tools)
    for i in items:
        t = i.get("type")
        if t == "function_call":
            try:
                args = json.loads(i.get("arguments") or "{}")
            except Exception:
                args = {}
            uses.append((i.get("call_id"), tool_key(i.get("name") or "", i.get("namespace") or ""), args))
        elif t == "function_call_output":
            results[i.get("call_id")] = output_text(i.get("output"))
        elif t == "tool_search_call":
            a = i.get("arguments")
            uses.append((i.get("call_id"), agent.CLIENT_SEARCH, a if isinstance(a, dict) else {}))
        elif t == "tool_search_output":
            offered += i.get("tools") or []
    ts = next((t for t in tools if t.get("type") == "tool_search"), None)
    keys = {tool_key(n, ns or ""): (n, ns) for n, ns, _ in flat_tools(offered) if n}
    go = any(i.get("type") == "message" and i.get("role") == "user" and BENCH_GO in json.dumps(i.get("content"))
             for i in items)
    view = agent.View(set(keys), lambda n: n in keys, "codex" if ts is not None else None, uses, results, go)
    d = agent.decide(view)
    if d[0] == "call":
        name, ns = keys[d[1]]
        return ("call", name, ns or None, d[2], d[3])
    if d[0] == "search":
        return ("search", ts, d[1], d[2])
    return d


def ev(data):
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _record(self, raw, decision=None):
        n = next(COUNTER)
        try:
            body = json.loads(raw) if raw else None
        except Exception:
            body = {"_unparsed": raw.decode(errors="replace")[:20000]}
        with open(os.path.join(LOGDIR, "raw", f"{n:03d}.json"), "wb") as f:
            f.write(raw)
        rec = {"n": n, "ts": time.time(), "method": self.command, "path": self.path,
               "headers": {k: v for k, v in self.headers.items() if k.lower() not in ("authorization",)},
               "decision": decision, "body": body}
        with LOCK:
            LOG.write(json.dumps(rec) + "\n")

    def _json(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        self._record(b"")
        if self.path.split("?")[0].endswith("/models"):
            return self._json(200, {"object": "list", "data": [], "models": []})
        self._json(404, {"error": {"message": "mock: no such GET", "type": "not_found"}})

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("content-encoding", "").lower() == "zstd":
            self._record(raw, "zstd-body-unsupported")
            return self._json(400, {"error": {"message": "mock cannot decode zstd"}})
        path = self.path.split("?")[0]
        if not path.endswith("/responses"):
            self._record(raw, "unknown-endpoint")
            return self._json(404, {"error": {"message": "mock: unknown endpoint", "type": "not_found"}})
        try:
            body = json.loads(raw)
        except Exception:
            body = {}
        d = decide(body)
        self._record(raw, [str(x) if not isinstance(x, (str, dict, list, type(None))) else x for x in d])
        if DELAY and body.get("tools"):
            time.sleep(DELAY)
        if FIRST_DELAY and body.get("tools") and SCENARIO == "bench" and not FIRST_DONE.is_set():
            FIRST_DONE.set()
            time.sleep(FIRST_DELAY)
        rid = f"resp_mock{next(IDS):04d}"
        if d[0] == "call":
            name, ns, args = d[1], d[2], d[3]
            item = {"type": "function_call", "id": f"fc_mock{next(IDS):04d}", "call_id": f"call_mock{next(IDS):04d}",
                    "name": name, "arguments": json.dumps(args), "status": "completed"}
            if ns:
                item["namespace"] = ns
        elif d[0] == "search":
            q = d[2]
            item = {"type": "tool_search_call", "id": f"ts_mock{next(IDS):04d}", "call_id": f"call_mock{next(IDS):04d}",
                    "status": "completed", "execution": "client",
                    "arguments": q if isinstance(q, dict) else {"query": q}}
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_mock{next(IDS):04d}", "status": "completed",
                    "content": [{"type": "output_text", "text": d[1], "annotations": []}]}
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}
        if body.get("tools"):  # main-loop request: what automatic prefix caching would bill
            with LOCK:
                acc = CACHE.account(body)
                CACHE_LOG.write(json.dumps(dict(acc, model=body.get("model"), decision=[x.get("type") if isinstance(x, dict) and x.get("type") == "tool_search" else x for x in d],
                                                tokenizer=cache_model.TOKENIZER)) + "\n")
            usage = {"input_tokens": acc["prompt"], "input_tokens_details": {"cached_tokens": acc["cache_read"]},
                     "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                     "total_tokens": acc["prompt"] + 10}
        events = [{"type": "response.created", "response": {"id": rid, "object": "response", "status": "in_progress"}},
                  {"type": "response.output_item.added", "output_index": 0, "item": item}]
        if item["type"] == "message":
            events.append({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                           "item_id": item["id"], "delta": d[1]})
        events += [{"type": "response.output_item.done", "output_index": 0, "item": item},
                   {"type": "response.completed", "response": {"id": rid, "object": "response", "status": "completed",
                                                               "output": [item], "usage": usage}}]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for e in events:
            self.wfile.write(ev(e))
            self.wfile.flush()


if __name__ == "__main__":
    srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)
    port = srv.server_address[1]
    with open(os.path.join(LOGDIR, "port.tmp"), "w") as f:
        f.write(str(port))
    os.replace(os.path.join(LOGDIR, "port.tmp"), os.path.join(LOGDIR, "port"))
    print(f"mock openai responses on 127.0.0.1:{port}, scenario {SCENARIO}, logging to {LOGDIR}", flush=True)
    srv.serve_forever()
