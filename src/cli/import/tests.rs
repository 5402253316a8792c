#![allow(clippy::unwrap_used)]

use super::output::key;
use super::*;

fn cx(client: Client) -> Cx<'static> {
    Cx {
        client,
        cwd: Path::new("/work/app"),
        home: Some(Path::new("/home/me")),
    }
}

fn import(client: Client, json: &str, path: &str) -> Imported {
    let mut out = Imported::default();
    import_file(&cx(client), client, json, Path::new(path), &mut out).unwrap();
    out
}

fn rendered(client: Client, out: &Imported) -> String {
    let text = render(client, &[PathBuf::from("src.json")], &out.servers);
    Config::parse_with_env(&text, Path::new("servers.toml"), &|_| Some("x".into()))
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    text
}

#[test]
fn claude_servers_map_onto_our_keys() {
    let out = import(
        Client::Claude,
        r#"{"mcpServers": {
            "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
                       "headers": {"Authorization": "Bearer ${GITHUB_PAT}"}},
            "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
            "old": {"type": "sse", "url": "https://example.com/sse"},
            "me": {"command": "/usr/local/bin/mcp-defer", "args": ["serve"]}
        },
        "projects": {"/work/app": {"mcpServers": {
            "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "Europe/Paris"]}
        }}}}"#,
        ".mcp.json",
    );
    let names: Vec<&str> = out.servers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["github", "time"]);
    let text = rendered(Client::Claude, &out);
    assert!(text.contains(
        "[mcp_servers.github]\nurl = \"https://api.githubcopilot.com/mcp/\"\n\
         http_headers = { Authorization = \"Bearer ${GITHUB_PAT}\" }\n"
    ));
    // The directory's local entry replaces the user one, in the user one's place.
    assert!(text.contains(
        "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\", \"--local-timezone\", \"Europe/Paris\"]\n"
    ));
    let notes = out.notes.join("\n");
    assert!(
        notes.contains("skipped old") && notes.contains("SSE"),
        "{notes}"
    );
    assert!(
        notes.contains("skipped me") && notes.contains("itself"),
        "{notes}"
    );
    assert!(!notes.contains("github"), "{notes}");
}

#[test]
fn claude_oauth_servers_are_carried_with_a_note() {
    let out = import(
        Client::Claude,
        r#"{"mcpServers": {
            "notion": {"type": "http", "url": "https://mcp.notion.com/mcp"},
            "slack": {"type": "http", "url": "https://mcp.slack.com/mcp",
                      "oauth": {"clientId": "1601185624273.8899143856786", "callbackPort": 3118}},
            "local": {"type": "http", "url": "http://127.0.0.1:8080/mcp"}
        }}"#,
        ".mcp.json",
    );
    assert_eq!(out.servers.len(), 3);
    let notes = out.notes.join("\n");
    assert!(
        notes.contains("notion: a remote server with no credentials"),
        "{notes}"
    );
    assert!(
        notes.contains("slack: carried over, but Claude Code signs in to it with OAuth"),
        "{notes}"
    );
    assert!(
        notes.contains("run `mcp-defer login slack` once"),
        "{notes}"
    );
    assert!(
        notes.contains("notion` once") || notes.contains("login notion"),
        "{notes}"
    );
    assert!(!notes.contains("local"), "{notes}");
    assert!(
        !notes.contains("1601185624273"),
        "no values in notes: {notes}"
    );
    // The registered client and its fixed callback port are kept for `mcp-defer login`.
    let text = rendered(Client::Claude, &out);
    assert!(
        text.contains(
            "[mcp_servers.slack]\nurl = \"https://mcp.slack.com/mcp\"\n\
             oauth_client_id = \"1601185624273.8899143856786\"\noauth_callback_port = 3118\n"
        ),
        "{text}"
    );
}

#[test]
fn claude_desktop_is_mcp_servers_too() {
    let out = import(
        Client::ClaudeDesktop,
        r#"{"mcpServers": {"filesystem": {"command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]}},
            "globalShortcut": "Ctrl+Space"}"#,
        "claude_desktop_config.json",
    );
    let text = rendered(Client::ClaudeDesktop, &out);
    assert!(text.contains("import claude-desktop"), "{text}");
    assert!(text.contains("command = \"npx\""), "{text}");
}

