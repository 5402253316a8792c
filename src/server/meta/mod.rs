//! The three tools mcp-defer itself offers: `search_tools`, `select_tools`, `call_tool`.
//!
//! Their definitions are fixed text (no counts, no server lists: those change and would
//! break the client's cache; the catalog of servers lives in the instructions). Each tool
//! owns its behaviour end to end in its own file, as mini-redis's `cmd/`: arguments parsed
//! once into a typed `Args`, an `apply` that does the work, and a typed result serialized
//! once. [`apply`] dispatches.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::ExposureMode;
use crate::exposure::mark_always_load;

pub(crate) mod call_tool;
mod context;
mod deliver;
mod relists;
pub(crate) mod search_tools;
pub(crate) mod select_tools;
pub(crate) mod validate;

pub(in crate::server) use context::Context;
pub(crate) use relists::Relists;

/// Largest `limit` a search may ask for.
pub(crate) const MAX_SEARCH_LIMIT: usize = 50;
/// Most names one `select_tools` call may load: enough for a task, few enough that one
/// call cannot flood the context.
pub(crate) const MAX_SELECT: usize = 20;
/// Longest tool name accepted from the client, in bytes. Real names are at most 128 (most
/// providers stop at 64); refusing longer ones at once keeps "did you mean" cheap (its edit
/// distance is quadratic in the name: a 100 KB name once froze the runtime for 16 s).
pub(crate) const MAX_NAME_BYTES: usize = 256;
/// `_meta` key that feeds Claude Code's own tool search (DESIGN.md 7a).
const SEARCH_HINT_KEY: &str = "anthropic/searchHint";

/// A meta tool, by wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MetaTool {
    SearchTools,
    SelectTools,
    CallTool,
}

impl MetaTool {
    /// In the order they are listed.
    pub(crate) const ALL: [MetaTool; 3] = [
        MetaTool::SearchTools,
        MetaTool::SelectTools,
        MetaTool::CallTool,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            MetaTool::SearchTools => "search_tools",
            MetaTool::SelectTools => "select_tools",
            MetaTool::CallTool => "call_tool",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<MetaTool> {
        MetaTool::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The listed definition. Depends on the settings and the session's exposure only, so
    /// it is the same in every session with the same config and era.
    pub(crate) fn definition(
        self,
        exposure: ExposureMode,
        claude_always_load: bool,
        search_loads: usize,
    ) -> Tool {
        // Annotations: searching is read-only (what it loads changes what the client is
        // offered, never the world, and a client that asks before a non-read-only tool
        // would ask at every search); selecting twice changes nothing more; what call_tool
        // does depends on the tool it calls, so it claims nothing.
        let (description, input, output, annotations) = match self {
            MetaTool::SearchTools => (
                search_tools::description(search_loads > 0),
                search_tools::input_schema(),
                Some(search_tools::output_schema()),
                Some(ToolAnnotations::new().read_only(true).idempotent(true)),
            ),
            MetaTool::SelectTools => (
                select_tools::description(exposure),
                select_tools::input_schema(),
                None,
                Some(
                    ToolAnnotations::new()
                        .read_only(exposure == ExposureMode::Proxy)
                        .idempotent(true),
                ),
            ),
            MetaTool::CallTool => (
                call_tool::DESCRIPTION,
                call_tool::input_schema(),
                None,
                None,
            ),
        };
        let mut tool = Tool::new(self.name(), description, Arc::new(object(input)));
        if let Some(output) = output {
            tool = tool.with_raw_output_schema(Arc::new(object(output)));
        }
        if let Some(annotations) = annotations {
            tool = tool.annotate(annotations.open_world(false));
        }
        if claude_always_load {
            mark_always_load(&mut tool);
        }
        if self == MetaTool::SearchTools {
            tool.meta.get_or_insert_with(Default::default).0.insert(
                SEARCH_HINT_KEY.to_owned(),
                Value::from("find load discover more tools mcp servers capabilities"),
            );
        }
        tool
    }
}

/// Runs a meta tool, once the servers still starting have listed (at most their
/// `startup_timeout`; a search at most a few seconds, naming those still starting): an
/// early search or call should see what is coming. Invalid
/// arguments are an error result the model can act on.
pub(super) async fn apply(
    state: &impl Context,
    tool: MetaTool,
    request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> CallToolResponse {
    // `call_tool` waits itself, only until its tool is known; `select_tools` only until
    // the names it was given are known (a tool of a server that is ready does not wait for
    // the slowest one); a search waits for servers still starting only while it has
    // found nothing that fits ([`search_tools::apply`]).
    let arguments = request.arguments;
    let result = match tool {
        MetaTool::SearchTools => match parse_arguments(tool, arguments) {
            Ok(args) => Ok(search_tools::apply(state, &args).await.into()),
            Err(result) => Err(result),
        },
        MetaTool::SelectTools => match parse_arguments::<select_tools::Args>(tool, arguments) {
            Ok(args) => {
                let known = || {
                    let catalog = state.registry().catalog();
                    (args.names.iter()).all(|name| {
                        !matches!(
                            catalog.resolve(name.trim()),
                            crate::catalog::Resolution::Unknown { .. }
                        )
                    })
                };
                state.wait_for_servers_unless(known).await;
                Ok(select_tools::apply(state, &args).await.into())
            }
            Err(result) => Err(result),
        },
        MetaTool::CallTool => match parse_arguments(tool, arguments) {
            Ok(args) => Ok(call_tool::apply(state, args, context).await),
            Err(result) => Err(result),
        },
    };
    result.unwrap_or_else(|invalid| (*invalid).into())
}

/// A JSON object literal as rmcp's `JsonObject`.
fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// Parses a meta tool's arguments, or says what is wrong with them in a result the model
/// can act on (boxed: the error path is rare and the result is large).
pub(crate) fn parse_arguments<T: DeserializeOwned>(
    tool: MetaTool,
    arguments: Option<JsonObject>,
) -> Result<T, Box<CallToolResult>> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default())).map_err(|err| {
        Box::new(error_result(format!(
            "Invalid arguments for {}: {err}. See its inputSchema.",
            tool.name()
        )))
    })
}

