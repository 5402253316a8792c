//! The model's weights, read from its safetensors file one tensor at a time.
//!
//! Reading tensor by tensor, and the word embeddings a slab of rows at a time, keeps a copy
//! of the whole file out of memory: a cold start's peak is the loaded weights plus one slab
//! (the whole-file read peaked at ~224-330 MB for all-MiniLM-L6-v2's 90 MB).
//!
//! The word embedding table is half of that model (30,522 x 384) and a query reads a dozen
//! of its rows, so it is kept in int8 with one scale per row: 47 MB become 12 MB, at no
//! cost in time and a worst cosine of 0.9999 with the Python reference's vectors (`tests.rs`).
//! The dense layers are int8 too, one scale per output and run of 32 inputs
//! ([`Weights::dense`], `crates/int8-kernels`): candle's Q8_0 kernels had made a query 2.4x slower,
//! the hand-written ones (int8 widened to f32 once per query, each weight reused across the
//! query's tokens) made it 2x faster (docs/search.md, "Query embedding in int8").

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use sha2::{Digest, Sha256};

use int8_kernels::{Dense, quantize};

use super::error::EncoderError;

/// Rows of the word embeddings read and quantized at a time (1.5 MB of f32 at 384 dims).
const SLAB_ROWS: usize = 1_024;

/// The word embedding table: int8 rows, each with its own scale.
pub(super) struct Words {
    rows: Vec<i8>,
    scales: Vec<f32>,
    dims: usize,
}

impl Words {
    /// Appends the f32 rows of `ids`, in order, to `out`. An id past the table (a
    /// tokenizer larger than the weights) reads as zeros.
    pub(super) fn lookup(&self, ids: &[u32], out: &mut Vec<f32>) {
        for &id in ids {
            let id = id as usize;
            match self.rows.get(id * self.dims..(id + 1) * self.dims) {
                Some(row) => {
                    let scale = self.scales[id];
                    out.extend(row.iter().map(|&q| f32::from(q) * scale));
                }
                None => out.extend(std::iter::repeat_n(0.0, self.dims)),
            }
        }
    }
}

/// Where one tensor lies in the file, and how it is stored.
#[derive(serde::Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// An open safetensors file: its header, read once, and a hash of everything read from it.
pub(super) struct Weights {
    path: PathBuf,
    file: File,
    /// Where the tensors' data starts (after the 8-byte length and the header).
    data: u64,
    entries: HashMap<String, Entry>,
    hash: Sha256,
}

