//! The lexical engine: exact names, free text, topics, CJK, the server filter, odd input,
//! ties in catalog order, and scores that do not depend on how documents arrived.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn exact_name_ranks_first() {
    let specs = catalog();
    let index = index_of(&specs);
    // `create_issue` exists on github (0) and gitlab (3): either is an exact match; catalog
    // order breaks the tie.
    assert_eq!(first(&index, "create_issue"), Some(0));
    assert_eq!(first(&index, "github create issue"), Some(0));
    assert_eq!(first(&index, "gitlab create issue"), Some(3));
    assert_eq!(first(&index, "gitlab/create_issue"), Some(3));
    assert_eq!(first(&index, "gitlab__create_issue"), Some(3));
    assert_eq!(first(&index, "github__create_pull_request"), Some(2));
    assert_eq!(first(&index, "readFile"), Some(7));
    assert_eq!(
        first(&index, "please call `get_current_time` for me"),
        Some(5)
    );
}

#[test]
fn free_text_finds_the_capability() {
    let index = index_of(&catalog());
    assert_eq!(first(&index, "what time is it in Tokyo"), Some(5));
    assert_eq!(first(&index, "open a pull request"), Some(2));
    assert_eq!(first(&index, "show closed issues"), Some(1));
}

/// A request that shares no word with any tool still finds the one on its subject, through
/// the topic lexicon; with topics off it finds nothing.
#[test]
fn a_shared_topic_finds_a_tool_without_a_shared_word() {
    let s = spec;
    let specs = vec![
        s("weather", 0, "forecast", "Weather forecast for a city"),
        s(
            "markets",
            1,
            "quotes",
            "Real-time financial insights and analysis",
        ),
        s(
            "translate",
            2,
            "translate",
            "Translate text between languages",
        ),
    ];
    let query = "how much is my salary worth";
    assert_eq!(first(&index_of(&specs), query), Some(1));
    let off = index_opts(
        &specs,
        Boosts {
            topics: 0.0,
            ..Boosts::default()
        },
        Semantic::Off,
    );
    assert!(off.search(query, 5, None).is_empty());
}

#[test]
fn cjk_text_is_searchable() {
    let index = index_of(&catalog());
    assert_eq!(first(&index, "天气"), Some(6));
    assert_eq!(first(&index, "明天的天气预报"), Some(6));
}

#[test]
fn server_filter_keeps_one_server() {
    let index = index_of(&catalog());
    let hits = index.search("create issue", 10, Some("gitlab"));
    assert_eq!(hits.iter().map(|h| h.id.0).collect::<Vec<_>>(), [3]);
    assert!(index.search("create issue", 10, Some("nope")).is_empty());
    // An empty query with a filter lists that server's tools in catalog order.
    let all: Vec<u32> = index
        .search("", 10, Some("github"))
        .iter()
        .map(|h| h.id.0)
        .collect();
    assert_eq!(all, [0, 1, 2]);
    assert!(index.search("", 10, None).is_empty());
}

#[test]
fn odd_input_never_fails() {
    let index = index_of(&catalog());
    for q in [
        "\"unbalanced",
        "a:b OR (",
        "*",
        "--",
        "+-!^~",
        "\u{0}",
        &"x".repeat(10_000),
    ] {
        let _ = index.search(q, 5, None);
    }
    assert!(index.search("issue", 0, None).is_empty());
}

#[test]
fn ties_break_by_catalog_order() {
    // Same text on three servers, given out of catalog order: equal scores rank by
    // (server_index, id).
    let t = tool("ping", "Check that the service answers", empty());
    let specs = vec![
        Spec {
            server: "c",
            server_index: 2,
            tool: t.clone(),
        },
        Spec {
            server: "a",
            server_index: 0,
            tool: t.clone(),
        },
        Spec {
            server: "b",
            server_index: 1,
            tool: t.clone(),
        },
    ];
    // Lexical only: a tool's vector includes its server's name, so fused scores differ.
    let index = index_opts(&specs, Boosts::default(), Semantic::Off);
    let hits = index.search("check service", 10, None);
    assert_eq!(hits.iter().map(|h| h.id.0).collect::<Vec<_>>(), [1, 2, 0]);
    assert!(hits.windows(2).all(|w| w[0].score == w[1].score));
    // Deterministic: the same query gives the same hits, and a second index built from the
    // same docs gives the same ones too.
    let again: Vec<Hit> = index.search("check service", 10, None);
    assert_eq!(hits, again);
    assert_eq!(
        index_opts(&specs, Boosts::default(), Semantic::Off).search("check service", 10, None),
        hits
    );
    // The limit cuts after ordering.
    assert_eq!(index.search("check service", 1, None)[0].id.0, 1);
}

