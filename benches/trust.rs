//! The suspicious-content rules measured both ways (issue 30): how many real tool
//! definitions they flag (each would be held on first sight with `trust = "pin"`, or marked
//! with `"warn"`), and how many poisoned and rug-pulled ones they catch, per attack class
//! and per rule; the hand-written rules alone, the learned rule alone, and the two together.
//!
//! Real: every tool of `benches/data/metatool/servers.json` (199 public tool APIs),
//! `benches/data/reference/servers.json` (the 50 tools of the five reference MCP servers),
//! the npm/PyPI tool lists of `benches/data/trust` (`heldout-real.json`, `third-real.json`)
//! and BFCL's function definitions; each checked as a first sight. Poisoned:
//! `benches/data/trust/*poisoned.json`, written from the published taxonomies (SOURCE.md
//! beside them); a case with a `base` is a rug pull of that real tool, checked against it
//! as the approved definition (a `tool` of `null` flips the base's `destructiveHint`).
//!
//! Every table says, per set, what was fitted to it ([`SETS`]): the hand-written patterns
//! were tuned on some sets, the learned rule (`src/trust/learned.rs`) trained on others,
//! and BFCL, BFCL live and the fourth sets (`fourth-*.json`, read when present) were used
//! by neither. On the sets it trained on, the learned rule's own figures are an upper bound;
//! the honest estimate is the cross-validation printed last: 5 folds (real servers kept
//! whole), and leave-one-set-out (train on two writers' sets, test on the third's).
//!
//! `cargo bench --bench trust` (or `cargo test --bench trust`, a debug build) prints the
//! tables of docs/benchmarks.md. `-- --show` also prints every real definition flagged and
//! every poisoned one missed. `-- --train` fits the learned rule and writes
//! `src/trust/learned.weights`; `-- --check` fits it again and fails unless the bytes are
//! the committed ones (`scripts/train_trust.sh` runs either). `-- --dump` writes every
//! definition's sentences and their static-model vectors for `scripts/trust_meaning.py`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "trust/meaning.rs"]
mod meaning;
#[path = "trust/train.rs"]
mod train;

use std::collections::BTreeMap;
use std::time::Instant;

use mcp_defer::trust::learned;
use mcp_defer::trust::{Definition, Hit, Overridden, Rule, rules};
use serde::Deserialize;
use serde_json::{Value, json};

use train::{Doc, FOLDS, PARAMS};

/// A server of a real set; the npm/PyPI sets name the package it came from.
#[derive(Deserialize)]
struct Server {
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

/// What the hand-written patterns were fitted to, by set.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tuned {
    /// Written against it.
    First,
    /// Narrowed and widened against it after a blind run (commit dc2074c).
    Second,
    /// Never used to change a pattern.
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

/// One data set: a label, its file, poisoned or real, what the patterns were tuned on, and
/// the writer group the learned rule trains on (`None`: held out from training).
struct Set {
    label: &'static str,
    file: &'static str,
    poisoned: bool,
    tuned: Tuned,
    trained: Option<usize>,
}

/// Every set, in the order of the tables. Groups for leave-one-set-out: 0 the first sets
/// (written with the rules), 1 the second (npm/PyPI servers, poisoned cases written blind),
/// 2 the third (another writer, blind to the rules).
const SETS: [Set; 11] = [
    real("metatool", "metatool/servers.json", Tuned::First, Some(0)),
    real("reference", "reference/servers.json", Tuned::First, Some(0)),
    real(
        "32 npm/PyPI servers",
        "trust/heldout-real.json",
        Tuned::Second,
        Some(1),
    ),
    real(
        "npm/PyPI servers, third set",
        "trust/third-real.json",
        Tuned::Never,
        Some(2),
    ),
    real("BFCL", "bfcl/servers.json", Tuned::Never, None),
    real("BFCL live", "bfcl-live/servers.json", Tuned::Never, None),
    real("fourth set", "trust/fourth-real.json", Tuned::Never, None),
    poisoned(
        "poisoned.json",
        "trust/poisoned.json",
        Tuned::First,
        Some(0),
    ),
    poisoned(
        "heldout-poisoned.json",
        "trust/heldout-poisoned.json",
        Tuned::Second,
        Some(1),
    ),
    poisoned(
        "third-poisoned.json",
        "trust/third-poisoned.json",
        Tuned::Never,
        Some(2),
    ),
    poisoned(
        "fourth-poisoned.json",
        "trust/fourth-poisoned.json",
        Tuned::Never,
        None,
    ),
];

const fn real(
    label: &'static str,
    file: &'static str,
    tuned: Tuned,
    trained: Option<usize>,
) -> Set {
    Set {
        label,
        file,
        poisoned: false,
        tuned,
        trained,
    }
}

const fn poisoned(
    label: &'static str,
    file: &'static str,
    tuned: Tuned,
    trained: Option<usize>,
) -> Set {
    Set {
        label,
        file,
        poisoned: true,
        tuned,
        trained,
    }
}

fn trained_label(trained: Option<usize>) -> &'static str {
    if trained.is_some() {
        "trained-on"
    } else {
        "held-out"
    }
}

