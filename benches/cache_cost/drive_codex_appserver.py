#!/usr/bin/env python3
"""(Copied unchanged from the client kit, shared/clients/.)
drive_codex_appserver.py OUTFILE PROMPT1 PROMPT2 ... -- CODEX_CMD...
Runs `CODEX_CMD app-server` (stdio JSON-RPC), starts one thread, runs each prompt as a turn in the SAME
process (so MCP servers stay alive between turns), logs all app-server traffic to OUTFILE."""
import json, subprocess, sys, os, threading, queue
i = sys.argv.index("--")
out, prompts, cmd = sys.argv[1], sys.argv[2:i], sys.argv[i + 1:]
p = subprocess.Popen(cmd + ["app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
f = open(out, "w", buffering=1)
q = queue.Queue()
def reader():
    for line in p.stdout:
        f.write("S->C " + line)
        try: q.put(json.loads(line))
        except Exception: pass
    q.put(None)
threading.Thread(target=reader, daemon=True).start()
nid = [0]
def send(obj):
    f.write("C->S " + json.dumps(obj) + "\n"); p.stdin.write(json.dumps(obj) + "\n"); p.stdin.flush()
def request(method, params):
    nid[0] += 1; rid = nid[0]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    return rid
def wait(pred, what):
    while True:
        m = q.get(timeout=90)
        if m is None: raise SystemExit(f"app-server exited while waiting for {what}")
        if "method" in m and "id" in m:  # server->client request (approval, elicitation...): decline
            send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "driver: not supported"}})
            continue
        if pred(m): return m
rid = request("initialize", {"clientInfo": {"name": "harness-driver", "version": "0.1"}})
wait(lambda m: m.get("id") == rid, "initialize")
send({"jsonrpc": "2.0", "method": "initialized"})
rid = request("thread/start", {"cwd": os.getcwd(), "approvalPolicy": "never", "sandbox": "danger-full-access"})
r = wait(lambda m: m.get("id") == rid, "thread/start")
if "error" in r: raise SystemExit(f"thread/start failed: {r}")
tid = r["result"]["thread"]["id"]
for text in prompts:
    rid = request("turn/start", {"threadId": tid, "input": [{"type": "text", "text": text}]})
    wait(lambda m: m.get("method") == "turn/completed", f"turn/completed ({text})")
p.stdin.close()
try: p.wait(timeout=10)
except Exception: p.kill()
