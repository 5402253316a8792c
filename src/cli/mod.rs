//! The command line: clap types and one function per subcommand over the library.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::downstream::{Event, Pool};
use crate::ingest::{Batch, Registry};
use logging::LogFormat;

mod adopt;
mod check;
mod hub;
mod import;
mod list;
mod logging;
mod login;
#[cfg(feature = "model")]
mod model;
mod report;
mod search;
mod stats;
mod trust;

/// Below `--help`: where a new user starts, and one example of each everyday command.
const START_HERE: &str = "\
Start here:
  mcp-defer adopt claude      move Claude Code's MCP servers behind mcp-defer and register it
                              there (also codex, gemini, qwen, copilot; --undo puts them back)
  mcp-defer check             start every server of servers.toml and show what each offers
  Then restart the client: it starts `mcp-defer` (= `mcp-defer serve`) itself over stdio.

Examples:
  mcp-defer import cursor --write ~/.config/mcp-defer/servers.toml
                              another client's servers as a servers.toml
  mcp-defer search \"what time is it in Tokyo\"   what search_tools would answer
  mcp-defer stats             tokens of the first tool list, direct against deferred
  mcp-defer report            prompt-cache cost of your own Claude Code and Codex sessions
  mcp-defer serve --http 127.0.0.1:8765   many clients over Streamable HTTP

Config: $MCP_DEFER_CONFIG, else ./servers.toml, else servers.toml in the config folder
(~/.config/mcp-defer on Linux; docs/install.md), in Codex's [mcp_servers.<name>] format.
Docs: README.md, docs/install.md, docs/clients.md.";

#[derive(Debug, Parser)]
#[command(name = "mcp-defer", version, about, after_help = START_HERE)]
pub struct Cli {
    /// More logging on stderr (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// How log lines on stderr look: `text` for people, `json` (one object a line, with
    /// level, target, fields and spans) for a log collector.
    #[arg(
        long,
        value_enum,
        global = true,
        default_value_t = LogFormat::Text,
        env = "MCP_DEFER_LOG_FORMAT",
        value_name = "FORMAT"
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over stdio (the default), or over Streamable HTTP with --http.
    Serve(ServeArgs),
    /// Connect to every server and report status, tool count and start time.
    Check(ConfigArg),
    /// List every catalog tool.
    List {
        #[command(flatten)]
        config: ConfigArg,
        /// Full entries as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show what search_tools would answer for a query, with scores.
    Search {
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        args: search::Args,
    },
    /// Count the tokens of the tool list (o200k_base) in two exposure modes, side by side.
    Stats(stats::Args),
    /// Tokens and prompt-cache cost of your own Claude Code and Codex sessions, from their
    /// transcripts: cache reads/writes, tool schemas, re-writes after tool-list changes.
    Report(report::Args),
    /// Print (or --write) a servers.toml made from another client's MCP servers.
    Import(import::Args),
    /// Move a client's MCP servers behind mcp-defer and register it there (--undo: back).
    Adopt(adopt::Args),
    /// Show what changed in held tools (a word diff of the description, the schema
    /// changes, the rules that fired) and approve them into the tool lock.
    Trust(trust::Args),
    /// Log in to a remote (OAuth) server: prints a URL to open, stores the tokens.
    Login(login::Args),
    /// Delete the stored login of a remote server.
    Logout(login::LogoutArgs),
    /// The transformer search tier's model: `model fetch` downloads and unpacks it.
    #[cfg(feature = "model")]
    Model(model::Args),
    /// Internal: kills the servers' process groups once the mcp-defer that started it is
    /// gone (see `downstream::watchdog`).
    #[command(name = "__watchdog", hide = true)]
    Watchdog,
}

#[derive(Debug, clap::Args, Default)]
struct ServeArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Serve many clients over Streamable HTTP at http://ADDR/mcp instead of one over
    /// stdio, e.g. 127.0.0.1:8765 or localhost:8765 (port 0 picks a free one; the log
    /// says which). A non-loopback address needs [settings.http] tokens_env or token_file.
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    http: Option<std::net::SocketAddr>,
    /// Serve only the servers of `[profiles.NAME]`: its instructions, search and lists
    /// see those servers alone.
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// Serve this session in its own process with its own servers, not through the hub
    /// that the stdio sessions of a config share ([settings] hub = false does the same;
    /// MCP_DEFER_HUB=off or on overrides both).
    #[arg(long)]
    no_hub: bool,
    /// Internal: be the hub of the config (started by the first session that needs it).
    #[arg(long, hide = true, conflicts_with_all = ["http", "no_hub"])]
    hub: bool,
}

/// `--http ADDR`: an IP address and port, or a host name and port such as
/// `localhost:8765`, resolved to one address (IPv4 first, as `localhost` is usually meant).
fn listen_addr(text: &str) -> Result<std::net::SocketAddr, ListenAddrError> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    use std::net::ToSocketAddrs;
    let addrs: Vec<std::net::SocketAddr> = text
        .to_socket_addrs()
        .map_err(|cause| ListenAddrError::NotHostPort {
            text: text.to_owned(),
            cause,
        })?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| ListenAddrError::NoAddress(text.to_owned()))
}

