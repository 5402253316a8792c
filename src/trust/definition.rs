//! What of a tool is pinned: its [`Definition`], the parts the model reads or a client acts
//! on (name, title, description, input and output schema, annotations), in one canonical
//! JSON text, and the SHA-256 of that text.
//!
//! Canonical means the same definition gives the same bytes whatever order the server wrote
//! its keys in (objects are key-sorted at every depth), so a server that re-serializes its
//! schema differently is not a change. `_meta`, `icons` and `execution` are left out: they
//! are not shown to the model as instructions, and servers put volatile values there. A
//! field the user replaced in `servers.toml` (`[mcp_servers.<s>.tools.<t>] description`)
//! is left out too: the server's text for it never reaches the model, so its change is not
//! one to approve.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The fields a definition is made of, in the order the lock writes them.
const FIELDS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// Which of a tool's fields the user's config replaces (so they are not the server's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overridden {
    pub description: bool,
    pub title: bool,
}

/// A tool's pinned parts as canonical JSON, with their hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// Canonical JSON: an object of [`FIELDS`], keys sorted at every depth.
    text: String,
    hash: Hash,
}

/// `sha256:` and 64 lowercase hex digits: how a hash is written in the lock.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hash(String);

impl Hash {
    const PREFIX: &'static str = "sha256:";

    /// The hash of `text`.
    fn of(text: &str) -> Hash {
        let digest = Sha256::digest(text.as_bytes());
        let mut hex = String::with_capacity(Self::PREFIX.len() + 64);
        hex.push_str(Self::PREFIX);
        for byte in digest {
            hex.push_str(&format!("{byte:02x}"));
        }
        Hash(hex)
    }

