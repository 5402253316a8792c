//! Join the hub for this config, or start it: connect; else, under the lock beside the
//! socket (so two sessions that race start one hub), connect again, then start
//! `mcp-defer serve --hub` apart from this session and wait until it listens.

use std::io;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::place::Place;
use crate::platform::hub::{Channel, ChannelError, connect, detach};

/// Longest wait for a started hub to listen: it builds its index and binds before any
/// server starts, a few hundred milliseconds on a slow machine; far more means it is stuck.
const HUB_START_TIMEOUT: Duration = Duration::from_secs(15);
/// How often the start looks whether the hub listens yet.
const START_POLL: Duration = Duration::from_millis(5);

/// The hub of one config, as a session reaches it.
#[derive(Debug, Clone)]
pub(crate) struct Hub {
    pub place: Place,
    /// The canonical config path the hub is started with.
    pub config: PathBuf,
    pub profile: Option<String>,
}

/// Why this session could not join or start a hub.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JoinError {
    #[error(transparent)]
    Channel(#[from] ChannelError),
    #[error("cannot take the hub's start lock {}: {source}", path.display())]
    Lock { path: PathBuf, source: io::Error },
    #[error("cannot start the hub ({}): {source}", program.display())]
    Spawn { program: PathBuf, source: io::Error },
    #[error("the hub exited ({status}) before it listened; its log is {}", log.display())]
    Exited {
        status: std::process::ExitStatus,
        log: PathBuf,
    },
    #[error("the hub did not listen within {} s; its log is {}", HUB_START_TIMEOUT.as_secs(), log.display())]
    Timeout { log: PathBuf },
}

impl Hub {
    /// A connection to this config's hub, started first when none runs.
    ///
    /// # Errors
    /// [`JoinError`]: a refused socket or directory, or a hub that could not be started.
    pub(crate) async fn join(&self) -> Result<Channel, JoinError> {
        let socket = self.place.socket();
        match connect(&socket).await {
            Ok(channel) => return Ok(channel),
            Err(ChannelError::NotListening { .. }) => {}
            Err(err) => return Err(err.into()),
        }
        let lock_path = self.place.lock();
        let lock = {
            let path = lock_path.clone();
            tokio::task::spawn_blocking(move || take_lock(&path))
                .await
                .map_err(|err| JoinError::Lock {
                    path: lock_path.clone(),
                    source: io::Error::other(err),
                })?
                .map_err(|source| JoinError::Lock {
                    path: lock_path.clone(),
                    source,
                })?
        };
        // Another session may have started it while we waited for the lock.
        match connect(&socket).await {
            Ok(channel) => return Ok(channel),
            Err(ChannelError::NotListening { .. }) => {}
            Err(err) => return Err(err.into()),
        }
        for other in self.place.other_builds() {
            tracing::info!(
                socket = %other.display(),
                "a hub of another mcp-defer build runs for this config; starting one of this build"
            );
        }
        let mut child = self.spawn()?;
        let deadline = tokio::time::Instant::now() + HUB_START_TIMEOUT;
        let log = self.place.log();
        let joined = loop {
            match connect(&socket).await {
                Ok(channel) => break Ok(channel),
                Err(ChannelError::NotListening { .. }) => {}
                Err(err) => break Err(err.into()),
            }
            if let Ok(Some(status)) = child.try_wait() {
                break Err(JoinError::Exited { status, log });
            }
            if tokio::time::Instant::now() >= deadline {
                break Err(JoinError::Timeout { log });
            }
            tokio::time::sleep(START_POLL).await;
        };
        drop(lock);
        // The hub is our child until we exit: reap it when it ends, so a hub that dies while
        // this session runs leaves no zombie behind.
        std::thread::spawn(move || child.wait());
        joined
    }

    /// `mcp-defer serve --hub --config <config>`, detached, its stderr to the log.
    fn spawn(&self) -> Result<std::process::Child, JoinError> {
        let program = std::env::current_exe().map_err(|source| JoinError::Spawn {
            program: PathBuf::from("mcp-defer"),
            source,
        })?;
        let spawn_error = |source| JoinError::Spawn {
            program: program.clone(),
            source,
        };
        let log = self.place.log();
        let mut options = std::fs::OpenOptions::new();
        options.create(true).write(true).truncate(true);
        crate::platform::private_file_options(&mut options);
        let stderr = options.open(&log).map_err(spawn_error)?;
        let mut command = Command::new(&program);
        command
            .arg("serve")
            .arg("--hub")
            .arg("--config")
            .arg(&self.config);
        if let Some(profile) = &self.profile {
            command.arg("--profile").arg(profile);
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        // The hub's servers run where its config is, the same for every session (a session's
        // own directory would make them depend on which session came first).
        if let Some(dir) = self.config.parent() {
            command.current_dir(dir);
        }
        detach(&mut command);
        tracing::info!(socket = %self.place.socket().display(), log = %log.display(), "starting the hub");
        command.spawn().map_err(spawn_error)
    }
}

/// Takes the start lock, waiting for another session's start to finish.
fn take_lock(path: &std::path::Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    crate::platform::private_file_options(&mut options);
    let file = options.open(path)?;
    crate::platform::lock_exclusive(&file, true)?;
    Ok(file)
}
