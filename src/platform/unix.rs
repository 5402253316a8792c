//! Unix (Linux and macOS): process groups and signals, file modes.

use std::io;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

/// Owner read/write only: files that may hold secrets (tokens, imported env values).
const PRIVATE_FILE_MODE: u32 = 0o600;
/// Owner only: the directory that holds them.
const PRIVATE_DIR_MODE: u32 = 0o700;
/// How often [`Tree::terminate`] looks whether the group is gone.
const POLL: Duration = Duration::from_millis(20);

/// A child's process tree: the process group it leads (`ProcessGroup::leader()`).
#[derive(Debug)]
pub(crate) struct Tree {
    pgid: i32,
}

impl Tree {
    /// The tree rooted at the child with process id `id`, and a future that resolves when
    /// the tree must be killed through the child itself: never on Unix, where a signal to the
    /// group reaches it.
    pub(crate) fn new(id: u32) -> (Tree, impl Future<Output = ()> + Send + 'static) {
        let pgid = i32::try_from(id).unwrap_or(0);
        (Tree { pgid }, std::future::pending())
    }

    /// The id the watchdog is told about; `None` when there is no group to kill.
    pub(crate) fn watch_id(&self) -> Option<i32> {
        (self.pgid > 1).then_some(self.pgid)
    }

    /// SIGTERM to the group, up to `grace` for it to empty, then SIGKILL.
    pub(crate) async fn terminate(&mut self, grace: Duration) {
        if self.watch_id().is_none() {
            return;
        }
        if signal_group(self.pgid, libc::SIGTERM) {
            let start = tokio::time::Instant::now();
            while start.elapsed() < grace && signal_group(self.pgid, 0) {
                tokio::time::sleep(POLL).await;
            }
            if signal_group(self.pgid, 0) {
                tracing::debug!(
                    pgid = self.pgid,
                    "process group ignored SIGTERM; killing it"
                );
                signal_group(self.pgid, libc::SIGKILL);
            }
        }
    }

    /// SIGKILL to the whole group, now.
    pub(crate) fn kill(&mut self) {
        if self.watch_id().is_some() {
            signal_group(self.pgid, libc::SIGKILL);
        }
    }
}

/// Whether the group still had members (the signal was delivered).
fn signal_group(pgid: i32, signal: i32) -> bool {
    // SAFETY: killpg has no memory-safety preconditions; a stale pgid only yields ESRCH.
    unsafe { libc::killpg(pgid, signal) == 0 }
}

pub(super) fn tree_wrappers(wrap: &mut process_wrap::tokio::CommandWrap) {
    wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
}

/// The signal that ended the process, if a signal did.
pub(crate) fn exit_signal(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// Whether a spawn failed because the file is not a program we may run (ENOEXEC: no `#!`
/// line and not a binary for this machine).
pub(crate) fn is_not_executable(err: &io::Error) -> bool {
    err.raw_os_error() == Some(libc::ENOEXEC)
}

/// Installs the handlers now and returns a future that resolves on SIGINT or SIGTERM with
/// the signal's name.
///
/// # Errors
/// When the handlers cannot be installed.
pub(crate) fn terminated() -> io::Result<impl Future<Output = &'static str>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
        }
    })
}

/// SIGHUP, the Unix way to ask a daemon to re-read its config.
#[derive(Debug)]
pub(crate) struct Hangup(tokio::signal::unix::Signal);

impl Hangup {
    /// Installs the handler now, so a SIGHUP sent after this returns is not lost.
    ///
    /// # Errors
    /// When the handler cannot be installed.
    pub(crate) fn new() -> io::Result<Hangup> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Hangup(signal(SignalKind::hangup())?))
    }

    /// The next SIGHUP; `None` once no more can arrive.
    pub(crate) async fn recv(&mut self) -> Option<()> {
        self.0.recv().await
    }
}

/// Makes `options` create the file owner read/write only (0600).
pub(crate) fn private_file_options(options: &mut std::fs::OpenOptions) {
    options.mode(PRIVATE_FILE_MODE);
}

/// Makes `options` refuse to open `path` when its last component is a symbolic link
/// (`O_NOFOLLOW`: the open fails with `ELOOP`), so a file of ours planted as a link to
/// another is never written through or chmod'ed.
pub(crate) fn no_follow(options: &mut std::fs::OpenOptions) {
    options.custom_flags(libc::O_NOFOLLOW);
}

/// Sets an open file to 0600: the mode given at open applies only to a file it creates.
///
/// # Errors
/// When the mode cannot be changed.
pub(crate) fn restrict_to_owner(file: &std::fs::File) -> io::Result<()> {
    file.set_permissions(std::fs::Permissions::from_mode(PRIVATE_FILE_MODE))
}

