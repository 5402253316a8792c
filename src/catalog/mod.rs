//! Every tool we know, from every server, keyed by [`QualifiedName`]; prompts and resources
//! in [`prompts`] and [`resources`].
//!
//! The catalog only grows while the process runs: a tool a server stops listing is marked
//! gone, never deleted, so a name once given is never given to another tool (DESIGN.md
//! invariant 1 depends on it). Iteration is in config order: server order in the file, then
//! the order that server lists its tools, whatever order the servers connected in. Must not
//! import `downstream`.

use std::collections::HashMap;
use std::sync::Arc;

pub use crate::server_tool::{ServerTool, ToolJson};

mod name;
pub mod prompts;
pub mod resources;
pub mod uri_template;

pub use name::{QualifiedName, RESERVED, SEPARATOR, is_name_char, is_valid, sanitize};
pub use prompts::{PromptCatalog, PromptEntry};
pub use resources::{ResourceCatalog, Route};

/// A stable handle to a catalog entry (its arrival number); search documents carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryId(pub u32);

/// One downstream tool.
#[derive(Debug, Clone)]
pub struct CatalogEntry {
    pub id: EntryId,
    pub name: QualifiedName,
    /// The server's table name in the config.
    pub server: Arc<str>,
    /// The server's position in the config, for ordering.
    pub server_index: usize,
    /// The tool's name on its own server (also inside `tool`; kept apart because every
    /// name lookup reads it).
    original: Box<str>,
    /// The tool exactly as the server last listed it (its original name included).
    pub tool: ToolJson,
    /// The server no longer lists it.
    pub gone: bool,
}

impl CatalogEntry {
    /// The tool's name on its own server.
    pub fn original_name(&self) -> &str {
        &self.original
    }
}

/// What one [`Catalog::update_server`] changed, in that server's list order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Update {
    /// Tools seen for the first time.
    pub added: Vec<EntryId>,
    /// Tools whose definition differs from the one we held.
    pub changed: Vec<EntryId>,
    /// Tools the server no longer lists.
    pub removed: Vec<EntryId>,
    /// Tools that were gone and are listed again.
    pub returned: Vec<EntryId>,
}

impl Update {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
            && self.returned.is_empty()
    }
}

/// The identity of a server, as the catalog needs it.
#[derive(Debug, Clone, Copy)]
pub struct ServerKey<'a> {
    pub name: &'a str,
    pub prefix: &'a str,
    pub index: usize,
}

#[derive(Debug, Default)]
pub struct Catalog {
    max_name_length: usize,
    /// By `EntryId`.
    entries: Vec<CatalogEntry>,
    by_name: HashMap<QualifiedName, EntryId>,
    by_original: HashMap<(Arc<str>, String), EntryId>,
    /// Per config index, the server's entries in its own list order.
    servers: Vec<Vec<EntryId>>,
    /// Per config index, whether the server has listed its tools at least once.
    listed: Vec<bool>,
}

impl Catalog {
    pub fn new(max_name_length: usize) -> Catalog {
        Catalog {
            max_name_length,
            ..Catalog::default()
        }
    }

