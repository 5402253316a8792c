//! Issue 24 (b): a remote server's error body reached the terminal raw through `check`
//! and `login` (18 ESC bytes in the hostile test: a screen clear, an OSC 52 clipboard
//! write). A server started by the test answers every request with such a body; neither
//! command may print a control character of it, and each shows it escaped.

use std::io::{Read, Write};
use std::net::TcpListener;

use crate::util::{Dir, stderr, stdout};

/// Clears the screen, homes the cursor, writes "pwned" to the clipboard (OSC 52), rings.
const HOSTILE: &str = "\x1b[2J\x1b[H\x1b]52;c;cHduZWQ=\x07\x1b[31mboom\r\u{9b}0m";

/// A server answering every request `500` with [`HOSTILE`] as a plain-text body.
fn hostile_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", listener.local_addr().unwrap().port());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(500)));
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{HOSTILE}",
                HOSTILE.len()
            );
        }
    });
    url
}

fn assert_no_controls(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c.is_control() && c != '\n' && c != '\t')
        .collect();
    assert!(bad.is_empty(), "{what} has control characters {bad:?}:\n{text:?}");
}

#[test]
fn check_and_login_show_a_servers_control_characters_escaped() {
    let dir = Dir::new();
    dir.config(&format!(
        "[mcp_servers.remote]\nurl = \"{}\"\nstartup_timeout_sec = 10\n",
        hostile_server()
    ));
    let check = dir.run(&["check"]);
    let login = dir
        .command(&["login", "remote", "--timeout", "1", "--no-browser"])
        .env("XDG_DATA_HOME", dir.file("data"))
        .output()
        .unwrap();
    let mut shown = String::new();
    for (what, out) in [("check", &check), ("login", &login)] {
        let (said, log) = (stdout(out), stderr(out));
        assert_no_controls(&format!("{what} stdout"), &said);
        assert_no_controls(&format!("{what} stderr"), &log);
        shown.push_str(&said);
        shown.push_str(&log);
    }
    // The body was shown (escaped), not swallowed: the user sees what the server sent.
    assert!(shown.contains("\\u{1b}[2J"), "{shown}");
}