/// One definition checked: where it is from, the patterns' hits, the learned features.
struct Item {
    set: usize,
    name: String,
    class: String,
    /// Scored by the learned rule: a tool's text (a flipped hint has none of its own).
    scored: bool,
    hits: Vec<Hit>,
    definition: Definition,
    /// The learned rule's features with the bits of [`PARAMS`] (for training).
    features: Vec<u32>,
    score: f32,
}

impl Item {
    fn rules(&self) -> bool {
        !self.hits.is_empty()
    }

    fn learned(&self, threshold: f32) -> bool {
        self.scored && self.score >= threshold
    }
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 {
        return "-".into();
    }
    format!("{n} ({:.1}%)", 100.0 * n as f64 / of as f64)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    let show = flag("--show");
    let model = learned::model().expect("the embedded weights load (learned.rs tests)");
    let bits = PARAMS.bits;

    // Every definition, checked by the patterns (compiled first, once a process).
    let compiled = Instant::now();
    rules::check(&definition(&json!({"name": "warm"})), None);
    let compiled = compiled.elapsed();
    let mut items: Vec<Item> = Vec::new();
    let mut by_name: BTreeMap<(String, String), Value> = BTreeMap::new();
    let mut present = [false; SETS.len()];
    let mut pattern_time = std::time::Duration::ZERO;
    let mut real_count = 0u32;
    for (k, set) in SETS.iter().enumerate().filter(|(_, s)| !s.poisoned) {
        let Some(text) = optional_data(set.file) else {
            continue;
        };
        present[k] = true;
        let servers: Vec<Server> = serde_json::from_str(&text).unwrap();
        for server in &servers {
            for tool in &server.tools {
                let name = tool["name"].as_str().unwrap_or_default().to_owned();
                if set.tuned == Tuned::First {
                    by_name.insert((server.server.clone(), name.clone()), tool.clone());
                }
                let package = server.package.as_deref().unwrap_or(set.label);
                let def = definition(tool);
                let started = Instant::now();
                let hits = rules::check(&def, None);
                pattern_time += started.elapsed();
                real_count += 1;
                items.push(Item {
                    set: k,
                    name: format!("{package}:{}/{name}", server.server),
                    class: server.server.clone(),
                    scored: true,
                    hits,
                    features: learned::features(&def, bits),
                    definition: def,
                    score: 0.0,
                });
            }
        }
    }
    for (k, set) in SETS.iter().enumerate().filter(|(_, s)| s.poisoned) {
        let Some(text) = optional_data(set.file) else {
            continue;
        };
        present[k] = true;
        let cases: Vec<Case> = serde_json::from_str(&text).unwrap();
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
            items.push(Item {
                set: k,
                name: case.id.clone(),
                class: case.class.clone(),
                scored: case.tool.is_some(),
                hits: rules::check(&now, previous.as_ref()),
                features: learned::features(&now, bits),
                definition: now,
                score: 0.0,
            });
        }
    }

    // The learned rule's training data: every scored item of a trained-on set.
    let docs: Vec<Doc> = (items.iter())
        .filter(|i| i.scored)
        .filter_map(|i| {
            let group = SETS[i.set].trained?;
            Some(Doc {
                features: i.features.clone(),
                poisoned: SETS[i.set].poisoned,
                group: if SETS[i.set].poisoned {
                    format!("case:{}", i.name)
                } else {
                    format!("{}:{}", SETS[i.set].label, i.class)
                },
                set: group,
                made: false,
            })
        })
        .collect();
    let mut docs = docs;
    let twins = twins(&items, bits);
    let twin_definitions: Vec<Definition> = twins.iter().map(|(_, d)| d.clone()).collect();
    docs.extend(twins.into_iter().map(|(doc, _)| doc));
    let docs: Vec<&Doc> = docs.iter().collect();

    if flag("--sweep") {
        sweep(&docs);
        return;
    }
    let started = Instant::now();
    let oof = train::out_of_fold(&docs, &PARAMS, FOLDS);
    let threshold = train::threshold(&docs, &oof);
    let cv_time = started.elapsed();
    if flag("--dump") {
        for item in &mut items {
            item.score = model.score(&item.definition);
        }
        dump(
            &items,
            &docs,
            &oof,
            threshold,
            &twin_definitions,
            model.threshold,
        );
        return;
    }
    if flag("--train") || flag("--check") {
        let mut fitted = train::train(&docs, &PARAMS);
        fitted.threshold = threshold;
        let bytes = fitted.write();
        let path = format!("{}/src/trust/learned.weights", env!("CARGO_MANIFEST_DIR"));
        if flag("--train") {
            std::fs::write(&path, &bytes).unwrap();
            println!(
                "wrote {path}: {} bytes, threshold {threshold:.4} (5-fold CV, at most {}% real over it)",
                bytes.len(),
                100.0 * train::MAX_FALSE
            );
        } else {
            let committed = std::fs::read(&path).unwrap();
            assert!(
                committed == bytes,
                "{path} is not what training gives now: run scripts/train_trust.sh and commit it"
            );
            println!("{path}: training gives the same {} bytes", bytes.len());
        }
        return;
    }

    // The embedded model's scores (what ships), and its cost a definition.
    let started = Instant::now();
    for item in &mut items {
        item.score = model.score(&item.definition);
    }
    let mut learned_time = std::time::Duration::ZERO;
    for (k, set) in SETS.iter().enumerate() {
        if !set.poisoned && present[k] {
            let text = optional_data(set.file).unwrap();
            let servers: Vec<Server> = serde_json::from_str(&text).unwrap();
            let started = Instant::now();
            for tool in servers.iter().flat_map(|s| &s.tools) {
                std::hint::black_box(learned::check(&definition(tool)));
            }
            learned_time += started.elapsed();
        }
    }
    let _ = started;
    let t = model.threshold;

    println!("## What each set was fitted to\n");
    println!("| set | patterns | learned rule |\n|---|---|---|");
    for (k, set) in SETS.iter().enumerate().filter(|(k, _)| present[*k]) {
        let _ = k;
        println!(
            "| {} | {} | {} |",
            set.label,
            set.tuned.label(),
            trained_label(set.trained)
        );
    }

    println!("\n## Real definitions (first sight): flagged\n");
    println!("| set | tools | patterns | learned | both |\n|---|---|---|---|---|");
    for (k, set) in SETS
        .iter()
        .enumerate()
        .filter(|(k, s)| present[*k] && !s.poisoned)
    {
        let of: Vec<&Item> = items.iter().filter(|i| i.set == k).collect();
        let count = |f: &dyn Fn(&Item) -> bool| of.iter().filter(|i| f(i)).count();
        println!(
            "| {} ({}; {}) | {} | {} | {} | {} |",
            set.label,
            set.tuned.label(),
            trained_label(set.trained),
            of.len(),
            pct(count(&|i| i.rules()), of.len()),
            pct(count(&|i| i.learned(t)), of.len()),
            pct(count(&|i| i.rules() || i.learned(t)), of.len()),
        );
    }
    println!(
        "\npatterns: {:?} a tool (compiled once: {compiled:?}); learned rule: {:?} a tool \
         (features and score, {} buckets, threshold {t:.4})",
        pattern_time / real_count.max(1),
        learned_time / real_count.max(1),
        1u32 << model.bits
    );
    if show {
        for item in items.iter().filter(|i| !SETS[i.set].poisoned) {
            for hit in &item.hits {
                println!("  flagged {}: {hit}", item.name);
            }
            if item.learned(t) {
                println!("  flagged {}: learned, score {:.3}", item.name, item.score);
            }
        }
    }

    println!("\n## Poisoned and rug-pulled definitions: caught\n");
    println!("| set | cases | patterns | learned | both |\n|---|---|---|---|---|");
    for (k, set) in SETS
        .iter()
        .enumerate()
        .filter(|(k, s)| present[*k] && s.poisoned)
    {
        let of: Vec<&Item> = items.iter().filter(|i| i.set == k).collect();
        let count = |f: &dyn Fn(&Item) -> bool| of.iter().filter(|i| f(i)).count();
        println!(
            "| {} ({}; {}) | {} | {} | {} | {} |",
            set.label,
            set.tuned.label(),
            trained_label(set.trained),
            of.len(),
            pct(count(&|i| i.rules()), of.len()),
            pct(count(&|i| i.learned(t)), of.len()),
            pct(count(&|i| i.rules() || i.learned(t)), of.len()),
        );
        if show {
            for item in of.iter().filter(|i| !i.rules() && !i.learned(t)) {
                println!("  missed {}: score {:.3}", item.name, item.score);
            }
        }
    }
    // By class, on the sets each part did not fit: the third for the patterns, the fourth
    // for both.
    for (k, set) in SETS.iter().enumerate().filter(|(k, s)| {
        present[*k] && s.poisoned && (s.tuned == Tuned::Never || s.trained.is_none())
    }) {
        println!(
            "\n{} by class (patterns {}, learned {}):\n",
            set.label,
            set.tuned.label(),
            trained_label(set.trained)
        );
        class_table((items.iter().filter(|i| i.set == k)).map(|i| (i, i.learned(t))));
    }

    println!(
        "\n| rule | {} |\n|---|{}",
        (SETS.iter().enumerate())
            .filter(|(k, _)| present[*k])
            .map(|(_, s)| s.label)
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(present.iter().filter(|p| **p).count())
    );
    for rule in Rule::ALL {
        let row = (SETS.iter().enumerate().filter(|(k, _)| present[*k])).map(|(k, _)| {
            let of = items.iter().filter(|i| i.set == k);
            if rule == Rule::Learned {
                of.filter(|i| i.learned(t)).count()
            } else {
                of.filter(|i| i.hits.iter().any(|h| h.rule == rule)).count()
            }
        });
        println!(
            "| {rule} | {} |",
            row.map(|n| n.to_string()).collect::<Vec<_>>().join(" | ")
        );
    }

    // Cross-validation: the honest figures for the sets the learned rule trained on.
    let trained_items: Vec<&Item> = (items.iter())
        .filter(|i| i.scored && SETS[i.set].trained.is_some())
        .collect();
    println!(
        "\n## Learned rule, cross-validated on its training sets ({FOLDS} folds, real servers \
         kept whole; threshold {threshold:.4} from these out-of-fold scores: at most {}% of \
         real over it)\n",
        100.0 * train::MAX_FALSE
    );
    cv_table(&trained_items, &oof, threshold);
    println!("\nout-of-fold poisoned, by class:\n");
    class_table(
        (trained_items.iter().zip(&oof))
            .filter(|(i, _)| SETS[i.set].poisoned)
            .map(|(i, s)| (*i, *s >= threshold)),
    );

    // If `sensitive-data` (the patterns' most false-hold-prone rule) were left to the
    // learned rule: the poisoned cases only it caught that the learned rule misses out of
    // fold, and the real definitions only it flagged.
    let alone = |i: &Item| i.hits.len() == 1 && i.hits[0].rule == Rule::SensitiveData;
    let lost = (trained_items.iter().zip(&oof))
        .filter(|(i, s)| SETS[i.set].poisoned && alone(i) && **s < threshold)
        .count();
    let kept = (trained_items.iter().zip(&oof))
        .filter(|(i, s)| SETS[i.set].poisoned && alone(i) && **s >= threshold)
        .count();
    let saved = (items.iter())
        .filter(|i| !SETS[i.set].poisoned && alone(i) && !i.learned(t))
        .count();
    let saved_held_out = (items.iter())
        .filter(|i| {
            !SETS[i.set].poisoned && SETS[i.set].tuned == Tuned::Never && alone(i) && !i.learned(t)
        })
        .count();
    println!(
        "
sensitive-data left to the learned rule: of the poisoned it alone caught, {kept} \
         the learned rule catches out of fold and {lost} it misses; real definitions it \
         alone flagged: {saved} ({saved_held_out} in sets the patterns were not tuned on)"
    );

    // Leave one writer's sets out: train on the other two, threshold by inner CV on them.
    println!(
        "\n## Learned rule, leave-one-set-out (trained on the other two groups; threshold by {FOLDS}-fold CV inside them)\n"
    );
    println!(
        "| left out | threshold | real flagged: learned | both | poisoned caught: learned | both |\n|---|---|---|---|---|---|"
    );
    for group in 0..3 {
        let inside: Vec<&Doc> = docs.iter().copied().filter(|d| d.set != group).collect();
        let inner = train::out_of_fold(&inside, &PARAMS, FOLDS);
        let cut = train::threshold(&inside, &inner);
        let fitted = train::train(&inside, &PARAMS);
        let out: Vec<&Item> = (trained_items.iter().copied())
            .filter(|i| SETS[i.set].trained == Some(group))
            .collect();
        let scores: Vec<f32> = out
            .iter()
            .map(|i| fitted.score_features(&i.features))
            .collect();
        let names: Vec<&str> = (SETS.iter())
            .filter(|s| s.trained == Some(group))
            .map(|s| s.label)
            .collect();
        let row = |poisoned: bool| {
            let of: Vec<(&&Item, &f32)> = (out.iter().zip(&scores))
                .filter(|(i, _)| SETS[i.set].poisoned == poisoned)
                .collect();
            let l = of.iter().filter(|(_, s)| **s >= cut).count();
            let b = of.iter().filter(|(i, s)| **s >= cut || i.rules()).count();
            (pct(l, of.len()), pct(b, of.len()))
        };
        let (rl, rb) = row(false);
        let (pl, pb) = row(true);
        println!(
            "| {} | {cut:.4} | {rl} | {rb} | {pl} | {pb} |",
            names.join(", ")
        );
    }
    println!(
        "\nmodel: {} buckets, {} non-zero weights, {} bytes embedded; {FOLDS}-fold CV took {cv_time:?}",
        1u32 << model.bits,
        model.weights.iter().filter(|w| **w != 0.0).count(),
        learned::embedded_len()
    );
}

