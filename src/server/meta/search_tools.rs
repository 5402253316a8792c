//! `search_tools`: ranks the catalog for a query, and makes its best hits usable in the
//! model's next request, as the clients' own tool search does (issue 34): where the
//! session's list may grow on request, the first `search_loads` hits are appended to it
//! and announced (held, for a client that re-lists while the call is pending); a hit the
//! client will not have by its own name carries its `input_schema`, for `call_tool`.
//!
//! The answer is a [`Found`], serialized once as `structuredContent`, its text rendered
//! from the same struct.

use rmcp::model::CallToolResult;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Relists;
use super::deliver::deliver;
use super::{Context, MAX_SEARCH_LIMIT, error_result, structured_result};
use crate::catalog::{Catalog, Resolution};
use crate::config::ExposureMode;
use crate::exposure::{ExposedList, listed_tool};
use crate::search::usage::Usage;
use crate::search::{QueryVectors, SearchIndex};
use crate::server::view::Unavailable;

/// What the model reads of `search_tools`: with `search_loads` > 0 its best hits are made
/// usable (loaded where the list grows on request, else given their schema), in every
/// exposure mode alike, so the text does not depend on the mode.
pub(crate) fn description(loads: bool) -> &'static str {
    if loads {
        "Find tools by what they do, across every connected MCP server. The best matches are \
         ready to use at once: call one marked loaded by its name, or one that carries \
         input_schema through call_tool {name, arguments}. Load other matches with \
         select_tools."
    } else {
        "Find tools by what they do, across every connected MCP server. Returns the best \
         matches (name, server, short description, whether loaded). Load the ones you need \
         with select_tools, or call one directly with call_tool. Never changes your tool list."
    }
}

/// Hits scoring under this fraction of the best one are left out: they share a stray word
/// with the query, and every result costs the model's context.
const MIN_RELATIVE_SCORE: f32 = 0.1;

/// A hit among the first `search_loads` is loaded (or given its schema) only when it scores
/// at least this fraction of the best: a distant third is not worth a schema in every
/// later request.
const LOAD_RELATIVE_SCORE: f64 = 0.5;

/// Servers named when no tool fits: where the nearest tools were.
const NEAREST_SERVERS: usize = 3;

/// Longest description excerpt in a result: enough to choose, short enough for 50 results.
const EXCERPT_CHARS: usize = 200;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    pub query: String,
    pub limit: Option<usize>,
    pub server: Option<String>,
}

pub(crate) fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What you want to do, in a few words, or a tool name."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT, "description": "How many results (default 8)."},
            "server": {"type": "string", "description": "Only tools of this server."}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

pub(crate) fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tools": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "server": {"type": "string"},
                        "tool": {"type": "string"},
                        "description": {"type": "string"},
                        "score": {"type": "number"},
                        "loaded": {"type": "boolean"},
                        "input_schema": {"type": "object"}
                    },
                    "required": ["name", "server", "tool", "description", "score", "loaded"]
                }
            },
            // Every request pays for this schema (it is listed up front): names that say
            // what they mean, no descriptions.
            "ranked_by": {"type": "string"},
            "vectors_pending": {"type": "integer"},
            "no_tool_fits": {"type": "boolean"},
            "nearest_servers": {"type": "array", "items": {"type": "string"}},
            "starting": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["tools"]
    })
}