/// Why `--http ADDR` names no address to listen on; clap prints it after the flag.
#[derive(Debug, thiserror::Error)]
enum ListenAddrError {
    /// Neither an address nor a host name that resolves; the resolver's cause is part of
    /// the one line clap prints.
    #[error("`{text}` is not HOST:PORT ({cause}); e.g. 127.0.0.1:8765")]
    NotHostPort { text: String, cause: std::io::Error },
    #[error("`{0}` resolves to no address; e.g. 127.0.0.1:8765")]
    NoAddress(String),
}

#[derive(Debug, clap::Args, Default)]
struct ConfigArg {
    /// The servers.toml to use [default: $MCP_DEFER_CONFIG, ./servers.toml,
    /// $XDG_CONFIG_HOME/mcp-defer/servers.toml]
    #[arg(long, short = 'c', value_name = "PATH")]
    config: Option<PathBuf>,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.verbose, cli.quiet, cli.log_format);
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            let text = format!("{err:#}");
            // A remote server's error body may carry terminal escapes: shown, not obeyed.
            let text = crate::redact::redact(&text);
            eprintln!("mcp-defer: {}", crate::printable::printable(&text));
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if matches!(cli.command, Some(Command::Serve(_)) | None) {
        refuse_nested()?;
    }
    let stdio = match &cli.command {
        Some(Command::Serve(args)) => args.http.is_none() && !args.hub,
        None => true,
        _ => false,
    };
    if stdio && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        // Typed in a terminal, a stdio server waits silently for a client that never comes.
        eprintln!(
            "mcp-defer: serving MCP over stdin/stdout, for an MCP client to start; run by \
             hand, try `mcp-defer --help` (`mcp-defer check` shows your servers). Ctrl-C stops."
        );
    }
    // A stdio session starts its watchdog only when it runs its own servers (`hub.rs`).
    let spawns_servers = !matches!(
        cli.command,
        None | Some(Command::Serve(ServeArgs {
            http: None,
            hub: false,
            ..
        })) | Some(
            Command::Import(_)
                | Command::Adopt(_)
                | Command::Login(_)
                | Command::Logout(_)
                | Command::Report(_)
                | Command::Watchdog
        )
    ) && !is_model(&cli.command);
    if spawns_servers && let Err(err) = crate::downstream::watchdog::start() {
        tracing::warn!(error = %err, "no watchdog: if mcp-defer is killed, grandchildren of servers may outlive it");
    }
    match cli.command {
        Some(Command::Watchdog) => Ok(crate::downstream::watchdog::run()),
        Some(Command::Check(args)) => check::run(args.config),
        Some(Command::List { config, json }) => list::run(config.config, json),
        Some(Command::Search { config, args }) => search::run(config.config, args),
        Some(Command::Stats(args)) => stats::run(args),
        Some(Command::Report(args)) => report::run(args),
        Some(Command::Import(args)) => import::run(args),
        Some(Command::Adopt(args)) => adopt::run(args),
        Some(Command::Trust(args)) => trust::run(args),
        Some(Command::Login(args)) => login::login(args),
        Some(Command::Logout(args)) => login::logout(args),
        #[cfg(feature = "model")]
        Some(Command::Model(args)) => model::run(args),
        Some(Command::Serve(ServeArgs {
            config,
            http: Some(addr),
            profile,
            ..
        })) => serve_http(config.config, addr, profile),
        Some(Command::Serve(ServeArgs {
            config,
            profile,
            hub: true,
            ..
        })) => hub::serve_hub(serve_config(config.config, profile.clone())?, profile),
        Some(Command::Serve(args)) => hub::serve(args.config.config, args.profile, args.no_hub),
        None => hub::serve(None, None, false),
    }
}

/// `model fetch` spawns no server, so it needs no watchdog.
fn is_model(command: &Option<Command>) -> bool {
    #[cfg(feature = "model")]
    if matches!(command, Some(Command::Model(_))) {
        return true;
    }
    let _ = command;
    false
}

/// The config to serve: the whole file, or the view of one `[profiles.NAME]`.
///
/// # Errors
/// The config's own errors, or an unknown profile.
fn serve_config(path: Option<PathBuf>, profile: Option<String>) -> anyhow::Result<Config> {
    let config = load_config(path)?;
    Ok(match profile {
        Some(name) => config.for_profile(&name)?.0,
        None => config,
    })
}

