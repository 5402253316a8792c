//! `call_tool`: calls any catalog tool by name, loaded or not, after checking its arguments
//! against the tool's `inputSchema`. The path for clients that ignore list-changed.
//!
//! All of it is here: [`apply`] resolves the name ([`resolve`]), validates the arguments
//! with a compiled schema (`meta/validate.rs`), then sends the call down the same route a
//! direct `tools/call` takes ([`Context::route`]).

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject};
use rmcp::service::RequestContext;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Context, MetaTool, error_result};
use crate::catalog::{Catalog, EntryId, Resolution, ToolJson};
use crate::search::usage::Kind;
use crate::server::view::unknown_message;

pub(crate) const DESCRIPTION: &str = "Call any tool found with search_tools by name, whether or not it \
is loaded in your tool list. Arguments are checked against the tool's input schema first; errors \
name each failing field.";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    pub name: String,
    #[serde(default)]
    pub arguments: Option<JsonObject>,
}

pub(crate) fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The tool's name from search_tools."},
            "arguments": {"type": "object", "description": "The tool's arguments, as its input schema says."}
        },
        "required": ["name"],
        "additionalProperties": false
    })
}

/// Resolves, validates, calls.
pub(in crate::server) async fn apply(
    state: &impl Context,
    args: Args,
    context: &RequestContext<RoleServer>,
) -> CallToolResponse {
    let mut resolved = resolve(&state.registry().catalog(), &args.name);
    if let Err(Unresolved::Unknown(_)) = resolved {
        // Not known yet: wait for the servers still starting, only until it is (a tool of
        // a server that is ready does not wait for the slowest one).
        let known = || resolve(&state.registry().catalog(), &args.name).is_ok();
        state.wait_for_servers_unless(known).await;
        resolved = resolve(&state.registry().catalog(), &args.name);
    }
    let (id, original, definition) = match resolved {
        Ok(found) => found,
        Err(Unresolved::Refused(message)) => return error_result(message).into(),
        Err(Unresolved::Unknown(name)) => {
            let explained = state.explain_unknown(vec![name.clone()]).await;
            return error_result(unknown_message(explained.first(), &name)).into();
        }
    };
    let arguments = args.arguments.unwrap_or_default();
    if let Some(validator) = state.validators().get(id, &definition)
        && let Err(errors) = validator.check(&arguments)
    {
        return error_result(mismatch(&args.name, &errors)).into();
    }
    if let Some(entry) = state.registry().catalog().get(id) {
        state.note_choice(entry.name.as_str(), Kind::Called);
    }
    let mut inner = CallToolRequestParams::new(original);
    inner.arguments = Some(arguments);
    (state.route(id, inner, MetaTool::CallTool.name(), context)).await
}

/// The entry `name` designates, or a message the model can act on; `unknown` explains a
/// name that resolves to nothing.
pub(crate) fn resolve(
    catalog: &Catalog,
    name: &str,
) -> Result<(EntryId, String, ToolJson), Unresolved> {
    let name = super::clean_name(name).map_err(|err| Unresolved::Refused(err.to_string()))?;
    match catalog.resolve(name) {
        Resolution::Found(entry) => Ok((
            entry.id,
            entry.original_name().to_owned(),
            entry.tool.clone(),
        )),
        Resolution::Ambiguous(names) => Err(Unresolved::Refused(format!(
            "'{name}' is ambiguous: {}. Call it by one of these names.",
            names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        Resolution::Unknown { .. } => Err(Unresolved::Unknown(name.to_owned())),
    }
}

/// Why a name designates no entry.
#[derive(Debug, PartialEq)]
pub(crate) enum Unresolved {
    /// What to tell the model as it is (an empty or over-long name, an ambiguous one).
    Refused(String),
    /// No tool has this (cleaned) name: what to say depends on the servers and the catalog
    /// ("did you mean"), worked out off the runtime thread.
    Unknown(String),
}

/// The error text for arguments that fail the tool's schema: one failing path a line.
pub(crate) fn mismatch(name: &str, errors: &[String]) -> String {
    format!(
        "Arguments for {name} do not match its input schema:\n- {}\nFix them and call again.",
        errors.join("\n- ")
    )
}
