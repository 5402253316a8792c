//! The transformer tier's embedding cost (issue 33: a query under 5 ms on 2 cores): real
//! queries embedded one at a time, as `search_tools` does, and real tool texts in batches of
//! 16 sorted by length, as the embedding thread does.
//!
//! Queries: the reference set, then the first [`PER_SET`] of BFCL, BFCL live and MetaTool
//! (`benches/data/*/queries.jsonl`); tools: each set's `servers.json` (name, description,
//! parameter names and descriptions), the first [`PER_SET`] of each. Prints, per query, the
//! wall time (p50, p90) and the CPU time of the calling thread (p50) and of the whole process
//! (mean: candle's kernels may run on other threads); per tool text, the mean wall and
//! process CPU. The machine is shared and has two speeds: compare two builds only by
//! alternating runs of each.
//!
//! `EMBED_DUMP=<file>` writes every vector (JSON, text to vector); `EMBED_AGAINST=<file>`
//! reads such a file (another build's) and prints the cosines of this build's vectors with
//! its vectors. `EMBED_ROUNDS=N` passes over the queries (default 3), `EMBED_MODEL=<dir>` the
//! model directory (default `.models/all-MiniLM-L6-v2`, from `.ci/install-peers`).
//!
//! `cargo bench --bench embed`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The binary's allocator (see `src/main.rs`), so figures match what users run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_defer::search::transformer::{Encoder, ModelDir};

#[path = "common/os.rs"]
mod os;

/// Queries and tools taken from each set after the reference set's.
const PER_SET: usize = 150;
/// Tool texts per forward pass, as the embedding thread (`transformer::BATCH`).
const BATCH: usize = 16;

fn queries(data: &Path, set: &str, limit: usize) -> Vec<String> {
    let text = std::fs::read_to_string(data.join(set).join("queries.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["query"].as_str().unwrap().to_owned()
        })
        .take(limit)
        .collect()
}

/// A tool's text: name, description, parameter names and descriptions, server (close to
/// what the index embeds, `fields::embedding_text`).
fn tools(data: &Path, set: &str, limit: usize) -> Vec<String> {
    let text = std::fs::read_to_string(data.join(set).join("servers.json")).unwrap();
    let servers: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for server in &servers {
        for tool in server["tools"].as_array().into_iter().flatten() {
            let words = |s: &str| s.replace(['_', '-', '.'], " ");
            let mut parts = vec![words(tool["name"].as_str().unwrap_or_default())];
            parts.extend(tool["description"].as_str().map(str::to_owned));
            if let Some(props) = tool["inputSchema"]["properties"].as_object() {
                for (name, prop) in props {
                    parts.push(words(name));
                    parts.extend(prop["description"].as_str().map(str::to_owned));
                }
            }
            parts.push(words(server["server"].as_str().unwrap_or_default()));
            out.push(parts.join(" \n "));
        }
    }
    out.truncate(limit);
    out
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    let na: f64 = a.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb).max(1e-12)
}

