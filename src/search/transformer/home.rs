//! Where the transformer tier's model lives when the config names none: what
//! `mcp-defer model fetch` unpacks and what `semantic = "model"` without `model = "<dir>"`
//! loads, so the two never disagree.

use std::path::PathBuf;

/// The model's directory name: sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0).
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// `<data>/mcp-defer/models/all-MiniLM-L6-v2`, beside the OAuth token file
/// (`crate::platform::dirs` says where `<data>` is on each OS); `None` without a home.
pub fn default_dir() -> Option<PathBuf> {
    default_dir_in(&|name| std::env::var(name).ok())
}

/// As [`default_dir`], reading the variables through `env` (the config loader's lookup).
pub fn default_dir_in(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    Some(
        crate::platform::dirs::data_dir_in(env)?
            .join("models")
            .join(MODEL_NAME),
    )
}
