#!/usr/bin/env python3
"""Reference vectors for the transformer tier's test (`src/search/transformer/tests.rs`).

Embeds a few texts with all-MiniLM-L6-v2 the way sentence-transformers does (its tokenizer
with truncation at `max_seq_length`, BERT, mean pooling over attended tokens, L2 normalise)
and writes them to `tests/fixtures/transformer_reference.json`. The tokenizer is Hugging
Face's Python `tokenizers` reading the model's own `tokenizer.json`; the forward pass is the
numpy BERT of `scripts/distill_static.py` (no torch: PyPI's torch wheels pull gigabytes of
CUDA libraries). Run once after `.ci/install-peers`; the fixture is committed.

    python3 scripts/transformer_reference.py [model dir, default .models/all-MiniLM-L6-v2]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-distill"
REQUIREMENTS = ["numpy==2.4.6", "safetensors==0.7.0", "tokenizers==0.22.1"]
TEXTS = [
    "create a github issue",
    "What's the weather like in Paris tomorrow?",
    "search flights\n Find cheap flights between two airports on a date.\n origin\n destination",
    "",
    "Ein Satz auf Deutsch mit Umlauten: Größe, Übung.",
]


def ensure_venv() -> None:
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.check_call([sys.executable, "-m", "venv", str(VENV)])
    subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS])
    os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


def main() -> None:
    ensure_venv()
    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    sys.path.insert(0, str(ROOT / "scripts"))
    from distill_static import bert

    model = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".models/all-MiniLM-L6-v2"
    config = json.loads((model / "config.json").read_text())
    max_len = json.loads((model / "sentence_bert_config.json").read_text())["max_seq_length"]
    forward = bert(
        load_file(str(model / "model.safetensors")),
        config["hidden_size"],
        config["num_attention_heads"],
        config["num_hidden_layers"],
        config["layer_norm_eps"],
    )
    tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_len)
    out = []
    for text in TEXTS:
        ids = np.array([tokenizer.encode(text).ids])
        pooled = forward(ids, np.ones(ids.shape, dtype=np.float32))[0].astype(np.float64)
        pooled /= np.linalg.norm(pooled)
        out.append({"text": text, "vector": [round(float(x), 7) for x in pooled]})
    path = ROOT / "tests/fixtures/transformer_reference.json"
    path.write_text(json.dumps(out, indent=None) + "\n")
    print(f"wrote {path} ({len(out)} texts)", file=sys.stderr)


if __name__ == "__main__":
    main()
