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
//!
//! Private: the directory is 0700 and each file 0600 (an older version's 0755 directory is
//! tightened at the next write). A list read back is a hint for search, never a grant:
//! tools the config's `enabled_tools`/`disabled_tools` filter out are dropped at load, and
//! a call is forwarded only to a tool the running server listed itself
//! (`downstream::ServerHandle::call`), so a tool written into the file by hand is never
//! called; it is gone from the catalog once the server has run.

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
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // `$XDG_CACHE_HOME/mcp-defer` or `~/.cache/mcp-defer` on Linux; each OS's own elsewhere.
    crate::platform::dirs::cache_dir()
}

/// Whether `MCP_DEFER_CACHE_DIR` names the directory.
fn overridden() -> bool {
    std::env::var_os(CACHE_DIR_ENV).is_some_and(|v| !v.is_empty())
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
    match serde_json::from_slice::<CachedList>(&text) {
        Ok(mut list) => {
            // The file is the config's list only if nobody edited it: what the filters
            // exclude stays out whatever it says.
            list.tools.retain(|tool| server.allows(tool.name()));
            Some(list)
        }
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
    let tmp = path.with_extension(format!("json.{}", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            crate::platform::create_private_dir(parent)?;
            // Ours alone when it is the default place; a directory named by
            // `MCP_DEFER_CACHE_DIR` keeps the mode its owner gave it.
            if !overridden() {
                crate::platform::restrict_dir_to_owner(parent)?;
            }
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        crate::platform::private_file_options(&mut options);
        let mut file = options.open(&tmp)?;
        // The mode given at open applies only to a file it creates.
        crate::platform::restrict_to_owner(&file)?;
        std::io::Write::write_all(
            &mut file,
            &serde_json::to_vec(list).map_err(std::io::Error::other)?,
        )?;
        std::fs::rename(&tmp, &path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
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
