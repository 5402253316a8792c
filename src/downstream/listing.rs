//! What a server offers, each list fetched from the first page to the last: tools always,
//! prompts and resources (with templates) when the server declared them.
//!
//! Sent as raw requests: rmcp's list cache must not hand back a list from before a change.
//! Tool pages are taken tool by tool: one malformed tool is skipped with a warning naming it
//! and why, and the server's other tools stay usable. (rmcp decodes a page as a whole; a
//! single tool without an `inputSchema` makes the whole page fall through to its catch-all
//! `CustomResult`, which is decoded here one tool at a time. A stdio server's pages always
//! arrive so, raw (`tasks.rs`): each tool keeps the fields `Tool` drops, `execution`.)
//!
//! Each tool leaves here as [`ServerTool`] (its definition as JSON text), made page by page:
//! the `Tool` trees rmcp decodes (~6 KB a tool) are dropped with their page, so what is
//! queued for ingest is ~1 KB a tool.

use rmcp::model::{
    ClientRequest, Cursor, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListToolsRequest, PaginatedRequestParams, Prompt, Resource, ResourceTemplate, ServerResult,
    Tool,
};
use rmcp::service::{RoleClient, ServiceError};
use serde_json::Value;

use crate::config::ServerConfig;
use crate::protocol::method;
use crate::server_tool::{Extra, ServerTool, split_extra};

/// A server paginating past this many pages is looping on its cursor.
const MAX_PAGES: usize = 10_000;

/// A server's resources and resource templates.
pub(super) type Resources = (Vec<Resource>, Vec<ResourceTemplate>);

/// `tools/list`, well-formed tools only, filtered by the server's config, with its
/// description and title overrides applied: every consumer (catalog, search index,
/// `tools/list`, the CLI) gets the tools from here, so this is the one place overrides take
/// effect.
pub(super) async fn tools(
    peer: &rmcp::Peer<RoleClient>,
    config: &ServerConfig,
) -> Result<Vec<ServerTool>, ServiceError> {
    all_pages(
        peer,
        method::TOOLS_LIST,
        |params| ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params)),
        |result| {
            let (tools, next_cursor) = match result {
                ServerResult::ListToolsResult(page) => (
                    page.tools.into_iter().map(|t| (t, Extra::new())).collect(),
                    page.next_cursor,
                ),
                ServerResult::CustomResult(raw) => lenient_page(raw.0)?,
                _ => return None,
            };
            Some((compact(config, tools), next_cursor))
        },
    )
    .await
}

/// One page's tools as the catalog takes them: valid, allowed by the config, overrides
/// applied, each turned into text.
fn compact(config: &ServerConfig, tools: Vec<(Tool, Extra)>) -> Vec<ServerTool> {
    valid_tools(tools)
        .into_iter()
        .filter(|(t, _)| config.allows(&t.name))
        .map(|(mut tool, extra)| {
            config.override_tool(&mut tool);
            ServerTool::with_extra(&tool, extra)
        })
        .collect()
}

/// `prompts/list`, when the server declared prompts. A failure is logged and the server
/// counts as offering none: its tools matter more than its prompts.
pub(super) async fn prompts(peer: &rmcp::Peer<RoleClient>) -> Option<Vec<Prompt>> {
    peer.peer_info()?.capabilities.prompts.as_ref()?;
    let listed = all_pages(
        peer,
        method::PROMPTS_LIST,
        |params| ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(params)),
        |result| match result {
            ServerResult::ListPromptsResult(page) => Some((page.prompts, page.next_cursor)),
            _ => None,
        },
    )
    .await;
    Some(listed.unwrap_or_else(|err| {
        tracing::warn!(cause = %err, "prompts/list failed; no prompts from this server for now");
        Vec::new()
    }))
}

/// `resources/list` and `resources/templates/list`, when the server declared resources.
/// Failures are logged and count as empty lists (some servers answer only one of the two).
pub(super) async fn resources(peer: &rmcp::Peer<RoleClient>) -> Option<Resources> {
    peer.peer_info()?.capabilities.resources.as_ref()?;
    let resources = all_pages(
        peer,
        method::RESOURCES_LIST,
        |params| ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params)),
        |result| match result {
            ServerResult::ListResourcesResult(page) => Some((page.resources, page.next_cursor)),
            _ => None,
        },
    )
    .await
    .unwrap_or_else(|err| {
        tracing::warn!(cause = %err, "resources/list failed; no resources from this server for now");
        Vec::new()
    });
    let templates = all_pages(
        peer,
        method::RESOURCES_TEMPLATES_LIST,
        |params| {
            ClientRequest::ListResourceTemplatesRequest(ListResourceTemplatesRequest::with_param(
                params,
            ))
        },
        |result| match result {
            ServerResult::ListResourceTemplatesResult(page) => {
                Some((page.resource_templates, page.next_cursor))
            }
            _ => None,
        },
    )
    .await
    .unwrap_or_else(|err| {
        tracing::debug!(cause = %err, "resources/templates/list failed; no templates from this server");
        Vec::new()
    });
    Some((resources, templates))
}

