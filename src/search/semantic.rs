//! Meaning, beside the words: a static embedding model built into the binary, the tools'
//! vectors, and brute-force cosine over them.
//!
//! The model (`model/`, distilled by `scripts/distill_static.py` from all-MiniLM-L6-v2) is a
//! table of one int8 vector per WordPiece token; a text's vector is the mean of its tokens'
//! vectors, normalised. No neural network runs here, so a query costs a tokenization and a
//! few hundred additions. The model is parsed on first use ([`StaticModel::get`]): a server
//! with `semantic = "off"` never pays for it. Like the rest of `search`, a pure function of
//! what it is fed; it must not import `downstream` or `server`.

use std::collections::HashMap;
use std::sync::OnceLock;

use safetensors::{Dtype, SafeTensors};

use super::wordpiece::WordPiece;
use crate::catalog::EntryId;

/// The distilled token table: `embeddings` int8 `[vocab, dims]`, `scales` f32 `[vocab]`.
static EMBEDDINGS: &[u8] = include_bytes!("model/embeddings.safetensors");
/// all-MiniLM-L6-v2's own WordPiece tokenizer (lowercasing, accent handling, CJK split).
static TOKENIZER: &[u8] = include_bytes!("model/tokenizer.json");

/// At most this many tokens of a text are pooled: enough for any tool's description and
/// parameters, and a bound on the work a huge schema can cause.
const MAX_TOKENS: usize = 512;
/// Texts are cut to this many characters before tokenizing (512 tokens are rarely more
/// than ~2,500 characters of English): tokenizing is most of an embedding's cost.
const MAX_CHARS: usize = 3_000;

/// Which meaning-based tier ranks beside the lexical engine (`[settings.search] semantic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Semantic {
    /// The built-in static model, fused with the lexical scores.
    #[default]
    Static,
    /// A transformer from `[settings.search] model`; not built yet, so it ranks as `Static`.
    Model,
    /// Lexical ranking only: the model is never loaded.
    Off,
}

impl Semantic {
    /// The config spelling of each variant, in the order the docs list them.
    pub const NAMES: [&'static str; 3] = ["static", "model", "off"];

    /// Parses the config value; `None` for anything else.
    pub fn parse(value: &str) -> Option<Semantic> {
        match value {
            "static" => Some(Semantic::Static),
            "model" => Some(Semantic::Model),
            "off" => Some(Semantic::Off),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("embedded tokenizer: {0}")]
    Tokenizer(String),
    #[error("embedded embeddings: {0}")]
    Tensors(#[from] safetensors::SafeTensorError),
    #[error("embedded embeddings: {0}")]
    Shape(String),
}

/// The static model: a tokenizer and one int8 row (with its f32 scale) per token.
pub struct StaticModel {
    /// all-MiniLM's WordPiece over a compact vocabulary (`wordpiece`): ~0.6 MiB of heap,
    /// where `tokenizers::Tokenizer` held ~5 MiB for the same file.
    tokenizer: WordPiece,
    /// Row-major `[vocab, dims]`, borrowed from the binary: never copied into the heap.
    rows: &'static [u8],
    scales: Vec<f32>,
    dims: usize,
}

impl std::fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticModel")
            .field("tokens", &self.scales.len())
            .field("dims", &self.dims)
            .finish_non_exhaustive()
    }
}

static MODEL: OnceLock<Option<StaticModel>> = OnceLock::new();

impl StaticModel {
    /// The built-in model, parsed on first call (~30 ms, on the caller's thread: upserts
    /// run on the blocking pool). `None` only if the embedded files are broken, which the
    /// unit tests rule out for every build; search then stays lexical.
    pub fn get() -> Option<&'static StaticModel> {
        MODEL
            .get_or_init(|| match StaticModel::from_bytes(EMBEDDINGS, TOKENIZER) {
                Ok(model) => Some(model),
                Err(error) => {
                    tracing::error!(%error, "static embedding model unusable; search stays lexical");
                    None
                }
            })
            .as_ref()
    }

