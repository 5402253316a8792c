//! No child outlives mcp-defer: not the servers, not the grandchildren they fork.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::support::os::{self, Signal};
use crate::support::wait::{eventually_sync, poll_sync};
use crate::support::{Dir, exited, fixture, fixture_with_pids, is_gone, read_pids, stderr};

/// Waits until the fixture wrote its pid file.
fn wait_for_pids(path: &Path, count: usize) -> Vec<i32> {
    eventually_sync(&format!("{count} pids in {}", path.display()), || {
        let pids = read_pids(path);
        (pids.len() >= count).then_some(pids)
    })
}

fn assert_all_gone(pids: &[i32]) {
    // The group is killed before mcp-defer exits; allow a moment for the kernel to finish.
    let _ = poll_sync(Duration::from_secs(5), || pids.iter().all(|&p| is_gone(p)));
    let alive: Vec<_> = pids.iter().filter(|&&p| !is_gone(p)).collect();
    for &&pid in &alive {
        // A pid this test's fixture reported; cleans up after failure.
        os::send(pid, Signal::Kill);
    }
    assert!(
        alive.is_empty(),
        "still running after mcp-defer exited: {alive:?}"
    );
}

fn grandchild_config(dir: &Dir, slow_one: bool) -> [std::path::PathBuf; 2] {
    let a = dir.file("a.pids");
    let b = dir.file("b.pids");
    let mut toml = fixture_with_pids("a", &a, "");
    let mut b_args = vec![
        "--grandchild-pid-file".to_owned(),
        b.to_string_lossy().into_owned(),
    ];
    if slow_one {
        b_args.extend(["--slow-start-ms".to_owned(), "60000".to_owned()]);
    }
    let b_args: Vec<&str> = b_args.iter().map(String::as_str).collect();
    toml += &fixture("b", &b_args, "startup_timeout_sec = 120");
    dir.config(&toml);
    [a, b]
}

#[test]
fn check_leaves_no_child_or_grandchild() {
    let dir = Dir::new();
    let [a, b] = grandchild_config(&dir, false);
    let out = dir.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut pids = read_pids(&a);
    pids.extend(read_pids(&b));
    assert_eq!(pids.len(), 4, "two servers, two grandchildren");
    assert_all_gone(&pids);
}

#[test]
fn list_leaves_no_child_or_grandchild() {
    let dir = Dir::new();
    let [a, b] = grandchild_config(&dir, false);
    let out = dir.run(&["list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut pids = read_pids(&a);
    pids.extend(read_pids(&b));
    assert_eq!(pids.len(), 4);
    assert_all_gone(&pids);
}

#[test]
fn interrupted_check_leaves_no_child_or_grandchild() {
    let dir = Dir::new();
    // `b` would take a minute to start: the interrupt arrives while check still waits.
    let [a, b] = grandchild_config(&dir, true);
    let mut child = dir
        .command(&["check"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn check");
    let mut pids = wait_for_pids(&a, 2);
    pids.extend(wait_for_pids(&b, 2));
    os::send(child.id() as i32, Signal::Int);
    let status = exited(&mut child, "check exits after SIGINT");
    let out = child.wait_with_output().expect("output");
    assert!(
        status.code().is_some(),
        "exited by itself, not killed: {status:?}"
    );
    let _ = out;
    assert_all_gone(&pids);
}

/// Starts `serve` with stdin held open, waits until both servers and their grandchildren run.
fn serve_with_grandchildren(dir: &Dir) -> (std::process::Child, Vec<i32>) {
    let [a, b] = grandchild_config(dir, false);
    let child = dir
        .command(&["serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut pids = wait_for_pids(&a, 2);
    pids.extend(wait_for_pids(&b, 2));
    (child, pids)
}

fn wait_exit(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    exited(child, &format!("serve exits after {what}"))
}

#[test]
fn terminated_serve_leaves_no_child_or_grandchild() {
    let dir = Dir::new();
    let (mut child, pids) = serve_with_grandchildren(&dir);
    os::send(child.id() as i32, Signal::Term);
    let status = wait_exit(&mut child, "SIGTERM");
    assert_eq!(status.code(), Some(0), "serve exits cleanly on SIGTERM");
    assert_all_gone(&pids);
}

#[test]
fn serve_ends_with_its_client_and_leaves_no_child() {
    let dir = Dir::new();
    let (mut child, pids) = serve_with_grandchildren(&dir);
    drop(child.stdin.take());
    let status = wait_exit(&mut child, "stdin closed");
    assert_eq!(
        status.code(),
        Some(0),
        "serve exits cleanly when the client hangs up"
    );
    assert_all_gone(&pids);
}

/// Issue 10 item 9: SIGKILL leaves mcp-defer no chance to clean up. The servers die of their
/// parent-death signal, and the watchdog kills their process groups, grandchildren included.
#[test]
fn killed_serve_leaves_no_child_or_grandchild() {
    let dir = Dir::new();
    let (mut child, pids) = serve_with_grandchildren(&dir);
    os::send(child.id() as i32, Signal::Kill);
    let status = wait_exit(&mut child, "SIGKILL");
    assert_eq!(status.code(), None, "killed, not exited");
    assert_all_gone(&pids);
}
