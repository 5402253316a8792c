//! The transformer tier: vectors agree with the Python reference, a model directory's faults
//! are named, a restart takes every vector from the disk cache, and the index ranks by the
//! transformer once its vectors are ready.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::Tool;
use serde_json::json;

use super::{Encoder, EncoderError, ModelDir, Transformer};
use crate::catalog::EntryId;
use crate::search::{SearchIndex, Semantic, ToolDoc};

/// The model `.ci/install-peers` unpacks, or `None` (with a notice) when it is absent and
/// `CI` is unset; under `CI` its absence fails the test.
pub(crate) fn model_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(".models/all-MiniLM-L6-v2");
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "model missing under CI: {}; run .ci/install-peers",
        dir.display()
    );
    eprintln!("skipping: {} absent; run .ci/install-peers", dir.display());
    None
}

/// The Python reference's texts and vectors (`scripts/transformer_reference.py`).
fn reference() -> Vec<serde_json::Value> {
    let fixture = include_str!("../../../tests/fixtures/transformer_reference.json");
    serde_json::from_str(fixture).unwrap()
}

fn texts_of(reference: &[serde_json::Value]) -> Vec<&str> {
    reference
        .iter()
        .map(|r| r["text"].as_str().unwrap())
        .collect()
}

fn cosine(a: &[f32], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(&x, &y)| f64::from(x) * y).sum()
}

#[test]
fn vectors_match_the_python_reference() {
    let Some(dir) = model_dir() else { return };
    let encoder = Encoder::load(&ModelDir::check(&dir).unwrap()).unwrap();
    let reference = reference();
    let texts = texts_of(&reference);
    // One at a time and as one batch: the batch's other texts must not change a vector.
    let batch = encoder.embed_batch(&texts).unwrap();
    let mut worst = 1.0f64;
    for (r, batched) in reference.iter().zip(&batch) {
        let want: Vec<f64> = serde_json::from_value(r["vector"].clone()).unwrap();
        let alone = encoder.embed(r["text"].as_str().unwrap()).unwrap();
        assert_eq!(alone.len(), 384);
        let norm: f32 = alone.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
        let drift: f32 = alone.iter().zip(batched).map(|(a, b)| (a - b).abs()).sum();
        assert!(
            drift < 1e-4,
            "{:?}: padding moved the vector by {drift}",
            r["text"]
        );
        let c = cosine(&alone, &want);
        worst = worst.min(c);
        // int8 weights (`weights.rs`, `crates/int8-kernels`) move a vector a little: worst 0.99946,
        // for the empty text (`[CLS] [SEP]` alone), 0.99978 and up for the others; f32
        // matched to 1e-6, the int8 word table alone to 0.99993. A bug in the forward pass
        // (a wrong head split, a lost residual) falls far below this.
        assert!(c > 0.999, "{:?}: cosine {c} with the reference", r["text"]);
    }
    eprintln!("worst cosine with the reference: {worst:.5}");
}

/// The scalar kernels (every CPU without AVX2 + FMA, every aarch64) give the vectors of
/// the AVX2 ones to the bit, through the whole model: one ranking on every machine.
#[test]
fn the_scalar_kernels_give_the_same_vectors() {
    let Some(dir) = model_dir() else { return };
    let encoder = Encoder::load(&ModelDir::check(&dir).unwrap()).unwrap();
    let reference = reference();
    let mut texts = texts_of(&reference);
    texts.push("read a file and note down a fact about a person, then list the git branches");
    let detected = encoder.embed_batch(&texts).unwrap();
    let scalar = encoder.with_kernels(int8_kernels::Kernels::scalar());
    assert_eq!(scalar.embed_batch(&texts).unwrap(), detected);
}

/// A directory with a BERT config.json, any tokenizer.json, and weights whose one tensor
/// has the given shape.
fn fake_model(dir: &Path, word_shape: &[usize]) {
    std::fs::write(
        dir.join("config.json"),
        json!({"vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 1,
               "num_attention_heads": 2, "intermediate_size": 8,
               "max_position_embeddings": 16, "hidden_act": "gelu"})
        .to_string(),
    )
    .unwrap();
    std::fs::write(dir.join("tokenizer.json"), "{}").unwrap();
    let n: usize = word_shape.iter().product();
    let data = vec![0u8; n * 4];
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, word_shape.to_vec(), &data)
            .unwrap();
    let bytes =
        safetensors::serialize([("embeddings.word_embeddings.weight", view)], None).unwrap();
    std::fs::write(dir.join("model.safetensors"), bytes).unwrap();
}

