//! Search at catalog scale: `search_tools`-style ranking over 1k, 10k and 50k tools, building
//! a 10k index, and upserting one 20-tool server into it.
//!
//! The catalog is the real reference servers (`benches/data/reference/servers.json`, real
//! schemas) replicated under distinct server names; each replica's descriptions get a
//! MetaTool description appended (chosen by a fixed stride) so terms are not all equally
//! frequent and the index is not degenerate. Queries are the reference set's.
//!
//! `cargo bench --bench search` prints a percentile table (p50/p99 from a plain loop, since
//! criterion reports means) and then runs the criterion groups. `-- --percentiles` prints
//! the table only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The binary's allocator (see `src/main.rs`), so figures match what users run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use mcp_defer::search::{SearchIndex, Semantic, StaticModel};
use serde::Deserialize;

#[path = "common/scale.rs"]
mod scale;
use scale::{Entry, catalog, data};

#[derive(Deserialize)]
struct Query {
    query: String,
}

fn queries() -> Vec<String> {
    let text = std::fs::read_to_string(data().join("reference/queries.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Query>(l).unwrap().query)
        .collect()
}

fn build(entries: &[Entry]) -> SearchIndex {
    build_with(entries, Semantic::default())
}

fn build_with(entries: &[Entry], semantic: Semantic) -> SearchIndex {
    let mut index = SearchIndex::with_semantic(semantic).unwrap();
    index.upsert(entries.iter().map(Entry::doc)).unwrap();
    index
}

/// A 20-tool server not in `base`: ids and server index past the end.
fn extra_server(base: &[Entry]) -> Vec<Entry> {
    catalog(20, base.len() as u32 + 1_000_000, 1_000_000)
        .into_iter()
        .map(|mut e| {
            e.server = "extra".to_owned();
            e.server_index = 1_000_000;
            e.qualified = format!("extra__{}", e.tool.name);
            e
        })
        .collect()
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// p50/p99 per size from a plain loop, build time and upsert costs.
fn percentiles() {
    let queries = queries();
    // The model's one-time parse is not part of any build or query below.
    let start = Instant::now();
    StaticModel::get().unwrap();
    println!(
        "static model parsed in {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    println!(
        "{:>7} {:>8} {:>9} {:>9} {:>9} {:>10}",
        "tools", "semantic", "p50 µs", "p99 µs", "max µs", "build ms"
    );
    for n in [1_000, 10_000, 50_000] {
        let entries = catalog(n, 0, 0);
        for (label, semantic) in [("off", Semantic::Off), ("static", Semantic::Static)] {
            let start = Instant::now();
            let index = build_with(&entries, semantic);
            let built = start.elapsed();
            for q in &queries {
                std::hint::black_box(index.search(q, 10, None));
            }
            let mut times = Vec::new();
            for _ in 0..5 {
                for q in &queries {
                    let start = Instant::now();
                    std::hint::black_box(index.search(q, 10, None));
                    times.push(start.elapsed());
                }
            }
            times.sort();
            println!(
                "{n:>7} {label:>8} {:>9.1} {:>9.1} {:>9.1} {:>10.1}",
                micros(pct(&times, 0.5)),
                micros(pct(&times, 0.99)),
                micros(times[times.len() - 1]),
                built.as_secs_f64() * 1e3
            );
        }
    }
    let entries = catalog(10_000, 0, 0);
    let mut index = build(&entries);
    let extra = extra_server(&entries);
    let mut add = Vec::new();
    let mut replace = Vec::new();
    for round in 0..10 {
        // A new server's tools (first round), then the same server re-listing them.
        let start = Instant::now();
        index.upsert(extra.iter().map(Entry::doc)).unwrap();
        if round == 0 {
            add.push(start.elapsed());
        } else {
            replace.push(start.elapsed());
        }
    }
    // A re-list of a server inside the big segment.
    let inner: Vec<&Entry> = entries.iter().filter(|e| e.server_index == 7).collect();
    let start = Instant::now();
    index.upsert(inner.iter().map(|e| e.doc())).unwrap();
    let inner_replace = start.elapsed();
    replace.sort();
    println!(
        "upsert into 10k: new 20-tool server {:.1} ms; same server re-listed p50 {:.1} ms; \
         re-list of a server built in ({} tools) {:.1} ms",
        add[0].as_secs_f64() * 1e3,
        pct(&replace, 0.5).as_secs_f64() * 1e3,
        inner.len(),
        inner_replace.as_secs_f64() * 1e3
    );
}

fn main() {
    let only_table = std::env::args().any(|a| a == "--percentiles");
    percentiles();
    if only_table {
        return;
    }
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let queries = queries();
    for n in [1_000, 10_000, 50_000] {
        let index = build(&catalog(n, 0, 0));
        let mut i = 0;
        c.bench_function(&format!("search/{n}"), |b| {
            b.iter(|| {
                i = (i + 1) % queries.len();
                index.search(&queries[i], 10, None)
            })
        });
    }
    let entries = catalog(10_000, 0, 0);
    c.bench_function("build/10000", |b| b.iter(|| build(&entries)));
    let extra = extra_server(&entries);
    c.bench_function("upsert_new_server/10000", |b| {
        b.iter_batched(
            || build(&entries),
            |mut index| {
                index.upsert(extra.iter().map(Entry::doc)).unwrap();
                index
            },
            BatchSize::PerIteration,
        )
    });
    c.final_summary();
}