    /// # Errors
    /// When the tokenizer JSON or the tensors are malformed or disagree in size.
    pub fn from_bytes(
        embeddings: &'static [u8],
        tokenizer: &[u8],
    ) -> Result<StaticModel, ModelError> {
        let tokenizer = WordPiece::from_bytes(tokenizer).map_err(ModelError::Tokenizer)?;
        let tensors = SafeTensors::deserialize(embeddings)?;
        let table = tensors.tensor("embeddings")?;
        let scales = tensors.tensor("scales")?;
        let (&[vocab, dims], Dtype::I8) = (table.shape(), table.dtype()) else {
            return Err(ModelError::Shape(format!(
                "embeddings {:?} {:?}, want [vocab, dims] i8",
                table.shape(),
                table.dtype()
            )));
        };
        if scales.shape() != [vocab] || scales.dtype() != Dtype::F32 {
            return Err(ModelError::Shape(format!(
                "scales {:?} {:?}, want [{vocab}] f32",
                scales.shape(),
                scales.dtype()
            )));
        }
        if tokenizer.vocab_size() > vocab || dims == 0 {
            return Err(ModelError::Shape(format!(
                "tokenizer has {} tokens, table {vocab} x {dims}",
                tokenizer.vocab_size()
            )));
        }
        let scales: Vec<f32> = scales
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(StaticModel {
            tokenizer,
            rows: table.data(),
            scales,
            dims,
        })
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The text's vector: mean of its token vectors, unit length. `None` when no token of
    /// the text is in the vocabulary (empty text, only unknown symbols).
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let text = match text.char_indices().nth(MAX_CHARS) {
            Some((end, _)) => &text[..end],
            None => text,
        };
        let ids = self.tokenizer.encode(text, MAX_TOKENS)?;
        let mut sum = vec![0.0f32; self.dims];
        let mut n = 0usize;
        for &id in &ids {
            let id = id as usize;
            let Some(&scale) = self.scales.get(id) else {
                continue;
            };
            let row = &self.rows[id * self.dims..(id + 1) * self.dims];
            for (s, &q) in sum.iter_mut().zip(row) {
                *s += f32::from(q as i8) * scale;
            }
            n += 1;
        }
        if n == 0 {
            return None;
        }
        normalize(&mut sum).then_some(sum)
    }
}

/// Scales `v` to unit length; false if it is zero (or not finite).
fn normalize(v: &mut [f32]) -> bool {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(norm.is_finite() && norm > 0.0) {
        return false;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    true
}

/// A unit vector as int8 and the scale that restores it: `v[i] ≈ q[i] * scale`.
pub(crate) fn quantize(v: &[f32]) -> (Vec<i8>, f32) {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return (vec![0; v.len()], 0.0);
    }
    let scale = max / 127.0;
    let q = v
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (q, scale)
}

