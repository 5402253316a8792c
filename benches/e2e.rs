//! End-to-end benchmarks of `mcp-defer serve` as a client sees it: real processes, real
//! stdio, the rmcp client. Each figure is measured beside its reference in the same run
//! (direct calls against calls through mcp-defer, interleaved in blocks), so that ratios
//! hold on a noisy machine. Prints figures; asserts nothing.
//!
//! `cargo bench --bench e2e -- [proxy|handshake|memory|lifecycle|pipe|pipe-paths|pipe-http|resident|all] [--calls N] [--reps N]`
//! (`resident`: `pipe`'s memory section alone, the RSS at 1k and 10k tools by owner;
//! `pipe-http`: its Streamable HTTP section alone)
//! (the default is `all`). Figures and machine notes are in `docs/benchmarks.md`.
//! `MCP_DEFER_BIN=<path>` measures another build of `mcp-defer` (for A/B comparisons);
//! with `MCP_DEFER_BASE=<path>`, `pipe` and `pipe-paths` also run that build's thin path
//! in the same blocks as this one's.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

#[path = "e2e/floor.rs"]
mod floor;
#[path = "common/http_child.rs"]
mod http_child;
#[path = "common/measure.rs"]
mod measure;
#[path = "common/os.rs"]
mod os;
#[path = "e2e/pipe.rs"]
mod pipe;
use measure::{add_params, ms, percentile, us};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-defer");
const FIXTURE: &str = env!("CARGO_BIN_EXE_mcp-defer-fixture");
/// Real tool definitions (five reference servers, 50 tools) that the memory bench replicates.
const REFERENCE_TOOLS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/benches/data/reference/servers.json"
);

/// Direct and proxied calls alternate in blocks of this many, so drift in machine load
/// hits both sides alike.
const BLOCK: usize = 500;
const CONCURRENCY: usize = 32;

type Client = RunningService<RoleClient, ()>;

struct Options {
    what: String,
    calls: usize,
    reps: usize,
}

fn options() -> Options {
    let mut options = Options {
        what: "all".to_owned(),
        calls: 10_000,
        reps: 15,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} needs a number"))
        };
        match arg.as_str() {
            // `cargo bench` passes `--bench` to every bench target.
            "--bench" => {}
            "--calls" => options.calls = number("--calls"),
            "--reps" => options.reps = number("--reps"),
            "proxy" | "handshake" | "memory" | "lifecycle" | "pipe" | "pipe-paths"
            | "pipe-http" | "resident" | "all" => {
                options.what = arg;
            }
            other if other.starts_with('-') => {}
            // A name filter from `cargo bench <filter>`: treat it as the benchmark to run.
            other => options.what = other.to_owned(),
        }
    }
    options
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, mode, program, rest @ ..] = args.as_slice()
        && mode == floor::FLOOR_RELAY
    {
        floor::relay(program, rest);
    }
    let options = options();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    println!(
        "machine: {} cores; mcp-defer {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        env!("CARGO_PKG_VERSION")
    );
    runtime.block_on(async {
        let all = options.what == "all";
        if all || options.what == "proxy" {
            proxy(dir.path(), options.calls).await;
        }
        if all || options.what == "handshake" {
            handshake(dir.path(), options.reps).await;
        }
        if all || options.what == "memory" {
            memory(dir.path()).await;
        }
        if all || options.what == "lifecycle" {
            lifecycle(dir.path(), options.reps).await;
        }
        if all || options.what == "pipe" {
            pipe::pipe(dir.path(), options.calls).await;
        }
        if options.what == "pipe-paths" {
            pipe::pipe_paths(dir.path(), options.calls).await;
        }
        if options.what == "resident" {
            pipe::resident_only(dir.path()).await;
        }
        if options.what == "pipe-http" {
            pipe::http_only(dir.path(), options.calls).await;
        }
    });
}

// ---------------------------------------------------------------------------------------
// Processes and calls

fn quiet(mut command: tokio::process::Command) -> TokioChildProcess {
    command.env("RUST_LOG", "error");
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    transport
}