/// Runs a search for the model, noting servers that are not serving, and makes its best
/// hits usable in the next request ([`make_usable`]). While servers are still starting it
/// ranks again as each of them lists its tools: for a few seconds whatever it found, and
/// longer while nothing fits ([`Context::search_deadlines`]), so "nothing yet" is said
/// only once the servers that could have the tool are in or the wait is over. With
/// the transformer tier the query is embedded first, on the blocking pool and before any
/// lock is taken.
pub(in crate::server) async fn apply(state: &impl Context, args: &Args) -> CallToolResult {
    let encoder = state.registry().index().query_encoder();
    let model_query = match encoder {
        Some(encoder) => {
            let query = args.query.clone();
            (tokio::task::spawn_blocking(move || encoder.embed_query(&query)).await)
                .ok()
                .flatten()
        }
        None => None,
    };
    let deadlines = state.search_deadlines();
    let (found, unavailable, starting) = loop {
        let servers = state.view();
        let starting = state.starting_servers();
        let found = rank(state, args, model_query.as_ref());
        let fits = found.as_ref().is_ok_and(|f| !f.tools.is_empty());
        let deadline = if fits {
            deadlines.grace
        } else {
            deadlines.nothing_fits
        };
        if starting.is_empty() || tokio::time::Instant::now() >= deadline {
            break (found, servers.unavailable(), starting);
        }
        state.wait_for_arrival(&starting, deadline).await;
    };
    let config_problem = state.reload_problem();
    let mut found = match found {
        Ok(found) => found,
        Err(refused) => {
            return error_result(
                refused.to_string()
                    + &unavailable_line(&unavailable)
                    + &problem_line(config_problem.as_deref()),
            );
        }
    };
    state.note_search(
        &args.query,
        found.tools.iter().map(|t| t.name.clone()).collect(),
    );
    make_usable(state, &mut found.tools).await;
    Found {
        unavailable,
        starting,
        config_problem,
        ..found
    }
    .result()
}

/// One ranking of what is indexed now, for the session's list ([`Search::run`]).
fn rank(
    state: &impl Context,
    args: &Args,
    model_query: Option<&QueryVectors>,
) -> Result<Found, SearchRefused> {
    let servers = state.view();
    let removed = servers.removed();
    let usage = state.usage();
    let catalog = state.registry().catalog();
    let index = state.registry().index();
    state.with_exposed(|exposed| {
        Search {
            catalog: &catalog,
            ranker: Ranker {
                index: &index,
                model_query,
                usage: usage.as_deref(),
            },
            exposed,
            default_limit: servers.config.settings.search_limit,
            removed: &removed,
        }
        .run(args)
    })
}

/// The first `search_loads` hits near the best: appended to the session's list where it
/// grows on request, and given their `input_schema` unless the client will have them by
/// name in its next request.
async fn make_usable(state: &impl Context, hits: &mut [Hit]) {
    let servers = state.view();
    let settings = &servers.config.settings;
    let best = hits.first().map_or(0.0, |hit| hit.score);
    let confident = (hits.iter())
        .take(settings.search_loads)
        .take_while(|hit| hit.score >= best * LOAD_RELATIVE_SCORE)
        .count();
    let hits = &mut hits[..confident];
    if hits.is_empty() {
        return;
    }
    let seen = state.relist_count();
    // A client that takes no grown list (or re-sorts it) is given schemas, not appends.
    let loads = state.exposure() == ExposureMode::Deferred && state.relists() != Relists::Never;
    let appended = if loads {
        let catalog = state.registry().catalog();
        state.with_exposed(|exposed| {
            let mut appended = 0;
            for hit in hits.iter_mut().filter(|hit| !hit.loaded) {
                if let Resolution::Found(entry) = catalog.resolve(&hit.name)
                    && exposed.append(listed_tool(entry, settings.claude_always_load))
                {
                    hit.loaded = true;
                    appended += 1;
                }
            }
            appended
        })
    } else {
        0
    };
    let has_them = loads && deliver(state, appended, seen, settings.relist_wait, false).await;
    if has_them {
        return;
    }
    let catalog = state.registry().catalog();
    for hit in hits {
        if let Resolution::Found(entry) = catalog.resolve(&hit.name) {
            let schema = entry.tool.parse().input_schema;
            hit.input_schema = Some(Value::Object((*schema).clone()));
        }
    }
}

