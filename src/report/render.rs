//! The report as people read it (a table, a sparkline per session, one line per re-write)
//! and as scripts read it (`--json`: the same figures, nothing rounded).

use super::{Analysed, Report, Totals};

/// Eight block heights for the sparklines.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// Widest sparkline; longer sessions are bucketed (each cell the largest of its requests).
const SPARK_WIDTH: usize = 60;

/// The JSON form: `{encoding, sessions: [{client, id, path, mcp_defer, requests, notes,
/// rewrites, totals}], total, skipped_files}`.
///
/// # Errors
/// Never in practice (plain data); serde_json's error otherwise.
pub(crate) fn json(report: &Report) -> serde_json::Result<String> {
    serde_json::to_string_pretty(report).map(|s| s + "\n")
}

/// The text form.
pub(crate) fn text(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<10} {:<6} {:>5} {:>10} {:>11} {:>11} {:>9} {:>9} {:>9} {:>10}  {}\n",
        "session",
        "client",
        "reqs",
        "input",
        "cache read",
        "cache write",
        "tools/req",
        "re-writes",
        "after tool",
        "re-billed",
        "mcp-defer"
    ));
    for a in &report.sessions {
        session(&mut out, a);
    }
    if report.sessions.len() != 1 {
        row(
            &mut out,
            &format!("total ({})", report.total.sessions),
            "",
            &report.total,
            None,
            "",
        );
    }
    if report.skipped_files > 0 {
        out.push_str(&format!(
            "{} file(s) held no model request and are not shown.\n",
            report.skipped_files
        ));
    }
    out.push_str(&format!(
        "\ninput: tokens billed at the full rate; cache read/write as the provider reported \
them. tools/req: tool-schema tokens sent per request (largest; {} count, an \
approximation for Claude; ? = not in the transcript).\nre-write: a request whose cache read \
is >= {} tokens below what the previous request left cached (Claude: its read + write; \
Codex: its whole prompt); re-billed = that difference. \"after tool\": re-writes that \
follow a tool-list change (select_tools, list_changed, a native tool load) and no pause \
longer than the cache lifetime.\n",
        report.encoding,
        super::MIN_REWRITE_TOKENS
    ));
    out
}

fn session(out: &mut String, a: &Analysed) {
    let s = &a.session;
    let short: String = s.id.chars().take(8).collect();
    let tools = (s.requests.iter().filter_map(|r| r.tool_tokens)).max();
    let defer = if s.mcp_defer { "yes" } else { "no" };
    row(out, &short, s.client.name(), &a.totals, tools, defer);
    let written: Vec<u64> = s.requests.iter().map(|r| r.cache_write).collect();
    let read: Vec<u64> = s.requests.iter().map(|r| r.cache_read).collect();
    out.push_str(&format!("  written {}\n", sparkline(&written)));
    out.push_str(&format!("  read    {}\n", sparkline(&read)));
    for w in &a.rewrites {
        let mut why: Vec<String> = w.after.iter().map(|c| c.describe()).collect();
        if w.expired {
            why.insert(
                0,
                format!(
                    "pause of {} s, longer than the cache lifetime",
                    w.idle_secs.unwrap_or(0)
                ),
            );
        }
        if why.is_empty() {
            why.push("no tool-list change seen".into());
        }
        out.push_str(&format!(
            "  re-write at request {}: cache read {} -> {}, written {}, re-billed {}; after {}\n",
            w.request,
            group(w.cached_before),
            group(w.cache_read),
            group(w.cache_write),
            group(w.rebilled),
            why.join("; ")
        ));
    }
    for note in &s.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
}

fn row(out: &mut String, name: &str, client: &str, t: &Totals, tools: Option<u64>, defer: &str) {
    let tools = match tools {
        Some(n) => group(n),
        None if t.requests_without_tools < t.requests => String::new(),
        None => "?".into(),
    };
    out.push_str(&format!(
        "{:<10} {:<6} {:>5} {:>10} {:>11} {:>11} {:>9} {:>9} {:>9} {:>10}  {}\n",
        name,
        client,
        t.requests,
        group(t.input),
        group(t.cache_read),
        group(t.cache_write),
        tools,
        t.rewrites,
        t.rewrites_after_tool_change,
        group(t.rebilled),
        defer
    ));
}

/// `values` as block characters scaled to their maximum (all lowest when every value is 0).
pub(crate) fn sparkline(values: &[u64]) -> String {
    let cells: Vec<u64> = if values.len() <= SPARK_WIDTH {
        values.to_vec()
    } else {
        let per = values.len().div_ceil(SPARK_WIDTH);
        values
            .chunks(per)
            .map(|c| c.iter().copied().max().unwrap_or(0))
            .collect()
    };
    let max = cells.iter().copied().max().unwrap_or(0);
    cells
        .iter()
        .map(|&v| {
            if max == 0 || v == 0 {
                '·'
            } else {
                // 1..=8 eighths of the maximum, at least the lowest bar for any non-zero.
                let level = (v * 8).div_ceil(max).clamp(1, 8) as usize;
                BARS[level - 1]
            }
        })
        .collect()
}

/// `1234567` as `1,234,567`.
pub(crate) fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_scales_to_the_maximum_and_marks_zero() {
        assert_eq!(sparkline(&[0, 1, 4, 8]), "·▁▄█");
        assert_eq!(sparkline(&[0, 0]), "··");
        assert_eq!(sparkline(&(0..120).collect::<Vec<_>>()).chars().count(), 60);
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(120_845), "120,845");
        assert_eq!(group(1_234_567), "1,234,567");
    }
}
