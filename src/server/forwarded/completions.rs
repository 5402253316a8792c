//! `completion/complete`, routed to the server that owns what is being completed: a prompt
//! argument (`ref/prompt` with our qualified name, sent on under the prompt's original name)
//! or a resource template variable (`ref/resource` with the template's URI, which is not
//! renamed). A server that did not declare completions gets no request: the answer is an
//! empty completion, what a server without suggestions says.

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{CompleteRequestParams, CompleteResult, Reference};
use rmcp::service::RequestContext;

use super::{answered, prompts, resources};
use crate::ingest::Registry;
use crate::server::passthrough::envelope::forwarded_meta;
use crate::server::shared::Shared;

/// `completion/complete`, asked of the server that owns the reference.
pub(crate) async fn complete(
    shared: &Shared,
    mut request: CompleteRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CompleteResult, McpError> {
    let mut server = owner(shared.registry(), &mut request.r#ref);
    if server.is_none() {
        shared.wait_for_servers().await;
        server = owner(shared.registry(), &mut request.r#ref);
    }
    let Some(server) = server else {
        let what = match &request.r#ref {
            Reference::Prompt(prompt) => format!("prompt '{}'", prompt.name),
            Reference::Resource(resource) => format!("resource template '{}'", resource.uri),
            _ => "reference".to_owned(),
        };
        return Err(McpError::invalid_params(
            format!("Unknown {what}: nothing to complete."),
            None,
        ));
    };
    let Some(handle) = shared.handle(server) else {
        return Err(McpError::internal_error("Unknown server.", None));
    };
    if handle
        .capabilities()
        .is_some_and(|c| c.completions.is_none())
    {
        return Ok(CompleteResult::default());
    }
    request.meta = forwarded_meta(&context.meta);
    answered(handle.complete(request, context.ct.child_token()).await)
}

/// The server a reference belongs to; a prompt reference is rewritten to the prompt's
/// original name on the way.
fn owner(registry: &Registry, reference: &mut Reference) -> Option<usize> {
    match reference {
        Reference::Prompt(prompt) => {
            let (server, original) = prompts::for_completion(&registry.prompts(), &prompt.name)?;
            prompt.name = original;
            Some(server)
        }
        Reference::Resource(resource) => {
            resources::for_completion(&registry.resources(), &resource.uri)
        }
        _ => None,
    }
}
