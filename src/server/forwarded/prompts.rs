//! Prompts: every server's prompts under qualified names, listed append-only, and
//! `prompts/get` routed to the owning server under the prompt's original name.
//!
//! Names follow the tool rule (`<server or prefix>__<prompt>`, DESIGN.md section 4). The
//! list the client sees only grows, like `tools/list`: a prompt once listed keeps its
//! position and bytes, and one its server drops stays listed while `prompts/get` on it
//! answers an error naming the server.

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{GetPromptRequestParams, GetPromptResult};
use rmcp::service::RequestContext;

use super::answered;
use crate::catalog::PromptCatalog;
use crate::server::passthrough::envelope::forwarded_meta;
use crate::server::shared::Shared;

/// `prompts/get`: the owning server answers, asked with the prompt's original name.
pub(crate) async fn get(
    shared: &Shared,
    mut request: GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResult, McpError> {
    let mut found = owner(&shared.registry().prompts(), &request.name);
    if found.is_none() {
        shared.wait_for_servers().await;
        found = owner(&shared.registry().prompts(), &request.name);
    }
    let Some((server, original, gone)) = found else {
        return Err(McpError::invalid_params(
            format!(
                "Unknown prompt '{}'. prompts/list has the names.",
                request.name
            ),
            None,
        ));
    };
    let Some(handle) = shared.handle(server) else {
        return Err(McpError::internal_error("Unknown server.", None));
    };
    if gone {
        return Err(McpError::invalid_params(
            format!(
                "Server '{}' no longer offers the prompt '{original}'.",
                handle.name()
            ),
            None,
        ));
    }
    request.name = original;
    request.meta = forwarded_meta(&context.meta);
    answered(handle.get_prompt(request, context.ct.child_token()).await)
}

/// The server, original name and gone flag of a prompt by its qualified name.
fn owner(catalog: &PromptCatalog, name: &str) -> Option<(usize, String, bool)> {
    let entry = catalog.by_name(name)?;
    Some((
        entry.server_index,
        entry.original_name().to_owned(),
        entry.gone,
    ))
}

/// The server and original name of a prompt, for `completion/complete`.
pub(super) fn for_completion(catalog: &PromptCatalog, name: &str) -> Option<(usize, String)> {
    owner(catalog, name).map(|(server, original, _)| (server, original))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ServerKey;
    use crate::server::passthrough::Prompts;
    use rmcp::model::Prompt;

    /// The prompt catalog and the client's list, applied as `ingest` and `publish` do.
    struct Harness {
        catalog: PromptCatalog,
        shown: Prompts,
    }

    impl Harness {
        fn apply(&mut self, server: ServerKey<'_>, prompts: Vec<Prompt>) -> usize {
            if self.catalog.update_server(server, prompts) == 0 {
                return 0;
            }
            self.shown.append_server(&self.catalog, server.index)
        }

        fn list(&mut self) -> Vec<Prompt> {
            self.shown.list(&self.catalog)
        }
    }

    fn key(index: usize) -> ServerKey<'static> {
        let name = ["a", "b"][index];
        ServerKey {
            name,
            prefix: name,
            index,
        }
    }

    fn prompt(name: &str, description: &str) -> Prompt {
        Prompt::new(name, Some(description), None)
    }

    fn bytes(list: &[Prompt]) -> Vec<String> {
        list.iter()
            .map(|p| serde_json::to_string(p).unwrap_or_default())
            .collect()
    }

    #[test]
    fn the_first_list_is_in_config_order_and_later_ones_only_append() {
        let mut prompts = Harness {
            catalog: PromptCatalog::new(64),
            shown: Prompts::default(),
        };
        assert_eq!(prompts.apply(key(1), vec![prompt("late", "b")]), 0);
        prompts.apply(key(0), vec![prompt("early", "a")]);
        let first = prompts.list();
        let names: Vec<&str> = first.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a__early", "b__late"]);

        // A changed definition, a dropped prompt and a new one: only the new one shows,
        // at the end; the rest keeps its bytes.
        assert_eq!(
            prompts.apply(key(0), vec![prompt("early", "changed"), prompt("new", "a")]),
            1
        );
        assert_eq!(prompts.apply(key(1), vec![]), 0);
        let second = prompts.list();
        assert_eq!(bytes(&second[..first.len()]), bytes(&first));
        assert_eq!(second.len(), 3);
        assert_eq!(second[2].name, "a__new");
    }
}
