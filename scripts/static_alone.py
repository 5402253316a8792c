"""Static vectors alone, no words: R@1 / R@5 on every retrieval set for each static model
directory given (`embeddings.safetensors` + `tokenizer.json`, as `scripts/distill_static.py`
writes them). A quick screen of a distillation before building it into the binary: a tool's
text is approximated as the index builds it (name parts, title, description, parameter names
and texts, server name). Run in the distill venv (numpy, safetensors, tokenizers):

    .venv-distill/bin/python scripts/static_alone.py src/search/model /tmp/candidate
"""
import json, sys, re
from pathlib import Path
import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[1]
def model(d):
    t = load_file(str(Path(d) / "embeddings.safetensors"))
    emb = t["embeddings"].astype(np.float32) * t["scales"][:, None]
    tok = Tokenizer.from_file(str(Path(d) / "tokenizer.json"))
    return emb, tok

def embed(m, texts):
    emb, tok = m
    out = np.zeros((len(texts), emb.shape[1]), np.float32)
    for i, e in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        ids = e.ids[:512]
        if ids:
            v = emb[ids].mean(0)
            out[i] = v / (np.linalg.norm(v) + 1e-9)
    return out

def split_name(n):
    n = re.sub(r"([a-z])([A-Z])", r"\1 \2", n)
    return re.sub(r"[_\-./]", " ", n)

def tool_text(server, t):
    parts = [split_name(t["name"]), t.get("title") or "", t.get("description") or ""]
    for k, p in (t.get("inputSchema", {}).get("properties") or {}).items():
        parts.append(split_name(k))
        if isinstance(p, dict) and p.get("description"):
            parts.append(p["description"])
    parts.append(server)
    return " ".join(parts)[:3000]

sets = [("metatool single", "metatool", "queries.jsonl"), ("metatool multi", "metatool", "queries_multi.jsonl"),
        ("reference", "reference", "queries.jsonl"), ("bfcl", "bfcl", "queries.jsonl"), ("bfcl live", "bfcl-live", "queries.jsonl")]
models = {p: model(p) for p in sys.argv[1:]}
for name, d, f in sets:
    servers = json.loads((ROOT / "benches/data" / d / "servers.json").read_text())
    keys, texts = [], []
    for s in servers:
        for t in s["tools"]:
            keys.append((s["server"], t["name"])); texts.append(tool_text(s["server"], t))
    qs = [json.loads(l) for l in (ROOT / "benches/data" / d / f).read_text().splitlines() if l.strip()]
    row = [f"{name:16}"]
    for p, m in models.items():
        T = embed(m, texts); Q = embed(m, [q["query"] for q in qs])
        S = Q @ T.T
        r1 = r5 = 0.0
        for i, q in enumerate(qs):
            top = np.argsort(-S[i])[:5]
            rel = {tuple(r) for r in q["relevant"]}
            got = [keys[j] in rel for j in top]
            r1 += got[0]; r5 += sum(got) / len(rel)
        row.append(f"{Path(p).name}: R@1 {r1/len(qs):.3f} R@5 {r5/len(qs):.3f}")
    print(" | ".join(row), flush=True)