    /// Takes a server's complete current list (already filtered by its config).
    ///
    /// Names are assigned in the server's list order, so the same list gives the same names.
    /// A tool listed twice by one server keeps its first definition. Each definition is
    /// kept as the text it came as (no copy).
    pub fn update_server<T: Into<ServerTool>>(
        &mut self,
        server: ServerKey<'_>,
        tools: impl IntoIterator<Item = T>,
    ) -> Update {
        let tools = tools.into_iter();
        if self.servers.len() <= server.index {
            self.servers.resize_with(server.index + 1, Vec::new);
            self.listed.resize(server.index + 1, false);
        }
        self.listed[server.index] = true;
        let server_name: Arc<str> = match self.servers[server.index].first() {
            Some(id) => self.entries[id.0 as usize].server.clone(),
            None => Arc::from(server.name),
        };
        let mut update = Update::default();
        // Each listed entry with its position in this list, for the order below.
        let mut listed: HashMap<EntryId, usize> = HashMap::with_capacity(tools.size_hint().0);
        for tool in tools {
            let (tool_name, json) = tool.into().into_parts();
            let key = (server_name.clone(), String::from(&*tool_name));
            match self.by_original.get(&key).copied() {
                Some(id) if listed.contains_key(&id) => {
                    tracing::warn!(server = server.name, tool = %key.1, "server lists a tool twice; keeping the first");
                }
                Some(id) => {
                    listed.insert(id, listed.len());
                    let entry = &mut self.entries[id.0 as usize];
                    if entry.gone {
                        entry.gone = false;
                        update.returned.push(id);
                    }
                    if entry.tool != json {
                        entry.tool = json;
                        update.changed.push(id);
                    }
                }
                None => {
                    let id = EntryId(self.entries.len() as u32);
                    let name = QualifiedName::assign(
                        server.name,
                        server.prefix,
                        &key.1,
                        self.max_name_length,
                        |candidate| self.by_name.contains_key(candidate),
                    );
                    warn_if_renamed(server, "tool", &key.1, &name);
                    self.by_name.insert(name.clone(), id);
                    self.entries.push(CatalogEntry {
                        id,
                        name,
                        server: server_name.clone(),
                        server_index: server.index,
                        original: tool_name,
                        tool: json,
                        gone: false,
                    });
                    self.by_original.insert(key, id);
                    self.servers[server.index].push(id);
                    listed.insert(id, listed.len());
                    update.added.push(id);
                }
            }
        }
        for &id in &self.servers[server.index] {
            let entry = &mut self.entries[id.0 as usize];
            if !entry.gone && !listed.contains_key(&id) {
                entry.gone = true;
                update.removed.push(id);
            }
        }
        // Keep the server's order as it lists it now; tools it dropped stay at the end, in
        // the order they had.
        let (mut order, dropped): (Vec<_>, Vec<_>) = self.servers[server.index]
            .iter()
            .partition(|id| listed.contains_key(id));
        order.sort_by_key(|id| listed.get(id).copied());
        order.extend(dropped);
        self.servers[server.index] = order;
        update
    }

    pub fn get(&self, id: EntryId) -> Option<&CatalogEntry> {
        self.entries.get(id.0 as usize)
    }

    pub fn by_name(&self, name: &str) -> Option<&CatalogEntry> {
        self.by_name.get(name).and_then(|&id| self.get(id))
    }

