//! `mcp-defer adopt <client>`: moves a client's MCP servers behind mcp-defer in one step,
//! and `mcp-defer adopt --undo <client>` puts everything back.
//!
//! Adopt (1) reads the servers of the client's user-level file as `import` does, (2) adds
//! them to servers.toml (merging into an existing one, leaving out servers it already runs),
//! (3) registers mcp-defer in that client for every project (Claude Code: user scope with
//! `alwaysLoad`), and (4) turns the adopted servers off there. Before anything is written,
//! each file it will touch is copied into a private state directory
//! (`<data>/mcp-defer/adopt/<client>/`, `crate::platform::dirs`; mode 0700) with a manifest that `--undo`
//! follows. Every write is atomic; servers.toml is written 0600, since env values and
//! headers copied from the client may be secrets. Nothing here prints a value of a file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use super::import::{self, Client};
use crate::config::Config;

mod client;
mod files;
mod launch;
mod merge;

use client::{ENTRY, Entry, Format, Launch};
use launch::Invocation;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Target {
    /// Claude Code: `~/.claude.json` (user scope, and this directory's local scope).
    Claude,
    /// Codex: `$CODEX_HOME/config.toml` or `~/.codex/config.toml`.
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json`.
    Gemini,
    /// Qwen Code: `~/.qwen/settings.json`.
    Qwen,
    /// GitHub Copilot CLI: `$COPILOT_HOME/mcp-config.json` or `~/.copilot/mcp-config.json`.
    Copilot,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Claude => "claude",
            Target::Codex => "codex",
            Target::Gemini => "gemini",
            Target::Qwen => "qwen",
            Target::Copilot => "copilot",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Target::Claude => "Claude Code",
            Target::Codex => "Codex",
            Target::Gemini => "Gemini CLI",
            Target::Qwen => "Qwen Code",
            Target::Copilot => "GitHub Copilot CLI",
        }
    }

    fn client(self) -> Client {
        match self {
            Target::Claude => Client::Claude,
            Target::Codex => Client::Codex,
            Target::Gemini => Client::Gemini,
            Target::Qwen => Client::Qwen,
            Target::Copilot => Client::Copilot,
        }
    }

    fn format(self) -> Format {
        match self {
            Target::Claude => Format::Json(Entry::Claude),
            Target::Codex => Format::CodexToml,
            Target::Gemini | Target::Qwen => Format::Json(Entry::Gemini),
            Target::Copilot => Format::Json(Entry::Copilot),
        }
    }

    /// How the client's own CLI shows the result.
    fn list_command(self) -> &'static str {
        match self {
            Target::Claude => "claude mcp list",
            Target::Codex => "codex mcp list",
            Target::Gemini => "gemini mcp list",
            Target::Qwen => "qwen mcp list",
            Target::Copilot => "copilot mcp list",
        }
    }
}

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The client whose servers move behind mcp-defer.
    #[arg(value_parser = TargetParser)]
    client: Target,
    /// Put back what the last `adopt` of this client changed: the client's servers return,
    /// mcp-defer's entry goes, servers.toml is restored if it was not edited since.
    #[arg(long)]
    undo: bool,
    /// The servers.toml to add the servers to and to register [default: $MCP_DEFER_CONFIG,
    /// else $XDG_CONFIG_HOME/mcp-defer/servers.toml, else ~/.config/mcp-defer/servers.toml]
    #[arg(long, short = 'c', value_name = "PATH")]
    config: Option<PathBuf>,
}

/// `adopt <client>`: a client adopt edits, or, for one only `import` reads, the error says
/// how to move its servers with `import` instead of a bare "invalid value".
#[derive(Clone)]
struct TargetParser;

impl clap::builder::TypedValueParser for TargetParser {
    type Value = Target;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Target, clap::Error> {
        let known = clap::builder::EnumValueParser::<Target>::new();
        let err = match known.parse_ref(cmd, arg, value) {
            Ok(target) => return Ok(target),
            Err(err) => err,
        };
        let text = value.to_string_lossy();
        let Ok(client) = <Client as clap::ValueEnum>::from_str(&text, true) else {
            return Err(err);
        };
        let mut cmd = cmd.clone();
        Err(cmd.error(
            clap::error::ErrorKind::InvalidValue,
            format!(
                "adopt does not edit {label}'s files (it adopts claude, codex, gemini, qwen and \
                 copilot); move {label}'s servers with \
                 `mcp-defer import {name} --write ~/.config/mcp-defer/servers.toml`, then \
                 register mcp-defer in {label} by hand (docs/install.md has the line, \
                 docs/clients.md what changes)",
                label = client.label(),
                name = client.name(),
            ),
        ))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            <Target as clap::ValueEnum>::value_variants()
                .iter()
                .filter_map(clap::ValueEnum::to_possible_value),
        ))
    }
}

/// What `--undo` needs: the files adopt touched, where their copies are, what it moved.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    client: Target,
    /// The client's file (`~/.claude.json`, Codex's `config.toml`, ...).
    client_file: PathBuf,
    /// Whether it existed; its copy is `client.bak` in the state directory.
    client_file_existed: bool,
    /// The directory adopt ran in: Claude Code's local scope that was cleaned.
    cwd: PathBuf,
    /// servers.toml; its copy is `servers.toml.bak`, what adopt wrote `servers.toml.adopted`.
    config: PathBuf,
    config_existed: bool,
    /// The servers turned off in the client, by their names there.
    moved: Vec<String>,
}

const MANIFEST: &str = "manifest.json";
const CLIENT_BACKUP: &str = "client.bak";
const CONFIG_BACKUP: &str = "servers.toml.bak";
const CONFIG_WRITTEN: &str = "servers.toml.adopted";
/// The client's file as adopt wrote it: unchanged at undo, the backup goes back byte for
/// byte (a JSONC file keeps its comments, which a key-by-key restore cannot).
const CLIENT_WRITTEN: &str = "client.adopted";

pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let home = crate::platform::dirs::home_dir().context(
        "no home directory (HOME, or USERPROFILE on Windows, is not set); \
         adopt edits the client's files under it",
    )?;
    let state = crate::platform::dirs::data_dir()
        .context("no data directory to keep adopt's backups in; set XDG_DATA_HOME")?
        .join("adopt")
        .join(args.client.name());
    if args.undo {
        undo(args.client, &state)
    } else {
        adopt(args.client, args.config, &home, &state)
    }
}

/// The servers.toml adopt writes: `--config`, `$MCP_DEFER_CONFIG`, else the user-level one
/// that `serve` finds from any directory. Absolute, since the client starts mcp-defer from
/// anywhere.
fn config_path(given: Option<PathBuf>, home: &Path, cwd: &Path) -> PathBuf {
    let path = given
        .or_else(|| std::env::var_os("MCP_DEFER_CONFIG").map(PathBuf::from))
        .unwrap_or_else(|| {
            crate::platform::dirs::config_dir()
                .unwrap_or_else(|| home.join(".config").join("mcp-defer"))
                .join("servers.toml")
        });
    if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    }
}

fn adopt(
    target: Target,
    config: Option<PathBuf>,
    home: &Path,
    state: &Path,
) -> anyhow::Result<ExitCode> {
    if state.join(MANIFEST).exists() {
        bail!(
            "{} was already adopted (its backups are in {}); run `mcp-defer adopt --undo {}` \
             first to adopt it again",
            target.label(),
            state.display(),
            target.name()
        );
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = config_path(config, home, &cwd);
    let me = Invocation::current()?;
    let client_file = import::user_file(target.client(), &cwd, home)?;
    let client_before = files::read_optional(&client_file)?;
    let client_text = match &client_before {
        Some(bytes) => String::from_utf8(bytes.clone())
            .with_context(|| format!("{} is not UTF-8 text", client_file.display()))?,
        None => String::new(),
    };
    let from_client = if client_text.trim().is_empty() {
        import::FromClient::default()
    } else {
        import::servers_of_file(target.client(), &client_text, &client_file, &cwd, home)?
    };

    // servers.toml, merged.
    let config_before = files::read_optional(&config)?;
    let config_text = match &config_before {
        Some(bytes) => String::from_utf8(bytes.clone())
            .with_context(|| format!("{} is not UTF-8 text", config.display()))?,
        None => String::new(),
    };
    let header = format!(
        "# Adopted from {} ({}) by `{me} adopt {}`; `{me} adopt --undo {}` takes\n\
         # them back there.\n",
        target.label(),
        client_file.display(),
        target.name(),
        target.name(),
        me = me.shown
    );
    let merged = merge::merge(&config_text, &from_client.servers, target.name(), &header)?;
    // `${VAR}`s stay unexpanded; any value will do to validate the rest.
    Config::parse_with_env(&merged.text, &config, &|_| Some("x".to_owned())).with_context(
        || {
            format!(
                "{} with the servers of {} would not load; nothing was changed",
                config.display(),
                target.label()
            )
        },
    )?;

    // The client's file: mcp-defer registered, the adopted servers off, each under the name
    // the client knows it by (`docs.site` there is `docs_site` here).
    let moved: Vec<String> = merged
        .added
        .iter()
        .chain(&merged.present)
        .map(|(name, _)| from_client.name_there(name).to_owned())
        .collect();
    // The way the user ran adopt, so a runner's cache path is never registered.
    let mut args = me.prefix.clone();
    args.extend([
        "serve".to_owned(),
        "--config".to_owned(),
        config.to_string_lossy().into_owned(),
    ]);
    let launch = Launch {
        command: &me.program,
        args: &args,
    };
    let local_scope = cwd.to_string_lossy().into_owned();
    let client_after = client::adopt(target.format(), &client_text, &moved, &launch, &local_scope)
        .with_context(|| format!("cannot edit {}", client_file.display()))?;

    // Backups and the manifest first, then servers.toml, then the client's file.
    files::private_dir(state)?;
    if let Some(bytes) = &client_before {
        files::write_atomic(&state.join(CLIENT_BACKUP), bytes, Some(0o600))?;
    }
    if let Some(bytes) = &config_before {
        files::write_atomic(&state.join(CONFIG_BACKUP), bytes, Some(0o600))?;
    }
    files::write_atomic(
        &state.join(CONFIG_WRITTEN),
        merged.text.as_bytes(),
        Some(0o600),
    )?;
    files::write_atomic(
        &state.join(CLIENT_WRITTEN),
        client_after.as_bytes(),
        Some(0o600),
    )?;
    let manifest = Manifest {
        client: target,
        client_file: client_file.clone(),
        client_file_existed: client_before.is_some(),
        cwd: cwd.clone(),
        config: config.clone(),
        config_existed: config_before.is_some(),
        moved: moved.clone(),
    };
    files::write_atomic(
        &state.join(MANIFEST),
        serde_json::to_string_pretty(&manifest)?.as_bytes(),
        Some(0o600),
    )?;
    // The folder of servers.toml holds secrets too: created private, as install.md says.
    if let Some(folder) = config.parent() {
        crate::platform::create_private_dir(folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
    }
    files::write_atomic(&config, merged.text.as_bytes(), Some(0o600))?;
    files::write_atomic(&client_file, client_after.as_bytes(), None)?;

    for note in from_client.notes.iter().chain(&merged.notes) {
        eprintln!("mcp-defer: {note}");
    }
    let names = |list: &[(String, String)]| {
        list.iter()
            .map(|(_, to)| to.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::new();
    out.push_str(&format!(
        "Added {} server{} of {} to {}{}{}\n",
        merged.added.len(),
        plural(merged.added.len()),
        target.label(),
        config.display(),
        if merged.added.is_empty() { "" } else { ": " },
        names(&merged.added)
    ));
    if !merged.present.is_empty() {
        out.push_str(&format!(
            "Already there: {}\n",
            merged
                .present
                .iter()
                .map(|(from, to)| if from == to {
                    from.clone()
                } else {
                    format!("{from} (as {to})")
                })
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let registered = match target {
        Target::Claude => "at user scope with alwaysLoad",
        _ => "for every project",
    };
    out.push_str(&format!(
        "Registered `{ENTRY}` in {} ({}) {registered}",
        target.label(),
        client_file.display()
    ));
    if moved.is_empty() {
        out.push_str(".\n");
    } else {
        let how = match target {
            Target::Codex => "turned off",
            _ => "removed",
        };
        out.push_str(&format!("; {how} there: {}.\n", moved.join(", ")));
    }
    out.push_str(&format!(
        "Backups: {}. Undo: `{me} adopt --undo {}`.\n\
         Next: `{me} check --config {}`, then restart {} (`{}` shows `{ENTRY}`).\n",
        state.display(),
        target.name(),
        config.display(),
        target.label(),
        target.list_command(),
        me = me.shown
    ));
    super::write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn undo(target: Target, state: &Path) -> anyhow::Result<ExitCode> {
    let manifest_path = state.join(MANIFEST);
    let Some(manifest) = files::read_optional(&manifest_path)? else {
        bail!(
            "nothing to undo: no adoption of {} is recorded in {}",
            target.label(),
            state.display()
        );
    };
    let manifest: Manifest = serde_json::from_slice(&manifest)
        .with_context(|| format!("{} is not a manifest adopt wrote", manifest_path.display()))?;
    let mut out = String::new();

    // The client's file: what adopt touched, as it was.
    let backup = files::read_optional(&state.join(CLIENT_BACKUP))?;
    let backup = backup.map(String::from_utf8).transpose()?;
    let current = files::read_optional(&manifest.client_file)?
        .map(String::from_utf8)
        .transpose()?;
    let local_scope = manifest.cwd.to_string_lossy().into_owned();
    let written = files::read_optional(&state.join(CLIENT_WRITTEN))?;
    let untouched =
        current.is_some() && current.as_deref().map(str::as_bytes) == written.as_deref();
    let restored = match &current {
        Some(_) if untouched && backup.is_some() => backup.clone(),
        Some(current) => Some(client::undo(
            target.format(),
            current,
            backup.as_deref(),
            &manifest.moved,
            &local_scope,
        )?),
        None => backup.clone(),
    };
    if let Some(text) = restored {
        files::write_atomic(&manifest.client_file, text.as_bytes(), None)?;
    }
    out.push_str(&format!(
        "{} ({}): `{ENTRY}` removed{}.\n",
        target.label(),
        manifest.client_file.display(),
        if manifest.moved.is_empty() {
            String::new()
        } else {
            format!("; back as before: {}", manifest.moved.join(", "))
        }
    ));

    // servers.toml: restored only if nobody edited it since.
    let written = files::read_optional(&state.join(CONFIG_WRITTEN))?;
    let now = files::read_optional(&manifest.config)?;
    if now.is_some() && now == written {
        match files::read_optional(&state.join(CONFIG_BACKUP))? {
            Some(bytes) if manifest.config_existed => {
                files::write_atomic(&manifest.config, &bytes, Some(0o600))?;
                out.push_str(&format!("{}: restored.\n", manifest.config.display()));
            }
            _ => {
                std::fs::remove_file(&manifest.config)
                    .with_context(|| format!("cannot remove {}", manifest.config.display()))?;
                out.push_str(&format!(
                    "{}: removed (adopt created it).\n",
                    manifest.config.display()
                ));
            }
        }
    } else {
        out.push_str(&format!(
            "{}: left as it is, since it changed after adopt; the adopted servers are still \
             in it (its earlier version is {}).\n",
            manifest.config.display(),
            state.join(CONFIG_BACKUP).display()
        ));
    }

    // Keep the backups, out of the way of the next adopt.
    let mut n = 1;
    let mut kept = state.with_file_name(format!("{}.undone-{n}", target.name()));
    while kept.exists() {
        n += 1;
        kept = state.with_file_name(format!("{}.undone-{n}", target.name()));
    }
    std::fs::rename(state, &kept)
        .with_context(|| format!("cannot move {} aside", state.display()))?;
    out.push_str(&format!(
        "Backups kept in {}. Restart {}.\n",
        kept.display(),
        target.label()
    ));
    super::write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
