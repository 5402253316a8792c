//! The lock file: the tool definitions the user approved, beside the config
//! (`servers.lock` for `servers.toml`, `<stem>.lock` for any other name), private to the
//! user (0600, through `platform`).
//!
//! One line a tool, sorted by server and tool, so a change to one tool is a change to one
//! line and the file can be kept in git and reviewed there:
//!
//! ```text
//! <server>/<tool> sha256:<64 hex> <the definition as canonical JSON>
//! ```
//!
//! The hash is what is compared; the definition is kept so `mcp-defer trust` can show what
//! changed. `#` lines and blank lines are comments. A tool name's whitespace, control
//! characters and `%` are written as `%XX` (UTF-8 bytes), so a line always splits at its
//! first two spaces. Writes re-read the file and merge, then replace it atomically, all under
//! an exclusive OS lock on a hidden file beside it (`.servers.lock.lck`): `serve` (recording
//! first sights; each HTTP profile's view, each session without a hub) and `mcp-defer
//! trust` (approving) may write at once, and neither may interleave its bytes with another's
//! nor drop what another added (a dropped line would hold that tool on next sight).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::definition::{Definition, Hash};

/// The header written at the top of every lock file.
const HEADER: &str = "\
# mcp-defer tool lock: the tool definitions approved for the servers of this config.
# One line a tool: <server>/<tool> <sha256 of the definition> <the definition as JSON>.
# Written when a server is first seen and by `mcp-defer trust`, which shows what changed.
";

/// Why the lock file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot read the tool lock {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the tool lock {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{}:{line}: {why}; fix the line, or delete it to have the tool recorded again on \
         next sight (held until `mcp-defer trust` when its server is already known)",
        path.display()
    )]
    Line {
        path: PathBuf,
        line: usize,
        why: &'static str,
    },
}

/// One approved tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    pub hash: Hash,
    /// What was approved, for a diff; `None` when the line's JSON could not be read back.
    pub definition: Option<Definition>,
}

/// The approved definitions, by server and tool name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    tools: BTreeMap<(String, String), Locked>,
}

/// The header of the held file: definitions a running `serve` holds, for `trust` to show.
const HELD_HEADER: &str = "\
# mcp-defer: tool definitions a running mcp-defer holds until `mcp-defer trust` approves them.
# Same line format as the lock; `mcp-defer trust` removes what it approves.
";

/// Where the definitions a running `serve` holds are written, beside the lock: a server
/// that changed a tool at runtime lists the old one to the fresh process `mcp-defer trust`
/// starts, so the held definition itself must be where `trust` can read it.
pub fn held_path(config: &Path) -> PathBuf {
    lock_path(config).with_extension("held")
}

/// Where the lock of the config at `config` lives.
pub fn lock_path(config: &Path) -> PathBuf {
    let stem = config
        .file_stem()
        .map_or_else(|| "servers".into(), |s| s.to_string_lossy().into_owned());
    config.with_file_name(format!("{stem}.lock"))
}

/// What says a lock file is the one a process last read or wrote: its time, length and
/// identity (device and inode on Unix; on Windows its creation time, which a file renamed
/// over it brings). Every write renames a new file over the old one, so another writer's
/// file differs in identity even when its length and time (a coarse clock) are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    identity: Option<(u64, u64)>,
    created: Option<SystemTime>,
}

impl Stamp {
    /// The file's stamp; `None` when it cannot be read (it does not exist yet).
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            identity: crate::platform::file_identity(&meta),
            created: meta.created().ok(),
        })
    }
}

