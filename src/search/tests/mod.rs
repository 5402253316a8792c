//! Unit tests for the search index, by topic: `words.rs` (exact names, CJK, the server
//! filter, deterministic ties, upsert replacement), `meaning.rs` (the static embedding
//! tier), `quality.rs` (a quality floor on the MetaTool data in `benches/data`). The
//! catalog and index builders they share are here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use rmcp::model::Tool;
use serde_json::json;

use super::semantic::{Vectors, quantize};
use super::{Boosts, Hit, SearchIndex, Semantic, StaticModel, ToolDoc};
use crate::catalog::EntryId;

#[path = "../../../benches/retrieval/eval.rs"]
mod eval;

struct Spec {
    server: &'static str,
    server_index: usize,
    tool: Tool,
}

fn tool(name: &str, description: &str, schema: serde_json::Value) -> Tool {
    serde_json::from_value(json!({"name": name, "description": description, "inputSchema": schema}))
        .unwrap()
}

/// A tool without parameters on `server`.
fn spec(server: &'static str, server_index: usize, name: &str, description: &str) -> Spec {
    Spec {
        server,
        server_index,
        tool: tool(name, description, empty()),
    }
}

fn empty() -> serde_json::Value {
    json!({"type": "object", "properties": {}})
}

fn catalog() -> Vec<Spec> {
    let s = |server, server_index, tool| Spec {
        server,
        server_index,
        tool,
    };
    vec![
        s(
            "github",
            0,
            tool(
                "create_issue",
                "Create a new issue in a GitHub repository",
                json!({
            "type": "object",
            "properties": {"owner": {"type": "string"}, "repo": {"type": "string"},
                           "title": {"type": "string", "description": "Issue title"}}}),
            ),
        ),
        s(
            "github",
            0,
            tool(
                "list_issues",
                "List issues in a GitHub repository with filters",
                json!({
            "type": "object",
            "properties": {"state": {"type": "string", "enum": ["open", "closed", "all"]}}}),
            ),
        ),
        s(
            "github",
            0,
            tool(
                "create_pull_request",
                "Create a new pull request to merge a branch into another",
                empty(),
            ),
        ),
        s(
            "gitlab",
            1,
            tool(
                "create_issue",
                "Create a new issue in a GitLab project",
                empty(),
            ),
        ),
        s(
            "jira",
            2,
            tool(
                "create_ticket",
                "Open a new issue ticket for a bug or task",
                empty(),
            ),
        ),
        s(
            "time",
            3,
            tool(
                "get_current_time",
                "Get current time in a specific timezone",
                json!({
            "type": "object",
            "properties": {"timezone": {"type": "string", "description": "IANA timezone name"}}}),
            ),
        ),
        s(
            "weather",
            4,
            tool("forecast", "天气预报：查询城市未来三天的天气", empty()),
        ),
        s(
            "files",
            5,
            tool("readFile", "Read the complete contents of a file", empty()),
        ),
    ]
}

fn index_of(specs: &[Spec]) -> SearchIndex {
    index_with(specs, Boosts::default())
}

fn index_with(specs: &[Spec], boosts: Boosts) -> SearchIndex {
    index_opts(specs, boosts, Semantic::default())
}

fn index_opts(specs: &[Spec], boosts: Boosts, semantic: Semantic) -> SearchIndex {
    let mut index = SearchIndex::with_options(boosts, semantic).unwrap();
    let names = qualified_names(specs);
    index
        .upsert((0..specs.len()).map(|i| doc(specs, &names, i)))
        .unwrap();
    index
}

/// Each spec's qualified name (`server__tool`), by position.
fn qualified_names(specs: &[Spec]) -> Vec<String> {
    specs
        .iter()
        .map(|s| format!("{}__{}", s.server, s.tool.name))
        .collect()
}

/// The document of the spec at `i`, its id its position.
fn doc<'a>(specs: &'a [Spec], names: &'a [String], i: usize) -> ToolDoc<'a> {
    ToolDoc {
        id: EntryId(i as u32),
        server_index: specs[i].server_index,
        qualified_name: &names[i],
        server: specs[i].server,
        server_text: "",
        tool: &specs[i].tool,
    }
}

fn first(index: &SearchIndex, query: &str) -> Option<u32> {
    index.search(query, 5, None).first().map(|h| h.id.0)
}

mod meaning;
mod quality;
mod words;
