//! The transformer tier's budgets (issue 14), printed after the retrieval table: first-time
//! embedding of 1,000 tools (process CPU seconds while the embedding thread works) and a
//! restart over the same vector cache (tools embedded, time to ready). The resident memory
//! the model adds is measured where it is first loaded (`model_rows` in `main.rs`).

use std::path::Path;
use std::time::{Duration, Instant};

use mcp_defer::search::transformer::{ModelDir, Progress, Transformer};
use mcp_defer::search::{SearchIndex, Semantic};

use crate::scale::{Entry, catalog};

/// Tools in the first-time embedding budget.
const TOOLS: usize = 1_000;

/// User plus system CPU time of the whole process.
fn cpu() -> Duration {
    crate::os::process_cpu()
}

/// Resident set size in MB (`VmRSS`), 0 when unknown.
pub fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// An index of `entries` with the transformer tier over the cache at `root`, until every
/// vector is ready: the embedding thread's counters, the wall time and the process CPU.
fn build(
    dir: &ModelDir,
    root: &Path,
    entries: &[Entry],
) -> Result<(Progress, Duration, Duration), String> {
    let mut index = SearchIndex::with_semantic(Semantic::Model).map_err(|e| e.to_string())?;
    index.set_transformer(Transformer::start(dir.clone(), Some(root.to_owned())));
    let (start, cpu0) = (Instant::now(), cpu());
    index
        .upsert(entries.iter().map(Entry::doc))
        .map_err(|e| e.to_string())?;
    let ready = index
        .transformer()
        .is_some_and(|t| t.wait_ready(Duration::from_secs(1800)));
    if !ready {
        return Err("the transformer's vectors did not get ready".to_owned());
    }
    let (wall, cpu) = (start.elapsed(), cpu() - cpu0);
    let progress = index
        .transformer()
        .map(Transformer::progress)
        .unwrap_or_default();
    Ok((progress, wall, cpu))
}

pub fn budgets(dir: &ModelDir) -> Result<(), String> {
    let entries = catalog(TOOLS, 0, 0);
    let root = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (p, wall, cpu) = build(dir, root.path(), &entries)?;
    println!(
        "transformer first-time embedding: {} tools ({} embedded), {:.1} s wall, {:.1} s CPU \
         (budget < 60 s CPU; includes the lexical index build, ~0.2 s)",
        p.tools,
        p.embedded,
        wall.as_secs_f64(),
        cpu.as_secs_f64()
    );
    let (p, wall, cpu) = build(dir, root.path(), &entries)?;
    println!(
        "transformer restart: {} tools, {} embedded, {} from the disk cache, ready in {:.2} s \
         wall ({:.2} s CPU, model load included)",
        p.tools,
        p.embedded,
        p.cached,
        wall.as_secs_f64(),
        cpu.as_secs_f64()
    );
    Ok(())
}
