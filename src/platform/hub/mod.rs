//! The hub's private channel (issue 29): where its socket lives, who may use it, and how
//! the hub process is started apart from the session that starts it.
//!
//! One promise on every OS: only the user who runs the hub can reach it, and a session only
//! talks to a hub run by its own user. Unix: a Unix socket in a directory only the user may
//! enter (0700, checked to be the user's own, never followed through a symlink), the socket
//! file's owner checked before connecting, and the peer's uid checked on both ends
//! (`SO_PEERCRED` / `getpeereid`). Windows: a named pipe whose DACL admits the user's SID
//! alone, made first-instance-only (no one else's pipe of that name is shared), local
//! clients only, and the peer process's token user checked on both ends (see `windows.rs`).
//! Depends on nothing in the crate but its sibling [`super::dirs`].

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

pub(crate) use imp::{Listener, User, connect, detach, lock_exclusive, user_id};

/// Whether this OS has the hub: sessions of a config share one process there.
pub(crate) const HUB_SUPPORTED: bool = cfg!(any(unix, windows));

/// The folder inside the runtime directory.
const APP: &str = "mcp-defer";

/// One end of a connection: what is read, and what is written.
pub(crate) struct Channel {
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
}

/// Why a hub's channel cannot be used.
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
    // Unix: the socket file's owner (Windows refuses by the pipe's ACL: `ForeignPipe`).
    #[cfg_attr(windows, allow(dead_code))]
    ForeignOwner {
        path: PathBuf,
        owner: User,
        you: User,
    },
    #[error(
        "the hub's pipe {name} (for {}) exists but refuses you: another user made it; \
         refusing it (this session runs its own servers until that process is gone)",
        path.display()
    )]
    #[cfg_attr(unix, allow(dead_code))]
    ForeignPipe { path: PathBuf, name: String },
    #[error(
        "the process at {} runs as user {peer}, not as you (user {you}); refusing it",
        path.display()
    )]
    ForeignPeer {
        path: PathBuf,
        peer: User,
        you: User,
    },
    #[error(
        "{} is not a private directory of yours ({why}); the hub's socket must not be \
         reachable by other users: remove it, or set XDG_RUNTIME_DIR to a directory of your own",
        path.display()
    )]
    OpenDir { path: PathBuf, why: String },
    #[error("{} is not a socket; remove it", path.display())]
    #[cfg_attr(windows, allow(dead_code))]
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
/// per-user temp); on Windows `%LOCALAPPDATA%\mcp-defer\hub`. Sessions of every client must find the same one, and clients differ in
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
    let dir = match runtime.map(|r| r.join(APP)).or_else(imp::default_hub_dir) {
        Some(dir) => dir,
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

/// Takes the lock a hub holds for its whole life on `<path>.alive`, so a second hub for the
/// same place learns that one runs (the OS lets go of it with the process, however it ends).
/// `options` carry the OS's own settings (Unix: owner-only mode).
fn hold_alive(
    path: &Path,
    options: &mut std::fs::OpenOptions,
) -> Result<std::fs::File, ChannelError> {
    let alive_path = path.with_extension("alive");
    let alive = (options.create(true).truncate(false).write(true))
        .open(&alive_path)
        .map_err(io_at(&alive_path))?;
    match lock_exclusive(&alive, false) {
        Ok(()) => Ok(alive),
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => Err(io_at(path)(io::Error::new(
            io::ErrorKind::AddrInUse,
            "another hub runs for this socket",
        ))),
        Err(err) => Err(io_at(&alive_path)(err)),
    }
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> ChannelError + '_ {
    move |source| ChannelError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    // A test panics on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// The channel of this OS (Unix socket, or named pipe): a session connects to a hub
    /// bound at a path, and bytes go both ways.
    #[tokio::test]
    async fn a_session_reaches_the_hub_and_bytes_go_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub-trip.sock");
        assert!(matches!(
            connect(&path).await.err().unwrap(),
            ChannelError::NotListening { stale: false, .. }
        ));
        let listener = Listener::bind(&path).await.unwrap();
        let hub = tokio::spawn(async move {
            let mut served = Vec::new();
            // Two sessions, one after the other: the hub takes more than one.
            for _ in 0..2 {
                let mut channel = listener.accept().await.unwrap();
                let mut asked = [0u8; 4];
                channel.reader.read_exact(&mut asked).await.unwrap();
                channel.writer.write_all(b"pong").await.unwrap();
                channel.writer.flush().await.unwrap();
                served.push(asked);
            }
            listener
        });
        for _ in 0..2 {
            let mut session = connect(&path).await.unwrap();
            session.writer.write_all(b"ping").await.unwrap();
            session.writer.flush().await.unwrap();
            let mut answer = [0u8; 4];
            session.reader.read_exact(&mut answer).await.unwrap();
            assert_eq!(&answer, b"pong");
        }
        let listener = hub.await.unwrap();
        drop(listener);
        assert!(matches!(
            connect(&path).await.err().unwrap(),
            ChannelError::NotListening { .. }
        ));
    }

    #[tokio::test]
    async fn a_second_hub_at_the_same_place_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub-twice.sock");
        let first = Listener::bind(&path).await.unwrap();
        match Listener::bind(&path).await {
            Err(ChannelError::Io { source, .. }) => {
                assert_eq!(source.kind(), io::ErrorKind::AddrInUse, "{source}");
            }
            Err(other) => panic!("refused for the wrong reason: {other}"),
            Ok(_) => panic!("a second hub bound the same place"),
        }
        // Once the first is gone, a new hub may listen there.
        drop(first);
        let _again = Listener::bind(&path).await.unwrap();
        connect(&path).await.unwrap();
    }

    #[test]
    fn the_start_lock_admits_one_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub.lock");
        let open = || {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .unwrap()
        };
        let (one, two) = (open(), open());
        lock_exclusive(&one, false).unwrap();
        assert_eq!(
            lock_exclusive(&two, false).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        drop(one);
        lock_exclusive(&two, false).unwrap();
    }

    #[test]
    fn the_hub_folder_is_made_then_checked() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join(APP);
        imp::private_dir(&dir).unwrap();
        assert!(dir.is_dir(), "{}", dir.display());
        // Present already: checked (ours, private, not a link), not made again.
        imp::private_dir(&dir).unwrap();
    }

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
