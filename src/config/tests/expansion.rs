//! `${VAR}` expansion, variables that must be set, what a process cannot receive, and
//! secrets kept out of `Debug`.

use super::*;

#[test]
fn variables_expand_everywhere_free_text_is_written() {
    let config = ok(&lines(&[
        "[mcp_servers.docs]",
        "command = \"${HOME}/bin/docs\"",
        "args = [\"--key\", \"${DOCS_KEY}\", \"--mode=${MODE:-fast}\", \"cost: $$5\", \"^end$\"]",
        "env = { KEY = \"${DOCS_KEY}\", LEVEL = \"${EMPTY:-warn}\" }",
        "cwd = \"${HOME}/work\"",
        "description = \"docs for ${USER:-everyone}\"",
        "[mcp_servers.web]",
        "url = \"https://${HOST:-example.com}/mcp\"",
        "http_headers = { \"X-Key\" = \"${DOCS_KEY}\" }",
    ]));
    let Transport::Stdio {
        command,
        args,
        env,
        cwd,
        ..
    } = &server(&config, "docs").transport
    else {
        panic!("stdio");
    };
    assert_eq!(command, "/home/me/bin/docs");
    assert_eq!(
        args,
        &["--key", DOCS_KEY, "--mode=fast", "cost: $5", "^end$"]
    );
    assert_eq!(env.get("KEY").map(String::as_str), Some(DOCS_KEY));
    assert_eq!(env.get("LEVEL").map(String::as_str), Some("warn"));
    assert_eq!(cwd.as_deref(), Some(Path::new("/home/me/work")));
    assert_eq!(
        server(&config, "docs").description.as_deref(),
        Some("docs for everyone")
    );
    let Transport::Http { url, headers, .. } = &server(&config, "web").transport else {
        panic!("http");
    };
    assert_eq!(url, "https://example.com/mcp");
    assert_eq!(headers.get("X-Key").map(String::as_str), Some(DOCS_KEY));
}

#[test]
fn unset_variable_names_server_key_and_variable() {
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "args = [",
            "  \"-y\",",
            "  \"--token=${MISSING_TOKEN}\",",
            "]",
        ]),
        5,
        &[
            "[mcp_servers.docs]",
            "`args`",
            "`MISSING_TOKEN`",
            "not set",
            "${MISSING_TOKEN:-default}",
        ],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "env = { A = \"${NOPE}\" }",
        ]),
        3,
        &["[mcp_servers.docs]", "`env.A`", "`NOPE`"],
    );
    fails(
        &lines(&["[mcp_servers.web]", "url = \"https://${NO_HOST}/mcp\""]),
        2,
        &["[mcp_servers.web]", "`url`", "`NO_HOST`"],
    );
}

#[test]
fn malformed_references_say_how_to_escape() {
    fails(
        &lines(&["[mcp_servers.a]", "command = \"run ${OOPS\""]),
        2,
        &["[mcp_servers.a]", "`command`", "closing `}`", "`$$`"],
    );
    fails(
        &lines(&["[mcp_servers.a]", "command = \"${bad name}\""]),
        2,
        &["`command`", "not a variable name", "`$$`"],
    );
}

#[test]
fn bearer_and_header_variables_must_be_set() {
    fails(
        &lines(&[
            "[mcp_servers.github]",
            "url = \"https://example.com/mcp\"",
            "bearer_token_env_var = \"NO_SUCH_PAT\"",
        ]),
        3,
        &[
            "[mcp_servers.github]",
            "`bearer_token_env_var`",
            "`NO_SUCH_PAT`",
            "not set",
        ],
    );
    fails(
        &lines(&[
            "[mcp_servers.github]",
            "url = \"https://example.com/mcp\"",
            "[mcp_servers.github.env_http_headers]",
            "X-Api-Key = \"EMPTY\"",
        ]),
        4,
        &[
            "[mcp_servers.github]",
            "`env_http_headers.X-Api-Key`",
            "`EMPTY`",
            "not set",
        ],
    );
}

#[test]
fn identifiers_are_not_expanded() {
    let config = ok(&lines(&[
        "[mcp_servers.a]",
        "command = \"a\"",
        "enabled_tools = [\"${TOOL}\"]",
    ]));
    assert_eq!(
        server(&config, "a").enabled_tools.as_deref(),
        Some(&["${TOOL}".to_owned()][..])
    );
}

#[test]
fn relative_cwd_is_relative_to_the_config_file() {
    let config = ok(&lines(&[
        "[mcp_servers.a]",
        "command = \"a\"",
        "cwd = \"tools/a\"",
        "[mcp_servers.b]",
        "command = \"b\"",
        "cwd = \"/abs\"",
    ]));
    let cwd = |name| match &server(&config, name).transport {
        Transport::Stdio { cwd, .. } => cwd.clone(),
        Transport::Http { .. } => None,
    };
    assert_eq!(cwd("a"), Some(PathBuf::from("/etc/mcp/tools/a")));
    assert_eq!(cwd("b"), Some(PathBuf::from("/abs")));
}

#[test]
fn what_a_process_cannot_receive_is_refused_at_load() {
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "env = { \"BAD=KEY\" = \"v\" }",
        ]),
        3,
        &["`env.BAD=KEY`", "not a usable environment variable name"],
    );
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "args = [\"ok\", \"x\\u0000y\"]",
        ]),
        3,
        &["`args`", "NUL"],
    );
    fails(
        &lines(&["[mcp_servers.a]", "command = \"a\"", "env_vars = [\"A=B\"]"]),
        3,
        &["`env_vars`", "not a usable"],
    );
}

#[test]
fn a_variable_set_but_empty_is_an_error_unless_a_default_allows_it() {
    let env = |name: &str| (name == "EMPTY").then(String::new);
    let text = lines(&[
        "[mcp_servers.a]",
        "command = \"a\"",
        "args = [\"--key\", \"${EMPTY}\"]",
    ]);
    let err = Config::parse_with_env(&text, Path::new(PATH), &env)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("`${EMPTY}`") && err.contains("empty string") && err.contains("${EMPTY:-}"),
        "{err}"
    );
    let text = lines(&[
        "[mcp_servers.a]",
        "command = \"a\"",
        "args = [\"${EMPTY:-}\"]",
    ]);
    assert!(Config::parse_with_env(&text, Path::new(PATH), &env).is_ok());
}

#[test]
fn debug_never_shows_secrets() {
    let config = ok(CODEX_BLOCK);
    let mut with_env = ok(&lines(&[
        "[mcp_servers.docs]",
        "command = \"npx\"",
        "env = { KEY = \"${DOCS_KEY}\" }",
    ]));
    with_env.servers.extend(config.servers.clone());
    for shown in [
        format!("{config:?}"),
        format!("{config:#?}"),
        format!("{with_env:?}"),
    ] {
        for secret in [TOKEN, DOCS_KEY, HEADER_SECRET, "literal-value"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }
    // The names stay visible: they are what a reader of a log needs.
    let shown = format!("{with_env:?}");
    assert!(shown.contains("KEY") && shown.contains("X-Tenant") && shown.contains("<redacted>"));
}
