#!/usr/bin/env python3
"""Issue 30 experiment: does a MEANING feature catch poisoned tool definitions on new
phrasing better than the bag-of-words learned rule?

Reads what `cargo bench --bench trust -- --dump` writes to target/trust-meaning/: every
definition's sentences (benches/trust/meaning.rs: the texts the rules read, cut into sentences
and clauses) and each sentence's vector from the built-in static embedding model
(src/search/semantic.rs, MiniLM distilled to a token table, 256 dims). A definition's
score is the highest score of its sentences: a poisoned description is a tool description
with one sentence addressed to the model.

Scorers (each fitted only on the training sets, as benches/trust/train.rs does):
  lr   logistic regression on [sentence vector, field one-hot], multiple-instance: every
       sentence of a real tool (and of a poisoned case's benign twin) is negative; a
       poisoned case's sentences found in no training real tool start positive, then each
       round keeps as positive only the top-scoring ones of each case (MI-SVM style).
  knn  nearest neighbours: a sentence's score is its mean cosine to the k nearest
       positive sentences minus that to the k nearest negative ones.

Choices (scorer, its settings) and the threshold come from 5-fold cross-validation over
the training sets only (folds as train.rs draws them: a real server's tools together, each
poisoned case and its twin together); threshold = the lowest score keeping at most 0.5% of
real training definitions over it, out of fold.

  target/venv/bin/python scripts/trust_meaning.py            # CV sweep, training sets only
  target/venv/bin/python scripts/trust_meaning.py --heldout  # + the one look at held-out sets

The held-out sets (BFCL, BFCL live, fourth-*.json) were looked at once, with the scorer the
sweep chose (docs/benchmarks.md, "A meaning feature"). A first sweep with a wider grid (L2
1e-3, top 2, k 1 and 10) was stopped after 14 minutes on the shared machine before it
printed; the grid below is what was measured. numpy 2.2.6 (pip, in target/venv).
"""
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DIR = ROOT / "target" / "trust-meaning"
DIMS = 256
FIELDS = ["name", "description", "title", "property", "schema"]
MAX_FALSE = 0.005
FOLDS = 5
SEED = 30
HELDOUT = {"BFCL", "BFCL live", "fourth set", "fourth-poisoned.json"}


def load():
    items = [json.loads(line) for line in open(DIR / "items.jsonl")]
    vectors = np.fromfile(DIR / "vectors.f32", dtype="<f4").reshape(-1, DIMS)
    return items, vectors


def instance_matrix(items, vectors, fields):
    """Rows of every sentence: [vector, field one-hot]; owner item index per row."""
    rows, owner, texts = [], [], []
    for i, it in enumerate(items):
        for field, text, row in it["sentences"]:
            rows.append(row)
            owner.append(i)
            texts.append(text)
    x = vectors[np.array(rows, dtype=np.int64)] if rows else np.zeros((0, DIMS), "f4")
    if fields:
        onehot = np.zeros((len(rows), len(FIELDS)), "f4")
        k = 0
        for it in items:
            for field, _, _ in it["sentences"]:
                onehot[k, FIELDS.index(field)] = 1.0
                k += 1
        x = np.hstack([x, onehot])
    return x.astype(np.float64), np.array(owner, dtype=np.int64), texts


def folds(items, k=FOLDS, seed=SEED):
    rng = np.random.default_rng(seed)
    fold_of = {}
    for poisoned in (True, False):
        groups = sorted({it["group"] for it in items if it["poisoned"] == poisoned and it["group"] not in fold_of})
        order = rng.permutation(len(groups))
        for n, g in enumerate(order):
            fold_of[groups[g]] = n % k
    return np.array([fold_of[it["group"]] for it in items])


def fit_lr(x, y, w, l2, epochs=300, lr=0.05):
    """Weighted logistic regression, full-batch Adam from zero: deterministic."""
    n, d = x.shape
    theta = np.zeros(d + 1)
    m = np.zeros(d + 1)
    v = np.zeros(d + 1)
    xb = np.hstack([x, np.ones((n, 1))])
    wsum = w.sum()
    for t in range(1, epochs + 1):
        z = xb @ theta
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        g = xb.T @ ((p - y) * w) / wsum
        g[:-1] += l2 * theta[:-1]
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        theta -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return theta


def lr_scores(theta, x):
    z = x @ theta[:-1] + theta[-1]
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def bag_max(scores, owner, n):
    out = np.full(n, -np.inf)
    np.maximum.at(out, owner, scores)
    return out


