//! `mcp-defer report` on transcripts: hand-made ones with known figures, and ones the real
//! Claude Code and Codex CLIs wrote in the client kit (bench/cache_cost), scrubbed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::{BIN, assert_contains_all, stderr, stdout};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report")
}

/// `mcp-defer report <args>` with HOME pointing at an empty folder, so the defaults can
/// never read the real user's transcripts.
fn report(args: &[&str]) -> Output {
    let home = tempfile::tempdir().expect("temp home");
    Command::new(BIN)
        .args(["report"])
        .args(args)
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .expect("run mcp-defer report")
}

fn json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = report(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn fixture(name: &str) -> String {
    fixtures().join(name).to_string_lossy().into_owned()
}

#[test]
fn report_finds_the_rewrite_that_follows_select_tools_in_a_claude_transcript() {
    let r = json(&[&fixture("claude_rewrite.jsonl")]);
    let s = &r["sessions"][0];
    assert_eq!(s["client"], "claude");
    assert_eq!(s["id"], "11111111-2222-4333-8444-555555555555");
    assert_eq!(s["mcp_defer"], true);
    // Five responses: the one written as two lines counts once; the subagent's and the
    // local error are left out.
    let reqs = s["requests"].as_array().unwrap();
    let usage: Vec<[u64; 4]> = reqs
        .iter()
        .map(|q| {
            let n = |k: &str| q[k].as_u64().unwrap();
            [n("input"), n("cache_read"), n("cache_write"), n("output")]
        })
        .collect();
    assert_eq!(
        usage,
        [
            [3, 0, 84_858, 25],
            [3, 84_858, 0, 20],
            [3, 0, 120_845, 30],
            [3, 120_845, 500, 5],
            [3, 0, 121_400, 5]
        ]
    );
    let rewrites = s["rewrites"].as_array().unwrap();
    assert_eq!(rewrites.len(), 2, "{rewrites:#?}");
    let first = &rewrites[0];
    assert_eq!(first["request"], 3);
    assert_eq!(first["cached_before"], 84_858);
    assert_eq!(first["cache_read"], 0);
    assert_eq!(first["cache_write"], 120_845);
    assert_eq!(first["rebilled"], 84_858);
    assert_eq!(first["expired"], false);
    let kinds: Vec<&str> = (first["after"].as_array().unwrap().iter())
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["select_tools", "list_changed", "request_tools"]);
    assert_eq!(first["after"][0]["names"][0], "time__get_current_time");
    assert_eq!(
        first["after"][2]["added"][0],
        "mcp__defer__time__get_current_time"
    );
    // The second one follows a 12-minute pause: expiry, not a tool change.
    let second = &rewrites[1];
    assert_eq!(second["request"], 5);
    assert_eq!(second["rebilled"], 121_345);
    assert_eq!(second["idle_secs"], 717);
    assert_eq!(second["expired"], true);
    let t = &s["totals"];
    assert_eq!(t["requests"], 5);
    assert_eq!(t["input"], 15);
    assert_eq!(t["cache_read"], 205_703);
    assert_eq!(t["cache_write"], 327_603);
    assert_eq!(t["output"], 85);
    assert_eq!(t["rewrites"], 2);
    assert_eq!(t["rebilled"], 206_203);
    assert_eq!(t["rewrites_after_tool_change"], 1);
    assert_eq!(t["rebilled_after_tool_change"], 84_858);
    // Tool schemas come from the recorded request shapes; the deferred tool is not in the
    // prompt, and the list grew by one tool at request 3.
    let tools: Vec<u64> = reqs
        .iter()
        .map(|q| q["tool_tokens"].as_u64().unwrap())
        .collect();
    assert!(tools[0] > 30 && tools[0] == tools[1], "{tools:?}");
    assert!(
        tools[2] > tools[1] + 10 && tools[2] == tools[4],
        "{tools:?}"
    );
    let notes = s["notes"].to_string();
    assert_contains_all(&notes, &["1 subagent", "1 lines were not JSON"]);
    assert_eq!(r["encoding"], "o200k_base");
}

