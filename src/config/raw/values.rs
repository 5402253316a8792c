//! Reading one value of the TOML document: its type checked, its span kept, and a message
//! naming the table, the key and what to write when it is wrong. Shared by every table's
//! decoder, so all type errors read alike.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::super::error::{ConfigError, Source};
use super::{Pairs, RawAlwaysLoad, S};
use crate::suggest;

/// Table entries sorted by where their key is written, so servers keep file order (the
/// parser's map is sorted by name) and the first error reported is the first in the file.
pub(super) fn in_file_order<'t, 'i>(table: &'t DeTable<'i>) -> Vec<(&'t Key<'i>, &'t Value<'i>)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

/// "a string", "an array", ... for "found ..." in type errors.
pub(super) fn found(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

pub(super) type Key<'i> = S<std::borrow::Cow<'i, str>>;
pub(super) type Value<'i> = S<DeValue<'i>>;

/// Decoding context: where messages point and which table they name.
pub(super) struct Cx<'s, 'p> {
    source: &'s Source<'p>,
    /// `[settings]`, `[mcp_servers.docs]` or `top level`.
    table: String,
}

impl<'s, 'p> Cx<'s, 'p> {
    /// Messages point into `source` and name `table` (`[settings]`, `top level:`).
    pub(super) fn new(source: &'s Source<'p>, table: String) -> Self {
        Cx { source, table }
    }

    /// The context of the table `name` (`[settings.http]`) written at `key`, and the table.
    pub(super) fn open<'t, 'i>(
        source: &'s Source<'p>,
        name: &str,
        key: &Key<'_>,
        value: &'t Value<'i>,
    ) -> Result<(Self, &'t DeTable<'i>), ConfigError> {
        let cx = Cx {
            source,
            table: name.to_owned(),
        };
        let table = cx.table(key, value, &format!("write `{name}` above its keys"))?;
        Ok((cx, table))
    }

    /// `{table} `{key}`: {message}` at `span`.
    pub(super) fn at(&self, span: Range<usize>, key: Option<&str>, message: String) -> ConfigError {
        let message = match key {
            Some(key) => format!("{} `{key}` {message}", self.table),
            None => format!("{} {message}", self.table),
        };
        self.source.error(span, message)
    }

    fn type_error(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
        expected: &str,
        example: &str,
    ) -> ConfigError {
        self.at(
            key.span(),
            Some(key.get_ref()),
            format!(
                "must be {expected}, not {}; write `{} = {example}`",
                found(value.get_ref()),
                key.get_ref()
            ),
        )
    }

    pub(super) fn unknown(&self, key: &Key<'_>, name: &str, known: &[&str]) -> ConfigError {
        self.unknown_among(key, name, known, known)
    }

    /// An unknown key: the closest of `known` if one is close, else the `listed` keys.
    pub(super) fn unknown_among(
        &self,
        key: &Key<'_>,
        name: &str,
        known: &[&str],
        listed: &[&str],
    ) -> ConfigError {
        let fix = match suggest::did_you_mean(name, known) {
            Some(candidate) => format!("did you mean `{candidate}`?"),
            None => format!(
                "remove it; valid keys here: {}",
                listed
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        self.at(key.span(), None, format!("unknown key `{name}`: {fix}"))
    }

    pub(super) fn table<'t, 'i>(
        &self,
        key: &Key<'_>,
        value: &'t Value<'i>,
        fix: &str,
    ) -> Result<&'t DeTable<'i>, ConfigError> {
        match value.get_ref() {
            DeValue::Table(table) => Ok(table),
            other => Err(self.at(
                key.span(),
                Some(key.get_ref()),
                format!("must be a table, not {}; {fix}", found(other)),
            )),
        }
    }

    pub(super) fn string(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
    ) -> Result<S<String>, ConfigError> {
        match value.get_ref() {
            DeValue::String(s) => Ok(Spanned::new(key.span(), s.to_string())),
            _ => Err(self.type_error(key, value, "a string", "\"...\"")),
        }
    }

    pub(super) fn one_of(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
        valid: &[&str],
    ) -> Result<S<String>, ConfigError> {
        let s = self.string(key, value)?;
        if valid.contains(&s.get_ref().as_str()) {
            return Ok(s);
        }
        Err(self.at(
            key.span(),
            Some(key.get_ref()),
            format!(
                "is {:?}, but must be one of {}{}",
                s.get_ref(),
                valid
                    .iter()
                    .map(|v| format!("\"{v}\""))
                    .collect::<Vec<_>>()
                    .join(", "),
                suggest::hint(s.get_ref(), valid)
            ),
        ))
    }

    /// `true`, `false` (as those words) or one of `valid`.
    pub(super) fn boolean_or_one_of(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
        valid: &[&str],
    ) -> Result<S<String>, ConfigError> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(Spanned::new(key.span(), b.to_string())),
            DeValue::String(_) => self.one_of(key, value, valid),
            _ => {
                let mut expected: Vec<String> =
                    valid.iter().map(|v| format!("`\"{v}\"`")).collect();
                expected.push("`true` or `false`".to_owned());
                let example = valid
                    .first()
                    .map_or("true".to_owned(), |v| format!("\"{v}\""));
                Err(self.type_error(key, value, &expected.join(", "), &example))
            }
        }
    }

    pub(super) fn boolean(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<bool>, ConfigError> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(Spanned::new(key.span(), *b)),
            _ => Err(self.type_error(key, value, "`true` or `false`", "true")),
        }
    }

    pub(super) fn integer(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<i64>, ConfigError> {
        let parsed = match value.get_ref() {
            DeValue::Integer(_) => {
                i64::deserialize(toml::de::ValueDeserializer::from(value.clone())).ok()
            }
            _ => None,
        };
        parsed
            .map(|n| Spanned::new(key.span(), n))
            .ok_or_else(|| self.type_error(key, value, "a whole number", "1000"))
    }

    /// A number of seconds: TOML integers count too (`startup_timeout_sec = 20`), as in
    /// Codex. Range checks are `validate`'s.
    pub(super) fn seconds(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<f64>, ConfigError> {
        let parsed = match value.get_ref() {
            DeValue::Integer(_) | DeValue::Float(_) => {
                f64::deserialize(toml::de::ValueDeserializer::from(value.clone())).ok()
            }
            _ => None,
        };
        parsed
            .map(|n| Spanned::new(key.span(), n))
            .ok_or_else(|| self.type_error(key, value, "a number of seconds", "30"))
    }

    pub(super) fn strings(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
    ) -> Result<S<Vec<S<String>>>, ConfigError> {
        let DeValue::Array(array) = value.get_ref() else {
            return Err(self.type_error(key, value, "an array of strings", "[\"...\"]"));
        };
        let items = array
            .iter()
            .enumerate()
            .map(|(i, item)| match item.get_ref() {
                DeValue::String(s) => Ok(Spanned::new(item.span(), s.to_string())),
                other => Err(self.at(
                    item.span(),
                    Some(key.get_ref()),
                    format!(
                        "must be an array of strings, but item {} is {}; quote it",
                        i + 1,
                        found(other)
                    ),
                )),
            })
            .collect::<Result<_, _>>()?;
        Ok(Spanned::new(key.span(), items))
    }

    /// One string or an array of strings (`search_hints = "..."` or `[...]`).
    pub(super) fn string_or_strings(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
    ) -> Result<S<Vec<S<String>>>, ConfigError> {
        match value.get_ref() {
            DeValue::String(s) => Ok(Spanned::new(
                key.span(),
                vec![Spanned::new(value.span(), s.to_string())],
            )),
            DeValue::Array(_) => self.strings(key, value),
            _ => Err(self.type_error(key, value, "a string or an array of strings", "\"...\"")),
        }
    }

    /// A table of strings, such as `env = { NAME = "value" }`.
    pub(super) fn pairs(&self, key: &Key<'_>, value: &Value<'_>) -> Result<S<Pairs>, ConfigError> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.type_error(key, value, "a table of strings", "{ NAME = \"value\" }"));
        };
        let pairs = in_file_order(table)
            .into_iter()
            .map(|(name, item)| match item.get_ref() {
                DeValue::String(s) => Ok((
                    Spanned::new(name.span(), name.get_ref().to_string()),
                    Spanned::new(name.span(), s.to_string()),
                )),
                other => Err(self.at(
                    name.span(),
                    Some(&format!("{}.{}", key.get_ref(), name.get_ref())),
                    format!("must be a string, not {}; quote the value", found(other)),
                )),
            })
            .collect::<Result<_, _>>()?;
        Ok(Spanned::new(key.span(), pairs))
    }

    /// Codex's `env_vars`: names, or `{ name = "NAME", source = "local" | "remote" }`.
    pub(super) fn env_vars(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
    ) -> Result<S<Vec<S<String>>>, ConfigError> {
        let example = "[\"NAME\"] or [{ name = \"NAME\", source = \"local\" }]";
        let DeValue::Array(array) = value.get_ref() else {
            return Err(self.type_error(key, value, "an array of variable names", example));
        };
        let mut names = Vec::new();
        for item in array.iter() {
            let bad = |what: &str| {
                self.at(
                    item.span(),
                    Some(key.get_ref()),
                    format!("has {what}; write `{} = {example}`", key.get_ref()),
                )
            };
            let name = match item.get_ref() {
                DeValue::String(s) => s.to_string(),
                DeValue::Table(t) => {
                    for (k, v) in t.iter() {
                        match (k.get_ref().as_ref(), v.get_ref()) {
                            ("name", DeValue::String(_)) => {}
                            ("source", DeValue::String(s)) if s == "local" || s == "remote" => {}
                            ("source", _) => {
                                return Err(bad(
                                    "an item whose `source` is not \"local\" or \"remote\"",
                                ));
                            }
                            (other, _) => {
                                return Err(bad(&format!(
                                    "an item with `{other}`, which is not `name` or `source`"
                                )));
                            }
                        }
                    }
                    match t.get("name").and_then(|v| v.get_ref().as_str()) {
                        Some(name) => name.to_owned(),
                        None => return Err(bad("an item without a string `name`")),
                    }
                }
                other => return Err(bad(&format!("an item that is {}", found(other)))),
            };
            names.push(Spanned::new(item.span(), name));
        }
        Ok(Spanned::new(key.span(), names))
    }

    pub(super) fn always_load(
        &self,
        key: &Key<'_>,
        value: &Value<'_>,
    ) -> Result<S<RawAlwaysLoad>, ConfigError> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(Spanned::new(key.span(), RawAlwaysLoad::Bool(*b))),
            DeValue::Array(_) => {
                let tools = self.strings(key, value)?;
                Ok(Spanned::new(
                    key.span(),
                    RawAlwaysLoad::Tools(tools.into_inner()),
                ))
            }
            _ => Err(self.type_error(
                key,
                value,
                "`true`, `false` or an array of tool names",
                "[\"tool\", ...]",
            )),
        }
    }
}
