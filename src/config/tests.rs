//! Config unit tests: in-memory text and an injected environment, never the process's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;

const PATH: &str = "/etc/mcp/servers.toml";
const TOKEN: &str = "ghp_SECRET_TOKEN_VALUE";
const DOCS_KEY: &str = "docs-SECRET-KEY";
const HEADER_SECRET: &str = "hdr-SECRET-VALUE";

fn env(name: &str) -> Option<String> {
    match name {
        "GITHUB_PAT" => Some(TOKEN.into()),
        "DOCS_KEY" => Some(DOCS_KEY.into()),
        "TENANT_KEY" => Some(HEADER_SECRET.into()),
        "HOME" => Some("/home/me".into()),
        "LOCALAPPDATA" => Some(r"C:\Users\me\AppData\Local".into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

/// One string per line, so a test reads its expected line number off the array index + 1.
fn lines(lines: &[&str]) -> String {
    lines.join("\n") + "\n"
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse_with_env(text, Path::new(PATH), &env)
}

fn ok(text: &str) -> Config {
    parse(text).unwrap_or_else(|e| panic!("expected a valid config, got: {e}"))
}

/// Asserts `text` fails at `line` with a message containing every one of `parts`.
fn fails(text: &str, line: usize, parts: &[&str]) -> String {
    let err = match parse(text) {
        Ok(config) => panic!("expected an error, got {config:?}"),
        Err(err) => err,
    };
    let rendered = err.to_string();
    match &err {
        ConfigError::Invalid {
            path, line: got, ..
        } => {
            assert_eq!(path, Path::new(PATH));
            assert_eq!(*got, line, "wrong line in: {rendered}");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(
        rendered.starts_with(&format!("{PATH}:{line}: ")),
        "not `path:line: `: {rendered}"
    );
    for part in parts {
        assert!(rendered.contains(part), "{part:?} missing from: {rendered}");
    }
    for secret in [TOKEN, DOCS_KEY, HEADER_SECRET] {
        assert!(!rendered.contains(secret), "secret leaked: {rendered}");
    }
    rendered
}

fn server<'a>(config: &'a Config, name: &str) -> &'a ServerConfig {
    config
        .servers
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no server {name}"))
}

// ---- whole files that load ----

/// A block as it sits in a real `~/.codex/config.toml`, including keys only Codex uses.
const CODEX_BLOCK: &str = r#"
[mcp_servers.docs]
command = "npx"
args = ["-y", "@example/docs-mcp"]
env = { "API_KEY" = "literal-value", LOG = "info" }
env_vars = ["PATH_EXTRA", { name = "REMOTE_ONLY", source = "remote" }]
startup_timeout_sec = 20
tool_timeout_sec = 120.5
enabled_tools = ["search", "fetch"]
disabled_tools = ["fetch"]
supports_parallel_tool_calls = true
default_tools_approval_mode = "prompt"

[mcp_servers.docs.tools.search]
approval_mode = "approve"

[mcp_servers.github]
url = "https://api.githubcopilot.com/mcp/"
bearer_token_env_var = "GITHUB_PAT"
http_headers = { "X-Client" = "codex" }
env_http_headers = { "X-Tenant" = "TENANT_KEY" }
required = true
scopes = ["repo"]
oauth_resource = "https://api.githubcopilot.com"

[mcp_servers.legacy]
command = "legacy-server"
startup_timeout_ms = 2500
enabled = false
experimental_environment = "local"
name = "Legacy display name"
"#;

#[test]
fn codex_block_loads_unchanged() {
    let config = ok(CODEX_BLOCK);
    let names: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["docs", "github", "legacy"], "file order kept");

    let docs = server(&config, "docs");
    assert_eq!(docs.prefix, "docs");
    assert_eq!(docs.startup_timeout, Duration::from_secs(20));
    assert_eq!(docs.tool_timeout, Duration::from_secs_f64(120.5));
    assert_eq!(
        docs.enabled_tools.as_deref(),
        Some(&["search".to_owned(), "fetch".to_owned()][..])
    );
    assert!(docs.allows("search") && !docs.allows("fetch") && !docs.allows("other"));
    let Transport::Stdio {
        command,
        args,
        env,
        env_vars,
        cwd,
        inherit_env,
    } = &docs.transport
    else {
        panic!("docs is stdio");
    };
    assert_eq!(command, "npx");
    assert_eq!(args, &["-y", "@example/docs-mcp"]);
    assert_eq!(
        env.get("API_KEY").map(String::as_str),
        Some("literal-value")
    );
    assert_eq!(env_vars, &["PATH_EXTRA", "REMOTE_ONLY"]);
    assert_eq!(cwd, &None);
    assert!(!inherit_env, "Codex's rule unless asked");

    let github = server(&config, "github");
    assert!(github.required && github.enabled);
    assert_eq!(github.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    let Transport::Http {
        url,
        bearer_token,
        headers,
        ..
    } = &github.transport
    else {
        panic!("github is http");
    };
    assert_eq!(url, "https://api.githubcopilot.com/mcp/");
    assert_eq!(bearer_token.as_deref(), Some(TOKEN));
    assert_eq!(headers.get("X-Client").map(String::as_str), Some("codex"));
    assert_eq!(
        headers.get("X-Tenant").map(String::as_str),
        Some(HEADER_SECRET)
    );

    let legacy = server(&config, "legacy");
    assert!(!legacy.enabled);
    assert_eq!(legacy.startup_timeout, Duration::from_millis(2500));
    let enabled: Vec<_> = config.enabled_servers().map(|s| s.name.as_str()).collect();
    assert_eq!(enabled, ["docs", "github"]);
}

#[test]
fn empty_file_gives_defaults() {
    let config = ok("");
    assert_eq!(config.settings, Settings::default());
    assert_eq!(config.settings.exposure, ExposureMode::Deferred);
    assert_eq!(config.settings.max_name_length, DEFAULT_MAX_NAME_LENGTH);
    assert_eq!(config.settings.search_limit, DEFAULT_SEARCH_LIMIT);
    assert_eq!(config.settings.core_wait, DEFAULT_CORE_WAIT);
    assert_eq!(config.settings.relist_wait, DEFAULT_RELIST_WAIT);
    assert!(config.settings.claude_always_load);
    assert!(config.servers.is_empty());
    assert_eq!(config.path, PathBuf::from(PATH));
}

#[test]
fn minimal_server_gets_defaults() {
    let config = ok(&lines(&["[mcp_servers.a]", "command = \"a\""]));
    let a = server(&config, "a");
    assert_eq!(a.prefix, "a");
    assert!(a.enabled && !a.required);
    assert_eq!(a.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    assert_eq!(a.tool_timeout, DEFAULT_TOOL_TIMEOUT);
    assert_eq!(a.enabled_tools, None);
    assert!(a.disabled_tools.is_empty() && a.search_hints.is_empty());
    assert_eq!(a.always_load, AlwaysLoad::None);
    assert_eq!(a.description, None);
}

#[test]
fn settings_parse_and_convert_units() {
    let config = ok(&lines(&[
        "[settings]",
        "exposure = \"proxy\"",
        "max_name_length = 48",
        "search_limit = 20",
        "core_wait_ms = 0",
        "relist_wait_ms = 1_500",
        "claude_always_load = false",
        "inherit_env = true",
        "max_output_tokens = 20_000",
        "client_era = \"handshake\"",
        "session_idle_sec = 60",
        "[settings.search]",
        "semantic = \"off\"",
        "[settings.http]",
        "token_file = \"tokens\"",
        "allowed_origins = [\"http://localhost:*\"]",
        "max_concurrent_requests = 4",
        "header_timeout_sec = 5",
        "body_timeout_sec = 20",
        "max_connections = 500",
        "max_sessions_per_token = 7",
    ]));
    assert_eq!(
        config.settings,
        Settings {
            exposure: ExposureMode::Proxy,
            max_name_length: 48,
            search_limit: 20,
            core_wait: Duration::ZERO,
            relist_wait: Duration::from_millis(1500),
            claude_always_load: false,
            inherit_env: true,
            max_message_bytes: crate::lines::DEFAULT_MAX_MESSAGE_BYTES,
            max_output_tokens: Some(20_000),
            client_era: ClientEra::Handshake,
            semantic: crate::search::Semantic::Off,
            model: None,
            session_idle: Duration::from_secs(60),
            http: crate::config::HttpSettings {
                tokens: Some(crate::config::TokenSource::File(
                    std::path::Path::new(PATH).with_file_name("tokens")
                )),
                allowed_origins: vec!["http://localhost:*".to_owned()],
                allowed_hosts: Vec::new(),
                max_concurrent_requests: 4,
                header_timeout: Duration::from_secs(5),
                body_timeout: Duration::from_secs(20),
                max_connections: 500,
                max_sessions_per_token: 7,
            },
        }
    );
    fails(
        &lines(&["[settings.http]", "max_sessions_per_token = 0"]),
        2,
        &["`max_sessions_per_token` is 0, but must be between 1 and 1000000"],
    );
    fails(
        &lines(&[
            "[settings.http]",
            "tokens_env = \"T\"",
            "token_file = \"f\"",
        ]),
        3,
        &["both `tokens_env` and `token_file`", "keep one"],
    );
    fails(
        "[settings.http]\ntoken_env = \"T\"\n",
        2,
        &["did you mean `tokens_env`"],
    );
    assert_eq!(
        ok("[settings]\nexposure = \"all\"\n").settings.exposure,
        ExposureMode::All
    );
}

#[test]
fn our_keys_load() {
    let config = ok(&lines(&[
        "[mcp_servers.github-enterprise]",
        "url = \"https://ghe.example.com/mcp\"",
        "prefix = \"ghe\"",
        "description = \"\"\"GitHub",
        "  Enterprise\"\"\"",
        "search_hints = [\"issues\", \"pull requests\"]",
        "always_load = [\"get_issue\"]",
        "[mcp_servers.fs]",
        "command = \"fs\"",
        "always_load = true",
        "[mcp_servers.none]",
        "command = \"none\"",
        "always_load = []",
    ]));
    let ghe = server(&config, "github-enterprise");
    assert_eq!(ghe.prefix, "ghe");
    assert_eq!(ghe.description.as_deref(), Some("GitHub Enterprise"));
    assert_eq!(ghe.search_hints, ["issues", "pull requests"]);
    assert!(ghe.is_core("get_issue") && !ghe.is_core("other"));
    assert_eq!(server(&config, "fs").always_load, AlwaysLoad::All);
    assert_eq!(server(&config, "none").always_load, AlwaysLoad::None);
}

// ---- expansion ----

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

// ---- secrets ----

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

// ---- errors ----

#[test]
fn toml_syntax_error_has_its_line() {
    let message = fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "args = [\"x\" \"y\"]",
            "[settings]",
        ]),
        3,
        &["TOML syntax error"],
    );
    assert!(!message.contains('\n'), "single line: {message}");
    fails(
        &lines(&["[mcp_servers.a]", "command = \"a\"", "command = \"b\""]),
        3,
        &["TOML syntax error", "duplicate key"],
    );
    let message = fails(
        &lines(&["[mcp_servers.a]", "env = { K = ghp_inline_secret }"]),
        2,
        &["TOML syntax error"],
    );
    assert!(!message.contains("ghp_inline_secret"), "{message}");
}

#[test]
fn unknown_server_key_suggests_the_right_one() {
    fails(
        &lines(&["[mcp_servers.docs]", "comand = \"npx\""]),
        2,
        &[
            "[mcp_servers.docs]",
            "unknown key `comand`",
            "did you mean `command`?",
        ],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "alwaysLoad = true",
        ]),
        3,
        &["unknown key `alwaysLoad`", "did you mean `always_load`?"],
    );
    fails(
        &lines(&["[mcp_servers.docs]", "url = \"https://x\"", "headers = {}"]),
        3,
        &["unknown key `headers`", "did you mean `http_headers`?"],
    );
    fails(
        &lines(&["[mcp_servers.docs]", "command = \"npx\"", "zzzzzzzz = 1"]),
        3,
        &[
            "unknown key `zzzzzzzz`",
            "valid keys here",
            "`command`",
            "`search_hints`",
        ],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "type = \"stdio\"",
            "command = \"npx\"",
        ]),
        2,
        &["[mcp_servers.docs]", "`type`", "not needed", "remove"],
    );
}