fn print_cosines(
    what: &str,
    texts: &[String],
    mine: &BTreeMap<String, Vec<f32>>,
    theirs: &BTreeMap<String, Vec<f32>>,
) {
    let mut c: Vec<f64> = texts
        .iter()
        .filter_map(|t| Some(cosine(mine.get(t)?, theirs.get(t)?)))
        .collect();
    if c.is_empty() {
        return;
    }
    c.sort_by(f64::total_cmp);
    let mean = c.iter().sum::<f64>() / c.len() as f64;
    println!(
        "cosine with {what} of the other build: {} texts, min {:.5}, p1 {:.5}, p50 {:.5}, mean {:.5}",
        c.len(),
        c[0],
        c[c.len() / 100],
        c[c.len() / 2],
        mean
    );
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = root.join("benches/data");
    let dir = std::env::var_os("EMBED_MODEL")
        .map_or_else(|| root.join(".models/all-MiniLM-L6-v2"), PathBuf::from);
    if !dir.exists() {
        println!(
            "embed bench skipped: {} absent (run .ci/install-peers)",
            dir.display()
        );
        return;
    }
    let rounds: usize = std::env::var("EMBED_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let start = Instant::now();
    let encoder = Encoder::load(&ModelDir::check(&dir).unwrap()).unwrap();
    println!(
        "model {} loaded in {:.0} ms, id {}",
        dir.display(),
        start.elapsed().as_secs_f64() * 1e3,
        encoder.id()
    );
    let mut qs = queries(&data, "reference", usize::MAX);
    for set in ["bfcl", "bfcl-live", "metatool"] {
        qs.extend(queries(&data, set, PER_SET));
    }
    let mut ts = Vec::new();
    for set in ["reference", "bfcl", "bfcl-live", "metatool"] {
        ts.extend(tools(&data, set, PER_SET));
    }
    let mut vectors: BTreeMap<String, Vec<f32>> = BTreeMap::new();
    // Warm-up: page in the weights, size the allocator's pools.
    for q in qs.iter().take(20) {
        encoder.embed(q).unwrap();
    }
    let (mut wall, mut thread) = (Vec::new(), Vec::new());
    let (cpu0, wall0) = (os::process_cpu(), Instant::now());
    for _ in 0..rounds {
        for q in &qs {
            let (w, t) = (Instant::now(), os::thread_cpu());
            let v = encoder.embed(q).unwrap();
            thread.push(os::thread_cpu() - t);
            wall.push(w.elapsed());
            vectors.insert(q.clone(), v);
        }
    }
    let (cpu, all) = (os::process_cpu() - cpu0, wall0.elapsed());
    wall.sort();
    thread.sort();
    let n = wall.len() as f64;
    let tokens: usize = qs.iter().map(|q| q.split_whitespace().count()).sum();
    println!(
        "query: {} queries x {rounds} ({:.1} words each), wall p50 {:.2} ms p90 {:.2} ms; thread CPU p50 {:.2} ms; process CPU {:.2} ms a query (wall mean {:.2} ms)",
        qs.len(),
        tokens as f64 / qs.len() as f64,
        pct(&wall, 0.5),
        pct(&wall, 0.9),
        pct(&thread, 0.5),
        cpu.as_secs_f64() * 1e3 / n,
        all.as_secs_f64() * 1e3 / n
    );
    let mut sorted: Vec<&String> = ts.iter().collect();
    sorted.sort_by_key(|t| t.len());
    let (cpu0, wall0) = (os::process_cpu(), Instant::now());
    for batch in sorted.chunks(BATCH) {
        let texts: Vec<&str> = batch.iter().map(|t| t.as_str()).collect();
        let out = encoder.embed_batch(&texts).unwrap();
        for (t, v) in texts.iter().zip(out) {
            vectors.insert((*t).to_owned(), v);
        }
    }
    let (cpu, all) = (os::process_cpu() - cpu0, wall0.elapsed());
    println!(
        "tools: {} texts ({:.0} chars each) in batches of {BATCH}, {:.2} ms wall, {:.2} ms process CPU a text",
        ts.len(),
        ts.iter().map(String::len).sum::<usize>() as f64 / ts.len() as f64,
        all.as_secs_f64() * 1e3 / ts.len() as f64,
        cpu.as_secs_f64() * 1e3 / ts.len() as f64
    );
    if let Ok(path) = std::env::var("EMBED_AGAINST") {
        let theirs: BTreeMap<String, Vec<f32>> =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        print_cosines("queries", &qs, &vectors, &theirs);
        print_cosines("tool texts", &ts, &vectors, &theirs);
    }
    if let Ok(path) = std::env::var("EMBED_DUMP") {
        std::fs::write(&path, serde_json::to_vec(&vectors).unwrap()).unwrap();
        println!("vectors written to {path}");
    }
}
