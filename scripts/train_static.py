#!/usr/bin/env python3
"""Train the default tier's static token table for tool retrieval (issue 33, h33c).

The static tier is linear: a text's vector is the normalised mean of its tokens' rows
(`src/search/semantic.rs`), so the table can be trained with a contrastive loss in numpy.
Starting from the shipped table (`src/search/model/embeddings.safetensors`, dequantised),
each candidate is trained with InfoNCE between query vectors and tool vectors, every other
training tool a negative (the full softmax over the training tools: in-batch negatives with
the whole catalog as the batch). A tool's text is `fields::embedding_text` (the function
`scripts/encoder_compare.py` mirrors), cut to 3,000 characters and 512 tokens as
`StaticModel::embed` cuts it; a query is the text as typed.

Candidates, from least to most overfit-prone:
- `a`: one global linear map W (dims x dims, init identity) applied to every row (so also to
  tokens never seen in training); a text's vector is normalise(mean(rows) W).
- `b`: W and one scalar weight per token seen in training (init 1).
- `c`: W and free per-row updates D of the tokens seen in training, with an L2 pull to the
  original rows.
Each is a table of the same shape: rows' = (s * rows + D) W, stored int8 with one f32 scale
per row as `distill_static.py` stores it; the tokenizer is the shipped one, unchanged.

THE RULE: one training set, MetaTool (single 2,000 + multi 497 queries over its 199 tools),
chosen because most of the bench's weights were already picked on it (it is the least clean
set to report on) and it has the most queries per tool (12). Every choice below (candidate,
objective, regularisation, temperature, step count) is made on a validation split inside
MetaTool: 20% of its tools (39), picked by a seeded permutation, with the queries whose
relevant tools are all among them (495), ranked over all 199 tools; training uses the other
160 tools and the queries whose tools are all among those (1,797). The held-out sets
(reference, bfcl, bfcl live) are read only after every choice is made (not at all with
`--tune`). The final table is retrained on all of MetaTool for the step count picked.

Validation is by the fused score, not the cosine alone: `--lexical DIR` takes the engine's own
BM25F scores of each MetaTool query's first ten tools from the bench's words-alone dumps and
fuses them with the min-max cosine as `fusion::fuse` does (0.5 / 0.5); without it a rough
BM25 stand-in (`bm25_matrix`) is used. The real fused tier on the validation queries is
measured by building a `--split-only` table into the bench and scoring its dumps with
`--score-dumps`.

Screen (after the choices): cosine alone, no words, scored as `benches/retrieval/eval.rs`
scores (same tool name on another server counts), R@1 / R@5 / MRR@10 / nDCG@5 of the shipped
table and the picked one on every set. Deterministic: fixed seed, full-batch Adam, no
sampling after the split. Usage (from the repo root, in the git-ignored venv of
`distill_static.py` with `tokenizers`; creates it on first run):

    # the engine's lexical scores (shipped binary; words alone do not depend on the table)
    RETRIEVAL_DUMP=target/dump-bm25 RETRIEVAL_QUICK=1 RETRIEVAL_VARIANTS=bm25 <retrieval bench binary> --bench
    nice python3 scripts/train_static.py --lexical target/dump-bm25      # every candidate
    nice python3 scripts/train_static.py --lexical target/dump-bm25 --write /tmp/m
    # the fused tier on the validation queries, for a table trained on the split only
    nice python3 scripts/train_static.py --lexical target/dump-bm25 --only NAME \
        --split-only --tune --val-ids target/val-ids.txt --write /tmp/split
    #   (build /tmp/split into the bench, run it with RETRIEVAL_DUMP=target/dump-split, then)
    python3 scripts/train_static.py --score-dumps target/val-ids.txt target/dump-shipped target/dump-split

Measured 2026-12-03 (docs/search.md, "A static tier trained for tool retrieval"): not kept.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import distill_static as ds  # noqa: E402  (venv location and pins)

TOKENIZERS = "tokenizers==0.23.3"
MODEL_DIR = ROOT / "src" / "search" / "model"
SEED = 33
MAX_CHARS, MAX_TOKENS = 3000, 512
TRAINING = [("metatool single", "metatool", "queries.jsonl"), ("metatool multi", "metatool", "queries_multi.jsonl")]
HELD_OUT = [("reference", "reference", "queries.jsonl"), ("bfcl", "bfcl", "queries.jsonl"),
            ("bfcl live", "bfcl-live", "queries.jsonl")]
# The candidate grid: (name, kind, L2 on W - I, L2 on s - 1, L2 on D, temperature, Adam step
# for W, objective). Round 1 (`cos`: InfoNCE on the cosines) was fixed after one exploratory
# run (`a`, tau 0.05, step 2e-3, validated every 10 steps: validation R@5 peaked at step 10 and
# fell after, so the step was cut and the validation made finer); that run also printed the
# held-out sets, which no choice used. Round 1's pick raised validation R@5 by cosine alone
# but not the fused tier's on the same validation queries (bench dumps, `--score-dumps`), so
# round 2 (`fused`) trains and picks on the fused score: InfoNCE on 0.5 x BM25 / best + 0.5 x
# min-max cosine, as `fusion::fuse` weighs the static tier (BM25 approximated here by
# `bm25_matrix`). Every candidate is picked by the fused proxy on validation.
CANDIDATES = [
    ("a tau.05", "a", 0.0, 0.0, 0.0, 0.05, 5e-4, "cos"),
    ("a tau.05 regW10", "a", 10.0, 0.0, 0.0, 0.05, 5e-4, "cos"),
    ("a tau.1", "a", 0.0, 0.0, 0.0, 0.1, 5e-4, "cos"),
    ("b tau.05", "b", 0.0, 1.0, 0.0, 0.05, 5e-4, "cos"),
    ("c tau.05 pull10", "c", 0.0, 0.0, 10.0, 0.05, 5e-4, "cos"),
    ("c tau.05 pull100", "c", 0.0, 0.0, 100.0, 0.05, 5e-4, "cos"),
    ("fused a tau.05 regW10", "a", 10.0, 0.0, 0.0, 0.05, 5e-4, "fused"),
    ("fused a tau.02 regW10", "a", 10.0, 0.0, 0.0, 0.02, 5e-4, "fused"),
    ("fused b tau.05", "b", 10.0, 1.0, 0.0, 0.05, 5e-4, "fused"),
    ("fused c tau.05 pull10", "c", 10.0, 0.0, 10.0, 0.05, 5e-4, "fused"),
]


def ensure_venv() -> None:
    if Path(sys.prefix).resolve() == ds.VENV.resolve():
        return
    python = ds.VENV / "bin" / "python"
    if not python.exists():
        subprocess.check_call([sys.executable, "-m", "venv", str(ds.VENV)])
        subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", *ds.REQUIREMENTS])
    if subprocess.call([str(python), "-c", "import tokenizers"], stderr=subprocess.DEVNULL):
        subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", TOKENIZERS])
    os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


NAMES: dict = {}
STOP = set("""a an and are as at be by can could do for from get give has have how i if in is it
its me my of on or please show tell that the their them this to up us want was we what when where which
who will with would you your""".split())


def words(text: str):
    """A rough stand-in for the index's analyzers: lower-case runs of letters or digits, English
    stop words out, each cut to its first six characters (a coarse stemmer)."""
    import re

    return [w[:6] for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]


def bm25_matrix(query_texts, tool_docs, k1=1.2, b=0.75):
    """BM25 of each query against each tool, the tool's name words counted three times (a
    stand-in for the index's name boost), divided by the query's best (0 when no word
    matches): the lexical half of the fused score as `fusion::fuse` normalises it."""
    import numpy as np
    from collections import Counter

    docs = [Counter(words(name) * 3 + words(text)) for name, text in tool_docs]
    lengths = np.array([sum(d.values()) for d in docs], np.float64)
    avg = lengths.mean()
    df = Counter(w for d in docs for w in d)
    n = len(docs)
    out = np.zeros((len(query_texts), n), np.float32)
    for i, q in enumerate(query_texts):
        for w in set(words(q)):
            if w not in df:
                continue
            idf = np.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            tf = np.array([d.get(w, 0) for d in docs], np.float64)
            out[i] += (idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths / avg))).astype(np.float32)
        best = out[i].max()
        if best > 0:
            out[i] /= best
    return out


def load_set(folder, file):
    servers = json.loads((ROOT / "benches/data" / folder / "servers.json").read_text())
    from encoder_compare import embedding_text

    keys, texts = [], []
    for s in servers:
        for t in s["tools"]:
            keys.append((s["server"], t["name"]))
            texts.append(embedding_text(s["server"], t))
    NAMES[folder] = [t["name"] for s in servers for t in s["tools"]]
    queries = [json.loads(l) for l in (ROOT / "benches/data" / folder / file).read_text().splitlines() if l.strip()]
    return keys, texts, queries


def main() -> None:
    ensure_venv()
    if len(sys.argv) > 2 and sys.argv[1] == "--score-dumps":
        return score_dumps(sys.argv[3:], Path(sys.argv[2]))
    import numpy as np
    from safetensors.numpy import load_file, save_file
    from tokenizers import Tokenizer
    from encoder_compare import ranked_metrics

    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=150, help="most full-batch steps per candidate")
    parser.add_argument("--every", type=int, default=2, help="validate every this many steps")
    parser.add_argument("--tune", action="store_true", help="stop before the held-out sets are read")
    parser.add_argument("--split-only", action="store_true",
                        help="write the table trained on the training split (not retrained on all of MetaTool), "
                        "to judge the fused tier on the validation queries (--val-ids lists them)")
    parser.add_argument("--val-ids", type=Path, help="write the validation queries' ids here")
    parser.add_argument("--lexical", type=Path,
                        help="take MetaTool's lexical scores from the bench's words-alone dumps in this folder "
                        "(`RETRIEVAL_DUMP=DIR RETRIEVAL_QUICK=1 RETRIEVAL_VARIANTS=bm25`: each query's first ten, "
                        "the rest 0) instead of the BM25 stand-in")
    parser.add_argument("--only", help="comma-separated candidate names")
    parser.add_argument("--write", type=Path, help="write the val-picked table (retrained on all MetaTool)")
    args = parser.parse_args()
    print("rule: trained and every choice made on MetaTool (single + multi; 20% of its tools held for "
          "validation); reference, bfcl, bfcl live held out, printed only after the choices", flush=True)

    shipped = load_file(str(MODEL_DIR / "embeddings.safetensors"))
    E = shipped["embeddings"].astype(np.float32) * shipped["scales"][:, None]
    vocab, dims = E.shape
    tok = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))

    cache = {}

    def ids_of(texts):
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        for t, e in zip(todo, tok.encode_batch([t[:MAX_CHARS] for t in todo], add_special_tokens=False)):
            cache[t] = e.ids[:MAX_TOKENS]
        return [cache[t] for t in texts]

    def embed(table, texts):
        out = np.zeros((len(texts), dims), np.float32)
        for i, ids in enumerate(ids_of(texts)):
            if ids:
                v = table[ids].mean(0)
                n = np.linalg.norm(v)
                if n > 0:
                    out[i] = v / n
        return out

    lexical = {}

    def dumped_lexical(qs, tool_keys):
        """The engine's own BM25F scores of each query's first ten tools, over the best."""
        rows = {}
        for n in ("metatool single", "metatool multi"):
            for l in (args.lexical / f"{n}-bm25.jsonl").read_text().splitlines():
                if l.strip():
                    d = json.loads(l)
                    rows[d["id"]] = d["hits"]
        column = {k: j for j, k in enumerate(tool_keys)}
        out = np.zeros((len(qs), len(tool_keys)), np.float32)
        for i, q in enumerate(qs):
            hits = rows[q["id"]]
            best = max((h[1] or 0.0 for h in hits), default=0.0)
            for h in hits:
                j = column.get((h[11], h[12]))
                if j is not None and best > 0 and h[1]:
                    out[i, j] = h[1] / best
        return out

    def lex_of(name, keys, texts, queries):
        if args.lexical and name.startswith("metatool"):
            return dumped_lexical(queries, keys)
        if name not in lexical:
            names = [k[1] for k in keys]
            lexical[name] = bm25_matrix([q["query"] for q in queries], list(zip(names, texts)))
        return lexical[name]

    def minmax(C):
        lo, hi = C.min(1, keepdims=True), C.max(1, keepdims=True)
        return (C - lo) / (hi - lo + 1e-9)

    def screen(table, sets, fused=False):
        """Cosine alone, or (fused=True) the fused proxy: 0.5 x BM25 / best + 0.5 x the cosine
        min-max normalised over the catalog, as `fusion::fuse` weighs the static tier."""
        row = []
        for name, keys, texts, queries in sets:
            T, Q = embed(table, texts), embed(table, [q["query"] for q in queries])
            S = Q @ T.T
            if fused:
                S = 0.5 * lex_of(name, keys, texts, queries) + 0.5 * minmax(S)
            ranked = [[keys[j] for j in np.argsort(-S[i], kind="stable")[:10]] for i in range(len(queries))]
            row.append(ranked_metrics(ranked, queries))
        return row

    # --- MetaTool: the split ------------------------------------------------------------
    keys, tool_texts, single = load_set("metatool", "queries.jsonl")
    _, _, multi = load_set("metatool", "queries_multi.jsonl")
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(keys))
    val_tools = {keys[j] for j in order[: len(keys) // 5]}
    queries = single + multi
    def all_in(q, group):
        return all(tuple(r) in group for r in q["relevant"])
    train_tools = set(keys) - val_tools
    train_q = [q for q in queries if all_in(q, train_tools)]
    val_q = [q for q in queries if all_in(q, val_tools)]
    print(f"metatool split (seed {SEED}): train {len(train_tools)} tools / {len(train_q)} queries, "
          f"val {len(val_tools)} tools / {len(val_q)} queries (ranked over all {len(keys)} tools), "
          f"{len(queries) - len(train_q) - len(val_q)} multi queries across both left out", flush=True)

    def problem(tool_keys, qs):
        """Bag-of-tokens matrices over the active vocabulary for a training run."""
        tools = [tool_texts[keys.index(k)] for k in tool_keys]
        q_ids, t_ids = ids_of([q["query"] for q in qs]), ids_of(tools)
        active = np.unique(np.concatenate([np.array(i, np.int64) for i in q_ids + t_ids if i]))
        col = {int(t): c for c, t in enumerate(active)}
        def bag(id_lists):
            M = np.zeros((len(id_lists), len(active)), np.float32)
            for r, ids in enumerate(id_lists):
                for t in ids:
                    M[r, col[t]] += 1.0 / len(ids)
            return M
        index = {k: j for j, k in enumerate(tool_keys)}
        pos = np.zeros((len(qs), len(tool_keys)), bool)
        for i, q in enumerate(qs):
            for r in q["relevant"]:
                pos[i, index[tuple(r)]] = True
        return active, bag(q_ids), bag(t_ids), pos

    def train(kind, reg_w, reg_s, reg_d, tau, lr_w, objective, tool_keys, qs, steps, validate=None):
        """Full-batch Adam on InfoNCE; returns the parameters at each validated step."""
        active, Mq, Mt, pos = problem(tool_keys, qs)
        lex = None
        if objective == "fused":
            lex = (dumped_lexical(qs, tool_keys) if args.lexical else
                   bm25_matrix([q["query"] for q in qs], [(k[1], tool_texts[keys.index(k)]) for k in tool_keys]))
        R0 = E[active]
        params = {"W": np.eye(dims, dtype=np.float32)}
        if kind == "b":
            params["s"] = np.ones(len(active), np.float32)
        if kind == "c":
            params["D"] = np.zeros_like(R0)
        lr = {"W": lr_w, "s": 5 * lr_w, "D": lr_w * float(np.abs(R0).mean())}
        m = {k: np.zeros_like(v) for k, v in params.items()}
        v2 = {k: np.zeros_like(v) for k, v in params.items()}
        history = []
        for step in range(steps + 1):
            R = R0 * params["s"][:, None] if "s" in params else R0
            if "D" in params:
                R = R + params["D"]
            Xq, Xt = Mq @ R, Mt @ R
            W = params["W"]
            Vq, Vt = Xq @ W, Xt @ W
            nq = np.linalg.norm(Vq, axis=1, keepdims=True) + 1e-9
            nt = np.linalg.norm(Vt, axis=1, keepdims=True) + 1e-9
            Uq, Ut = Vq / nq, Vt / nt
            C = Uq @ Ut.T
            if lex is not None:
                lo, hi = C.min(1, keepdims=True), C.max(1, keepdims=True)
                span = hi - lo + 1e-9
                S = (0.5 * lex + 0.5 * (C - lo) / span) / tau
            else:
                S = C / tau
            S -= S.max(1, keepdims=True)
            P = np.exp(S)
            P /= P.sum(1, keepdims=True)
            Ppos = np.where(pos, P, 0)
            sp = Ppos.sum(1, keepdims=True)
            loss = float(-np.log(sp + 1e-12).mean())
            if step % args.every == 0 and validate:
                history.append((step, loss, validate(params, active)))
            if step == steps:
                break
            dS = (P - Ppos / sp) / len(qs)
            if lex is not None:
                # Through the min-max: each cosine, and the best and worst of each query's.
                dV = 0.5 * dS / tau
                dC = dV / span
                rows = np.arange(len(qs))
                np.add.at(dC, (rows, C.argmax(1)), (dV * -(C - lo) / span ** 2).sum(1))
                np.add.at(dC, (rows, C.argmin(1)), (dV * (C - hi) / span ** 2).sum(1))
            else:
                dC = dS / tau
            dUq, dUt = dC @ Ut, dC.T @ Uq
            dVq = (dUq - Uq * (dUq * Uq).sum(1, keepdims=True)) / nq
            dVt = (dUt - Ut * (dUt * Ut).sum(1, keepdims=True)) / nt
            grads = {"W": Xq.T @ dVq + Xt.T @ dVt + 2 * reg_w * (W - np.eye(dims, dtype=np.float32)) / dims}
            if len(params) > 1:
                dR = Mq.T @ (dVq @ W.T) + Mt.T @ (dVt @ W.T)
                if "s" in params:
                    grads["s"] = (dR * R0).sum(1) + 2 * reg_s * (params["s"] - 1) / len(active)
                if "D" in params:
                    # The pull is relative to the rows' scale: reg_d x mean over rows of |D|^2 / |R0|^2.
                    scale = (R0 ** 2).sum(1, keepdims=True) + 1e-9
                    grads["D"] = dR + 2 * reg_d * params["D"] / scale / len(active)
            for k, g in grads.items():
                m[k] = 0.9 * m[k] + 0.1 * g
                v2[k] = 0.999 * v2[k] + 0.001 * g * g
                mh, vh = m[k] / (1 - 0.9 ** (step + 1)), v2[k] / (1 - 0.999 ** (step + 1))
                params[k] = params[k] - lr[k] * mh / (np.sqrt(vh) + 1e-8)
        return params, active, history

    def full_table(params, active):
        T = E.copy()
        if "s" in params:
            T[active] *= params["s"][:, None]
        if "D" in params:
            T[active] += params["D"]
        return T @ params["W"]

    training_sets = [(name, keys, tool_texts, single if "single" in name else multi) for name, *_ in TRAINING]
    val_set = [("metatool val", keys, tool_texts, val_q)]

    def fmt(m):
        return " / ".join(f"{x:.3f}" for x in m)

    base_val, base_fused = screen(E, val_set)[0], screen(E, val_set, fused=True)[0]
    print(f"shipped table: val cosine {fmt(base_val)}, fused proxy {fmt(base_fused)}", flush=True)
    picked = []
    for name, kind, rw, rs, rd, tau, lr_w, objective in CANDIDATES:
        if args.only and name not in args.only.split(","):
            continue
        started = time.perf_counter()
        _, _, history = train(kind, rw, rs, rd, tau, lr_w, objective, sorted(train_tools), train_q, args.steps,
                              validate=lambda p, a: (screen(full_table(p, a), val_set, fused=True)[0],
                                                     screen(full_table(p, a), val_set)[0]))
        # Picked on the fused proxy's validation R@5, then MRR@10; the earliest step among ties.
        best = max(history, key=lambda h: (round(h[2][0][1], 4), round(h[2][0][2], 4), -h[0]))
        curve = ", ".join(f"{s}:{m[0][1]:.3f}" for s, _, m in history[:: max(1, len(history) // 8)])
        print(f"{name:22} best step {best[0]:3} loss {best[1]:.3f} val fused proxy {fmt(best[2][0])}, "
              f"cosine {fmt(best[2][1])} ({time.perf_counter() - started:.0f} s; fused proxy val R@5 by step "
              f"{curve})", flush=True)
        picked.append((best[2][0][1], best[2][0][2], name, kind, rw, rs, rd, tau, lr_w, objective, best[0]))
    if not picked:
        return
    picked.sort(reverse=True)
    _, _, name, kind, rw, rs, rd, tau, lr_w, objective, steps = picked[0]
    print(f"picked on metatool val: {name}, {steps} steps", flush=True)
    if args.val_ids:
        args.val_ids.write_text("".join(q["id"] + "\n" for q in val_q))
    if args.split_only:
        print("--split-only: trained on the training split only", flush=True)
        params, active, _ = train(kind, rw, rs, rd, tau, lr_w, objective, sorted(train_tools), train_q, steps)
    else:
        print(f"retrained on all of metatool ({len(keys)} tools, {len(queries)} queries)", flush=True)
        params, active, _ = train(kind, rw, rs, rd, tau, lr_w, objective, keys, queries, steps)
    table = full_table(params, active)

    # --- only now: every set, held-out ones included (not with --tune) -------------------
    held = [] if args.tune else [(n, *load_set(f, q)) for n, f, q in HELD_OUT]
    rows_before = screen(E, training_sets + held)
    rows_after = screen(table, training_sets + held)
    print("cosine alone, R@1 / R@5 / MRR@10 / nDCG@5 (training set marked *):")
    for (n, *_), b, a in zip(training_sets + held, rows_before, rows_after):
        mark = "*" if n.startswith("metatool") else " "
        print(f"{mark} {n:16} shipped {fmt(b)} | trained {fmt(a)} | R@5 {a[1] - b[1]:+.3f}", flush=True)
    if args.write:
        scale = np.abs(table).max(1) / 127.0
        scale[scale == 0] = 1.0
        q = np.clip(np.rint(table / scale[:, None]), -127, 127).astype(np.int8)
        args.write.mkdir(parents=True, exist_ok=True)
        save_file(
            {"embeddings": q, "scales": scale.astype(np.float32)},
            str(args.write / "embeddings.safetensors"),
            metadata={"about": shipped_about() + f"; then trained for tool retrieval on MetaTool single + multi "
                      f"(scripts/train_static.py: {name}, {steps} steps, seed {SEED}), int8 per-row scale"},
        )
        (args.write / "tokenizer.json").write_bytes((MODEL_DIR / "tokenizer.json").read_bytes())
        print(f"wrote {args.write} ({q.shape[0]} tokens x {q.shape[1]} dims)", flush=True)


def score_dumps(directories, val_ids: Path) -> None:
    """The fused tier on the MetaTool validation queries only: R@1 / R@5 / MRR@10 / nDCG@5 from
    the retrieval bench's dumps (`RETRIEVAL_DUMP=DIR RETRIEVAL_QUICK=1 RETRIEVAL_VARIANTS=fused`,
    built with a table from `--split-only`); reads no other set's dump."""
    import math

    ids = set(val_ids.read_text().split())
    for d in directories:
        out = []
        for name in ("metatool single", "metatool multi"):
            lines = [json.loads(l) for l in (Path(d) / f"{name}-fused.jsonl").read_text().splitlines() if l]
            out += [l for l in lines if l["id"] in ids]
        queries = {}
        for _, folder, file in TRAINING:
            for l in (ROOT / "benches/data" / folder / file).read_text().splitlines():
                if l.strip():
                    q = json.loads(l)
                    queries[q["id"]] = q
        r1 = r5 = mrr = ndcg = 0.0
        for l in out:
            rel = [bool(h[9]) for h in l["hits"]]
            n = len(queries[l["id"]]["relevant"])
            r1 += sum(rel[:1]) / n
            r5 += sum(rel[:5]) / n
            first = next((k for k, h in enumerate(rel[:10]) if h), None)
            mrr += 0 if first is None else 1 / (first + 1)
            ideal = sum(1 / math.log2(k + 2) for k in range(min(n, 5)))
            ndcg += sum(1 / math.log2(k + 2) for k, h in enumerate(rel[:5]) if h) / ideal
        k = max(len(out), 1)
        print(f"fused, metatool val ({len(out)} queries) {d}: "
              f"{r1 / k:.3f} / {r5 / k:.3f} / {mrr / k:.3f} / {ndcg / k:.3f}", flush=True)


def shipped_about() -> str:
    from safetensors import safe_open

    with safe_open(str(MODEL_DIR / "embeddings.safetensors"), "np") as f:
        return (f.metadata() or {}).get("about", "")


if __name__ == "__main__":
    main()