#[test]
fn unknown_settings_and_top_level_keys() {
    fails(
        &lines(&["[settings]", "exposure = \"all\"", "serch_limit = 5"]),
        3,
        &[
            "[settings]",
            "unknown key `serch_limit`",
            "did you mean `search_limit`?",
        ],
    );
    fails(
        &lines(&["# comment", "[mcpServers.a]", "command = \"a\""]),
        2,
        &[
            "top level",
            "unknown key `mcpServers`",
            "did you mean `mcp_servers`?",
        ],
    );
}

#[test]
fn wrong_types_say_what_to_write() {
    fails(
        &lines(&["[mcp_servers.docs]", "command = \"npx\"", "args = \"-y\""]),
        3,
        &[
            "[mcp_servers.docs]",
            "`args`",
            "must be an array of strings",
            "not a string",
            "args = [\"...\"]",
        ],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "args = [\"-y\", 3]",
        ]),
        3,
        &["`args`", "item 2 is an integer", "quote it"],
    );
    fails(
        &lines(&["[mcp_servers.docs]", "command = [\"npx\"]"]),
        2,
        &["`command`", "must be a string", "not an array"],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "enabled = \"yes\"",
        ]),
        3,
        &["`enabled`", "`true` or `false`"],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "env = { PORT = 8080 }",
        ]),
        3,
        &["`env.PORT`", "must be a string", "not an integer", "quote"],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "startup_timeout_sec = \"10\"",
        ]),
        3,
        &["`startup_timeout_sec`", "number of seconds"],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "always_load = \"yes\"",
        ]),
        3,
        &["`always_load`", "`true`, `false` or an array of tool names"],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "env_vars = [{ name = \"A\", source = \"cloud\" }]",
        ]),
        3,
        &["`env_vars`", "\"local\" or \"remote\""],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"npx\"",
            "default_tools_approval_mode = \"never\"",
        ]),
        3,
        &[
            "`default_tools_approval_mode`",
            "\"auto\", \"prompt\", \"approve\"",
        ],
    );
    fails(
        &lines(&["mcp_servers = 3"]),
        1,
        &["`mcp_servers`", "must be a table"],
    );
    fails(
        &lines(&["[mcp_servers]", "docs = \"npx\""]),
        2,
        &["[mcp_servers.docs]", "must be a table"],
    );
    fails(
        &lines(&["[settings]", "max_name_length = 1.5"]),
        2,
        &["[settings]", "`max_name_length`", "whole number"],
    );
}

