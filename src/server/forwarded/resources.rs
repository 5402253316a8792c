//! Resources and resource templates: every server's, listed append-only under their own
//! URIs, with `resources/read` and subscriptions routed to the server a URI belongs to.
//!
//! URIs are never renamed (a URI is the resource's identity; clients and models pass it
//! back verbatim). A URI goes to the first server in config order that lists it, else to
//! the first whose template matches it, else to each server that offers resources in config
//! order until one reads it ([`crate::catalog::resources`]). Subscriptions are counted per
//! URI across every session's channels (legacy `resources/subscribe` and the
//! `resourceSubscriptions` of 2026-07-28 `subscriptions/listen` streams): the owning server
//! is subscribed once, and unsubscribed when the last one ends, or when the last session
//! holding it ends ([`release_ended`]).

use std::sync::{Arc, Weak};

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{ReadResourceRequestParams, ReadResourceResult};
use rmcp::service::RequestContext;
use tokio::sync::mpsc;

use super::{Tried, answered, downstream_error, first_that_answers};
use crate::catalog::{ResourceCatalog, Route};
use crate::server::passthrough::Holds;
use crate::server::passthrough::envelope::forwarded_meta;
use crate::server::shared::Shared;

/// The servers to ask about `uri`, in the order to ask them.
fn candidates(catalog: &ResourceCatalog, uri: &str) -> Vec<usize> {
    match catalog.route(uri) {
        Route::Listed(server) | Route::Template(server) => vec![server],
        Route::Unclaimed => catalog.servers().collect(),
    }
}

/// The server of a template (or, failing that, of a listed URI), for completions.
pub(super) fn for_completion(catalog: &ResourceCatalog, uri: &str) -> Option<usize> {
    catalog
        .template_owner(uri)
        .or_else(|| match catalog.route(uri) {
            Route::Listed(server) => Some(server),
            _ => None,
        })
}

/// The servers to ask about `uri`; waits for starting servers first when nothing
/// known claims it, as a call by an unknown tool name does.
async fn candidates_waiting(shared: &Shared, uri: &str) -> Vec<usize> {
    let unclaimed = shared.registry().resources().route(uri) == Route::Unclaimed;
    if unclaimed {
        shared.wait_for_servers().await;
    }
    candidates(&shared.registry().resources(), uri)
}

