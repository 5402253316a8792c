//! Secrets stay where they belong (issue 10, item 4): a stdio server gets Codex's default
//! variables plus its own `env`/`env_vars`, and no planted secret (in `env`, a bearer token,
//! an HTTP header, a URL) reaches stdout, stderr at trace level, a tool result or `check`.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::session::{Session, text};
use crate::support::{
    self, Dir, FIXTURE, assert_contains_all, line_where, row, stderr, stdout, toml_str,
};

const ENV_SECRET: &str = "planted-env-value-4471";
const BAD_SECRET: &str = "planted-bad-value-8812";
const BEARER_SECRET: &str = "planted-bearer-value-3";
const HEADER_SECRET: &str = "planted-header-value-7";
const URL_PASSWORD: &str = "planted-url-pass-5";
const URL_KEY: &str = "planted-url-key-6";
/// Set in mcp-defer's environment only; no server is given it.
const UNRELATED_SECRET: &str = "planted-unrelated-value-2";

const ALL: &[&str] = &[
    ENV_SECRET,
    BAD_SECRET,
    BEARER_SECRET,
    HEADER_SECRET,
    URL_PASSWORD,
    URL_KEY,
    UNRELATED_SECRET,
];

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn config(dir: &Dir) {
    let port = closed_port();
    let toml = format!(
        "[mcp_servers.ok]\ncommand = {fixture}\nargs = [\"--print-env\"]\n\
         env = {{ PLANTED_ENV = \"{ENV_SECRET}\" }}\n\n\
         [mcp_servers.bad]\ncommand = {fixture}\n\
         args = [\"--print-env\", \"--fail-start\", \"cannot start: the database refused us\"]\n\
         env = {{ PLANTED_BAD = \"{BAD_SECRET}\" }}\n\n\
         [mcp_servers.web]\n\
         url = \"http://tokuser:{URL_PASSWORD}@127.0.0.1:{port}/mcp?api_key={URL_KEY}\"\n\
         bearer_token_env_var = \"PLANTED_BEARER\"\n\
         http_headers = {{ \"X-Api-Key\" = \"{HEADER_SECRET}\" }}\nstartup_timeout_sec = 3\n",
        fixture = toml_str(FIXTURE),
    );
    dir.config(&toml);
}

fn assert_clean(what: &str, text: &str) {
    for secret in ALL {
        assert!(
            !text.contains(secret),
            "{secret} leaked into {what}:\n{text}"
        );
    }
}

#[test]
fn check_shows_env_names_and_no_secret_at_trace_level() {
    let dir = Dir::new();
    config(&dir);
    let out = dir.run_with_env(
        &["check"],
        &[
            ("RUST_LOG", "trace"),
            ("PLANTED_BEARER", BEARER_SECRET),
            ("PLANTED_UNRELATED", UNRELATED_SECRET),
        ],
    );
    let (table, log) = (stdout(&out), stderr(&out));
    assert_clean("check's stdout", &table);
    assert_clean("check's stderr", &log);
    assert_eq!(row(&table, "ok")[1], "ready", "{table}");
    // The user sees the failing server's stderr; the URL's credentials are masked.
    let bad = row(&table, "bad");
    assert!(bad[4].contains("the database refused us"), "{bad:?}");
    let web = row(&table, "web");
    assert!(web[4].contains("http://***@127.0.0.1"), "{web:?}");
    // Names, never values: what each stdio server receives.
    let names = line_where(&table, |l| l.starts_with("ok: "));
    assert_contains_all(names, &["PATH", "PLANTED_ENV"]);
    assert!(!names.contains("PLANTED_UNRELATED"), "{names}");
    // The server's own dump of its environment (logged at debug) has no unrelated variable.
    assert!(
        log.contains("PLANTED_ENV=***"),
        "child stderr is logged, redacted"
    );
    assert!(!log.contains("PLANTED_UNRELATED"), "{log}");
}

