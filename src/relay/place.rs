//! Where a hub lives: one socket per user, config and build of mcp-defer.
//!
//! The name carries a hash of the canonical config path (and profile) and one of the build
//! (version, and the binary's size and modification time), so two configs get two hubs and
//! a session never joins a hub of another version: an upgraded binary starts its own while
//! the old one serves its sessions out and leaves. The lock beside the socket makes two
//! sessions that race start one hub; the log beside it is the hub's stderr.

use std::path::{Path, PathBuf};

use crate::platform::hub::{ChannelError, hub_dir};

/// A hub's files, in the user's private hub directory.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    dir: PathBuf,
    /// `hub-<config hash>`: what every build's hub of this config shares.
    config_stem: String,
    /// `<version>-<build hash>`.
    build: String,
}

impl Place {
    /// The place of the hub for `config` (canonicalized by the caller) and `profile`.
    ///
    /// # Errors
    /// When the hub directory is not a private one of the user (or the OS has no hub).
    pub(crate) fn for_config(config: &Path, profile: Option<&str>) -> Result<Place, ChannelError> {
        let dir = hub_dir()?;
        Ok(Place::in_dir(dir, config, profile, &build_identity()))
    }

    fn in_dir(dir: PathBuf, config: &Path, profile: Option<&str>, build: &str) -> Place {
        let mut key = config.as_os_str().as_encoded_bytes().to_vec();
        key.push(0);
        key.extend_from_slice(profile.unwrap_or_default().as_bytes());
        Place {
            dir,
            config_stem: format!("hub-{:016x}", fnv1a64(&key)),
            build: format!(
                "{}-{:08x}",
                env!("CARGO_PKG_VERSION"),
                fnv1a64(build.as_bytes()) as u32
            ),
        }
    }

    fn file(&self, ext: &str) -> PathBuf {
        (self.dir).join(format!("{}-{}.{ext}", self.config_stem, self.build))
    }

    /// The socket sessions connect to.
    pub(crate) fn socket(&self) -> PathBuf {
        self.file("sock")
    }

    /// The lock held while a hub is started.
    pub(crate) fn lock(&self) -> PathBuf {
        self.file("lock")
    }

    /// The hub's stderr.
    pub(crate) fn log(&self) -> PathBuf {
        self.file("log")
    }

    /// Sockets of hubs of other builds for the same config: a session says it does not join
    /// them.
    pub(crate) fn other_builds(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let ours = self.socket();
        let prefix = format!("{}-", self.config_stem);
        let mut found: Vec<PathBuf> = (entries.flatten())
            .map(|e| e.path())
            .filter(|p| *p != ours)
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".sock"))
            })
            .collect();
        found.sort();
        found
    }
}

/// What makes this binary the same build as a running hub: the version, and the file's
/// path, size and modification time (a rebuilt binary of the same version differs).
fn build_identity() -> String {
    let exe = std::env::current_exe().ok();
    let meta = exe.as_ref().and_then(|e| std::fs::metadata(e).ok());
    let modified = (meta.as_ref())
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos());
    format!(
        "{} {:?} {:?} {:?}",
        env!("CARGO_PKG_VERSION"),
        exe,
        meta.map(|m| m.len()),
        modified
    )
}

/// 64-bit FNV-1a: the same on every platform and release, all a file name needs.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    // A test panics on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn configs_profiles_and_builds_each_get_their_own_hub() {
        let dir = PathBuf::from("/run/user/1000/mcp-defer");
        let a = Place::in_dir(dir.clone(), Path::new("/a/servers.toml"), None, "b1");
        let b = Place::in_dir(dir.clone(), Path::new("/b/servers.toml"), None, "b1");
        let a_work = Place::in_dir(
            dir.clone(),
            Path::new("/a/servers.toml"),
            Some("work"),
            "b1",
        );
        let a_new = Place::in_dir(dir.clone(), Path::new("/a/servers.toml"), None, "b2");
        let again = Place::in_dir(dir, Path::new("/a/servers.toml"), None, "b1");
        assert_eq!(a.socket(), again.socket());
        assert_ne!(a.socket(), b.socket());
        assert_ne!(a.socket(), a_work.socket());
        assert_ne!(a.socket(), a_new.socket());
        // Builds of one config share the stem, so a session can name the other hubs.
        assert_eq!(a.config_stem, a_new.config_stem);
        let name = a
            .socket()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with("hub-") && name.ends_with(".sock"),
            "{name}"
        );
        assert!(name.contains(env!("CARGO_PKG_VERSION")), "{name}");
    }

    #[test]
    fn the_hash_is_pinned() {
        // A release must not move every user's hub: FNV-1a 64 of "a".
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
