//! Learning from use, measured by replay (issue 21 item 6): a set's queries are split in
//! two by a hash of their text; the train half is fed as usage (each query followed by a
//! call of its relevant tools), the test half is scored without and with it. Test queries
//! never occur in the train half, so any gain comes from similar queries only. Two rows
//! say what wrong usage costs: 30% of train queries also followed by a selection of a
//! wrong tool never called, and 30% whose call went to a wrong tool instead (the wrong
//! tool is the best-ranked irrelevant one: the confusion an agent would make).

use std::sync::Arc;
use std::time::Duration;

use mcp_defer::search::Boosts;
use mcp_defer::search::usage::{Event, Kind, Usage};

use super::{Loaded, apply_boosts, eval, percentiles, print_row, ranked};

/// Share of train queries given wrong usage in the "wrong" rows.
const WRONG_SHARE: u64 = 30;

/// FNV-1a, 64 bits: a split that is the same every run and build.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Which usage a train query gives.
#[derive(Clone, Copy, PartialEq)]
enum Feed {
    /// Its relevant tools, called.
    Right,
    /// As `Right`, and for 30% of queries a wrong tool selected and never called.
    WrongSelected,
    /// For 30% of queries a wrong tool called instead of the relevant ones.
    WrongCalled,
}

/// The qualified name of `(server, tool)` in the loaded catalog.
fn qualified(loaded: &Loaded, server: &str, tool: &str) -> Option<String> {
    loaded
        .catalog
        .iter()
        .find(|e| &*e.server == server && e.original_name() == tool)
        .map(|e| e.name.to_string())
}

/// The best-ranked tool of `query` that is not relevant (before any usage).
fn confusion(loaded: &Loaded, query: &eval::Query, sink: &mut Vec<Duration>) -> Option<String> {
    let got = ranked(loaded, &query.query, sink);
    let hit = eval::hits(&got, &query.relevant);
    let (server, tool) = got.iter().zip(hit).find(|(_, h)| !h)?.0;
    qualified(loaded, server, tool)
}

fn usage_of(loaded: &Loaded, train: &[eval::Query], feed: Feed) -> Usage {
    let usage = Usage::in_memory();
    let mut sink = Vec::new();
    for q in train {
        let wrong = fnv(&q.id) % 100 < WRONG_SHARE;
        let right = !(feed == Feed::WrongCalled && wrong);
        if right {
            for (server, tool) in &q.relevant {
                if let Some(name) = qualified(loaded, server, tool) {
                    usage.record(Event::now(Kind::Selected, &q.query, &name));
                    usage.record(Event::now(Kind::Called, &q.query, &name));
                }
            }
        }
        if feed != Feed::Right
            && wrong
            && let Some(name) = confusion(loaded, q, &mut sink)
        {
            usage.record(Event::now(Kind::Selected, &q.query, &name));
            if feed == Feed::WrongCalled {
                usage.record(Event::now(Kind::Called, &q.query, &name));
            }
        }
    }
    usage
}

/// The replay rows of one set and variant. `RETRIEVAL_USAGE_SWEEP="usage=0.3;usage=0.5"`
/// adds a row per spec (right usage) to pick the weights on.
pub(super) fn replay(
    loaded: &mut Loaded,
    queries: &[eval::Query],
    name: &str,
    variant: &str,
    boosts: Boosts,
) -> Result<(), String> {
    let (train, test): (Vec<eval::Query>, Vec<eval::Query>) = queries
        .iter()
        .cloned()
        .partition(|q| fnv(&q.query).is_multiple_of(2));
    let label = format!("  {name} {variant}");
    let mut sink = Vec::new();
    let none = eval::evaluate(&test, |q| ranked(loaded, q, &mut sink));
    print_row(&label, "no use", &none, &format!(" train {}", train.len()));
    let mut feeds = vec![
        ("use", Feed::Right, boosts),
        ("30%sel", Feed::WrongSelected, boosts),
        ("30%call", Feed::WrongCalled, boosts),
    ];
    if let Ok(sweep) = std::env::var("RETRIEVAL_USAGE_SWEEP") {
        for spec in sweep.split(';').filter(|s| !s.is_empty()) {
            feeds.push(("sweep", Feed::Right, apply_boosts(boosts, spec)?));
            feeds.push(("sweep30c", Feed::WrongCalled, apply_boosts(boosts, spec)?));
        }
    }
    let mut tail_spec = String::new();
    for (row, feed, weights) in feeds {
        let usage = Arc::new(usage_of(loaded, &train, feed));
        loaded.index.set_boosts(weights);
        loaded.index.set_usage(usage);
        let mut latencies = Vec::new();
        let m = eval::evaluate(&test, |q| ranked(loaded, q, &mut latencies));
        let (p50, _) = percentiles(&mut latencies);
        if row.starts_with("sweep") {
            tail_spec = format!(
                "usage={},usage_floor={},usage_words_floor={},usage_selected={}",
                weights.usage,
                weights.usage_floor,
                weights.usage_words_floor,
                weights.usage_selected
            );
        }
        let tail = format!(
            " R@5 {:+.3} MRR {:+.3} p50 {p50:.0} µs {tail_spec}",
            m.r5 - none.r5,
            m.mrr10 - none.mrr10
        );
        print_row(&label, row, &m, &tail);
    }
    loaded.index.set_boosts(boosts);
    loaded.index.set_usage(Arc::new(Usage::in_memory()));
    Ok(())
}
