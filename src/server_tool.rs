//! A tool as its server lists it, in the compact form everything after the wire keeps:
//! `downstream` makes it from each page it lists, the tool cache stores it, the catalog
//! holds it. A leaf: it imports nothing of ours, so `downstream` never needs `catalog`.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool definition as compact JSON text: how the catalog keeps it. A parsed [`Tool`] is
/// a tree of `serde_json` maps, about 6x its text (10k real tools: 62 MB against ~10 MB),
/// and most catalog tools are never listed nor called; the text is parsed only to index,
/// validate or list a tool. Cheap to clone; a changed definition is a new value, so
/// [`ToolJson::same`] tells whether a cache made from one is current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolJson(Arc<str>);

impl ToolJson {
    pub fn new(tool: &Tool) -> ToolJson {
        // A `Tool` is strings, numbers and JSON objects: it always serializes.
        ToolJson(serde_json::to_string(tool).unwrap_or_default().into())
    }

    /// `tool` with `extra`, the fields its server listed that `Tool` does not carry, after
    /// its own (a field `Tool` has always wins).
    pub fn with_extra(tool: &Tool, extra: Extra) -> ToolJson {
        if extra.is_empty() {
            return ToolJson::new(tool);
        }
        ToolJson(with_extra(tool, extra).into())
    }

    /// The fields of the definition that `Tool` does not carry, as listed (`execution`).
    pub fn extra(&self) -> Extra {
        serde_json::from_str::<Value>(&self.0)
            .map(|value| split_extra(&value))
            .unwrap_or_default()
    }

    /// The definition as a [`Tool`].
    pub fn parse(&self) -> Tool {
        // The text is our own serialization of a `Tool`, so it parses back; the default
        // (an empty tool) is only a guard.
        serde_json::from_str(&self.0).unwrap_or_default()
    }

    /// The `description`, without building the rest of the tool (its schema is skipped).
    pub fn description(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct Description<'a> {
            #[serde(borrow, default)]
            description: Option<Cow<'a, str>>,
        }
        let parsed: Description<'_> = serde_json::from_str(&self.0).ok()?;
        parsed.description.map(Cow::into_owned)
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether both are the very same value (not merely equal text).
    pub fn same(&self, other: &ToolJson) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A tool as its server lists it, made compact as soon as its page is decoded: its name
/// and its definition as [`ToolJson`]. rmcp decodes a page into `Tool` trees (~6 KB a tool
/// with real schemas); turning each into text there keeps a batch of lists waiting to be
/// ingested at ~1 KB a tool (10k tools: ~10 MB, not ~60 MB of trees).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTool {
    name: Box<str>,
    json: ToolJson,
}

impl ServerTool {
    pub fn new(tool: &Tool) -> ServerTool {
        ServerTool {
            name: tool.name.as_ref().into(),
            json: ToolJson::new(tool),
        }
    }

    /// `tool` as its server listed it, with the fields `Tool` does not carry ([`Extra`]).
    pub fn with_extra(tool: &Tool, extra: Extra) -> ServerTool {
        ServerTool {
            name: tool.name.as_ref().into(),
            json: ToolJson::with_extra(tool, extra),
        }
    }

    /// The tool's name on its server.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn json(&self) -> &ToolJson {
        &self.json
    }

    /// Its name and definition, for the catalog to keep without a copy.
    pub fn into_parts(self) -> (Box<str>, ToolJson) {
        (self.name, self.json)
    }
}

/// As the tool's JSON object (what `downstream::tool_cache` keeps on disk): parsed to write,
/// made compact again when read; the fields `Tool` does not carry go along.
impl Serialize for ServerTool {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serde_json::from_str::<Value>(self.json.as_str())
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ServerTool {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let extra = split_extra(&value);
        let tool = Tool::deserialize(value).map_err(serde::de::Error::custom)?;
        Ok(ServerTool::with_extra(&tool, extra))
    }
}

/// Fields of a tool definition that rmcp's `Tool` does not carry, by name: 2025-11-25's
/// `execution` (`{"taskSupport": ...}`, SEP-1686) and whatever later revisions add. Kept
/// beside the parsed tool so the client is shown the tool as its server listed it.
pub(crate) type Extra = serde_json::Map<String, Value>;

/// The fields `Tool` knows, as they are spelled on the wire.
const TOOL_FIELDS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "_meta",
];

/// The fields of the tool definition `raw` that `Tool` would drop.
pub(crate) fn split_extra(raw: &Value) -> Extra {
    raw.as_object()
        .map(|object| {
            object
                .iter()
                .filter(|(key, _)| !TOOL_FIELDS.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The JSON text of `tool` with `extra` after its own fields.
pub(crate) fn with_extra(tool: &Tool, extra: Extra) -> String {
    // A `Tool` is strings, numbers and JSON objects: it always serializes, as an object.
    let mut value = serde_json::to_value(tool).unwrap_or_default();
    if let Value::Object(object) = &mut value {
        for (key, field) in extra {
            object.entry(key).or_insert(field);
        }
    }
    value.to_string()
}

impl From<Tool> for ServerTool {
    fn from(tool: Tool) -> ServerTool {
        ServerTool::new(&tool)
    }
}

impl From<&Tool> for ServerTool {
    fn from(tool: &Tool) -> ServerTool {
        ServerTool::new(tool)
    }
}