#[tokio::test]
async fn no_secret_reaches_the_model_or_the_log() {
    let dir = Dir::new();
    config(&dir);
    let log_path = dir.file("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let session = Session::start_logged(&dir.file("servers.toml"), Some(log), |command| {
        command
            .env("RUST_LOG", "trace")
            .env("PLANTED_BEARER", BEARER_SECRET)
            .env("PLANTED_UNRELATED", UNRELATED_SECRET);
    })
    .await;
    let mut seen = Vec::new();
    seen.push(serde_json::to_string(&session.list().await).unwrap());
    for (tool, args) in [
        ("search_tools", json!({"query": "echo"})),
        (
            "call_tool",
            json!({"name": "ok__echo", "arguments": {"x": 1}}),
        ),
        ("call_tool", json!({"name": "bad__echo", "arguments": {}})),
        ("call_tool", json!({"name": "web__echo", "arguments": {}})),
        (
            "select_tools",
            json!({"names": ["bad__echo", "web__echo", "ok__add"]}),
        ),
    ] {
        let result = session.call(tool, args).await;
        seen.push(serde_json::to_string(&result).unwrap());
        if tool == "call_tool" && text(&result).contains("bad") {
            // The model learns the server failed and why, not what it printed.
            let said = text(&result);
            assert_contains_all(&said, &["'bad'", "exited with code 1"]);
            assert!(!said.contains("database refused"), "{said}");
        }
    }
    let direct = session.try_call("bad__echo", json!({})).await;
    seen.push(format!("{direct:?}"));
    // Its whole log, the shutdown included: read once the process has exited.
    session
        .close_and_wait_exit(std::time::Duration::from_secs(30))
        .await;
    for text in &seen {
        assert_clean("a result the model reads", text);
    }
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("TRACE"), "the log ran at trace level");
    assert_clean("serve's stderr", &log);
}

/// server-everything's `get-env` prints its whole environment: a variable that only
/// mcp-defer has must not be in it, unless the server opts into `inherit_env`.
#[tokio::test]
async fn a_stdio_server_does_not_see_unrelated_variables() {
    let Some(peers) = support::peers() else {
        return;
    };
    for inherit in [false, true] {
        let dir = Dir::with_config(&format!(
            "[mcp_servers.ev]\ncommand = {}\nargs = [\"stdio\"]\ninherit_env = {inherit}\n\
             env = {{ GIVEN = \"given-value\" }}\n",
            toml_str(&peers.everything.to_string_lossy())
        ));
        let session = Session::start_with(&dir.file("servers.toml"), |command| {
            command
                .env("MCP_DEFER_UNRELATED", UNRELATED_SECRET)
                .stderr(Stdio::null());
        })
        .await;
        let result = session.call_through("ev__get-env", json!({})).await;
        let env: Value = serde_json::from_str(&text(&result))
            .unwrap_or_else(|e| panic!("get-env answers JSON ({e}): {}", text(&result)));
        session.close().await;
        assert_eq!(env["GIVEN"], "given-value", "{env}");
        assert!(
            env.get("PATH").is_some(),
            "the default set passes PATH: {env}"
        );
        assert_eq!(
            env.get("MCP_DEFER_UNRELATED").is_some(),
            inherit,
            "inherit_env = {inherit}: {env}"
        );
    }
}

/// The HTTP token `serve --http` accepts.
const HTTP_TOKEN: &str = "planted-http-token-5150";
const OTHER_TOKEN: &str = "planted-http-token-6161";

/// `[settings.http] token_file` with `tokens`, and one fixture server with an `env` secret.
fn http_config(dir: &Dir, tokens: &[&str]) {
    std::fs::write(dir.file("tokens"), tokens.join("\n") + "\n").unwrap();
    dir.config(&format!(
        "[settings.http]\ntoken_file = \"tokens\"\n\n{}",
        support::fixture(
            "fx",
            &[],
            &format!("env = {{ PLANTED_ENV = \"{ENV_SECRET}\" }}")
        ),
    ));
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// Issue 35 item 9: a client that puts its own HTTP token (or a configured `env` value)
/// in a tool's arguments or a search query had it printed by rmcp's request dump, and the
/// session id was in rmcp's worker name `streamable-http-session-<id>`. Through a real
/// `serve --http` at trace level: neither is in the log, while the call itself works.
#[tokio::test]
async fn http_tokens_in_arguments_and_session_ids_stay_out_of_a_trace_log() {
    use crate::support::http::{Server, open_session, post, result_of};
    let dir = Dir::new();
    http_config(&dir, &[HTTP_TOKEN]);
    let server = Server::start(&dir, &[("RUST_LOG", "trace")]);
    let client = reqwest::Client::new();
    let auth = bearer(HTTP_TOKEN);
    let session = open_session(&client, &server.url, &[("authorization", &auth)]).await;
    let headers = [
        ("authorization", auth.as_str()),
        ("mcp-session-id", &session),
    ];
    let (status, _, body) = post(
        &client,
        &server.url,
        &headers,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "call_tool",
            "arguments": {"name": "fx__echo", "arguments": {"t": HTTP_TOKEN, "e": ENV_SECRET}}}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        result_of(&body, 2).to_string().contains(HTTP_TOKEN),
        "the call reached the server with its arguments: {body}"
    );
    let (status, _, body) = post(
        &client,
        &server.url,
        &headers,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "search_tools", "arguments": {"query": format!("echo {HTTP_TOKEN}")}}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    server.wait_for_log("tools/call over HTTP on the thin path id=3");
    let log = server.log();
    assert!(log.contains("TRACE"), "the log ran at trace level");
    for (what, secret) in [
        ("the HTTP token", HTTP_TOKEN),
        ("the env value", ENV_SECRET),
        ("the session id", session.as_str()),
    ] {
        let lines: Vec<&str> = log.lines().filter(|l| l.contains(secret)).take(3).collect();
        assert!(lines.is_empty(), "{what} is in the log: {lines:#?}");
    }
}

