//! Where a server's lists become what mcp-defer knows: the one ingest path.
//!
//! A supervisor sends each complete list it gets from a server as a [`downstream::Event`];
//! [`Registry::apply`] takes a batch of them into the catalog ([`Registry::enter_catalog`]:
//! where a downstream tool list enters the catalog), the search index
//! ([`Registry::feed_index`]: where a catalog entry becomes searchable), each server's
//! handshake text and the prompt and resource catalogs, and returns an [`Update`] saying what
//! changed. `serve` applies every batch of queued events ([`crate::server`]); every one-shot
//! command applies what the servers sent during their first attempt (`cli::connect_all`).
//!
//! Before the catalog, each list is screened by [`crate::trust`]: a tool whose definition
//! changed since the user approved it, a new tool of a known server, or one that trips a
//! suspicious-content rule is held (`trust = "pin"`) and goes no further: not in the
//! catalog, the index, any list or the call path. The list it came in is kept, so an
//! approval (`mcp-defer trust`, seen by [`Registry::lift`]) takes it in again.
//!
//! What the client is shown is decided by `server` from the [`Update`]: this module never
//! writes an exposed list, and must not import `server`. The catalog is updated under its
//! lock; documents are built from copies and committed to tantivy under the index lock
//! alone, so a `tools/list` never waits for a commit. Lock order: catalog, then index; the
//! instructions, prompt and resource locks are never held with another.
//!
//! [`downstream::Event`]: crate::downstream::Event

use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};

use rmcp::model::{Prompt, Resource, ResourceTemplate};
use tokio::sync::watch;

use crate::catalog::{
    self, Catalog, CatalogEntry, EntryId, PromptCatalog, QualifiedName, ResourceCatalog, ServerKey,
    ServerTool, ToolJson,
};
use crate::config::{Config, ToolFilter};
use crate::downstream::Event;
use crate::search::{Document, SearchError, SearchIndex, ToolDoc};
use crate::sync::{lock, read, write};
use crate::trust::Trust;

#[cfg(test)]
mod tests;

/// The slot of position `server`, the vector grown to hold it: a reload appends servers.
fn at<T: Default>(slots: &mut Vec<T>, server: usize) -> &mut T {
    if slots.len() <= server {
        slots.resize_with(server + 1, T::default);
    }
    &mut slots[server]
}

/// Everything learnt from the servers' lists, each part behind its own lock. It holds no
/// config: the running one has one owner (`server::Shared`, swapped by a reload), and each
/// [`Registry::apply`] is handed the config its lists were sent under.
pub struct Registry {
    catalog: RwLock<Catalog>,
    index: RwLock<SearchIndex>,
    /// Per server, the `instructions` of its last handshake: part of its tools' search text.
    /// Grows with the positions a reload appends.
    instructions: Mutex<Vec<Option<String>>>,
    prompts: RwLock<PromptCatalog>,
    resources: RwLock<ResourceCatalog>,
    /// Per server, whether its tools are in the committed index. The catalog has them a
    /// moment earlier; a search that waited for the server must not find an empty index.
    searchable: Mutex<Vec<bool>>,
    /// The profile's `allow_tools`/`deny_tools`, as at start (a reload keeps `[profiles]`):
    /// a tool it filters out never enters this catalog, so no search, list or call of
    /// this view can reach it.
    tools: ToolFilter,
    /// The lock of approved definitions, and what is held against it.
    trust: Mutex<Trust>,
    /// Per server, its last list while any of its tools is held: what an approval takes
    /// in again ([`Registry::lift`]).
    pending: Mutex<Vec<Option<ToolList>>>,
    /// Per server, the most announced tool changes a screened list answered
    /// ([`Registry::screened_changes`]).
    screened_changes: Mutex<Vec<u64>>,
    /// How many batches were applied: bumped after each [`Registry::apply`], once what it
    /// changed is in place. A wait for a list (a server's tools becoming searchable, a
    /// name becoming known, a change being screened) wakes on it instead of polling.
    generation: watch::Sender<u64>,
}

/// One server's complete tool list and the `instructions` of its handshake.
#[derive(Debug, Clone)]
pub struct ToolList {
    /// The server's position in `Config::servers`.
    pub server: usize,
    pub tools: Vec<ServerTool>,
    pub instructions: Option<String>,
    /// The tool changes the server had announced when this list was asked for.
    pub changes: u64,
}