/// The benign twin of each trained-on poisoned case, a real-looking negative for training:
/// its name, the first sentence of its description and its required properties (a
/// poisoned case is mostly a toy tool, weather or notes, with a request added; without
/// twins a plain "Forecast for a city." scored as poisoned). A twin any pattern flags, or
/// (hidden characters included), is left out; each stays in its case's fold.
fn twins(items: &[Item], bits: u32) -> Vec<(Doc, Definition)> {
    let mut out = Vec::new();
    for item in items.iter().filter(|i| i.scored && SETS[i.set].poisoned) {
        let Some(group) = SETS[item.set].trained else {
            continue;
        };
        let tool = item.definition.value();
        let description = tool["description"].as_str().unwrap_or_default();
        let first = match description.find(". ") {
            Some(end) => &description[..=end],
            None => description,
        };
        let first = first.lines().next().unwrap_or_default();
        let required: Vec<&str> = (tool["inputSchema"]["required"].as_array())
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let properties: serde_json::Map<String, Value> = required
            .iter()
            .map(|name| ((*name).to_owned(), json!({"type": "string"})))
            .collect();
        let twin = definition(&json!({
            "name": tool["name"],
            "description": first,
            "inputSchema": {"type": "object", "properties": properties, "required": required},
        }));
        if first.is_empty() || !rules::check(&twin, None).is_empty() {
            continue;
        }
        out.push((
            Doc {
                features: learned::features(&twin, bits),
                poisoned: false,
                group: format!("case:{}", item.name),
                set: group,
                made: true,
            },
            twin,
        ));
    }
    out
}

