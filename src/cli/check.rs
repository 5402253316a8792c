//! `mcp-defer check`: connect to every server at once and report how each one fared.
//!
//! Progress goes to stderr while servers start; the table goes to stdout when all have
//! settled. Exit code 1 when an enabled server failed or needs a login: a setup that does
//! not work must not pass a script's `check && ...`. Disabled servers (`enabled = false`)
//! and lazy ones not started yet are fine; a `required` server's failure is named as such.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use std::sync::Arc;

use super::{ingest_first_lists, load_config, runtime, start_all, wait_for_vectors, write_stdout};
use crate::config::{AlwaysLoad, Config};
use crate::downstream::{ChildEnv, Pool, ServerState};
use crate::ingest::Registry;

pub(super) fn run(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let config = Arc::new(load_config(config)?);
    runtime()?.block_on(check(&config))
}

async fn check(config: &Arc<Config>) -> anyhow::Result<ExitCode> {
    let (pool, events) = start_all(config);
    show_progress(&pool).await;
    let registry = wait_for_vectors(ingest_first_lists(config, events).await?).await?;
    let listed = listed_names(&registry, config.servers.len());
    let mut warnings = override_warnings(config, &listed);
    warnings.extend(missing_core_tools(config, &listed));
    warnings.extend(super::trust::notes(&registry));
    let rows: Vec<Row> = pool
        .iter()
        .map(|h| Row::new(h.name(), &h.state()))
        .collect();
    let mut table = render(&rows);
    table.push_str(&env_names(config));
    table.push_str(&registry.index().describe_semantic());
    table.push('\n');
    let (failed_required, failed): (Vec<_>, Vec<_>) = config
        .servers
        .iter()
        .zip(&rows)
        .filter(|(_, r)| matches!(r.status, "failed" | "needs login"))
        .partition(|(s, _)| s.required);
    let names = |list: Vec<(&crate::config::ServerConfig, &Row)>| {
        list.into_iter()
            .map(|(s, _)| s.name.clone())
            .collect::<Vec<_>>()
    };
    let (failed_required, failed) = (names(failed_required), names(failed));
    write_stdout(&table)?;
    for warning in &warnings {
        eprintln!(
            "mcp-defer: warning: {}",
            crate::printable::one_line(warning)
        );
    }
    pool.shutdown().await;
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if !failed_required.is_empty() {
        eprintln!(
            "mcp-defer: required server{} failed: {}",
            plural(failed_required.len()),
            failed_required.join(", ")
        );
    }
    if !failed.is_empty() {
        eprintln!(
            "mcp-defer: server{} not working: {} (CAUSE says why; `enabled = false` in a \
             server's table skips it)",
            plural(failed.len()),
            failed.join(", ")
        );
    }
    if failed_required.is_empty() && failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(1))
    }
}

/// Per server, the names of the tools it listed, or `None` for one that never listed.
fn listed_names(registry: &Registry, servers: usize) -> Vec<Option<Vec<String>>> {
    let catalog = registry.catalog();
    (0..servers)
        .map(|i| {
            catalog.has_listed(i).then(|| {
                (catalog.server_entries(i))
                    .filter(|e| !e.gone)
                    .map(|e| e.original_name().to_owned())
                    .collect()
            })
        })
        .collect()
}

/// Tool overrides naming a tool their server did not list, once it has listed: a typo in
/// the tool name, or a tool the server no longer has. Servers that never listed are not
/// judged.
fn override_warnings(config: &Config, listed: &[Option<Vec<String>>]) -> Vec<String> {
    let mut warnings = Vec::new();
    for (server, names) in config.servers.iter().zip(listed) {
        let Some(names) = names else { continue };
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        for tool in server.unlisted_overrides(&names) {
            let hint = match crate::suggest::did_you_mean(tool, &names) {
                Some(near) => format!("; did you mean `{near}`?"),
                None => format!("; it lists: {}", names.join(", ")),
            };
            warnings.push(format!(
                "[mcp_servers.{}.tools.{tool}] overrides a tool {} does not list, so it does \
                 nothing{hint}",
                server.name, server.name
            ));
        }
    }
    warnings
}