#[test]
fn report_text_shows_the_rewrite_its_cause_and_a_sparkline() {
    let out = report(&[&fixture("claude_rewrite.jsonl")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_contains_all(
        &text,
        &[
            "re-write at request 3: cache read 84,858 -> 0, written 120,845, re-billed 84,858; \
             after select_tools [time__get_current_time]",
        ],
    );
    assert_contains_all(
        &text,
        &[
            "re-write at request 5: cache read 121,345 -> 0",
            "pause of 717 s, longer than the cache lifetime",
        ],
    );
    let row: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("11111111"))
        .unwrap_or_else(|| panic!("{text}"))
        .split_whitespace()
        .collect();
    assert_eq!(row[1..5], ["claude", "5", "15", "205,703"], "{text}");
    assert_eq!(row[row.len() - 4..], ["2", "1", "206,203", "yes"], "{text}");
    let written = text
        .lines()
        .find(|l| l.trim_start().starts_with("written"))
        .unwrap();
    assert_eq!(
        written.trim_start().trim_start_matches("written").trim(),
        "▆·█▁█"
    );
}

#[test]
fn report_reads_codex_rollouts_and_their_older_token_count_events() {
    let r = json(&[
        "--codex",
        &fixtures().to_string_lossy(),
        &fixture("codex_rewrite.jsonl"),
    ]);
    let sessions = r["sessions"].as_array().unwrap();
    // --codex DIR takes only rollout-*.jsonl; the other file is named explicitly.
    assert_eq!(sessions.len(), 2, "{r:#}");
    let old = &sessions[0];
    assert_eq!(old["client"], "codex");
    assert_eq!(old["mcp_defer"], false);
    let reqs = old["requests"].as_array().unwrap();
    assert_eq!(
        reqs.len(),
        2,
        "repeated token_count events count once: {old:#}"
    );
    assert_eq!(reqs[1]["input"], 456);
    assert_eq!(reqs[1]["cache_read"], 2944);
    assert_eq!(old["rewrites"].as_array().unwrap().len(), 0);
    assert!(
        old["notes"]
            .to_string()
            .contains("tool-schema tokens unknown")
    );

    let new = &sessions[1];
    assert_eq!(new["id"], "22222222-3333-4444-8555-666666666666");
    assert_eq!(new["mcp_defer"], true);
    let rewrites = new["rewrites"].as_array().unwrap();
    assert_eq!(rewrites.len(), 1, "{new:#}");
    assert_eq!(rewrites[0]["request"], 3);
    assert_eq!(rewrites[0]["cached_before"], 6300);
    assert_eq!(rewrites[0]["rebilled"], 5276);
    assert_eq!(rewrites[0]["after"][0]["kind"], "select_tools");
    assert_eq!(new["totals"]["input"], 12_604);
    assert_eq!(new["totals"]["cache_read"], 13_696);
    assert_eq!(r["total"]["sessions"], 2);
    assert_eq!(r["total"]["requests"], 6);
}

#[test]
fn report_reads_the_default_folders_under_home_and_nothing_else() {
    let home = tempfile::tempdir().unwrap();
    // A fixture transcript copied to `path` under HOME, its folders made.
    let place = |fixture: &str, path: &str| {
        let to = home.path().join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixtures().join(fixture), to).unwrap();
    };
    place("claude_rewrite.jsonl", ".claude/projects/-work-app/s.jsonl");
    let sessions = home.path().join(".codex/sessions/2026/11/30");
    place(
        "codex_rewrite.jsonl",
        ".codex/sessions/2026/11/30/rollout-2026-11-30T11-00-00-x.jsonl",
    );
    // Not a rollout by name: the Codex default folder skips it.
    std::fs::write(sessions.join("notes.jsonl"), "{}\n").unwrap();
    let out = Command::new(BIN)
        .args(["report", "--json"])
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clients: Vec<&str> = (r["sessions"].as_array().unwrap().iter())
        .map(|s| s["client"].as_str().unwrap())
        .collect();
    assert_eq!(clients, ["claude", "codex"]);

    // An empty HOME is no error (issue 35, item 12): no session has run yet; the message
    // names where it looked and how to point elsewhere.
    let out = report(&[]);
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert_contains_all(&err, &["no transcripts yet in", "--claude DIR"]);
    let out = report(&["/nonexistent/transcripts"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/transcripts: no such file"));
}

/// Figures of one session in the `--json` output: (input, cache read, cache write) per
/// request.
fn usage(session: &Value) -> Vec<[u64; 3]> {
    (session["requests"].as_array().unwrap().iter())
        .map(|q| {
            let n = |k: &str| q[k].as_u64().unwrap();
            [n("input"), n("cache_read"), n("cache_write")]
        })
        .collect()
}

/// Written by the real Claude Code 2.1.332 (tool search off) through mcp-defer deferred in
/// benches/cache_cost, with the mock model billing as Anthropic's prompt cache would:
/// each select_tools makes Claude Code insert the tool in name order, so the next request
/// re-writes the whole prefix. `report` must find both re-writes and their cause.
#[test]
fn report_finds_the_rewrites_in_a_transcript_the_real_claude_code_wrote() {
    let r = json(&[&fixture("real_claude_deferred_nosearch.jsonl")]);
    let s = &r["sessions"][0];
    assert_eq!(s["mcp_defer"], true);
    assert_eq!(
        usage(s),
        [
            [0, 0, 19_056],
            [0, 19_056, 24],
            [0, 19_080, 470],
            [0, 0, 19_854],
            [0, 19_854, 80],
            [0, 19_934, 390],
            [0, 0, 20_827],
            [0, 20_827, 62]
        ]
    );
    let rewrites = s["rewrites"].as_array().unwrap();
    let found: Vec<(u64, u64, &str, &str)> = rewrites
        .iter()
        .map(|w| {
            (
                w["request"].as_u64().unwrap(),
                w["rebilled"].as_u64().unwrap(),
                w["after"][0]["names"][0].as_str().unwrap(),
                w["after"][1]["added"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                4,
                19_550,
                "everything__get-sum",
                "mcp__defer__everything__get-sum"
            ),
            (
                7,
                20_324,
                "memory__read_graph",
                "mcp__defer__memory__read_graph"
            )
        ]
    );
    assert_eq!(s["totals"]["rebilled_after_tool_change"], 39_874);
    // The tools sent grew by the two selected tools; Claude Code's own tools are most of it.
    let tools: Vec<u64> = (s["requests"].as_array().unwrap().iter())
        .map(|q| q["tool_tokens"].as_u64().unwrap())
        .collect();
    assert!(
        tools[0] > 10_000 && tools[3] > tools[2] && tools[6] > tools[5],
        "{tools:?}"
    );
}

/// The same task with the four servers registered in Claude Code directly (its tool search
/// on, the default): no mcp-defer, no re-write.
#[test]
fn report_reads_a_real_claude_session_without_mcp_defer() {
    let r = json(&[&fixture("real_claude_direct.jsonl")]);
    let s = &r["sessions"][0];
    assert_eq!(s["mcp_defer"], false);
    assert_eq!(s["totals"]["requests"], 6);
    assert_eq!(s["totals"]["cache_read"], 60_052);
    assert_eq!(s["totals"]["cache_write"], 12_304);
    assert_eq!(s["rewrites"].as_array().unwrap().len(), 0);
    // ToolSearch loaded each tool (tool_reference): a native load, no re-write.
    let loads: Vec<&str> = (s["requests"].as_array().unwrap().iter())
        .flat_map(|q| q["changes"].as_array().unwrap())
        .filter(|c| c["kind"] == "native_load")
        .map(|c| c["names"][0].as_str().unwrap())
        .collect();
    assert_eq!(
        loads,
        ["mcp__everything__get-sum", "mcp__memory__read_graph"]
    );
}

/// Written by the real Codex 0.171.0 through mcp-defer deferred (bench, OpenAI-style
/// automatic caching in the mock): cached input is read back, nothing is re-billed.
#[test]
fn report_reads_a_rollout_the_real_codex_wrote() {
    let r = json(&[&fixture("real_codex_deferred.jsonl")]);
    let s = &r["sessions"][0];
    assert_eq!(s["client"], "codex");
    assert_eq!(s["mcp_defer"], true);
    assert_eq!(s["totals"]["requests"], 9);
    assert_eq!(s["totals"]["input"], 11_701);
    assert_eq!(s["totals"]["cache_read"], 76_160);
    assert_eq!(s["rewrites"].as_array().unwrap().len(), 0);
    let selects = (s["requests"].as_array().unwrap().iter())
        .flat_map(|q| q["changes"].as_array().unwrap())
        .filter(|c| c["kind"] == "select_tools")
        .count();
    assert_eq!(selects, 2);
}

/// Issue 35 item 11: `report` held a whole transcript in memory (500,000 short lines took
/// 499 MB). Read line by line, a transcript of 500,000 lines (one request in ten, the rest
/// progress lines) is reported whole with a peak far below that; the bound is generous,
/// a regression to holding the file as values exceeds it several times over.
#[cfg(target_os = "linux")]
#[test]
fn a_large_transcript_is_read_line_by_line_in_bounded_memory() {
    use std::io::Write;
    const LINES: usize = 500_000;
    const PEAK_BOUND_KIB: u64 = 100 * 1024;
    let dir = tempfile::tempdir().expect("temp dir");
    let transcript = dir.path().join("big.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&transcript).unwrap());
    for i in 0..LINES {
        if i % 10 == 0 {
            writeln!(
                out,
                r#"{{"type":"assistant","sessionId":"big-session","message":{{"id":"m{i}","model":"m","content":[],"usage":{{"input_tokens":3,"cache_read_input_tokens":{},"cache_creation_input_tokens":10,"output_tokens":1}}}}}}"#,
                2000 + i
            )
            .unwrap();
        } else {
            writeln!(out, r#"{{"type":"progress","n":{i}}}"#).unwrap();
        }
    }
    out.flush().unwrap();
    drop(out);
    let home = tempfile::tempdir().expect("temp home");
    let stdout_path = dir.path().join("stdout.txt");
    let child = Command::new(BIN)
        .args(["report", "--claude"])
        .arg(dir.path())
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .spawn()
        .expect("run mcp-defer report");
    let (code, peak_kib) = wait_with_peak_rss(child);
    let text = std::fs::read_to_string(&stdout_path).unwrap();
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("big-sess") && l.contains(&(LINES / 10).to_string())),
        "every request counted: {text}"
    );
    assert!(
        peak_kib < PEAK_BOUND_KIB,
        "report of {LINES} lines peaked at {} MiB",
        peak_kib / 1024
    );
}

/// Waits for `child` to exit; its exit code and the last `VmHWM` (peak resident set, KiB)
/// read from `/proc/<pid>/status` while it ran. (wait4's `ru_maxrss` would count the test
/// process too: the child is forked from it before it runs `mcp-defer`.) The peak is a high
/// water mark, so only growth in its last few milliseconds could be missed.
#[cfg(target_os = "linux")]
fn wait_with_peak_rss(mut child: std::process::Child) -> (Option<i32>, u64) {
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0;
    loop {
        let hwm = std::fs::read_to_string(&status).ok().and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
        if let Some(hwm) = hwm {
            peak_kib = peak_kib.max(hwm);
        }
        if let Some(exit) = child.try_wait().expect("wait for report") {
            return (exit.code(), peak_kib);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