impl Weights {
    pub(super) fn open(path: &Path) -> Result<Weights, EncoderError> {
        let io = |source| EncoderError::Io {
            path: path.to_owned(),
            source,
        };
        let mut file = File::open(path).map_err(io)?;
        let (header, len) = read_header(&mut file, path)?;
        let mut hash = Sha256::new();
        hash.update(&header);
        let mut entries: HashMap<String, serde_json::Value> = serde_json::from_slice(&header)
            .map_err(|e| {
                EncoderError::Shape(format!("{}: unreadable header ({e})", path.display()))
            })?;
        entries.remove("__metadata__");
        let entries = entries
            .into_iter()
            .map(|(name, value)| {
                serde_json::from_value(value)
                    .map(|entry| (name.clone(), entry))
                    .map_err(|e| EncoderError::Shape(format!("tensor `{name}`: {e}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Weights {
            path: path.to_owned(),
            file,
            data: 8 + len,
            entries,
            hash,
        })
    }

    /// What the weights read so far hash to: with the tokenizer, the model's identity.
    pub(super) fn finish(self) -> Sha256 {
        self.hash
    }

    fn entry(&self, name: &str) -> Result<&Entry, EncoderError> {
        self.entries
            .get(name)
            .ok_or_else(|| EncoderError::Shape(format!("no tensor `{name}`")))
    }

    fn dtype(&self, name: &str) -> Result<DType, EncoderError> {
        let entry = self.entry(name)?;
        match entry.dtype.as_str() {
            "F32" => Ok(DType::F32),
            "F16" => Ok(DType::F16),
            "BF16" => Ok(DType::BF16),
            "F64" => Ok(DType::F64),
            other => Err(EncoderError::Shape(format!(
                "tensor `{name}` is {other}; the weights must be floating point (F32, F16, BF16, F64)"
            ))),
        }
    }

    /// Rows `rows` of tensor `name` (along its first dimension) as f32, hashed as read.
    fn rows(&mut self, name: &str, rows: std::ops::Range<usize>) -> Result<Tensor, EncoderError> {
        let dtype = self.dtype(name)?;
        let entry = self.entry(name)?;
        let shape = entry.shape.clone();
        let [start, end] = entry.data_offsets;
        let row: usize = shape.iter().skip(1).product::<usize>() * dtype.size_in_bytes();
        let first = shape.first().copied().unwrap_or(1);
        let whole = (first * row) as u64;
        if end.checked_sub(start) != Some(whole) || rows.end > first {
            return Err(EncoderError::Shape(format!(
                "tensor `{name}`: {} bytes for shape {shape:?}",
                end.saturating_sub(start)
            )));
        }
        let mut bytes = vec![0u8; rows.len() * row];
        let at = self.data + start + (rows.start * row) as u64;
        let io = |source| EncoderError::Io {
            path: self.path.clone(),
            source,
        };
        self.file.seek(SeekFrom::Start(at)).map_err(io)?;
        self.file.read_exact(&mut bytes).map_err(io)?;
        self.hash.update(name.as_bytes());
        self.hash.update(&bytes);
        let mut dims = shape;
        if let Some(d) = dims.first_mut() {
            *d = rows.len();
        }
        Ok(Tensor::from_raw_buffer(&bytes, dtype, &dims, &Device::Cpu)?.to_dtype(DType::F32)?)
    }

    /// Tensor `name` whole, as f32 values in row-major order.
    pub(super) fn values(&mut self, name: &str) -> Result<Vec<f32>, EncoderError> {
        let rows = self.entry(name)?.shape.first().copied().unwrap_or(1);
        Ok(self.rows(name, 0..rows)?.flatten_all()?.to_vec1::<f32>()?)
    }

    /// The dense layers `prefixes` (`{prefix}.weight`, `{prefix}.bias`, all of the same
    /// input width) stacked along their outputs, as one int8 layer ([`Dense`]).
    pub(super) fn dense(&mut self, prefixes: &[&str]) -> Result<Dense, EncoderError> {
        let (mut weight, mut bias) = (Vec::new(), Vec::new());
        let mut inputs = None;
        for prefix in prefixes {
            let name = format!("{prefix}.weight");
            let shape = self.entry(&name)?.shape.clone();
            let [_, width] = shape[..] else {
                return Err(EncoderError::Shape(format!(
                    "tensor `{name}` is {shape:?}, want 2 dimensions"
                )));
            };
            if inputs.replace(width).is_some_and(|w| w != width) {
                return Err(EncoderError::Shape(format!(
                    "tensor `{name}` is {shape:?}: its input width differs from {prefixes:?}[0]'s"
                )));
            }
            weight.extend(self.values(&name)?);
            bias.extend(self.values(&format!("{prefix}.bias"))?);
        }
        let inputs = inputs.unwrap_or(0);
        if inputs == 0 || weight.len() != bias.len() * inputs {
            return Err(EncoderError::Shape(format!(
                "dense layers {prefixes:?}: {} weights for {} outputs",
                weight.len(),
                bias.len()
            )));
        }
        Ok(Dense::new(&weight, &bias, bias.len(), inputs))
    }

    /// The word embeddings `name`, quantized a slab of rows at a time.
    pub(super) fn words(&mut self, name: &str) -> Result<Words, EncoderError> {
        let shape = self.entry(name)?.shape.clone();
        let [vocab, dims] = shape[..] else {
            return Err(EncoderError::Shape(format!(
                "tensor `{name}` is {shape:?}, want 2 dimensions"
            )));
        };
        let mut rows = Vec::with_capacity(vocab * dims);
        let mut scales = Vec::with_capacity(vocab);
        for start in (0..vocab).step_by(SLAB_ROWS) {
            let slab = self.rows(name, start..(start + SLAB_ROWS).min(vocab))?;
            for row in slab.to_vec2::<f32>()? {
                scales.push(quantize(&row, &mut rows));
            }
        }
        Ok(Words { rows, scales, dims })
    }
}

/// A safetensors header (8 bytes of little-endian length, then that much JSON) and its
/// length, leaving `file` at the first tensor's data.
pub(super) fn read_header(file: &mut File, path: &Path) -> Result<(Vec<u8>, u64), EncoderError> {
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
