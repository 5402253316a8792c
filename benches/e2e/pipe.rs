//! Issue 31's figures side by side in one run, each beside its target: the latency a
//! proxied `tools/call` adds over stdio (~1,000 tools from three servers) beside what a bare
//! line relay adds (`floor.rs`: the least any proxy pays on this machine), the CPU
//! mcp-defer spends per call over Streamable HTTP against the direct server's (read from
//! `/proc` per process, so the ratio does not depend on the core count or on load), and
//! the RSS at 1,000 and 10,000 tools with what it is made of.
//!
//! `cargo bench --bench e2e -- pipe [--calls N]`

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

use super::floor::FLOOR_RELAY;
use super::http_child::start;
use super::measure::{percentile, us};
use super::{
    BIN, Client, Cost, FIXTURE, call, connect, fixture_table, quiet, rss, spawn_defer, tools_file,
    write_config,
};

/// Calls alternate direct and proxied in blocks of this many.
const BLOCK: usize = 500;

/// One figure and its target, for the closing table.
struct Row {
    what: String,
    measured: String,
    target: String,
    met: bool,
}

pub(super) async fn pipe(dir: &Path, calls: usize) {
    let mut rows = Vec::new();
    stdio(dir, calls, &mut rows).await;
    http(dir, calls, &mut rows).await;
    memory(dir, &mut rows).await;
    println!("\n== issue 31: measured beside the targets ==");
    for row in &rows {
        println!(
            "{:<44} {:<52} target {:<10} {}",
            row.what,
            row.measured,
            row.target,
            if row.met { "met" } else { "NOT met" }
        );
    }
}

/// The Streamable HTTP section alone (`pipe-http`): its row printed as `pipe` prints it.
pub(super) async fn http_only(dir: &Path, calls: usize) {
    let mut rows = Vec::new();
    http(dir, calls, &mut rows).await;
    for row in &rows {
        println!(
            "{:<44} {:<52} target {}",
            row.what, row.measured, row.target
        );
    }
}

/// The memory section alone (`resident`): its rows printed as `pipe` prints them.
pub(super) async fn resident_only(dir: &Path) {
    let mut rows = Vec::new();
    memory(dir, &mut rows).await;
    for row in &rows {
        println!(
            "{:<44} {:<14} target {}",
            row.what, row.measured, row.target
        );
    }
}

/// The three servers of ~1,000 tools: the fixture serving `add`, `echo` and 332 real
/// schemas, three times.
fn three_servers(dir: &Path) -> (std::path::PathBuf, Vec<String>) {
    let tools = tools_file(dir, 334);
    let path = tools.to_string_lossy().into_owned();
    let tables = (0..3)
        .map(|i| fixture_table(&format!("s{i}"), &["--tools", &path]))
        .collect();
    (tools, tables)
}

