#!/usr/bin/env python3
"""(Copied from the client kit, shared/clients/mock_anthropic.py; changes for the cache-cost bench: the
"bench" scenario below (the scripted agent of agent.py), and usage computed by cache_model.AnthropicCache for every main-loop request,
logged to LOGDIR/cache.jsonl.)

Mock Anthropic Messages API for driving Claude Code against a dynamic MCP server.

usage: mock_anthropic.py PORT LOGDIR      (PORT 0: pick a free port; the port is written to LOGDIR/port)
  LOGDIR/requests.jsonl   one line per HTTP request: {n, ts, method, path, headers, body, decision}
  LOGDIR/raw/NNN.json     the raw request body bytes (for byte-level prefix comparison)

Requests without tools (title generation, haiku side calls, ...) get a plain text answer.
Main-loop requests (non-empty `tools`) follow MOCK_SCENARIO:

one_turn (default) | two_turn | force: the dyn server probe
  1. call mcp__dyn__add_tool {"name": NEW}      (via ToolSearch select: first if it is deferred)
  2. call mcp__dyn__NEW {}                       if it is callable (non-deferred in tools, or loaded by a
                                                 tool_reference); if deferred/mentioned only -> ToolSearch
                                                 "select:mcp__dyn__NEW"; if not seen at all and ToolSearch
                                                 exists -> ToolSearch "new_tool" once; else text
  3. text "done"
  two_turn: turn 1 only calls add_tool then answers text; step 2 runs after a user message "turn2".
  force: after add_tool, call mcp__dyn__NEW directly even if not offered.
  Env: MOCK_NEW_TOOL (default new_tool_a).

defer: the mcp-defer aggregator (meta tools search_tools / select_tools / call_tool). Every name is read from
  the request (tools, tool_reference / tool_addition blocks, names announced in text), never assumed:
  1. <srv>search_tools {"query": MOCK_DEFER_QUERY}; if the meta tools are deferred behind ToolSearch, first
     ToolSearch "select:<the meta tools>" (or a keyword ToolSearch when no name is visible at all)
  2. <srv>select_tools {"names": [Q]}, Q = the first name in the search result that ends with MOCK_DEFER_TOOL
     (a qualified name such as time__get_current_time is preferred)
  3. the loaded tool mcp__<server>__Q with MOCK_DEFER_ARGS if it is callable in this request (non-deferred, or
     deferred and loaded by tool_reference / tool_addition); if it is only deferred or mentioned: ToolSearch
     "select:<it>" once; if it is absent: <srv>call_tool {"name": Q, "arguments": MOCK_DEFER_ARGS}
  4. text "done: ..." naming the path taken
  Env: MOCK_DEFER_SERVER (preferred MCP server name, default defer), MOCK_DEFER_QUERY (default "current time"),
       MOCK_DEFER_TOOL (default get_current_time), MOCK_DEFER_ARGS (JSON, default {"timezone": "UTC"}).
Other env: MOCK_DELAY_S (sleep before answering main-loop requests).
"""
import json, os, re, sys, threading, time, itertools
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent  # noqa: E402
import cache_model  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
LOGDIR = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "logs", "default")
NEW = os.environ.get("MOCK_NEW_TOOL", "new_tool_a")
# one_turn (default) | two_turn | force | defer (see the docstring)
SCENARIO = os.environ.get("MOCK_SCENARIO", "one_turn")
DELAY = float(os.environ.get("MOCK_DELAY_S", "0"))  # sleep before answering main-loop requests
os.makedirs(os.path.join(LOGDIR, "raw"), exist_ok=True)
LOG = open(os.path.join(LOGDIR, "requests.jsonl"), "a", buffering=1)
CACHE_LOG = open(os.path.join(LOGDIR, "cache.jsonl"), "a", buffering=1)
CACHES = {}  # model -> cache_model.AnthropicCache (a cache is per model)
LOCK = threading.Lock()
COUNTER = itertools.count(1)
IDS = itertools.count(1)

ADD = "mcp__dyn__add_tool"
NEWFULL = f"mcp__dyn__{NEW}"


def tool_search_name(names):
    for n in names:
        if n in ("ToolSearch", "MCPSearch", "tool_search", "ToolSearchTool", "tool_search_tool"):
            return n
    for n in names:
        if "search" in n.lower() and "tool" in n.lower() and not n.startswith("mcp__"):
            return n
    return None


def iter_blocks(messages):
    for m in messages:
        c = m.get("content")
        if isinstance(c, list):
            for b in c:
                yield m.get("role"), b
                if isinstance(b, dict) and isinstance(b.get("content"), list):
                    for bb in b["content"]:
                        yield m.get("role") + "/nested", bb