/// Caught by class: patterns, the learned rule, either.
fn class_table<'a>(items: impl Iterator<Item = (&'a Item, bool)>) {
    let mut classes: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    for (item, l) in items {
        let row = classes.entry(item.class.clone()).or_default();
        row[0] += 1;
        row[1] += usize::from(item.rules());
        row[2] += usize::from(l);
        row[3] += usize::from(l || item.rules());
    }
    println!("| class | cases | patterns | learned | both |\n|---|---|---|---|---|");
    let mut all = [0usize; 4];
    for (class, row) in &classes {
        for (a, r) in all.iter_mut().zip(row) {
            *a += r;
        }
        println!(
            "| {class} | {} | {} | {} | {} |",
            row[0],
            pct(row[1], row[0]),
            pct(row[2], row[0]),
            pct(row[3], row[0])
        );
    }
    println!(
        "| all | {} | {} | {} | {} |",
        all[0],
        pct(all[1], all[0]),
        pct(all[2], all[0]),
        pct(all[3], all[0])
    );
}

/// Out-of-fold figures by set: real flagged and poisoned caught, learned alone and with
/// the patterns.
fn cv_table(items: &[&Item], scores: &[f32], threshold: f32) {
    println!("| set | definitions | learned | patterns + learned |\n|---|---|---|---|");
    for (k, set) in SETS.iter().enumerate() {
        let of: Vec<(&&Item, &f32)> = (items.iter().zip(scores))
            .filter(|(i, _)| i.set == k)
            .collect();
        if of.is_empty() {
            continue;
        }
        let l = of.iter().filter(|(_, s)| **s >= threshold).count();
        let b = of
            .iter()
            .filter(|(i, s)| **s >= threshold || i.rules())
            .count();
        let what = if set.poisoned { "caught" } else { "flagged" };
        println!(
            "| {} ({what}) | {} | {} | {} |",
            set.label,
            of.len(),
            pct(l, of.len()),
            pct(b, of.len())
        );
    }
}