#[test]
fn transport_must_be_exactly_one() {
    fails(
        &lines(&[
            "[mcp_servers.both]",
            "command = \"npx\"",
            "url = \"https://x\"",
        ]),
        3,
        &[
            "[mcp_servers.both]",
            "both `command`",
            "`url`",
            "remove the other",
        ],
    );
    fails(
        &lines(&["[mcp_servers.neither]", "args = [\"x\"]"]),
        1,
        &[
            "[mcp_servers.neither]",
            "neither `command` nor `url`",
            "add `command",
        ],
    );
    fails(
        &lines(&["[mcp_servers.a]", "command = \"\""]),
        2,
        &["`command`", "is empty"],
    );
    fails(
        &lines(&["[mcp_servers.a]", "url = \"ftp://x\""]),
        2,
        &["`url`", "http://", "https://"],
    );
}

#[test]
fn keys_foreign_to_the_transport_are_rejected() {
    for key_line in [
        "bearer_token_env_var = \"GITHUB_PAT\"",
        "http_headers = { A = \"b\" }",
        "env_http_headers = { A = \"GITHUB_PAT\" }",
    ] {
        let key = key_line.split(' ').next().unwrap_or_default();
        fails(
            &lines(&["[mcp_servers.local]", "command = \"npx\"", key_line]),
            3,
            &[
                "[mcp_servers.local]",
                &format!("`{key}`"),
                "only to HTTP servers",
                "remove it",
            ],
        );
    }
    for key_line in [
        "args = [\"x\"]",
        "env = { A = \"b\" }",
        "env_vars = [\"A\"]",
        "cwd = \"/tmp\"",
    ] {
        let key = key_line.split(' ').next().unwrap_or_default();
        fails(
            &lines(&["[mcp_servers.remote]", "url = \"https://x\"", key_line]),
            3,
            &[
                "[mcp_servers.remote]",
                &format!("`{key}`"),
                "only to stdio servers",
                "remove it",
            ],
        );
    }
    fails(
        &lines(&[
            "[mcp_servers.r]",
            "url = \"https://x\"",
            "bearer_token = \"inline\"",
        ]),
        3,
        &["`bearer_token`", "bearer_token_env_var"],
    );
}