async fn connect(transport: TokioChildProcess) -> Client {
    ().serve(transport)
        .await
        .unwrap_or_else(|e| panic!("handshake: {e}"))
}

/// The fixture itself, as the reference client talks to it.
async fn direct() -> Client {
    connect(quiet(tokio::process::Command::new(FIXTURE))).await
}

/// `mcp-defer serve --config <config>`, and its pid.
fn spawn_defer(config: &Path) -> (TokioChildProcess, u32) {
    spawn_defer_with(config, &[])
}

/// As [`spawn_defer`], with `env` set.
fn spawn_defer_with(config: &Path, env: &[(&str, &Path)]) -> (TokioChildProcess, u32) {
    let bin = std::env::var_os("MCP_DEFER_BIN").unwrap_or_else(|| BIN.into());
    let mut command = tokio::process::Command::new(bin);
    // Itself, not a relay to a hub (cargo's [env] turns the hub off; a bench binary run by
    // hand would not).
    command.arg("serve").arg("--config").arg(config);
    command
        .env("MCP_DEFER_HUB", "off")
        .envs(env.iter().copied());
    let transport = quiet(command);
    let pid = transport
        .id()
        .unwrap_or_else(|| panic!("mcp-defer has no pid"));
    (transport, pid)
}

fn fixture_table(name: &str, args: &[&str]) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = {}\nargs = {}\n",
        json!(FIXTURE),
        json!(args)
    )
}

fn write_config(dir: &Path, file: &str, settings: &str, servers: &[String]) -> PathBuf {
    let path = dir.join(file);
    let text = format!("[settings]\n{settings}\n\n{}", servers.join("\n"));
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    path
}

async fn call(client: &Client, name: &str, i: usize) -> Duration {
    let started = Instant::now();
    let result = client
        .call_tool(add_params(name, i))
        .await
        .unwrap_or_else(|e| panic!("tools/call {name}: {e}"));
    let elapsed = started.elapsed();
    assert_ne!(result.is_error, Some(true), "{name} failed: {result:?}");
    elapsed
}

/// `n` calls, `concurrency` at a time; per-call latencies and the wall time.
async fn run_calls(
    client: &Arc<Client>,
    name: &'static str,
    n: usize,
    concurrency: usize,
) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for worker in 0..concurrency {
        let client = client.clone();
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(n / concurrency + 1);
            for i in (worker..n).step_by(concurrency) {
                latencies.push(call(&client, name, i).await);
            }
            latencies
        });
    }
    let mut all = Vec::with_capacity(n);
    while let Some(latencies) = tasks.join_next().await {
        all.extend(latencies.unwrap_or_else(|e| panic!("call task: {e}")));
    }
    (all, started.elapsed())
}

// ---------------------------------------------------------------------------------------
// Proxy overhead

#[derive(Default)]
struct Side {
    latencies: Vec<Duration>,
    wall: Duration,
}

impl Side {
    fn add(&mut self, (latencies, wall): (Vec<Duration>, Duration)) {
        self.latencies.extend(latencies);
        self.wall += wall;
    }

    fn summary(&mut self) -> (Duration, Duration, f64) {
        self.latencies.sort_unstable();
        let throughput = self.latencies.len() as f64 / self.wall.as_secs_f64();
        (
            percentile(&self.latencies, 0.5),
            percentile(&self.latencies, 0.99),
            throughput,
        )
    }
}