/// What `search_tools` answers: `structuredContent` is this struct, the text is rendered
/// from it ([`Found::text`]); `mcp-defer search` prints it.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub(crate) struct Found {
    pub tools: Vec<Hit>,
    /// Which engines ranked ([`crate::search::Tier::as_str`]): the model knows whether meaning was
    /// searched or only words.
    pub ranked_by: &'static str,
    /// Tools still waiting for their transformer vector (the static tier ranks meanwhile).
    #[serde(skip_serializing_if = "is_zero")]
    pub vectors_pending: usize,
    /// No tool does what was asked (issue 21): `tools` is empty rather than the nearest
    /// wrong ones, and `nearest_servers` says where the closest were.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_tool_fits: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nearest_servers: Vec<String>,
    /// Enabled servers still starting, whose tools are missing here: the search found a
    /// fitting tool without them, or waited its longest for them; search again shortly.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub starting: Vec<String>,
    /// Enabled servers that are not serving now, whose tools cannot be found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<Unavailable>,
    /// Why `servers.toml` could not be reloaded, while it cannot (the running config
    /// stays): the user asked the agent, so the agent is told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_problem: Option<String>,
}

/// One ranked tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Hit {
    /// The qualified name, to select or call it by.
    pub name: String,
    pub server: String,
    /// The tool's name on its server.
    pub tool: String,
    /// The first paragraph, at most [`EXCERPT_CHARS`] characters.
    pub description: String,
    /// How sure the search is that this tool does what was asked, in [0, 1]
    /// ([`crate::search::Explained::confidence`]); rounded to two decimals: enough to
    /// compare, no noise in the model's context.
    pub score: f64,
    /// In the client's tool list (loaded by this search or earlier).
    pub loaded: bool,
    /// The tool's input schema, for a hit the client will not have by its own name in its
    /// next request: call it through `call_tool` with arguments that fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
}

/// How a search ranks: the index, the query's transformer vector when the caller embedded
/// it (`None`: the index embeds it), and what the searching principal learnt from use,
/// which lifts the tools it chose before for queries like this one.
#[derive(Clone, Copy)]
pub(crate) struct Ranker<'a> {
    pub index: &'a SearchIndex,
    pub model_query: Option<&'a QueryVectors>,
    pub usage: Option<&'a Usage>,
}

/// What one search ranks and may offer, besides the query.
pub(crate) struct Search<'a> {
    pub catalog: &'a Catalog,
    pub ranker: Ranker<'a>,
    /// The session's list, to mark the hits it has.
    pub exposed: &'a ExposedList,
    /// How many hits when the query names no `limit` (`search_limit`).
    pub default_limit: usize,
    /// The positions of servers a reload took out of the config file
    /// ([`Servers::removed`](crate::server::view::Servers::removed)): their tools stay in
    /// the index, so a re-added server's come back under the same names, but are not
    /// offered.
    pub removed: &'a [usize],
}

/// Why a search has no ranking to give; the message says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SearchRefused {
    /// `server` names no server with tools; `known` are those that have some.
    #[error("No server named '{server}' has tools. Servers with tools: {}.", .known.join(", "))]
    NoSuchServer { server: String, known: Vec<String> },
}