def decide(body):
    tools = body.get("tools") or []
    if not tools:
        return ("text", "OK (mock side-call answer)")
    if SCENARIO == "defer":
        return decide_defer(body)
    if SCENARIO == "bench":
        return decide_bench(body)
    names = [t.get("name") for t in tools]
    deferred = {t.get("name") for t in tools if t.get("defer_loading")}
    msgs = body.get("messages") or []
    used = []  # (name, input)
    loaded = set()  # names loaded via tool_reference
    for role, b in iter_blocks(msgs):
        if not isinstance(b, dict):
            continue
        if b.get("type") == "tool_use" and role == "assistant":
            used.append((b.get("name"), b.get("input")))
        if b.get("type") == "tool_reference":
            loaded.add(b.get("tool_name") or b.get("name"))
        if b.get("type") == "tool_addition":  # mid-conversation-tool-changes beta (system message block)
            loaded.add((b.get("tool") or {}).get("name") or (b.get("tool") or {}).get("tool_name"))
    used_names = [u[0] for u in used]
    ts = tool_search_name(names)
    searched = [json.dumps(u[1]) for u in used if u[0] == ts]

    def callable_(n):
        return (n in names and n not in deferred) or n in loaded

    whole = json.dumps(body)
    if ADD not in used_names:
        if callable_(ADD):
            return ("tool", ADD, {"name": NEW})
        if ts and not any(ADD in s for s in searched):
            return ("tool", ts, {"query": f"select:{ADD}", "max_results": 5})
        return ("tool", ADD, {"name": NEW})  # try anyway
    turn2 = any(isinstance(b, dict) and b.get("type") == "text" and b.get("text", "").strip() == "turn2"
                for role, b in iter_blocks(msgs) if role == "user") or any(
                m.get("role") == "user" and isinstance(m.get("content"), str) and m["content"].strip() == "turn2" for m in msgs)
    if SCENARIO == "two_turn" and not turn2:
        return ("text", "turn1 finished (add_tool called)")
    if NEWFULL not in used_names:
        if callable_(NEWFULL) or SCENARIO == "force":
            return ("tool", NEWFULL, {})
        if NEW in whole and ts and not any(NEWFULL in s for s in searched):
            return ("tool", ts, {"query": f"select:{NEWFULL}", "max_results": 5})
        if ts and not any(NEW in s for s in searched):
            return ("tool", ts, {"query": NEW, "max_results": 5})
        return ("text", f"RESULT: {NEW} NOT visible to the model (mentioned anywhere in request: {NEW in whole})")
    return ("text", "done")

# ---- scenario "defer": the mcp-defer aggregator -------------------------------------------------------------
DEFER_SERVER = os.environ.get("MOCK_DEFER_SERVER", "defer")
DEFER_QUERY = os.environ.get("MOCK_DEFER_QUERY", "current time")
DEFER_TOOL = os.environ.get("MOCK_DEFER_TOOL", "get_current_time")
DEFER_ARGS = json.loads(os.environ.get("MOCK_DEFER_ARGS", '{"timezone": "UTC"}'))
MCP_NAME_RE = re.compile(r"mcp__[A-Za-z0-9_-]+")


def content_text(c):
    """Plain text of a tool_result content (string or list of blocks, nested)."""
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(content_text(b) for b in c)
    if isinstance(c, dict):
        if c.get("type") == "text":
            return c.get("text") or ""
        return content_text(c.get("content"))
    return ""


def pick_qualified(text, tool=None):
    """The first name in a search result that ends with `tool`; a qualified one (containing "__") wins."""
    tool = tool or DEFER_TOOL
    cands = re.findall(r"(?<![A-Za-z0-9_/-])[A-Za-z0-9_-]*" + re.escape(tool) + r"(?![A-Za-z0-9_-])", text or "")
    return next((c for c in cands if "__" in c), cands[0] if cands else None)


