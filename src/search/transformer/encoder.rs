//! A sentence-embedding transformer (BERT: all-MiniLM-L6-v2 and its kind) run in pure Rust.
//!
//! Loads a sentence-transformers model directory (`config.json`, `tokenizer.json`,
//! `model.safetensors`), runs BERT's forward pass with candle's CPU kernels (`weights.rs` reads the weights), mean-pools the
//! attended tokens and normalises, as sentence-transformers does: the vectors agree with the
//! Python reference to a cosine of 0.9999 (`tests/fixtures/transformer_reference.json`). Checking a
//! directory ([`ModelDir::check`]) reads only the config and the tensors' header, so `check`
//! and config validation do not pay for the weights.

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use candle_nn::{LayerNorm, Linear, Module};
use sha2::Digest;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::weights::{Weights, Words};

/// Tokens per text: sentence-transformers' `max_seq_length` for all-MiniLM-L6-v2 (its
/// `sentence_bert_config.json`), used when the directory does not say.
const DEFAULT_MAX_TOKENS: usize = 256;
/// The files a model directory must hold.
pub const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

#[derive(Debug, thiserror::Error)]
pub enum EncoderError {
    #[error(
        "model directory {0} does not exist; run `mcp-defer model fetch` (it unpacks all-MiniLM-L6-v2 there when `model` is not set; `--dir` for another place), or point `model` at a sentence-transformers directory"
    )]
    MissingDir(PathBuf),
    #[error("model directory {dir} has no {file}; a sentence-transformers directory holds {}", FILES.join(", "))]
    MissingFile { dir: PathBuf, file: &'static str },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a BERT config ({source}); the model must be a BERT encoder")]
    Config {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{0}: {1}")]
    Tokenizer(PathBuf, String),
    #[error("model weights: {0}")]
    Tensors(#[from] candle_core::Error),
    #[error("model weights: {0}")]
    Header(#[from] safetensors::SafeTensorError),
    #[error("model weights: {0}; the weights do not match config.json (another architecture?)")]
    Shape(String),
}

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

/// A safetensors header (8 bytes of little-endian length, then that much JSON) and its
/// length, leaving `file` at the first tensor's data.
pub(super) fn read_header(
    file: &mut fs::File,
    path: &Path,
) -> Result<(Vec<u8>, u64), EncoderError> {
    let io = |source| EncoderError::Io {
        path: path.to_owned(),
        source,
    };
    let mut len = [0u8; 8];
    file.read_exact(&mut len).map_err(io)?;
    let len = u64::from_le_bytes(len);
    if len > 100_000_000 {
        return Err(EncoderError::Shape(format!(
            "{}: header of {len} bytes; not a safetensors file",
            path.display()
        )));
    }
    let mut header = vec![0u8; len as usize];
    file.read_exact(&mut header).map_err(io)?;
    Ok((header, len))
}

/// One encoder layer: self-attention and the feed-forward block, each with its residual
/// and LayerNorm (post-norm, as BERT).
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    up: Linear,
    down: Linear,
    out_norm: LayerNorm,
}

/// A loaded model: tokenizer, weights in RAM (the word table in int8, `weights.rs`), and its
/// identity for the vector cache.
pub struct Encoder {
    tokenizer: Tokenizer,
    words: Words,
    positions: Tensor,
    token_type: Tensor,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    dims: usize,
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
const QUANTIZATION: &[u8] = b"int8 word table, one scale per row";

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
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        let mut weights = Weights::open(&dir.dir.join("model.safetensors"))?;
        let eps = c.layer_norm_eps;
        let norm = |weights: &mut Weights, p: &str| -> Result<LayerNorm, EncoderError> {
            Ok(LayerNorm::new(
                weights.tensor(&format!("{p}.weight"))?,
                weights.tensor(&format!("{p}.bias"))?,
                eps,
            ))
        };
        let words = weights.words("embeddings.word_embeddings.weight")?;
        let positions = weights.tensor("embeddings.position_embeddings.weight")?;
        let token_type = weights
            .tensor("embeddings.token_type_embeddings.weight")?
            .get(0)?;
        let embeddings_norm = norm(&mut weights, "embeddings.LayerNorm")?;
        let mut layers = Vec::with_capacity(c.num_hidden_layers);
        for layer in 0..c.num_hidden_layers {
            let p = format!("encoder.layer.{layer}");
            layers.push(Layer {
                query: weights.dense(&format!("{p}.attention.self.query"))?,
                key: weights.dense(&format!("{p}.attention.self.key"))?,
                value: weights.dense(&format!("{p}.attention.self.value"))?,
                attention_out: weights.dense(&format!("{p}.attention.output.dense"))?,
                attention_norm: norm(&mut weights, &format!("{p}.attention.output.LayerNorm"))?,
                up: weights.dense(&format!("{p}.intermediate.dense"))?,
                down: weights.dense(&format!("{p}.output.dense"))?,
                out_norm: norm(&mut weights, &format!("{p}.output.LayerNorm"))?,
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
            layers,
            heads: c.num_attention_heads,
            dims: c.hidden_size,
            id,
        })
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

    /// Unit vectors of `texts`, in order, in one forward pass (padded to the longest; give
    /// texts of similar length together). An empty text gets the vector of `[CLS] [SEP]`.
    ///
    /// # Errors
    /// When tokenizing or a kernel fails (not expected for a checked directory).
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EncoderError::Tokenizer(PathBuf::from("tokenizer.json"), e.to_string()))?;
        let len = encodings.first().map_or(0, |e| e.get_ids().len());
        let batch = encodings.len();
        let mut ids = Vec::with_capacity(batch * len);
        let mut mask = Vec::with_capacity(batch * len);
        for e in &encodings {
            ids.extend_from_slice(e.get_ids());
            mask.extend(e.get_attention_mask().iter().map(|&m| m as f32));
        }
        let mask = Tensor::from_vec(mask, (batch, len), &Device::Cpu)?;
        let pooled = self.forward(&ids, batch, len, &mask)?;
        Ok(pooled.to_vec2::<f32>()?)
    }

    /// BERT's encoder, then mean pooling over attended tokens and L2 normalisation.
    fn forward(
        &self,
        ids: &[u32],
        batch: usize,
        len: usize,
        mask: &Tensor,
    ) -> Result<Tensor, EncoderError> {
        let head = self.dims / self.heads;
        let mut x = self
            .words
            .lookup(ids, batch, len)?
            .broadcast_add(&self.positions.narrow(0, 0, len)?)?
            .broadcast_add(&self.token_type)?;
        x = self.norm.forward(&x)?;
        // 0 where attended, a large negative where padded: added to the scores.
        let bias = ((mask.unsqueeze(1)?.unsqueeze(1)? - 1.0)? * 1e9)?;
        let scale = 1.0 / (head as f64).sqrt();
        for layer in &self.layers {
            let split = |t: Tensor| -> candle_core::Result<Tensor> {
                t.reshape((batch, len, self.heads, head))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let q = split(layer.query.forward(&x)?)?;
            let k = split(layer.key.forward(&x)?)?;
            let v = split(layer.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let context = probs
                .matmul(&v)?
                .transpose(1, 2)?
                .reshape((batch, len, self.dims))?;
            let attended = layer.attention_out.forward(&context)?;
            x = layer.attention_norm.forward(&(attended + &x)?)?;
            let inner = layer.up.forward(&x)?.gelu_erf()?;
            let out = layer.down.forward(&inner)?;
            x = layer.out_norm.forward(&(out + &x)?)?;
        }
        let m = mask.unsqueeze(2)?;
        let summed = x.broadcast_mul(&m)?.sum(1)?;
        let counts = m.sum(1)?.clamp(1.0, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        Ok(mean.broadcast_div(&norm)?)
    }
}
