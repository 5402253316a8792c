//! `select_tools`: appends named tools to the client's list, for the picks `search_tools`
//! did not load itself.
//!
//! A client that may not have the tools by name in its next request (Codex by default, a
//! client not measured, a 2026-07-28 connection whose list is fixed) gets their schemas in
//! the result, to call them through `call_tool`; one that has them does not pay for them
//! twice. All of it is here: [`apply`] appends, notifies and holds the result until the
//! client re-listed (`relists.rs` says for which clients).

use rmcp::model::CallToolResult;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::deliver::deliver;
use super::search_tools::problem_line;
use super::{Context, MAX_SELECT, NameError, error_result, structured_result};
use crate::catalog::{Catalog, Resolution};
use crate::config::ExposureMode;
use crate::exposure::{ExposedList, listed_tool};
use crate::search::usage::Kind;
use crate::server::view::Unknown;

pub(crate) fn description(exposure: ExposureMode) -> &'static str {
    match exposure {
        ExposureMode::Proxy => {
            "Get the full schemas of tools found with search_tools, by name. Call them through \
             call_tool {name, arguments}."
        }
        ExposureMode::Deferred | ExposureMode::All => {
            "Load tools found with search_tools, by name: they are added to the end of your tool \
             list and can be called directly. Where your list may not have them yet, their \
             schemas come back here: call such a tool through call_tool."
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    pub names: Vec<String>,
}

pub(crate) fn input_schema() -> Value {
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

/// Appends the named tools, tells the client, then holds the result until the client has
/// re-listed (at most `relist_wait`): a client that re-lists while the call is pending
/// (OpenCode, Gemini CLI) then has the tools in its very next request (DESIGN.md 7a).
pub(in crate::server) async fn apply(state: &impl Context, args: &Args) -> CallToolResult {
    let servers = state.view();
    let settings = &servers.config.settings;
    let exposure = state.exposure();
    let seen = state.relist_count();
    // By position in this view, as the catalog knows them.
    let removed = servers.removed();
    let selected = {
        let catalog = state.registry().catalog();
        state.with_exposed(|exposed| {
            run(
                &catalog,
                exposed,
                args,
                exposure,
                settings.claude_always_load,
                &removed,
            )
        })
    };
    let appended = selected.as_ref().map_or(0, |s| s.appended);
    let selection = match selected {
        Ok(Selected { mut selection, .. }) => {
            let listed = selection.loaded.iter().map(String::as_str);
            for name in listed.chain(selection.already_loaded.iter().map(String::as_str)) {
                state.note_choice(name, Kind::Selected);
            }
            // Why a name resolved to nothing is worked out here, off the runtime thread,
            // once the locks are let go.
            let unresolved: Vec<&mut UnknownName> = (selection.unknown.iter_mut())
                .filter(|u| u.did_you_mean.is_none() && u.reason.is_none())
                .collect();
            let names = unresolved.iter().map(|u| u.name.clone()).collect();
            let explained = state.explain_unknown(names).await;
            for (entry, why) in unresolved.into_iter().zip(explained) {
                *entry = UnknownName::of(&entry.name, why);
            }
            Ok(selection)
        }
        Err(message) => Err(message),
    };
    let has_them = exposure == ExposureMode::Deferred
        && deliver(state, appended, seen, settings.relist_wait, true).await;
    let problem = state.reload_problem();
    match selection {
        Ok(mut selection) => {
            if has_them {
                selection.schemas.clear();
            }
            Selection {
                config_problem: problem,
                ..selection
            }
            .result(exposure)
        }
        Err(refused) => error_result(refused.to_string() + &problem_line(problem.as_deref())),
    }
}

/// What `select_tools` answers: `structuredContent` is this struct, the text is rendered
/// from it ([`Selection::text`]).
#[derive(Debug, Default, Serialize)]
pub(crate) struct Selection {
    /// Qualified names of the tools named, loaded by this call (or, in proxy mode, whose
    /// schemas it returns).
    pub loaded: Vec<String>,
    /// Their full definitions, as listed, unless the client has them in its list by its
    /// next request.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schemas: Vec<Value>,
    /// Qualified names of tools that were already in the list.
    pub already_loaded: Vec<String>,
    pub unknown: Vec<UnknownName>,
    /// What to do with the loaded tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
    /// Why `servers.toml` could not be reloaded, while it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_problem: Option<String>,
}

/// A name that loaded nothing, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct UnknownName {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub did_you_mean: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl UnknownName {
    /// A name that resolved to nothing, with why ([`Unknown::reason`]: the one answer).
    fn of(name: &str, why: Unknown) -> UnknownName {
        let reason = why.reason();
        let did_you_mean = match why {
            Unknown::Tool { suggestion } => suggestion.map(|s| s.to_string()),
            _ => None,
        };
        UnknownName {
            did_you_mean,
            reason,
            ..UnknownName::new(name)
        }
    }

    fn new(name: &str) -> UnknownName {
        UnknownName {
            name: name.to_owned(),
            did_you_mean: None,
            reason: None,
        }
    }
}

/// What [`run`] did: the answer, and how many tools it appended to the list.
#[derive(Debug)]
pub(crate) struct Selected {
    pub selection: Selection,
    pub appended: usize,
}

/// Resolves the names and, unless in proxy mode, appends what is new to `exposed`.
/// Tools of the servers in `removed` (taken out of the config file by a reload) load
/// nothing: they would only answer that their server is gone.
///
/// # Errors
/// [`Refused`] arguments, before any work.
pub(crate) fn run(
    catalog: &Catalog,
    exposed: &mut ExposedList,
    args: &Args,
    exposure: ExposureMode,
    claude_always_load: bool,
    removed: &[usize],
) -> Result<Selected, Refused> {
    check_names(&args.names)?;
    let mut selection = Selection::default();
    let mut appended = 0;
    for name in dedup(&args.names) {
        match catalog.resolve(name) {
            // Its server removed, gone, or held by trust: `apply` asks the view which
            // (`Unknown::ServerRemoved`, `Unknown::Gone`, `Unknown::Held`).
            Resolution::Found(entry) if removed.contains(&entry.server_index) || entry.gone => {
                selection.unknown.push(UnknownName::new(name))
            }
            Resolution::Found(entry) if exposed.contains(entry.name.as_str()) => {
                selection.already_loaded.push(entry.name.to_string());
            }
            Resolution::Found(entry) => {
                let listed = listed_tool(entry, claude_always_load);
                // The definition as listed, `execution` and all (a `Tool` would drop it).
                let tool: Value = serde_json::from_str(listed.json()).unwrap_or_default();
                // `all` lists every tool as its server arrives; only `deferred` appends on
                // request (a 2026-07-28 connection is served as `proxy`, DESIGN.md 7c).
                if exposure == ExposureMode::Deferred && exposed.append(listed) {
                    appended += 1;
                }
                if !selection.loaded.iter().any(|n| n == entry.name.as_str()) {
                    selection.loaded.push(entry.name.to_string());
                    selection.schemas.push(tool);
                }
            }
            Resolution::Ambiguous(names) => selection.unknown.push(UnknownName {
                did_you_mean: Some(
                    names
                        .iter()
                        .map(|n| n.as_str())
                        .collect::<Vec<_>>()
                        .join(" or "),
                ),
                ..UnknownName::new(name)
            }),
            // Why (and "did you mean") is for the caller to add: see `apply`.
            Resolution::Unknown { .. } => selection.unknown.push(UnknownName::new(name)),
        }
    }
    if !selection.loaded.is_empty() {
        selection.note = Some(match exposure {
            ExposureMode::Proxy => "Call these through call_tool {name, arguments}.",
            ExposureMode::Deferred | ExposureMode::All => {
                "Loaded into your tool list: call them by name. If one is not there yet, call it through call_tool {name, arguments}."
            }
        });
    }
    Ok(Selected {
        selection,
        appended,
    })
}

impl Selection {
    /// The result: `isError` only when nothing was loaded or already loaded.
    pub(crate) fn result(&self, exposure: ExposureMode) -> CallToolResult {
        let is_error = self.loaded.is_empty() && self.already_loaded.is_empty();
        structured_result(self.text(exposure), self, is_error)
    }

    /// `Loaded: a, b. Already loaded: c. Unknown: x (did you mean y?)`, then each loaded
    /// tool's definition on a line of its own.
    pub(crate) fn text(&self, exposure: ExposureMode) -> String {
        let mut parts = Vec::new();
        if !self.loaded.is_empty() {
            let names: Vec<&str> = self.loaded.iter().map(String::as_str).collect();
            let verb = if exposure == ExposureMode::Proxy {
                "Schemas"
            } else {
                "Loaded"
            };
            parts.push(format!("{verb}: {}.", names.join(", ")));
        }
        if !self.already_loaded.is_empty() {
            parts.push(format!(
                "Already loaded: {}.",
                self.already_loaded.join(", ")
            ));
        }
        if !self.unknown.is_empty() {
            let names: Vec<String> = self
                .unknown
                .iter()
                .map(|u| match (&u.did_you_mean, &u.reason) {
                    (Some(s), _) => format!("{} (did you mean {s}?)", u.name),
                    (None, Some(r)) => format!("{} ({r})", u.name),
                    (None, None) => u.name.clone(),
                })
                .collect();
            parts.push(format!(
                "Unknown: {}. Use search_tools to find names.",
                names.join(", ")
            ));
        }
        let mut text = parts.join(" ");
        if !self.loaded.is_empty() {
            text.push_str(if exposure == ExposureMode::Proxy {
                " Call them through call_tool."
            } else {
                " If a loaded tool does not show up in your list, call it through call_tool."
            });
            for tool in &self.schemas {
                text.push('\n');
                text.push_str(&serde_json::to_string(tool).unwrap_or_default());
            }
        }
        text.push_str(&problem_line(self.config_problem.as_deref()));
        text
    }
}

/// Why `select_tools` refuses its arguments before any work; each message says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("select_tools needs at least one name in `names`. Use search_tools to find names.")]
    NoNames,
    /// How many names came.
    #[error(
        "select_tools takes at most {max} names at once, and got {0}. Select the ones you \
         need now, in calls of up to {max}.",
        max = MAX_SELECT
    )]
    TooMany(usize),
    #[error(transparent)]
    Name(#[from] NameError),
}