#[test]
fn server_names_are_checked() {
    fails(
        &lines(&["[mcp_servers.\"\"]", "command = \"a\""]),
        1,
        &["empty server name", "[mcp_servers.docs]"],
    );
    fails(
        &lines(&["[mcp_servers.\"my server\"]", "command = \"a\""]),
        1,
        &[
            "[mcp_servers.\"my server\"]",
            "rename the table",
            "[mcp_servers.my_server]",
        ],
    );
}

#[test]
fn names_unfit_as_prefix_say_which_prefix_to_set() {
    fails(
        &lines(&["[mcp_servers.my__srv]", "command = \"a\""]),
        1,
        &[
            "[mcp_servers.my__srv]",
            "contains `__`",
            "prefix = \"my_srv\"",
        ],
    );
    fails(
        &lines(&["[mcp_servers._private]", "command = \"a\""]),
        1,
        &[
            "[mcp_servers._private]",
            "starts or ends with `_`",
            "prefix = \"private\"",
        ],
    );
    let long = "a".repeat(60);
    fails(
        &lines(&[&format!("[mcp_servers.{long}]"), "command = \"a\""]),
        1,
        &[
            "at most 52",
            "max_name_length = 64",
            &format!("prefix = \"{}\"", "a".repeat(52)),
        ],
    );
    // The same name with a short prefix is fine.
    let config = ok(&lines(&[
        &format!("[mcp_servers.{long}]"),
        "command = \"a\"",
        "prefix = \"a\"",
    ]));
    assert_eq!(config.servers[0].prefix, "a");
    // A lower limit tightens the room.
    fails(
        &lines(&[
            "[settings]",
            "max_name_length = 16",
            "[mcp_servers.abcdef]",
            "command = \"a\"",
        ]),
        3,
        &["at most 4", "prefix = \"abcd\""],
    );
}