async fn stdio(dir: &Path, calls: usize, rows: &mut Vec<Row>) {
    println!(
        "\n== stdio: sequential tools/call `add`, 3 servers x 334 tools, {calls} calls a side =="
    );
    let (tools, tables) = three_servers(dir);
    let config = write_config(dir, "pipe.toml", "", &tables);
    let fixture = |mut command: tokio::process::Command| {
        command.arg("--tools").arg(&tools);
        command
    };
    let direct = connect(quiet(fixture(tokio::process::Command::new(FIXTURE)))).await;
    let mut relay = tokio::process::Command::new(
        std::env::current_exe().unwrap_or_else(|e| panic!("the bench's own path: {e}")),
    );
    relay.args([FLOOR_RELAY, FIXTURE]);
    let relay = quiet(fixture(relay));
    let relay_pid = relay
        .id()
        .unwrap_or_else(|| panic!("the floor relay has no pid"));
    let floor = connect(relay).await;
    let (transport, pid) = spawn_defer(&config);
    let proxied = connect(transport).await;
    for i in 0..300 {
        call(&direct, "add", i).await;
        call(&floor, "add", i).await;
        call(&proxied, "s1__add", i).await;
    }
    let (mut d, mut f, mut p) = (
        Vec::with_capacity(calls),
        Vec::with_capacity(calls),
        Vec::with_capacity(calls),
    );
    let (mut cost, mut floor_cost) = (Cost::default(), Cost::default());
    let mut done = 0;
    while done < calls {
        let n = BLOCK.min(calls - done);
        for i in done..done + n {
            d.push(call(&direct, "add", i).await);
        }
        let before = Cost::of(relay_pid);
        for i in done..done + n {
            f.push(call(&floor, "add", i).await);
        }
        floor_cost.add(&before, &Cost::of(relay_pid));
        let before = Cost::of(pid);
        for i in done..done + n {
            p.push(call(&proxied, "s1__add", i).await);
        }
        cost.add(&before, &Cost::of(pid));
        done += n;
    }
    for v in [&mut d, &mut f, &mut p] {
        v.sort_unstable();
    }
    let at = |v: &[Duration], q: f64| us(percentile(v, q));
    println!(
        "direct p50 {:.1} us p99 {:.1} us; through a bare line relay (the floor) p50 {:.1} us \
         p99 {:.1} us; through mcp-defer p50 {:.1} us p99 {:.1} us",
        at(&d, 0.5),
        at(&d, 0.99),
        at(&f, 0.5),
        at(&f, 0.99),
        at(&p, 0.5),
        at(&p, 0.99)
    );
    let cpu = cost.cpu_us / calls as f64;
    println!(
        "mcp-defer: {cpu:.1} us CPU and {:.2} context switches per call; the bare relay: \
         {:.1} us CPU and {:.2} context switches",
        cost.switches / calls as f64,
        floor_cost.cpu_us / calls as f64,
        floor_cost.switches / calls as f64
    );
    for (q, target) in [(0.5, 50.0), (0.99, 150.0)] {
        let added = at(&p, q) - at(&d, q);
        let floor = at(&f, q) - at(&d, q);
        rows.push(Row {
            what: format!("stdio added latency p{}", (q * 100.0) as u32),
            measured: format!("{added:.1} us (the bare relay's floor {floor:.1} us)"),
            target: format!("<= {target} us"),
            met: added <= target,
        });
    }
    let _ = floor.cancel().await;
    let _ = direct.cancel().await;
    let _ = proxied.cancel().await;
    paths(&config, &tools, calls).await;
}

/// A client writing JSON-RPC lines itself, so a call can be spelled two ways.
struct RawClient {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl RawClient {
    async fn start(mut command: tokio::process::Command) -> RawClient {
        let mut child = command
            .env("RUST_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            panic!("no piped stdio");
        };
        use tokio::io::AsyncBufReadExt;
        let mut raw = RawClient {
            child,
            stdin,
            lines: tokio::io::BufReader::new(stdout).lines(),
        };
        raw.exchange(0, r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#).await;
        raw.write(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        raw
    }

    async fn write(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.stdin
            .write_all(&bytes)
            .await
            .unwrap_or_else(|e| panic!("write: {e}"));
    }

    /// Writes `line` and reads until the answer to `id`.
    async fn exchange(&mut self, id: usize, line: &str) {
        self.write(line).await;
        let want = format!("\"id\":{id},");
        loop {
            let answer = self
                .lines
                .next_line()
                .await
                .unwrap_or_else(|e| panic!("read: {e}"))
                .unwrap_or_else(|| panic!("the server closed its stdout"));
            if answer.contains(&want) || answer.ends_with(&format!("\"id\":{id}}}")) {
                assert!(!answer.contains("\"error\""), "{answer}");
                return;
            }
        }
    }

    /// One `tools/call` of `tool`, the method spelled `method`; its latency.
    async fn call(&mut self, id: usize, method: &str, tool: &str) -> Duration {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"{tool}","arguments":{{"a":{id},"b":2}}}}}}"#
        );
        let started = std::time::Instant::now();
        self.exchange(id, &line).await;
        started.elapsed()
    }
}

