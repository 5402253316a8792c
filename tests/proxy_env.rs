//! Issue 20, item 1: a stdio server gets the user's proxy and certificate variables (npx
//! and uvx need them behind a corporate proxy or a private CA), and no proxy password
//! reaches `check`'s output or the log, even at trace level.

use crate::support::{
    Dir, FIXTURE, assert_contains_all, line_where, row, stderr, stdout, toml_str,
};

const PROXY_PASSWORD: &str = "proxy-pass-4471@corp";

#[test]
fn proxy_and_ca_variables_reach_a_stdio_server_and_no_password_is_shown() {
    // `--print-env` writes the server's whole environment to its stderr, which mcp-defer
    // logs at debug level (redacted).
    let dir = Dir::with_config(&format!(
        "[mcp_servers.net]\ncommand = {}\nargs = [\"--print-env\"]\n",
        toml_str(FIXTURE)
    ));
    let proxy = format!("http://me:{PROXY_PASSWORD}@proxy.corp:3128");
    let out = dir.run_with_env(
        &["check"],
        &[
            ("RUST_LOG", "trace"),
            ("HTTPS_PROXY", proxy.as_str()),
            ("http_proxy", proxy.as_str()),
            ("NO_PROXY", "localhost,127.0.0.1"),
            ("SSL_CERT_FILE", "/etc/corp/ca.pem"),
            ("NODE_EXTRA_CA_CERTS", "/etc/corp/node-ca.pem"),
            ("REQUESTS_CA_BUNDLE", "/etc/corp/requests.pem"),
            ("PIP_INDEX_URL", "https://u:index-token-88@pypi.corp/simple"),
        ],
    );
    let (table, log) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{table}\n{log}");
    assert_eq!(row(&table, "net")[1], "ready", "{table}");
    // The child saw each variable (its own dump, in our log).
    assert_contains_all(
        &log,
        &[
            "HTTPS_PROXY=",
            "http_proxy=",
            "NO_PROXY=localhost,127.0.0.1",
            "SSL_CERT_FILE=/etc/corp/ca.pem",
            "NODE_EXTRA_CA_CERTS=/etc/corp/node-ca.pem",
            "REQUESTS_CA_BUNDLE=/etc/corp/requests.pem",
        ],
    );
    // A package index is not a network setting: not passed by default.
    assert!(!log.contains("PIP_INDEX_URL="), "{log}");
    // `check` lists the names, never values; the password appears nowhere.
    let names = line_where(&table, |l| l.starts_with("net: "));
    assert_contains_all(names, &["HTTPS_PROXY", "SSL_CERT_FILE"]);
    for text in [&table, &log] {
        assert!(!text.contains(PROXY_PASSWORD), "password shown:\n{text}");
        assert!(!text.contains("proxy-pass-4471"), "password shown:\n{text}");
    }
}