impl Search<'_> {
    /// Runs a search for `args`. Pure over its inputs, so it is tested without a server.
    /// Tools of removed servers are not offered, nor are tools gone from their server's
    /// list.
    ///
    /// # Errors
    /// [`SearchRefused`] when `args.server` names no server with tools.
    pub(crate) fn run(&self, args: &Args) -> Result<Found, SearchRefused> {
        let Search {
            catalog,
            ranker,
            exposed,
            default_limit,
            removed,
        } = *self;
        let limit = args
            .limit
            .unwrap_or(default_limit)
            .clamp(1, MAX_SEARCH_LIMIT);
        if let Some(server) = &args.server
            && !catalog.iter().any(|e| &*e.server == server)
        {
            let known: Vec<&str> =
                catalog
                    .iter()
                    .map(|e| &*e.server)
                    .fold(Vec::new(), |mut v, s| {
                        if v.last() != Some(&s) {
                            v.push(s);
                        }
                        v
                    });
            return Err(SearchRefused::NoSuchServer {
                server: server.clone(),
                known: known.into_iter().map(str::to_owned).collect(),
            });
        }
        let ranking = ranker.index.rank_learnt(
            &args.query,
            limit,
            args.server.as_deref(),
            ranker.model_query,
            ranker.usage,
        );
        let mut hits = ranking.hits;
        let floor = hits
            .first()
            .map_or(0.0, |best| best.score * MIN_RELATIVE_SCORE);
        hits.retain(|hit| hit.score >= floor);
        let offered: Vec<_> = hits
            .iter()
            .filter_map(|hit| {
                (catalog.get(hit.id))
                    .filter(|e| !e.gone && !removed.contains(&e.server_index))
                    .map(|e| (e, hit))
            })
            .collect();
        let mut nearest_servers: Vec<String> = Vec::new();
        if !ranking.fits {
            for (entry, _) in &offered {
                if nearest_servers.len() < NEAREST_SERVERS
                    && !nearest_servers.contains(&entry.server.to_string())
                {
                    nearest_servers.push(entry.server.to_string());
                }
            }
        }
        let no_tool_fits = !ranking.fits && !offered.is_empty();
        let tools = offered
            .into_iter()
            .filter(|_| !no_tool_fits)
            .map(|(entry, hit)| Hit {
                name: entry.name.to_string(),
                server: entry.server.to_string(),
                tool: entry.original_name().to_owned(),
                description: excerpt(&entry.tool.description().unwrap_or_default()),
                score: (f64::from(hit.confidence) * 100.0).round() / 100.0,
                loaded: exposed.contains(entry.name.as_str()),
                input_schema: None,
            })
            .collect();
        Ok(Found {
            tools,
            ranked_by: ranking.tier.as_str(),
            vectors_pending: ranking.waiting,
            no_tool_fits,
            nearest_servers,
            ..Found::default()
        })
    }
}

impl Found {
    pub(crate) fn result(&self) -> CallToolResult {
        structured_result(self.text(), self, false)
    }