#[test]
fn cursor_variables_and_auth() {
    let out = import(
        Client::Cursor,
        r#"{"mcpServers": {
            "api": {"url": "https://api.example.com/mcp",
                    "headers": {"Authorization": "Bearer ${env:MY_SERVICE_TOKEN}"}},
            "local": {"command": "node", "args": ["${workspaceFolder}/server.js"],
                      "env": {"HOME_DIR": "${userHome}"}, "envFile": ".env"},
            "oauth": {"url": "https://mcp.example.com/mcp",
                      "auth": {"CLIENT_ID": "abc", "scopes": ["read"]}}
        }}"#,
        "/work/app/.cursor/mcp.json",
    );
    let text = rendered(Client::Cursor, &out);
    assert!(text.contains("Bearer ${MY_SERVICE_TOKEN}"), "{text}");
    assert!(text.contains("args = [\"/work/app/server.js\"]"), "{text}");
    assert!(text.contains("HOME_DIR = \"${HOME}\""), "{text}");
    let notes = out.notes.join("\n");
    assert!(notes.contains("local: left out `envFile`"), "{notes}");
    assert!(
        notes.contains("oauth: carried over, but Cursor signs in"),
        "{notes}"
    );
    assert!(!notes.contains("abc"), "{notes}");
    assert!(
        text.contains("scopes = [\"read\"]\noauth_client_id = \"abc\"\n"),
        "{text}"
    );
}

#[test]
fn vscode_inputs_become_variables_to_set() {
    let out = import(
        Client::Vscode,
        r#"{
            // VS Code writes JSON with comments
            "inputs": [{"type": "promptString", "id": "perplexity-key",
                        "description": "Perplexity API Key", "password": true}],
            "servers": {
                "Perplexity": {"type": "stdio", "command": "npx",
                    "args": ["-y", "server-perplexity-ask"],
                    "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}},
                "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",},
            },
        }"#,
        "/work/app/.vscode/mcp.json",
    );
    let text = rendered(Client::Vscode, &out);
    assert!(
        text.contains("env = { PERPLEXITY_API_KEY = \"${PERPLEXITY_KEY}\" }"),
        "{text}"
    );
    let notes = out.notes.join("\n");
    assert!(
        notes.contains(
            "Perplexity: set the environment variable PERPLEXITY_KEY before starting mcp-defer \
             (VS Code prompted for it as input `perplexity-key`: \"Perplexity API Key\")"
        ),
        "{notes}"
    );
}

#[test]
fn gemini_and_qwen_map_http_url_tools_and_timeouts() {
    let json = r#"{"theme": "Dracula", "mcpServers": {
        "pythonTools": {"command": "python", "args": ["-m", "my_mcp_server"],
            "cwd": "./mcp-servers/python",
            "env": {"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "${EXTERNAL_API_KEY}"},
            "timeout": 15000, "trust": true, "includeTools": ["safe_tool"]},
        "httpServer": {"httpUrl": "http://localhost:3000/mcp", "timeout": 5000,
            "headers": {"Authorization": "Bearer $TOKEN"}, "excludeTools": ["dangerous"]},
        "sse": {"url": "http://localhost:8080/sse"},
        "gcp": {"httpUrl": "https://my-gcp-service.run.app/mcp",
            "authProviderType": "google_credentials", "oauth": {"scopes": ["x"]}}
    }}"#;
    for client in [Client::Gemini, Client::Qwen] {
        let out = import(client, json, "/work/app/.gemini/settings.json");
        let text = rendered(client, &out);
        assert!(
            text.contains(
                "DATABASE_URL = \"${DB_CONNECTION_STRING}\", API_KEY = \"${EXTERNAL_API_KEY}\""
            ),
            "{text}"
        );
        // Joined to the settings file's project with the OS's separator; TOML keeps a
        // backslash literal in single quotes.
        let cwd = if cfg!(windows) {
            r"cwd = '/work/app\mcp-servers/python'"
        } else {
            "cwd = \"/work/app/mcp-servers/python\""
        };
        assert!(text.contains(cwd), "{text}");
        assert!(
            text.contains("tool_timeout_sec = 15\nenabled_tools = [\"safe_tool\"]"),
            "{text}"
        );
        assert!(
            text.contains("url = \"http://localhost:3000/mcp\""),
            "{text}"
        );
        assert!(
            text.contains("tool_timeout_sec = 5\ndisabled_tools = [\"dangerous\"]"),
            "{text}"
        );
        assert!(text.contains("Bearer ${TOKEN}"), "{text}");
        assert!(!text.contains("[mcp_servers.sse]"), "{text}");
        let notes = out.notes.join("\n");
        assert!(
            notes.contains("skipped sse") && notes.contains("SSE"),
            "{notes}"
        );
        assert!(notes.contains("gcp: carried over, but"), "{notes}");
        assert!(
            !notes.contains("trust"),
            "trust means nothing here: {notes}"
        );
    }
}