    /// Finds a tool by qualified name, `server/tool`, or a bare tool name that only one server
    /// has (DESIGN.md section 4).
    pub fn resolve(&self, name: &str) -> Resolution<'_> {
        if let Some(entry) = self.by_name(name) {
            return Resolution::Found(entry);
        }
        if let Some((server, tool)) = name.split_once('/')
            && let Some(&id) = self.by_original.get(&(Arc::from(server), tool.to_owned()))
            && let Some(entry) = self.get(id)
        {
            return Resolution::Found(entry);
        }
        let mut matches = self.iter().filter(|e| e.original_name() == name);
        match (matches.next(), matches.next()) {
            (Some(only), None) => Resolution::Found(only),
            (Some(first), Some(second)) => Resolution::Ambiguous(
                [first, second]
                    .into_iter()
                    .chain(matches)
                    .map(|e| e.name.clone())
                    .collect(),
            ),
            (None, _) => Resolution::Unknown {
                suggestion: self.suggest(name),
            },
        }
    }

    /// The known name closest to `name`, for "did you mean": qualified names first, then
    /// the servers' own names.
    pub fn suggest(&self, name: &str) -> Option<QualifiedName> {
        let live: Vec<&CatalogEntry> = self.iter().filter(|e| !e.gone).collect();
        let qualified: Vec<&str> = live.iter().map(|e| e.name.as_str()).collect();
        if let Some(found) = crate::suggest::did_you_mean(name, &qualified) {
            return self.by_name(found).map(|e| e.name.clone());
        }
        let original: Vec<&str> = live.iter().map(|e| e.original_name()).collect();
        let found = crate::suggest::did_you_mean(name, &original)?;
        live.iter()
            .find(|e| e.original_name() == found)
            .map(|e| e.name.clone())
    }

    /// As [`Catalog::suggest`], among the tools of the server at config `index` only: a
    /// name that addresses a server must not be pointed at another server's tool.
    pub fn suggest_in(&self, index: usize, name: &str) -> Option<QualifiedName> {
        let live: Vec<&CatalogEntry> = self.server_entries(index).filter(|e| !e.gone).collect();
        let qualified: Vec<&str> = live.iter().map(|e| e.name.as_str()).collect();
        if let Some(found) = crate::suggest::did_you_mean(name, &qualified) {
            return self.by_name(found).map(|e| e.name.clone());
        }
        let tool = name
            .split_once(SEPARATOR)
            .or_else(|| name.split_once('/'))
            .map_or(name, |(_, tool)| tool);
        let original: Vec<&str> = live.iter().map(|e| e.original_name()).collect();
        let found = crate::suggest::did_you_mean(tool, &original)?;
        live.iter()
            .find(|e| e.original_name() == found)
            .map(|e| e.name.clone())
    }

    /// Every entry in config order.
    pub fn iter(&self) -> impl Iterator<Item = &CatalogEntry> {
        self.servers
            .iter()
            .flatten()
            .map(|id| &self.entries[id.0 as usize])
    }

    /// One server's entries, in its list order.
    pub fn server_entries(&self, index: usize) -> impl Iterator<Item = &CatalogEntry> {
        self.servers
            .get(index)
            .into_iter()
            .flatten()
            .map(|id| &self.entries[id.0 as usize])
    }

    /// Whether the server at config `index` has listed its tools at least once.
    pub fn has_listed(&self, index: usize) -> bool {
        self.listed.get(index).copied().unwrap_or(false)
    }

    /// Entries, including gone ones.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A server with `prefix = ""` is there to keep its own names; say so when one could not be
/// kept (`name` says why), naming the fix.
pub(crate) fn warn_if_renamed(
    server: ServerKey<'_>,
    kind: &str,
    original: &str,
    given: &QualifiedName,
) {
    if server.prefix.is_empty() && given.as_str() != original {
        tracing::warn!(
            server = server.name,
            original,
            name = %given,
            "the server has `prefix = \"\"`, but its {kind} cannot keep its own name (it has \
             characters other than letters, digits, `_` and `-`, holds `__`, is a meta tool's \
             name, or is too long or taken); clients call it by `name`. Set a prefix on the \
             server to have every name follow one rule"
        );
    }
}

