//! `call_tool`: calls any catalog tool by name, loaded or not, after checking its arguments
//! against the tool's `inputSchema`. The path for clients that ignore list-changed.
//!
//! All of it is here: [`apply`] resolves the name ([`resolve`]), validates the arguments
//! with a compiled schema ([`Validators`] caches them), then sends the call down the same
//! [`route`](crate::server::route) a direct `tools/call` takes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject};
use rmcp::service::RequestContext;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{MetaTool, error_result};
use crate::catalog::{Catalog, EntryId, Resolution, ToolJson};
use crate::server::State;
use crate::sync::lock;

pub const DESCRIPTION: &str = "Call any tool found with search_tools by name, whether or not it \
is loaded in your tool list. Arguments are checked against the tool's input schema first; errors \
name each failing field.";

/// Most validation errors reported at once: enough to fix a call, bounded for the context.
const MAX_REPORTED_ERRORS: usize = 10;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub name: String,
    #[serde(default)]
    pub arguments: Option<JsonObject>,
}

pub fn input_schema() -> Value {
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
    state: &State,
    args: Args,
    context: &RequestContext<RoleServer>,
) -> CallToolResponse {
    let mut resolved = resolve(&state.registry.catalog(), &args.name);
    if let Err(Unresolved::Unknown(_)) = resolved {
        // Not known yet: wait for the servers still starting, only until it is (a tool of
        // a server that is ready does not wait for the slowest one).
        let known = || resolve(&state.registry.catalog(), &args.name).is_ok();
        state.wait_for_servers_unless(known).await;
        resolved = resolve(&state.registry.catalog(), &args.name);
    }
    let (id, original, definition) = match resolved {
        Ok(found) => found,
        Err(Unresolved::Refused(message)) => return error_result(message).into(),
        Err(Unresolved::Unknown(name)) => {
            return error_result(state.unknown_message(&name).await).into();
        }
    };
    let arguments = args.arguments.unwrap_or_default();
    if let Some(validator) = state.validators.get(id, &definition)
        && let Err(errors) = validator.check(&arguments)
    {
        return error_result(mismatch(&args.name, &errors)).into();
    }
    let mut inner = CallToolRequestParams::new(original);
    inner.arguments = Some(arguments);
    state
        .route(id, inner, MetaTool::CallTool.name(), context)
        .await
}

