//! Child processes of stdio servers: spawned in their own process group, stderr captured,
//! exit status recorded, and the whole group terminated when the connection ends.
//!
//! `npx` and `uvx` fork the real server as a grandchild, so killing the direct child is not
//! enough: every signal here goes to the group (DESIGN.md section 3, no orphans).

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, CommandWrapper};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;
use tokio::sync::watch;
use tracing::Instrument;

use super::child_transport::ChildTransport;
use super::environment::ChildEnv;
use crate::sync::lock;

/// Stderr kept per process for error messages; older lines are dropped first.
pub const STDERR_CAP_BYTES: usize = 16 * 1024;
/// Lines of stderr quoted in a failure cause.
const CAUSE_LINES: usize = 8;
/// After the group gets SIGTERM, how long it may take before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(1000);

/// A spawned stdio server, before the handshake.
pub(super) struct Spawned {
    pub transport: ChildTransport,
    pub group: GroupGuard,
    pub exit: watch::Receiver<Option<ExitStatus>>,
    pub stderr: StderrLog,
}

/// Why a spawn failed. `NotFound` is its own kind: restarting will not make a command appear.
#[derive(Debug, thiserror::Error)]
pub(super) enum SpawnError {
    #[error("command not found: {command}{}", super::launcher::hint(command))]
    NotFound { command: String },
    #[error("working directory {} does not exist", cwd.display())]
    NoCwd { cwd: std::path::PathBuf },
    #[error("cannot execute {command}: {source}")]
    NotExecutable { command: String, source: io::Error },
    #[error("cannot start {command}: {source}")]
    Io { command: String, source: io::Error },
}

/// Spawns `command` with `env` (see [`ChildEnv`]), in `cwd`, as the leader of a new group.
///
/// # Errors
/// [`SpawnError::NotFound`] when the executable does not exist (ENOENT),
/// [`SpawnError::NotExecutable`] when it is not a program we may run (EACCES, ENOEXEC),
/// else `Io`.
pub(super) fn spawn(
    command: &str,
    args: &[String],
    env: &ChildEnv,
    cwd: Option<&Path>,
    max_message_bytes: usize,
) -> Result<Spawned, SpawnError> {
    if let Some(cwd) = cwd
        && !cwd.is_dir()
    {
        return Err(SpawnError::NoCwd {
            cwd: cwd.to_owned(),
        });
    }
    // Windows: `npx` is `npx.cmd`, found through PATHEXT as cmd.exe would; elsewhere as is.
    let launch = crate::platform::launch::resolve(command, &|name| {
        env.vars.get(std::ffi::OsStr::new(name)).cloned()
    });
    let mut cmd = tokio::process::Command::new(&launch.program);
    if !env.inherit {
        cmd.env_clear();
    }
    cmd.args(&launch.prefix)
        .args(args)
        .envs(&env.vars)
        .kill_on_drop(true)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // Linux: the child dies with us, however we die (see `platform::prepare_child`).
    crate::platform::prepare_child(&mut cmd);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    let (exit_tx, exit) = watch::channel(None);
    let signalled = Arc::new(AtomicBool::new(false));
    let mut wrap = CommandWrap::from(cmd);
    crate::platform::tree_wrappers(&mut wrap);
    wrap.wrap(ExitRecorder {
        tx: Arc::new(exit_tx),
        signalled: signalled.clone(),
    });
    let mut child = wrap.spawn().map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => SpawnError::NotFound {
            command: command.to_owned(),
        },
        _ if source.kind() == io::ErrorKind::PermissionDenied
            || crate::platform::is_not_executable(&source) =>
        {
            SpawnError::NotExecutable {
                command: command.to_owned(),
                source,
            }
        }
        _ => SpawnError::Io {
            command: command.to_owned(),
            source,
        },
    })?;
    let (Some(stdin), Some(stdout)) = (child.stdin().take(), child.stdout().take()) else {
        return Err(SpawnError::Io {
            command: command.to_owned(),
            source: io::Error::other("the child has no stdin or stdout pipe"),
        });
    };
    let stderr = child.stderr().take();
    let (tree, kill_requested) = crate::platform::Tree::new(child.id().unwrap_or(0));
    // Reaps the child (recording its exit status); dropping it (runtime shutdown) kills it.
    // On Windows the tree's job is ended through the child, so a kill request comes here.
    tokio::spawn(async move {
        let killed = tokio::select! {
            _ = child.wait() => false,
            () = kill_requested => true,
        };
        if killed {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    });
    let transport = ChildTransport::new(stdin, stdout, max_message_bytes);
    if let Some(id) = tree.watch_id() {
        super::watchdog::guard(id);
    }
    let (done_tx, done) = watch::channel(stderr.is_none());
    let log = StderrLog {
        inner: Arc::default(),
        done,
    };
    if let Some(stderr) = stderr {
        // Spawned from the supervisor, whose `downstream{server=…}` span names the server.
        tokio::spawn(
            read_stderr(stderr, log.clone(), done_tx).instrument(tracing::Span::current()),
        );
    }
    Ok(Spawned {
        transport,
        group: GroupGuard {
            tree: Some(tree),
            signalled,
        },
        exit,
        stderr: log,
    })
}

