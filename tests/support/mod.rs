//! The shared harness: a temp dir with a `servers.toml`, the built binaries, the real peers;
//! its modules the clients tests speak through (`session`: rmcp over stdio, `raw`: JSON-RPC
//! lines, `http`: `serve --http` and plain HTTP) and the OS calls (`os`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub mod http;
#[cfg(unix)]
pub mod os;
pub mod raw;
pub mod reference;
pub mod session;
pub mod wait;

/// The `mcp-defer` binary cargo built for this test run.
pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-defer");
/// The fixture MCP server (flags choose its faults).
pub const FIXTURE: &str = env!("CARGO_BIN_EXE_mcp-defer-fixture");

/// The `mcp-defer` the tests run: [`BIN`], or the build `MCP_DEFER_TEST_BIN` names (a base
/// commit's, to see a test fail before its fix).
pub fn bin_under_test() -> String {
    std::env::var("MCP_DEFER_TEST_BIN").unwrap_or_else(|_| BIN.to_owned())
}

/// `mcp-defer serve --config <config>` as a client spawns it, logging at `mcp_defer=debug`
/// (or at `TEST_RUST_LOG` when set).
pub fn serve_command(config: &Path) -> tokio::process::Command {
    serve_command_of(Path::new(&bin_under_test()), config)
}

/// As [`serve_command`], run by `program`: another build of mcp-defer.
pub fn serve_command_of(program: &Path, config: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command.arg("serve").arg("--config").arg(config).env(
        "RUST_LOG",
        std::env::var("TEST_RUST_LOG").unwrap_or("mcp_defer=debug".into()),
    );
    command
}

/// A temporary directory holding one `servers.toml`.
pub struct Dir {
    tmp: tempfile::TempDir,
}

impl Dir {
    pub fn new() -> Dir {
        Dir {
            tmp: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// A new directory whose `servers.toml` is `toml`.
    pub fn with_config(toml: &str) -> Dir {
        let dir = Dir::new();
        dir.config(toml);
        dir
    }

    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// A file path inside the directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// Writes `servers.toml` and returns its path.
    pub fn config(&self, toml: &str) -> PathBuf {
        let path = self.file("servers.toml");
        std::fs::write(&path, toml).expect("write servers.toml");
        path
    }

    /// `mcp-defer <args> --config <dir>/servers.toml`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .arg("--config")
            .arg(self.file("servers.toml"))
            .current_dir(self.path())
            .env("RUST_LOG", "warn,mcp_defer=info")
            // What search learned from use: this directory's own (see `Session::launch`).
            .env("MCP_DEFER_DATA_DIR", self.file("data"));
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run mcp-defer")
    }

    /// [`Dir::run`] with `envs` added to its environment.
    pub fn run_with_env<V: AsRef<std::ffi::OsStr>>(
        &self,
        args: &[&str],
        envs: &[(&str, V)],
    ) -> Output {
        let mut command = self.command(args);
        for (name, value) in envs {
            command.env(name, value);
        }
        command.output().expect("run mcp-defer")
    }
}

/// A `[mcp_servers.<name>]` table running the fixture with `args`, plus `extra` lines.
pub fn fixture(name: &str, args: &[&str], extra: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = {}\nargs = {}\n{extra}\n",
        toml_str(FIXTURE),
        toml_list(args)
    )
}

/// [`fixture`] whose process writes its pid (and its grandchild's) to `pids`
/// (`--grandchild-pid-file`), for the tests that watch processes come and go.
pub fn fixture_with_pids(name: &str, pids: &Path, extra: &str) -> String {
    fixture(
        name,
        &["--grandchild-pid-file", &pids.to_string_lossy()],
        extra,
    )
}

pub fn toml_str(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

pub fn toml_list(items: &[&str]) -> String {
    serde_json::to_string(items).expect("list")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts `text` contains each of `needles`; the failure names the one missing and shows
/// `text`.
pub fn assert_contains_all(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "no {needle:?} in:\n{text}");
    }
}

/// The first line of `text` where `matches` holds; fails the test showing `text` otherwise.
pub fn line_where(text: &str, matches: impl Fn(&str) -> bool) -> &str {
    (text.lines().find(|l| matches(l))).unwrap_or_else(|| panic!("no such line in:\n{text}"))
}

/// The table row of `server` in `check` output, split on runs of two or more spaces.
pub fn row(table: &str, server: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(server))
        .unwrap_or_else(|| panic!("no row for {server} in:\n{table}"));
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The real npm and PyPI servers installed by `.ci/install-peers`.
pub struct Peers {
    pub everything: PathBuf,
    pub time: PathBuf,
}

