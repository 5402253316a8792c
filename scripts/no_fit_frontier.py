"""The "no tool fits" signal's frontier (issue 33, item 5), from `benches/retrieval` dumps.

    python3 scripts/no_fit_frontier.py <dump dir> <variant> <tuning set> <dump dir with foreign-<variant>.jsonl>

Dumps: `RETRIEVAL_DUMP=<dir> cargo bench --bench retrieval` (every set), and
`RETRIEVAL_QUICK=1 RETRIEVAL_FOREIGN=1 RETRIEVAL_DUMP=<dir2> <bench binary> foreign` (the
foreign requests: MetaTool tasks over the 50 reference tools, which no tool serves).

For each query two lists are judged: as ranked ("served") and with its relevant tools taken
out ("taken out", the bench's FM protocol). A signal s(list) says "fits" when s >= t. Printed
per set: the floor any signal over the confidences of the first five hits meets (queries whose
tool is in the first five but not the surest of them: to keep R@5 such a query must pass, and
with its tool taken out the surer wrong hit is still there), then for each signal (the shipped
per-hit confidence `conf`, `nconf` with the bench's "near" gate, single features, and
query-level logistic models fitted on the tuning set to tell served from taken-out lists) the
threshold picked on the tuning set (the highest losing at most 1 point of R@5 there) and, on
every set, FM and the R@5 lost, plus the foreign false-match rate. numpy only.
"""
import json, sys, math
from pathlib import Path
import numpy as np

def load(d, variant):
    out = {}
    for f in sorted(Path(d).glob(f"*-{variant}.jsonl")):
        out[f.stem.rsplit('-', 1)[0]] = [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
    return out


def floor(qs):
    """Share of queries whose relevant tool is in the first five but a wrong hit there is at
    least as sure (the dump's confidence, last column)."""
    forced = 0
    for q in qs:
        top = q["hits"][:5]
        if any(h[9] for h in top):
            cr = max(h[10] for h in top if h[9])
            cn = max((h[10] for h in top if not h[9]), default=-1.0)
            forced += cn >= cr
    return forced / max(len(qs), 1)


def feats(hits, q):
    """hits: rows [score, lex, lexrank, cos, cosrank, plex, pvec, pstat, pnamed, rel, conf]; recomputed relative among `hits`."""
    top = hits[:5]
    if not top:
        return None
    cos = [h[3] if h[3] is not None else 0.0 for h in hits]
    lex = [math.log1p(max(h[1], 0.0)) if h[1] is not None else 0.0 for h in hits]
    sc = [h[0] for h in hits]
    c5 = cos[:5]; l5 = lex[:5]
    ci = int(np.argmax(cos)); li = int(np.argmax(lex))
    cs = sorted(cos, reverse=True) + [0, 0]; ls = sorted(lex, reverse=True) + [0, 0]
    ss = sc + [0, 0]
    near = [h for h in top if (h[3] or 0) >= 0.2 or h[8] > 0]
    return dict(
        conf=max(h[10] for h in top),
        nconf=max((h[10] for h in near), default=0.0),
        cos1=cs[0], cosm=cs[0] - cs[1], lex1=ls[0], lexm=ls[0] - ls[1],
        agree=float(ci == li),
        agree5=float(ci < 5 and li < 5 and ci == li),
        top_cos=cos[0], top_lex=lex[0],
        top_is_cosbest=float(ci == 0), top_is_lexbest=float(li == 0),
        smargin=(ss[0] - ss[1]),
        s1=ss[0],
        words=math.log1p(q["words"]),
        named=float(q["named"] > 0),
    )

def lists(qs):
    """(served feats, taken-out feats, recall contribution) per query."""
    rows = []
    for q in qs:
        hits = q["hits"]
        rel = [h[9] for h in hits]
        found = sum(1 for x in rel[:5] if x) / max(q["relevant"], 1)
        rest = [h for h in hits if not h[9]]
        fs, ft = feats(hits, q), feats(rest, q)
        if fs is None or ft is None:
            continue
        rows.append((fs, ft, found))
    return rows

def judge(rows, s, t):
    n = len(rows)
    r5 = sum(r[2] for r in rows) / n
    g = sum(r[2] for r in rows if s(r[0]) >= t) / n
    fm = sum(1 for r in rows if s(r[1]) >= t) / n
    return r5, g, fm

def best_t(rows, s, loss=0.01):
    vals = sorted(set(round(s(r[0]), 6) for r in rows))
    lo = None
    # highest t with r5 - g <= loss
    cand = np.quantile([s(r[0]) for r in rows], np.linspace(0, 0.6, 241))
    best = (min(cand), )
    for t in sorted(cand):
        r5, g, fm = judge(rows, s, t)
        if r5 - g <= loss:
            best = (t,)
    return best[0]

def logistic_fit(X, y, l2=1e-2, steps=40):
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-X @ w))
        g = X.T @ (p - y) + l2 * w
        H = (X.T * (p * (1 - p))) @ X + l2 * np.eye(len(w))
        w -= np.linalg.solve(H, g)
    return w

if __name__ == "__main__":
    d, variant, tune = sys.argv[1], sys.argv[2], sys.argv[3]
    dumps = load(d, variant)
    for k, qs in dumps.items():
        print(f"{k}: floor of FM at no R@5 lost, per-hit confidences: {floor(qs):.3f}")
    sets = {k: lists(v) for k, v in dumps.items()}
    foreign = []
    for q in load(sys.argv[4], variant)["foreign"]:
        f = feats(q["hits"], q)
        if f is not None:
            foreign.append(f)
    names = ["conf", "cos1", "cosm", "lex1", "lexm", "agree", "agree5", "top_cos", "top_lex", "top_is_cosbest", "top_is_lexbest", "smargin", "s1", "words", "named"]
    singles = {k: (lambda f, k=k: f[k]) for k in ["nconf", "conf", "cos1", "cosm", "lex1", "lexm", "smargin"]}
    def learned(keys):
        rows = sets[tune]
        X = np.array([[1.0] + [r[0][k] for k in keys] for r in rows] + [[1.0] + [r[1][k] for k in keys] for r in rows])
        y = np.array([1.0 if r[2] > 0 else 0.0 for r in rows] + [0.0] * len(rows))
        w = logistic_fit(X, y)
        return (lambda f: float(1 / (1 + math.exp(-(w[0] + sum(wi * f[k] for wi, k in zip(w[1:], keys))))))), w
    sigs = dict(singles)
    for label, keys in [("L:all", names), ("L:conf+agree+margins", ["conf", "agree", "cosm", "lexm", "smargin"]),
                        ("L:cos,lex,margins,agree", ["cos1", "cosm", "lex1", "lexm", "agree", "top_is_cosbest", "top_is_lexbest", "words", "named"])]:
        s, w = learned(keys)
        sigs[label] = s
        print(label, np.round(w, 3).tolist())
    print(f"tuned on {tune}; threshold: highest losing <= 1 point R@5 there")
    for label, s in sigs.items():
        t = best_t(sets[tune], s)
        cells = []
        for k, rows in sets.items():
            r5, g, fm = judge(rows, s, t)
            cells.append(f"{k}: FM {fm:.3f} loss {r5 - g:.3f}")
        cells.append(f"foreign FM {sum(1 for f in foreign if s(f) >= t) / len(foreign):.3f}")
        print(f"{label:26} t={t:.4f} | " + " | ".join(cells))