/// Integer dot product: i8 products summed in i32 (no overflow below 2^17 dims). Sixteen
/// independent lanes so the compiler emits packed multiply-adds (SSE2 `pmaddwd` on any
/// x86-64): the plain iterator sum did not vectorise (10k tools: ~550 µs per query).
fn dot(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 16;
    let mut acc = [0i32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: i32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    acc.iter().sum::<i32>() + tail
}

/// One catalog tool's place in [`Vectors`].
#[derive(Debug, Clone, Copy)]
struct Row {
    id: EntryId,
    /// Tie-break order, as in the lexical index.
    order: u64,
    /// Index into [`Vectors::servers`], for the `server` filter.
    server: u32,
    scale: f32,
}

/// The tools' vectors in one flat int8 array (a row per tool, `dims` wide), so a query is
/// one pass over contiguous memory: 10k tools at 256 dims are 2.5 MB, cache-friendly where
/// f32 rows (10 MB) would be bound by memory bandwidth.
#[derive(Debug, Default)]
pub(crate) struct Vectors {
    dims: usize,
    data: Vec<i8>,
    rows: Vec<Row>,
    by_id: HashMap<EntryId, usize>,
    servers: Vec<String>,
}

impl Vectors {
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Sets the vector of `id` (`None`: the tool has no vector and is removed). Only the
    /// transformer tier embeds in f32; the static tier hands its vectors over quantized.
    #[cfg(any(feature = "model", test))]
    pub(crate) fn set(&mut self, id: EntryId, order: u64, server: &str, vector: Option<&[f32]>) {
        let Some(vector) = vector else {
            self.remove(id);
            return;
        };
        let (q, scale) = quantize(vector);
        self.set_quantized(id, order, server, Some((&q, scale)));
    }

    /// [`Vectors::set`] with the vector already quantized ([`quantize`]).
    pub(crate) fn set_quantized(
        &mut self,
        id: EntryId,
        order: u64,
        server: &str,
        vector: Option<(&[i8], f32)>,
    ) {
        let Some((q, scale)) = vector else {
            self.remove(id);
            return;
        };
        if self.dims == 0 {
            self.dims = q.len();
        }
        if q.len() != self.dims {
            self.remove(id);
            return;
        }
        let server = match self.servers.iter().position(|s| s == server) {
            Some(i) => i as u32,
            None => {
                self.servers.push(server.to_owned());
                (self.servers.len() - 1) as u32
            }
        };
        let row = Row {
            id,
            order,
            server,
            scale,
        };
        match self.by_id.get(&id) {
            Some(&at) => {
                self.rows[at] = row;
                self.data[at * self.dims..(at + 1) * self.dims].copy_from_slice(q);
            }
            None => {
                self.by_id.insert(id, self.rows.len());
                self.rows.push(row);
                self.data.extend_from_slice(q);
            }
        }
    }

    /// Drops the vector of `id`; the last row moves into its place (rank ties break by
    /// `order`, never by row position).
    pub(crate) fn remove(&mut self, id: EntryId) {
        let Some(at) = self.by_id.remove(&id) else {
            return;
        };
        let last = self.rows.len() - 1;
        self.rows.swap_remove(at);
        if at != last {
            let (head, tail) = self.data.split_at_mut(last * self.dims);
            head[at * self.dims..(at + 1) * self.dims].copy_from_slice(&tail[..self.dims]);
            self.by_id.insert(self.rows[at].id, at);
        }
        self.data.truncate(last * self.dims);
    }

    /// Every row's cosine with `query` (unit length), in row order; rows of other servers
    /// than `server` (when given) are NaN. Empty when nothing can be compared.
    pub(crate) fn cosines(&self, query: &[f32], server: Option<&str>) -> Vec<f32> {
        if query.len() != self.dims || self.rows.is_empty() {
            return Vec::new();
        }
        let only = match server {
            Some(name) => match self.servers.iter().position(|s| s == name) {
                Some(i) => Some(i as u32),
                None => return Vec::new(),
            },
            None => None,
        };
        let (q, q_scale) = quantize(query);
        self.rows
            .iter()
            .zip(self.data.chunks_exact(self.dims))
            .map(|(row, data)| {
                if only.is_none_or(|s| row.server == s) {
                    dot(&q, data) as f32 * q_scale * row.scale
                } else {
                    f32::NAN
                }
            })
            .collect()
    }

    /// The row holding `id`'s vector.
    pub(crate) fn row_of(&self, id: EntryId) -> Option<usize> {
        self.by_id.get(&id).copied()
    }

    /// The tool in `row` and its tie-break order.
    pub(crate) fn entry(&self, row: usize) -> (EntryId, u64) {
        self.rows
            .get(row)
            .map_or((EntryId(u32::MAX), u64::MAX), |r| (r.id, r.order))
    }
}