#[test]
fn explicit_prefixes_are_checked() {
    fails(
        &lines(&[
            "[mcp_servers.gh]",
            "url = \"https://x\"",
            "prefix = \"g__h\"",
        ]),
        3,
        &[
            "[mcp_servers.gh]",
            "`prefix`",
            "contains `__`",
            "prefix = \"g_h\"",
        ],
    );
    fails(
        &lines(&[
            "[mcp_servers.gh]",
            "url = \"https://x\"",
            "prefix = \"gh_\"",
        ]),
        3,
        &["`prefix`", "starts or ends with `_`", "prefix = \"gh\""],
    );
    fails(
        &lines(&[
            "[mcp_servers.gh]",
            "url = \"https://x\"",
            "prefix = \"g.h\"",
        ]),
        3,
        &["`prefix`", "letters, digits"],
    );
}

#[test]
fn duplicate_prefixes_name_both_servers() {
    fails(
        &lines(&[
            "[mcp_servers.github]",
            "url = \"https://a\"",
            "prefix = \"gh\"",
            "[mcp_servers.gh]",
            "command = \"gh-mcp\"",
        ]),
        4,
        &[
            "[mcp_servers.gh]",
            "[mcp_servers.github]",
            "line 1",
            "prefix `gh`",
            "prefix = \"",
        ],
    );
}

#[test]
fn an_empty_prefix_keeps_own_names_for_one_server_only() {
    // A name that could not serve as a prefix is fine: no name starts with it.
    let config = ok(&lines(&[
        "[mcp_servers.my__srv]",
        "command = \"a\"",
        "prefix = \"\"",
        "[mcp_servers.gh]",
        "command = \"gh-mcp\"",
    ]));
    assert_eq!(config.servers[0].prefix, "");
    assert_eq!(config.servers[1].prefix, "gh");
    fails(
        &lines(&[
            "[mcp_servers.everything]",
            "url = \"http://127.0.0.1:3000/mcp\"",
            "prefix = \"\"",
            "[mcp_servers.time]",
            "command = \"mcp-server-time\"",
            "prefix = \"\"",
        ]),
        4,
        &[
            "[mcp_servers.time]",
            "[mcp_servers.everything]",
            "line 1",
            "only one server can keep its own tool and prompt names",
            "set `prefix = \"...\"` in one of the two tables",
        ],
    );
}