#[test]
fn upsert_replaces_a_document() {
    // Lexical only: with vectors the one tool always is the nearest (the fused variant is
    // `fused_ranks_do_not_depend_on_upsert_history`).
    let mut index = SearchIndex::with_semantic(Semantic::Off).unwrap();
    let old = tool("lookup", "Find a word in the dictionary", empty());
    let new = tool("lookup", "Resolve a hostname through DNS", empty());
    let doc = |tool| ToolDoc {
        id: EntryId(7),
        server_index: 0,
        qualified_name: "net__lookup",
        server: "net",
        server_text: "",
        tool,
    };
    index.upsert([doc(&old)]).unwrap();
    assert_eq!(first(&index, "dictionary word"), Some(7));
    index.upsert([doc(&new)]).unwrap();
    assert!(index.search("dictionary", 5, None).is_empty());
    assert_eq!(first(&index, "dns hostname"), Some(7));
    assert_eq!(index.len(), 1);
    index.remove([EntryId(7)]).unwrap();
    assert!(index.search("dns", 5, None).is_empty());
    assert!(index.search("lookup", 5, None).is_empty());
}

/// A batch is written into segments of its own (`index::Building`), then the documents it
/// replaces are deleted: an id given twice in one batch keeps the later document, and a
/// batch that mixes new and replacing documents keeps every new one and each replacement.
#[test]
fn a_batch_replaces_in_order_and_keeps_its_new_documents() {
    let mut index = SearchIndex::with_semantic(Semantic::Off).unwrap();
    let old = tool("lookup", "Find a word in the dictionary", empty());
    let new = tool("lookup", "Resolve a hostname through DNS", empty());
    let clock = tool("clock", "Tell the current time in a timezone", empty());
    let doc = |id, tool| ToolDoc {
        id: EntryId(id),
        server_index: 0,
        qualified_name: if id == 7 { "net__lookup" } else { "net__clock" },
        server: "net",
        server_text: "",
        tool,
    };
    index.upsert([doc(7, &old), doc(7, &new)]).unwrap();
    assert!(index.search("dictionary", 5, None).is_empty());
    assert_eq!(first(&index, "dns hostname"), Some(7));
    index.upsert([doc(8, &clock), doc(7, &old)]).unwrap();
    assert_eq!(index.len(), 2);
    assert!(index.search("dns", 5, None).is_empty());
    assert_eq!(first(&index, "dictionary word"), Some(7));
    assert_eq!(first(&index, "timezone"), Some(8));
    // The searcher sees each document once: replaced ones are deleted, not hidden.
    let lexical = index.search("lookup", 5, None);
    assert_eq!(lexical.len(), 1);
}

/// Scores depend on the documents only, not on how they arrived: one batch, one upsert per
/// tool, and upserts that replace documents (deletes) all give the same hits and scores.
#[test]
fn scores_do_not_depend_on_upsert_history() {
    let specs = catalog();
    let batch = index_of(&specs);
    let mut piecewise = SearchIndex::new().unwrap();
    let names = qualified_names(&specs);
    let doc = |i: usize| doc(&specs, &names, i);
    for i in 0..specs.len() {
        piecewise.upsert([doc(i)]).unwrap();
    }
    for i in (0..specs.len()).step_by(2) {
        piecewise.upsert([doc(i)]).unwrap();
    }
    for query in [
        "create issue",
        "read file",
        "list",
        "github pull request",
        "time",
    ] {
        assert_eq!(
            batch.search(query, 10, None),
            piecewise.search(query, 10, None),
            "{query}"
        );
    }
}
