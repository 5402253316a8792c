//! Many client sessions at once over the five reference servers, or ten (issue 29): the servers
//! registered directly (each session starts its own), through mcp-defer with one process per
//! session (`--no-hub`), and through the hub. For 1, 5 and 10 concurrent sessions: the
//! processes on the client's side, their total RSS once every server is up (right after
//! each session's calls, and again after 7 s idle, as sessions are between turns), and each
//! session's time to its first `tools/list` (direct: until every server has listed).
//! Then one more session joins: its time to the first `tools/list`.
//!
//! `cargo bench --bench hub -- [--sessions 1,5,10] [--modes direct,alone,hub] [--servers 5|10]` (Linux: reads /proc; needs .peers);
//! `MCP_DEFER_BIN` measures another build of mcp-defer.
//! A bench, not a test: figures go to docs/benchmarks.md.

// A bench panics on broken setup; the crate-wide denial is for the library.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The binary measured: this build's, or `MCP_DEFER_BIN`'s (two builds side by side).
fn bin() -> PathBuf {
    std::env::var_os("MCP_DEFER_BIN")
        .map_or_else(|| env!("CARGO_BIN_EXE_mcp-defer").into(), PathBuf::from)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Direct,
    Alone,
    Hub,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Alone => "mcp-defer, no hub",
            Mode::Hub => "mcp-defer, hub",
        }
    }
}

/// A configured server: its name, how it starts, and the one cheap call a session that
/// uses it makes (tool, arguments).
struct Server {
    name: String,
    program: PathBuf,
    args: Vec<String>,
    tool: &'static str,
    arguments: &'static str,
}

/// The five reference servers, or, for `--servers 10`, each of them twice under a second
/// name (a user with ten servers: ten processes of the same kinds, each its own).
fn servers(root: &Path, work: &Path, count: usize) -> Vec<Server> {
    let py = root.join(".peers/py/bin");
    let node = root.join(".peers/node/node_modules/.bin");
    let reference = |copy: usize| {
        let suffix = if copy == 0 {
            String::new()
        } else {
            format!("{}", copy + 1)
        };
        let dir = work.join(format!("files{suffix}"));
        std::fs::create_dir_all(&dir).expect("a served directory");
        let server = |name: &str, program: PathBuf, args: Vec<String>, tool, arguments| Server {
            name: format!("{name}{suffix}"),
            program,
            args,
            tool,
            arguments,
        };
        [
            server(
                "time",
                py.join("mcp-server-time"),
                vec![],
                "get_current_time",
                r#"{"timezone": "UTC"}"#,
            ),
            server(
                "git",
                py.join("mcp-server-git"),
                vec!["--repository".into(), root.display().to_string()],
                "git_status",
                r#"{"repo_path": "."}"#,
            ),
            server(
                "everything",
                node.join("mcp-server-everything"),
                vec!["stdio".into()],
                "echo",
                r#"{"message": "hi"}"#,
            ),
            server(
                "filesystem",
                node.join("mcp-server-filesystem"),
                vec![dir.display().to_string()],
                "list_allowed_directories",
                "{}",
            ),
            server(
                "memory",
                node.join("mcp-server-memory"),
                vec![],
                "read_graph",
                "{}",
            ),
        ]
    };
    (0..count.div_ceil(5))
        .flat_map(reference)
        .take(count)
        .collect()
}

/// One JSON-RPC line peer over a child's stdio.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: i64,
}

impl Peer {
    fn spawn(mut command: Command) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {command:?}: {e}"));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Peer {
            child,
            stdin,
            stdout,
            next: 0,
        }
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line).expect("read") == 0 {
                panic!("{method}: the peer closed its stdout");
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
        }
    }

    fn open(&mut self) {
        let init = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
}

/// A client session: its peers (five servers, or one mcp-defer) and when its first
/// `tools/list` was answered.
struct Session {
    peers: Vec<Peer>,
    first_list: Duration,
}

