//! `select_tools`: appends named tools to the client's list and returns their schemas.
//!
//! The schemas come back in the result too, so a client that never re-lists (Codex by
//! default) still has the contract, and can call the tools through `call_tool`.

use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{MAX_SELECT, structured_result};
use crate::catalog::{Catalog, Resolution};
use crate::config::Exposure;
use crate::exposure::{ExposedList, listed_form};
use crate::server::availability::Unknown;

pub fn description(exposure: Exposure) -> &'static str {
    match exposure {
        Exposure::Proxy => {
            "Get the full schemas of tools found with search_tools, by name. Call them through \
             call_tool {name, arguments}."
        }
        Exposure::Deferred | Exposure::All => {
            "Load tools found with search_tools, by name: they are added to the end of your tool \
             list and can be called directly. Their full schemas are also returned here; if a \
             loaded tool does not show up in your list, call it through call_tool."
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub names: Vec<String>,
}

pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "names": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": MAX_SELECT,
                "description": "Tool names from search_tools (server/tool and bare names work when unambiguous)."
            }
        },
        "required": ["names"],
        "additionalProperties": false
    })
}

/// What a selection did.
#[derive(Debug)]
pub struct Outcome {
    pub result: CallToolResult,
    /// Tools appended to the exposed list: the caller notifies the client when non-zero.
    pub appended: usize,
}

/// Resolves the names and, unless in proxy mode, appends what is new to `exposed`.
pub fn run(
    catalog: &Catalog,
    exposed: &mut ExposedList,
    args: &Args,
    exposure: Exposure,
    claude_always_load: bool,
    explain: &dyn Fn(&str) -> Unknown,
) -> Outcome {
    if let Err(message) = check_names(&args.names) {
        return Outcome {
            result: super::error_result(message),
            appended: 0,
        };
    }
    let mut loaded: Vec<Tool> = Vec::new();
    let mut already: Vec<String> = Vec::new();
    let mut unknown: Vec<Value> = Vec::new();
    let mut appended = 0;
    for name in dedup(&args.names) {
        match catalog.resolve(name) {
            Resolution::Found(entry) if entry.gone => unknown.push(json!({
                "name": name,
                "reason": format!("server '{}' no longer offers it", entry.server),
            })),
            Resolution::Found(entry) if exposed.contains(entry.name.as_str()) => {
                already.push(entry.name.to_string());
            }
            Resolution::Found(entry) => {
                let tool = listed_form(entry, claude_always_load);
                if exposure != Exposure::Proxy && exposed.append(tool.clone()) {
                    appended += 1;
                }
                if !loaded.iter().any(|t| t.name == tool.name) {
                    loaded.push(tool);
                }
            }
            Resolution::Ambiguous(names) => unknown.push(json!({
                "name": name,
                "did_you_mean": names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(" or "),
            })),
            Resolution::Unknown { .. } => unknown.push(match explain(name) {
                Unknown::ServerDown { server, state } => json!({
                    "name": name,
                    "reason": format!("server '{server}' is not available: {state}"),
                }),
                Unknown::Tool {
                    suggestion: Some(s),
                } => {
                    json!({"name": name, "did_you_mean": s.as_str()})
                }
                Unknown::Tool { suggestion: None } => json!({"name": name}),
            }),
        }
    }
    let text = summary(&loaded, &already, &unknown, exposure);
    let is_error = loaded.is_empty() && already.is_empty();
    let mut structured = json!({
        "loaded": loaded,
        "already_loaded": already,
        "unknown": unknown,
    });
    if !loaded.is_empty() {
        structured["note"] = Value::from(match exposure {
            Exposure::Proxy => "Call these through call_tool {name, arguments}.",
            Exposure::Deferred | Exposure::All => {
                "Loaded into your tool list. If one is not there yet, call it through call_tool {name, arguments}."
            }
        });
    }
    Outcome {
        result: structured_result(text, structured, is_error),
        appended,
    }
}

/// `Loaded: a, b. Already loaded: c. Unknown: x (did you mean y?)`
fn summary(loaded: &[Tool], already: &[String], unknown: &[Value], exposure: Exposure) -> String {
    let mut parts = Vec::new();
    if !loaded.is_empty() {
        let names: Vec<&str> = loaded.iter().map(|t| &*t.name).collect();
        let verb = if exposure == Exposure::Proxy {
            "Schemas"
        } else {
            "Loaded"
        };
        parts.push(format!("{verb}: {}.", names.join(", ")));
    }
    if !already.is_empty() {
        parts.push(format!("Already loaded: {}.", already.join(", ")));
    }
    if !unknown.is_empty() {
        let names: Vec<String> = unknown
            .iter()
            .map(|u| {
                let name = u["name"].as_str().unwrap_or_default();
                match (u.get("did_you_mean"), u.get("reason")) {
                    (Some(s), _) => {
                        format!("{name} (did you mean {}?)", s.as_str().unwrap_or_default())
                    }
                    (None, Some(r)) => format!("{name} ({})", r.as_str().unwrap_or_default()),
                    (None, None) => name.to_owned(),
                }
            })
            .collect();
        parts.push(format!(
            "Unknown: {}. Use search_tools to find names.",
            names.join(", ")
        ));
    }
    let mut text = parts.join(" ");
    if !loaded.is_empty() {
        text.push_str(if exposure == Exposure::Proxy {
            " Call them through call_tool."
        } else {
            " If a loaded tool does not show up in your list, call it through call_tool."
        });
        for tool in loaded {
            text.push('\n');
            text.push_str(&serde_json::to_string(tool).unwrap_or_default());
        }
    }
    text
}

/// The schema's `minItems`/`maxItems` and the name rule, enforced before any work.
fn check_names(names: &[String]) -> Result<(), String> {
    if names.is_empty() {
        return Err(
            "select_tools needs at least one name in `names`. Use search_tools to \
                    find names."
                .to_owned(),
        );
    }
    if names.len() > MAX_SELECT {
        return Err(format!(
            "select_tools takes at most {MAX_SELECT} names at once, and got {}. Select the \
             ones you need now, in calls of up to {MAX_SELECT}.",
            names.len()
        ));
    }
    for name in names {
        super::clean_name(name)?;
    }
    Ok(())
}

/// Names with the one whitespace rule applied, each once.
fn dedup(names: &[String]) -> impl Iterator<Item = &str> {
    let trimmed: Vec<&str> = names.iter().map(|n| n.trim()).collect();
    (0..trimmed.len())
        .filter(move |&i| !trimmed[..i].contains(&trimmed[i]))
        .map(move |i| names[i].trim())
}