class LR:
    def __init__(self, l2, rounds, top, fields):
        self.l2, self.rounds, self.top, self.fields = l2, rounds, top, fields

    def __repr__(self):
        return f"lr(l2={self.l2}, rounds={self.rounds}, top={self.top}, fields={self.fields})"

    def fit(self, items, x, owner, texts):
        real_texts = {texts[r] for r in range(len(texts)) if not items[owner[r]]["poisoned"]}
        neg = np.array([not items[o]["poisoned"] for o in owner])
        cand = np.array([items[o]["poisoned"] and texts[r] not in real_texts for r, o in enumerate(owner)])
        pos = cand.copy()
        for rnd in range(self.rounds + 1):
            use = neg | pos
            y = pos[use].astype(float)
            npos, nneg = max(y.sum(), 1), max((1 - y).sum(), 1)
            w = np.where(y == 1, 0.5 / npos, 0.5 / nneg) * len(y)
            self.theta = fit_lr(x[use], y, w, self.l2)
            if rnd == self.rounds:
                break
            # Keep, in each poisoned case, its top-scoring candidate sentences positive.
            s = lr_scores(self.theta, x)
            pos = np.zeros_like(cand)
            by_case = {}
            for r in np.nonzero(cand)[0]:
                by_case.setdefault(owner[r], []).append(r)
            for rows in by_case.values():
                rows.sort(key=lambda r: -s[r])
                for r in rows[: self.top]:
                    pos[r] = True
        return self

    def score(self, x):
        return lr_scores(self.theta, x)


class KNN:
    def __init__(self, k):
        self.k = k

    def __repr__(self):
        return f"knn(k={self.k})"

    def fit(self, items, x, owner, texts):
        real_texts = {texts[r] for r in range(len(texts)) if not items[owner[r]]["poisoned"]}
        neg = np.array([not items[o]["poisoned"] for o in owner])
        pos = np.array([items[o]["poisoned"] and texts[r] not in real_texts for r, o in enumerate(owner)])
        self.pos = x[pos][:, :DIMS].astype(np.float32)
        self.neg = x[neg][:, :DIMS].astype(np.float32)
        return self

    def score(self, x):
        x = x[:, :DIMS].astype(np.float32)
        out = np.empty(len(x))
        for a in range(0, len(x), 2048):
            b = x[a : a + 2048]
            sp = np.partition(b @ self.pos.T, -self.k, axis=1)[:, -self.k :].mean(axis=1)
            sn = np.partition(b @ self.neg.T, -self.k, axis=1)[:, -self.k :].mean(axis=1)
            out[a : a + 2048] = sp - sn
        return out


def threshold(items, scores):
    real = np.sort([s for it, s in zip(items, scores) if not it["poisoned"] and not it["made"]])[::-1]
    allowed = int(np.floor(MAX_FALSE * len(real)))
    if allowed == 0:
        return (real[0] + 1.0) / 2.0
    return (real[allowed - 1] + real[allowed]) / 2.0


def out_of_fold(model_of, items, x, owner, texts, fold):
    scores = np.full(len(items), -np.inf)
    row_fold = fold[owner]
    for f in range(FOLDS):
        tr_items = [i for i in range(len(items)) if fold[i] != f]
        rows = np.nonzero(row_fold != f)[0]
        remap = {i: n for n, i in enumerate(tr_items)}
        model = model_of().fit([items[i] for i in tr_items], x[rows],
                               np.array([remap[o] for o in owner[rows]]), [texts[r] for r in rows])
        test = np.nonzero(row_fold == f)[0]
        s = model.score(x[test])
        np.maximum.at(scores, owner[test], s)
    return scores


def report(label, items, flagged, extra=""):
    sets = {}
    for it, f in zip(items, flagged):
        if it["made"] or not it["scored"] and it["poisoned"]:
            continue
        key = it["set"]
        a = sets.setdefault(key, [0, 0])
        a[0] += 1
        a[1] += bool(f)
    print(f"  {label}{extra}")
    for key, (n, k) in sets.items():
        print(f"    {key:32s} {k:4d}/{n:4d} ({100 * k / n:5.1f}%)")


def summary(items, flagged):
    real = [f for it, f in zip(items, flagged) if not it["poisoned"] and not it["made"]]
    pois = [f for it, f in zip(items, flagged) if it["poisoned"] and it["scored"]]
    return sum(pois), len(pois), sum(real), len(real)


def learned_threshold(items):
    real = np.sort([it["oof"] for it in items if not it["poisoned"] and not it["made"]])[::-1]
    allowed = int(np.floor(MAX_FALSE * len(real)))
    return (real[allowed - 1] + real[allowed]) / 2.0