#[test]
fn opencode_local_and_remote() {
    let out = import(
        Client::Opencode,
        r#"{"$schema": "https://opencode.ai/config.json", "mcp": {
            "my-local-mcp-server": {"type": "local", "command": ["npx", "-y", "my-mcp-command"],
                "enabled": true, "environment": {"MY_ENV_VAR": "my_env_var_value"}},
            "my-remote-mcp": {"type": "remote", "url": "https://my-mcp-server.com",
                "enabled": false, "headers": {"Authorization": "Bearer {env:MY_API_KEY}"},
                "timeout": 10000},
            "sentry": {"type": "remote", "url": "https://mcp.sentry.dev/mcp", "oauth": {}}
        }}"#,
        "opencode.json",
    );
    let text = rendered(Client::Opencode, &out);
    assert!(
        text.contains(
            "[mcp_servers.my-local-mcp-server]\ncommand = \"npx\"\nargs = [\"-y\", \"my-mcp-command\"]\n\
             env = { MY_ENV_VAR = \"my_env_var_value\" }\nenabled = true\n"
        ),
        "{text}"
    );
    assert!(text.contains("Bearer ${MY_API_KEY}"), "{text}");
    assert!(
        text.contains("enabled = false\nstartup_timeout_sec = 10\n"),
        "{text}"
    );
    let notes = out.notes.join("\n");
    assert!(
        notes.contains("sentry: carried over, but OpenCode signs in"),
        "{notes}"
    );
}

#[test]
fn codex_tables_carry_over_in_order() {
    let text = r#"
        model = "o3"
        [mcp_servers.zeta]
        command = "npx"
        args = ["-y", "@modelcontextprotocol/server-memory"]
        startup_timeout_sec = 20
        tools = { add = { approval = "never" } }
        [mcp_servers.alpha]
        url = "https://mcp.example.com/mcp"
        bearer_token_env_var = "EXAMPLE_TOKEN"
        enabled = false
        [mcp_servers.figma]
        url = "https://mcp.figma.com/mcp"
        scopes = ["files:read"]
    "#;
    let out = codex::import(text, Path::new("config.toml")).unwrap();
    let names: Vec<&str> = out.servers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["zeta", "alpha", "figma"],
        "the file's order, not sorted"
    );
    assert_eq!(
        out.notes[0],
        "left out `tools` of zeta: mcp-defer does not read it"
    );
    assert!(out.notes[1].starts_with("figma: carried over, but Codex signs in"));
    let rendered = render(Client::Codex, &[PathBuf::from("config.toml")], &out.servers);
    assert!(
        rendered.contains("startup_timeout_sec = 20\n"),
        "{rendered}"
    );
    assert!(rendered.contains("bearer_token_env_var = \"EXAMPLE_TOKEN\"\nenabled = false\n"));
    assert!(rendered.contains("scopes = [\"files:read\"]"), "{rendered}");
    Config::parse_with_env(&rendered, Path::new("servers.toml"), &|_| Some("x".into())).unwrap();
}

#[test]
fn odd_names_are_quoted_and_bad_input_is_named() {
    assert_eq!(key("my server.v2"), "\"my server.v2\"");
    assert_eq!(key("my-server_2"), "my-server_2");
    let err = codex::import("[mcp_servers", Path::new("/h/.codex/config.toml")).unwrap_err();
    assert!(format!("{err:#}").contains("/h/.codex/config.toml is not valid TOML"));
    let mut out = Imported::default();
    let err = import_file(
        &cx(Client::Claude),
        Client::Claude,
        "{",
        Path::new("/h/.claude.json"),
        &mut out,
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("/h/.claude.json is not valid JSON"));
}

#[test]
fn copilot_servers_map_onto_our_keys() {
    // As Copilot CLI 1.0.102 writes them (`copilot mcp add`), plus an npx registration of
    // mcp-defer itself.
    let out = import(
        Client::Copilot,
        r#"{"mcpServers": {
            "time": {"tools": ["*"], "timeout": 5000, "type": "local", "command": "uvx",
                     "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
            "gh": {"tools": ["get_me", "list_issues"], "type": "http",
                   "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
            "old": {"tools": ["*"], "type": "sse", "url": "https://example.com/sse"},
            "defer": {"tools": ["*"], "type": "local", "command": "npx",
                      "args": ["-y", "mcp-defer"]}
        }}"#,
        "/home/me/.copilot/mcp-config.json",
    );
    let names: Vec<&str> = out.servers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["time", "gh"]);
    let text = rendered(Client::Copilot, &out);
    assert!(
        text.contains(
            "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n\
             env = { TZ = \"UTC\" }\ntool_timeout_sec = 5\ninherit_env = true\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("enabled_tools = [\"get_me\", \"list_issues\"]"),
        "{text}"
    );
    let notes = out.notes.join("\n");
    assert!(
        notes.contains("skipped old") && notes.contains("SSE"),
        "{notes}"
    );
    assert!(
        notes.contains("skipped defer") && notes.contains("itself"),
        "{notes}"
    );
    assert!(!notes.contains("left out `tools`"), "{notes}");
}
