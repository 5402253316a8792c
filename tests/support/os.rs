//! The integration tests' only OS-specific calls (`.ci/check-platform` allows them here
//! alone). Unix-only: the tests that send signals or pin file modes are `#[cfg(unix)]`.

use std::path::Path;

/// The signals the tests send.
#[derive(Debug, Clone, Copy)]
pub enum Signal {
    Int,
    Term,
    Hup,
    Kill,
}

/// Sends `signal` to `pid`; whether it was delivered.
pub fn send(pid: i32, signal: Signal) -> bool {
    let signal = match signal {
        Signal::Int => libc::SIGINT,
        Signal::Term => libc::SIGTERM,
        Signal::Hup => libc::SIGHUP,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) has no memory-safety preconditions; a stale pid yields ESRCH.
    unsafe { libc::kill(pid, signal) == 0 }
}

/// The permission bits of `path`.
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

/// A symbolic link at `link` to `target`.
pub fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).expect("symlink");
}

/// Sets the permission bits of `path` (an executable script: 0o755).
pub fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A Unix domain socket connection (HAProxy's stats socket).
pub use std::os::unix::net::UnixStream;

/// Gives `path` to user `uid` (the tests run as root in CI's container; elsewhere this
/// fails and the test that needs it says it is skipped).
pub fn chown(path: &Path, uid: u32) -> std::io::Result<()> {
    std::os::unix::fs::chown(path, Some(uid), None)
}

/// Whether connecting to the Unix socket at `path` is refused: its file is left by a process
/// that is gone, every thread of it (a killed process's main thread shows as a zombie while
/// its other threads still hold its sockets).
pub fn refuses_connections(path: &Path) -> bool {
    matches!(
        std::os::unix::net::UnixStream::connect(path),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused
    )
}

/// Listens at `path` as a hub does that goes away just as a session joins: takes one
/// connection, waits until it has sent something (reads its first byte), removes the
/// socket file and closes both, the request unanswered. The returned thread ends then.
pub fn goes_away_on_first_request(path: &Path) -> std::thread::JoinHandle<()> {
    let listener = std::os::unix::net::UnixListener::bind(path).expect("bind the socket");
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .expect("read timeout");
        let _ = std::io::Read::read(&mut stream, &mut [0u8; 1]);
        std::fs::remove_file(&path).expect("remove the socket file");
    })
}

/// Gives `command` one end of a socket pair as its stdin and one of another as its stdout,
/// as Node's `child_process` starts its children (so Claude Code, Copilot CLI and the
/// TypeScript SDK); returns the client's ends: where to write the child's stdin, where to
/// read its stdout (a read waits at most 60 s, so a hang fails the test instead).
pub fn stdio_on_socket_pairs(
    command: &mut std::process::Command,
) -> (impl std::io::Write + use<>, impl std::io::Read + use<>) {
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;
    let (to_child, child_in) = UnixStream::pair().expect("socket pair");
    let (from_child, child_out) = UnixStream::pair().expect("socket pair");
    let timeout = Some(std::time::Duration::from_secs(60));
    from_child.set_read_timeout(timeout).expect("read timeout");
    command
        .stdin(OwnedFd::from(child_in))
        .stdout(OwnedFd::from(child_out));
    (to_child, from_child)
}