/// The entry `name` designates, or a message the model can act on; `unknown` explains a
/// name that resolves to nothing.
pub fn resolve(catalog: &Catalog, name: &str) -> Result<(EntryId, String, ToolJson), Unresolved> {
    let name = super::clean_name(name).map_err(Unresolved::Refused)?;
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
pub enum Unresolved {
    /// What to tell the model as it is (an empty or over-long name, an ambiguous one).
    Refused(String),
    /// No tool has this (cleaned) name: what to say depends on the servers and the catalog
    /// ("did you mean"), worked out off the runtime thread.
    Unknown(String),
}

/// The error text for arguments that fail the tool's schema: one failing path a line.
pub fn mismatch(name: &str, errors: &[String]) -> String {
    format!(
        "Arguments for {name} do not match its input schema:\n- {}\nFix them and call again.",
        errors.join("\n- ")
    )
}

/// Compiled input schemas by catalog entry, each with the definition it was compiled from:
/// a changed tool has a new `Arc`, which makes its entry stale. Compiling costs far more
/// than a call (a large schema takes milliseconds); a schema compiles once per definition.
#[derive(Default)]
pub(in crate::server) struct Validators(Mutex<HashMap<EntryId, Compiled>>);

/// A validator and the definition it was compiled from.
type Compiled = (ToolJson, Arc<Validator>);

impl Validators {
    /// The validator of the entry's current definition; `None` when its schema does not
    /// compile (logged: the server then judges the arguments itself).
    pub fn get(&self, id: EntryId, tool: &ToolJson) -> Option<Arc<Validator>> {
        if let Some((cached_tool, validator)) = lock(&self.0).get(&id)
            && cached_tool.same(tool)
        {
            return Some(validator.clone());
        }
        // Parsed and compiled outside the lock: other calls need not wait for it.
        let parsed = tool.parse();
        match Validator::new(&parsed.input_schema) {
            Ok(validator) => {
                let validator = Arc::new(validator);
                lock(&self.0).insert(id, (tool.clone(), validator.clone()));
                Some(validator)
            }
            Err(err) => {
                tracing::warn!(tool = %parsed.name, error = %err, "not validating");
                None
            }
        }
    }
}

/// An `inputSchema` that cannot be compiled: invalid, or pointing at a remote `$ref`.
#[derive(Debug, thiserror::Error)]
#[error("inputSchema does not compile: {0}")]
pub struct SchemaError(#[from] Box<jsonschema::ValidationError<'static>>);

/// A compiled `inputSchema`.
pub struct Validator(jsonschema::Validator);

impl Validator {
    /// Compiles `schema` (draft-07, 2019-09 and 2020-12 by its `$schema`, 2020-12 when absent).
    ///
    /// # Errors
    /// The schema itself is invalid or points at a remote `$ref`; the caller then skips
    /// validation and lets the server judge.
    pub fn new(schema: &JsonObject) -> Result<Validator, SchemaError> {
        let validator =
            jsonschema::validator_for(&Value::Object(schema.clone())).map_err(Box::new)?;
        Ok(Validator(validator))
    }

    /// Every failing path with its reason, as lines the model can act on.
    pub fn check(&self, arguments: &JsonObject) -> Result<(), Vec<String>> {
        let instance = Value::Object(arguments.clone());
        let errors: Vec<String> = self
            .0
            .iter_errors(&instance)
            .take(MAX_REPORTED_ERRORS)
            .map(|err| {
                let path = err.instance_path().to_string();
                let path = if path.is_empty() {
                    "(arguments)".to_owned()
                } else {
                    path
                };
                format!("{path}: {err}")
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Tool;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn reports_each_failing_path() {
        let schema = object(json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]
        }));
        let validator = Validator::new(&schema).unwrap_or_else(|e| panic!("{e}"));
        let errors = validator
            .check(&object(json!({"a": "one"})))
            .err()
            .unwrap_or_default();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with("/a:")), "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("\"b\"")), "{errors:?}");
        assert!(validator.check(&object(json!({"a": 1, "b": 2}))).is_ok());
    }

    #[test]
    fn a_validator_is_compiled_once_per_definition() {
        let tool = |description: &str| -> ToolJson {
            let tool: Tool = serde_json::from_value(json!({
                "name": "t",
                "description": description,
                "inputSchema": {"type": "object"}
            }))
            .unwrap_or_else(|e| panic!("{e}"));
            ToolJson::new(&tool)
        };
        let validators = Validators::default();
        let (old, new) = (tool("old"), tool("new"));
        let first = validators.get(EntryId(0), &old);
        let again = validators.get(EntryId(0), &old);
        assert!(matches!((&first, &again), (Some(a), Some(b)) if Arc::ptr_eq(a, b)));
        let changed = validators.get(EntryId(0), &new);
        assert!(matches!((&first, &changed), (Some(a), Some(b)) if !Arc::ptr_eq(a, b)));
        let broken: Tool = serde_json::from_value(
            json!({"name": "b", "inputSchema": {"type": "object", "minimum": "x"}}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let broken = ToolJson::new(&broken);
        assert!(validators.get(EntryId(1), &broken).is_none());
    }

    #[test]
    fn draft_07_schemas_are_understood() {
        let schema = object(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}
        }));
        let validator = Validator::new(&schema).unwrap_or_else(|e| panic!("{e}"));
        assert!(validator.check(&object(json!({"n": 0}))).is_err());
        assert!(validator.check(&object(json!({"n": 1}))).is_ok());
    }
}
