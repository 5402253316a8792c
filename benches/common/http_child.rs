//! A server process a bench talks to over HTTP: started, its URL read off its log, killed
//! when the bench is done with it (`benches/http.rs`, `benches/e2e/pipe.rs`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A child killed on drop.
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` and returns it with the first `http://...` URL it writes to stderr.
pub fn start(mut command: Command) -> (Process, String) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("http://") {
                let url = line[at..].split_whitespace().next().unwrap_or_default();
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|e| panic!("no URL logged: {e}"));
    (Process(child), url)
}
