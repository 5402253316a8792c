//! Memory per tier (issue 21: "RSS of the default tier at 1k tools within 40 MB of
//! `semantic = "off"`"). Each tier is measured in a process of its own, this bench run
//! again with [`CHILD_ENV`] set: the allocator keeps what an earlier tier freed, so tiers
//! measured one after another in one process would share memory and read low.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mcp_defer::search::transformer::{ModelDir, Transformer};
use mcp_defer::search::{SearchIndex, Semantic};

use crate::scale::{Entry, catalog};

/// Set in a child: the tier it measures (`off`, `static`, `model:<dir>`).
const CHILD_ENV: &str = "RETRIEVAL_MEMORY_CHILD";
/// Tools in the measured index.
const TOOLS: usize = 1_000;

/// `VmRSS` and `VmHWM` in MB (0 where unknown: not Linux).
fn rss() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// In a child: builds the index of [`TOOLS`] tools for its tier, prints `rss hwm` and
/// returns true. Returns false in the parent.
pub fn child() -> Result<bool, String> {
    let Ok(tier) = std::env::var(CHILD_ENV) else {
        return Ok(false);
    };
    let entries: Vec<Entry> = catalog(TOOLS, 0, 0);
    let (semantic, model) = match tier.split_once(':') {
        Some(("model", dir)) => (Semantic::Model, Some(dir.to_owned())),
        _ => (
            Semantic::parse(&tier).ok_or(format!("unknown tier {tier}"))?,
            None,
        ),
    };
    let mut index = SearchIndex::with_semantic(semantic).map_err(|e| e.to_string())?;
    if let Some(dir) = model {
        let dir = ModelDir::check(Path::new(&dir)).map_err(|e| e.to_string())?;
        let cache = std::env::var_os("RETRIEVAL_MEMORY_CACHE").map(Into::into);
        index.set_transformer(Transformer::start(dir, cache));
    }
    index
        .upsert(entries.iter().map(Entry::doc))
        .map_err(|e| e.to_string())?;
    if let Some(t) = index.transformer()
        && !t.wait_ready(Duration::from_secs(1800))
    {
        return Err("the transformer's vectors did not get ready".to_owned());
    }
    // One search, so whatever a first query allocates is counted.
    std::hint::black_box(index.search("send an email to the team", 10, None));
    let (now, peak) = rss();
    println!("{now:.1} {peak:.1}");
    Ok(true)
}

/// Each tier's RSS over [`TOOLS`] tools, beside `off`'s. The model tier runs over a vector
/// cache filled first (a restart), so its figure is the model's, not the embedding's.
pub fn print(model: Option<&ModelDir>) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let cache = tempfile::tempdir().map_err(|e| e.to_string())?;
    let measure = |tier: &str| -> Result<(f64, f64), String> {
        let out = Command::new(&exe)
            .env(CHILD_ENV, tier)
            .env("RETRIEVAL_MEMORY_CACHE", cache.path())
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut fields = text.split_whitespace().map(str::parse::<f64>);
        match (out.status.success(), fields.next(), fields.next()) {
            (true, Some(Ok(now)), Some(Ok(peak))) => Ok((now, peak)),
            _ => Err(format!(
                "memory child {tier}: {}",
                String::from_utf8_lossy(&out.stderr)
            )),
        }
    };
    let (off, off_peak) = measure("off")?;
    println!("memory at {TOOLS} tools, one process per tier (VmRSS once ready / peak VmHWM):");
    println!("  off     {off:>6.1} MB / {off_peak:>6.1} MB");
    let mut tiers = vec![("static".to_owned(), "static")];
    if let Some(dir) = model {
        tiers.push((format!("model:{}", dir.path().display()), "model"));
    }
    for (tier, name) in &tiers {
        if *name == "model" {
            measure(tier)?; // fills the vector cache
        }
        let (now, peak) = measure(tier)?;
        println!(
            "  {name:<7} {now:>6.1} MB / {peak:>6.1} MB: +{:.1} MB over off (budget for the \
             default tier: < 40 MB), peak +{:.1} MB",
            now - off,
            peak - off_peak
        );
    }
    Ok(())
}
