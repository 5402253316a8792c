//! The hub's channel on Unix: a Unix socket in a private directory, peers checked by uid.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{Channel, ChannelError, io_at, private_dir_verdict, same_user};

/// The socket file: owner read/write only (the directory is 0700 already; this is the
/// second lock on the door).
const SOCKET_MODE: u32 = 0o600;

/// A Unix user: their uid.
pub(crate) type User = u32;

/// The effective user id of this process.
pub(crate) fn user_id() -> User {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `/run/user/<uid>/mcp-defer` when `/run/user/<uid>` is a directory of this user
/// (systemd-logind makes it at login; it is what `XDG_RUNTIME_DIR` names there).
pub(super) fn default_hub_dir() -> Option<PathBuf> {
    let you = user_id();
    let dir = PathBuf::from(format!("/run/user/{you}"));
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    (meta.file_type().is_dir() && same_user(meta.uid(), you)).then(|| dir.join(super::APP))
}

/// Creates `dir` owner-only when missing; checks an existing one is ours, private and not a
/// symlink (`lstat`: a link planted there by someone else is refused, not followed).
pub(super) fn private_dir(dir: &Path) -> Result<(), ChannelError> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(io_at(parent))?;
    }
    let mut builder = std::fs::DirBuilder::new();
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(io_at(dir)(err)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io_at(dir))?;
    let open = |why: String| ChannelError::OpenDir {
        path: dir.to_path_buf(),
        why,
    };
    if !meta.file_type().is_dir() {
        return Err(open("not a directory".to_owned()));
    }
    private_dir_verdict(meta.uid(), meta.permissions().mode(), user_id()).map_err(open)
}

/// Connects to the hub at `path`, after checking the socket file is ours, and checks the
/// process that answers runs as us.
///
/// # Errors
/// [`ChannelError::NotListening`] when no hub is there (`stale` when a socket file is left
/// by one that is gone); the refusals; I/O errors.
pub(crate) async fn connect(path: &Path) -> Result<Channel, ChannelError> {
    let you = user_id();
    let not_listening = |stale| ChannelError::NotListening {
        path: path.to_path_buf(),
        stale,
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(not_listening(false)),
        Err(err) => return Err(io_at(path)(err)),
    };
    if !same_user(meta.uid(), you) {
        return Err(ChannelError::ForeignOwner {
            path: path.to_path_buf(),
            owner: meta.uid(),
            you,
        });
    }
    if !meta.file_type().is_socket() {
        return Err(ChannelError::NotASocket {
            path: path.to_path_buf(),
        });
    }
    let stream = match tokio::net::UnixStream::connect(path).await {
        Ok(stream) => stream,
        Err(err) if err.kind() == io::ErrorKind::ConnectionRefused => {
            return Err(not_listening(true));
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(not_listening(false)),
        Err(err) => return Err(io_at(path)(err)),
    };
    check_peer(&stream, path)?;
    Ok(channel(stream))
}

fn check_peer(stream: &tokio::net::UnixStream, path: &Path) -> Result<(), ChannelError> {
    let you = user_id();
    let peer = stream.peer_cred().map_err(io_at(path))?.uid();
    if same_user(peer, you) {
        Ok(())
    } else {
        Err(ChannelError::ForeignPeer {
            path: path.to_path_buf(),
            peer,
            you,
        })
    }
}

fn channel(stream: tokio::net::UnixStream) -> Channel {
    let (reader, writer) = stream.into_split();
    Channel {
        reader: Box::new(reader),
        writer: Box::new(writer),
    }
}

/// The hub's listening socket; the file is removed when this is dropped.
pub(crate) struct Listener {
    listener: tokio::net::UnixListener,
    path: PathBuf,
    /// Held for the hub's life: one hub per socket path, even when two were started at
    /// once (the socket file alone cannot say so: two could each replace a stale one).
    _alive: std::fs::File,
}

impl Listener {
    /// Listens at `path` (0600). A socket file left there by a hub that is gone is replaced;
    /// one a live hub answers on is not.
    ///
    /// # Errors
    /// `AddrInUse` when a hub answers there; the refusals of [`connect`]; I/O errors.
    pub(crate) async fn bind(path: &Path) -> Result<Listener, ChannelError> {
        let alive = super::hold_alive(path, std::fs::OpenOptions::new().mode(SOCKET_MODE))?;
        match connect(path).await {
            Ok(_) => {
                return Err(io_at(path)(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    "a hub already listens there",
                )));
            }
            Err(ChannelError::NotListening { stale: true, .. }) => {
                std::fs::remove_file(path).map_err(io_at(path))?;
            }
            Err(ChannelError::NotListening { stale: false, .. }) => {}
            Err(err) => return Err(err),
        }
        let listener = tokio::net::UnixListener::bind(path).map_err(io_at(path))?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(SOCKET_MODE))
            .map_err(io_at(path))?;
        Ok(Listener {
            listener,
            path: path.to_path_buf(),
            _alive: alive,
        })
    }

    /// The next connection of a process of this user. A process of another user is
    /// refused (closed at once) and reported as [`ChannelError::ForeignPeer`].
    ///
    /// # Errors
    /// The refusal; accept's I/O errors.
    pub(crate) async fn accept(&self) -> Result<Channel, ChannelError> {
        let (stream, _) = self.listener.accept().await.map_err(io_at(&self.path))?;
        check_peer(&stream, &self.path)?;
        Ok(channel(stream))
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Starts `command` apart from the session that starts it: its own session (`setsid`), so
/// the terminal's signals and hangup, and the client killing its server's group, do not
/// reach the hub the other sessions use.
pub(crate) fn detach(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and only calls setsid,
    // which is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Takes an exclusive lock on `file`, waiting for whoever holds it; released when the file
/// is closed, or the process dies (`flock`: `File::lock` is newer than the crate's minimum
/// Rust). With `wait` false, `WouldBlock` when another holds it.
///
/// # Errors
/// The system call's error.
pub(crate) fn lock_exclusive(file: &std::fs::File, wait: bool) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let operation = if wait {
        libc::LOCK_EX
    } else {
        libc::LOCK_EX | libc::LOCK_NB
    };
    loop {
        // SAFETY: flock on a descriptor we own has no memory-safety preconditions.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}