def decide_defer(body):
    tools = body.get("tools") or []
    names = [t.get("name") for t in tools]
    deferred = {t.get("name") for t in tools if t.get("defer_loading")}
    uses, results, loaded = [], {}, set()  # uses: [(id, name, input)]; results: id -> (text, is_error)
    for role, b in iter_blocks(body.get("messages") or []):
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "tool_use" and role == "assistant":
            uses.append((b.get("id"), b.get("name"), b.get("input") or {}))
        elif t == "tool_result":
            results[b.get("tool_use_id")] = (content_text(b.get("content")), bool(b.get("is_error")))
        elif t == "tool_reference":
            loaded.add(b.get("tool_name") or b.get("name"))
        elif t == "tool_addition":  # mid-conversation-tool-changes beta (system message block)
            tool = b.get("tool") or {}
            loaded.add(tool.get("name") or tool.get("tool_name"))
    mentioned = ({n for n in names if n} | {n for n in loaded if n}
                 | set(MCP_NAME_RE.findall(json.dumps(body, ensure_ascii=False))))
    ts = tool_search_name(names)
    searched = [str((u[2] or {}).get("query", "")) for u in uses if ts and u[1] == ts]

    def find(suffix):
        c = sorted(n for n in mentioned if n.startswith("mcp__") and n.endswith("__" + suffix))
        return next((n for n in c if n.startswith(f"mcp__{DEFER_SERVER}__")), c[0] if c else None)

    def callable_(n):
        return bool(n) and ((n in names and n not in deferred) or n in loaded)

    def load_via_ts(*ns):  # ToolSearch "select:" for names not yet asked for
        want = [n for n in ns if n and not callable_(n) and not any(n in s for s in searched)]
        if ts and want:
            return ("tool", ts, {"query": "select:" + ",".join(want), "max_results": 5})
        return None

    st, sel, ct = find("search_tools"), find("select_tools"), find("call_tool")
    # 1. search
    st_uses = [u for u in uses if st and u[1] == st]
    if not st_uses:
        if callable_(st):
            return ("tool", st, {"query": DEFER_QUERY})
        r = load_via_ts(st, sel, ct) if st else None
        if r:
            return r
        if not st and ts and not searched:  # no meta tool name visible at all: keyword ToolSearch
            return ("tool", ts, {"query": "search_tools select_tools call_tool", "max_results": 5})
        return ("text", f"RESULT: search_tools not callable (seen: {st}, ToolSearch: {ts})")
    stext, serr = results.get(st_uses[-1][0], ("", True))
    q = pick_qualified(stext)
    if not q:
        return ("text", f"RESULT: search_tools did not return {DEFER_TOOL} (is_error={serr}): {stext[:300]}")
    # 2. select
    if not any(sel and u[1] == sel for u in uses):
        if callable_(sel):
            return ("tool", sel, {"names": [q]})
        r = load_via_ts(sel)
        return r or ("text", f"RESULT: select_tools not callable (seen: {sel})")
    # 3. call the loaded tool (directly if possible, else through call_tool)
    target = find(q)
    calls = [u for u in uses if (target and u[1] == target) or (ct and u[1] == ct and (u[2] or {}).get("name") == q)]
    if not calls:
        if callable_(target):
            return ("tool", target, DEFER_ARGS)
        r = load_via_ts(target) if target else None
        if r:
            return r
        if callable_(ct):
            return ("tool", ct, {"name": q, "arguments": DEFER_ARGS})
        r = load_via_ts(ct)
        return r or ("text", f"RESULT: neither {target or q} nor call_tool is callable")
    # 4. done
    u = calls[-1]
    text, err = results.get(u[0], ("", True))
    via = "direct" if u[1] == target else "call_tool"
    return ("text", f"done: {q} via {via} (is_error={err}): {text[:300]}")


# ---- scenario "bench": the cache-cost bench's scripted agent (agent.py) ---------------------------------------
# Seconds to hold the first main-loop answer: the client's MCP servers come up meanwhile (Codex does not wait for them).
FIRST_DELAY = float(os.environ.get("MOCK_FIRST_DELAY_S", "0"))
FIRST_DONE = threading.Event()
# The task starts with the user message that ends with this (Copilot prefixes the date); earlier turns get "ready".
BENCH_GO = os.environ.get("MOCK_BENCH_GO", "do the task")


def user_texts(messages):
    for m in messages:
        if m.get("role") != "user":
            continue
        c = m.get("content")
        for b in [c] if isinstance(c, str) else c or []:
            if isinstance(b, str):
                yield b
            elif isinstance(b, dict) and b.get("type") == "text":
                yield b.get("text") or ""


