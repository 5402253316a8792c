//! Why a model directory cannot be used: each error names the file and the fix.

use std::path::PathBuf;

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