/// Why a tool name from the client is refused; each message says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NameError {
    #[error("The tool name is empty. Use search_tools to find names.")]
    Empty,
    /// Its length in bytes.
    #[error(
        "The tool name is {0} bytes long; tool names are at most {max}. Use search_tools to \
         find names.",
        max = MAX_NAME_BYTES
    )]
    TooLong(usize),
}

/// The one rule for a tool name from the client, in `select_tools`, `call_tool` and direct
/// calls: surrounding whitespace is dropped; empty or over [`MAX_NAME_BYTES`] is refused.
///
/// # Errors
/// [`NameError`], whose message the model can act on.
pub(crate) fn clean_name(name: &str) -> Result<&str, NameError> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(NameError::Empty);
    }
    if trimmed.len() > MAX_NAME_BYTES {
        return Err(NameError::TooLong(trimmed.len()));
    }
    Ok(trimmed)
}

/// An `isError` result with one line of text.
pub(crate) fn error_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

/// A result whose `structuredContent` is what Claude Code and Codex show the model, and
/// whose text serves clients without structured results.
pub(crate) fn structured_result(
    text: String,
    structured: &impl Serialize,
    is_error: bool,
) -> CallToolResult {
    // Our result structs hold strings, numbers and tools only: they always serialize.
    let structured = serde_json::to_value(structured).unwrap_or_default();
    let mut result = if is_error {
        CallToolResult::structured_error(structured)
    } else {
        CallToolResult::structured(structured)
    };
    result.content = vec![ContentBlock::text(text)];
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_server_tool_can_be_given_a_meta_tool_name() {
        let names: Vec<&str> = MetaTool::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names, crate::catalog::RESERVED);
    }

    #[test]
    fn refused_names_say_what_to_do() {
        assert_eq!(clean_name("  t  "), Ok("t"));
        assert_eq!(
            clean_name(" ").map_err(|e| e.to_string()),
            Err("The tool name is empty. Use search_tools to find names.".to_owned())
        );
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        assert_eq!(
            clean_name(&long).map_err(|e| e.to_string()),
            Err(format!(
                "The tool name is {} bytes long; tool names are at most 256. Use search_tools to \
                 find names.",
                MAX_NAME_BYTES + 1
            ))
        );
    }

    #[test]
    fn definitions_are_fixed_and_carry_always_load() {
        for meta in MetaTool::ALL {
            let a = serde_json::to_string(&meta.definition(ExposureMode::Deferred, true, 3)).ok();
            let b = serde_json::to_string(&meta.definition(ExposureMode::Deferred, true, 3)).ok();
            assert_eq!(a, b);
            let tool = meta.definition(ExposureMode::Deferred, true, 3);
            let always = tool
                .meta
                .as_ref()
                .and_then(|m| m.0.get("anthropic/alwaysLoad"))
                .cloned();
            assert_eq!(always, Some(json!(true)), "{}", meta.name());
            assert_eq!(MetaTool::from_name(meta.name()), Some(meta));
        }
    }
}