/// On a terminal, one "waiting for: a, b" line that shrinks as servers settle; elsewhere,
/// one line per server as it settles.
async fn show_progress(pool: &Pool) {
    let terminal = std::io::stderr().is_terminal();
    let mut pending: tokio::task::JoinSet<(usize, ServerState)> = tokio::task::JoinSet::new();
    let mut waiting = Vec::new();
    for handle in pool.iter() {
        if matches!(handle.state(), ServerState::Disabled) {
            continue;
        }
        waiting.push(handle.name().to_owned());
        let handle = handle.clone();
        pending.spawn(async move { (handle.index(), handle.settled().await) });
    }
    let names: Vec<String> = pool.iter().map(|h| h.name().to_owned()).collect();
    while !waiting.is_empty() {
        if terminal {
            eprint!("\r\x1b[2Kwaiting for: {}", waiting.join(", "));
        }
        let Some(Ok((index, state))) = pending.join_next().await else {
            break;
        };
        let name = &names[index];
        waiting.retain(|n| n != name);
        if !terminal {
            eprintln!("{name}: {}", crate::printable::one_line(&state.to_string()));
        }
    }
    if terminal {
        eprint!("\r\x1b[2K");
    }
}

struct Row {
    name: String,
    status: &'static str,
    tools: String,
    ready_ms: String,
    cause: String,
}

impl Row {
    fn new(name: &str, state: &ServerState) -> Row {
        let dash = || "-".to_owned();
        let (status, tools, ready_ms, cause) = match state {
            ServerState::Ready { tools, ready_after } => (
                "ready",
                tools.to_string(),
                ready_after.as_millis().to_string(),
                String::new(),
            ),
            ServerState::Failed { cause, stderr }
            | ServerState::Restarting { cause, stderr, .. } => {
                let cause = match stderr {
                    Some(stderr) => format!("{cause}; stderr: {stderr}"),
                    None => cause.clone(),
                };
                ("failed", dash(), dash(), cause)
            }
            ServerState::NeedsLogin { cause } => ("needs login", dash(), dash(), cause.clone()),
            ServerState::Disabled => ("disabled", dash(), dash(), String::new()),
            ServerState::Removed => ("removed", dash(), dash(), String::new()),
            // A lazy server with a cached list, or one stopped while idle: truthfully not
            // running, its tools known.
            ServerState::Idle { tools } => (
                "not running",
                tools.to_string(),
                dash(),
                "starts at the first call".to_owned(),
            ),
            ServerState::Starting => ("starting", dash(), dash(), String::new()),
        };
        Row {
            name: name.to_owned(),
            status,
            tools,
            ready_ms,
            cause,
        }
    }
}

/// Which variable names each enabled stdio server receives (never values), below the table:
/// since servers no longer inherit everything, this is where a missing key is spotted.
fn env_names(config: &Config) -> String {
    let lines: Vec<String> = config
        .enabled_servers()
        .filter_map(|s| {
            ChildEnv::from_process(&s.transport)
                .map(|env| format!("{}: {}\n", s.name, env.describe()))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nENVIRONMENT (variable names each stdio server receives)\n{}",
        lines.concat()
    )
}

/// `always_load` names a server did not list, once it listed: a typo there would otherwise
/// leave the core tool silently missing.
fn missing_core_tools(config: &Config, listed: &[Option<Vec<String>>]) -> Vec<String> {
    let mut warnings = Vec::new();
    for (server, tools) in config.servers.iter().zip(listed) {
        let (AlwaysLoad::Tools(pinned), Some(tools)) = (&server.always_load, tools) else {
            continue;
        };
        for name in pinned.iter().filter(|p| !tools.contains(p)) {
            warnings.push(format!(
                "[mcp_servers.{}] `always_load` names `{name}`, which the server does not list{}",
                server.name,
                crate::suggest::hint(name, &tools.iter().map(String::as_str).collect::<Vec<_>>())
            ));
        }
    }
    warnings
}

fn render(rows: &[Row]) -> String {
    let header = ["SERVER", "STATUS", "TOOLS", "READY_MS", "CAUSE"];
    let width = |i: usize, f: &dyn Fn(&Row) -> usize| {
        rows.iter()
            .map(f)
            .chain([header[i].len()])
            .max()
            .unwrap_or(0)
    };
    let w = [
        width(0, &|r| r.name.len()),
        width(1, &|r| r.status.len()),
        width(2, &|r| r.tools.len()),
        width(3, &|r| r.ready_ms.len()),
    ];
    let line = |cells: [&str; 5]| {
        let text = format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
        );
        format!("{}\n", text.trim_end())
    };
    let mut out = line(header);
    for r in rows {
        // The cause may quote a remote server's answer: one line, its escapes shown.
        let cause = crate::printable::one_line(&r.cause);
        out.push_str(&line([&r.name, r.status, &r.tools, &r.ready_ms, &cause]));
    }
    out
}
