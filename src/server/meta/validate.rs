//! `call_tool`'s argument check: each tool's `inputSchema` compiled once ([`Validators`])
//! and every failing path reported as a line the model can act on ([`Validator::check`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::JsonObject;
use serde_json::Value;

use crate::catalog::{EntryId, ToolJson};
use crate::sync::lock;

/// Most validation errors reported at once: enough to fix a call, bounded for the context.
const MAX_REPORTED_ERRORS: usize = 10;

/// Compiled input schemas by catalog entry, each with the definition it was compiled from:
/// a changed tool has a new `Arc`, which makes its entry stale. Compiling costs far more
/// than a call (a large schema takes milliseconds); a schema compiles once per definition.
#[derive(Default)]
pub(crate) struct Validators(Mutex<HashMap<EntryId, Compiled>>);

/// A validator and the definition it was compiled from.
type Compiled = (ToolJson, Arc<Validator>);

impl Validators {
    /// The validator of the entry's current definition; `None` when its schema does not
    /// compile (logged: the server then judges the arguments itself).
    pub(crate) fn get(&self, id: EntryId, tool: &ToolJson) -> Option<Arc<Validator>> {
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
pub(crate) struct SchemaError(#[from] Box<jsonschema::ValidationError<'static>>);

/// A compiled `inputSchema`.
pub(crate) struct Validator(jsonschema::Validator);

impl Validator {
    /// Compiles `schema` (draft-07, 2019-09 and 2020-12 by its `$schema`, 2020-12 when absent).
    ///
    /// # Errors
    /// The schema itself is invalid or points at a remote `$ref`; the caller then skips
    /// validation and lets the server judge.
    pub(crate) fn new(schema: &JsonObject) -> Result<Validator, SchemaError> {
        let validator =
            jsonschema::validator_for(&Value::Object(schema.clone())).map_err(Box::new)?;
        Ok(Validator(validator))
    }

    /// Every failing path with its reason, as lines the model can act on.
    pub(crate) fn check(&self, arguments: &JsonObject) -> Result<(), Vec<String>> {
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
    use serde_json::json;

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
