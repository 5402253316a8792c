"""Builds servers.json and queries*.jsonl of this folder from the Berkeley Function Calling
Leaderboard's data (see SOURCE.md). Usage: python3 convert.py <bfcl_eval/data dir> <benches/data dir>
(writes bfcl/ and bfcl-live/).

Each distinct function (first description wins when a name repeats) becomes one tool; the
part of its name before the first '.' names its server (`uber.ride` -> server `uber`, tool
`ride`), names without a dot go to server `functions`. A query is the user messages of the
entry's first turn; its relevant tool is the ground truth's function.
"""

import json
import sys
from pathlib import Path


def load(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def split(name):
    server, dot, tool = name.partition(".")
    return (server, tool) if dot else ("functions", name)


def schema(params):
    # BFCL writes Python-flavoured JSON Schema ("dict", "float", "tuple"): mapped to JSON's.
    kinds = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}
    if isinstance(params, dict):
        out = {k: schema(v) for k, v in params.items()}
        if isinstance(out.get("type"), str):
            out["type"] = kinds.get(out["type"], out["type"])
        return out
    if isinstance(params, list):
        return [schema(v) for v in params]
    return params


def build(src, names, out):
    servers = {}
    tools = {}
    for name in names:
        for entry in load(src / f"{name}.json"):
            for f in entry["function"]:
                if f["name"] in tools:
                    continue
                server, tool = split(f["name"])
                t = {
                    "name": tool,
                    "description": f.get("description", ""),
                    "inputSchema": schema(f.get("parameters") or {"type": "object"}),
                }
                tools[f["name"]] = (server, tool)
                servers.setdefault(server, []).append(t)
    out.mkdir(parents=True, exist_ok=True)
    listed = [{"server": s, "description": "", "tools": ts} for s, ts in servers.items()]
    (out / "servers.json").write_text(json.dumps(listed, indent=0) + "\n")
    with open(out / "queries.jsonl", "w") as w:
        for name in names:
            answers = {a["id"]: a for a in load(src / "possible_answer" / f"{name}.json")}
            for entry in load(src / f"{name}.json"):
                turn = entry["question"][0]
                text = " ".join(m["content"] for m in turn if m["role"] == "user").strip()
                gt = answers[entry["id"]]["ground_truth"]
                relevant = [list(tools[next(iter(g))]) for g in gt]
                row = {"id": entry["id"], "query": text, "relevant": relevant}
                w.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(out, len(tools), "tools", len(servers), "servers")


def main():
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    build(src, ["BFCL_v4_simple_python", "BFCL_v4_multiple"], out / "bfcl")
    build(src, ["BFCL_v4_live_simple", "BFCL_v4_live_multiple"], out / "bfcl-live")


if __name__ == "__main__":
    main()