#[test]
fn a_bad_model_directory_is_named_with_its_fault() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nowhere");
    let err = ModelDir::check(&missing).unwrap_err();
    assert!(matches!(err, EncoderError::MissingDir(_)), "{err}");
    assert!(err.to_string().contains("mcp-defer model fetch"), "{err}");

    std::fs::write(tmp.path().join("config.json"), "{}").unwrap();
    let err = ModelDir::check(tmp.path()).unwrap_err();
    assert!(
        matches!(
            err,
            EncoderError::MissingFile {
                file: "tokenizer.json",
                ..
            }
        ),
        "{err}"
    );

    fake_model(tmp.path(), &[10, 5]);
    let err = ModelDir::check(tmp.path()).unwrap_err().to_string();
    assert!(
        err.contains("embeddings.word_embeddings.weight") && err.contains("[10, 5]"),
        "{err}"
    );
    fake_model(tmp.path(), &[10, 4]);
    let err = ModelDir::check(tmp.path()).unwrap_err().to_string();
    assert!(
        err.contains("no tensor `embeddings.position_embeddings.weight`"),
        "{err}"
    );

    std::fs::write(tmp.path().join("config.json"), "not json").unwrap();
    let err = ModelDir::check(tmp.path()).unwrap_err();
    assert!(matches!(err, EncoderError::Config { .. }), "{err}");
}

fn tool(name: &str, description: &str) -> Tool {
    serde_json::from_value(json!({"name": name, "description": description,
                                  "inputSchema": {"type": "object", "properties": {}}}))
    .unwrap()
}

fn tools() -> Vec<(&'static str, Tool)> {
    vec![
        (
            "github",
            tool("create_issue", "Create a new issue in a GitHub repository"),
        ),
        (
            "weather",
            tool(
                "get_forecast",
                "Weather forecast for a city: temperature, rain, wind",
            ),
        ),
        (
            "files",
            tool(
                "read_file",
                "Read the complete contents of a file from disk",
            ),
        ),
        (
            "shop",
            tool(
                "search_products",
                "Search the catalog of items for sale by keyword",
            ),
        ),
        (
            "mail",
            tool("send_email", "Send an email message to a recipient"),
        ),
    ]
}

fn index(cache: &Path, dir: &Path) -> SearchIndex {
    let model = ModelDir::check(dir).unwrap();
    index_with(Transformer::start(model, Some(cache.to_owned())))
}

fn index_with(transformer: Transformer) -> SearchIndex {
    let mut index = SearchIndex::with_semantic(Semantic::Model).unwrap();
    index.set_transformer(transformer);
    let specs = tools();
    let names: Vec<String> = specs
        .iter()
        .map(|(s, t)| format!("{s}__{}", t.name))
        .collect();
    let docs = specs
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(i, ((server, tool), name))| ToolDoc {
            id: EntryId(i as u32),
            server_index: i,
            qualified_name: name,
            server,
            server_text: "",
            tool,
        });
    index.upsert(docs).unwrap();
    index
}

#[test]
fn ranks_by_the_transformer_once_ready_and_a_restart_embeds_nothing() {
    let Some(dir) = model_dir() else { return };
    let cache = tempfile::tempdir().unwrap();
    let first = index(cache.path(), &dir);
    let transformer = first.transformer().unwrap();
    assert!(transformer.wait_ready(Duration::from_secs(120)));
    let p = transformer.progress();
    assert_eq!((p.tools, p.ready, p.embedded, p.cached), (5, 5, 5, 0));
    // "buy running shoes" shares no word with any tool; by meaning it is the shop.
    let explained = first.explain_with("buy running shoes", 3, None, None);
    assert_eq!(
        explained.first().map(|e| e.id),
        Some(EntryId(3)),
        "{explained:?}"
    );
    assert_eq!(
        explained[0].vector.and_then(|v| v.1),
        Some(1),
        "{explained:?}"
    );
    drop(first);

    let second = index(cache.path(), &dir);
    let transformer = second.transformer().unwrap();
    assert!(transformer.wait_ready(Duration::from_secs(120)));
    let p = transformer.progress();
    assert_eq!((p.tools, p.ready, p.embedded, p.cached), (5, 5, 0, 5));
    assert_eq!(
        second.search("is it going to rain in Oslo", 1, None)[0].id,
        EntryId(1)
    );

    // A re-listed tool with a new text gets a new vector; a removed one is forgotten.
    let mut second = second;
    second.remove([EntryId(4)]).unwrap();
    let p = second.transformer().unwrap().progress();
    assert_eq!((p.tools, p.ready), (4, 4));
}

#[test]
fn search_answers_with_the_static_tier_while_the_model_has_not_embedded() {
    let Some(dir) = model_dir() else { return };
    // The embedding thread never runs: every tool waits for its vector, for good.
    let (transformer, queue) = Transformer::idle(ModelDir::check(&dir).unwrap());
    let index = index_with(transformer);
    let p = index.transformer().unwrap().progress();
    assert_eq!((p.tools, p.ready, p.loaded), (5, 0, false));
    assert!(!index.transformer().unwrap().wait_ready(Duration::ZERO));
    // The static tier ranks: the weather tool by meaning, with a static cosine.
    let explained = index.explain_with("will it rain tomorrow", 2, None, None);
    assert_eq!(explained[0].id, EntryId(1), "{explained:?}");
    assert!(explained[0].vector.is_some());
    assert!(index.describe_semantic().contains("the static tier ranks"));
    assert_eq!(queue.try_iter().map(|jobs| jobs.len()).sum::<usize>(), 5);
}