def main():
    items, vectors = load()
    train = [it for it in items if it["trained"] is not None and (it["scored"] or not it["poisoned"])]
    assert not any(it["set"] in HELDOUT for it in train)
    fold = folds(train)
    lt = learned_threshold(train)
    base = np.array([it["patterns"] or it["oof"] >= lt for it in train])
    c, n, r, m = summary(train, base)
    print(f"training: {len(train)} definitions; patterns + learned (out of fold, threshold {lt:.4f}): "
          f"caught {c}/{n}, real flagged {r}/{m}")
    candidates = []
    for fields in (True, False):
        x, owner, texts = instance_matrix(train, vectors, fields)
        grid = [LR(l2, rounds, top, fields) for l2 in (1e-4,) for rounds, top in ((0, 0), (2, 1))]
        grid += [KNN(k) for k in (3,)] if not fields else []
        for proto in grid:
            s = out_of_fold(lambda p=proto: clone(p), train, x, owner, texts, fold)
            t = threshold(train, s)
            mine = s >= t
            c1, n1, r1, m1 = summary(train, mine)
            c2, _, r2, _ = summary(train, mine | base)
            print(f"{proto!r:45s} thr {t:+.4f}: alone {c1}/{n1} ({100*c1/n1:.1f}%) real {r1}/{m1}; "
                  f"with patterns+learned {c2}/{n1} ({100*c2/n1:.1f}%) real {r2}/{m1} ({100*r2/m1:.2f}%)",
                  flush=True)
            candidates.append((c2, -r2, c1, repr(proto), proto, t))
    whole_definition(train, vectors, fold, base)
    candidates.sort(key=lambda c: (c[0], c[1], c[2]), reverse=True)
    best = candidates[0]
    print(f"chosen by CV: {best[3]} (CV union catch {best[0]}, real {-best[1]})")
    if "--heldout" not in sys.argv:
        return
    heldout_look(items, vectors, train, best[4])


def whole_definition(train, vectors, fold, base):
    """Diagnostic, not a candidate (added after the held-out look): one vector a definition
    (the normalised mean of its sentence vectors) instead of the highest sentence score."""
    x = np.zeros((len(train), DIMS))
    for i, it in enumerate(train):
        rows = [r for _, _, r in it["sentences"]]
        if rows:
            v = vectors[rows].mean(axis=0)
            x[i] = v / (np.linalg.norm(v) + 1e-9)
    y = np.array([float(it["poisoned"]) for it in train])
    for l2 in (1e-3, 1e-4):
        s = np.zeros(len(train))
        for f in range(FOLDS):
            tr = fold != f
            w = np.where(y[tr] == 1, 0.5 / y[tr].sum(), 0.5 / (1 - y[tr]).sum()) * tr.sum()
            s[~tr] = lr_scores(fit_lr(x[tr], y[tr], w, l2, epochs=600), x[~tr])
        t = threshold(train, s)
        c1, n1, r1, m1 = summary(train, s >= t)
        c2, _, r2, _ = summary(train, (s >= t) | base)
        print(f"(diagnostic) whole-definition vector LR l2={l2} thr {t:+.4f}: alone {c1}/{n1} "
              f"({100*c1/n1:.1f}%) real {r1}/{m1}; with patterns+learned {c2}/{n1} real {r2}/{m1}",
              flush=True)


def clone(p):
    q = object.__new__(type(p))
    q.__dict__.update({k: v for k, v in vars(p).items() if k in ("l2", "rounds", "top", "fields", "k")})
    return q


def heldout_look(items, vectors, train, proto):
    """The one look: fit on all training sets, threshold by CV as above, score held-out."""
    x, owner, texts = instance_matrix(train, vectors, proto.__dict__.get("fields", False))
    fold = folds(train)
    s = out_of_fold(lambda: clone(proto), train, x, owner, texts, fold)
    t = threshold(train, s)
    model = clone(proto).fit(train, x, owner, texts)
    held = [it for it in items if it["set"] in HELDOUT]
    hx, ho, _ = instance_matrix(held, vectors, proto.__dict__.get("fields", False))
    hs = bag_max(model.score(hx), ho, len(held))
    mine = hs >= t
    both = np.array([it["patterns"] or it["learned"] for it in held])
    print(f"\nHELD-OUT LOOK: {proto!r}, threshold {t:.4f} (CV on training sets)")
    report("meaning alone", held, mine)
    report("patterns + learned (today)", held, both)
    report("patterns + learned + meaning", held, mine | both)
    for it, f, sc in zip(held, mine, hs):
        if f and not it["poisoned"]:
            print(f"    flagged real: {it['name']} {sc:.3f}")


if __name__ == "__main__":
    main()