/// Creates `dir` (and its parents) and makes `dir` itself owner-only (0700). A directory
/// that exists is left as it is: it may be the user's own (`--write ~/x.toml`).
///
/// # Errors
/// When the directory cannot be created or its mode set.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(PRIVATE_DIR_MODE))
}

/// Makes an existing `dir` of ours owner-only (0700) when others could read or enter it:
/// one an older version created with the default mode.
///
/// # Errors
/// When its mode cannot be read or changed.
pub(crate) fn restrict_dir_to_owner(dir: &Path) -> io::Result<()> {
    let mode = std::fs::metadata(dir)?.permissions().mode();
    if mode & 0o077 == 0 {
        return Ok(());
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(PRIVATE_DIR_MODE))
}

/// The permission bits of a file, for tests that pin them.
#[cfg(test)]
pub(crate) fn mode_of(path: &Path) -> Option<u32> {
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

pub(super) fn close_stdout() {
    // SAFETY: closing our own stdout; the caller writes nothing to it afterwards.
    unsafe { libc::close(1) };
}

/// Puts the watchdog in its own process group: a terminal's Ctrl-C or a kill of our group
/// must not take it first.
pub(crate) fn own_process_group(command: &mut std::process::Command) {
    std::os::unix::process::CommandExt::process_group(command, 0);
}

/// The watchdog must not die of the signals that end a session; end of file on its stdin
/// is its only way out.
pub(crate) fn ignore_session_signals() {
    // SAFETY: ignoring signals has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
}

/// SIGKILL to process group `pgid` (a gone group yields ESRCH, ignored).
pub(crate) fn kill_group(pgid: i32) {
    signal_group(pgid, libc::SIGKILL);
}

/// A file's permission bits, to give a restored file the mode it had.
pub(crate) fn file_mode(meta: &std::fs::Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

/// Which file this is (device and inode): a file renamed over another is another file,
/// whatever its size and time say.
pub(crate) fn file_identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// Sets `path`'s permission bits.
///
/// # Errors
/// When the mode cannot be changed.
pub(crate) fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Creates `path`, which must not exist, with permission bits `mode` from the start (no
/// moment at a looser mode).
///
/// # Errors
/// When it exists or cannot be created.
pub(crate) fn create_new_with_mode(path: &Path, mode: u32) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
}

/// Raises the soft limit on open file descriptors to the hard limit, so a connection cap
/// above 1024 (systemd's default soft limit) can be reached at all; failing that, leaves it.
pub(crate) fn raise_fd_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own and pass by pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads the struct we own; raising the soft limit up to the hard
        // one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            tracing::debug!(
                from = limit.rlim_cur,
                to = limit.rlim_max,
                "raised the open-file limit"
            );
        }
    }
}

/// The client's stdin and stdout when both are Unix sockets, as duplicates made
/// non-blocking for the IO reactor; `None` when either is something else (a pipe, a
/// terminal, a file, a TCP socket), and then neither is changed. Non-blocking is a flag of
/// the socket's open file description, which only this process holds (the client holds
/// the other end of each pair); nothing here reads fd 0 or writes fd 1 by other means.
pub(crate) fn stdio_sockets() -> Option<(tokio::net::UnixStream, tokio::net::UnixStream)> {
    use std::os::fd::AsFd;
    let unix_socket = |fd: std::os::fd::BorrowedFd<'_>| {
        let stream = std::os::unix::net::UnixStream::from(fd.try_clone_to_owned().ok()?);
        // Only a Unix socket has a Unix address (a pair's is unnamed): a pipe or a file
        // fails with ENOTSOCK, a TCP socket as not a Unix one.
        stream.local_addr().ok()?;
        Some(stream)
    };
    let stdin = unix_socket(io::stdin().as_fd())?;
    let stdout = unix_socket(io::stdout().as_fd())?;
    let reactor = |stream: std::os::unix::net::UnixStream| {
        stream.set_nonblocking(true)?;
        tokio::net::UnixStream::from_std(stream)
    };
    match (reactor(stdin), reactor(stdout)) {
        (Ok(stdin), Ok(stdout)) => Some((stdin, stdout)),
        (Err(err), _) | (_, Err(err)) => {
            // Blocking again, for the blocking handles that read and write them instead.
            for fd in [io::stdin().as_fd(), io::stdout().as_fd()] {
                if let Some(stream) = unix_socket(fd) {
                    let _ = stream.set_nonblocking(false);
                }
            }
            tracing::warn!(error = %err, "the client's stdio sockets cannot go through the IO reactor");
            None
        }
    }
}
