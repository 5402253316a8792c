//! A tool as its server lists it, in the compact form everything after the wire keeps:
//! `downstream` makes it from each page it lists, the tool cache stores it, the catalog
//! holds it. A leaf: it imports nothing of ours, so `downstream` never needs `catalog`.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};

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
/// made compact again when read.
impl Serialize for ServerTool {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.parse().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ServerTool {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Tool::deserialize(deserializer).map(ServerTool::from)
    }
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