/// The lists queued since the last [`Registry::apply`], taken together: one index commit
/// for many servers (200 servers joining at once were ingested one by one, ~60 ms each).
#[derive(Debug, Default)]
pub struct Batch {
    tools: Vec<ToolList>,
    prompts: Vec<(usize, Vec<Prompt>)>,
    resources: Vec<(usize, Vec<Resource>, Vec<ResourceTemplate>)>,
}

impl Batch {
    /// Adds a list. Any other event is handed back: a resource update is news for the
    /// client, not something to ingest.
    pub fn add(&mut self, event: Event) -> Option<Event> {
        match event {
            Event::Tools {
                server,
                tools,
                instructions,
                changes,
            } => self.tools.push(ToolList {
                server,
                tools,
                instructions,
                changes,
            }),
            Event::Prompts { server, prompts } => self.prompts.push((server, prompts)),
            Event::Resources {
                server,
                resources,
                templates,
            } => self.resources.push((server, resources, templates)),
            other @ Event::ResourceUpdated { .. } => return Some(other),
        }
        None
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.prompts.is_empty() && self.resources.is_empty()
    }
}

/// What one [`Registry::apply`] changed, in the order the lists came.
#[derive(Debug, Default)]
pub struct Update {
    /// Per tool list taken: its server and what changed in the catalog.
    pub tools: Vec<(usize, catalog::Update)>,
    /// Servers whose prompt list added prompts.
    pub prompts: Vec<usize>,
    /// Servers whose resources and templates were taken.
    pub resources: Vec<usize>,
}

/// A tool list once in the catalog: what to (re-)index and the server's search text.
struct Entered {
    server: usize,
    changes: catalog::Update,
    reindex: Vec<Indexed>,
    server_text: String,
}

/// What one search document is made of: a catalog entry's identity and its definition,
/// as text. The index parses it when it makes the document ([`Document`]), one tool at a
/// time: a 10k-tool batch never holds 10k parsed tools.
#[derive(Debug)]
pub struct Indexed {
    pub id: EntryId,
    pub server_index: usize,
    pub name: QualifiedName,
    pub server: Arc<str>,
    pub tool: ToolJson,
}

impl Indexed {
    /// From the catalog entry (its definition is shared, not copied).
    pub fn of(entry: &CatalogEntry) -> Indexed {
        Indexed {
            id: entry.id,
            server_index: entry.server_index,
            name: entry.name.clone(),
            server: entry.server.clone(),
            tool: entry.tool.clone(),
        }
    }

    /// The search document; `server_text` is its server's (see
    /// `ServerConfig::search_text`).
    pub fn doc<'a>(&'a self, server_text: &'a str) -> IndexedDoc<'a> {
        IndexedDoc {
            indexed: self,
            server_text,
        }
    }
}

/// An [`Indexed`] with its server's text: a [`Document`] whose tool is parsed when the
/// index makes it.
#[derive(Debug, Clone, Copy)]
pub struct IndexedDoc<'a> {
    indexed: &'a Indexed,
    server_text: &'a str,
}

impl Document for IndexedDoc<'_> {
    fn with_doc<R>(&self, f: impl FnOnce(&ToolDoc<'_>) -> R) -> R {
        let Indexed {
            id,
            server_index,
            name,
            server,
            tool,
        } = self.indexed;
        let tool = tool.parse();
        f(&ToolDoc {
            id: *id,
            server_index: *server_index,
            qualified_name: name.as_str(),
            server,
            server_text: self.server_text,
            tool: &tool,
        })
    }
}

/// `semantic = "model"`: starts the transformer's embedding thread (it loads the model in
/// the background; the static tier answers meanwhile). The directory was checked when the
/// config loaded; if it changed since, the error is logged and search stays static.
#[cfg(feature = "model")]
fn attach_transformer(index: &mut SearchIndex, config: &Config) {
    use crate::search::transformer::{ModelDir, Transformer};
    let Some(dir) = &config.settings.model else {
        return;
    };
    match ModelDir::check(dir) {
        Ok(dir) => index.set_transformer(Transformer::start(dir, None)),
        Err(error) => {
            tracing::error!(%error, "transformer model unusable; search uses the static tier");
        }
    }
}

/// Config validation refuses `semantic = "model"` in a build without the feature.
#[cfg(not(feature = "model"))]
fn attach_transformer(_: &mut SearchIndex, _: &Config) {}

