//! The floor of a stdio proxy on this machine: a bare relay that copies each line from its
//! stdin to a child's stdin and each line of the child's stdout back, one blocking thread
//! each way, and does nothing else (no parsing, no routing, no runtime). Whatever a proxy
//! adds over the direct server, this adds at least: two pipe hops each way and the wake-ups
//! of a third process. `pipe` measures it in the same blocks as the direct server and
//! mcp-defer, so "added latency" can be read against what any proxy must pay here.
//!
//! The bench binary runs itself as the relay: `e2e floor-relay PROGRAM [ARG ...]`.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};

/// The argument that makes the bench binary this relay.
pub(super) const FLOOR_RELAY: &str = "floor-relay";

/// Relays between our stdio and `program args` until either side closes, then exits.
pub(super) fn relay(program: &str, args: &[String]) -> ! {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("floor relay: cannot start {program}: {e}"));
    let (Some(to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
        panic!("floor relay: no piped stdio");
    };
    let down = std::thread::spawn(move || copy_lines(std::io::stdin().lock(), to_child));
    copy_lines(BufReader::new(from_child), std::io::stdout().lock());
    drop(down);
    let _ = child.kill();
    std::process::exit(0)
}

/// Copies line by line, each flushed as it is read, as a line protocol needs.
fn copy_lines(from: impl BufRead, to: impl Write) {
    let mut to = BufWriter::new(to);
    for line in from.split(b'\n') {
        let Ok(mut line) = line else { return };
        line.push(b'\n');
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            return;
        }
    }
}
