//! `mcp-defer trust [SERVER[/TOOL]] [--all]`: what changed in the tools the lock holds back
//! (or marks, with `trust = "warn"`), and their approval.
//!
//! Connects to every server as `check` does, so the definitions compared are the ones the
//! servers list now, screened through the one ingest path. Each held or marked tool is
//! shown with why, the word diff of its description and its schema changes
//! (`trust::describe`), and the rules that fired with what they fired on. Naming a server or
//! a tool approves what is pending for it; `--all` approves everything; no argument only
//! shows. An approval is written to the lock beside the config, which a running `serve`
//! reads again before its next search, selection or call.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::{connect_all, load_config, runtime, write_stdout};
use crate::config::Config;
use crate::ingest::Registry;
use crate::printable::one_line;
use crate::trust::{Change, Definition, Finding, Lock, Trust, describe};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    config: super::ConfigArg,
    /// What to approve: a server (all its held tools) or `server/tool`. Without it (and
    /// without --all), only shows what is pending.
    #[arg(value_name = "SERVER[/TOOL]")]
    target: Option<String>,
    /// Approve every held or marked tool of every server.
    #[arg(long, conflicts_with = "target")]
    all: bool,
}

pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = Arc::new(load_config(args.config.config)?);
    runtime()?.block_on(trust(&config, args.target.as_deref(), args.all))
}

/// One tool pending approval.
struct Pending {
    server: String,
    tool: String,
    held: bool,
    finding: Finding,
}