fn session(mode: Mode, config: &Path, run: &Path, servers: &[Server]) -> Session {
    let start = Instant::now();
    if mode == Mode::Direct {
        let mut peers: Vec<Peer> = (servers.iter())
            .map(|server| {
                let mut command = Command::new(&server.program);
                command.args(&server.args);
                Peer::spawn(command)
            })
            .collect();
        for peer in &mut peers {
            peer.open();
            let listed = peer.request("tools/list", json!({}));
            assert!(listed.get("result").is_some(), "tools/list: {listed}");
        }
        return Session {
            first_list: start.elapsed(),
            peers,
        };
    }
    let mut command = Command::new(bin());
    command
        .args(["serve", "--config"])
        .arg(config)
        .env("XDG_RUNTIME_DIR", run)
        .env(
            "MCP_DEFER_HUB",
            if mode == Mode::Hub { "on" } else { "off" },
        )
        .env("MCP_DEFER_DATA_DIR", run.join("data"));
    let mut peer = Peer::spawn(command);
    peer.open();
    let listed = peer.request("tools/list", json!({}));
    assert!(listed.get("result").is_some(), "tools/list: {listed}");
    let first_list = start.elapsed();
    // Each session uses every server once (servers with cached tools start only on use),
    // so the memory is measured with every server up, as a working session has them.
    for Server {
        name: server,
        tool,
        arguments,
        ..
    } in servers
    {
        let arguments: Value = serde_json::from_str(arguments).expect("json");
        let called = peer.request(
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": format!("{server}__{tool}"),
                   "arguments": arguments}}),
        );
        assert!(called.get("result").is_some(), "{server}__{tool}: {called}");
    }
    Session {
        peers: vec![peer],
        first_list,
    }
}

/// Every process: pid, parent, (RSS, PSS) in kB, command line. PSS splits pages shared
/// between processes (the one binary every relay maps, node's and Python's libraries) among
/// them; RSS counts them in each.
fn processes() -> Vec<(i32, i32, (u64, u64), String)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        };
        let (Some(ppid), rss) = (field("PPid:"), field("VmRSS:").unwrap_or(0)) else {
            continue;
        };
        let pss = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
            .ok()
            .and_then(|t| {
                (t.lines().find(|l| l.starts_with("Pss:")))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|v| v.parse::<u64>().ok())
            })
            .unwrap_or(0);
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default();
        all.push((pid, ppid as i32, (rss, pss), cmdline));
    }
    all
}

