//! `mcp-defer import <client> [PATH]`: a servers.toml from the MCP servers a client already
//! has, printed to stdout (or written with `--write PATH`), so moving them behind mcp-defer
//! is one command.
//!
//! One module per client format, each turning its file into [`Server`]s:
//! [`claude`] (Claude Code and Claude Desktop), [`codex`], [`cursor`], [`vscode`],
//! [`gemini`] (Gemini CLI and Qwen Code, which share the format), [`opencode`], [`zed`],
//! [`continue_dev`] and [`goose`] (YAML, through [`yaml`]), [`copilot`]; Windsurf, Cline and Roo Code
//! write Claude's entries with extras ([`entry`]). `"disabled": true` stays disabled.
//! What cannot be carried (a legacy SSE server, mcp-defer itself, a key we do not read) is
//! left out with a line on stderr saying why; servers that sign in with OAuth are carried
//! with a line naming the `mcp-defer login` command that signs in to them. The output is validated by the
//! same loader `serve` uses. Notes name servers, keys and variables, never values: env
//! values and headers may be secrets.
//!
//! Environment rule: a stdio server from any client but Codex gets `inherit_env = true`,
//! since those clients pass it their whole environment and we cannot know which variables
//! it reads; a Codex server keeps Codex's rule (default set plus `env_vars`), which is ours.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::Value as Json;

use crate::config::Config;
use crate::printable::one_line;
use skip::Skip;

mod claude;
mod codex;
mod continue_dev;
mod copilot;
mod cursor;
mod dialect;
mod entry;
mod gemini;
mod goose;
mod itself;
mod jsonc;
pub(super) mod merge;
mod oauth;
mod opencode;
mod output;
mod server;
mod skip;
mod vars;
mod vscode;
mod yaml;
mod zed;

use dialect::Dialect;
use output::{existing, list, render, render_added, write_file};

