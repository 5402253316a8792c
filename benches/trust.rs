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
//! Two parts, kept apart in every table. **Tuned-on**: the sets above, which the rules were
//! written and narrowed against (their rates are an upper bound). **Held-out**, never used to
//! tune a rule: `heldout-real.json` (the tool lists of 45 real MCP servers from npm and PyPI,
//! as `benches/trust/collect-heldout.py` received them) and `heldout-poisoned.json` (cases
//! written from the taxonomies before the rules were run on them, committed first); a rule
//! changed because of a held-out case would make that part tuned-on too.
//!
//! `cargo bench --bench trust` prints the tables in docs/benchmarks.md. `-- --show` also
//! prints every real definition flagged and every poisoned one missed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Instant;

use mcp_defer::trust::{Definition, Overridden, Rule, rules};
use serde::Deserialize;
use serde_json::{Value, json};

/// A server of a real set; the npm/PyPI sets name the package it came from.
#[derive(Deserialize)]
struct HeldOutServer {
    server: String,
    package: Option<String>,
    tools: Vec<Value>,
}

#[derive(Deserialize)]
struct Case {
    id: String,
    class: String,
    base: Option<(String, String)>,
    tool: Option<Value>,
}

/// A data file of `benches/data`, `None` when it does not exist (yet).
fn optional_data(path: &str) -> Option<String> {
    let full = format!("{}/benches/data/{path}", env!("CARGO_MANIFEST_DIR"));
    match std::fs::read_to_string(&full) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("{full}: {e}"),
    }
}

fn definition(tool: &Value) -> Definition {
    Definition::from_value(tool, Overridden::default())
}

/// How the rules did on a part: real definitions flagged, poisoned cases caught by class,
/// and each rule's hits on both.
#[derive(Default)]
struct Part {
    real: usize,
    flagged: Vec<(String, Vec<mcp_defer::trust::Hit>)>,
    real_rules: BTreeMap<Rule, usize>,
    classes: BTreeMap<String, (usize, usize)>,
    fired: BTreeMap<Rule, usize>,
    missed: Vec<String>,
}

impl Part {
    fn check_real(&mut self, name: String, tool: &Value) {
        self.real += 1;
        let hits = rules::check(&definition(tool), None);
        for hit in &hits {
            *self.real_rules.entry(hit.rule).or_default() += 1;
        }
        if !hits.is_empty() {
            self.flagged.push((name, hits));
        }
    }

    fn check_cases(&mut self, cases: &[Case], by_name: &BTreeMap<(String, String), Value>) {
        for case in cases {
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
            let entry = self.classes.entry(case.class.clone()).or_default();
            entry.0 += 1;
            if hits.is_empty() {
                self.missed.push(case.id.clone());
            } else {
                entry.1 += 1;
            }
            for hit in &hits {
                *self.fired.entry(hit.rule).or_default() += 1;
            }
        }
    }

    fn poisoned_table(&self, title: &str) {
        println!("\n## Poisoned and rug-pulled definitions, {title}\n");
        println!("| class | cases | caught | rate |\n|---|---|---|---|");
        let (mut total, mut caught) = (0, 0);
        for (class, (n, c)) in &self.classes {
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
        if !self.missed.is_empty() {
            println!("\nmissed: {}", self.missed.join(", "));
        }
    }
}

/// The sets of real definitions: a label, the file, when the rules were tuned on it.
const REAL_SETS: [(&str, &str, Tuned); 6] = [
    ("metatool", "metatool/servers.json", Tuned::First),
    ("reference", "reference/servers.json", Tuned::First),
    (
        "32 npm/PyPI servers",
        "trust/heldout-real.json",
        Tuned::Second,
    ),
    ("BFCL", "bfcl/servers.json", Tuned::Never),
    ("BFCL live", "bfcl-live/servers.json", Tuned::Never),
    (
        "npm/PyPI servers, third set",
        "trust/third-real.json",
        Tuned::Never,
    ),
];

/// When a set was tuned on: the rules were written against the first sets, narrowed against
/// the second (held-out until the rules of commit dc2074c), and never against the third.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tuned {
    First,
    Second,
    Never,
}