/// "exited with code 3", "killed by signal 9".
pub(super) fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), crate::platform::exit_signal(status)) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => format!("exited ({status})"),
    }
}

/// The last lines the child wrote to stderr, capped at [`STDERR_CAP_BYTES`].
#[derive(Debug, Clone)]
pub(super) struct StderrLog {
    inner: Arc<Mutex<StderrLines>>,
    /// True once stderr reached end of file.
    done: watch::Receiver<bool>,
}

#[derive(Debug, Default)]
struct StderrLines {
    lines: VecDeque<String>,
    bytes: usize,
}

impl StderrLog {
    fn push(&self, line: String) {
        let mut inner = lock(&self.inner);
        inner.bytes += line.len();
        inner.lines.push_back(line);
        while inner.bytes > STDERR_CAP_BYTES {
            match inner.lines.pop_front() {
                Some(old) => inner.bytes -= old.len(),
                None => break,
            }
        }
    }

    /// Waits up to `max` for the child's last words: its exit status can arrive before the
    /// final lines are read, and a grandchild may hold the pipe open forever.
    pub(super) async fn drained(&self, max: Duration) {
        let mut done = self.done.clone();
        let _ = tokio::time::timeout(max, done.wait_for(|d| *d)).await;
    }

    /// The last few lines, joined for a one-line cause, with the line that explains
    /// (see [`super::stderr_cause`]); `None` when silent.
    pub(super) fn tail(&self) -> Option<String> {
        let inner = lock(&self.inner);
        super::stderr_cause::cause(inner.lines.iter().map(String::as_str), CAUSE_LINES)
    }
}

async fn read_stderr(stderr: ChildStderr, log: StderrLog, done: watch::Sender<bool>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf).trim_end().to_owned();
                tracing::debug!(target: "mcp_defer::downstream::stderr", "{line}");
                log.push(line);
            }
        }
    }
    done.send_replace(true);
}

/// Records the child's exit status when rmcp's transport reaps it, so a crash can be
/// reported as "exited with code N" although rmcp keeps the child to itself.
#[derive(Debug)]
struct ExitRecorder {
    tx: Arc<watch::Sender<Option<ExitStatus>>>,
    /// Set when we (or rmcp, closing the transport) signal the child: its death by that
    /// signal is then our doing, not its failure.
    signalled: Arc<AtomicBool>,
}

impl CommandWrapper for ExitRecorder {
    fn wrap_child(
        &mut self,
        child: Box<dyn ChildWrapper>,
        _core: &CommandWrap,
    ) -> io::Result<Box<dyn ChildWrapper>> {
        Ok(Box::new(RecordingChild {
            inner: child,
            tx: self.tx.clone(),
            signalled: self.signalled.clone(),
        }))
    }
}

#[derive(Debug)]
struct RecordingChild {
    inner: Box<dyn ChildWrapper>,
    tx: Arc<watch::Sender<Option<ExitStatus>>>,
    signalled: Arc<AtomicBool>,
}

impl ChildWrapper for RecordingChild {
    fn inner(&self) -> &dyn ChildWrapper {
        self.inner.as_ref()
    }
    fn inner_mut(&mut self) -> &mut dyn ChildWrapper {
        self.inner.as_mut()
    }
    fn into_inner(self: Box<Self>) -> Box<dyn ChildWrapper> {
        self.inner
    }
    fn start_kill(&mut self) -> io::Result<()> {
        self.signalled.store(true, Ordering::Relaxed);
        self.inner.start_kill()
    }
    #[cfg(unix)]
    fn signal(&self, sig: i32) -> io::Result<()> {
        self.signalled.store(true, Ordering::Relaxed);
        self.inner.signal(sig)
    }
    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let status = self.inner.try_wait()?;
        if let Some(status) = status {
            self.tx.send_replace(Some(status));
        }
        Ok(status)
    }
    fn wait(
        &mut self,
    ) -> std::pin::Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(async move {
            let status = self.inner.wait().await?;
            self.tx.send_replace(Some(status));
            Ok(status)
        })
    }
}

/// The process tree of one child (its process group; its Job Object on Windows).
/// Terminating it reaches grandchildren that outlived their parent; dropping it without
/// [`GroupGuard::terminate`] kills the tree at once.
#[derive(Debug)]
pub(super) struct GroupGuard {
    tree: Option<crate::platform::Tree>,
    signalled: Arc<AtomicBool>,
}

impl GroupGuard {
    /// Whether we signalled the child (to stop it) before it exited.
    pub(super) fn signalled_by_us(&self) -> bool {
        self.signalled.load(Ordering::Relaxed)
    }

    /// SIGTERM to the group, up to [`TERM_GRACE`] for it to empty, then SIGKILL (Windows:
    /// the job is terminated).
    pub(super) async fn terminate(mut self) {
        self.signalled.store(true, Ordering::Relaxed);
        let Some(mut tree) = self.tree.take() else {
            return;
        };
        tree.terminate(TERM_GRACE).await;
        if let Some(id) = tree.watch_id() {
            super::watchdog::release(id);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(mut tree) = self.tree.take() {
            tree.kill();
            if let Some(id) = tree.watch_id() {
                super::watchdog::release(id);
            }
        }
    }
}