/// Cross-validated catch at the CV threshold for a grid of fitting choices (`-- --sweep`):
/// how [`PARAMS`] was chosen, on the training data only.
fn sweep(docs: &[&Doc]) {
    println!(
        "| bits | epochs | rate | l2 | threshold | caught (5-fold) | real over |\n|---|---|---|---|---|---|---|"
    );
    for bits in [PARAMS.bits] {
        for epochs in [PARAMS.epochs] {
            for rate in [PARAMS.rate] {
                for l2 in [PARAMS.l2, 1e-3] {
                    let params = train::Params {
                        bits,
                        epochs,
                        rate,
                        l2,
                        ..PARAMS
                    };
                    let oof = train::out_of_fold(docs, &params, FOLDS);
                    let t = train::threshold(docs, &oof);
                    let (mut p, mut pc, mut n, mut nc) = (0, 0, 0, 0);
                    for (d, s) in docs.iter().zip(&oof) {
                        if d.poisoned {
                            p += 1;
                            pc += usize::from(*s >= t);
                        } else {
                            n += 1;
                            nc += usize::from(*s >= t);
                        }
                    }
                    let mut real: Vec<f32> = docs
                        .iter()
                        .zip(&oof)
                        .filter(|(d, _)| !d.poisoned)
                        .map(|(_, s)| *s)
                        .collect();
                    real.sort_by(|a, b| b.total_cmp(a));
                    let at = |share: f64| {
                        let cut = real[(share * real.len() as f64) as usize];
                        docs.iter()
                            .zip(&oof)
                            .filter(|(d, s)| d.poisoned && **s > cut)
                            .count()
                    };
                    println!(
                        "| {bits} | {epochs} | {rate} | {l2} | {t:.4} | {} | {} | at 1%: {} 2%: {} 5%: {} |",
                        pct(pc, p),
                        pct(nc, n),
                        at(0.01),
                        at(0.02),
                        at(0.05)
                    );
                }
            }
        }
    }
}

