"""Fits the confidence model of `src/search/confidence.rs` on one set and reports it on all.

Input: the per-query dumps of `benches/retrieval` (`RETRIEVAL_DUMP=<dir>`, one file per set
and variant, `<set>-<variant>.jsonl`: each query's first ten hits with the scores each hit
carries and whether it is relevant). Usage (numpy in any venv):

    python3 scripts/fit_confidence.py <dump dir> <variant> <tuning set> [fit threshold]

Fits a logistic regression (Newton steps, light L2) on the first five hits of every query
of the tuning set, then prints, for every set: R@5, the false-match rate FM (each query's
relevant tools taken out of its ranking: does a hit still reach the threshold?) and gR@5
(R@5 when a query below the threshold returns nothing), at thresholds from 0.05 to 0.6,
and the expected calibration error. `FEATURES` masks features out. The features are computed exactly as in
`confidence.rs` (keep the two in step).
"""

import json
import math
import os
import sys
from pathlib import Path

import numpy as np

TOP = 5


def rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def features(hits, words, named_bonus):
    """Per hit: [1, cos, cos above the best other, ln1p(bm25), that above the best other,
    ln1p(words), named share]; hits are the dump's rows."""
    cos = [h[3] if h[3] is not None else 0.0 for h in hits]
    lex = [math.log1p(max(h[1], 0.0)) if h[1] is not None else 0.0 for h in hits]

    def above(xs):
        out = []
        for i, x in enumerate(xs):
            others = xs[:i] + xs[i + 1:]
            out.append(x - max(others) if others else x)
        return out

    ca, la = above(cos), above(lex)
    out = []
    for i, h in enumerate(hits):
        named = min(max(h[8] / named_bonus, 0.0), 1.0) if named_bonus > 0 else 0.0
        out.append([1.0, cos[i], ca[i], lex[i], la[i], math.log1p(words), named])
    return out


# FEATURES="1,1,0,1,1,1,1": which features to fit (0: weight held at 0), for comparing.
MASK = np.array([float(v) for v in os.environ.get("FEATURES", "1,1,1,1,1,1,1").split(",")])


def fit(x, y, l2=1e-2, steps=30):
    x = x * MASK
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        g = x.T @ (p - y) + l2 * w
        h = (x.T * (p * (1 - p))) @ x + l2 * np.eye(len(w))
        w -= np.linalg.solve(h, g)
    return w * MASK


def confidences(w, hits, words, named_bonus):
    if not hits:
        return []
    x = np.array(features(hits, words, named_bonus))
    return list(1 / (1 + np.exp(-x @ w)))


def judge(queries, w, threshold, named_bonus):
    r5 = fm = gated = 0.0
    bins = [[0, 0.0, 0] for _ in range(10)]
    for q in queries:
        hits = q["hits"]
        rel = [h[9] for h in hits]
        found = sum(rel[:TOP]) / max(q["relevant"], 1)
        conf = confidences(w, hits, q["words"], named_bonus)
        fits = any(c >= threshold for c in conf[:TOP])
        r5 += found
        if fits:
            gated += found
        rest = [h for h in hits if not h[9]]
        if any(c >= threshold for c in confidences(w, rest, q["words"], named_bonus)[:TOP]):
            fm += 1
        for c, r in list(zip(conf, rel))[:TOP]:
            b = bins[min(int(c * 10), 9)]
            b[0] += 1
            b[1] += c
            b[2] += r
    n = max(len(queries), 1)
    judged = max(sum(b[0] for b in bins), 1)
    ece = sum(abs(b[1] - b[2]) for b in bins) / judged
    return r5 / n, fm / n, gated / n, ece


def main():
    folder, variant, tuning = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    named_bonus = 1.0 if variant.startswith("m") else 0.0
    sets = {p.name[: -len(f"-{variant}.jsonl")]: rows(p)
            for p in sorted(folder.glob(f"*-{variant}.jsonl"))}
    x, y = [], []
    for q in sets[tuning]:
        hits = q["hits"]
        for f, h in list(zip(features(hits, q["words"], named_bonus), hits))[:TOP]:
            x.append(f)
            y.append(1.0 if h[9] else 0.0)
    w = fit(np.array(x), np.array(y))
    print(f"{variant}: weights fitted on {tuning} ({len(y)} hits):",
          ",".join(f"{v:.3f}" for v in w))
    thresholds = [float(sys.argv[4])] if len(sys.argv) > 4 else [
        0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6]
    for t in thresholds:
        line = [f"fit {t:.2f}"]
        for name, queries in sets.items():
            r5, fm, gated, ece = judge(queries, w, t, named_bonus)
            line.append(f"{name}: R@5 {r5:.3f} FM {fm:.3f} gR@5 {gated:.3f} "
                        f"(-{r5 - gated:.3f}) ECE {ece:.3f}")
        print(" | ".join(line))


if __name__ == "__main__":
    main()
