//! Where the transformer tier's model lives when the config names none: what
//! `mcp-defer model fetch` unpacks and what `semantic = "model"` without `model = "<dir>"`
//! loads, so the two never disagree.

use std::path::PathBuf;

/// The model's directory name: sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0).
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// `$XDG_DATA_HOME/mcp-defer/models/all-MiniLM-L6-v2`, else
/// `~/.local/share/mcp-defer/models/all-MiniLM-L6-v2` (beside the OAuth token file);
/// `None` when neither variable is set.
pub fn default_dir() -> Option<PathBuf> {
    default_dir_in(&|name| std::env::var(name).ok())
}

/// As [`default_dir`], reading the variables through `env` (the config loader's lookup).
pub fn default_dir_in(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let data = var("XDG_DATA_HOME").or_else(|| var("HOME").map(|h| h.join(".local/share")))?;
    Some(data.join("mcp-defer/models").join(MODEL_NAME))
}
