//! The tool lists of lazy servers (`start = "lazy"`), kept on disk between runs, so their
//! tools are searchable before they run.
//!
//! One JSON file per server config in the user's cache dir: `MCP_DEFER_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/mcp-defer`, else `~/.cache/mcp-defer`. The file is named by the
//! server's table name and a hash of its whole validated config (command, arguments,
//! env values, headers, filters, overrides), so a changed config never reads a stale list,
//! and a secret in the config is never written: only its hash's share of the name. The body
//! is what the server listed (after filters and overrides) and its handshake instructions.
//! Written on each successful listing; a missing or unreadable file means "start it once".

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::ServerConfig;
use crate::server_tool::ServerTool;

/// Overrides the cache directory (tests give each run its own).
pub const CACHE_DIR_ENV: &str = "MCP_DEFER_CACHE_DIR";

/// A server's last tool list.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CachedList {
    /// Written and read as the tools' JSON, as the server listed them.
    pub tools: Vec<ServerTool>,
    pub instructions: Option<String>,
}

/// The cache directory, or `None` when there is no home to put it in.
pub fn dir() -> Option<PathBuf> {
    let non_empty = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty(CACHE_DIR_ENV) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = non_empty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("mcp-defer"));
    }
    non_empty("HOME").map(|home| PathBuf::from(home).join(".cache").join("mcp-defer"))
}

/// The file of `server`'s list: its name and the hash of everything in its config.
pub fn path(server: &ServerConfig) -> Option<PathBuf> {
    let hash = fnv1a64(format!("{server:?}").as_bytes());
    Some(dir()?.join(format!("{}-{hash:016x}.json", server.name)))
}

/// The list `server` gave last time with this config, if there is one that reads.
pub fn load(server: &ServerConfig) -> Option<CachedList> {
    let path = path(server)?;
    let text = std::fs::read(&path).ok()?;
    match serde_json::from_slice(&text) {
        Ok(list) => Some(list),
        Err(err) => {
            tracing::warn!(path = %path.display(), error = %err, "unreadable tool cache; the server starts to list again");
            None
        }
    }
}

/// Keeps `list` as `server`'s last list. Written to a temporary file and renamed, so a
/// reader never sees half of it; a failure is logged (the server then starts next time).
pub fn store(server: &ServerConfig, list: &CachedList) {
    let Some(path) = path(server) else {
        tracing::debug!("no cache dir (no HOME); the tool list is not cached");
        return;
    };
    let written = (|| -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let tmp = path.with_extension(format!("json.{}", std::process::id()));
        std::fs::write(
            &tmp,
            serde_json::to_vec(list).map_err(std::io::Error::other)?,
        )?;
        std::fs::rename(&tmp, &path)
    })();
    if let Err(err) = written {
        tracing::warn!(path = %path.display(), error = %err, "cannot write the tool cache");
    }
}

/// FNV-1a, 64 bits: stable across runs and builds (std's hasher is not), which a file
/// name must be.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