/// Issue 35 item 9: a token removed from `token_file` kept working, for new requests and
/// its open sessions, until a restart, and nothing was logged. Through a real
/// `serve --http`: once the file is saved without it, it is refused (401) for a new
/// session and in its open one, the other token goes on working in its own, and the log
/// says how many tokens were revoked without naming one.
#[tokio::test]
async fn a_token_removed_from_token_file_is_refused_in_new_and_open_sessions() {
    use crate::support::http::{Server, initialize, open_session, post, tools_list};
    let dir = Dir::new();
    http_config(&dir, &[HTTP_TOKEN, OTHER_TOKEN]);
    let server = Server::start(&dir, &[]);
    let client = reqwest::Client::new();
    let (revoked, kept) = (bearer(HTTP_TOKEN), bearer(OTHER_TOKEN));
    let open_revoked = open_session(&client, &server.url, &[("authorization", &revoked)]).await;
    let open_kept = open_session(&client, &server.url, &[("authorization", &kept)]).await;

    // Saved as editors do: a new file renamed over the old one.
    let tmp = dir.file("tokens.tmp");
    std::fs::write(&tmp, format!("# rotated\n{OTHER_TOKEN}\n")).unwrap();
    std::fs::rename(&tmp, dir.file("tokens")).unwrap();
    server.wait_for_log("token_file changed");

    let list = |token: &str, session: &str| {
        let headers = [
            ("authorization", token.to_owned()),
            ("mcp-session-id", session.to_owned()),
        ];
        let client = client.clone();
        let url = server.url.clone();
        async move {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            post(&client, &url, &headers, &tools_list(5)).await.0
        }
    };
    assert_eq!(list(&revoked, &open_revoked).await, 401, "its open session");
    let (status, _, _) = post(
        &client,
        &server.url,
        &[("authorization", &revoked)],
        &initialize(),
    )
    .await;
    assert_eq!(status, 401, "a new session");
    assert_eq!(
        list(&kept, &open_kept).await,
        200,
        "the other token's session"
    );
    let log = server.log();
    assert_contains_all(&log, &["revoked=1"]);
    assert!(
        !log.contains(HTTP_TOKEN) && !log.contains(OTHER_TOKEN),
        "{log}"
    );
}

/// Issue 35 item 9: `-v` (debug) does not log a tool's arguments or a search's query:
/// rmcp's request dump is `-vv` only, where every line is masked. Through a real
/// `serve -v` over stdio.
#[tokio::test]
async fn verbose_logs_no_tool_arguments_or_queries() {
    const ARGUMENT: &str = "marker-argument-4242";
    const QUERY: &str = "marker-query-7777";
    let dir = Dir::with_config(&support::fixture("fx", &[], ""));
    let log_path = dir.file("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let session = Session::start_logged(&dir.file("servers.toml"), Some(log), |command| {
        command.env_remove("RUST_LOG").arg("-v");
    })
    .await;
    let echoed = session
        .call_through("fx__echo", json!({"said": ARGUMENT}))
        .await;
    assert!(text(&echoed).contains(ARGUMENT), "{echoed:?}");
    session
        .call("search_tools", json!({"query": format!("echo {QUERY}")}))
        .await;
    session
        .close_and_wait_exit(std::time::Duration::from_secs(30))
        .await;
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("DEBUG"), "the log ran at debug level");
    for marker in [ARGUMENT, QUERY] {
        let lines: Vec<&str> = log.lines().filter(|l| l.contains(marker)).collect();
        assert!(lines.is_empty(), "{marker} logged at -v: {lines:#?}");
    }
}
