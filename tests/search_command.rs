//! `mcp-defer search` and `mcp-defer stats` against fixture servers.

use serde_json::Value;

use crate::support::{Dir, assert_contains_all, fixture, line_where, stderr, stdout};

fn two_fixtures() -> Dir {
    Dir::with_config(&format!(
        "{}{}",
        fixture(
            "fx",
            &[],
            "description = \"Arithmetic and echo\"\nalways_load = [\"echo\"]"
        ),
        fixture(
            "other",
            &["--name", "other"],
            "search_hints = [\"calculator\"]"
        ),
    ))
}

#[test]
fn search_prints_ranked_tools_with_scores() {
    let dir = two_fixtures();
    let out = dir.run(&["search", "sum of two numbers", "--limit", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 3, "{text}");
    let first: Vec<&str> = lines[0].split_whitespace().collect();
    assert!(
        first[0].parse::<f64>().is_ok(),
        "a score comes first: {text}"
    );
    assert!(first[1].ends_with("__add"), "{text}");
}

#[test]
fn search_json_is_what_search_tools_returns_and_server_filters() {
    let dir = two_fixtures();
    let out = dir.run(&["search", "add", "--server", "other", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let tools = result["tools"].as_array().unwrap();
    assert!(!tools.is_empty());
    assert!(tools.iter().all(|t| t["server"] == "other"), "{result:#}");
    assert_eq!(tools[0]["name"], "other__add");
    assert_eq!(tools[0]["loaded"], false);
}

#[test]
fn search_names_an_unknown_server() {
    let dir = two_fixtures();
    let out = dir.run(&["search", "add", "--server", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_contains_all(&err, &["'nope'", "fx, other"]);
}

#[test]
fn stats_compares_the_flat_list_with_the_deferred_one() {
    let dir = two_fixtures();
    let out = dir.run(&["stats"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let total = line_where(&text, |l| l.starts_with("total"));
    let numbers: Vec<usize> = total
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let [tools, flat, deferred] = numbers[..] else {
        panic!("{total}")
    };
    assert_eq!(tools, 14, "two fixtures of seven tools: {text}");
    assert!(deferred < flat, "{text}");
    let fx: Vec<&str> = line_where(&text, |l| l.starts_with("fx "))
        .split_whitespace()
        .collect();
    let other: Vec<&str> = line_where(&text, |l| l.starts_with("other "))
        .split_whitespace()
        .collect();
    assert_ne!(fx[3], "0", "fx pins echo: {text}");
    assert_eq!(other[3], "0", "other pins nothing: {text}");
}
