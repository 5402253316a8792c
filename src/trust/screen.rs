//! [`Trust`]: the lock as the running process knows it, and what is held or marked now.
//!
//! `ingest` hands it each server's complete list before the catalog sees it
//! ([`Trust::screen`]): what comes back is served; held tools stay here with their
//! definition and why, so the call path, a selection or an unknown-name message can say
//! "held" and how to approve it, and `check`, `list` and `/metrics` can count them. The
//! lock is read again whenever its file changed on disk (`mcp-defer trust` wrote it):
//! [`Trust::refresh`], which the call path asks first when anything is held. First sights
//! are written to the lock as they come. Each held or marked tool is logged once per
//! definition.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::decision::{Change, Finding, Verdict, decide};
use super::definition::{Definition, Hash, Overridden};
use super::lock::{Lock, Stamp, held_path, lock_path};
use crate::config::{Config, ServerConfig, TrustMode};
use crate::printable::one_line;
use crate::server_tool::ServerTool;

/// A tool that is not served until approved.
#[derive(Debug, Clone)]
pub struct Held {
    pub server: String,
    pub tool: String,
    pub finding: Finding,
}

impl Held {
    /// What the model is told when it searches, selects or calls it.
    pub fn message(&self, name: &str) -> String {
        format!(
            "Tool '{name}' is held: {}. It cannot be searched, selected or called until the \
             user reviews and approves it with `mcp-defer trust {}/{}`; tell the user.",
            self.finding.reason(),
            self.server,
            self.tool
        )
    }
}

/// The lock, and the tools held and marked against it.
#[derive(Debug, Default)]
pub struct Trust {
    /// The lock file; `None`: the lock lives in memory only (a config read from nowhere).
    path: Option<PathBuf>,
    /// Where held definitions are written for `mcp-defer trust` (`lock::held_path`).
    held_file: Option<PathBuf>,
    lock: Lock,
    stamp: Option<Stamp>,
    /// Why the lock file cannot be read; then nothing is recorded and, in `pin`, every
    /// tool that is not off is held.
    broken: Option<String>,
    held: BTreeMap<(String, String), Held>,
    marked: BTreeMap<(String, String), Finding>,
    /// (server, tool, hash) already logged.
    told: HashSet<(String, String, Hash)>,
}

/// One list after screening.
#[derive(Debug, Default)]
pub struct Screened {
    /// Served: pinned, recorded or marked.
    pub kept: Vec<ServerTool>,
    /// How many were held.
    pub held: usize,
}

impl Trust {
    /// The trust of the config at `config.path`: its lock read now.
    pub fn open(config: &Config) -> Trust {
        let mut trust = Trust {
            path: Some(lock_path(&config.path)),
            held_file: Some(held_path(&config.path)),
            ..Trust::default()
        };
        trust.reload();
        trust
    }

    /// A trust whose lock is `lock` and lives in memory only.
    pub fn in_memory(lock: Lock) -> Trust {
        Trust {
            lock,
            ..Trust::default()
        }
    }

    fn reload(&mut self) {
        let Some(path) = &self.path else { return };
        self.stamp = Stamp::of(path);
        match Lock::read(path) {
            Ok(lock) => {
                self.lock = lock;
                self.broken = None;
            }
            Err(err) => {
                tracing::error!(error = %err, "tool lock unreadable; changed tools are held");
                self.broken = Some(err.to_string());
            }
        }
    }

    /// Reads the lock again if its file changed on disk; true when it did.
    pub fn refresh(&mut self) -> bool {
        let Some(path) = &self.path else {
            return false;
        };
        if Stamp::of(path) == self.stamp {
            return false;
        }
        self.reload();
        true
    }

    /// Screens a server's complete list: returns what is served, and keeps what is held.
    /// `server` is its config (name, `trust`, overrides); `mode` its effective `trust`.
    /// `visible` is the view's filter (a profile's `tools`): the whole list is screened,
    /// so a first sight records every tool whatever view saw it first, and a tool the
    /// view hides is neither served nor held in it (it looks like no tool at all).
    pub fn screen(
        &mut self,
        server: &ServerConfig,
        mode: TrustMode,
        tools: &[ServerTool],
        visible: impl Fn(&ServerTool) -> bool,
    ) -> Screened {
        self.refresh();
        let name = server.name.as_str();
        self.held.retain(|(s, _), _| s != name);
        self.marked.retain(|(s, _), _| s != name);
        if mode == TrustMode::Off {
            return Screened {
                kept: tools.iter().filter(|t| visible(t)).cloned().collect(),
                held: 0,
            };
        }
        let known = self.lock.knows_server(name);
        let mut screened = Screened::default();
        let mut record = Vec::new();
        let mut newly_held = Vec::new();
        for tool in tools.iter().cloned() {
            let overridden = overridden(server, tool.name());
            let definition = Definition::of(tool.json().as_str(), overridden);
            let verdict = match &self.broken {
                Some(why) => broken_verdict(mode, why, definition),
                None => decide(mode, &self.lock, known, name, tool.name(), &definition),
            };
            let shown = visible(&tool);
            match verdict {
                Verdict::Record(definition) => {
                    record.push((name.to_owned(), tool.name().to_owned(), definition));
                    if shown {
                        screened.kept.push(tool);
                    }
                }
                _ if !shown => {}
                Verdict::Pinned => screened.kept.push(tool),
                Verdict::Marked(finding) => {
                    self.tell(name, tool.name(), &finding, false);
                    (self.marked).insert((name.to_owned(), tool.name().to_owned()), finding);
                    screened.kept.push(tool);
                }
                Verdict::Held(finding) => {
                    if self.tell(name, tool.name(), &finding, true) {
                        let definition = finding.definition.clone();
                        newly_held.push((name.to_owned(), tool.name().to_owned(), definition));
                    }
                    let held = Held {
                        server: name.to_owned(),
                        tool: tool.name().to_owned(),
                        finding,
                    };
                    self.held
                        .insert((name.to_owned(), tool.name().to_owned()), held);
                    screened.held += 1;
                }
            }
        }
        if !record.is_empty() {
            self.record(&record);
        }
        if !newly_held.is_empty()
            && let Some(path) = &self.held_file
            && let Err(err) = Lock::update_held(path, &newly_held, &[])
        {
            tracing::warn!(error = %err, "held definitions not written for `mcp-defer trust`");
        }
        screened
    }