async fn trust(config: &Arc<Config>, target: Option<&str>, all: bool) -> anyhow::Result<ExitCode> {
    let (pool, registry) = connect_all(config).await?;
    let (mut pending, lock_file, held_file, lock) = {
        let trust = registry.trust();
        (
            pending(&trust),
            trust.path().map(PathBuf::from),
            trust.held_file().map(PathBuf::from),
            trust.lock().clone(),
        )
    };
    pool.shutdown().await;
    let (Some(lock_file), Some(held_file)) = (lock_file, held_file) else {
        anyhow::bail!("the config was not read from a file, so it has no tool lock beside it");
    };
    pending.extend(held_by_serve(&Lock::read(&held_file)?, &lock, &pending));
    let chosen: Vec<&Pending> = (pending.iter())
        .filter(|p| match target {
            None => true,
            Some(target) => match target.split_once('/') {
                Some((server, tool)) => p.server == server && p.tool == tool,
                None => p.server == target,
            },
        })
        .collect();
    let mut out = String::new();
    if chosen.is_empty() {
        out.push_str(&nothing_pending(&registry, target, &lock_file));
        write_stdout(&out)?;
        return Ok(ExitCode::SUCCESS);
    }
    for p in &chosen {
        out.push_str(&show(p));
    }
    let approve = all || target.is_some();
    if approve {
        let approvals: Vec<(String, String, Definition)> = (chosen.iter())
            .map(|p| {
                (
                    p.server.clone(),
                    p.tool.clone(),
                    p.finding.definition.clone(),
                )
            })
            .collect();
        Lock::merge_into(&lock_file, &approvals)?;
        let done: Vec<(String, String)> = (approvals.iter())
            .map(|(s, t, _)| (s.clone(), t.clone()))
            .collect();
        Lock::update_held(&held_file, &[], &done)?;
        out.push_str(&format!(
            "approved {} tool{} in {}\n",
            approvals.len(),
            if approvals.len() == 1 { "" } else { "s" },
            lock_file.display()
        ));
    } else {
        out.push_str(
            "nothing approved: name what to approve (`mcp-defer trust SERVER` or \
             `mcp-defer trust SERVER/TOOL`), or pass --all\n",
        );
    }
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Held tools, then marked ones, each sorted by server and tool.
fn pending(trust: &Trust) -> Vec<Pending> {
    let held = trust.all_held().map(|h| Pending {
        server: h.server.clone(),
        tool: h.tool.clone(),
        held: true,
        finding: h.finding.clone(),
    });
    let marked = trust.all_marked().map(|(server, tool, finding)| Pending {
        server: server.to_owned(),
        tool: tool.to_owned(),
        held: false,
        finding: finding.clone(),
    });
    held.chain(marked).collect()
}

/// What a running `serve` holds (its held file) that this process did not see: a server
/// that changed a tool at runtime lists the old definition to the fresh process this
/// command starts. Each is judged against the lock as `serve` judged it.
fn held_by_serve(held: &Lock, lock: &Lock, seen: &[Pending]) -> Vec<Pending> {
    let mut out = Vec::new();
    for (server, tool, locked) in held.iter() {
        let Some(definition) = &locked.definition else {
            continue;
        };
        let approved = lock.get(server, tool);
        if approved.is_some_and(|l| l.hash == locked.hash)
            || (seen.iter()).any(|p| {
                p.server == server && p.tool == tool && p.finding.definition.hash() == &locked.hash
            })
        {
            continue;
        }
        let previous = approved.and_then(|l| l.definition.clone());
        let hits = crate::trust::suspicious::check(definition, previous.as_ref());
        let change = match (approved, lock.knows_server(server)) {
            (Some(_), _) => Change::Changed,
            (None, true) => Change::New,
            (None, false) => Change::Suspicious,
        };
        out.push(Pending {
            server: server.to_owned(),
            tool: tool.to_owned(),
            held: true,
            finding: Finding {
                change,
                hits,
                definition: definition.clone(),
                previous,
            },
        });
    }
    out
}

/// One pending tool: its name, why, what changed, the rules with what they fired on.
fn show(p: &Pending) -> String {
    let state = if p.held { "held" } else { "marked" };
    let mut out = format!(
        "{}/{} ({state}): {}\n",
        p.server,
        one_line(&p.tool),
        p.finding.reason()
    );
    for line in describe(p.finding.previous.as_ref(), &p.finding.definition) {
        out.push_str(&line);
        out.push('\n');
    }
    for hit in &p.finding.hits {
        out.push_str(&format!("  rule {}\n", one_line(&hit.to_string())));
    }
    out
}

/// What to say when nothing matches: whether the target is approved already, or unknown.
fn nothing_pending(
    registry: &Registry,
    target: Option<&str>,
    lock_file: &std::path::Path,
) -> String {
    let trust = registry.trust();
    let lock = trust.lock();
    match target {
        None => format!(
            "nothing held or changed; {} tool{} approved in {}\n",
            lock.len(),
            if lock.len() == 1 { "" } else { "s" },
            lock_file.display()
        ),
        Some(target) => {
            let approved = match target.split_once('/') {
                Some((server, tool)) => lock.get(server, tool).is_some(),
                None => lock.knows_server(target),
            };
            if approved {
                format!(
                    "nothing to approve for {target}: it is approved as its server lists it now\n"
                )
            } else {
                format!(
                    "nothing to approve for {target}: no server or tool of that name lists \
                     anything held or changed (`mcp-defer list` names the tools)\n"
                )
            }
        }
    }
}

/// Lines naming each held and marked tool, for `check` and `list` to print.
pub(super) fn notes(registry: &Registry) -> Vec<String> {
    let trust = registry.trust();
    let mut notes: Vec<String> = (trust.all_held())
        .map(|h| {
            format!(
                "held: {}/{}: {}; review and approve with `mcp-defer trust {}/{}`",
                h.server,
                h.tool,
                h.finding.reason(),
                h.server,
                h.tool
            )
        })
        .collect();
    notes.extend(trust.all_marked().map(|(server, tool, finding)| {
        format!(
            "marked (trust = \"warn\", served): {server}/{tool}: {}; approve with \
             `mcp-defer trust {server}/{tool}`",
            finding.reason()
        )
    }));
    notes
}