/// `resources/read`, routed as the module doc says. With several candidates the first
/// success wins; when all fail, the error names the URI and each server's answer.
pub(crate) async fn read(
    shared: &Shared,
    mut request: ReadResourceRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<ReadResourceResult, McpError> {
    let candidates = candidates_waiting(shared, &request.uri).await;
    request.meta = forwarded_meta(&context.meta);
    let read = first_that_answers(&candidates, |server| {
        let handle = shared.handle(server)?;
        let (request, ct) = (request.clone(), context.ct.child_token());
        Some(async move { handle.read_resource(request, ct).await })
    });
    match read.await {
        Ok(result) => answered(Ok(result)),
        Err(Tried::Only(err)) => Err(err),
        Err(Tried::None(reason)) => Err(McpError::resource_not_found(
            format!("Cannot read the resource '{}': {reason}.", request.uri),
            None,
        )),
    }
}

/// Subscribes the session whose holds are `mine` to `uri`: the first subscription of any
/// session subscribes on the server the URI routes to (the first that accepts, when
/// nothing claims it).
pub(crate) async fn subscribe(shared: &Shared, mine: &Holds, uri: &str) -> Result<(), McpError> {
    if shared.subscriptions().join(uri, mine) {
        return Ok(());
    }
    let candidates = candidates_waiting(shared, uri).await;
    let subscribed = first_that_answers(&candidates, |server| {
        let handle = shared.handle(server)?;
        Some(async move { handle.subscribe(uri).await.map(|()| server) })
    });
    match subscribed.await {
        Ok(server) => {
            shared.subscriptions().add(uri, server, mine);
            Ok(())
        }
        Err(Tried::Only(err)) => Err(err),
        Err(Tried::None(reason)) => Err(McpError::resource_not_found(
            format!("Cannot subscribe to the resource '{uri}': {reason}."),
            None,
        )),
    }
}

/// Drops one of the session's subscriptions to `uri`; the last one of all sessions
/// unsubscribes on the server. Unsubscribing from what this session never subscribed
/// to is not an error (and touches no other session's).
pub(crate) async fn unsubscribe(shared: &Shared, mine: &Holds, uri: &str) -> Result<(), McpError> {
    if !mine.unhold(uri) {
        return Ok(());
    }
    release(shared, uri).await
}

/// Gives back one hold on `uri`; the last one unsubscribes on its server.
async fn release(shared: &Shared, uri: &str) -> Result<(), McpError> {
    let Some(server) = shared.subscriptions().release(uri) else {
        return Ok(());
    };
    match shared.handle(server) {
        Some(handle) => handle.unsubscribe(uri).await.map_err(downstream_error),
        None => Ok(()),
    }
}

/// Releases the holds of sessions that ended (sent by their `Drop`), so no downstream
/// subscription outlives the sessions that wanted it. Ends with the shared state.
pub(crate) async fn release_ended(
    shared: Weak<Shared>,
    mut released: mpsc::UnboundedReceiver<String>,
) {
    while let Some(uri) = released.recv().await {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if let Err(err) = release(&shared, &uri).await {
            tracing::debug!(%uri, error = %err.message, "unsubscribing downstream failed");
        }
        drop::<Arc<Shared>>(shared);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::passthrough::ResourceLists;
    use rmcp::model::{Resource, ResourceTemplate};

    /// The resource catalog and the client's lists, applied as `ingest` and `publish` do.
    struct Harness {
        catalog: ResourceCatalog,
        shown: ResourceLists,
    }

    impl Harness {
        fn new() -> Harness {
            Harness {
                catalog: ResourceCatalog::new(),
                shown: ResourceLists::default(),
            }
        }

        fn apply(
            &mut self,
            server: usize,
            resources: Vec<Resource>,
            templates: Vec<ResourceTemplate>,
        ) -> bool {
            self.catalog.update_server(server, resources, templates);
            self.shown.append_server(&self.catalog, server)
        }

        fn list(&mut self) -> Vec<Resource> {
            self.shown.list(&self.catalog)
        }

        fn list_templates(&mut self) -> Vec<ResourceTemplate> {
            self.shown.list_templates(&self.catalog)
        }

        fn candidates(&self, uri: &str) -> Vec<usize> {
            candidates(&self.catalog, uri)
        }

        fn completion_owner(&self, uri: &str) -> Option<usize> {
            for_completion(&self.catalog, uri)
        }
    }

    fn resource(uri: &str) -> Resource {
        Resource::new(uri, uri)
    }

    fn uris(list: &[Resource]) -> Vec<&str> {
        list.iter().map(|r| r.uri.as_str()).collect()
    }

    #[test]
    fn a_shared_uri_is_listed_once_and_the_list_only_grows() {
        let mut resources = Harness::new();
        resources.apply(1, vec![resource("a://shared"), resource("b://1")], vec![]);
        resources.apply(0, vec![resource("a://shared")], vec![]);
        let first = resources.list();
        assert_eq!(uris(&first), ["a://shared", "b://1"]);
        assert!(!resources.apply(1, vec![resource("b://1")], vec![]));
        assert!(resources.apply(0, vec![resource("a://2")], vec![]));
        assert_eq!(
            uris(&resources.list()),
            ["a://shared", "b://1", "a://2"],
            "dropped stays, new goes last"
        );
        assert_eq!(resources.candidates("a://shared"), [0]);
    }

    #[test]
    fn templates_are_listed_in_config_order_and_route_unlisted_uris() {
        let mut resources = Harness::new();
        resources.apply(1, vec![], vec![ResourceTemplate::new("t://{id}", "t")]);
        resources.apply(0, vec![], vec![]);
        let templates = resources.list_templates();
        assert_eq!(templates.len(), 1);
        assert_eq!(resources.candidates("t://9"), [1]);
        assert_eq!(resources.candidates("u://9"), [0, 1]);
        assert_eq!(resources.completion_owner("t://{id}"), Some(1));
    }
}