async fn proxy(dir: &Path, calls: usize) {
    println!("\n== proxy overhead: tools/call `add`, {calls} calls per side ==");
    let config = write_config(dir, "proxy.toml", "", &[fixture_table("fx", &[])]);
    let direct = Arc::new(direct().await);
    let (transport, pid) = spawn_defer(&config);
    let proxied = Arc::new(connect(transport).await);
    // Warm both paths (and let mcp-defer's downstream connect) before measuring.
    for i in 0..200 {
        call(&direct, "add", i).await;
        call(&proxied, "fx__add", i).await;
    }
    for concurrency in [1, CONCURRENCY] {
        let (mut d, mut p) = (Side::default(), Side::default());
        let mut cost = Cost::default();
        let block = BLOCK.max(concurrency);
        let mut done = 0;
        while done < calls {
            let n = block.min(calls - done);
            d.add(run_calls(&direct, "add", n, concurrency).await);
            let before = Cost::of(pid);
            p.add(run_calls(&proxied, "fx__add", n, concurrency).await);
            cost.add(&before, &Cost::of(pid));
            done += n;
        }
        let (d50, d99, dtp) = d.summary();
        let (p50, p99, ptp) = p.summary();
        let label = if concurrency == 1 {
            "sequential".to_owned()
        } else {
            format!("{concurrency} concurrent")
        };
        println!(
            "{label:>13}: direct   p50 {:>7.1} us  p99 {:>7.1} us  {:>8.0} calls/s",
            us(d50),
            us(d99),
            dtp
        );
        println!(
            "{:>13}  mcp-defer p50 {:>7.1} us  p99 {:>7.1} us  {:>8.0} calls/s",
            "",
            us(p50),
            us(p99),
            ptp
        );
        println!(
            "{:>13}  added p50 {:.1} us (target < 50), throughput {:.1}% of direct (target >= 90)",
            "",
            us(p50) - us(d50),
            100.0 * ptp / dtp
        );
        println!(
            "{:>13}  mcp-defer itself: {:.1} us CPU and {:.2} context switches per call",
            "",
            cost.cpu_us / calls as f64,
            cost.switches / calls as f64
        );
    }
    for client in [direct, proxied] {
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = client.cancel().await;
        }
    }
}

/// CPU time and context switches of a process: a cost that machine load does not inflate
/// the way it inflates latency.
#[derive(Default)]
struct Cost {
    cpu_us: f64,
    switches: f64,
}

impl Cost {
    fn of(pid: u32) -> Cost {
        let threads: Vec<PathBuf> = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|task| task.path())
            .collect();
        let read = |file: &'static str| {
            threads
                .iter()
                .filter_map(move |task| std::fs::read_to_string(task.join(file)).ok())
        };
        // Per thread: the process's own `status` counts only its main thread.
        let switches: f64 = read("status")
            .flat_map(|status| {
                status
                    .lines()
                    .filter(|l| l.contains("ctxt_switches:"))
                    .filter_map(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
                    .collect::<Vec<_>>()
            })
            .sum();
        // The scheduler's own count of nanoseconds on a CPU, per thread: exact for a
        // process that runs a few microseconds at a time, where utime and stime are clock
        // ticks sampled (a bare relay read as 10 us a call by ticks runs 5.4 us). Threads
        // are live ones only, so the calls measured must not end threads: they don't.
        let nanos: Option<f64> = read("schedstat")
            .map(|line| line.split_whitespace().next()?.parse::<f64>().ok())
            .sum();
        Cost {
            cpu_us: nanos.map_or_else(|| ticks_us(pid), |ns| ns / 1e3),
            switches,
        }
    }

    fn add(&mut self, before: &Cost, after: &Cost) {
        self.cpu_us += after.cpu_us - before.cpu_us;
        self.switches += after.switches - before.switches;
    }
}

/// utime + stime of a whole process in microseconds, from clock ticks: where the kernel
/// keeps no per-thread `schedstat`.
fn ticks_us(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the `)` of the command name: utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|v| v.parse::<f64>().ok()))
        .sum();
    ticks / os::clock_ticks_per_second() * 1e6
}

// ---------------------------------------------------------------------------------------
// Handshake

