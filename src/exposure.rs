//! The lists the client sees, append-only by construction (DESIGN.md invariant 1).
//!
//! [`ExposedList`] has no way to remove, reorder or edit an entry: an item is frozen (an
//! `Arc`) the moment it is appended, so every later `tools/list` (and `prompts/list`,
//! `resources/list`, `resources/templates/list`) is the previous one plus items at the end,
//! with the same bytes for everything already there. What gets appended is decided by
//! `server` (via `select_tools` or the exposure mode), never by ranking: this module imports
//! neither `search` nor `downstream`.
//!
//! A tool is kept as the bytes it is listed with ([`ListedTool`]), serialized once when it
//! is appended: `tools/list` over stdio writes those bytes as they are (see
//! `server::stdio`), so a list of 1,000 tools is a copy, not 1,000 re-serializations, and
//! the list holds ~1 KB of text per tool instead of a ~6 KB `Tool` tree.

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::model::{MetaObject, Prompt, Resource, ResourceTemplate, Tool};

use crate::catalog::CatalogEntry;

/// `_meta` key that makes Claude Code load a tool up front instead of hiding it behind its
/// own tool search (DESIGN.md 7a).
pub const ALWAYS_LOAD_KEY: &str = "anthropic/alwaysLoad";

/// The tool as the client sees it: the downstream definition, byte for byte, with only
/// `name` replaced by its qualified name and our `_meta` keys added.
pub fn listed_form(entry: &CatalogEntry, claude_always_load: bool) -> Tool {
    let mut tool = entry.tool.parse();
    tool.name = entry.name.as_str().to_owned().into();
    if claude_always_load {
        mark_always_load(&mut tool);
    }
    tool
}

/// The [`ListedTool`] of `entry`: its [`listed_form`], with the fields rmcp's `Tool` does
/// not carry (a 2025-11-25 task tool's `execution`) as its server listed them.
pub fn listed_tool(entry: &CatalogEntry, claude_always_load: bool) -> ListedTool {
    ListedTool::with_extra(&listed_form(entry, claude_always_load), entry.tool.extra())
}

/// The `_meta` key a typed tool carries its fields `Tool` has no place for under, on the
/// way to a transport that writes typed results (Streamable HTTP): `server/http/tasks.rs`
/// puts them back at the top level of the answer. Never reaches a client.
pub const EXTRA_KEY: &str = "mcp-defer/extra";

/// Moves the fields under `_meta` [`EXTRA_KEY`] of the tool `tool` (JSON) back to its top
/// level, dropping a `_meta` left empty.
pub fn unmark_extra(tool: &mut serde_json::Value) {
    let Some(object) = tool.as_object_mut() else {
        return;
    };
    let Some(meta) = object.get_mut("_meta").and_then(|m| m.as_object_mut()) else {
        return;
    };
    let Some(serde_json::Value::Object(extra)) = meta.remove(EXTRA_KEY) else {
        return;
    };
    if meta.is_empty() {
        object.remove("_meta");
    }
    for (key, value) in extra {
        object.entry(key).or_insert(value);
    }
}

/// Adds `"anthropic/alwaysLoad": true` to the tool's `_meta`, keeping its other keys.
pub fn mark_always_load(tool: &mut Tool) {
    tool.meta
        .get_or_insert_with(MetaObject::default)
        .0
        .insert(ALWAYS_LOAD_KEY.to_owned(), serde_json::Value::Bool(true));
}

/// A tool as the client is shown it: its [`listed_form`] serialized once, when it is
/// appended. Every later `tools/list` answers with these very bytes; that is what makes
/// each list the previous one plus tools at the end, byte for byte.
#[derive(Debug, PartialEq, Eq)]
pub struct ListedTool {
    name: Box<str>,
    json: Box<str>,
    /// Its `outputSchema` is absent or an object: a handshake-era client gets it as it is
    /// (rmcp drops any other output schema for them, SEP-2106).
    object_output: bool,
    /// Its text has fields `Tool` does not carry ([`ListedTool::with_extra`]).
    extra: bool,
}

impl ListedTool {
    pub fn new(tool: &Tool) -> ListedTool {
        ListedTool {
            name: tool.name.as_ref().into(),
            // A `Tool` is strings, numbers and JSON objects: it always serializes.
            json: serde_json::to_string(tool).unwrap_or_default().into(),
            extra: false,
            object_output: tool.output_schema.as_ref().is_none_or(|schema| {
                schema.get("type").and_then(serde_json::Value::as_str) == Some("object")
            }),
        }
    }