impl Registry {
    /// # Errors
    /// When the search index cannot be created.
    pub fn new(config: &Config) -> Result<Registry, SearchError> {
        let max_name_length = config.settings.max_name_length;
        let mut index = SearchIndex::with_semantic(config.settings.semantic)?;
        attach_transformer(&mut index, config);
        Ok(Registry {
            catalog: RwLock::new(Catalog::new(max_name_length)),
            index: RwLock::new(index),
            instructions: Mutex::new(vec![None; config.servers.len()]),
            prompts: RwLock::new(PromptCatalog::new(max_name_length)),
            resources: RwLock::new(ResourceCatalog::new()),
            searchable: Mutex::new(vec![false; config.servers.len()]),
            tools: config.tools.clone(),
            trust: Mutex::new(open_trust(config)),
            pending: Mutex::new(Vec::new()),
            screened_changes: Mutex::new(Vec::new()),
            generation: watch::Sender::new(0),
        })
    }

    /// Takes a batch of lists: prompts and resources first (a server sends them before its
    /// tools), then every tool list into the catalog, then one index commit for all. CPU
    /// work (a commit is ~20 ms for a server joining a 10k catalog): `serve` runs it on the
    /// blocking pool. `config` is the running one (a reload sets it before the servers it
    /// adds start); lists of servers it does not have are skipped.
    pub fn apply(&self, config: &Config, batch: Batch) -> Update {
        let mut update = Update::default();
        for (server, prompts) in batch.prompts {
            let Some(key) = key(config, server) else {
                continue;
            };
            if write(&self.prompts).update_server(key, prompts) > 0 {
                update.prompts.push(server);
            }
        }
        for (server, resources, templates) in batch.resources {
            if key(config, server).is_none() {
                continue;
            }
            write(&self.resources).update_server(server, resources, templates);
            update.resources.push(server);
        }
        let answered: Vec<(usize, u64)> = (batch.tools.iter())
            .map(|list| (list.server, list.changes))
            .collect();
        let entered: Vec<Entered> = (batch.tools.into_iter())
            .filter_map(|list| self.enter_catalog(config, list))
            .collect();
        {
            // Screened and in the catalog: the call path may go on (`screened_changes`).
            let mut screened = lock(&self.screened_changes);
            for (server, changes) in answered {
                let taken = at(&mut screened, server);
                *taken = (*taken).max(changes);
            }
        }
        self.feed_index(&entered);
        {
            let mut searchable = lock(&self.searchable);
            for e in &entered {
                *at(&mut searchable, e.server) = true;
            }
        }
        update.tools = entered.into_iter().map(|e| (e.server, e.changes)).collect();
        self.generation.send_modify(|generation| *generation += 1);
        update
    }

    /// Where a downstream tool list enters the catalog: names are assigned, changed and
    /// dropped tools noted. Returns the entries whose search documents must be (re)built:
    /// the new and changed ones, or all of the server's when its handshake `instructions`
    /// changed (they are part of every tool's text).
    fn enter_catalog(&self, config: &Config, list: ToolList) -> Option<Entered> {
        let ToolList {
            server,
            mut tools,
            instructions,
            changes,
        } = list;
        let mode = config.trust(server);
        let config = config.servers.get(server)?;
        let visible = |tool: &ServerTool| {
            self.tools.is_empty()
                || self.tools.allows(&catalog::sanitize(&format!(
                    "{}{}{}",
                    config.prefix,
                    catalog::SEPARATOR,
                    tool.name()
                )))
        };
        let screened = lock(&self.trust).screen(config, mode, &tools, visible);
        tools.retain(|tool| visible(tool));
        *at(&mut lock(&self.pending), server) = (screened.held > 0).then(|| ToolList {
            server,
            tools: tools.clone(),
            instructions: instructions.clone(),
            changes,
        });
        let tools = screened.kept;
        let (server_text, new_instructions) = {
            let mut known = lock(&self.instructions);
            let known = at(&mut known, server);
            let changed = *known != instructions;
            *known = instructions;
            (config.search_text(known.as_deref()), changed)
        };
        let mut catalog = write(&self.catalog);
        let key = ServerKey {
            name: &config.name,
            prefix: &config.prefix,
            index: server,
        };
        let changes = catalog.update_server(key, tools);
        let ids: Vec<EntryId> = if new_instructions {
            catalog.server_entries(server).map(|e| e.id).collect()
        } else {
            (changes.added.iter().chain(&changes.changed))
                .copied()
                .collect()
        };
        let reindex: Vec<Indexed> = (ids.iter())
            .filter_map(|&id| catalog.get(id))
            .map(Indexed::of)
            .collect();
        drop(catalog);
        tracing::info!(
            server = %config.name,
            added = changes.added.len(),
            changed = changes.changed.len(),
            removed = changes.removed.len(),
            "tools listed"
        );
        Some(Entered {
            server,
            changes,
            reindex,
            server_text,
        })
    }