pub(super) use server::Server;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Client {
    /// Claude Code: `~/.claude.json` (user and this directory's local servers), `.mcp.json`.
    Claude,
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Codex: `$CODEX_HOME/config.toml` or `~/.codex/config.toml`.
    Codex,
    /// Cursor: `~/.cursor/mcp.json`, `.cursor/mcp.json`.
    Cursor,
    /// VS Code: the user profile's `mcp.json`, `.vscode/mcp.json`.
    Vscode,
    /// Gemini CLI: `~/.gemini/settings.json`, `.gemini/settings.json`.
    Gemini,
    /// Qwen Code: `~/.qwen/settings.json`, `.qwen/settings.json`.
    Qwen,
    /// OpenCode: `~/.config/opencode/opencode.json`, `opencode.json`.
    Opencode,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json`.
    Windsurf,
    /// Cline: `cline_mcp_settings.json` in VS Code's global storage.
    Cline,
    /// Roo Code: `mcp_settings.json` in VS Code's global storage, `.roo/mcp.json`.
    Roo,
    /// Zed: `context_servers` of `~/.config/zed/settings.json`, `.zed/settings.json`.
    Zed,
    /// Continue: `~/.continue/config.yaml`, `.continue/mcpServers/*.yaml`.
    Continue,
    /// Goose: the `extensions` of `~/.config/goose/config.yaml`.
    Goose,
    /// GitHub Copilot CLI: `~/.copilot/mcp-config.json` (`$COPILOT_HOME`), `.mcp.json`,
    /// `.github/mcp.json`.
    Copilot,
}

impl Client {
    /// The name users type, as in `mcp-defer import claude-desktop`.
    pub(super) fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::ClaudeDesktop => "claude-desktop",
            Client::Codex => "codex",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::Gemini => "gemini",
            Client::Qwen => "qwen",
            Client::Opencode => "opencode",
            Client::Windsurf => "windsurf",
            Client::Cline => "cline",
            Client::Roo => "roo",
            Client::Zed => "zed",
            Client::Continue => "continue",
            Client::Goose => "goose",
            Client::Copilot => "copilot",
        }
    }

    /// The client's own name, for notes.
    pub(super) fn label(self) -> &'static str {
        match self {
            Client::Claude => "Claude Code",
            Client::ClaudeDesktop => "Claude Desktop",
            Client::Codex => "Codex",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::Gemini => "Gemini CLI",
            Client::Qwen => "Qwen Code",
            Client::Opencode => "OpenCode",
            Client::Windsurf => "Windsurf",
            Client::Cline => "Cline",
            Client::Roo => "Roo Code",
            Client::Zed => "Zed",
            Client::Continue => "Continue",
            Client::Goose => "Goose",
            Client::Copilot => "GitHub Copilot CLI",
        }
    }
}

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Whose configuration to read.
    client: Client,
    /// The file to read [default: the client's user file, then its project file in this
    /// directory, later ones winning on a shared name as in the client]
    path: Option<PathBuf>,
    /// Write the servers.toml to PATH instead of stdout (mode 0600: it may hold secrets
    /// copied from the client's file). An existing PATH gets the servers it does not have
    /// yet (same name, same command and args, or same url: already there), its own text kept.
    #[arg(long, value_name = "PATH")]
    write: Option<PathBuf>,
    /// With --write: replace PATH instead of adding to it.
    #[arg(long, requires = "write")]
    force: bool,
}

/// Servers in the order the client lists them, each as the keys of its servers.toml table.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Imported {
    servers: Vec<(String, toml::Table)>,
    /// What was left out or needs the user's attention, and why, for stderr.
    notes: Vec<String>,
    /// `(name here, name in the client)` for each server whose name had to change.
    renamed: Vec<(String, String)>,
}

impl Imported {
    /// Adds or replaces `name` (a later scope wins, as in the client), keeping first position.
    /// A name outside our `[A-Za-z0-9_-]` has each other character replaced by `_`, with a note.
    fn put(&mut self, name: &str, table: toml::Table) {
        let ours = server_name(name);
        if ours != name {
            self.note(format!(
                "{name} is named {ours} here: server names are letters, digits, `_` and `-`"
            ));
            self.renamed.retain(|(here, _)| *here != ours);
            self.renamed.push((ours.clone(), name.to_owned()));
        }
        match self.servers.iter_mut().find(|(n, _)| *n == ours) {
            Some((_, t)) => *t = table,
            None => self.servers.push((ours, table)),
        }
    }

    /// A note for stderr; control characters (a newline in a server name or a path) are
    /// escaped, so no note can pose as another line.
    fn note(&mut self, note: String) {
        let note = one_line(&note).into_owned();
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// Takes one converted entry: the server and notes on what it left behind, or why it
    /// was skipped.
    fn add(&mut self, client: Client, name: &str, path: &Path, entry: Result<Server, Skip>) {
        let entry = entry.and_then(|server| match &server.command {
            Some(command) if itself::is_self(command, &server.args) => Err(Skip::IsSelf),
            _ => Ok(server),
        });
        match entry {
            Ok(server) => {
                for key in &server.dropped {
                    self.note(format!(
                        "left out `{key}` of {name}: mcp-defer does not read it"
                    ));
                }
                for note in &server.notes {
                    self.note(format!("{name}: {note}"));
                }
                if let Some(why) = server.oauth_note(client, name) {
                    self.note(format!("{name}: {why}"));
                }
                let stdio = server.command.is_some();
                let mut table = server.into_table();
                // These clients hand a stdio server their whole environment, so a server may
                // read a variable its entry never names; only inheriting keeps it working.
                // Codex's rule (a default set plus `env_vars`) is ours already.
                if stdio && client != Client::Codex {
                    table.insert("inherit_env".to_owned(), toml::Value::Boolean(true));
                    self.note(format!(
                        "stdio servers got `inherit_env = true`, because {} passes them its \
                         whole environment; for tighter secrets, replace it with \
                         `env_vars = [...]` naming the variables each server needs (`check` \
                         lists what each receives)",
                        client.label()
                    ));
                }
                self.put(name, table);
            }
            Err(why) => self.note(format!("skipped {name} ({}): {why}", path.display())),
        }
    }
}

/// What a format module needs besides the text: where the import runs (project files and
/// `${workspaceFolder}` resolve against it) and the home directory.
pub(super) struct Cx<'a> {
    pub client: Client,
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
}

pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let home = crate::platform::dirs::home_dir();
    let cx = Cx {
        client: args.client,
        cwd: &cwd,
        home: home.as_deref(),
    };
    // An existing file is merged into (or replaced with --force); one that is not ours to
    // read is refused before anything else is read.
    let existing = match &args.write {
        Some(target) if !args.force => existing(target)?,
        _ => None,
    };
    let (sources, mut imported) = match (args.client, &args.path) {
        (Client::Claude, None) => claude::defaults(&cx)?,
        (Client::Codex, path) => {
            let path = match path {
                Some(path) => path.clone(),
                None => codex::default_path(home.as_deref())?,
            };
            let imported = codex::import(&read(&path)?, &path)?;
            (vec![path], imported)
        }
        (client, Some(path)) => {
            let mut imported = Imported::default();
            import_file(&cx, client, &read(path)?, path, &mut imported)?;
            (vec![path.clone()], imported)
        }
        (client, None) => {
            let looked = default_paths(&cx, client)?;
            let mut imported = Imported::default();
            let mut sources = Vec::new();
            for path in &looked {
                let text = match std::fs::read_to_string(path) {
                    Ok(text) => text,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => {
                        return Err(e).with_context(|| format!("cannot read {}", path.display()));
                    }
                };
                import_file(&cx, client, &text, path, &mut imported)?;
                sources.push(path.clone());
            }
            if sources.is_empty() {
                bail!(
                    "found no {} configuration; looked for {}; give the file to import as PATH",
                    client.label(),
                    list(&looked, " and ")
                );
            }
            (sources, imported)
        }
    };
    let found = imported.servers.len();
    let (text, written) = match &existing {
        Some(existing) => {
            let servers = std::mem::take(&mut imported.servers);
            let merged = merge::merge(existing, args.client, servers)?;
            for note in merged.notes {
                imported.note(note);
            }
            let text = merge::append(
                existing,
                &render_added(args.client, &sources, &merged.added),
            );
            (text, merged.added.len())
        }
        None => (render(args.client, &sources, &imported.servers), found),
    };
    match &args.write {
        Some(target) => write_file(target, &text)?,
        None => super::write_stdout(&text)?,
    }
    for line in &imported.notes {
        eprintln!("mcp-defer: {line}");
    }
    if found == 0 {
        eprintln!(
            "mcp-defer: no MCP servers found in {}",
            one_line(&list(&sources, " and "))
        );
    }
    if let Some(target) = &args.write {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        match &existing {
            Some(_) => eprintln!(
                "mcp-defer: added {written} server{} to {} (it had its own; {} already there)",
                plural(written),
                one_line(&target.display().to_string()),
                found - written
            ),
            None => eprintln!(
                "mcp-defer: wrote {written} server{} to {}",
                plural(written),
                one_line(&target.display().to_string())
            ),
        }
    }
    // `${VAR}`s stay unexpanded in the output; any value will do to validate the rest. The
    // text is printed either way, so what is wrong can be fixed in it.
    let as_path = args
        .write
        .clone()
        .unwrap_or_else(|| PathBuf::from("servers.toml"));
    if let Err(e) = Config::parse_with_env(&text, &as_path, &|_| Some("x".to_owned())) {
        eprintln!("mcp-defer: the imported servers.toml needs a fix before use: {e}");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The client's files when no PATH is given, lowest precedence first.
fn default_paths(cx: &Cx<'_>, client: Client) -> anyhow::Result<Vec<PathBuf>> {
    let home = cx
        .home
        .context("HOME is not set; give the file to import as PATH")?;
    // `$XDG_CONFIG_HOME` or `~/.config` on Linux, `%APPDATA%` on Windows.
    let config_home = crate::platform::dirs::config_home().unwrap_or_else(|| home.join(".config"));
    let mut paths = match client {
        Client::ClaudeDesktop => vec![claude::desktop_path(home, &config_home)],
        Client::Cursor => vec![
            home.join(".cursor/mcp.json"),
            cx.cwd.join(".cursor/mcp.json"),
        ],
        Client::Vscode => vec![
            vscode::user_path(home, &config_home),
            cx.cwd.join(".vscode/mcp.json"),
        ],
        Client::Gemini => vec![
            home.join(".gemini/settings.json"),
            cx.cwd.join(".gemini/settings.json"),
        ],
        Client::Qwen => vec![
            home.join(".qwen/settings.json"),
            cx.cwd.join(".qwen/settings.json"),
        ],
        Client::Opencode => opencode::paths(&config_home, cx.cwd),
        Client::Windsurf => vec![home.join(".codeium/windsurf/mcp_config.json")],
        Client::Cline => vec![
            vscode::global_storage(home, &config_home)
                .join("saoudrizwan.claude-dev/settings/cline_mcp_settings.json"),
        ],
        Client::Roo => vec![
            vscode::global_storage(home, &config_home)
                .join("rooveterinaryinc.roo-cline/settings/mcp_settings.json"),
            cx.cwd.join(".roo/mcp.json"),
        ],
        Client::Zed => zed::paths(&config_home, cx.cwd),
        Client::Continue => continue_dev::paths(home, cx.cwd),
        Client::Goose => goose::paths(&config_home),
        Client::Copilot => copilot::paths(home, cx.cwd),
        // Their defaults span several scopes of one file; handled by their modules.
        Client::Claude | Client::Codex => Vec::new(),
    };
    // Run from the home directory, the user and project files are one file.
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    Ok(paths)
}

/// One file of a JSON-based client into `out`.
fn import_file(
    cx: &Cx<'_>,
    client: Client,
    text: &str,
    path: &Path,
    out: &mut Imported,
) -> anyhow::Result<()> {
    let json = match client {
        Client::Continue | Client::Goose => yaml::parse(text, path)?,
        _ => parse_json(text, path)?,
    };
    match client {
        Client::Claude => claude::import_code(&json, path, cx, out),
        Client::ClaudeDesktop => claude::import_desktop(&json, path, out),
        Client::Cursor => cursor::import(&json, path, cx, out),
        Client::Vscode => vscode::import(&json, path, cx, out),
        Client::Gemini | Client::Qwen => gemini::import(&json, path, cx, out),
        Client::Opencode => opencode::import(&json, path, out),
        Client::Windsurf => entry_servers(&json, path, cx, Dialect::Windsurf, out),
        Client::Cline | Client::Roo => entry_servers(&json, path, cx, Dialect::Cline, out),
        Client::Zed => zed::import(&json, path, out),
        Client::Continue => continue_dev::import(&json, path, out),
        Client::Goose => goose::import(&json, path, out),
        Client::Copilot => copilot::import(&json, path, cx, out),
        Client::Codex => unreachable_codex(),
    }
}

/// The `mcpServers` of Windsurf, Cline and Roo Code: Claude's entries with each one's
/// extras; `${env:NAME}` (Windsurf, Roo) becomes `${NAME}`.
fn entry_servers(
    json: &Json,
    path: &Path,
    cx: &Cx<'_>,
    dialect: Dialect,
    out: &mut Imported,
) -> anyhow::Result<()> {
    let workspace = cursor::workspace_of(path, ".roo").unwrap_or(cx.cwd);
    import_servers(json, "mcpServers", path, cx.client, out, |server| {
        let mut inputs = Vec::new();
        entry::convert(server, dialect, cx, &mut |s| {
            vars::editor(s, workspace, &mut inputs)
        })
    })
}

/// Codex files are TOML and never reach [`import_file`]; an error rather than a panic.
fn unreachable_codex() -> anyhow::Result<()> {
    bail!("internal error: a Codex file was read as JSON")
}

/// For `adopt`: the client's user-level file (the one it registers servers in for every
/// project).
pub(super) fn user_file(client: Client, cwd: &Path, home: &Path) -> anyhow::Result<PathBuf> {
    let cx = Cx {
        client,
        cwd,
        home: Some(home),
    };
    match client {
        Client::Claude => Ok(home.join(".claude.json")),
        Client::Codex => codex::default_path(Some(home)),
        _ => default_paths(&cx, client)?
            .into_iter()
            .next()
            .context("this client has no user-level file"),
    }
}

/// One client file's servers as `import` makes them, for `adopt`.
#[derive(Debug, Default)]
pub(super) struct FromClient {
    /// In the client's order, each under its name here.
    pub servers: Vec<(String, toml::Table)>,
    /// What was left out, and why.
    pub notes: Vec<String>,
    /// `(name here, name in the client)` for each server whose name had to change: the
    /// client knows it by the second.
    pub renamed: Vec<(String, String)>,
}

impl FromClient {
    /// The name the client knows the server `here` by.
    pub(super) fn name_there<'a>(&'a self, here: &'a str) -> &'a str {
        self.renamed
            .iter()
            .find(|(ours, _)| ours == here)
            .map_or(here, |(_, theirs)| theirs.as_str())
    }
}

/// For `adopt`: the servers `import` makes of one client file (for Claude Code's
/// `~/.claude.json`, the user scope and `cwd`'s local scope), and the notes on what was
/// left out.
pub(super) fn servers_of_file(
    client: Client,
    text: &str,
    path: &Path,
    cwd: &Path,
    home: &Path,
) -> anyhow::Result<FromClient> {
    let imported = match client {
        Client::Codex => codex::import(text, path)?,
        _ => {
            let cx = Cx {
                client,
                cwd,
                home: Some(home),
            };
            let mut imported = Imported::default();
            import_file(&cx, client, text, path, &mut imported)?;
            imported
        }
    };
    Ok(FromClient {
        servers: imported.servers,
        notes: imported.notes,
        renamed: imported.renamed,
    })
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// JSON, or the JSON with comments and trailing commas that VS Code, Gemini CLI and OpenCode
/// accept in their files.
pub(super) fn parse_json(text: &str, path: &Path) -> anyhow::Result<Json> {
    serde_json::from_str(&jsonc::strip(text))
        .with_context(|| format!("{} is not valid JSON", path.display()))
}

/// The object of servers under `key`, if the file has one.
/// Adds each entry of the servers object under `key` (none when the key is absent), as
/// `convert` makes it: the one loop every client's format shares.
fn import_servers(
    json: &Json,
    key: &str,
    path: &Path,
    client: Client,
    out: &mut Imported,
    mut convert: impl FnMut(&Json) -> Result<Server, Skip>,
) -> anyhow::Result<()> {
    let servers = match json.get(key) {
        None => return Ok(()),
        Some(Json::Object(servers)) => servers,
        Some(_) => bail!("{}: `{key}` is not an object", path.display()),
    };
    for (name, server) in servers {
        out.add(client, name, path, convert(server));
    }
    Ok(())
}

/// A server name as our config accepts it and as a prefix of qualified tool names: each run
/// of characters outside `[A-Za-z0-9-]` (`_` included) as one `_`, none at either end, so
/// the name never holds the `__` that separates prefix and tool.
fn server_name(name: &str) -> String {
    let mut ours = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '-' {
            ours.push(c);
        } else if !ours.is_empty() && !ours.ends_with('_') {
            ours.push('_');
        }
    }
    let ours = ours.trim_end_matches('_');
    if ours.is_empty() {
        "server".to_owned()
    } else {
        ours.to_owned()
    }
}

#[cfg(test)]
mod tests;