/// The schema's `minItems`/`maxItems` and the name rule, enforced before any work.
fn check_names(names: &[String]) -> Result<(), Refused> {
    if names.is_empty() {
        return Err(Refused::NoNames);
    }
    if names.len() > MAX_SELECT {
        return Err(Refused::TooMany(names.len()));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ServerKey;
    use rmcp::model::Tool;

    fn catalog() -> Catalog {
        let mut catalog = Catalog::new(64);
        let tool = |name: &str| -> Tool {
            serde_json::from_value(json!({"name": name, "inputSchema": {"type": "object"}}))
                .unwrap_or_else(|e| panic!("{e}"))
        };
        catalog.update_server(
            ServerKey {
                name: "s",
                prefix: "s",
                index: 0,
            },
            vec![tool("read"), tool("write")],
        );
        catalog
    }

    fn select(
        catalog: &Catalog,
        exposed: &mut ExposedList,
        names: &[&str],
        exposure: ExposureMode,
    ) -> (Selection, usize) {
        let args = Args {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
        };
        let selected = run(catalog, exposed, &args, exposure, true, &[]);
        let Selected {
            selection,
            appended,
        } = selected.unwrap_or_else(|e| panic!("{e}"));
        (selection, appended)
    }

    #[test]
    fn loads_once_and_reports_each_name_in_its_own_field() {
        let catalog = catalog();
        let mut exposed = ExposedList::new();
        let names = ["s__read", " s/read ", "s__read", "nope"];
        let (first, appended) = select(&catalog, &mut exposed, &names, ExposureMode::Deferred);
        assert_eq!(appended, 1);
        assert_eq!(first.loaded.len(), 1, "one tool, however it was named");
        assert_eq!(first.unknown, [UnknownName::new("nope")]);
        let (second, appended) =
            select(&catalog, &mut exposed, &["s__read"], ExposureMode::Deferred);
        assert_eq!(appended, 0);
        assert_eq!(second.already_loaded, ["s__read"]);
        assert!(second.note.is_none());
        let text = first.text(ExposureMode::Deferred);
        // Named again another way in the same call, it was already there.
        let head = "Loaded: s__read. Already loaded: s__read. Unknown: nope.";
        assert!(text.starts_with(head), "{text}");
    }

    #[test]
    fn proxy_mode_returns_schemas_and_appends_nothing() {
        let catalog = catalog();
        let mut exposed = ExposedList::new();
        let (selection, appended) =
            select(&catalog, &mut exposed, &["s__write"], ExposureMode::Proxy);
        assert_eq!((appended, exposed.len()), (0, 0));
        let result = selection.result(ExposureMode::Proxy);
        assert_ne!(result.is_error, Some(true));
        let structured = result.structured_content.unwrap_or_default();
        assert_eq!(structured["loaded"][0], "s__write");
        assert_eq!(structured["schemas"][0]["name"], "s__write");
        assert_eq!(
            structured["note"],
            "Call these through call_tool {name, arguments}."
        );
    }

    #[test]
    fn nothing_loaded_is_an_error_and_bad_arguments_are_refused() {
        let catalog = catalog();
        let mut exposed = ExposedList::new();
        let (selection, _) = select(&catalog, &mut exposed, &["x"], ExposureMode::Deferred);
        assert_eq!(
            selection.result(ExposureMode::Deferred).is_error,
            Some(true)
        );
        let args = Args { names: Vec::new() };
        let refused = run(
            &catalog,
            &mut exposed,
            &args,
            ExposureMode::Deferred,
            true,
            &[],
        );
        assert!(refused.is_err());
    }

    #[test]
    fn refused_arguments_say_what_to_do() {
        let refusal = |names: Vec<String>| check_names(&names).map_err(|e| e.to_string());
        assert_eq!(
            refusal(Vec::new()),
            Err(
                "select_tools needs at least one name in `names`. Use search_tools to find names."
                    .to_owned()
            )
        );
        assert_eq!(
            refusal((0..=MAX_SELECT).map(|i| format!("t{i}")).collect()),
            Err(
                "select_tools takes at most 20 names at once, and got 21. Select the ones you \
                 need now, in calls of up to 20."
                    .to_owned()
            )
        );
        assert_eq!(
            refusal(vec![" ".to_owned()]),
            Err("The tool name is empty. Use search_tools to find names.".to_owned())
        );
    }
}