def decide_bench(body):
    """The agent's decision on a Claude Code or Copilot CLI request (Copilot: `<server>-<tool>` names and a regex
    tool_search_tool)."""
    tools = body.get("tools") or []
    names = [t.get("name") for t in tools]
    deferred = {t.get("name") for t in tools if t.get("defer_loading")}
    ts = next((n for n in names if n in ("ToolSearch", "tool_search_tool")), None)  # never an MCP tool's
    uses, results, loaded = [], {}, set()
    for role, b in iter_blocks(body.get("messages") or []):
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "tool_use" and role == "assistant":
            name = b.get("name")
            uses.append((b.get("id"), agent.CLIENT_SEARCH if ts and name == ts else name, b.get("input") or {}))
        elif t == "tool_result":
            results[b.get("tool_use_id")] = content_text(b.get("content"))
        elif t == "tool_reference":
            loaded.add(b.get("tool_name") or b.get("name"))
        elif t == "tool_addition":
            tool = b.get("tool") or {}
            loaded.add(tool.get("name") or tool.get("tool_name"))
    go = any(x.strip().endswith(BENCH_GO) for x in user_texts(body.get("messages") or []))
    kind = None if not ts else "copilot" if ts == "tool_search_tool" else "claude"
    view = agent.View({n for n in names if n} | {n for n in loaded if n},
                      lambda n: bool(n) and ((n in names and n not in deferred) or n in loaded), kind, uses, results,
                      go)
    d = agent.decide(view)
    if d[0] == "call":
        return ("tool", d[1], d[2], d[3])
    if d[0] == "search":
        return ("tool", ts, d[1], d[2])
    return d


def sse(ev, data):
    return f"event: {ev}\ndata: {json.dumps(data)}\n\n".encode()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n) if n else b""

    def _record(self, raw, decision=None):
        n = next(COUNTER)
        try:
            body = json.loads(raw) if raw else None
        except Exception:
            body = {"_unparsed": raw.decode(errors="replace")}
        with open(os.path.join(LOGDIR, "raw", f"{n:03d}.json"), "wb") as f:
            f.write(raw)
        rec = {"n": n, "ts": time.time(), "method": self.command, "path": self.path,
               "headers": {k: v for k, v in self.headers.items() if k.lower() not in ("x-api-key", "authorization")},
               "decision": decision, "body": body}
        with LOCK:
            LOG.write(json.dumps(rec) + "\n")
        return n

    def _json(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        self._record(b"")
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "mock: no such GET"}})

    def do_HEAD(self):
        self._record(b"")
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        raw = self._body()
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self._record(raw, "count_tokens")
            return self._json(200, {"input_tokens": 1000})
        if not path.endswith("/v1/messages"):
            self._record(raw, "unknown-endpoint")
            return self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "mock"}})
        try:
            body = json.loads(raw)
        except Exception:
            body = {}
        d = decide(body)
        if DELAY and body.get("tools"):
            time.sleep(DELAY)
        if FIRST_DELAY and body.get("tools") and SCENARIO == "bench" and not FIRST_DONE.is_set():
            FIRST_DONE.set()
            time.sleep(FIRST_DELAY)
        self._record(raw, list(d))
        model = body.get("model", "claude-mock")
        mid = f"msg_mock{next(IDS):04d}"
        if d[0] == "tool":
            block = {"type": "tool_use", "id": f"toolu_mock{next(IDS):04d}", "name": d[1], "input": {}}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            stop = "end_turn"
        usage = {"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if body.get("tools"):  # main-loop request: what a caching provider would bill
            with LOCK:
                acc = CACHES.setdefault(model, cache_model.AnthropicCache()).account(body)
                CACHE_LOG.write(json.dumps(dict(acc, model=model, decision=[x if isinstance(x, (str, dict, list)) else str(x) for x in d],
                                                tokenizer=cache_model.TOKENIZER)) + "\n")
            usage = {"input_tokens": acc["input"], "output_tokens": 1,
                     "cache_creation_input_tokens": acc["cache_write"], "cache_read_input_tokens": acc["cache_read"]}
        if not body.get("stream"):
            full = dict(block)
            if d[0] == "tool":
                full["input"] = d[2]
            else:
                full["text"] = d[1]
            return self._json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                                    "content": [full], "stop_reason": stop, "stop_sequence": None,
                                    "usage": dict(usage, output_tokens=10)})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        out = [sse("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}),
            sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block})]
        if d[0] == "tool":
            js = json.dumps(d[2])
            half = len(js) // 2
            for part in (js[:half], js[half:]):
                out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                       "delta": {"type": "input_json_delta", "partial_json": part}}))
        else:
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "text_delta", "text": d[1]}}))
        out += [sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
                sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 10}}),
                sse("message_stop", {"type": "message_stop"})]
        for chunk in out:
            self.wfile.write(chunk)
            self.wfile.flush()


if __name__ == "__main__":
    srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)
    port = srv.server_address[1]
    with open(os.path.join(LOGDIR, "port.tmp"), "w") as f:
        f.write(str(port))
    os.replace(os.path.join(LOGDIR, "port.tmp"), os.path.join(LOGDIR, "port"))
    print(f"mock anthropic on 127.0.0.1:{port}, scenario {SCENARIO}, logging to {LOGDIR}", flush=True)
    srv.serve_forever()