async fn handshake(dir: &Path, reps: usize) {
    println!("\n== handshake: spawn to `initialize` answered, median of {reps} ==");
    let fast = |i: usize| fixture_table(&format!("s{i:02}"), &[]);
    let slow = |i: usize| fixture_table(&format!("s{i:02}"), &["--slow-start-ms", "2000"]);
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("0 servers", vec![]),
        ("20 servers, all fast", (0..20).map(fast).collect()),
        (
            "20 servers, 5 slow (2 s)",
            (0..20)
                .map(|i| if i % 4 == 0 { slow(i) } else { fast(i) })
                .collect(),
        ),
        ("20 servers, all slow (2 s)", (0..20).map(slow).collect()),
    ];
    // The reference: the fixture's own handshake (a bare rmcp server, no downstreams).
    let mut reference = Vec::with_capacity(reps);
    for _ in 0..reps {
        let started = Instant::now();
        let client = connect(quiet(tokio::process::Command::new(FIXTURE))).await;
        reference.push(started.elapsed());
        let _ = client.cancel().await;
    }
    report_handshake("fixture alone (reference)", reference);
    for (i, (label, servers)) in cases.iter().enumerate() {
        let config = write_config(dir, &format!("handshake{i}.toml"), "", servers);
        let mut times = Vec::with_capacity(reps);
        let mut closing = tokio::task::JoinSet::new();
        for _ in 0..reps {
            let started = Instant::now();
            let (transport, _) = spawn_defer(&config);
            let client = connect(transport).await;
            times.push(started.elapsed());
            // Closing waits for the downstream servers; do it off the measured path.
            closing.spawn(async move {
                let _ = client.cancel().await;
            });
            // Let the previous session's children settle before the next spawn.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        while closing.join_next().await.is_some() {}
        report_handshake(label, times);
    }
}

fn report_handshake(label: &str, times: Vec<Duration>) {
    report(&format!("{label:>28}"), times, " (target < 20)");
}

// ---------------------------------------------------------------------------------------
// Memory

/// Peak and current RSS of a process in KiB: `VmHWM` and `VmRSS` of `/proc/<pid>/status`.
fn rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// What the current RSS is made of: anonymous memory (heap, stacks) and file pages (the
/// binary's code and read-only data, the embedded search model among them), in MiB.
fn rss_split(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |key: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    format!(
        "(anon {:.1} + file {:.1})",
        field("RssAnon:"),
        field("RssFile:")
    )
}

/// `per_server` tools: `echo` and `add` from the fixture, then the 50 reference tools
/// replicated under distinct names.
fn tools_file(dir: &Path, per_server: usize) -> PathBuf {
    let text = std::fs::read_to_string(REFERENCE_TOOLS)
        .unwrap_or_else(|e| panic!("read {REFERENCE_TOOLS}: {e}"));
    let servers: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let reference: Vec<Value> = servers
        .iter()
        .flat_map(|s| s["tools"].as_array().cloned().unwrap_or_default())
        .collect();
    let mut tools = vec![
        json!({"name": "echo", "description": "Echo the arguments back.", "inputSchema": {"type": "object"}}),
        json!({
            "name": "add",
            "description": "Add two numbers and return their sum.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            }
        }),
    ];
    let mut copy = 0;
    while tools.len() < per_server {
        for tool in &reference {
            if tools.len() == per_server {
                break;
            }
            let mut tool = tool.clone();
            let name = format!("{}_{copy}", tool["name"].as_str().unwrap_or("tool"));
            tool["name"] = json!(name);
            tools.push(tool);
        }
        copy += 1;
    }
    let path = dir.join(format!("tools{per_server}.json"));
    std::fs::write(&path, serde_json::to_string(&tools).unwrap_or_default())
        .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    path
}

