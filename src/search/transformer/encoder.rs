//! A sentence-embedding transformer (BERT: all-MiniLM-L6-v2 and its kind) run in pure Rust.
//!
//! Loads a sentence-transformers model directory (`config.json`, `tokenizer.json`,
//! `model.safetensors`), runs BERT's forward pass on int8 weights with the kernels of
//! `crates/int8-kernels` (`weights.rs` reads the weights; candle only converts their types
//! on load), mean-pools each text's tokens and normalises, as sentence-transformers does: the
//! vectors agree with the Python reference to a cosine of 0.9995 and better
//! (`tests/fixtures/transformer_reference.json`; 0.9998 for all but the empty text). Checking a
//! directory ([`ModelDir::check`]) reads only the config and the tensors' header, so `check`
//! and config validation do not pay for the weights.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use std::ops::Range;

use sha2::Digest;
use tokenizers::{Tokenizer, TruncationParams};

pub use super::error::{EncoderError, FILES};
use super::weights::{Weights, Words, read_header};
use int8_kernels::{self as kernels, Dense, Kernels};

/// Tokens per text: sentence-transformers' `max_seq_length` for all-MiniLM-L6-v2 (its
/// `sentence_bert_config.json`), used when the directory does not say.
const DEFAULT_MAX_TOKENS: usize = 256;
/// The fields of a BERT `config.json` the forward pass needs.
#[derive(Debug, Clone, serde::Deserialize)]
struct BertConfig {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f64,
    #[serde(default)]
    hidden_act: Option<String>,
}

fn default_eps() -> f64 {
    1e-12
}

/// `sentence_bert_config.json`, when present.
#[derive(Debug, serde::Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

/// A checked model directory: the files exist, the config is a BERT encoder, and every
/// tensor the forward pass reads is in the weights with the shape the config implies.
#[derive(Debug, Clone)]
pub struct ModelDir {
    dir: PathBuf,
    config: BertConfig,
    max_tokens: usize,
}

