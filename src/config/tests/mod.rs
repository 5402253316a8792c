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

mod expansion;
mod keys_and_types;
mod limits;
mod loads;
mod names;
mod profiles;
mod settings;
mod tools;
mod transport;
