//! OAuth for remote servers without the conformance suite: a protected server started by
//! the test (401 with a `WWW-Authenticate` challenge, its metadata, a token endpoint that
//! refuses refreshes), `check` and `logout` run as real processes, and the token file
//! they share under a temporary `XDG_DATA_HOME`.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::support::{BIN, Dir, assert_contains_all, listening, row, stderr, stdout};

const ACCESS: &str = "at-SECRET-4c8e1d";
const REFRESH: &str = "rt-SECRET-93ab07";

/// An MCP endpoint at `/mcp` that wants a token it never accepts, with the metadata that
/// says where to get one. Records each request's head and body.
struct Protected {
    base: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Protected {
    fn start() -> Protected {
        Protected::answering(answer)
    }

    /// As [`Protected::start`], each request answered by `answer(base, request)`.
    fn answering(answer: fn(&str, &str) -> String) -> Protected {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (b, s) = (base.clone(), seen.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let request = read_request(&mut stream);
                s.lock().unwrap().push(request.clone());
                let _ = stream.write_all(answer(&b, &request).as_bytes());
            }
        });
        Protected { base, seen }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn seen(&self) -> String {
        self.seen.lock().unwrap().join("\n----\n")
    }
}

fn read_request(stream: &mut std::net::TcpStream) -> String {
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&data).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                return text;
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&data).to_string(),
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
}

fn answer(base: &str, request: &str) -> String {
    let target = request.split(' ').nth(1).unwrap_or("");
    let json = |status: &str, body: serde_json::Value| {
        let body = body.to_string();
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{body}",
            body.len()
        )
    };
    if target.starts_with("/.well-known/oauth-protected-resource") {
        json(
            "200 OK",
            serde_json::json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
        )
    } else if target.starts_with("/.well-known/oauth-authorization-server")
        || target.starts_with("/.well-known/openid-configuration")
    {
        json(
            "200 OK",
            serde_json::json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            }),
        )
    } else if target == "/token" {
        json(
            "400 Bad Request",
            serde_json::json!({"error": "invalid_grant"}),
        )
    } else {
        let body = "{\"error\":\"invalid_token\"}";
        format!(
            "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer error=\"invalid_token\", \
             resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\n\
             content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    }
}

/// A servers.toml with one remote server at `url`, and the data folder for tokens.
fn setup(url: &str) -> (Dir, std::path::PathBuf) {
    let dir = Dir::with_config(&format!(
        "[mcp_servers.remote]\nurl = {}\nstartup_timeout_sec = 20\n",
        serde_json::to_string(url).unwrap()
    ));
    let data = dir.file("data");
    (dir, data)
}

/// What `mcp-defer login` leaves in the token file for `url`.
fn stored_login(url: &str) -> serde_json::Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    serde_json::json!({url: {
        "credentials": {
            "client_id": "test-client",
            "token_response": {
                "access_token": ACCESS,
                "token_type": "bearer",
                "expires_in": 3600,
                "refresh_token": REFRESH,
            },
            "granted_scopes": [],
            "token_received_at": now,
        },
        "redirect_uri": "http://127.0.0.1:1/callback",
    }})
}

fn token_file(data: &std::path::Path) -> std::path::PathBuf {
    data.join("mcp-defer").join("oauth.json")
}

#[test]
fn check_says_needs_login_with_the_command_and_does_not_retry() {
    let server = Protected::start();
    let (dir, data) = setup(&server.url());
    let started = std::time::Instant::now();
    let out = dir
        .command(&["check"])
        .env("XDG_DATA_HOME", data.to_str().unwrap())
        // The user's default log filter, not the tests' own.
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let table = stdout(&out);
    // Not usable until the login: `check` exits 1 (issue 20).
    assert_eq!(out.status.code(), Some(1), "{table}\n{}", stderr(&out));
    let remote = row(&table, "remote");
    assert_eq!(remote[1], "needs login", "{table}");
    // The table says it; a 401 is an expected answer, not an error in rmcp's log.
    let log = stderr(&out);
    assert!(!log.contains("ERROR"), "an error logged for a 401:\n{log}");
    assert_eq!(
        remote[4], "needs login: run `mcp-defer login remote`",
        "{table}"
    );
    // Settled on the first 401, not after the 20 s startup timeout or a backoff loop.
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    let posts = server.seen().matches("POST /mcp").count();
    assert_eq!(posts, 1, "one attempt, no retries: {}", server.seen());
}