/// The same binary's two paths for a call, from a client writing its own lines: a plain
/// `tools/call` takes the thin path (`server/stdio/calls.rs`); the same call with the
/// method spelled `tools\/call` (the same JSON string) goes through rmcp's decoding and
/// service loop, the path every call took before.
async fn paths(config: &Path, tools: &Path, calls: usize) {
    println!("\n-- the same binary, a raw client: thin path against rmcp's loop --");
    let mut command = tokio::process::Command::new(FIXTURE);
    command.arg("--tools").arg(tools);
    let mut direct = RawClient::start(command).await;
    let serve = |bin: std::ffi::OsString| {
        let mut command = tokio::process::Command::new(bin);
        // Itself, not a relay to a hub (cargo's [env] turns the hub off; a bench binary
        // run by hand would not).
        command
            .arg("serve")
            .arg("--config")
            .arg(config)
            .env("MCP_DEFER_HUB", "off");
        RawClient::start(command)
    };
    let bin = std::env::var_os("MCP_DEFER_BIN").unwrap_or_else(|| BIN.into());
    // Each side: a label, its client, the method spelling, its latencies and its cost.
    let mut sides = vec![
        Side::new("thin path", serve(bin.clone()).await, "tools/call"),
        Side::new("rmcp's loop", serve(bin).await, "tools\\/call"),
    ];
    // `MCP_DEFER_BASE=<path>`: another build's thin path in the same blocks (an A/B).
    if let Some(base) = std::env::var_os("MCP_DEFER_BASE") {
        sides.push(Side::new("base build", serve(base).await, "tools/call"));
    }
    // The first call waits for the servers to list.
    let mut id = 1;
    for _ in 0..300 {
        id += 1;
        direct.call(id, "tools/call", "add").await;
        for side in &mut sides {
            side.client.call(id, side.method, "s1__add").await;
        }
    }
    let mut d = Vec::new();
    let mut done = 0;
    while done < calls {
        let n = BLOCK.min(calls - done);
        for _ in 0..n {
            id += 1;
            d.push(direct.call(id, "tools/call", "add").await);
        }
        for side in &mut sides {
            let before = Cost::of(side.pid);
            for _ in 0..n {
                id += 1;
                let latency = side.client.call(id, side.method, "s1__add").await;
                side.latencies.push(latency);
            }
            side.cost.add(&before, &Cost::of(side.pid));
        }
        done += n;
    }
    d.sort_unstable();
    let at = |v: &[Duration], q: f64| us(percentile(v, q));
    println!(
        "direct p50 {:.1} us p99 {:.1} us",
        at(&d, 0.5),
        at(&d, 0.99)
    );
    for side in &mut sides {
        side.latencies.sort_unstable();
        let v = &side.latencies;
        println!(
            "{:>12}: added p50 {:.1} us p99 {:.1} us; mcp-defer {:.1} us CPU and {:.2} context switches a call",
            side.label,
            at(v, 0.5) - at(&d, 0.5),
            at(v, 0.99) - at(&d, 0.99),
            side.cost.cpu_us / calls as f64,
            side.cost.switches / calls as f64
        );
    }
}

/// One mcp-defer process of [`paths`] and what its calls cost.
struct Side {
    label: &'static str,
    client: RawClient,
    pid: u32,
    method: &'static str,
    latencies: Vec<Duration>,
    cost: Cost,
}

impl Side {
    fn new(label: &'static str, client: RawClient, method: &'static str) -> Side {
        let pid = client.child.id().unwrap_or_default();
        Side {
            label,
            client,
            pid,
            method,
            latencies: Vec::new(),
            cost: Cost::default(),
        }
    }
}

/// Only the raw client's comparison of [`paths`] (`pipe-paths`): the three servers, no
/// HTTP or memory cases.
pub(super) async fn pipe_paths(dir: &Path, calls: usize) {
    let (tools, tables) = three_servers(dir);
    let config = write_config(dir, "pipe.toml", "", &tables);
    paths(&config, &tools, calls).await;
}

async fn http_client(url: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .unwrap_or_else(|e| panic!("initialize {url}: {e}"))
}