/// The outcome of [`Catalog::resolve`].
#[derive(Debug)]
pub enum Resolution<'a> {
    Found(&'a CatalogEntry),
    /// A bare name that several servers have: these qualified names.
    Ambiguous(Vec<QualifiedName>),
    Unknown {
        suggestion: Option<QualifiedName>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Tool;
    use serde_json::json;

    pub(crate) fn tool(name: &str, description: &str) -> Tool {
        serde_json::from_value(json!({
            "name": name,
            "description": description,
            "inputSchema": {"type": "object", "properties": {}}
        }))
        .unwrap_or_else(|e| panic!("test tool: {e}"))
    }

    fn key(name: &'static str, index: usize) -> ServerKey<'static> {
        ServerKey {
            name,
            prefix: name,
            index,
        }
    }

    /// The tool cache keeps `ServerTool`s on disk in the format it kept `Tool`s in, so a
    /// cache written before reads the same, and one written now round-trips.
    #[test]
    fn a_server_tool_is_stored_as_its_tool_json() {
        let original = tool("t", "Does things.");
        let listed = ServerTool::new(&original);
        let stored = serde_json::to_string(&listed).unwrap_or_default();
        assert_eq!(stored, serde_json::to_string(&original).unwrap_or_default());
        let read: ServerTool =
            serde_json::from_str(&stored).unwrap_or_else(|e| panic!("reads back: {e}"));
        assert_eq!(read, listed);
    }

    #[test]
    fn iterates_in_config_order_whatever_the_arrival_order() {
        let mut catalog = Catalog::new(64);
        catalog.update_server(key("b", 1), vec![tool("y", ""), tool("x", "")]);
        catalog.update_server(key("a", 0), vec![tool("z", "")]);
        let names: Vec<_> = catalog.iter().map(|e| e.name.to_string()).collect();
        assert_eq!(names, ["a__z", "b__y", "b__x"]);
    }

    #[test]
    fn removed_tools_are_marked_gone_and_keep_their_name() {
        let mut catalog = Catalog::new(64);
        catalog.update_server(key("s", 0), vec![tool("one", ""), tool("two", "")]);
        let update = catalog.update_server(key("s", 0), vec![tool("two", "")]);
        assert_eq!(update.removed.len(), 1);
        let one = catalog.by_name("s__one").map(|e| e.gone);
        assert_eq!(one, Some(true));
        let update = catalog.update_server(key("s", 0), vec![tool("one", ""), tool("two", "")]);
        assert_eq!(update.returned.len(), 1);
        assert!(update.added.is_empty());
    }

    #[test]
    fn a_relist_takes_the_new_order_and_keeps_dropped_tools_last() {
        let mut catalog = Catalog::new(64);
        catalog.update_server(
            key("s", 0),
            vec![tool("a", ""), tool("b", ""), tool("c", "")],
        );
        catalog.update_server(
            key("s", 0),
            vec![tool("c", ""), tool("d", ""), tool("a", "")],
        );
        let order: Vec<_> = catalog
            .server_entries(0)
            .map(|e| (e.name.to_string(), e.gone))
            .collect();
        let expected = [
            ("s__c", false),
            ("s__d", false),
            ("s__a", false),
            ("s__b", true),
        ];
        assert_eq!(order, expected.map(|(n, g)| (n.to_owned(), g)));
    }

    #[test]
    fn a_changed_definition_is_reported_and_kept() {
        let mut catalog = Catalog::new(64);
        catalog.update_server(key("s", 0), vec![tool("t", "old")]);
        let update = catalog.update_server(key("s", 0), vec![tool("t", "new")]);
        assert_eq!(update.changed.len(), 1);
        let description = catalog.by_name("s__t").and_then(|e| e.tool.description());
        assert_eq!(description.as_deref(), Some("new"));
    }

    #[test]
    fn resolves_qualified_slash_and_unambiguous_bare_names() {
        let mut catalog = Catalog::new(64);
        catalog.update_server(key("a", 0), vec![tool("read", ""), tool("only_a", "")]);
        catalog.update_server(key("b", 1), vec![tool("read", "")]);
        let found = |name| match catalog.resolve(name) {
            Resolution::Found(e) => Some(e.name.to_string()),
            _ => None,
        };
        assert_eq!(found("a__read").as_deref(), Some("a__read"));
        assert_eq!(found("b/read").as_deref(), Some("b__read"));
        assert_eq!(found("only_a").as_deref(), Some("a__only_a"));
        assert!(
            matches!(catalog.resolve("read"), Resolution::Ambiguous(names) if names.len() == 2)
        );
        match catalog.resolve("a__raed") {
            Resolution::Unknown { suggestion } => {
                assert_eq!(
                    suggestion.map(|s| s.to_string()).as_deref(),
                    Some("a__read")
                )
            }
            other => panic!("expected unknown, got {other:?}"),
        }
    }
}
