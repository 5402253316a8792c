//! Whole files that load: a Codex block unchanged, defaults, every key of ours.

use super::*;

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
        "search_loads = 1",
        "session_idle_sec = 60",
        "trust = \"warn\"",
        "hub = false",
        "hub_grace_sec = 5",
        "[settings.search]",
        "semantic = \"off\"",
        "learn = false",
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
            search_loads: 1,
            semantic: crate::search::Semantic::Off,
            model: None,
            learn: crate::search::usage::Learn::Off,
            session_idle: Duration::from_secs(60),
            hub: false,
            hub_grace: Duration::from_secs(5),
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
            trust: crate::config::TrustMode::Warn,
        }
    );
    fails(
        &lines(&["[settings]", "trust = \"pinned\""]),
        2,
        &["`trust` is \"pinned\", but must be one of \"pin\", \"warn\", \"off\""],
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
