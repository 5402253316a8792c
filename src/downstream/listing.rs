//! What a server offers, each list fetched from the first page to the last: tools always,
//! prompts and resources (with templates) when the server declared them.
//!
//! Sent as raw requests: rmcp's list cache must not hand back a list from before a change.

use rmcp::model::{
    ClientRequest, Cursor, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListToolsRequest, PaginatedRequestParams, Prompt, Resource, ResourceTemplate, ServerResult,
    Tool,
};
use rmcp::service::{RoleClient, ServiceError};

use crate::config::ServerConfig;

/// A server paginating past this many pages is looping on its cursor.
const MAX_PAGES: usize = 10_000;

/// A server's resources and resource templates.
pub(super) type Resources = (Vec<Resource>, Vec<ResourceTemplate>);

/// `tools/list`, filtered by the server's config, with its description and title
/// overrides applied: every consumer (catalog, search index, `tools/list`, the CLI) gets
/// the tools from here, so this is the one place overrides take effect.
pub(super) async fn tools(
    peer: &rmcp::Peer<RoleClient>,
    config: &ServerConfig,
) -> Result<Vec<Tool>, ServiceError> {
    let mut tools = all_pages(
        peer,
        "tools/list",
        |params| ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params)),
        |result| match result {
            ServerResult::ListToolsResult(page) => Some((page.tools, page.next_cursor)),
            _ => None,
        },
    )
    .await?;
    tools.retain(|t| config.allows(&t.name));
    tools.iter_mut().for_each(|t| config.override_tool(t));
    Ok(tools)
}

/// `prompts/list`, when the server declared prompts. A failure is logged and the server
/// counts as offering none: its tools matter more than its prompts.
pub(super) async fn prompts(peer: &rmcp::Peer<RoleClient>) -> Option<Vec<Prompt>> {
    peer.peer_info()?.capabilities.prompts.as_ref()?;
    let listed = all_pages(
        peer,
        "prompts/list",
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
        "resources/list",
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
        "resources/templates/list",
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
