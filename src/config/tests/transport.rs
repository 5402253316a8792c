//! Exactly one transport per server, keys foreign to it rejected, and the keys each one owns
//! (`inherit_env` for stdio, OAuth for HTTP).

use super::*;

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