impl Tuned {
    fn label(self) -> &'static str {
        match self {
            Tuned::First => "tuned-on",
            Tuned::Second => "tuned-on, second",
            Tuned::Never => "held-out",
        }
    }
}

fn main() {
    let show = std::env::args().any(|a| a == "--show");
    let mut parts: BTreeMap<&str, Part> = BTreeMap::new();
    let mut by_name: BTreeMap<(String, String), Value> = BTreeMap::new();
    let mut sets: Vec<(String, usize, usize)> = Vec::new();

    // Real definitions, first sight; the patterns compiled first (once a process).
    let compiled = Instant::now();
    rules::check(&definition(&json!({"name": "warm"})), None);
    let compiled = compiled.elapsed();
    let started = Instant::now();
    let mut checked = 0;
    for (set, file, tuned) in &REAL_SETS {
        // The third real set exists once collected (benches/trust/install-third.sh).
        let Some(text) = optional_data(file) else {
            continue;
        };
        let servers: Vec<HeldOutServer> = serde_json::from_str(&text).unwrap();
        let part = parts.entry(tuned.label()).or_default();
        let (before_n, before_f) = (part.real, part.flagged.len());
        for server in &servers {
            for tool in &server.tools {
                let name = tool["name"].as_str().unwrap_or_default().to_owned();
                if *tuned == Tuned::First {
                    by_name.insert((server.server.clone(), name.clone()), tool.clone());
                }
                let package = server.package.as_deref().unwrap_or(set);
                part.check_real(format!("{package}:{}/{name}", server.server), tool);
            }
        }
        checked += part.real - before_n;
        sets.push((
            format!("{set} ({})", tuned.label()),
            part.real - before_n,
            part.flagged.len() - before_f,
        ));
    }
    let per_tool = started.elapsed() / checked as u32;
    println!("## Real definitions (first sight)\n");
    println!("| set | tools | flagged | rate |\n|---|---|---|---|");
    for (set, total, hit) in &sets {
        println!(
            "| {set} | {total} | {hit} | {:.1}% |",
            100.0 * *hit as f64 / *total as f64
        );
    }
    println!(
        "\nrules over real definitions: {per_tool:?} a tool (patterns compiled once: {compiled:?})"
    );
    if show {
        for (name, hits) in parts.values().flat_map(|p| &p.flagged) {
            for hit in hits {
                println!("  flagged {name}: {hit}");
            }
        }
    }

    // Poisoned and rug-pulled definitions; rug pulls are of the first set's reference tools.
    for (file, tuned) in [
        ("trust/poisoned.json", Tuned::First),
        ("trust/heldout-poisoned.json", Tuned::Second),
        ("trust/third-poisoned.json", Tuned::Never),
    ] {
        let Some(text) = optional_data(file) else {
            continue;
        };
        let cases: Vec<Case> = serde_json::from_str(&text).unwrap();
        let part = parts.entry(tuned.label()).or_default();
        part.check_cases(&cases, &by_name);
        part.poisoned_table(&format!("{} (`{file}`)", tuned.label()));
    }

    let labels: Vec<&str> = parts.keys().copied().collect();
    println!(
        "\n| rule | {} | {} |\n|---|{}",
        (labels.iter().map(|l| format!("poisoned, {l}")))
            .collect::<Vec<_>>()
            .join(" | "),
        (labels.iter().map(|l| format!("real, {l}")))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(labels.len() * 2)
    );
    let count = |m: &BTreeMap<Rule, usize>, rule| m.get(&rule).copied().unwrap_or(0);
    for rule in Rule::ALL {
        let poisoned = parts.values().map(|p| count(&p.fired, rule).to_string());
        let real = parts
            .values()
            .map(|p| count(&p.real_rules, rule).to_string());
        println!(
            "| {rule} | {} |",
            poisoned.chain(real).collect::<Vec<_>>().join(" | ")
        );
    }
}