impl ModelDir {
    /// Checks `dir` without loading the weights (their header only).
    ///
    /// # Errors
    /// Naming the missing directory or file, or the tensor whose shape is wrong.
    pub fn check(dir: &Path) -> Result<ModelDir, EncoderError> {
        if !dir.is_dir() {
            return Err(EncoderError::MissingDir(dir.to_owned()));
        }
        for file in FILES {
            if !dir.join(file).is_file() {
                return Err(EncoderError::MissingFile {
                    dir: dir.to_owned(),
                    file,
                });
            }
        }
        let path = dir.join("config.json");
        let text = read(&path)?;
        let config: BertConfig =
            serde_json::from_slice(&text).map_err(|source| EncoderError::Config {
                path: path.clone(),
                source,
            })?;
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
            || config.hidden_act.as_deref().is_some_and(|a| a != "gelu")
        {
            return Err(EncoderError::Shape(format!(
                "{}: hidden_size {} over {} heads, activation {:?}; want heads dividing the \
                 width and `gelu`",
                path.display(),
                config.hidden_size,
                config.num_attention_heads,
                config.hidden_act
            )));
        }
        let max_tokens = fs::read(dir.join("sentence_bert_config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<SentenceConfig>(&b).ok())
            .and_then(|c| c.max_seq_length)
            .unwrap_or(DEFAULT_MAX_TOKENS)
            .clamp(1, config.max_position_embeddings);
        let checked = ModelDir {
            dir: dir.to_owned(),
            config,
            max_tokens,
        };
        checked.check_shapes()?;
        Ok(checked)
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Output dimensions (the hidden width).
    pub fn dims(&self) -> usize {
        self.config.hidden_size
    }

    pub fn layers(&self) -> usize {
        self.config.num_hidden_layers
    }

    /// Every tensor the forward pass reads and its shape, by name.
    fn expected(&self) -> Vec<(String, Vec<usize>)> {
        let c = &self.config;
        let (h, i) = (c.hidden_size, c.intermediate_size);
        let mut want = vec![
            (
                "embeddings.word_embeddings.weight".to_owned(),
                vec![c.vocab_size, h],
            ),
            (
                "embeddings.position_embeddings.weight".to_owned(),
                vec![c.max_position_embeddings, h],
            ),
            (
                "embeddings.token_type_embeddings.weight".to_owned(),
                vec![0, h],
            ),
            ("embeddings.LayerNorm.weight".to_owned(), vec![h]),
            ("embeddings.LayerNorm.bias".to_owned(), vec![h]),
        ];
        for layer in 0..c.num_hidden_layers {
            let p = format!("encoder.layer.{layer}");
            for (name, shape) in [
                ("attention.self.query", vec![h, h]),
                ("attention.self.key", vec![h, h]),
                ("attention.self.value", vec![h, h]),
                ("attention.output.dense", vec![h, h]),
                ("intermediate.dense", vec![i, h]),
                ("output.dense", vec![h, i]),
            ] {
                want.push((format!("{p}.{name}.bias"), vec![shape[0]]));
                want.push((format!("{p}.{name}.weight"), shape));
            }
            for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
                want.push((format!("{p}.{norm}.weight"), vec![h]));
                want.push((format!("{p}.{norm}.bias"), vec![h]));
            }
        }
        want
    }

    /// Compares [`ModelDir::expected`] with the safetensors header (8 bytes of length, then
    /// JSON): the weights themselves are not read. A `0` in a shape is "any".
    fn check_shapes(&self) -> Result<(), EncoderError> {
        let path = self.dir.join("model.safetensors");
        let mut file = fs::File::open(&path).map_err(|source| EncoderError::Io {
            path: path.clone(),
            source,
        })?;
        let (header, _) = read_header(&mut file, &path)?;
        let header: HashMap<String, serde_json::Value> =
            serde_json::from_slice(&header).map_err(|e| {
                EncoderError::Shape(format!("{}: unreadable header ({e})", path.display()))
            })?;
        for (name, want) in self.expected() {
            let Some(found) = header.get(&name) else {
                return Err(EncoderError::Shape(format!("no tensor `{name}`")));
            };
            let shape: Vec<usize> = found
                .get("shape")
                .and_then(|s| serde_json::from_value(s.clone()).ok())
                .unwrap_or_default();
            let fits = shape.len() == want.len()
                && shape.iter().zip(&want).all(|(&s, &w)| w == 0 || s == w);
            if !fits {
                return Err(EncoderError::Shape(format!(
                    "tensor `{name}` is {shape:?}, config.json implies {want:?}"
                )));
            }
        }
        Ok(())
    }
}

fn read(path: &Path) -> Result<Vec<u8>, EncoderError> {
    fs::read(path).map_err(|source| EncoderError::Io {
        path: path.to_owned(),
        source,
    })
}

/// A LayerNorm's scale and shift.
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Norm {
    fn load(weights: &mut Weights, prefix: &str) -> Result<Norm, EncoderError> {
        Ok(Norm {
            weight: weights.values(&format!("{prefix}.weight"))?,
            bias: weights.values(&format!("{prefix}.bias"))?,
        })
    }
}

/// One encoder layer: self-attention and the feed-forward block, each with its residual
/// and LayerNorm (post-norm, as BERT).
struct Layer {
    /// Query, key and value stacked along the outputs: one pass over the tokens.
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    up: Dense,
    down: Dense,
    out_norm: Norm,
}

/// A loaded model: tokenizer, weights in RAM (int8: the word table in `weights.rs`, the
/// dense layers in `crates/int8-kernels`), and its identity for the vector cache.
pub struct Encoder {
    tokenizer: Tokenizer,
    words: Words,
    positions: Vec<f32>,
    token_type: Vec<f32>,
    norm: Norm,
    eps: f32,
    layers: Vec<Layer>,
    heads: usize,
    dims: usize,
    /// AVX2 + FMA where the CPU has them, else scalar: the same bits either way.
    kernels: Kernels,
    /// Threads a batch of several texts is split over (the texts, not the layers: a
    /// single query runs on the caller's thread).
    threads: usize,
    /// Hash of the weights, the tokenizer and the quantization: vectors cached under
    /// another id are not this model's.
    id: String,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("layers", &self.layers.len())
            .field("dims", &self.dims)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Names the quantization in the model's identity: vectors of the f32 model, or of another
/// scheme, are not reused.
const QUANTIZATION: &[u8] =
    b"int8 word table, one scale per row; int8 dense layers, one scale per output, f32 activations";

/// Most threads one batch is split over.
const MAX_THREADS: usize = 4;
/// A batch with fewer tokens than this runs on the caller's thread: a thread costs tens of
/// microseconds to start, a token ~0.1 ms to embed.
const PARALLEL_TOKENS: usize = 32;

impl Encoder {
    /// Loads the weights (~55 MB for all-MiniLM-L6-v2, from its 90 MB file), hashing them
    /// as they are read.
    ///
    /// # Errors
    /// When a file cannot be read or parsed.
    pub fn load(dir: &ModelDir) -> Result<Encoder, EncoderError> {
        let c = &dir.config;
        let tokenizer_path = dir.dir.join("tokenizer.json");
        let tokenizer_bytes = read(&tokenizer_path)?;
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| EncoderError::Tokenizer(tokenizer_path.clone(), e.to_string()))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: dir.max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| EncoderError::Tokenizer(tokenizer_path.clone(), e.to_string()))?;
        // No padding: a batch's texts are laid end to end and attend only within their own
        // tokens (`forward`).
        tokenizer.with_padding(None);
        let mut weights = Weights::open(&dir.dir.join("model.safetensors"))?;
        let words = weights.words("embeddings.word_embeddings.weight")?;
        let positions = weights.values("embeddings.position_embeddings.weight")?;
        let mut token_type = weights.values("embeddings.token_type_embeddings.weight")?;
        token_type.truncate(c.hidden_size);
        let embeddings_norm = Norm::load(&mut weights, "embeddings.LayerNorm")?;
        let mut layers = Vec::with_capacity(c.num_hidden_layers);
        for layer in 0..c.num_hidden_layers {
            let p = format!("encoder.layer.{layer}");
            let attention = |name: &str| format!("{p}.attention.{name}");
            layers.push(Layer {
                qkv: weights.dense(&[
                    &attention("self.query"),
                    &attention("self.key"),
                    &attention("self.value"),
                ])?,
                attention_out: weights.dense(&[&attention("output.dense")])?,
                attention_norm: Norm::load(&mut weights, &attention("output.LayerNorm"))?,
                up: weights.dense(&[&format!("{p}.intermediate.dense")])?,
                down: weights.dense(&[&format!("{p}.output.dense")])?,
                out_norm: Norm::load(&mut weights, &format!("{p}.output.LayerNorm"))?,
            });
        }
        let mut hash = weights.finish();
        hash.update(&tokenizer_bytes);
        hash.update(dir.max_tokens.to_le_bytes());
        hash.update(QUANTIZATION);
        let id: String = hash.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Encoder {
            tokenizer,
            words,
            positions,
            token_type,
            norm: embeddings_norm,
            eps: c.layer_norm_eps as f32,
            layers,
            heads: c.num_attention_heads,
            dims: c.hidden_size,
            kernels: Kernels::detect(),
            threads: std::thread::available_parallelism()
                .map_or(1, std::num::NonZero::get)
                .min(MAX_THREADS),
            id,
        })
    }