/// `-- --dump`: every definition's sentences (`trust/meaning.rs`) and their static-model
/// vectors, for `scripts/trust_meaning.py`: `target/trust-meaning/items.jsonl` (one line a
/// definition: set, labels, the patterns' verdict, the learned rule's out-of-fold and
/// embedded scores, its sentences and the rows of their vectors) and `vectors.f32` (rows of
/// the static model's dimensions, little-endian f32).
fn dump(
    items: &[Item],
    docs: &[&Doc],
    oof: &[f32],
    cv_threshold: f32,
    twins: &[Definition],
    threshold: f32,
) {
    use std::io::Write;
    let static_model = mcp_defer::search::StaticModel::get().expect("the static model loads");
    let dir = format!("{}/target/trust-meaning", env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut lines =
        std::io::BufWriter::new(std::fs::File::create(format!("{dir}/items.jsonl")).unwrap());
    let mut vectors =
        std::io::BufWriter::new(std::fs::File::create(format!("{dir}/vectors.f32")).unwrap());
    let mut row = 0usize;
    let mut trained = 0usize;
    let (mut spent, mut definitions) = (std::time::Duration::ZERO, 0u32);
    let mut write = |record: Value, definition: &Definition| {
        let mut sentences = Vec::new();
        let started = Instant::now();
        let embedded: Vec<_> = (meaning::sentences(definition).into_iter())
            .map(|(field, sentence)| {
                let v = static_model.embed(&sentence);
                (field, sentence, v)
            })
            .collect();
        spent += started.elapsed();
        definitions += 1;
        for (field, sentence, v) in embedded {
            let Some(v) = v else {
                continue;
            };
            for x in &v {
                vectors.write_all(&x.to_le_bytes()).unwrap();
            }
            sentences.push(json!([field, sentence, row]));
            row += 1;
        }
        let mut record = record;
        record["sentences"] = json!(sentences);
        writeln!(lines, "{record}").unwrap();
    };
    for item in items {
        let set = &SETS[item.set];
        let in_training = item.scored && set.trained.is_some();
        let oof_score = in_training.then(|| {
            trained += 1;
            oof[trained - 1]
        });
        let group = if set.poisoned {
            format!("case:{}", item.name)
        } else {
            format!("{}:{}", set.label, item.class)
        };
        write(
            json!({
                "set": set.label, "poisoned": set.poisoned, "trained": set.trained,
                "name": item.name, "class": item.class, "group": group, "scored": item.scored,
                "patterns": item.rules(), "oof": oof_score, "score": item.score,
                "learned": item.learned(threshold), "made": false,
            }),
            &item.definition,
        );
    }
    for (k, twin) in twins.iter().enumerate() {
        let doc = docs[trained + k];
        write(
            json!({
                "set": "twin", "poisoned": false, "trained": doc.set, "name": doc.group,
                "class": "twin", "group": doc.group, "scored": true, "patterns": false,
                "oof": oof[trained + k], "score": 0.0, "learned": false, "made": true,
            }),
            twin,
        );
    }
    println!(
        "wrote {dir}: {row} sentence vectors, {:?} a definition to cut and embed; \
         learned CV threshold {cv_threshold:.4}, embedded {threshold:.4}",
        spent / definitions.max(1)
    );
}