impl Lock {
    /// The lock at `path`; empty when there is no file.
    ///
    /// # Errors
    /// When the file exists but cannot be read, or a line is not a lock line.
    pub fn read(path: &Path) -> Result<Lock, LockError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Lock::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::default()),
            Err(source) => Err(LockError::Read {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// Parses lock text (`path` for messages).
    ///
    /// # Errors
    /// The first line that is not a lock line, with its number.
    pub fn parse(text: &str, path: &Path) -> Result<Lock, LockError> {
        let mut lock = Lock::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let error = |why| LockError::Line {
                path: path.to_owned(),
                line: i + 1,
                why,
            };
            let (key, rest) = line
                .split_once(' ')
                .ok_or_else(|| error("expected `<server>/<tool> sha256:<hash> <json>`"))?;
            let (server, tool) = key
                .split_once('/')
                .ok_or_else(|| error("the tool is not written `<server>/<tool>`"))?;
            let (hash, json) = rest.split_once(' ').unwrap_or((rest, ""));
            let hash = Hash::parse(hash)
                .ok_or_else(|| error("the hash is not `sha256:` and 64 hex digits"))?;
            let tool = unescape(tool).ok_or_else(|| error("the tool name has a bad `%` escape"))?;
            let definition = Definition::parse(json);
            lock.tools
                .insert((server.to_owned(), tool), Locked { hash, definition });
        }
        Ok(lock)
    }

    /// The lock as written to its file.
    pub fn render(&self) -> String {
        self.render_with(HEADER)
    }

    fn render_with(&self, header: &str) -> String {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail, and every piece written is UTF-8.
        let _ = self.write_lines(&mut out, header);
        String::from_utf8(out).unwrap_or_default()
    }

    /// The lock's text, line by line into `out`: the file is written so rather than built
    /// as one string first (10k tools: an 8.6 MB string at the peak of a first sight).
    fn write_lines(&self, out: &mut impl Write, header: &str) -> std::io::Result<()> {
        out.write_all(header.as_bytes())?;
        for ((server, tool), locked) in &self.tools {
            write!(out, "{server}/{} {}", escape(tool), locked.hash.as_str())?;
            if let Some(definition) = &locked.definition {
                write!(out, " {}", definition.text())?;
            }
            out.write_all(b"\n")?;
        }
        Ok(())
    }

    pub fn get(&self, server: &str, tool: &str) -> Option<&Locked> {
        self.tools.get(&(server.to_owned(), tool.to_owned()))
    }

    /// Whether any tool of `server` is locked: a server seen before.
    pub fn knows_server(&self, server: &str) -> bool {
        (self.tools.range((server.to_owned(), String::new())..))
            .next()
            .is_some_and(|((s, _), _)| s == server)
    }

    /// Approves `definition` for `server/tool`; true when the lock changed.
    pub fn approve(&mut self, server: &str, tool: &str, definition: &Definition) -> bool {
        let locked = Locked {
            hash: definition.hash().clone(),
            definition: Some(definition.clone()),
        };
        let key = (server.to_owned(), tool.to_owned());
        if self.tools.get(&key) == Some(&locked) {
            return false;
        }
        self.tools.insert(key, locked);
        true
    }

    /// Every locked tool, sorted.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &Locked)> {
        (self.tools.iter()).map(|((s, t), l)| (s.as_str(), t.as_str(), l))
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Adds `approved` to the lock at `path` as it is on disk now (another process may
    /// have written it since it was read), writes the result, and returns it.
    ///
    /// # Errors
    /// When the file cannot be read back or written.
    pub fn merge_into(
        path: &Path,
        approved: &[(String, String, Definition)],
    ) -> Result<Lock, LockError> {
        let _writing = exclusive(path)?;
        Lock::read_and_add(path, approved)
    }

    /// The file's lock with `approved` added, written back when that changed it. Only
    /// under [`exclusive`].
    fn read_and_add(
        path: &Path,
        approved: &[(String, String, Definition)],
    ) -> Result<Lock, LockError> {
        let mut lock = Lock::read(path)?;
        let mut changed = false;
        for (server, tool, definition) in approved {
            changed |= lock.approve(server, tool, definition);
        }
        if changed {
            lock.write_file(path, HEADER)?;
        }
        Ok(lock)
    }

    /// [`Lock::merge_into`] for a process that keeps the lock in memory: `mine` already has
    /// `approved`, and `known` is the file's [`Stamp`] when `mine` was last read from or
    /// written to it. When the file still has that stamp, `mine` is written as it is, not
    /// read back and parsed again (10k tools: a second copy of every definition, ~20 MB,
    /// at each server's first sight); otherwise `mine` becomes the file's lock with
    /// `approved`, as `merge_into` makes it. Returns the file's stamp, taken before the
    /// writers' lock is let go: taken after, it could be another writer's, and this
    /// process would then write over what that one added.
    ///
    /// # Errors
    /// When the file cannot be read back or written; `mine` is then left as it was.
    pub fn merge_into_mine(
        path: &Path,
        approved: &[(String, String, Definition)],
        mine: &mut Lock,
        known: Option<Stamp>,
    ) -> Result<Option<Stamp>, LockError> {
        let _writing = exclusive(path)?;
        if known.is_some() && Stamp::of(path) == known {
            mine.write_file(path, HEADER)?;
            return Ok(Stamp::of(path));
        }
        *mine = Lock::read_and_add(path, approved)?;
        Ok(Stamp::of(path))
    }

    /// Removes `server/tool`; true when it was there.
    pub fn remove(&mut self, server: &str, tool: &str) -> bool {
        self.tools
            .remove(&(server.to_owned(), tool.to_owned()))
            .is_some()
    }

    /// Updates the held file at `path` as it is on disk now: `add` written, `remove`d
    /// ones dropped; the file is deleted when nothing is left.
    ///
    /// # Errors
    /// When the file cannot be read back, written or deleted.
    pub fn update_held(
        path: &Path,
        add: &[(String, String, Definition)],
        remove: &[(String, String)],
    ) -> Result<(), LockError> {
        let _writing = exclusive(path)?;
        let mut held = Lock::read(path)?;
        let mut changed = false;
        for (server, tool, definition) in add {
            changed |= held.approve(server, tool, definition);
        }
        for (server, tool) in remove {
            changed |= held.remove(server, tool);
        }
        if !changed {
            return Ok(());
        }
        if held.is_empty() {
            return match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(LockError::Write {
                    path: path.to_owned(),
                    source: e,
                }),
                _ => Ok(()),
            };
        }
        held.write_file(path, HELD_HEADER)
    }

    /// Replaces the file at `path` with `text`: a temporary file in the same directory,
    /// private to the user, renamed over the old one (a crash leaves one or the other).
    /// Only under [`exclusive`]: the temporary file's name is the process's, so two writers
    /// of one process would share it.
    fn write_file(&self, path: &Path, header: &str) -> Result<(), LockError> {
        let error = |source| LockError::Write {
            path: path.to_owned(),
            source,
        };
        let tmp = hidden_beside(path, &format!("{}.tmp", std::process::id()));
        let written = (|| -> std::io::Result<()> {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            crate::platform::private_file_options(&mut options);
            let mut file = options.open(&tmp)?;
            // The mode given at open applies only to a file it creates.
            crate::platform::restrict_to_owner(&file)?;
            let mut out = std::io::BufWriter::new(&mut file);
            self.write_lines(&mut out, header)?;
            out.flush()?;
            drop(out);
            file.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(error)
    }
}

/// Waits for, then holds until dropped, the right to read-modify-write the file at `path`
/// (a lock or held file): an exclusive OS lock on a private hidden file beside it. A
/// separate file because the written one is replaced by a rename, and a lock on a replaced
/// file guards nothing.
fn exclusive(path: &Path) -> Result<std::fs::File, LockError> {
    let error = |source| LockError::Write {
        path: path.to_owned(),
        source,
    };
    let guard = hidden_beside(path, "lck");
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    crate::platform::private_file_options(&mut options);
    let file = options.open(&guard).map_err(error)?;
    crate::platform::lock_exclusive(&file, true).map_err(error)?;
    Ok(file)
}

/// `.<file name>.<tail>` in the folder of `path`: a file of the lock's own, out of sight.
fn hidden_beside(path: &Path, tail: &str) -> PathBuf {
    let name = path.file_name().map_or_else(
        || "servers.lock".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    path.with_file_name(format!(".{name}.{tail}"))
}

/// A tool name as the lock writes it: `%XX` for `%`, whitespace and control characters.
fn escape(tool: &str) -> String {
    let mut out = String::with_capacity(tool.len());
    for c in tool.chars() {
        if c == '%' || c.is_whitespace() || c.is_control() {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The inverse of [`escape`]; `None` for a malformed escape.
fn unescape(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::definition::Overridden;

    fn definition(description: &str) -> Definition {
        Definition::of(
            &serde_json::json!({"name": "t", "description": description}).to_string(),
            Overridden::default(),
        )
    }

    #[test]
    fn the_lock_beside_the_config_takes_its_stem() {
        assert_eq!(
            lock_path(Path::new("/x/servers.toml")),
            Path::new("/x/servers.lock")
        );
        assert_eq!(
            lock_path(Path::new("/x/work.toml")),
            Path::new("/x/work.lock")
        );
    }

    #[test]
    fn a_lock_round_trips_sorted_one_line_a_tool() {
        let mut lock = Lock::default();
        lock.approve("b", "z", &definition("Z"));
        lock.approve("a", "odd name%", &definition("A"));
        let text = lock.render();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("a/odd%20name%25 sha256:"), "{text}");
        assert!(lines[1].starts_with("b/z sha256:"), "{text}");
        let back = Lock::parse(&text, Path::new("x.lock")).unwrap_or_default();
        assert_eq!(back, lock);
        assert!(back.knows_server("a") && !back.knows_server("c"));
    }

    #[test]
    fn a_bad_line_names_its_number_and_the_fix() {
        let text = "# comment\n\na/t sha256:nothex {}\n";
        let err = Lock::parse(text, Path::new("s.lock"))
            .err()
            .map(|e| e.to_string());
        let err = err.unwrap_or_default();
        assert!(err.starts_with("s.lock:3: the hash is"), "{err}");
        assert!(err.contains("fix the line"), "{err}");
    }

    #[test]
    fn merge_keeps_what_another_process_wrote_and_the_file_is_private() {
        let dir = std::env::temp_dir().join(format!("mcp-defer-lock-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("servers.lock");
        let _ = std::fs::remove_file(&path);
        Lock::merge_into(&path, &[("a".into(), "x".into(), definition("X"))])
            .unwrap_or_else(|e| panic!("{e}"));
        let merged = Lock::merge_into(&path, &[("b".into(), "y".into(), definition("Y"))])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(merged.len(), 2);
        assert_eq!(Lock::read(&path).map(|l| l.len()).unwrap_or(0), 2);
        // `None` where the OS has no mode bits (Windows).
        let mode = crate::platform::mode_of(&path);
        assert!(mode.is_none_or(|m| m == 0o600), "{mode:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Seen in the suite: two views of one `serve --http` recorded first sights at once,
    /// wrote one temporary file together (a torn line 11, every tool of the config then
    /// held) and one rename found it gone. Writers at once keep every line, and the file
    /// reads back.
    #[test]
    fn writers_at_once_keep_every_line_and_the_file_reads_back() {
        const WRITERS: usize = 8;
        const EACH: usize = 12;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let path = dir.path().join("servers.lock");
        let held = dir.path().join("servers.held");
        std::thread::scope(|scope| {
            for writer in 0..WRITERS {
                let (path, held) = (&path, &held);
                scope.spawn(move || {
                    for n in 0..EACH {
                        let tool = (
                            format!("s{writer}"),
                            format!("t{n}"),
                            definition("long text ".repeat(n + 1).as_str()),
                        );
                        Lock::merge_into(path, std::slice::from_ref(&tool))
                            .unwrap_or_else(|e| panic!("merge: {e}"));
                        Lock::update_held(held, std::slice::from_ref(&tool), &[])
                            .unwrap_or_else(|e| panic!("held: {e}"));
                    }
                });
            }
        });
        for file in [&path, &held] {
            let lock = Lock::read(file).unwrap_or_else(|e| panic!("read back: {e}"));
            assert_eq!(lock.len(), WRITERS * EACH, "{}", file.display());
        }
    }

    /// As above, with writers that keep the lock in memory (`serve`'s first sights): one
    /// that took the file's stamp after letting the writers' lock go could take another
    /// writer's, and then write over that one's lines.
    #[test]
    fn writers_keeping_the_lock_in_memory_keep_every_line() {
        const WRITERS: usize = 6;
        const EACH: usize = 15;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let path = dir.path().join("servers.lock");
        std::thread::scope(|scope| {
            for writer in 0..WRITERS {
                let path = &path;
                scope.spawn(move || {
                    let mut mine = Lock::default();
                    let mut known = None;
                    for n in 0..EACH {
                        let tool = (format!("s{writer}"), format!("t{n}"), definition("d"));
                        mine.approve(&tool.0, &tool.1, &tool.2);
                        known = Lock::merge_into_mine(
                            path,
                            std::slice::from_ref(&tool),
                            &mut mine,
                            known,
                        )
                        .unwrap_or_else(|e| panic!("merge: {e}"));
                    }
                });
            }
        });
        let lock = Lock::read(&path).unwrap_or_else(|e| panic!("read back: {e}"));
        assert_eq!(lock.len(), WRITERS * EACH);
    }

    /// Another writer's file renamed into place with the same length and time (a coarse
    /// clock, or a second) is still another file: it is read and merged, not written over.
    #[test]
    fn a_file_put_in_place_by_another_writer_is_merged_at_the_same_size_and_time() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let path = dir.path().join("servers.lock");
        let mut mine = Lock::default();
        let first = ("s".to_owned(), "aa".to_owned(), definition("d"));
        mine.approve(&first.0, &first.1, &first.2);
        let known = Lock::merge_into_mine(&path, std::slice::from_ref(&first), &mut mine, None)
            .unwrap_or_else(|e| panic!("merge: {e}"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read: {e}"));
        let theirs = text.replace("s/aa ", "s/bb ");
        assert_eq!(theirs.len(), text.len());
        let modified = (std::fs::metadata(&path).and_then(|m| m.modified()))
            .unwrap_or_else(|e| panic!("mtime: {e}"));
        let other = dir.path().join("other-writer.tmp");
        std::fs::write(&other, theirs).unwrap_or_else(|e| panic!("write: {e}"));
        (std::fs::File::options().write(true).open(&other))
            .and_then(|f| f.set_modified(modified))
            .unwrap_or_else(|e| panic!("set mtime: {e}"));
        std::fs::rename(&other, &path).unwrap_or_else(|e| panic!("rename: {e}"));
        let second = ("s".to_owned(), "cc".to_owned(), definition("e"));
        mine.approve(&second.0, &second.1, &second.2);
        Lock::merge_into_mine(&path, std::slice::from_ref(&second), &mut mine, known)
            .unwrap_or_else(|e| panic!("merge: {e}"));
        let back = Lock::read(&path).unwrap_or_else(|e| panic!("read back: {e}"));
        assert!(
            back.get("s", "bb").is_some(),
            "the other writer's line was written over"
        );
        assert!(back.get("s", "cc").is_some());
        assert!(
            mine.get("s", "bb").is_some(),
            "the lock in memory is the file's again"
        );
    }
}