/// `serve` never runs as a server of another mcp-defer: that one would be started again by
/// this one, and so on, each with every server of the config (an entry launching mcp-defer
/// that `import` and `adopt` could not recognise, or one written by hand).
///
/// # Errors
/// When this process was started by mcp-defer, naming the entry to remove.
fn refuse_nested() -> anyhow::Result<()> {
    let Some(name) = crate::downstream::started_as() else {
        return Ok(());
    };
    anyhow::bail!(
        "refusing to serve: this mcp-defer was started by another mcp-defer as its server \
         `{name}` ({} is set), and would start that mcp-defer's servers again, itself among \
         them; remove `{name}` from the servers.toml of the mcp-defer that runs it",
        crate::downstream::STARTED_AS_VAR,
        name = crate::printable::one_line(&name)
    )
}

/// Serves one stdio session in this process, with its own servers.
fn serve_alone(config: Config, profile: Option<String>) -> anyhow::Result<ExitCode> {
    if let Err(err) = crate::downstream::watchdog::start() {
        tracing::warn!(error = %err, "no watchdog: if mcp-defer is killed, grandchildren of servers may outlive it");
    }
    // One thread: a proxied call crosses fewer thread hops (2.5 context switches a call
    // instead of 7, docs/benchmarks.md); index updates run on the blocking pool.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(crate::server::serve(config, profile));
    // When stdin is not a pipe, rmcp reads it on a blocking thread that never returns on a
    // signal; waiting for it would keep a terminated server alive. Everything that matters
    // has finished by now.
    runtime.shutdown_background();
    served?;
    Ok(ExitCode::SUCCESS)
}

fn serve_http(
    config: Option<PathBuf>,
    addr: std::net::SocketAddr,
    profile: Option<String>,
) -> anyhow::Result<ExitCode> {
    let config = serve_config(config, profile.clone())?;
    // Many clients at once: every core serves them; index updates still run on the
    // blocking pool.
    let runtime = runtime()?;
    let served = runtime.block_on(crate::server::serve_http(config, addr, profile));
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Loads `--config PATH`, or the default path when absent.
///
/// # Errors
/// The config error (file, line, key) or the places the default lookup tried.
pub(crate) fn load_config(path: Option<PathBuf>) -> anyhow::Result<Config> {
    let path = match path {
        Some(path) => path,
        None => Config::default_path()?,
    };
    let config = Config::load(&path)?;
    if config.servers.is_empty() {
        eprintln!(
            "mcp-defer: warning: {} has no servers: add [mcp_servers.<name>] tables \
             (servers.toml.example shows them), or run `mcp-defer adopt <client>` to bring \
             a client's",
            path.display()
        );
    }
    Ok(config)
}

/// The runtime of a one-shot command; `serve` builds its own.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Cancels `token` on Ctrl-C, so an interrupted command still reaps its children.
pub(crate) fn cancel_on_interrupt(token: &CancellationToken) {
    let token = token.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            token.cancel();
        }
    });
}

/// Starts every server, waits until each one's first attempt has concluded (each bounded
/// by its `startup_timeout`; Ctrl-C reaps them), then takes every list they sent through
/// the one ingest path, as `serve` would: what the one-shot commands print from. The
/// caller ends the pool with [`Pool::shutdown`].
///
/// # Errors
/// When the search index cannot be created.
async fn connect_all(config: &Arc<Config>) -> anyhow::Result<(Pool, Registry)> {
    let (pool, events) = start_all(config);
    pool.settled().await;
    let registry = ingest_first_lists(config, events).await?;
    Ok((pool, registry))
}

/// How long a one-shot command (`search`, `check`) waits for the transformer tier's tool
/// vectors: a first run embeds every tool (~20 ms each on one core), later ones read the
/// disk cache.
const VECTOR_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// With `semantic = "model"`, waits (off the runtime's threads) until every tool has its
/// transformer vector, so a one-shot command answers as a warmed-up server does. `serve`
/// never waits: its searches use the static tier until the vectors are ready.
async fn wait_for_vectors(registry: Registry) -> anyhow::Result<Registry> {
    Ok(tokio::task::spawn_blocking(move || {
        if let Some(transformer) = registry.index().transformer() {
            transformer.wait_ready(VECTOR_WAIT);
        }
        registry
    })
    .await?)
}

/// Starts every server; Ctrl-C reaps them.
fn start_all(config: &Config) -> (Pool, mpsc::UnboundedReceiver<Event>) {
    let root = CancellationToken::new();
    cancel_on_interrupt(&root);
    Pool::start(config, root)
}

/// Takes every list queued in `events` through [`Registry::apply`], in one batch.
///
/// # Errors
/// When the search index cannot be created.
async fn ingest_first_lists(
    config: &Arc<Config>,
    mut events: mpsc::UnboundedReceiver<Event>,
) -> anyhow::Result<Registry> {
    let mut batch = Batch::default();
    while let Ok(event) = events.try_recv() {
        batch.add(event);
    }
    let registry = Registry::new(config)?;
    let config = config.clone();
    // Indexing is CPU work: off the runtime's threads.
    let registry = tokio::task::spawn_blocking(move || {
        registry.apply(&config, batch);
        registry
    })
    .await?;
    Ok(registry)
}

/// Writes a command's whole output to stdout at once.
fn write_stdout(out: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()
}
