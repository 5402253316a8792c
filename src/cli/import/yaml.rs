//! YAML files (Continue's and Goose's `config.yaml`) read into the JSON shape the other
//! formats share, so each format module walks one kind of value.

use std::path::Path;

use anyhow::Context;
use serde_json::{Map, Value as Json};
use yaml_rust2::{Yaml, YamlLoader};

/// The first document of `text` as JSON; an empty file is an empty object.
///
/// # Errors
/// `text` is not YAML, naming the file.
pub(super) fn parse(text: &str, path: &Path) -> anyhow::Result<Json> {
    let docs = YamlLoader::load_from_str(text)
        .with_context(|| format!("{} is not valid YAML", path.display()))?;
    Ok(docs.first().map_or(Json::Object(Map::new()), to_json))
}

fn to_json(yaml: &Yaml) -> Json {
    match yaml {
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Integer(n) => Json::from(*n),
        Yaml::Real(text) => yaml
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Json::String(text.clone()), Json::Number),
        Yaml::Boolean(b) => Json::Bool(*b),
        Yaml::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Yaml::Hash(hash) => Json::Object(hash.iter().map(|(k, v)| (key(k), to_json(v))).collect()),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Json::Null,
    }
}

/// A mapping key as text (YAML allows numbers and booleans as keys).
fn key(yaml: &Yaml) -> String {
    match yaml {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(n) => n.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn yaml_becomes_json() {
        let json = parse(
            "name: x\nlist:\n  - a\n  - 2\nmap: {t: true, f: 1.5, n: ~}\n",
            Path::new("c.yaml"),
        )
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"name": "x", "list": ["a", 2], "map": {"t": true, "f": 1.5, "n": null}})
        );
        assert!(parse("a: [", Path::new("c.yaml")).is_err());
    }
}
