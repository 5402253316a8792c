//! Everything that differs between operating systems, in one place (DESIGN.md section 7b):
//! each OS keeps the same promises by its own means. Children die with us (Linux:
//! `PR_SET_PDEATHSIG` plus the pipe-EOF watchdog; macOS: the watchdog; Windows: a Job
//! Object with `KILL_ON_JOB_CLOSE`), whole process trees are stopped, a stop is asked for by
//! SIGINT/SIGTERM or Ctrl-C/console close, secrets files are private to the user, launchers
//! are found as the user's shell finds them, and config, cache and data live where the OS
//! expects them.
//!
//! Outside this module no code names `libc::`, `std::os::unix`, `std::os::windows` or
//! `tokio::signal::unix`; `.ci/check-platform` fails the build when one does. The pure
//! parts ([`launch`], [`env`], [`dirs`]) compile and are tested on every OS; `unix`,
//! `linux`, `macos` and `windows` hold the system calls. Depends on nothing in the crate.

pub(crate) mod dirs;
pub(crate) mod env;
pub(crate) mod hub;
pub(crate) mod launch;

pub(crate) use hub::lock_exclusive;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as imp;
#[cfg(windows)]
use windows as imp;

#[cfg(test)]
pub(crate) use imp::mode_of;
pub(crate) use imp::restrict_dir_to_owner;
pub(crate) use imp::{Hangup, Tree, exit_signal, is_not_executable, terminated};
pub(crate) use imp::{create_new_with_mode, file_identity, file_mode, raise_fd_limit, set_mode};
pub(crate) use imp::{create_private_dir, no_follow, private_file_options, restrict_to_owner};

/// Process-wide tuning done first thing in `main`. Linux: no transparent huge pages (see
/// `main.rs` for the figures); elsewhere nothing.
pub fn tune_process() {
    #[cfg(target_os = "linux")]
    linux::disable_transparent_huge_pages();
}

/// Drops from the resident set the pages of the program file that may not be read again
/// soon: what a session relaying to its hub touched before it went idle (its start-up, its
/// last exchange), what the watchdog touched before it waits, and what a server's catalog
/// update touched (the ingest code, and the static search tier's whole word table, of which
/// a query then reads only its tokens' rows). The pages stay in the page cache, shared with
/// every process of the same binary, and fault back in as used. Figures: docs/benchmarks.md, the hub's section.
/// Linux: `MADV_DONTNEED` on the program's clean read-only mappings; Windows: the working
/// set emptied (`EmptyWorkingSet`), whose pages go to the standby list; macOS: nothing (no
/// call drops a clean shared page from a task's resident set).
pub(crate) fn trim_resident_set() {
    #[cfg(target_os = "linux")]
    linux::trim_resident_set();
    #[cfg(windows)]
    windows::trim_resident_set();
}

/// Prepares a stdio server's command before it is spawned: on Linux the child gets
/// `PR_SET_PDEATHSIG = SIGKILL`, so it dies with us however we die; on macOS the watchdog
/// covers that; on Windows the Job Object does (see [`tree_wrappers`]).
pub(crate) fn prepare_child(command: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    linux::kill_with_parent(command);
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Adds what makes a spawned child the root of a tree we can stop whole: a new process
/// group on Unix, a Job Object that kills every member when its last handle closes (our
/// exit, however it happens) on Windows.
pub(crate) fn tree_wrappers(wrap: &mut process_wrap::tokio::CommandWrap) {
    imp::tree_wrappers(wrap);
}

/// Whether this OS needs the watchdog process (`downstream::watchdog`) to stop grandchildren
/// when mcp-defer dies without cleaning up. Windows' Job Object does that by itself.
pub(crate) const NEEDS_WATCHDOG: bool = cfg!(unix);

/// The watchdog's side: ignore the signals that end a session (it must outlive them), and
/// kill the process groups still registered once we are gone.
pub(crate) mod watchdog {
    #[cfg(unix)]
    pub(crate) use super::unix::{ignore_session_signals, kill_group, own_process_group};
    #[cfg(windows)]
    pub(crate) use super::windows::{ignore_session_signals, kill_group, own_process_group};
}

/// The client's stdin, read through the IO reactor where the OS allows it.
pub(crate) type ClientIn = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
/// The client's stdout, as [`ClientIn`].
pub(crate) type ClientOut = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// The client's stdin and stdout, for `serve` and the hub's relay. Pipes (Linux) and Unix
/// sockets (Linux and macOS: Node's `child_process`, so Claude Code, Copilot CLI and the
/// TypeScript SDK, starts its children on socket pairs) go through the IO reactor; the
/// rest (a terminal, a file, Windows) through tokio's blocking handles, which hand each
/// read and write to another thread: 2-6x the CPU a call and 4x the context switches,
/// measured over socket pairs before they had their own way (docs/benchmarks.md).
pub(crate) fn client_stdio() -> (ClientIn, ClientOut) {
    #[cfg(unix)]
    if let Some((stdin, stdout)) = unix::stdio_sockets() {
        tracing::debug!("stdio: the client's sockets, through the IO reactor");
        return (Box::new(stdin), Box::new(stdout));
    }
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    (Box::new(stdin), Box::new(stdout))
}

/// Closes this process's stdout (file descriptor 1 / the standard output handle), so the
/// peer reading it sees end of file while we keep running. The fixture server uses it to
/// play a server that hangs up.
pub fn close_stdout() {
    imp::close_stdout();
}