#[test]
fn settings_values_are_checked() {
    fails(
        &lines(&["[settings]", "client_era = \"handshak\""]),
        2,
        &[
            "`client_era = \"handshak\"`",
            "\"any\"",
            "did you mean `handshake`?",
        ],
    );
    fails(
        &lines(&["[settings]", "exposure = \"defered\""]),
        2,
        &[
            "[settings]",
            "`exposure = \"defered\"`",
            "\"deferred\", \"proxy\", \"all\"",
            "did you mean `deferred`?",
        ],
    );
    fails(
        &lines(&["[settings]", "max_name_length = 8"]),
        2,
        &["`max_name_length`", "between 16 and 128"],
    );
    fails(
        &lines(&["[settings]", "search_limit = 0"]),
        2,
        &["`search_limit`", "between 1 and 50"],
    );
    fails(
        &lines(&["[settings]", "search_limit = 51"]),
        2,
        &["`search_limit`", "between 1 and 50"],
    );
    fails(
        &lines(&["[settings]", "core_wait_ms = -1"]),
        2,
        &["`core_wait_ms`", "between 0 and 60000"],
    );
    fails(
        &lines(&["[settings]", "claude_always_load = 1"]),
        2,
        &["`claude_always_load`", "`true` or `false`"],
    );
    fails(
        &lines(&["settings = [1]"]),
        1,
        &["`settings`", "must be a table"],
    );
    fails(
        &lines(&["[settings.search]", "semantic = \"statik\""]),
        2,
        &[
            "[settings.search]",
            "`semantic = \"statik\"`",
            "\"static\", \"model\", \"off\"",
            "did you mean `static`?",
        ],
    );
    // Without `model`, the directory `mcp-defer model fetch` fills (under the test's HOME,
    // where nothing was fetched).
    #[cfg(feature = "model")]
    fails(
        &lines(&["[settings.search]", "semantic = \"model\""]),
        2,
        &[
            "`semantic = \"model\"`",
            if cfg!(windows) {
                r"C:\Users\me\AppData\Local\mcp-defer\models\all-MiniLM-L6-v2 does not exist"
            } else if cfg!(target_os = "macos") {
                "/home/me/Library/Application Support/mcp-defer/models/all-MiniLM-L6-v2 does not exist"
            } else {
                "/home/me/.local/share/mcp-defer/models/all-MiniLM-L6-v2 does not exist"
            },
            "mcp-defer model fetch",
        ],
    );
    fails(
        &lines(&["[settings.search]", "model = \"/m\""]),
        2,
        &["`model` is only read with `semantic = \"model\"`"],
    );
    #[cfg(feature = "model")]
    fails(
        &lines(&[
            "[settings.search]",
            "semantic = \"model\"",
            "model = \"/nonexistent/mcp-defer-model\"",
        ]),
        3,
        &[
            "[settings.search] `model`",
            "/nonexistent/mcp-defer-model does not exist",
            "mcp-defer model fetch",
        ],
    );
    fails(
        &lines(&["[settings.search]", "semantics = \"off\""]),
        2,
        &[
            "[settings.search]",
            "unknown key `semantics`",
            "did you mean `semantic`?",
        ],
    );
    fails(
        &lines(&["[settings]", "search = 1"]),
        2,
        &["`search`", "must be a table"],
    );
}

#[test]
fn huge_numbers_are_refused_with_the_allowed_range() {
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "startup_timeout_sec = 1.7e19",
        ]),
        3,
        &[
            "[mcp_servers.a]",
            "`startup_timeout_sec`",
            "1700000000000000000",
            "at most 3600",
        ],
    );
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "tool_timeout_sec = 1e7",
        ]),
        3,
        &["`tool_timeout_sec`", "at most 86400"],
    );
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "startup_timeout_ms = 9223372036854775807",
        ]),
        3,
        &["`startup_timeout_ms`", "between 1 and 3600000"],
    );
    fails(
        &lines(&["[settings]", "core_wait_ms = 9223372036854775807"]),
        2,
        &["[settings]", "`core_wait_ms`", "between 0 and 60000"],
    );
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
fn inherit_env_is_per_server_over_settings_and_stdio_only() {
    let config = ok(&lines(&[
        "[settings]",
        "inherit_env = true",
        "[mcp_servers.a]",
        "command = \"a\"",
        "[mcp_servers.b]",
        "command = \"b\"",
        "inherit_env = false",
    ]));
    let inherit = |name: &str| match &server(&config, name).transport {
        Transport::Stdio { inherit_env, .. } => *inherit_env,
        Transport::Http { .. } => panic!("stdio"),
    };
    assert!(inherit("a") && !inherit("b"));
    fails(
        &lines(&[
            "[mcp_servers.w]",
            "url = \"https://x/mcp\"",
            "inherit_env = true",
        ]),
        3,
        &["`inherit_env`", "applies only to stdio servers"],
    );
}

#[test]
fn timeouts_must_be_positive_and_finite() {
    for (value, shown) in [("-1", "-1"), ("nan", "NaN"), ("inf", "inf"), ("0", "0")] {
        fails(
            &lines(&[
                "[mcp_servers.a]",
                "command = \"a\"",
                &format!("tool_timeout_sec = {value}"),
            ]),
            3,
            &[
                "[mcp_servers.a]",
                "`tool_timeout_sec`",
                "positive, finite",
                shown,
                "tool_timeout_sec = 30",
            ],
        );
    }
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "startup_timeout_sec = -0.5",
        ]),
        3,
        &["`startup_timeout_sec`", "positive"],
    );
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "startup_timeout_ms = -5",
        ]),
        3,
        &["`startup_timeout_ms`", "positive", "startup_timeout_sec"],
    );
    // Codex's rule when both are set: seconds win.
    let config = ok(&lines(&[
        "[mcp_servers.a]",
        "command = \"a\"",
        "startup_timeout_ms = 100",
        "startup_timeout_sec = 3",
    ]));
    assert_eq!(config.servers[0].startup_timeout, Duration::from_secs(3));
}