/// Every page of one list, following `nextCursor` to the end.
async fn all_pages<T>(
    peer: &rmcp::Peer<RoleClient>,
    method: &str,
    request: impl Fn(PaginatedRequestParams) -> ClientRequest,
    page: impl Fn(ServerResult) -> Option<(Vec<T>, Option<Cursor>)>,
) -> Result<Vec<T>, ServiceError> {
    let mut items = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let (mut more, next) = page(peer.send_request(request(params)).await?)
            .ok_or(ServiceError::UnexpectedResponse)?;
        items.append(&mut more);
        cursor = next;
        if cursor.is_none() {
            return Ok(items);
        }
    }
    tracing::warn!(
        method,
        pages = MAX_PAGES,
        "the list never ended; keeping what was listed"
    );
    Ok(items)
}

/// A page's tools, each with the fields rmcp's `Tool` does not carry (`execution`), and
/// the cursor of the next page.
type Page = (Vec<(Tool, Extra)>, Option<Cursor>);

/// The tools of a page rmcp did not decode (one it could not, or one a stdio server's
/// transport handed on raw: `tasks.rs`), each decoded alone and kept with the fields
/// `Tool` drops ([`split_extra`]); `None` when the value is not a tools page at all.
fn lenient_page(mut page: Value) -> Option<Page> {
    let tools = match page.get_mut("tools")? {
        Value::Array(tools) => std::mem::take(tools),
        _ => return None,
    };
    let next_cursor = page
        .get("nextCursor")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let tools = tools
        .into_iter()
        .enumerate()
        .filter_map(|(position, raw)| {
            let name = raw
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("#{}", position + 1), str::to_owned);
            let extra = split_extra(&raw);
            match serde_json::from_value::<Tool>(raw) {
                Ok(tool) => Some((tool, extra)),
                Err(err) => {
                    tracing::warn!(tool = %name, cause = %err, "skipping a tool the server lists malformed");
                    None
                }
            }
        })
        .collect();
    Some((tools, next_cursor))
}

/// Drops tools whose `inputSchema` declares a `type` other than `"object"` (MCP requires
/// an object schema; a call could never satisfy another), with a warning naming each.
fn valid_tools(tools: Vec<(Tool, Extra)>) -> Vec<(Tool, Extra)> {
    tools
        .into_iter()
        .filter(|(tool, _)| match tool.input_schema.get("type") {
            None => true,
            Some(Value::String(kind)) if kind == "object" => true,
            Some(other) => {
                tracing::warn!(
                    tool = %tool.name,
                    cause = %format!("inputSchema has type {other}, not \"object\""),
                    "skipping a tool the server lists malformed"
                );
                false
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bad_tool_is_skipped_and_the_rest_kept() {
        let page = json!({
            "tools": [
                {"name": "good", "inputSchema": {"type": "object"}},
                {"name": "no_schema"},
                {"name": "string_schema", "inputSchema": {"type": "string"}},
                {"name": "also_good", "inputSchema": {}}
            ],
            "nextCursor": "2"
        });
        let (tools, next_cursor) = lenient_page(page).unwrap_or_else(|| panic!("a tools page"));
        assert_eq!(next_cursor.as_deref(), Some("2"));
        let names: Vec<String> = valid_tools(tools)
            .iter()
            .map(|(t, _)| t.name.to_string())
            .collect();
        assert_eq!(names, ["good", "also_good"]);
    }

    /// A page leaves as text: filtered and overridden by the config first, each tool the
    /// JSON of its (overridden) definition, so nothing downstream holds a `Tool` tree.
    #[test]
    fn a_page_becomes_text_after_filters_and_overrides() {
        let text = r#"
            [mcp_servers.s]
            command = "true"
            disabled_tools = ["hidden"]
            [mcp_servers.s.tools.shown]
            description = "Better words."
        "#;
        let config = crate::config::Config::parse_with_env(
            text,
            std::path::Path::new("servers.toml"),
            &|_| None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let tool = |name: &str| -> Tool {
            serde_json::from_value(
                json!({"name": name, "description": "Words.", "inputSchema": {"type": "object"}}),
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let page = compact(
            &config.servers[0],
            vec![
                (tool("shown"), Extra::new()),
                (tool("hidden"), Extra::new()),
            ],
        );
        assert_eq!(page.len(), 1);
        assert_eq!(page[0].name(), "shown");
        let mut expected = tool("shown");
        expected.description = Some("Better words.".into());
        assert_eq!(page[0].json().parse(), expected);
    }
}
