//! `mcp-defer report`: tokens and prompt-cache cost of the user's own sessions, from the
//! transcripts Claude Code and Codex write. Reads only the files it is pointed at (or the
//! two documented default folders); sends nothing anywhere.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use super::write_stdout;
use crate::report::{Report, Session, claude, codex, render};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Transcript files or folders to read; each file's format (Claude Code or Codex) is
    /// recognised from its content. With no path and no --claude/--codex, the defaults:
    /// $CLAUDE_CONFIG_DIR/projects (else ~/.claude/projects) and $CODEX_HOME/sessions (else
    /// ~/.codex/sessions).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Read the Claude Code transcripts (*.jsonl) under DIR.
    #[arg(long, value_name = "DIR")]
    claude: Vec<PathBuf>,
    /// Read the Codex rollouts (rollout-*.jsonl) under DIR.
    #[arg(long, value_name = "DIR")]
    codex: Vec<PathBuf>,
    /// The whole report as JSON (every request, every re-write) for scripts.
    #[arg(long)]
    json: bool,
}

/// Which parser a file goes to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    Claude,
    Codex,
    /// Decide from the file.
    Detect,
}

pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut files: Vec<(PathBuf, Format)> = Vec::new();
    let defaults = args.paths.is_empty() && args.claude.is_empty() && args.codex.is_empty();
    if defaults {
        let (claude_dir, codex_dir) = default_dirs();
        let mut looked = Vec::new();
        for (dir, format) in [(claude_dir, Format::Claude), (codex_dir, Format::Codex)] {
            let Some(dir) = dir else { continue };
            if dir.is_dir() {
                walk(&dir, format, &mut files)?;
            }
            looked.push(dir.display().to_string());
        }
        if files.is_empty() {
            // Nothing is wrong: no session has run yet, or they are kept elsewhere.
            eprintln!(
                "mcp-defer: no transcripts yet in {}: nothing to report. Run a Claude Code or \
                 Codex session first, or point at the transcripts with --claude DIR, --codex \
                 DIR or a path",
                if looked.is_empty() {
                    "the default folders (HOME is not set)".to_owned()
                } else {
                    looked.join(" or ")
                }
            );
            return Ok(ExitCode::SUCCESS);
        }
    }
    for (list, format) in [
        (&args.claude, Format::Claude),
        (&args.codex, Format::Codex),
        (&args.paths, Format::Detect),
    ] {
        for path in list {
            if path.is_dir() {
                walk(path, format, &mut files)?;
            } else if path.is_file() {
                files.push((path.clone(), format));
            } else {
                anyhow::bail!(
                    "{}: no such file or folder; give a transcript file or a folder that holds them",
                    path.display()
                );
            }
        }
    }
    let mut sessions = Vec::new();
    for (path, format) in &files {
        sessions.push(read(path, *format)?);
    }
    let report = Report::new(sessions);
    let out = if args.json {
        render::json(&report)?
    } else {
        render::text(&report)
    };
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// The folders Claude Code and Codex write their transcripts to.
fn default_dirs() -> (Option<PathBuf>, Option<PathBuf>) {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let claude = match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(dir) => Some(PathBuf::from(dir).join("projects")),
        None => home.as_ref().map(|h| h.join(".claude/projects")),
    };
    let codex = match std::env::var_os("CODEX_HOME") {
        Some(dir) => Some(PathBuf::from(dir).join("sessions")),
        None => home.as_ref().map(|h| h.join(".codex/sessions")),
    };
    (claude, codex)
}

/// Every transcript under `dir`, in path order (symbolic links to folders are not
/// followed, so a loop cannot trap the walk).
fn walk(dir: &Path, format: Format, files: &mut Vec<(PathBuf, Format)>) -> anyhow::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the folder {}", dir.display()))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&path, format, files)?;
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let wanted = name.ends_with(".jsonl")
            && match format {
                Format::Codex => name.starts_with("rollout-"),
                Format::Claude | Format::Detect => true,
            };
        if wanted && (kind.is_file() || path.is_file()) {
            files.push((path, format));
        }
    }
    Ok(())
}

/// One transcript, read line by line (never whole: transcripts grow to hundreds of MB).
fn read(path: &Path, format: Format) -> anyhow::Result<Session> {
    let shown = path.display().to_string();
    let open = || std::fs::File::open(path).map(std::io::BufReader::new);
    let format = match format {
        Format::Detect => {
            let mut first = Vec::new();
            // The first line only, however long it is.
            open()
                .and_then(|mut file| std::io::BufRead::read_until(&mut file, b'\n', &mut first))
                .with_context(|| format!("cannot read {shown}"))?;
            if codex::looks_like(&shown, String::from_utf8_lossy(&first).trim_end()) {
                Format::Codex
            } else {
                Format::Claude
            }
        }
        known => known,
    };
    let session = match format {
        Format::Codex => codex::parse(&shown, open),
        Format::Claude | Format::Detect => claude::parse(&shown, open),
    };
    session.with_context(|| format!("cannot read {shown}"))
}