#[test]
fn a_stored_token_is_sent_refreshed_on_401_and_never_logged() {
    let server = Protected::start();
    let (dir, data) = setup(&server.url());
    let file = token_file(&data);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, stored_login(&server.url()).to_string()).unwrap();

    let out = dir.run_with_env(
        &["check"],
        &[
            ("XDG_DATA_HOME", data.to_str().unwrap()),
            ("RUST_LOG", "trace"),
        ],
    );
    let (table, log) = (stdout(&out), stderr(&out));
    let seen = server.seen();
    assert!(
        seen.contains(&format!("authorization: Bearer {ACCESS}"))
            || seen.contains(&format!("Authorization: Bearer {ACCESS}")),
        "the stored token was not sent: {seen}"
    );
    // The 401 made it refresh once; the refusal means a new login, not a loop.
    assert!(seen.contains("POST /token"), "no refresh: {seen}");
    assert!(seen.contains(REFRESH), "refresh token not sent: {seen}");
    assert_eq!(row(&table, "remote")[1], "needs login", "{table}\n{log}");
    assert!(log.lines().count() > 20, "trace logging was on: {log}");
    for secret in [ACCESS, REFRESH] {
        assert!(!log.contains(secret), "{secret} in stderr:\n{log}");
        assert!(!table.contains(secret), "{secret} in stdout:\n{table}");
    }
}

#[test]
fn logout_deletes_the_servers_tokens_only() {
    let (dir, data) = setup("https://one.example/mcp");
    let file = token_file(&data);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mut both = stored_login("https://one.example/mcp");
    both.as_object_mut().unwrap().extend(
        stored_login("https://two.example/mcp")
            .as_object()
            .unwrap()
            .clone(),
    );
    std::fs::write(&file, both.to_string()).unwrap();

    let out = dir
        .command(&["logout", "remote"])
        .env("XDG_DATA_HOME", data.to_str().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Logged out of 'remote'"),
        "{}",
        stdout(&out)
    );
    let left: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(left.get("https://one.example/mcp").is_none(), "{left}");
    assert!(left.get("https://two.example/mcp").is_some(), "{left}");
    #[cfg(unix)]
    {
        let mode = crate::support::os::mode(&file);
        assert_eq!(mode, 0o600, "rewritten token file mode {mode:o}");
    }

    let again = dir
        .command(&["logout", "remote"])
        .env("XDG_DATA_HOME", data.to_str().unwrap())
        .output()
        .unwrap();
    assert!(stdout(&again).contains("No login stored for 'remote'"));
}

#[test]
fn login_refuses_a_stdio_server_and_names_unknown_ones() {
    let dir = Dir::with_config("[mcp_servers.local]\ncommand = \"true\"\n");
    let out = dir.command(&["login", "local"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("stdio server"), "{}", stderr(&out));
    let out = dir.command(&["login", "locl"]).output().unwrap();
    assert!(
        stderr(&out).contains("no server 'locl'"),
        "{}",
        stderr(&out)
    );
}

/// Issue 20, item 3: a pre-registered client (`oauth_client_id`, `scopes`,
/// `oauth_callback_port`, as `import` carries them from Claude Code) is used as it is: no
/// dynamic registration, the registered redirect URI `http://localhost:<port>/callback`.
#[test]
fn login_uses_the_registered_client_and_its_fixed_callback_port() {
    let server = Protected::start();
    let port = crate::support::free_port();
    let dir = Dir::with_config(&format!(
        "[mcp_servers.remote]\nurl = {}\noauth_client_id = \"preregistered-77\"\n\
         scopes = [\"read\", \"write\"]\noauth_callback_port = {port}\n",
        serde_json::to_string(&server.url()).unwrap()
    ));
    let out = dir
        .command(&["login", "remote", "--timeout", "1", "--no-browser"])
        .env("XDG_DATA_HOME", dir.file("data"))
        .output()
        .unwrap();
    let said = stdout(&out);
    // No browser comes back within the second: the wait ends with the fix.
    assert_eq!(out.status.code(), Some(2), "{said}\n{}", stderr(&out));
    assert_contains_all(&said, &["client_id=preregistered-77"]);
    assert_contains_all(
        &said,
        &[&format!(
            "redirect_uri=http%3A%2F%2Flocalhost%3A{port}%2Fcallback"
        )],
    );
    assert!(
        said.contains("scope=read+write") || said.contains("scope=read%20write"),
        "{said}"
    );
    assert_contains_all(
        &said,
        &[&format!(
            "Waiting for the browser to come back to http://localhost:{port}/callback"
        )],
    );
    assert!(!server.seen().contains("/register"), "{}", server.seen());
}

/// One `GET` of `url` (a loopback `http://` URL); the status line of the answer.
fn get_status(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, target) = rest.split_at(rest.find('/').unwrap());
    let addr = host.replace("localhost", "127.0.0.1");
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_owned()
}

