//! `serve --http` as many clients see it: N concurrent sessions calling a tool through
//! mcp-defer (Streamable HTTP in, the fixture over stdio behind it) against the same tool
//! served directly over Streamable HTTP by the fixture (rmcp's server transport, the same
//! stack mcp-defer uses). Rounds alternate direct and proxied, so drift in machine load hits
//! both alike. Then the memory one idle session costs. Prints figures; asserts nothing.
//!
//! `cargo bench --bench http -- [--sessions N] [--calls N] [--idle N] [--slow N]`
//! (`MCP_DEFER_BIN=<path>` measures another build of `mcp-defer`, for A/B comparisons)
//!
//! Also prints the throughput ratio (through mcp-defer / direct) and the latency of the
//! same calls while `--slow` connections (default 2,000) hold half-sent headers.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

#[path = "common/http_child.rs"]
mod http_child;
#[path = "common/measure.rs"]
mod measure;
use http_child::start;
use measure::{add_params, ms, percentile};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-defer");
const FIXTURE: &str = env!("CARGO_BIN_EXE_mcp-defer-fixture");

type Client = RunningService<RoleClient, ()>;

struct Options {
    sessions: usize,
    calls: usize,
    idle: usize,
    slow: usize,
}

fn options() -> Options {
    let mut options = Options {
        sessions: 100,
        calls: 20,
        idle: 1000,
        slow: 2000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} needs a number"))
        };
        match arg.as_str() {
            "--sessions" => options.sessions = number("--sessions"),
            "--calls" => options.calls = number("--calls"),
            "--idle" => options.idle = number("--idle"),
            "--slow" => options.slow = number("--slow"),
            _ => {}
        }
    }
    options
}

async fn connect(url: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .unwrap_or_else(|e| panic!("initialize {url}: {e}"))
}

/// Every session makes `calls` calls one after another, all sessions at once. Returns
/// each call's latency and the wall time.
async fn round(
    clients: &[Arc<Client>],
    tool: &'static str,
    calls: usize,
) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (s, client) in clients.iter().enumerate() {
        let client = client.clone();
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(calls);
            for i in 0..calls {
                let at = Instant::now();
                let result = client
                    .call_tool(add_params(tool, s * calls + i))
                    .await
                    .unwrap_or_else(|e| panic!("tools/call {tool}: {e}"));
                assert_ne!(result.is_error, Some(true), "{tool}: {result:?}");
                latencies.push(at.elapsed());
            }
            latencies
        });
    }
    let mut all = Vec::new();
    while let Some(latencies) = tasks.join_next().await {
        all.extend(latencies.unwrap_or_else(|e| panic!("session task: {e}")));
    }
    (all, started.elapsed())
}

/// Runs `benches/node/latency.mjs` (the official TypeScript SDK's client, 300 warm-up calls,
/// then 2,000 measured) against `url` and returns its JSON line of percentiles.
fn typescript_latency(url: &str, tool: &str) -> Result<String, String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let sdk = root.join(".peers/node/node_modules/@modelcontextprotocol/sdk");
    if !sdk.exists() {
        return Err("the TypeScript SDK is not in .peers (run .ci/install-peers)".into());
    }
    let out = Command::new("node")
        .arg(root.join("benches/node/latency.mjs"))
        .arg(&sdk)
        .args([url, tool, "300", "2000"])
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("node: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().last() {
        Some(line) if out.status.success() => Ok(line.to_owned()),
        _ => Err(format!(
            "node failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or_default()
        )),
    }
}

/// Current RSS of a process in KiB.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Opens a session with plain HTTP (initialize, initialized, tools/list) and leaves it idle.
async fn idle_session(http: &reqwest::Client, url: &str) {
    let post = |body: Value, session: Option<String>| {
        let mut request = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        request.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}});
    let response = post(init, None)
        .await
        .unwrap_or_else(|e| panic!("initialize: {e}"));
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no session id"));
    let _ = response.text().await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = post(note, Some(session.clone())).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let response = post(list, Some(session))
        .await
        .unwrap_or_else(|e| panic!("tools/list: {e}"));
    let _ = response.text().await;
}

