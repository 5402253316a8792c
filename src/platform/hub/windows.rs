//! The hub's channel on Windows: not offered yet (a named pipe with an owner-only ACL is
//! the way); every call says so and sessions run alone.

use std::path::Path;

use super::{Channel, ChannelError};

/// No uid on Windows; the hub is not offered, so nothing compares it.
pub(crate) fn user_id() -> u32 {
    0
}

/// No per-user runtime directory on Windows.
pub(super) fn user_runtime_dir() -> Option<std::path::PathBuf> {
    None
}

pub(super) fn private_dir(_dir: &Path) -> Result<(), ChannelError> {
    Err(ChannelError::Unsupported)
}

/// # Errors
/// Always [`ChannelError::Unsupported`].
pub(crate) async fn connect(_path: &Path) -> Result<Channel, ChannelError> {
    Err(ChannelError::Unsupported)
}

/// Not offered on Windows.
pub(crate) struct Listener;

impl Listener {
    /// # Errors
    /// Always [`ChannelError::Unsupported`].
    pub(crate) async fn bind(_path: &Path) -> Result<Listener, ChannelError> {
        Err(ChannelError::Unsupported)
    }

    /// # Errors
    /// Always [`ChannelError::Unsupported`].
    pub(crate) async fn accept(&self) -> Result<Channel, ChannelError> {
        Err(ChannelError::Unsupported)
    }
}

/// A process of its own console group, so the session's Ctrl-C does not reach it.
pub(crate) fn detach(command: &mut std::process::Command) {
    use std::os::windows::process::CommandExt;
    /// `CREATE_NEW_PROCESS_GROUP | DETACHED_PROCESS`.
    const FLAGS: u32 = 0x0000_0200 | 0x0000_0008;
    command.creation_flags(FLAGS);
}

/// Not offered on Windows (the hub is off there).
///
/// # Errors
/// Always `Unsupported`.
pub(crate) fn lock_exclusive(_file: &std::fs::File, _wait: bool) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}
