//! The usage file: one JSON line per event (`{"t":…,"k":"called","q":"…","tool":"…"}`),
//! appended as events happen, read once at start.
//!
//! `<data dir>/usage.jsonl` (`$MCP_DEFER_DATA_DIR`, else the OS's data directory,
//! `crate::platform::dirs::data_dir`), 0600 in a 0700 directory where the OS has modes.
//! Bounded: reading keeps the newest [`MAX_EVENTS`], and a file grown past a quarter more
//! is rewritten with only those (temporary file, then rename). A line that does not parse
//! (a torn last line after a crash, an edit by hand) is skipped; a file that cannot be read
//! or written is logged and learning goes on in memory: it never stops `serve`. Each line
//! goes out in one `write` on an `O_APPEND` file, on a thread of its own, so two processes
//! sharing the file interleave whole lines and a search never waits for the disk.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::Event;

/// Environment variable naming the directory of the usage file (tests give each run its
/// own).
pub const DATA_DIR_ENV: &str = "MCP_DEFER_DATA_DIR";
/// The file's name in that directory.
pub const FILE_NAME: &str = "usage.jsonl";
/// Events kept: the newest this many. At ~100 bytes a line, 500 KB; enough for months of
/// an agent's searches, few enough that reading them at start is a few milliseconds.
pub const MAX_EVENTS: usize = 5_000;

/// `$MCP_DEFER_DATA_DIR/usage.jsonl`, else the same in the OS's data directory; `None`
/// when there is neither (no home): learning then stays in memory.
pub fn default_path() -> Option<PathBuf> {
    Some(data_dir()?.join(FILE_NAME))
}

/// `$MCP_DEFER_DATA_DIR`, else the OS's data directory; `None` when there is neither.
pub(super) fn data_dir() -> Option<PathBuf> {
    std::env::var_os(DATA_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(crate::platform::dirs::data_dir)
}

/// The newest [`MAX_EVENTS`] events of the file at `path`, oldest first (none when it does
/// not exist), and how many lines were skipped as unreadable. A file grown past
/// `MAX_EVENTS * 5 / 4` lines is rewritten with the kept ones.
///
/// # Errors
/// When the file exists but cannot be read.
pub(super) fn load(path: &Path) -> io::Result<(Vec<Event>, usize)> {
    let mut options = OpenOptions::new();
    options.read(true);
    let file = match open(&options, path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(err) => return Err(err),
    };
    let mut kept: VecDeque<Event> = VecDeque::new();
    let (mut lines, mut skipped) = (0usize, 0usize);
    for line in io::BufReader::new(file).split(b'\n') {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        lines += 1;
        match serde_json::from_slice::<Event>(&line) {
            Ok(event) if event.is_valid() => {
                if kept.len() == MAX_EVENTS {
                    kept.pop_front();
                }
                kept.push_back(event);
            }
            _ => skipped += 1,
        }
    }
    let kept: Vec<Event> = kept.into();
    if lines > MAX_EVENTS + MAX_EVENTS / 4
        && let Err(error) = rewrite(path, &kept)
    {
        tracing::warn!(path = %path.display(), %error, "cannot compact the usage file");
    }
    Ok((kept, skipped))
}

/// Replaces the file with `events`: a temporary file beside it, renamed over it.
fn rewrite(path: &Path, events: &[Event]) -> io::Result<()> {
    let tmp = path.with_extension(format!("jsonl.{}", std::process::id()));
    let written = (|| {
        let mut file = create(&tmp, false)?;
        let mut text = Vec::new();
        for event in events {
            text.extend_from_slice(&event.line());
        }
        file.write_all(&text)?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Opens `path` private to the user (its directory made first), appending or truncating.
fn create(path: &Path, append: bool) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        crate::platform::create_private_dir(dir)?;
    }
    let mut options = OpenOptions::new();
    if append {
        options.append(true).create(true);
    } else {
        options.write(true).create(true).truncate(true);
    }
    crate::platform::private_file_options(&mut options);
    let file = open(&options, path)?;
    // The mode given at open applies only to a file it creates.
    crate::platform::restrict_to_owner(&file)?;
    Ok(file)
}

/// Opens `path` with `options`, never through a symbolic link: a usage file planted as a
/// link to another file (`~/.ssh/authorized_keys`) is refused, not read, written or
/// chmod'ed (`platform::no_follow`).
///
/// # Errors
/// When the open fails; a link is named as the cause, with the fix.
fn open(options: &OpenOptions, path: &Path) -> io::Result<File> {
    let mut options = options.clone();
    crate::platform::no_follow(&mut options);
    let link = || {
        io::Error::other(format!(
            "{} is a symbolic link, which is never followed; remove it (mcp-defer then \
             creates the file itself)",
            path.display()
        ))
    };
    match options.open(path) {
        Ok(file) if file.metadata()?.file_type().is_symlink() => Err(link()),
        Ok(file) => Ok(file),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Err(err),
        Err(err) => match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => Err(link()),
            _ => Err(err),
        },
    }
}

/// Appends events to the file on a thread of its own, started with the first event (so a
/// process that learns nothing creates no file). Dropping it ends the thread once every
/// event sent is written.
#[derive(Debug)]
pub(super) struct Appender {
    path: PathBuf,
    tx: Option<mpsc::Sender<Event>>,
    /// The thread could not be started: events stay in memory.
    failed: bool,
}

impl Appender {
    pub(super) fn new(path: PathBuf) -> Appender {
        Appender {
            path,
            tx: None,
            failed: false,
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Queues `event` for the file.
    pub(super) fn append(&mut self, event: Event) {
        if self.failed {
            return;
        }
        if self.tx.is_none() {
            let (tx, rx) = mpsc::channel::<Event>();
            let path = self.path.clone();
            let spawned = std::thread::Builder::new()
                .name("usage-writer".into())
                .spawn(move || write_all(&path, &rx));
            if let Err(error) = spawned {
                tracing::warn!(%error, "cannot start the usage writer; what is learnt is not kept");
                self.failed = true;
                return;
            }
            self.tx = Some(tx);
        }
        if let Some(tx) = &self.tx {
            let _ = tx.send(event);
        }
    }
}

/// The writer thread: each event one `write` of one line, until every sender is gone.
fn write_all(path: &Path, rx: &mpsc::Receiver<Event>) {
    let mut file = match create(path, true) {
        Ok(file) => file,
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "cannot write the usage file; what is learnt is not kept");
            return;
        }
    };
    while let Ok(event) = rx.recv() {
        if let Err(error) = file.write_all(&event.line()) {
            tracing::warn!(path = %path.display(), %error, "cannot append to the usage file");
            return;
        }
    }
}