    /// `tool` with `extra` after its own fields (see [`listed_tool`]).
    pub fn with_extra(tool: &Tool, extra: crate::server_tool::Extra) -> ListedTool {
        if extra.is_empty() {
            return ListedTool::new(tool);
        }
        ListedTool {
            json: crate::server_tool::with_extra(tool, extra).into(),
            extra: true,
            ..ListedTool::new(tool)
        }
    }

    /// [`ListedTool::to_tool`] with the fields `Tool` does not carry under `_meta`
    /// [`EXTRA_KEY`], for Streamable HTTP (see there).
    pub fn to_tool_marked(&self) -> Tool {
        let mut tool = self.to_tool();
        if !self.extra {
            return tool;
        }
        let extra = serde_json::from_str::<serde_json::Value>(&self.json)
            .map(|value| crate::server_tool::split_extra(&value))
            .unwrap_or_default();
        if !extra.is_empty() {
            tool.meta
                .get_or_insert_with(MetaObject::default)
                .0
                .insert(EXTRA_KEY.to_owned(), serde_json::Value::Object(extra));
        }
        tool
    }

    /// Whether a client of the handshake era is shown these bytes unchanged; when not,
    /// rmcp must write the typed tool, without its non-object `outputSchema`.
    pub fn same_for_handshake_era(&self) -> bool {
        self.object_output
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The JSON text the tool is listed with.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The tool as an rmcp value, for a transport that serializes typed results itself
    /// (Streamable HTTP). The text is our own serialization of a `Tool`, so it parses back;
    /// the default (an empty tool) is only a guard.
    pub fn to_tool(&self) -> Tool {
        serde_json::from_str(&self.json).unwrap_or_default()
    }
}

/// What an [`ExposedList`] can hold: an item with the key the client knows it by.
pub trait Listed {
    /// Unique within one list: a tool's or prompt's name, a resource's URI, a template's
    /// URI template.
    fn key(&self) -> &str;
}

impl Listed for Tool {
    fn key(&self) -> &str {
        &self.name
    }
}

impl Listed for ListedTool {
    fn key(&self) -> &str {
        &self.name
    }
}

impl Listed for Prompt {
    fn key(&self) -> &str {
        &self.name
    }
}

impl Listed for Resource {
    fn key(&self) -> &str {
        &self.uri
    }
}

impl Listed for ResourceTemplate {
    fn key(&self) -> &str {
        &self.uri_template
    }
}

/// The ordered, append-only list of tools (or prompts, resources, templates) shown to the
/// client.
#[derive(Debug)]
pub struct ExposedList<T = ListedTool> {
    items: Vec<Arc<T>>,
    names: HashSet<Arc<str>>,
}

impl<T> Default for ExposedList<T> {
    fn default() -> Self {
        ExposedList {
            items: Vec::new(),
            names: HashSet::new(),
        }
    }
}

impl<T: Listed> ExposedList<T> {
    pub fn new() -> ExposedList<T> {
        ExposedList::default()
    }

    /// Appends `item` unless an item with its key is already listed. Returns whether it was
    /// appended. A listed item is never replaced: clients keep the definition they first saw
    /// (DESIGN.md 7a), and rewriting it would break the prompt cache.
    pub fn append(&mut self, item: T) -> bool {
        if self.names.contains(item.key()) {
            return false;
        }
        self.names.insert(Arc::from(item.key()));
        self.items.push(Arc::new(item));
        true
    }

    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The list as it stands, cheap to take: the items themselves are shared.
    pub fn snapshot(&self) -> Vec<Arc<T>> {
        self.items.clone()
    }
}

/// A list the client may not have listed yet: until its first list, items wait, so that
/// list is in config order; after it, items are appended as they arrive. Prompts,
/// resources and templates follow this rule (tools add core and `all`-mode rules of their
/// own).
#[derive(Debug)]
pub struct ClientList<T> {
    shown: ExposedList<T>,
    listed: bool,
}

impl<T> Default for ClientList<T> {
    fn default() -> Self {
        ClientList {
            shown: ExposedList::default(),
            listed: false,
        }
    }
}

impl<T: Listed + Clone> ClientList<T> {
    /// Appends the `items` not shown yet, once the client has listed; returns how many.
    pub fn arrive(&mut self, items: impl IntoIterator<Item = T>) -> usize {
        if !self.listed {
            return 0;
        }
        items
            .into_iter()
            .filter(|item| self.shown.append(item.clone()))
            .count()
    }