    /// The same model on other kernels (tests: the scalar path gives the AVX2 path's bits).
    #[cfg(test)]
    pub(super) fn with_kernels(mut self, kernels: Kernels) -> Encoder {
        self.kernels = kernels;
        self
    }

    /// The model's identity (hash of weights and tokenizer), for cache keys.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    /// One text's unit vector.
    ///
    /// # Errors
    /// When tokenizing or a kernel fails (not expected for a checked directory).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EncoderError> {
        Ok(self.embed_batch(&[text])?.pop().unwrap_or_default())
    }

    /// Unit vectors of `texts`, in order. The texts are laid end to end without padding
    /// (each attends to its own tokens only), and a batch of enough tokens is split over
    /// up to [`MAX_THREADS`] threads by text. An empty text gets the vector of
    /// `[CLS] [SEP]`.
    ///
    /// # Errors
    /// When tokenizing fails (not expected for a checked directory).
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EncoderError::Tokenizer(PathBuf::from("tokenizer.json"), e.to_string()))?;
        let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
        let tokens: usize = ids.iter().map(|i| i.len()).sum();
        let threads = self.threads.min(ids.len());
        if threads < 2 || tokens < PARALLEL_TOKENS {
            return Ok(self.forward(&ids, self.threads > 1));
        }
        // Contiguous groups of about equal tokens, one per thread, in order.
        let mut groups: Vec<&[&[u32]]> = Vec::with_capacity(threads);
        let (mut start, mut taken) = (0, 0);
        for (i, text) in ids.iter().enumerate() {
            taken += text.len();
            if taken * threads >= tokens * (groups.len() + 1) && groups.len() + 1 < threads {
                groups.push(&ids[start..=i]);
                start = i + 1;
            }
        }
        groups.push(&ids[start..]);
        let mut out = Vec::with_capacity(texts.len());
        std::thread::scope(|scope| {
            let (first, rest) = groups
                .split_first()
                .map_or((&[][..], &[][..]), |(f, r)| (*f, r));
            let handles: Vec<_> = rest
                .iter()
                .map(|group| scope.spawn(|| self.forward(group, false)))
                .collect();
            out.extend(self.forward(first, false));
            for handle in handles {
                // A panic on a worker is a bug in the forward pass: pass it on.
                match handle.join() {
                    Ok(vectors) => out.extend(vectors),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
        Ok(out)
    }

    /// BERT's encoder over texts laid end to end (`ids`, one slice per text), then mean
    /// pooling over each text's tokens and L2 normalisation. With `split`, each large
    /// dense product runs on two threads ([`Dense::forward`]).
    fn forward(&self, ids: &[&[u32]], split: bool) -> Vec<Vec<f32>> {
        let (d, k) = (self.dims, self.kernels);
        let mut spans: Vec<Range<usize>> = Vec::with_capacity(ids.len());
        let mut x = Vec::new();
        for text in ids {
            let start = spans.last().map_or(0, |s| s.end);
            spans.push(start..start + text.len());
            self.words.lookup(text, &mut x);
        }
        let tokens = x.len() / d;
        for span in &spans {
            let rows = x[span.start * d..span.end * d].chunks_exact_mut(d);
            for (row, position) in rows.zip(self.positions.chunks_exact(d)) {
                for ((v, p), t) in row.iter_mut().zip(position).zip(&self.token_type) {
                    *v += p + t;
                }
            }
        }
        kernels::layer_norm(&mut x, &self.norm.weight, &self.norm.bias, self.eps);
        let inner_width = self.layers.first().map_or(0, |l| l.up.outputs());
        let mut qkv = vec![0f32; tokens * 3 * d];
        let mut context = vec![0f32; tokens * d];
        let mut next = vec![0f32; tokens * d];
        let mut inner = vec![0f32; tokens * inner_width];
        for layer in &self.layers {
            layer.qkv.forward(k, &x, &mut qkv, split);
            kernels::attention(k, &qkv, &spans, self.heads, &mut context);
            layer.attention_out.forward(k, &context, &mut next, split);
            residual(&mut next, &x, &layer.attention_norm, self.eps);
            std::mem::swap(&mut x, &mut next);
            layer.up.forward(k, &x, &mut inner, split);
            kernels::gelu(k, &mut inner);
            layer.down.forward(k, &inner, &mut next, split);
            residual(&mut next, &x, &layer.out_norm, self.eps);
            std::mem::swap(&mut x, &mut next);
        }
        spans
            .iter()
            .map(|span| {
                let mut mean = vec![0f32; d];
                for row in x[span.start * d..span.end * d].chunks_exact(d) {
                    for (m, v) in mean.iter_mut().zip(row) {
                        *m += v;
                    }
                }
                let count = span.len().max(1) as f32;
                mean.iter_mut().for_each(|m| *m /= count);
                let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
                mean.iter_mut().for_each(|m| *m /= norm);
                mean
            })
            .collect()
    }
}

/// `out = LayerNorm(out + residual)`, in place.
fn residual(out: &mut [f32], residual: &[f32], norm: &Norm, eps: f32) {
    for (o, r) in out.iter_mut().zip(residual) {
        *o += r;
    }
    kernels::layer_norm(out, &norm.weight, &norm.bias, eps);
}