async fn memory(dir: &Path) {
    // The same 500-tool fixture run directly: what a server with this list holds itself.
    let tools = tools_file(dir, 500);
    let mut command = tokio::process::Command::new(FIXTURE);
    command.arg("--tools").arg(&tools);
    let transport = quiet(command);
    let pid = transport
        .id()
        .unwrap_or_else(|| panic!("fixture has no pid"));
    let client = connect(transport).await;
    let started = Instant::now();
    let listed = client
        .list_tools(None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let list_time = started.elapsed();
    let (hwm, _) = rss(pid);
    println!(
        "\n== memory: the fixture itself, 500 tools listed ==\n{:>34}: peak {:>6.1} MiB  tools/list of {} tools {:.2} ms",
        "direct server",
        hwm as f64 / 1024.0,
        listed.tools.len(),
        list_time.as_secs_f64() * 1000.0
    );
    let _ = client.cancel().await;
    // 1k tools, every one listed (exposure `all`), as the issue measured beside the direct
    // server; then 10k in the default deferred mode.
    memory_case(dir, 2, 500, "exposure = \"all\"", "< 20").await;
    memory_case(dir, 20, 500, "", "< 40").await;
}

/// Peak RSS of mcp-defer over `servers` x `per_server` tools, loaded, then after 1k, 10k
/// and 20k calls; and the time of a `tools/list`.
async fn memory_case(dir: &Path, servers: usize, per_server: usize, settings: &str, goal: &str) {
    println!(
        "\n== memory: peak RSS of mcp-defer, {servers} servers x {per_server} tools = {} catalog tools ({}) ==",
        servers * per_server,
        if settings.is_empty() {
            "deferred"
        } else {
            settings
        }
    );
    let tools = tools_file(dir, per_server);
    let tools = tools.to_string_lossy().into_owned();
    let tables: Vec<String> = (0..servers)
        .map(|i| fixture_table(&format!("s{i:02}"), &["--tools", &tools]))
        .collect();
    let empty = write_config(dir, "memory0.toml", settings, &[]);
    let config = write_config(dir, "memory.toml", settings, &tables);
    // The reference: the same binary with nothing configured.
    let (transport, pid) = spawn_defer(&empty);
    let client = connect(transport).await;
    client
        .list_tools(None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (hwm, _) = rss(pid);
    println!(
        "{:>34}: peak {:>6.1} MiB",
        "no servers (reference)",
        hwm as f64 / 1024.0
    );
    let _ = client.cancel().await;

    let (transport, pid) = spawn_defer(&config);
    let client = Arc::new(connect(transport).await);
    // The first call waits for every server to list: the catalog is complete after it.
    let search = |query: &str| {
        let mut params = CallToolRequestParams::new("search_tools");
        params.arguments = match json!({"query": query}) {
            Value::Object(map) => Some(map),
            _ => None,
        };
        params
    };
    client
        .call_tool(search("echo"))
        .await
        .unwrap_or_else(|e| panic!("search_tools: {e}"));
    let (hwm, rss_now) = rss(pid);
    println!(
        "{:>34}: peak {:>6.1} MiB  now {:>6.1} MiB {}",
        "catalog loaded, 0 calls",
        hwm as f64 / 1024.0,
        rss_now as f64 / 1024.0,
        rss_split(pid)
    );
    let mut times = Vec::new();
    let mut listed = 0;
    for _ in 0..20 {
        let started = Instant::now();
        listed = client
            .list_tools(None)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .tools
            .len();
        times.push(started.elapsed());
    }
    times.sort();
    let (hwm, rss_now) = rss(pid);
    println!(
        "{:>34}: p50 {:.2} ms ({listed} tools); peak {:>6.1} MiB  now {:>6.1} MiB",
        "tools/list x20",
        times[times.len() / 2].as_secs_f64() * 1000.0,
        hwm as f64 / 1024.0,
        rss_now as f64 / 1024.0
    );
    let routed = if servers > 7 { "s07__add" } else { "s01__add" };
    let mut done = 0;
    for target in [1_000, 10_000, 20_000] {
        let n = target - done;
        // Mostly direct routed calls, plus searches and validated `call_tool` calls.
        let (latencies, _) = run_calls(&client, routed, n * 8 / 10, CONCURRENCY).await;
        assert_eq!(latencies.len(), n * 8 / 10);
        for i in 0..n / 10 {
            let mut params = CallToolRequestParams::new("call_tool");
            params.arguments = match json!({"name": format!("s{:02}__add", i % servers), "arguments": {"a": i, "b": 1}})
            {
                Value::Object(map) => Some(map),
                _ => None,
            };
            let result = client
                .call_tool(params)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_ne!(result.is_error, Some(true), "call_tool failed: {result:?}");
            let queries = [
                "create an issue",
                "read a file",
                "current time",
                "search the web",
            ];
            client
                .call_tool(search(queries[i % queries.len()]))
                .await
                .unwrap_or_else(|e| panic!("search_tools: {e}"));
        }
        done = target;
        let (hwm, rss_now) = rss(pid);
        println!(
            "{:>34}: peak {:>6.1} MiB  now {:>6.1} MiB {} (target {goal} MB, flat)",
            format!("after {done} calls"),
            hwm as f64 / 1024.0,
            rss_now as f64 / 1024.0,
            rss_split(pid)
        );
    }
    if let Ok(client) = Arc::try_unwrap(client) {
        let _ = client.cancel().await;
    }
}

// ---------------------------------------------------------------------------------------
// Lifecycle: hot reload and lazy start

/// Calls `name` until it answers without error; the time from `since`.
async fn first_answer(client: &Client, name: &str, since: Instant) -> Duration {
    loop {
        if let Ok(result) = client.call_tool(add_params(name, 1)).await
            && result.is_error != Some(true)
        {
            return since.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// One line: `label: p50, min, max` of `times`, then `note`.
fn report(label: &str, mut times: Vec<Duration>, note: &str) {
    times.sort_unstable();
    println!(
        "{label}: p50 {:>7.2} ms  min {:>7.2} ms  max {:>7.2} ms{note}",
        ms(percentile(&times, 0.5)),
        ms(times[0]),
        ms(times[times.len() - 1])
    );
}

/// [`report`] for the lifecycle lines.
fn report_lifecycle(label: &str, times: Vec<Duration>) {
    report(&format!("{label:>44}"), times, "");
}

/// Hot reload: from the rename of an edited `servers.toml` to the first answer of the
/// server it adds (watch, debounce, load, plan, spawn, handshake, list, ingest, call),
/// beside the fixture's own spawn-to-answer. Lazy start: the first call of a lazy server
/// (its start included) against the next call and a call to a running server.
async fn lifecycle(dir: &Path, reps: usize) {
    println!("\n== lifecycle: {reps} reps ==");
    let mut cold = Vec::with_capacity(reps);
    for _ in 0..reps {
        let started = Instant::now();
        let client = direct().await;
        cold.push(first_answer(&client, "add", started).await);
        let _ = client.cancel().await;
    }
    report_lifecycle("fixture spawn to first answer (reference)", cold);

    let config = write_config(dir, "reload.toml", "", &[fixture_table("s0", &[])]);
    let (transport, _) = spawn_defer(&config);
    let client = connect(transport).await;
    first_answer(&client, "s0__add", Instant::now()).await;
    let mut reloads = Vec::with_capacity(reps);
    for i in 1..=reps {
        let servers = [
            fixture_table("s0", &[]),
            fixture_table(&format!("r{i}"), &[]),
        ];
        let text = format!("[settings]\n\n{}", servers.join("\n"));
        let tmp = dir.join("reload.toml.tmp");
        std::fs::write(&tmp, text).unwrap_or_else(|e| panic!("write: {e}"));
        let started = Instant::now();
        std::fs::rename(&tmp, &config).unwrap_or_else(|e| panic!("rename: {e}"));
        reloads.push(first_answer(&client, &format!("r{i}__add"), started).await);
    }
    report_lifecycle("reload: file saved to added server's answer", reloads);
    let _ = client.cancel().await;

    let cache = dir.join("cache");
    let lazy = write_config(
        dir,
        "lazy.toml",
        "",
        &[
            format!("{}start = \"lazy\"\n", fixture_table("lazy", &[])),
            fixture_table("eager", &[]),
        ],
    );
    // Fills the cache: a lazy server without a cached list starts once to list.
    let (transport, _) = spawn_defer_with(&lazy, &[("MCP_DEFER_CACHE_DIR", &cache)]);
    let client = connect(transport).await;
    first_answer(&client, "eager__add", Instant::now()).await;
    let _ = client.cancel().await;
    let (mut first, mut next, mut eager) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let (transport, _) = spawn_defer_with(&lazy, &[("MCP_DEFER_CACHE_DIR", &cache)]);
        let client = connect(transport).await;
        first_answer(&client, "eager__add", Instant::now()).await;
        eager.push(call(&client, "eager__add", 2).await);
        first.push(first_answer(&client, "lazy__add", Instant::now()).await);
        next.push(call(&client, "lazy__add", 2).await);
        let _ = client.cancel().await;
    }
    report_lifecycle("lazy: first call (starts the server)", first);
    report_lifecycle("lazy: the call after", next);
    report_lifecycle("eager: a call", eager);
}