/// What the client's side is made of: its process count, total RSS and PSS (kB), and
/// mcp-defer's own processes among them by role (RSS, PSS in kB each).
struct Tree {
    count: usize,
    rss: u64,
    pss: u64,
    ours: Vec<(&'static str, (u64, u64))>,
}

/// The processes of the client's side: `roots`, the hubs of `config`, and their descendants.
fn tree(roots: &[u32], config: &Path) -> Tree {
    let all = processes();
    let marker = config.display().to_string();
    let mut pids: BTreeSet<i32> = roots.iter().map(|&p| p as i32).collect();
    pids.extend(
        (all.iter())
            .filter(|(_, _, _, c)| c.contains("--hub") && c.contains(&marker))
            .map(|(p, ..)| *p),
    );
    loop {
        let before = pids.len();
        for (pid, ppid, ..) in &all {
            if pids.contains(ppid) {
                pids.insert(*pid);
            }
        }
        if pids.len() == before {
            break;
        }
    }
    let mine: Vec<_> = all.iter().filter(|(p, ..)| pids.contains(p)).collect();
    let (rss, pss) = (mine.iter()).fold((0, 0), |(r, p), (_, _, (rss, pss), _)| (r + rss, p + pss));
    let bin = bin().display().to_string();
    let ours = (mine.iter())
        .filter(|(.., c)| c.starts_with(&bin))
        .map(|(_, _, memory, c)| {
            let role = match c {
                c if c.contains(" __watchdog") => "watchdog",
                c if c.contains("--hub") => "hub",
                _ => "session",
            };
            (role, *memory)
        })
        .collect();
    Tree {
        count: pids.len(),
        rss,
        pss,
        ours,
    }
}

/// mcp-defer's processes by role: `role count x mean RSS (mean PSS)`, in MB.
fn roles(ours: &[(&str, (u64, u64))]) -> String {
    let mut text = Vec::new();
    for role in ["session", "hub", "watchdog"] {
        let of: Vec<_> = ours
            .iter()
            .filter(|(r, _)| *r == role)
            .map(|(_, m)| m)
            .collect();
        if of.is_empty() {
            continue;
        }
        let n = of.len() as f64;
        let rss = of.iter().map(|m| m.0).sum::<u64>() as f64 / n / 1024.0;
        let pss = of.iter().map(|m| m.1).sum::<u64>() as f64 / n / 1024.0;
        text.push(format!("{role} {} x {rss:.1} ({pss:.1})", of.len()));
    }
    text.join(", ")
}

fn hubs_running(config: &Path) -> bool {
    let marker = config.display().to_string();
    processes()
        .iter()
        .any(|(_, _, _, c)| c.contains("--hub") && c.contains(&marker))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let counts: Vec<usize> = (args.iter().position(|a| a == "--sessions"))
        .and_then(|i| args.get(i + 1))
        .map(|s| s.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 5, 10]);
    let modes: Vec<Mode> = (args.iter().position(|a| a == "--modes"))
        .and_then(|i| args.get(i + 1))
        .map(|s| {
            (s.split(','))
                .filter_map(|m| match m {
                    "direct" => Some(Mode::Direct),
                    "alone" => Some(Mode::Alone),
                    "hub" => Some(Mode::Hub),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_else(|| vec![Mode::Direct, Mode::Alone, Mode::Hub]);
    let server_count: usize = (args.iter().position(|a| a == "--servers"))
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    println!("{server_count} servers");
    println!(
        "| sessions | servers registered | processes | total RSS busy / idle | total PSS busy / idle | first tools/list p50 / max | one more session joins | mcp-defer's processes idle: count x RSS (PSS), MB |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---|");
    for &n in &counts {
        for mode in modes.iter().copied() {
            let dir = tempfile::tempdir().expect("temp dir");
            let run = dir.path().join("run");
            std::fs::create_dir_all(&run).expect("run dir");
            let servers = servers(&root, dir.path(), server_count);
            let mut toml = String::from("[settings]\nhub_grace_sec = 0\n");
            for Server {
                name,
                program,
                args,
                ..
            } in &servers
            {
                toml += &format!(
                    "[mcp_servers.{name}]\ncommand = {}\nargs = {}\n",
                    serde_json::to_string(&program.display().to_string()).expect("string"),
                    serde_json::to_string(args).expect("list"),
                );
            }
            let config = dir.path().join("servers.toml");
            std::fs::write(&config, toml).expect("config");
            let sessions: Vec<Session> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..n)
                    .map(|_| scope.spawn(|| session(mode, &config, &run, &servers)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("session"))
                    .collect()
            });
            let roots: Vec<u32> = sessions
                .iter()
                .flat_map(|s| s.peers.iter().map(|p| p.child.id()))
                .collect();
            let busy = tree(&roots, &config);
            // Then idle, as sessions are between turns: past the relay's trim (`IDLE_TRIM`).
            std::thread::sleep(Duration::from_secs(7));
            let idle = tree(&roots, &config);
            let joined = session(mode, &config, &run, &servers);
            let mut firsts: Vec<Duration> = sessions.iter().map(|s| s.first_list).collect();
            firsts.sort();
            println!(
                "| {n} | {} | {} | {:.0} / {:.0} MB | {:.0} / {:.0} MB | {:.0} / {:.0} ms | {:.1} ms | {} |",
                mode.name(),
                idle.count,
                busy.rss as f64 / 1024.0,
                idle.rss as f64 / 1024.0,
                busy.pss as f64 / 1024.0,
                idle.pss as f64 / 1024.0,
                ms(firsts[firsts.len() / 2]),
                ms(firsts[firsts.len() - 1]),
                ms(joined.first_list),
                roles(&idle.ours),
            );
            for mut peer in sessions.into_iter().chain([joined]).flat_map(|s| s.peers) {
                drop(peer.stdin);
                let _ = peer.child.wait();
            }
            let deadline = Instant::now() + Duration::from_secs(20);
            while hubs_running(&config) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}