fn main() {
    let options = options();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let config = dir.path().join("servers.toml");
    // One principal opens every session here: the per-token cap goes above `--idle`.
    let table = format!(
        "[settings.http]\nmax_sessions_per_token = 1000000\n\n[mcp_servers.fx]\ncommand = {}\nargs = []\n",
        json!(FIXTURE)
    );
    std::fs::write(&config, table).unwrap_or_else(|e| panic!("write config: {e}"));
    println!(
        "machine: {} cores; mcp-defer {}; {} sessions x {} calls per round",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        env!("CARGO_PKG_VERSION"),
        options.sessions,
        options.calls
    );

    let mut fixture = Command::new(FIXTURE);
    fixture.args(["--http", "127.0.0.1:0"]);
    let (_direct_process, direct_url) = start(fixture);
    let mut defer = Command::new(std::env::var_os("MCP_DEFER_BIN").unwrap_or_else(|| BIN.into()));
    defer
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .env("RUST_LOG", "info");
    let (defer_process, defer_url) = start(defer);
    let pid = defer_process.0.id();

    runtime.block_on(async {
        let mut direct = Vec::new();
        let mut proxied = Vec::new();
        for _ in 0..options.sessions {
            direct.push(Arc::new(connect(&direct_url).await));
            proxied.push(Arc::new(connect(&defer_url).await));
        }
        // Warm up both (mcp-defer's first call waits for the server to list).
        round(&direct, "add", 1).await;
        round(&proxied, "fx__add", 1).await;
        let (mut d_lat, mut p_lat) = (Vec::new(), Vec::new());
        let (mut d_wall, mut p_wall) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..3 {
            let (lat, wall) = round(&direct, "add", options.calls).await;
            d_lat.extend(lat);
            d_wall += wall;
            let (lat, wall) = round(&proxied, "fx__add", options.calls).await;
            p_lat.extend(lat);
            p_wall += wall;
        }
        d_lat.sort();
        p_lat.sort();
        println!(
            "{:<28} {:>10} {:>9} {:>9} {:>9}",
            "", "calls/s", "p50 ms", "p90 ms", "p99 ms"
        );
        for (label, lat, wall) in [
            ("direct (fixture over HTTP)", &d_lat, d_wall),
            ("through mcp-defer --http", &p_lat, p_wall),
        ] {
            println!(
                "{label:<28} {:>10.0} {:>9.2} {:>9.2} {:>9.2}",
                lat.len() as f64 / wall.as_secs_f64(),
                ms(percentile(lat, 0.5)),
                ms(percentile(lat, 0.9)),
                ms(percentile(lat, 0.99)),
            );
        }
        println!(
            "added latency: p50 {:+.2} ms, p99 {:+.2} ms",
            ms(percentile(&p_lat, 0.5)) - ms(percentile(&d_lat, 0.5)),
            ms(percentile(&p_lat, 0.99)) - ms(percentile(&d_lat, 0.99)),
        );
        println!(
            "throughput through mcp-defer / direct: {:.2}",
            (p_lat.len() as f64 / p_wall.as_secs_f64()) / (d_lat.len() as f64 / d_wall.as_secs_f64())
        );

        // The official TypeScript SDK, one session calling sequentially (issue 19: p50 < 5 ms).
        for (label, url, tool) in [
            ("TypeScript SDK, direct", &direct_url, "add"),
            ("TypeScript SDK, through mcp-defer", &defer_url, "fx__add"),
        ] {
            match typescript_latency(url, tool) {
                Ok(line) => println!("{label:<34} {line}"),
                Err(why) => println!("{label:<34} not measured: {why}"),
            }
        }

        // A slowloris flood without a token: connections that never finish their headers,
        // held open while the sessions call again.
        let addr = defer_url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        let mut slow = Vec::with_capacity(options.slow);
        for _ in 0..options.slow {
            let Ok(mut stream) = tokio::net::TcpStream::connect(&addr).await else {
                break;
            };
            use tokio::io::AsyncWriteExt;
            let _ = stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                .await;
            slow.push(stream);
        }
        let (mut lat, wall) = round(&proxied, "fx__add", options.calls).await;
        lat.sort();
        println!(
            "under {} slow connections: {:.0} calls/s, p50 {:.2} ms, p99 {:.2} ms",
            slow.len(),
            lat.len() as f64 / wall.as_secs_f64(),
            ms(percentile(&lat, 0.5)),
            ms(percentile(&lat, 0.99)),
        );
        drop(slow);
        for client in proxied.into_iter().chain(direct) {
            if let Ok(client) = Arc::try_unwrap(client) {
                let _ = client.cancel().await;
            }
        }

        // Idle sessions: RSS before and after opening them, settled.
        let http = reqwest::Client::new();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let before = rss(pid);
        for _ in 0..options.idle {
            idle_session(&http, &defer_url).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = rss(pid);
        println!(
            "idle sessions: {} opened (initialize + tools/list), RSS {} -> {} KiB: {:.1} KiB per session",
            options.idle,
            before,
            after,
            (after.saturating_sub(before)) as f64 / options.idle as f64
        );
    });
    drop(defer_process);
}
