//! Windows: a Job Object per server, console control events, profile-private files.
//!
//! Each server is spawned suspended into its own Job Object with
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` (process-wrap's `JobObject` + `KillOnDrop`), and
//! resumed only once it is a member: every process it starts joins the job. When the job's
//! last handle closes (we stop the server, or mcp-defer exits or is killed, however) the
//! OS terminates the whole tree, so no watchdog is needed. Windows has no SIGTERM for a
//! console program, so stopping a server terminates its job.

use std::io;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::sync::oneshot;

/// `ERROR_BAD_EXE_FORMAT`: the file is not a program for this machine.
const ERROR_BAD_EXE_FORMAT: i32 = 193;

/// A child's process tree: its Job Object, which the task that reaps the child owns. This
/// handle asks that task to terminate the job.
#[derive(Debug)]
pub(crate) struct Tree {
    kill: Option<oneshot::Sender<()>>,
}

impl Tree {
    /// The tree rooted at the child with process id `_id`, and a future that resolves when
    /// the job must be terminated: on [`Tree::kill`] or when this handle is dropped.
    pub(crate) fn new(_id: u32) -> (Tree, impl Future<Output = ()> + Send + 'static) {
        let (tx, rx) = oneshot::channel();
        (Tree { kill: Some(tx) }, async move {
            let _ = rx.await;
        })
    }

    /// Windows needs no watchdog: the job dies with us.
    pub(crate) fn watch_id(&self) -> Option<i32> {
        None
    }

    /// Terminates the job (a console program has no gentler stop to ask for).
    pub(crate) async fn terminate(&mut self, _grace: Duration) {
        self.kill();
    }

    /// Terminates the job now.
    pub(crate) fn kill(&mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
    }
}

pub(super) fn tree_wrappers(wrap: &mut process_wrap::tokio::CommandWrap) {
    wrap.wrap(process_wrap::tokio::JobObject)
        .wrap(process_wrap::tokio::KillOnDrop);
}

/// Windows ends processes with exit codes, never signals.
pub(crate) fn exit_signal(_status: ExitStatus) -> Option<i32> {
    None
}

/// Whether a spawn failed because the file is not a program for this machine.
pub(crate) fn is_not_executable(err: &io::Error) -> bool {
    err.raw_os_error() == Some(ERROR_BAD_EXE_FORMAT)
}

/// Installs the console control handlers now and returns a future that resolves on
/// Ctrl-C, Ctrl-Break, the console window closing, logoff or shutdown, with its name.
///
/// # Errors
/// When the handlers cannot be installed.
pub(crate) fn terminated() -> io::Result<impl Future<Output = &'static str>> {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_logoff, ctrl_shutdown};
    let mut interrupt = ctrl_c()?;
    let mut brk = ctrl_break()?;
    let mut close = ctrl_close()?;
    let mut logoff = ctrl_logoff()?;
    let mut shutdown = ctrl_shutdown()?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => "Ctrl-C",
            _ = brk.recv() => "Ctrl-Break",
            _ = close.recv() => "console close",
            _ = logoff.recv() => "logoff",
            _ = shutdown.recv() => "shutdown",
        }
    })
}

/// Windows has no SIGHUP: the config file is reloaded when it changes.
#[derive(Debug)]
pub(crate) struct Hangup;

impl Hangup {
    /// # Errors
    /// Never; the signature matches Unix's.
    pub(crate) fn new() -> io::Result<Hangup> {
        Ok(Hangup)
    }

    /// Never resolves.
    pub(crate) async fn recv(&mut self) -> Option<()> {
        std::future::pending().await
    }
}

/// Nothing to set: a new file takes the ACL of its folder, and ours are under the user's
/// profile (`%LOCALAPPDATA%`, `%APPDATA%`), readable by the user, SYSTEM and
/// Administrators only. We never add an entry that widens it.
pub(crate) fn private_file_options(_options: &mut std::fs::OpenOptions) {}

/// Makes `options` open a symbolic link itself rather than its target
/// (`FILE_FLAG_OPEN_REPARSE_POINT`); the caller refuses what it opened when it is a link
/// (`fs::File::metadata`), so a file of ours planted as a link is never written through.
pub(crate) fn no_follow(options: &mut std::fs::OpenOptions) {
    use std::os::windows::fs::OpenOptionsExt;
    /// `FILE_FLAG_OPEN_REPARSE_POINT` (winbase.h).
    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
}

/// As [`private_file_options`]: the profile folder's ACL already restricts the file.
///
/// # Errors
/// Never.
pub(crate) fn restrict_to_owner(_file: &std::fs::File) -> io::Result<()> {
    Ok(())
}

/// Creates `dir` and its parents; it inherits the profile folder's user-only ACL.
///
/// # Errors
/// When the directory cannot be created.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// As [`create_private_dir`]: the folder's ACL is the profile's, never widened by us.
///
/// # Errors
/// Never.
pub(crate) fn restrict_dir_to_owner(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Windows has no permission bits.
#[cfg(test)]
pub(crate) fn mode_of(_path: &Path) -> Option<u32> {
    None
}

pub(super) fn close_stdout() {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Console::{GetStdHandle, STD_OUTPUT_HANDLE};
    // SAFETY: closes our own standard output handle; the caller writes nothing to it after.
    unsafe {
        let handle = GetStdHandle(STD_OUTPUT_HANDLE);
        if !handle.is_null() {
            CloseHandle(handle);
        }
    }
}

/// The watchdog does not run on Windows ([`super::NEEDS_WATCHDOG`]); these keep its code
/// the same on every OS.
pub(crate) fn own_process_group(_command: &mut std::process::Command) {}

pub(crate) fn ignore_session_signals() {}

pub(crate) fn kill_group(_pgid: i32) {}

/// Windows has no mode bits: files are private through the profile folder's ACL.
pub(crate) fn file_mode(_meta: &std::fs::Metadata) -> u32 {
    0o600
}

/// Which file this is: std gives no stable file index on Windows (`file_index` is
/// unstable); NTFS keeps a creation time for each file, which a file renamed over another
/// brings with it, so callers compare that.
pub(crate) fn file_identity(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// As [`file_mode`]: nothing to set.
///
/// # Errors
/// Never.
pub(crate) fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Creates `path`, which must not exist; it inherits the folder's ACL.
///
/// # Errors
/// When it exists or cannot be created.
pub(crate) fn create_new_with_mode(path: &Path, _mode: u32) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Windows has no per-process descriptor limit to raise (handles are limited by memory).
pub(crate) fn raise_fd_limit() {}

/// Empties this process's working set: its pages go to the standby list (still in memory,
/// shared with the hub where they are the binary's) and fault back in as used.
pub(super) fn trim_resident_set() {
    use windows_sys::Win32::System::ProcessStatus::K32EmptyWorkingSet;
    use windows_sys::Win32::System::Threading::GetCurrentProcess;
    // SAFETY: GetCurrentProcess returns a pseudo-handle valid in this process with every
    // access; emptying the working set only unmaps pages, which fault back when touched.
    // A failure leaves the process as it was, so its result is not needed.
    unsafe {
        K32EmptyWorkingSet(GetCurrentProcess());
    }
}