    /// Writes first sights to the lock (merged with the file as it is now).
    fn record(&mut self, approved: &[(String, String, Definition)]) {
        for (server, tool, definition) in approved {
            self.lock.approve(server, tool, definition);
        }
        let Some(path) = &self.path else { return };
        // The file as this process last read or wrote it: the lock in memory is written as
        // it is, not read back (`Lock::merge_into_mine`).
        match Lock::merge_into_mine(path, approved, &mut self.lock, self.stamp) {
            Ok(stamp) => {
                self.stamp = stamp;
                let servers: BTreeMap<&str, usize> =
                    approved.iter().fold(BTreeMap::new(), |mut m, (s, _, _)| {
                        *m.entry(s.as_str()).or_default() += 1;
                        m
                    });
                for (server, tools) in servers {
                    tracing::info!(server, tools, lock = %path.display(), "tool definitions recorded (first sight)");
                }
            }
            // Kept in memory: this process still holds a later change of them.
            Err(err) => tracing::warn!(error = %err, "first sight not recorded"),
        }
    }

    /// The log line for a held or marked tool, once per definition; false when it was
    /// told before.
    fn tell(&mut self, server: &str, tool: &str, finding: &Finding, held: bool) -> bool {
        let key = (
            server.to_owned(),
            tool.to_owned(),
            finding.definition.hash().clone(),
        );
        if !self.told.insert(key) {
            return false;
        }
        let hits: Vec<String> = (finding.hits.iter())
            .map(|h| one_line(&h.to_string()).into_owned())
            .collect();
        let approve = format!("mcp-defer trust {server}/{}", one_line(tool));
        if held {
            tracing::warn!(server, tool = %one_line(tool), reason = %finding.reason(), hits = ?hits, approve = %approve, "tool held");
        } else {
            tracing::warn!(server, tool = %one_line(tool), reason = %finding.reason(), hits = ?hits, approve = %approve, "tool marked (trust = \"warn\"): served as it is");
        }
        true
    }

    /// The held tool `tool` of `server`, if it is held.
    pub fn held(&self, server: &str, tool: &str) -> Option<&Held> {
        self.held.get(&(server.to_owned(), tool.to_owned()))
    }

    /// Every held tool, by server and tool name.
    pub fn all_held(&self) -> impl Iterator<Item = &Held> {
        self.held.values()
    }

    /// The marked tool `tool` of `server` (`trust = "warn"`), if it is marked.
    pub fn marked(&self, server: &str, tool: &str) -> Option<&Finding> {
        self.marked.get(&(server.to_owned(), tool.to_owned()))
    }

    /// Every marked tool (`trust = "warn"`): server, tool, finding.
    pub fn all_marked(&self) -> impl Iterator<Item = (&str, &str, &Finding)> {
        (self.marked.iter()).map(|((s, t), f)| (s.as_str(), t.as_str(), f))
    }

    pub fn held_count(&self) -> usize {
        self.held.len()
    }

    pub fn lock(&self) -> &Lock {
        &self.lock
    }

    /// The held file, when there is one.
    pub fn held_file(&self) -> Option<&Path> {
        self.held_file.as_deref()
    }

    /// The lock file, when there is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

/// The verdict when the lock cannot be read: nothing compares, so nothing is pinned.
fn broken_verdict(mode: TrustMode, why: &str, definition: Definition) -> Verdict {
    let finding = Finding {
        change: Change::LockUnreadable(why.to_owned()),
        hits: super::suspicious::check(&definition, None),
        definition,
        previous: None,
    };
    match mode {
        TrustMode::Pin => Verdict::Held(finding),
        TrustMode::Warn | TrustMode::Off => Verdict::Marked(finding),
    }
}

/// Which fields of `tool` the server's config replaces.
pub fn overridden(server: &ServerConfig, tool: &str) -> Overridden {
    (server.tool_overrides.iter())
        .find(|o| o.tool == tool)
        .map(|o| Overridden {
            description: o.description.is_some(),
            title: o.title.is_some(),
        })
        .unwrap_or_default()
}