    /// A hash as written in the lock; `None` when it is not `sha256:` and 64 hex digits.
    pub fn parse(text: &str) -> Option<Hash> {
        let hex = text.strip_prefix(Self::PREFIX)?;
        (hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        .then(|| Hash(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 hex digits, for messages.
    pub fn short(&self) -> &str {
        let hex = &self.0[Self::PREFIX.len()..];
        &hex[..12.min(hex.len())]
    }
}

impl std::fmt::Display for Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Definition {
    /// The definition of the tool whose JSON (as listed) is `tool`, without the fields
    /// `overridden` names. A text that is not a JSON object gives the empty definition.
    pub fn of(tool: &str, overridden: Overridden) -> Definition {
        let value: Value = serde_json::from_str(tool).unwrap_or(Value::Null);
        Definition::from_value(&value, overridden)
    }

    /// As [`Definition::of`], from parsed JSON.
    pub fn from_value(tool: &Value, overridden: Overridden) -> Definition {
        let mut picked = Map::new();
        if let Some(object) = tool.as_object() {
            for field in FIELDS {
                let skip = (field == "description" && overridden.description)
                    || (field == "title" && overridden.title);
                if let Some(value) = object.get(field).filter(|v| !v.is_null() && !skip) {
                    picked.insert(field.to_owned(), canonical(value));
                }
            }
        }
        // Keys sorted, so the text is the same for the same definition.
        let text = Value::Object(sort(picked)).to_string();
        let hash = Hash::of(&text);
        Definition { text, hash }
    }

    /// A definition read back from the lock: `text` is trusted to be canonical only after
    /// it is made so again (a hand-edited line may not be).
    pub fn parse(text: &str) -> Option<Definition> {
        let value: Value = serde_json::from_str(text).ok()?;
        value.is_object().then(|| {
            let object = value.as_object().cloned().unwrap_or_default();
            let text = Value::Object(sort(
                object
                    .into_iter()
                    .map(|(k, v)| (k, canonical(&v)))
                    .collect(),
            ))
            .to_string();
            let hash = Hash::of(&text);
            Definition { text, hash }
        })
    }

    pub fn hash(&self) -> &Hash {
        &self.hash
    }

    /// The canonical JSON text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parsed canonical JSON (an object).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// The description the model reads, if the server gives one.
    pub fn description(&self) -> Option<String> {
        (self.value().get("description"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Every text of the definition the model may read, with where it is: the title, the
    /// description, and each `title`, `description` and string `default`/`enum`/`const`/
    /// `examples` value inside the schemas and annotations (property names included, since
    /// a parameter named as an instruction is read as one).
    pub fn texts(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        collect_texts(&self.value(), "", &mut out);
        out
    }
}

/// Every string of `value` a model reads, with its JSON path.
fn collect_texts(value: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(text) => out.push((path.to_owned(), text.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_texts(item, &format!("{path}[{i}]"), out);
            }
        }
        Value::Object(object) => {
            for (key, item) in object {
                let here = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                // Property names are text too: `{"properties": {"ignore_previous_...": ..}}`.
                if path.ends_with("properties") {
                    out.push((format!("{here} (name)"), key.clone()));
                }
                // `type`, `format`, `$schema`, `$ref`, `pattern`: machine words, not prose.
                if matches!(
                    key.as_str(),
                    "type" | "format" | "$schema" | "$ref" | "$id" | "pattern" | "required"
                ) {
                    continue;
                }
                collect_texts(item, &here, out);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `value` with every object's keys sorted, at every depth.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(sort(
            object
                .iter()
                .map(|(k, v)| (k.clone(), canonical(v)))
                .collect(),
        )),
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The object's entries in key order (`serde_json` keeps insertion order here).
fn sort(object: Map<String, Value>) -> Map<String, Value> {
    let mut entries: Vec<(String, Value)> = object.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_does_not_change_the_hash_but_a_word_does() {
        let a = r#"{"name":"t","description":"Reads.","inputSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}}"#;
        let b = r#"{"inputSchema":{"properties":{"b":{"type":"number"},"a":{"type":"string"}},"type":"object"},"description":"Reads.","name":"t"}"#;
        let c = r#"{"name":"t","description":"Reads files.","inputSchema":{"type":"object"}}"#;
        let none = Overridden::default();
        assert_eq!(
            Definition::of(a, none).hash(),
            Definition::of(b, none).hash()
        );
        assert_ne!(
            Definition::of(a, none).hash(),
            Definition::of(c, none).hash()
        );
    }

    #[test]
    fn meta_and_overridden_fields_are_not_pinned() {
        let plain = r#"{"name":"t","description":"Reads.","inputSchema":{"type":"object"}}"#;
        let meta = r#"{"name":"t","description":"Reads.","inputSchema":{"type":"object"},"_meta":{"v":2}}"#;
        let other = r#"{"name":"t","description":"Now poisoned.","inputSchema":{"type":"object"}}"#;
        let none = Overridden::default();
        assert_eq!(
            Definition::of(plain, none).hash(),
            Definition::of(meta, none).hash()
        );
        let user = Overridden {
            description: true,
            title: false,
        };
        assert_eq!(
            Definition::of(plain, user).hash(),
            Definition::of(other, user).hash()
        );
    }

    #[test]
    fn a_definition_reads_back_from_its_text_with_the_same_hash() {
        let d = Definition::of(
            r#"{"name":"t","description":"Reads.","annotations":{"readOnlyHint":true}}"#,
            Overridden::default(),
        );
        let back = Definition::parse(d.text()).map(|d| d.hash().clone());
        assert_eq!(back.as_ref(), Some(d.hash()));
        assert_eq!(Hash::parse(d.hash().as_str()).as_ref(), Some(d.hash()));
        assert_eq!(Hash::parse("sha256:xyz"), None);
    }

    #[test]
    fn texts_cover_schema_descriptions_and_property_names() {
        let d = Definition::of(
            r#"{"name":"t","description":"D","inputSchema":{"type":"object","properties":{"note":{"type":"string","description":"P"}}}}"#,
            Overridden::default(),
        );
        let texts: Vec<String> = d.texts().into_iter().map(|(_, t)| t).collect();
        assert!(texts.contains(&"D".to_owned()));
        assert!(texts.contains(&"P".to_owned()));
        assert!(texts.contains(&"note".to_owned()));
        assert!(!texts.contains(&"string".to_owned()));
    }
}