/// The children of `pid` (the servers mcp-defer runs).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

async fn http(dir: &Path, calls: usize, rows: &mut Vec<Row>) {
    println!(
        "\n== Streamable HTTP: sequential tools/call `add`, one session a side, {calls} calls; CPU per process =="
    );
    let (tools, tables) = three_servers(dir);
    let config = write_config(dir, "pipe-http.toml", "", &tables);
    let mut fixture = Command::new(FIXTURE);
    fixture
        .arg("--tools")
        .arg(&tools)
        .args(["--http", "127.0.0.1:0"]);
    fixture.env("RUST_LOG", "info");
    let (direct_process, direct_url) = start(fixture);
    let mut defer = Command::new(std::env::var_os("MCP_DEFER_BIN").unwrap_or_else(|| BIN.into()));
    defer
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .env("RUST_LOG", "info");
    let (defer_process, defer_url) = start(defer);
    let direct = http_client(&direct_url).await;
    let proxied = http_client(&defer_url).await;
    for i in 0..300 {
        call(&direct, "add", i).await;
        call(&proxied, "s1__add", i).await;
    }
    let (direct_pid, defer_pid) = (direct_process.0.id(), defer_process.0.id());
    // The server behind mcp-defer that answers `s1__add`: the busiest child.
    let behind = children(defer_pid);
    let (mut d, mut p, mut b) = (Cost::default(), Cost::default(), Cost::default());
    let (mut dl, mut pl) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    let mut done = 0;
    while done < calls {
        let n = BLOCK.min(calls - done);
        let before = Cost::of(direct_pid);
        for i in done..done + n {
            dl.push(call(&direct, "add", i).await);
        }
        d.add(&before, &Cost::of(direct_pid));
        let before = Cost::of(defer_pid);
        let before_behind: Vec<Cost> = behind.iter().map(|&c| Cost::of(c)).collect();
        for i in done..done + n {
            pl.push(call(&proxied, "s1__add", i).await);
        }
        p.add(&before, &Cost::of(defer_pid));
        for (c, before) in behind.iter().zip(&before_behind) {
            b.add(before, &Cost::of(*c));
        }
        done += n;
    }
    dl.sort_unstable();
    pl.sort_unstable();
    let per = |c: &Cost| c.cpu_us / calls as f64;
    println!(
        "direct fixture: {:.1} us CPU a call, p50 {:.1} us; mcp-defer: {:.1} us CPU a call, p50 {:.1} us; the fixture behind it (stdio): {:.1} us",
        per(&d),
        us(percentile(&dl, 0.5)),
        per(&p),
        us(percentile(&pl, 0.5)),
        per(&b)
    );
    let ratio = per(&p) / per(&d);
    rows.push(Row {
        what: "HTTP CPU per call, mcp-defer / direct server".into(),
        measured: format!("{:.1} / {:.1} us = {ratio:.2}x", per(&p), per(&d)),
        target: "<= 0.50x".into(),
        met: ratio <= 0.5,
    });
    let _ = direct.cancel().await;
    let _ = proxied.cancel().await;
}

/// Resident memory of `pid` by kind, in MiB, from `/proc/<pid>/smaps`: the binary's code,
/// its read-only data (the embedded word table and token tables among them), the heap
/// (anonymous mappings: the allocator's segments), thread stacks and other files.
fn breakdown(pid: u32) -> String {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let (mut code, mut rodata, mut heap, mut stack, mut other) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut kind = 0;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if first.contains('-') && !first.ends_with(':') {
            // A mapping's header: range, perms, offset, dev, inode, path.
            let perms = fields.next().unwrap_or_default();
            let path = fields.nth(3).unwrap_or_default();
            kind = if !exe.as_os_str().is_empty() && Path::new(path) == exe {
                if perms.contains('x') { 0 } else { 1 }
            } else if path.is_empty() || path == "[heap]" {
                2
            } else if path.starts_with("[stack") {
                3
            } else {
                4
            };
        } else if first == "Rss:" {
            let kib: u64 = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            match kind {
                0 => code += kib,
                1 => rodata += kib,
                2 => heap += kib,
                3 => stack += kib,
                _ => other += kib,
            }
        }
    }
    let mib = |k: u64| k as f64 / 1024.0;
    format!(
        "binary code {:.1} + binary data {:.1} + anon (heap, thread stacks) {:.1} + stack {:.1} + other files {:.1} MiB",
        mib(code),
        mib(rodata),
        mib(heap),
        mib(stack),
        mib(other)
    )
}