#[test]
fn always_load_must_not_contradict_the_filters() {
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "disabled_tools = [\"drop\"]",
            "always_load = [\"keep\", \"drop\"]",
        ]),
        4,
        &[
            "[mcp_servers.a]",
            "`always_load`",
            "`drop`",
            "`disabled_tools`",
            "drop it from one",
        ],
    );
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "enabled_tools = [\"keep\"]",
            "always_load = [",
            "  \"keep\",",
            "  \"other\",",
            "]",
        ]),
        6,
        &["`always_load`", "`other`", "not in `enabled_tools`"],
    );
}

#[test]
fn load_reads_a_file_and_reports_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("servers.toml");
    std::fs::write(&path, "[mcp_servers.a]\ncommand = \"a\"\ncwd = \"sub\"\n").unwrap();
    let config = Config::load(&path).unwrap();
    assert_eq!(config.path, path);
    match &config.servers[0].transport {
        Transport::Stdio { cwd, .. } => assert_eq!(cwd.as_deref(), Some(&*dir.path().join("sub"))),
        Transport::Http { .. } => panic!("stdio"),
    }
    let missing = dir.path().join("nope.toml");
    let err = Config::load(&missing).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }));
    assert!(err.to_string().contains("nope.toml"));
}

// ---- tool overrides and search hints ----

#[test]
fn tool_overrides_load_in_file_order_and_apply_to_the_tool() {
    let config = ok(&lines(&[
        "[mcp_servers.docs]",
        "command = \"docs\"",
        "search_hints = \"wiki pages\"",
        "[mcp_servers.docs.tools.search]",
        "description = \"\"\"",
        "  Search the ${HOME} wiki by keyword.",
        "\"\"\"",
        "title = \"Wiki search\"",
        "approval_mode = \"approve\"",
        "[mcp_servers.docs.tools.\"read page\"]",
        "title = \"Read\"",
    ]));
    let docs = server(&config, "docs");
    assert_eq!(docs.search_hints, ["wiki pages"], "one hint as a string");
    assert_eq!(
        docs.tool_overrides,
        [
            ToolOverride {
                tool: "search".into(),
                description: Some("Search the /home/me wiki by keyword.".into()),
                title: Some("Wiki search".into()),
            },
            ToolOverride {
                tool: "read page".into(),
                description: None,
                title: Some("Read".into()),
            },
        ]
    );
    let mut tool = rmcp::model::Tool::new(
        "search",
        "the server's own words",
        rmcp::model::JsonObject::new(),
    );
    tool.annotations = Some(rmcp::model::ToolAnnotations::with_title("Old"));
    docs.override_tool(&mut tool);
    assert_eq!(
        tool.description.as_deref(),
        Some("Search the /home/me wiki by keyword.")
    );
    assert_eq!(tool.title.as_deref(), Some("Wiki search"));
    assert_eq!(
        tool.annotations.and_then(|a| a.title).as_deref(),
        Some("Wiki search")
    );
    let mut other = rmcp::model::Tool::new("fetch", "unchanged", rmcp::model::JsonObject::new());
    docs.override_tool(&mut other);
    assert_eq!(other.description.as_deref(), Some("unchanged"));
    assert_eq!(docs.unlisted_overrides(&["search", "fetch"]), ["read page"]);
}

#[test]
fn tool_override_mistakes_name_the_table_key_and_line() {
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"docs\"",
            "[mcp_servers.docs.tools.search]",
            "descripton = \"x\"",
        ]),
        4,
        &[
            "[mcp_servers.docs.tools.search]",
            "unknown key `descripton`",
            "did you mean `description`?",
        ],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"docs\"",
            "disabled_tools = [\"search\"]",
            "[mcp_servers.docs.tools.search]",
            "title = \"x\"",
        ]),
        4,
        &["`tools.search`", "`disabled_tools` removes it"],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"docs\"",
            "[mcp_servers.docs.tools.search]",
            "description = \"  \"",
        ]),
        4,
        &["`tools.search.description` is empty"],
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"docs\"",
            "tools = { search = 1 }",
        ]),
        3,
        &["[mcp_servers.docs.tools.search]", "must be a table"],
    );
}

