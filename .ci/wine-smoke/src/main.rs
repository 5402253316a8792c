//! `.ci/cross`'s Wine smoke test; see Cargo.toml.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::{Command, ExitCode, Stdio};

fn main() -> ExitCode {
    // A HashMap's RandomState seeds from ProcessPrng: without bcryptprimitives.dll the
    // program does not even start.
    let mut map = HashMap::new();
    map.insert("prng", 1);
    let mut child = match Command::new("cmd.exe")
        .args(["/c", "more"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(err) => {
            eprintln!("wine-smoke: cannot spawn cmd.exe: {err}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"through a pipe\r\n");
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    let status = child.wait();
    if !out.contains("through a pipe") || map.get("prng") != Some(&1) {
        eprintln!("wine-smoke: child said {out:?}, exited {status:?}");
        return ExitCode::FAILURE;
    }
    println!("wine-smoke: HashMap ok, child over pipes ok ({})", out.trim());
    ExitCode::SUCCESS
}
