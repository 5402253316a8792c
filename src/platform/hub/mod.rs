//! The hub's private channel (issue 29): where its socket lives, who may use it, and how
//! the hub process is started apart from the session that starts it.
//!
//! One promise on every OS: only the user who runs the hub can reach it, and a session only
//! talks to a hub run by its own user. Unix: a Unix socket in a directory only the user may
//! enter (0700, checked to be the user's own, never followed through a symlink), the socket
//! file's owner checked before connecting, and the peer's uid checked on both ends
//! (`SO_PEERCRED` / `getpeereid`). Windows: not offered yet ([`HUB_SUPPORTED`] is false and
//! sessions run alone, as with `hub = false`, each logging so); a named pipe with an
//! owner-only ACL is the way there. Depends on nothing in the crate.

use std::io;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncRead, AsyncWrite};

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

pub(crate) use imp::{Listener, connect, detach, lock_exclusive, user_id};

/// Whether this OS has the hub: sessions of a config share one process there.
pub(crate) const HUB_SUPPORTED: bool = cfg!(unix);

/// The folder inside the runtime directory.
const APP: &str = "mcp-defer";

/// One end of a connection: what is read, and what is written.
// Windows has no hub yet: only the Unix side builds or reads these.
#[cfg_attr(windows, allow(dead_code))]
pub(crate) struct Channel {
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
}

/// Why a hub's channel cannot be used.
// Windows has no hub yet: only the Unix side builds or reads these.
#[cfg_attr(windows, allow(dead_code))]
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChannelError {
    /// Nothing listens there (no socket file, or a stale one: the hub that made it is gone).
    #[error("no hub listens at {}", path.display())]
    NotListening { path: PathBuf, stale: bool },
    #[error(
        "{} is owned by user {owner}, not by you (user {you}); refusing it: only a hub you \
         run may serve your sessions (remove the file, or set XDG_RUNTIME_DIR to a directory \
         of your own)",
        path.display()
    )]
    ForeignOwner { path: PathBuf, owner: u32, you: u32 },
    #[error(
        "the process at {} runs as user {peer}, not as you (user {you}); refusing it",
        path.display()
    )]
    ForeignPeer { path: PathBuf, peer: u32, you: u32 },
    #[error(
        "{} is not a private directory of yours ({why}); the hub's socket must not be \
         reachable by other users: remove it, or set XDG_RUNTIME_DIR to a directory of your own",
        path.display()
    )]
    OpenDir { path: PathBuf, why: String },
    #[error("{} is not a socket; remove it", path.display())]
    NotASocket { path: PathBuf },
    #[error("the hub is not available on this OS yet")]
    Unsupported,
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// The directory the hub's sockets, locks and logs go in, created private (0700) when
/// missing and checked to be the user's own and private when present:
/// `$XDG_RUNTIME_DIR/mcp-defer`, else `/run/user/<uid>/mcp-defer` where that is the user's
/// (what `XDG_RUNTIME_DIR` names under systemd), else `<temp>/mcp-defer-<uid>` (macOS has a
/// per-user temp). Sessions of every client must find the same one, and clients differ in
/// what environment they pass a server: Codex passes `HOME`, `PATH`, `TMPDIR` and a few more,
/// never `XDG_RUNTIME_DIR`, so its sessions look up `/run/user/<uid>` themselves.
///
/// # Errors
/// [`ChannelError::OpenDir`] when it is someone else's or others may enter it; I/O errors.
pub(crate) fn hub_dir() -> Result<PathBuf, ChannelError> {
    if !HUB_SUPPORTED {
        return Err(ChannelError::Unsupported);
    }
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let dir = match runtime.or_else(imp::user_runtime_dir) {
        Some(runtime) => runtime.join(APP),
        None => std::env::temp_dir().join(format!("{APP}-{}", user_id())),
    };
    imp::private_dir(&dir)?;
    Ok(dir)
}

/// What decides whether a file or peer is trusted: the same user, and nobody else (root
/// included: a root hub would run the user's servers as root).
#[cfg_attr(windows, allow(dead_code))]
pub(crate) fn same_user(owner: u32, you: u32) -> bool {
    owner == you
}

/// Whether a directory with `owner` and permission `mode` bits is a private one of `you`.
/// `Err` says why not.
#[cfg_attr(windows, allow(dead_code))]
pub(crate) fn private_dir_verdict(owner: u32, mode: u32, you: u32) -> Result<(), String> {
    if !same_user(owner, you) {
        return Err(format!("owned by user {owner}"));
    }
    if mode & 0o077 != 0 {
        return Err(format!("mode {:o}, others may enter it", mode & 0o777));
    }
    Ok(())
}

#[cfg_attr(windows, allow(dead_code))]
fn io_at(path: &Path) -> impl FnOnce(io::Error) -> ChannelError + '_ {
    move |source| ChannelError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_private_directory_of_ours_is_used() {
        assert_eq!(private_dir_verdict(1000, 0o700, 1000), Ok(()));
        assert_eq!(
            private_dir_verdict(1001, 0o700, 1000),
            Err("owned by user 1001".to_owned())
        );
        assert_eq!(
            private_dir_verdict(1000, 0o755, 1000),
            Err("mode 755, others may enter it".to_owned())
        );
        assert_eq!(
            private_dir_verdict(0, 0o700, 1000),
            Err("owned by user 0".to_owned())
        );
    }

    #[test]
    fn a_peer_of_another_user_is_refused() {
        assert!(same_user(1000, 1000));
        assert!(!same_user(0, 1000));
        assert!(!same_user(1000, 0));
    }
}