    /// The one feed into the search index: every entry a batch (re)indexes becomes a
    /// document ([`Indexed::doc`]), all in one commit. A failed commit is logged; the catalog
    /// stands, and search misses those tools until their server lists again.
    fn feed_index(&self, entered: &[Entered]) {
        let docs = (entered.iter())
            .flat_map(|e| e.reindex.iter().map(|indexed| indexed.doc(&e.server_text)));
        if let Err(err) = write(&self.index).upsert(docs) {
            tracing::error!(error = %err, "search index update failed");
        }
    }

    /// Takes in again, after the lock file changed on disk, the lists that had tools held:
    /// the tools it now approves enter the catalog and the index. `None` when nothing is
    /// held or the lock did not change; otherwise what changed, for the sessions to show.
    pub fn lift(&self, config: &Config) -> Option<Update> {
        if lock(&self.trust).held_count() == 0 || !lock(&self.trust).refresh() {
            return None;
        }
        let tools: Vec<ToolList> = lock(&self.pending)
            .iter_mut()
            .filter_map(Option::take)
            .collect();
        if tools.is_empty() {
            return None;
        }
        Some(self.apply(
            config,
            Batch {
                tools,
                ..Batch::default()
            },
        ))
    }

    /// How many of the tool changes the server announced its lists screened so far have
    /// answered: while the server's count is higher, a changed definition may be on its
    /// way, and the call path waits for it (`server::route`).
    pub fn screened_changes(&self, server: usize) -> u64 {
        lock(&self.screened_changes)
            .get(server)
            .copied()
            .unwrap_or(0)
    }

    /// Whether any tool is held now (the call path asks [`Registry::lift`] only then).
    pub fn holds_any(&self) -> bool {
        lock(&self.trust).held_count() > 0
    }

    /// The lock and what is held and marked against it.
    pub fn trust(&self) -> std::sync::MutexGuard<'_, Trust> {
        lock(&self.trust)
    }

    /// Whether the server's tools have been listed and committed to the search index: what
    /// a search that waits for starting servers waits for.
    pub fn is_searchable(&self, server: usize) -> bool {
        lock(&self.searchable).get(server).copied().unwrap_or(false)
    }

    /// The count of applied batches, as a watch: changes once each [`Registry::apply`] has
    /// put its lists in place (the catalog, the index, `is_searchable`, `screened_changes`).
    /// What a wait for a list re-checks on.
    pub fn generation(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    pub fn catalog(&self) -> RwLockReadGuard<'_, Catalog> {
        read(&self.catalog)
    }

    pub fn index(&self) -> RwLockReadGuard<'_, SearchIndex> {
        read(&self.index)
    }

    pub fn prompts(&self) -> RwLockReadGuard<'_, PromptCatalog> {
        read(&self.prompts)
    }

    pub fn resources(&self) -> RwLockReadGuard<'_, ResourceCatalog> {
        read(&self.resources)
    }
}

/// The lock beside the config file; in memory only for a config that was not read from a
/// file (unit tests and benches parse text under a made-up path, and must not write a lock
/// into the working directory).
fn open_trust(config: &Config) -> Trust {
    let checks =
        (0..config.servers.len()).any(|i| config.trust(i) != crate::config::TrustMode::Off);
    if checks {
        std::thread::spawn(crate::trust::rules::warm);
    }
    if config.path.is_file() {
        Trust::open(config)
    } else {
        Trust::in_memory(crate::trust::Lock::default())
    }
}

/// The catalog key of the server at config `index`; `None` (logged) when there is none.
fn key(config: &Config, index: usize) -> Option<ServerKey<'_>> {
    let Some(server) = config.servers.get(index) else {
        tracing::error!(
            server = index,
            "a list from a server that is not configured"
        );
        return None;
    };
    Some(ServerKey {
        name: &server.name,
        prefix: &server.prefix,
        index,
    })
}