/// Set to `1` (outside `CI`) to let the tests whose peer is missing skip, each printing a
/// `SKIPPED` line, instead of failing.
pub const SKIP_MISSING_PEERS: &str = "MCP_DEFER_SKIP_MISSING_PEERS";

/// A test's peer (a real server or SDK, HAProxy, the model) is missing: the test fails,
/// so a local run cannot pass without checking what the peers check (interop, task
/// isolation). With [`SKIP_MISSING_PEERS`]`=1` outside `CI` it prints a `SKIPPED` line
/// naming the test instead, past the harness's output capture, and the caller returns.
pub fn missing_peer(what: &str, fix: &str) {
    use std::io::Write;
    let skip = std::env::var_os("CI").is_none()
        && std::env::var_os(SKIP_MISSING_PEERS).is_some_and(|v| v == "1");
    if !skip {
        panic!(
            "{what}; {fix} (or, outside CI, set {SKIP_MISSING_PEERS}=1 to skip the tests \
             that need it)"
        );
    }
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    // Straight to the stream: the harness captures `eprintln!`, and a skip must be seen.
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {what}; {fix}");
}

/// The peers, or `None` when they are not installed and skipping is allowed
/// ([`missing_peer`]); otherwise a missing peer fails the test.
pub fn peers() -> Option<Peers> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(".peers");
    let peers = Peers {
        everything: root.join("node/node_modules/.bin/mcp-server-everything"),
        time: root.join("py/bin/mcp-server-time"),
    };
    let missing: Vec<_> = [&peers.everything, &peers.time]
        .into_iter()
        .filter(|p| !p.exists())
        .collect();
    if missing.is_empty() {
        return Some(peers);
    }
    missing_peer(
        &format!("peers missing: {missing:?}"),
        "run .ci/install-peers",
    );
    None
}

/// Whether a process is gone. A zombie counts as gone: it runs nothing and holds nothing,
/// and whether it is reaped depends on the container's init, not on us.
pub fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// The live processes whose command line starts with `program` and contains `marker`
/// (a path unique to the test, such as its config or a pid file).
pub fn running(program: &str, marker: &Path) -> Vec<i32> {
    let marker = marker.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c).replace('\0', " ");
                c.starts_with(program) && c.contains(&marker)
            })
        })
        .filter(|&pid| !is_gone(pid))
        .collect()
}

/// Pids written by the fixture's `--grandchild-pid-file`, once it exists.
pub fn read_pids(path: &Path) -> Vec<i32> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

impl Peers {
    /// Runs `tests/python/<script>` with the peers' Python (the official SDK installed) and
    /// `args`, asserts it succeeded, and returns its stdout.
    pub fn python(&self, script: &str, args: &[&std::ffi::OsStr]) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/python")
            .join(script);
        // What search learns from use stays with this run (see `Session::launch`).
        let data = tempfile::tempdir().expect("temp dir");
        let output = Command::new(self.time.with_file_name("python"))
            .arg(path)
            .args(args)
            .env("RUST_LOG", "mcp_defer=debug")
            .env("MCP_DEFER_DATA_DIR", data.path())
            .output()
            .unwrap_or_else(|e| panic!("run {script}: {e}"));
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{script} {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }
}

/// How many times `tool` was called, as the fixture's `--record-calls PATH` wrote it (one
/// name a line, before answering: the call reached the server).
pub fn recorded_calls(path: &Path, tool: &str) -> usize {
    (std::fs::read_to_string(path).unwrap_or_default().lines())
        .filter(|l| *l == tool)
        .count()
}

/// Waits until `child` exits (`what`: that it does, for the failure) and returns its status.
pub fn exited(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    wait::eventually_sync(what, || child.try_wait().expect("wait for a child"))
}

/// A process killed when dropped, so a failing assertion leaves nothing running.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until `what` accepts connections on loopback `port`.
pub fn listening(port: u16, what: &str) {
    wait::eventually_sync(&format!("{what} listens on port {port}"), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
}

/// A free loopback port, for a server the test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap_or_else(|e| panic!("no free loopback port: {e}"))
}

impl Peers {
    /// Starts `mcp-server-everything streamableHttp` on `port` and waits until it accepts.
    pub fn http_everything(&self, port: u16) -> Killed {
        let child = Killed(
            Command::new(&self.everything)
                .arg("streamableHttp")
                .env("PORT", port.to_string())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("start server-everything over HTTP: {e}")),
        );
        listening(port, "server-everything");
        child
    }
}