/// Peak and current RSS with `tables` behind mcp-defer, after the catalog is loaded and
/// 1,000 calls; returns the peak in MiB.
async fn resident(
    dir: &Path,
    file: &str,
    settings: &str,
    tables: &[String],
    routed: Option<&str>,
) -> f64 {
    let config = write_config(dir, file, settings, tables);
    let (transport, pid) = spawn_defer(&config);
    let client = Arc::new(connect(transport).await);
    let mut search = CallToolRequestParams::new("search_tools");
    search.arguments = match json!({"query": "create an issue"}) {
        Value::Object(map) => Some(map),
        _ => None,
    };
    client
        .call_tool(search)
        .await
        .unwrap_or_else(|e| panic!("search_tools: {e}"));
    // The first search waits for the servers only so long: until the last one's tools are
    // searchable the catalog is still loading, and the figures would be the load's.
    if let Some(last) = tables.len().checked_sub(1) {
        let last = last_server(tables, last);
        let mut only = CallToolRequestParams::new("search_tools");
        only.arguments = match json!({"query": "add", "server": last}) {
            Value::Object(map) => Some(map),
            _ => None,
        };
        for _ in 0..600 {
            let found = client
                .call_tool(only.clone())
                .await
                .unwrap_or_else(|e| panic!("search_tools: {e}"));
            if serde_json::to_string(&found).is_ok_and(|t| t.contains(&format!("{last}__"))) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    for i in 0..routed.map_or(0, |_| 1000) {
        call(&client, routed.unwrap_or_default(), i).await;
    }
    let (hwm, now) = rss(pid);
    let peak = hwm as f64 / 1024.0;
    println!(
        "{:>28}: peak {peak:.1} MiB, now {:.1} MiB = {}",
        file.trim_end_matches(".toml"),
        now as f64 / 1024.0,
        breakdown(pid)
    );
    if let Ok(client) = Arc::try_unwrap(client) {
        let _ = client.cancel().await;
    }
    peak
}

/// The name of the server in `tables[index]` (`[mcp_servers.<name>]`).
fn last_server(tables: &[String], index: usize) -> String {
    tables[index]
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("[mcp_servers."))
        .and_then(|l| l.strip_suffix(']'))
        .unwrap_or_default()
        .to_owned()
}

async fn memory(dir: &Path, rows: &mut Vec<Row>) {
    println!("\n== RSS after the catalog is loaded and 1,000 calls, and what it is made of ==");
    resident(dir, "no-servers.toml", "", &[], None).await;
    let (_, three) = three_servers(dir);
    let semantic_off = "[settings.search]\nsemantic = \"off\"";
    resident(
        dir,
        "1k-semantic-off.toml",
        semantic_off,
        &three,
        Some("s1__add"),
    )
    .await;
    let one_k = resident(dir, "1k.toml", "", &three, Some("s1__add")).await;
    let tools = tools_file(dir, 500);
    let path = tools.to_string_lossy().into_owned();
    let twenty: Vec<String> = (0..20)
        .map(|i| fixture_table(&format!("s{i:02}"), &["--tools", &path]))
        .collect();
    let ten_k = resident(dir, "10k.toml", "", &twenty, Some("s07__add")).await;
    for (what, peak, target) in [("1,000 tools", one_k, 25.0), ("10,000 tools", ten_k, 60.0)] {
        rows.push(Row {
            what: format!("peak RSS, {what} (default search tier)"),
            measured: format!("{peak:.1} MiB"),
            target: format!("<= {target} MB"),
            met: peak <= target,
        });
    }
}
