//! What stops every server's process group when mcp-defer itself dies without cleaning up
//! (SIGKILL, OOM killer, a panic in the wrong place).
//!
//! Two layers. Each child gets `PR_SET_PDEATHSIG = SIGKILL` (in [`super::process`]), so the
//! server dies with us; but its own children (`npx` and `uvx` fork the real server) are not
//! ours and would be re-parented to init. So a tiny watchdog process (this binary, run as
//! `mcp-defer __watchdog`, in its own process group) reads the process groups we start from
//! a pipe; when the pipe reaches end of file (we are gone, however that happened) it sends
//! SIGKILL to every group still registered, then exits. A grandchild that leaves its group
//! (`setsid`) escapes both layers; nothing short of a cgroup catches that.
//!
//! macOS has no PDEATHSIG: this watchdog is the one layer there, and covers the server
//! itself too (it leads the group). Windows needs none: each server's Job Object dies with
//! us (`platform::NEEDS_WATCHDOG`). The system calls are in `crate::platform`.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The hidden subcommand that runs [`run`].
pub const SUBCOMMAND: &str = "__watchdog";

static PIPE: OnceLock<Mutex<ChildStdin>> = OnceLock::new();

/// Starts the watchdog for this process, once; later calls do nothing.
///
/// # Errors
/// When the watchdog cannot be spawned; mcp-defer still works, with the pdeathsig layer only.
pub fn start() -> std::io::Result<()> {
    if PIPE.get().is_some() || !crate::platform::NEEDS_WATCHDOG {
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    let mut command = Command::new(exe);
    command
        .arg(SUBCOMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Its own group: a terminal's Ctrl-C or a kill of our group must not take it first.
    crate::platform::watchdog::own_process_group(&mut command);
    let mut child = command.spawn()?;
    let Some(stdin) = child.stdin.take() else {
        return Err(std::io::Error::other("the watchdog has no stdin"));
    };
    // Not waited for: it outlives us by design, and exits on its own when we are gone.
    drop(child);
    let _ = PIPE.set(Mutex::new(stdin));
    Ok(())
}

/// Tells the watchdog to kill group `pgid` if we die.
pub(super) fn guard(pgid: i32) {
    send(&format!("+{pgid}\n"));
}

/// Tells the watchdog group `pgid` is gone (so a reused id is never killed).
pub(super) fn release(pgid: i32) {
    send(&format!("-{pgid}\n"));
}

fn send(line: &str) {
    let Some(pipe) = PIPE.get() else { return };
    // A few bytes into a pipe the watchdog drains at once: this never blocks in practice.
    let mut pipe = crate::sync::lock(pipe);
    let _ = pipe.write_all(line.as_bytes());
}

/// The watchdog's main: keep the registered groups until stdin ends, then SIGKILL them.
pub fn run() -> std::process::ExitCode {
    // The watchdog must not die of the signals that end a session; end of file on stdin is
    // its only way out.
    crate::platform::watchdog::ignore_session_signals();
    // It waits for a line now and then for as long as its parent lives: what it touched to
    // start, or to take a line, is not needed while it waits.
    crate::platform::trim_resident_set();
    let mut groups = BTreeSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (sign, pgid) = line.split_at(line.len().min(1));
        match (sign, pgid.parse::<i32>()) {
            ("+", Ok(pgid)) if pgid > 1 => {
                groups.insert(pgid);
            }
            ("-", Ok(pgid)) => {
                groups.remove(&pgid);
            }
            _ => {}
        }
        crate::platform::trim_resident_set();
    }
    for pgid in groups {
        crate::platform::watchdog::kill_group(pgid);
    }
    std::process::ExitCode::SUCCESS
}
