#!/usr/bin/env python3
"""(Copied unchanged from the client kit, shared/clients/.)
drive_multi.py OUTFILE PROMPT1 PROMPT2 ... -- CLAUDE_CMD...
Runs Claude Code with --input-format/--output-format stream-json, sends each prompt as a user message
after the previous turn's `result` event, then closes stdin. All stdout lines go to OUTFILE."""
import json, subprocess, sys
i = sys.argv.index("--")
out, prompts, cmd = sys.argv[1], sys.argv[2:i], sys.argv[i + 1:]
p = subprocess.Popen(cmd + ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
f = open(out, "w")
def send(t):
    p.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": t}}) + "\n"); p.stdin.flush()
send(prompts[0]); k = 1
for line in p.stdout:
    f.write(line); f.flush()
    try: ev = json.loads(line)
    except Exception: continue
    if ev.get("type") == "result":
        if k < len(prompts): send(prompts[k]); k += 1
        else: p.stdin.close()
sys.exit(p.wait())