    /// The client's list; the first call fills it with `all`, in its order.
    pub fn list<I: IntoIterator<Item = T>>(&mut self, all: impl FnOnce() -> I) -> Vec<T> {
        if !self.listed {
            self.listed = true;
            for item in all() {
                self.shown.append(item);
            }
        }
        self.shown.snapshot().iter().map(|t| T::clone(t)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A task tool's `execution` survives the tool cache's round trip, is listed as the
    /// server listed it, and over HTTP rides in `_meta` and comes back out unchanged.
    #[test]
    fn fields_tool_lacks_survive_the_cache_the_list_and_the_http_mark() {
        use crate::server_tool::{ServerTool, split_extra};
        let raw = serde_json::json!({"name": "research", "inputSchema": {"type": "object"},
                                     "_meta": {"k": 1}, "execution": {"taskSupport": "required"}});
        let parsed: Tool = serde_json::from_value(raw.clone()).unwrap_or_default();
        let listed = ServerTool::with_extra(&parsed, split_extra(&raw));
        let cached = serde_json::to_string(&listed).unwrap_or_default();
        let back: ServerTool = serde_json::from_str(&cached).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, listed);
        let shown = ListedTool::with_extra(&parsed, back.json().extra());
        let shown_value: serde_json::Value = serde_json::from_str(shown.json()).unwrap_or_default();
        assert_eq!(shown_value, raw);
        let mut marked = serde_json::to_value(shown.to_tool_marked()).unwrap_or_default();
        assert!(marked.get("execution").is_none());
        unmark_extra(&mut marked);
        assert_eq!(marked, raw);
        // A tool without such fields is not marked at all.
        let plain = ListedTool::new(&parsed);
        assert_eq!(plain.to_tool_marked(), parsed);
    }

    fn tool(name: &str, description: &str) -> Tool {
        let mut tool = Tool::default();
        tool.name = name.to_owned().into();
        tool.description = Some(description.to_owned().into());
        tool
    }

    #[test]
    fn a_listed_tool_is_never_replaced() {
        let mut list = ExposedList::new();
        assert!(list.append(ListedTool::new(&tool("a", "first"))));
        assert!(!list.append(ListedTool::new(&tool("a", "second"))));
        let snapshot = list.snapshot();
        assert_eq!(snapshot.len(), 1);
        assert_eq!(snapshot[0].to_tool().description.as_deref(), Some("first"));
    }

    /// A tool is serialized once, when appended: every later list hands out the same
    /// bytes (the very allocation), never a new serialization per request.
    #[test]
    fn a_tool_is_serialized_once_per_append_not_per_list() {
        let mut list = ExposedList::new();
        list.append(ListedTool::new(&tool("a", "first")));
        let first = list.snapshot();
        list.append(ListedTool::new(&tool("b", "second")));
        let second = list.snapshot();
        assert!(std::ptr::eq(first[0].json(), second[0].json()));
        let typed = serde_json::to_string(&tool("a", "first")).unwrap_or_default();
        assert_eq!(
            second[0].json(),
            typed,
            "the bytes are rmcp's serialization"
        );
        assert_eq!(second[1].to_tool(), tool("b", "second"));
    }

    /// A non-object `outputSchema` is one rmcp strips for handshake-era clients, so such a
    /// tool must not be written from its bytes to them.
    #[test]
    fn a_non_object_output_schema_is_not_sent_as_is_to_the_handshake_era() {
        let with = |schema: Option<serde_json::Value>| {
            let mut tool = tool("t", "");
            tool.output_schema = schema.and_then(|s| match s {
                serde_json::Value::Object(map) => Some(Arc::new(map)),
                _ => None,
            });
            ListedTool::new(&tool).same_for_handshake_era()
        };
        assert!(with(None));
        assert!(with(Some(serde_json::json!({"type": "object"}))));
        assert!(!with(Some(serde_json::json!({"type": "array"}))));
        assert!(!with(Some(serde_json::json!({}))));
    }

    proptest! {
        /// Whatever is appended, each snapshot is the previous one plus tools at the end,
        /// byte for byte.
        #[test]
        fn every_snapshot_extends_the_previous(appends in proptest::collection::vec(("[a-e]", "[a-z]{0,4}"), 0..60)) {
            let mut list = ExposedList::new();
            let mut previous: Vec<String> = Vec::new();
            for (name, description) in appends {
                list.append(ListedTool::new(&tool(&name, &description)));
                let now: Vec<String> = list
                    .snapshot()
                    .iter()
                    .map(|t| t.json().to_owned())
                    .collect();
                prop_assert!(now.len() >= previous.len());
                prop_assert_eq!(&now[..previous.len()], &previous[..]);
                previous = now;
            }
        }
    }
}