#[test]
fn max_output_tokens_per_server_wins_over_settings() {
    let config = ok(&lines(&[
        "[settings]",
        "max_output_tokens = 5000",
        "[mcp_servers.a]",
        "command = \"a\"",
        "max_output_tokens = 300",
        "[mcp_servers.b]",
        "command = \"b\"",
    ]));
    assert_eq!(config.max_output_tokens(0), Some(300));
    assert_eq!(config.max_output_tokens(1), Some(5000));
    assert_eq!(
        ok("[mcp_servers.a]\ncommand = \"a\"\n").max_output_tokens(0),
        None
    );
    fails(
        &lines(&[
            "[mcp_servers.a]",
            "command = \"a\"",
            "max_output_tokens = 10",
        ]),
        3,
        &[
            "[mcp_servers.a] `max_output_tokens` is 10",
            "between 100 and 10000000",
        ],
    );
    fails(
        &lines(&["[settings]", "max_output_tokens = -1"]),
        2,
        &["[settings] `max_output_tokens` is -1"],
    );
}

#[test]
fn oauth_keys_configure_the_login_of_http_servers_only() {
    let config = ok(&lines(&[
        "[mcp_servers.remote]",
        "url = \"https://mcp.example.com/mcp\"",
        "scopes = [\"read\", \"write\"]",
        "oauth_client_id = \"preregistered\"",
        "oauth_client_secret_env_var = \"DOCS_KEY\"",
    ]));
    let Transport::Http { oauth, .. } = &config.servers[0].transport else {
        panic!("http");
    };
    assert_eq!(oauth.client_id.as_deref(), Some("preregistered"));
    assert_eq!(oauth.client_secret.as_deref(), Some(DOCS_KEY));
    assert_eq!(oauth.scopes, ["read", "write"]);
    assert!(!format!("{config:?}").contains(DOCS_KEY));

    fails(
        &lines(&[
            "[mcp_servers.local]",
            "command = \"srv\"",
            "oauth_client_id = \"x\"",
        ]),
        3,
        &["oauth_client_id"],
    );
    fails(
        &lines(&[
            "[mcp_servers.remote]",
            "url = \"https://mcp.example.com/mcp\"",
            "oauth_client_secret_env_var = \"DOCS_KEY\"",
        ]),
        3,
        &["needs `oauth_client_id`"],
    );
}

#[test]
fn profiles_name_servers_that_exist_and_give_a_view_in_file_order() {
    let text = lines(&[
        "[mcp_servers.docs]",
        "command = \"docs\"",
        "[mcp_servers.time]",
        "command = \"time\"",
        "[profiles.work]",
        "servers = [\"time\", \"docs\"]",
    ]);
    let config = ok(&text);
    let (view, positions) = config.for_profile("work").unwrap();
    let names: Vec<&str> = view.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["docs", "time"], "file order, not the profile's");
    assert_eq!(positions, [0, 1]);
    let unknown = config.for_profile("wrk").unwrap_err().to_string();
    assert!(
        unknown.ends_with("no `[profiles.wrk]` table; did you mean `work`?"),
        "{unknown}"
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"docs\"",
            "[profiles.work]",
            "servers = [\"doc\"]",
        ]),
        4,
        &[
            "[profiles.work] names the server `doc`",
            "did you mean `docs`?",
        ],
    );
    fails(
        &lines(&["[profiles.\"a b\"]", "servers = []"]),
        1,
        &["only letters, digits"],
    );
    fails(
        "[profiles.work]\nserver = []\n",
        2,
        &["did you mean `servers`"],
    );
}

#[test]
fn start_and_idle_stop_are_read_and_checked() {
    let config = ok(&lines(&[
        "[mcp_servers.a]",
        "command = \"srv\"",
        "start = \"lazy\"",
        "idle_stop_sec = 90",
        "[mcp_servers.b]",
        "command = \"srv\"",
    ]));
    assert_eq!(config.servers[0].start, Start::Lazy);
    assert_eq!(config.servers[0].idle_stop, Some(Duration::from_secs(90)));
    assert_eq!(config.servers[1].start, Start::Eager, "the default");
    assert_eq!(config.servers[1].idle_stop, None, "never stopped when idle");

    fails(
        &lines(&["[mcp_servers.a]", "command = \"srv\"", "start = \"lasy\""]),
        3,
        &["start", "\"lasy\"", "start = \"lazy\"", "did you mean"],
    );
    fails(
        &lines(&["[mcp_servers.a]", "command = \"srv\"", "idle_stop_sec = 0"]),
        3,
        &["idle_stop_sec", "positive", "idle_stop_sec = 30"],
    );
    fails(
        &lines(&["[mcp_servers.a]", "command = \"srv\"", "start = true"]),
        3,
        &["start"],
    );
}