/// Issue 24 (c): a `/callback` with a wrong `state` (or none) ended the login. Now it is
/// answered 400 and the login waits on for the one with its own state.
#[test]
fn a_callback_with_another_state_is_refused_and_the_login_waits_on() {
    use std::io::BufRead;
    let server = Protected::start();
    let dir = Dir::with_config(&format!(
        "[mcp_servers.remote]\nurl = {}\noauth_client_id = \"preregistered-77\"\n",
        serde_json::to_string(&server.url()).unwrap()
    ));
    let mut login = crate::support::Killed(
        dir.command(&["login", "remote", "--timeout", "60", "--no-browser"])
            .env("XDG_DATA_HOME", dir.file("data"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = std::io::BufReader::new(login.0.stdout.take().unwrap()).lines();
    let (mut state, mut redirect) = (None, None);
    while redirect.is_none() {
        let line = lines.next().expect("login ended early").unwrap();
        if let Some(at) = line.find("state=") {
            let value = &line[at + "state=".len()..];
            state = Some(value.split('&').next().unwrap().to_owned());
        }
        if let Some(rest) = line.strip_prefix("Waiting for the browser to come back to ") {
            redirect = Some(rest.trim_end_matches(" ...").to_owned());
        }
    }
    let (state, redirect) = (state.expect("a state in the URL"), redirect.unwrap());

    for forged in [
        format!("{redirect}?code=forged-1&state=not-{state}"),
        format!("{redirect}?code=forged-2"),
        format!("{redirect}?error=access_denied&state=x{state}"),
    ] {
        let status = get_status(&forged);
        assert!(status.contains(" 400 "), "{forged}: {status}");
    }
    assert!(
        login.0.try_wait().unwrap().is_none(),
        "the login still waits"
    );
    assert!(!server.seen().contains("/token"), "{}", server.seen());

    let status = get_status(&format!("{redirect}?code=the-real-one&state={state}"));
    assert_contains_all(&status, &[" 200 "]);
    // The test's token endpoint refuses every code: the login ends, having sent ours.
    let status = login.0.wait().unwrap();
    assert_eq!(status.code(), Some(2));
    let seen = server.seen();
    assert_contains_all(&seen, &["code=the-real-one"]);
    assert!(!seen.contains("forged"), "{seen}");
}

/// Issue 24 (d): `login` at `RUST_LOG=trace` printed a URL's password (hyper-util's
/// connection pool logs its key, `user:password@host:port`, without a scheme). Two
/// passwords: a long one (registered as a secret at load) and one too short to register,
/// which only the shape rule masks.
#[test]
fn login_at_trace_never_prints_a_url_password() {
    for password in ["pw-SECRET-5d1e", "Zq9x"] {
        let server = Protected::start();
        let url = server
            .url()
            .replace("http://", &format!("http://alice:{password}@"));
        let dir = Dir::with_config(&format!(
            "[mcp_servers.remote]\nurl = {}\noauth_client_id = \"preregistered-77\"\n",
            serde_json::to_string(&url).unwrap()
        ));
        let out = dir
            .command(&["login", "remote", "--timeout", "1", "--no-browser"])
            .env("XDG_DATA_HOME", dir.file("data"))
            .env("RUST_LOG", "trace")
            .output()
            .unwrap();
        let (said, log) = (stdout(&out), stderr(&out));
        assert!(
            log.contains("pool") && log.lines().count() > 20,
            "trace logging was on: {log}"
        );
        assert!(!log.contains(password), "{password} in stderr:\n{log}");
        assert!(!said.contains(password), "{password} in stdout:\n{said}");
    }
}

/// What a hostile server writes where a client quotes it: a screen clear, a cursor home, an
/// OSC 52 write of `rm -rf ~` to the clipboard (ended by BEL), and a carriage return.
const HOSTILE: &str = "nope\x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\x07gone\r";

/// A 400 with [`HOSTILE`] as its plain-text body for the MCP endpoint and the registration
/// endpoint, the rest as [`answer`]: both bodies are quoted, `check`'s by rmcp's "HTTP 400
/// Bad Request: <body>" for the initialize, `login`'s by its "HTTP 400: <body>" for the
/// registration after discovery succeeded.
fn hostile(base: &str, request: &str) -> String {
    let target = request.split(' ').nth(1).unwrap_or("");
    if target == "/mcp" || target == "/register" {
        format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{HOSTILE}",
            HOSTILE.len()
        )
    } else {
        answer(base, request)
    }
}

/// Issue 24 (b): `check` and `login` printed a remote server's error body raw, and the
/// terminal obeyed its escapes. Both quote the hostile body (so the user sees what the server
/// said) with every control character escaped: no ESC or BEL byte reaches stdout or stderr.
#[test]
fn check_and_login_show_a_hostile_error_body_escaped() {
    let server = Protected::answering(hostile);
    let (dir, data) = setup(&server.url());
    let escaped = "nope\\u{1b}[2J\\u{1b}[H\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}gone\\r";
    let raw = |out: &std::process::Output| {
        (out.stdout.iter().chain(&out.stderr))
            .filter(|b| matches!(b, 0x1b | 0x07 | b'\r'))
            .count()
    };

    let out = dir.run_with_env(
        &["check"],
        &[
            ("XDG_DATA_HOME", data.to_str().unwrap()),
            ("RUST_LOG", "debug"),
        ],
    );
    let (table, log) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{table}\n{log}");
    let remote = row(&table, "remote");
    assert_eq!(remote[1], "failed", "{table}");
    assert!(remote[4].contains("400"), "{table}");
    assert_eq!(
        raw(&out),
        0,
        "control bytes reached the terminal:\n{table}\n{log}"
    );
    assert!(
        remote[4].contains(escaped),
        "the body is not quoted: {table}"
    );

    let out = dir
        .command(&["login", "remote", "--timeout", "1", "--no-browser"])
        .env("XDG_DATA_HOME", data.to_str().unwrap())
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    let (said, log) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{said}\n{log}");
    assert!(
        server.seen().contains("POST /register"),
        "{}",
        server.seen()
    );
    assert_contains_all(&log, &["registration failed"]);
    assert_eq!(
        raw(&out),
        0,
        "control bytes reached the terminal:\n{said}\n{log}"
    );
    assert!(log.contains(escaped), "the body is not quoted: {log}");
}

#[test]
fn login_to_a_server_without_oauth_names_the_cause_once_without_its_html() {
    let dir = Dir::new();
    let port = crate::support::free_port();
    // A plain web server: every request gets an HTML error page, as many non-OAuth
    // servers answer.
    let _web = crate::support::Killed(
        Command::new("python3")
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 -m http.server"),
    );
    listening(port, "python3 -m http.server");
    dir.config(&format!(
        "[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
    ));
    let out = Command::new(BIN)
        .args(["login", "web", "--no-browser", "--timeout", "5", "--config"])
        .arg(dir.file("servers.toml"))
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.file("data"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(!err.to_ascii_lowercase().contains("<html"), "{err}");
    assert_eq!(err.matches("HTTP 501").count(), 1, "{err}");
    assert_contains_all(&err, &["may need no login"]);
}
