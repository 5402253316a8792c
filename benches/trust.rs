//! The suspicious-content rules measured both ways (issue 30): how many real tool
//! definitions they flag (each would be held on first sight with `trust = "pin"`, or marked
//! with `"warn"`), and how many poisoned and rug-pulled ones they catch, per attack class
//! and per rule.
//!
//! Real: every tool of `benches/data/metatool/servers.json` (199 public tool APIs) and
//! `benches/data/reference/servers.json` (the 50 tools of the five reference MCP servers the
//! tests run), plus the fixture server's defaults; each checked as a first sight. Poisoned:
//! `benches/data/trust/poisoned.json`, written from the published taxonomies (SOURCE.md
//! beside it); a case with a `base` is a rug pull of that real tool, checked against it as
//! the approved definition (a `tool` of `null` flips the base's `destructiveHint`).
//!
//! `cargo bench --bench trust` prints the tables in docs/benchmarks.md. `-- --show` also
//! prints every real definition flagged and every poisoned one missed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Instant;

use mcp_defer::trust::{Definition, Overridden, Rule, rules};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Server {
    server: String,
    tools: Vec<Value>,
}

#[derive(Deserialize)]
struct Case {
    id: String,
    class: String,
    base: Option<(String, String)>,
    tool: Option<Value>,
}

fn data(path: &str) -> String {
    let full = format!("{}/benches/data/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn definition(tool: &Value) -> Definition {
    Definition::from_value(tool, Overridden::default())
}

fn main() {
    let show = std::env::args().any(|a| a == "--show");
    let mut real: Vec<(String, Value)> = Vec::new();
    let mut by_name: BTreeMap<(String, String), Value> = BTreeMap::new();
    for (set, file) in [
        ("metatool", "metatool/servers.json"),
        ("reference", "reference/servers.json"),
    ] {
        let servers: Vec<Server> = serde_json::from_str(&data(file)).unwrap();
        for server in servers {
            for tool in server.tools {
                let name = tool["name"].as_str().unwrap_or_default().to_owned();
                by_name.insert((server.server.clone(), name.clone()), tool.clone());
                real.push((format!("{set}:{}/{name}", server.server), tool));
            }
        }
    }

    // Real definitions, first sight; the patterns compiled first (once a process).
    let compiled = Instant::now();
    rules::check(&definition(&json!({"name": "warm"})), None);
    let compiled = compiled.elapsed();
    let started = Instant::now();
    let mut flagged = Vec::new();
    let mut real_rules: BTreeMap<Rule, usize> = BTreeMap::new();
    for (name, tool) in &real {
        let hits = rules::check(&definition(tool), None);
        for hit in &hits {
            *real_rules.entry(hit.rule).or_default() += 1;
        }
        if !hits.is_empty() {
            flagged.push((name.clone(), hits));
        }
    }
    let per_tool = started.elapsed() / real.len() as u32;
    println!("## Real definitions (first sight)\n");
    println!("| set | tools | flagged | rate |\n|---|---|---|---|");
    for set in ["metatool", "reference"] {
        let total = real.iter().filter(|(n, _)| n.starts_with(set)).count();
        let hit = flagged.iter().filter(|(n, _)| n.starts_with(set)).count();
        println!(
            "| {set} | {total} | {hit} | {:.1}% |",
            100.0 * hit as f64 / total as f64
        );
    }
    println!(
        "| all | {} | {} | {:.1}% |",
        real.len(),
        flagged.len(),
        100.0 * flagged.len() as f64 / real.len() as f64
    );
    println!(
        "\nrules over real definitions: {per_tool:?} a tool (patterns compiled once: {compiled:?})"
    );
    if show {
        for (name, hits) in &flagged {
            for hit in hits {
                println!("  flagged {name}: {hit}");
            }
        }
    }

    // Poisoned and rug-pulled definitions.
    let cases: Vec<Case> = serde_json::from_str(&data("trust/poisoned.json")).unwrap();
    let mut classes: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut fired: BTreeMap<Rule, usize> = BTreeMap::new();
    let mut missed = Vec::new();
    for case in &cases {
        let base = case.base.as_ref().map(|key| {
            by_name
                .get(key)
                .cloned()
                .unwrap_or_else(|| panic!("{}: no real tool {key:?}", case.id))
        });
        let (previous, now) = match (&case.tool, &base) {
            (Some(tool), base) => (base.as_ref().map(definition), definition(tool)),
            // A flipped hint: the base as approved, then claiming to be harmless.
            (None, Some(base)) => {
                let mut flipped = base.clone();
                flipped["annotations"]["destructiveHint"] = json!(false);
                flipped["annotations"]["readOnlyHint"] = json!(true);
                (Some(definition(base)), definition(&flipped))
            }
            (None, None) => panic!("{}: neither a tool nor a base", case.id),
        };
        let hits = rules::check(&now, previous.as_ref());
        let entry = classes.entry(case.class.clone()).or_default();
        entry.0 += 1;
        if hits.is_empty() {
            missed.push(case.id.clone());
        } else {
            entry.1 += 1;
        }
        for hit in &hits {
            *fired.entry(hit.rule).or_default() += 1;
        }
    }
    println!("\n## Poisoned and rug-pulled definitions\n");
    println!("| class | cases | caught | rate |\n|---|---|---|---|");
    let (mut total, mut caught) = (0, 0);
    for (class, (n, c)) in &classes {
        total += n;
        caught += c;
        println!(
            "| {class} | {n} | {c} | {:.0}% |",
            100.0 * *c as f64 / *n as f64
        );
    }
    println!(
        "| all | {total} | {caught} | {:.1}% |",
        100.0 * caught as f64 / total as f64
    );
    println!(
        "\n| rule | poisoned cases it fired on | real definitions it fired on |\n|---|---|---|"
    );
    for rule in Rule::ALL {
        println!(
            "| {rule} | {} | {} |",
            fired.get(&rule).copied().unwrap_or(0),
            real_rules.get(&rule).copied().unwrap_or(0)
        );
    }
    if !missed.is_empty() {
        println!("\nmissed: {}", missed.join(", "));
    }
}