    /// One line a tool, `name (server/tool) [loaded]: description`, then its input schema
    /// where it carries one, and a line naming the servers that are not available.
    pub(crate) fn text(&self) -> String {
        let mut text = String::new();
        for hit in &self.tools {
            text.push_str(&format!(
                "{} ({}/{}){}: {}\n",
                hit.name,
                hit.server,
                hit.tool,
                if hit.loaded { " [loaded]" } else { "" },
                hit.description
            ));
            if let Some(schema) = &hit.input_schema {
                text.push_str(&format!("  input_schema: {schema}\n"));
            }
        }
        if self.no_tool_fits {
            text.push_str(&format!(
                "No tool fits this request. Nearest servers: {}.",
                self.nearest_servers.join(", ")
            ));
        } else if self.tools.is_empty() {
            text.push_str("No tools match. Try other words, or a server's name.");
        }
        if self.vectors_pending > 0 {
            text.push_str(&format!(
                "\nRanked by {} while {} tools wait for their transformer vectors.",
                self.ranked_by, self.vectors_pending
            ));
        }
        if !self.starting.is_empty() {
            text.push_str(&format!(
                "\nStill starting, not searched yet: {}. Search again shortly.",
                self.starting.join(", ")
            ));
        }
        text.push_str(&unavailable_line(&self.unavailable));
        text.push_str(&problem_line(self.config_problem.as_deref()));
        text
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A line saying the config file could not be reloaded and why; empty when it could.
pub(crate) fn problem_line(problem: Option<&str>) -> String {
    problem.map_or_else(String::new, |problem| {
        format!(
            "\nNote: the changed servers.toml was not applied; mcp-defer keeps running the \
             servers it had. Fix the file and save it again: {problem}"
        )
    })
}

/// A line naming the servers that are not serving, so the model knows what it cannot
/// find; empty when all are.
fn unavailable_line(unavailable: &[Unavailable]) -> String {
    if unavailable.is_empty() {
        return String::new();
    }
    let servers = (unavailable.iter())
        .map(|u| format!("{} ({})", u.server, u.state))
        .collect::<Vec<_>>()
        .join(", ");
    format!("\nServers not available now, whose tools are missing here: {servers}.")
}

/// The first [`EXCERPT_CHARS`] characters of the first paragraph, cut at a word.
pub(crate) fn excerpt(description: &str) -> String {
    let paragraph = description.trim().split("\n\n").next().unwrap_or("");
    let flat: String = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= EXCERPT_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(EXCERPT_CHARS).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > EXCERPT_CHARS / 2 => &cut[..space],
        _ => &cut,
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', '.']))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ServerKey;

    fn tool(name: &str, description: &str) -> rmcp::model::Tool {
        serde_json::from_value(json!({
            "name": name,
            "description": description,
            "inputSchema": {"type": "object"}
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn hits_far_below_the_best_are_left_out() {
        let mut catalog = Catalog::new(64);
        let filler =
            "Manages inventory records, shipping labels and warehouse stock levels. ".repeat(8);
        catalog.update_server(
            ServerKey {
                name: "s",
                prefix: "s",
                index: 0,
            },
            vec![
                tool(
                    "convert_time_zone",
                    "Convert a time between time zones, any time zone to any other time zone.",
                ),
                tool(
                    "inventory",
                    &format!("{filler} Orders ship from the zone nearest the buyer."),
                ),
            ],
        );
        let mut index = SearchIndex::new().unwrap_or_else(|e| panic!("{e}"));
        let indexed: Vec<_> = catalog.iter().map(crate::ingest::Indexed::of).collect();
        index
            .upsert(indexed.iter().map(|e| e.doc("")))
            .unwrap_or_else(|e| panic!("{e}"));
        let raw = index.search("time zone", 10, None);
        assert_eq!(raw.len(), 2, "the index itself finds both: {raw:?}");
        assert!(raw[1].score < raw[0].score * MIN_RELATIVE_SCORE, "{raw:?}");
        let args = Args {
            query: "time zone".into(),
            limit: None,
            server: None,
        };
        let search = Search {
            catalog: &catalog,
            ranker: Ranker {
                index: &index,
                model_query: None,
                usage: None,
            },
            exposed: &ExposedList::new(),
            default_limit: 8,
            removed: &[],
        };
        let result = (search.run(&args))
            .unwrap_or_else(|e| panic!("{e}"))
            .result();
        let tools = result.structured_content.unwrap_or_default()["tools"].clone();
        assert_eq!(tools.as_array().map(Vec::len), Some(1), "{tools:#}");
        assert_eq!(tools[0]["name"], "s__convert_time_zone");
    }

    #[test]
    fn the_text_is_rendered_from_the_struct() {
        let mut found = Found {
            tools: vec![Hit {
                name: "s__t".into(),
                server: "s".into(),
                tool: "t".into(),
                description: "Does t.".into(),
                score: 1.25,
                loaded: true,
                input_schema: None,
            }],
            ..Found::default()
        };
        assert_eq!(found.text(), "s__t (s/t) [loaded]: Does t.\n");
        let structured = found.result().structured_content.unwrap_or_default();
        assert_eq!(structured["tools"][0]["score"], 1.25);
        assert!(structured.get("unavailable").is_none(), "{structured}");
        found.tools.clear();
        found.unavailable.push(Unavailable {
            server: "down".into(),
            state: "failed: gone".into(),
        });
        assert_eq!(
            found.text(),
            "No tools match. Try other words, or a server's name.\nServers not available now, \
             whose tools are missing here: down (failed: gone)."
        );
    }

    #[test]
    fn excerpts_are_bounded_and_whole_words() {
        let long = "word ".repeat(100);
        let short = excerpt(&long);
        assert!(short.chars().count() <= EXCERPT_CHARS + 1);
        assert!(short.ends_with("word…"));
        assert_eq!(excerpt("Reads a file.\n\nLong details."), "Reads a file.");
        assert_eq!(excerpt("  spaced\n out  "), "spaced out");
    }
}
