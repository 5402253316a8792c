//! The file operations `adopt` is made of: read a file that may be absent, write one
//! atomically (a crash leaves the old file or the new one, never half of each), and keep
//! the state directory private. The client files and servers.toml hold secrets (env values,
//! headers), so nothing here ever prints a file's content.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The file's bytes, or `None` when it does not exist.
///
/// # Errors
/// Any read error but "not found", naming the file.
pub(super) fn read_optional(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Where a write to `path` must land: the file a symlink points to (a dotfiles repository
/// often links `~/.claude.json` or `~/.codex/config.toml`), so the link stays a link.
fn resolve(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// Replaces `path` with `bytes` through a temporary file in the same directory and a
/// rename. The new file gets `mode` when given (0600 for files that may hold copied
/// secrets), else the old file's mode, else 0600.
///
/// # Errors
/// When the directory cannot be created or the file cannot be written, naming the file.
pub(super) fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> anyhow::Result<()> {
    let target = resolve(path);
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let old_mode = std::fs::metadata(&target)
        .ok()
        .map(|m| crate::platform::file_mode(&m));
    let mode = mode.or(old_mode).unwrap_or(0o600);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.mcp-defer-{}.tmp", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut file = crate::platform::create_new_with_mode(&tmp, mode)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", target.display()));
    }
    Ok(())
}

/// Creates the directory (and its parents) with mode 0700: backups hold secrets.
///
/// # Errors
/// When it cannot be created.
pub(super) fn private_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    crate::platform::set_mode(dir, 0o700)
        .with_context(|| format!("cannot make {} private", dir.display()))
}
