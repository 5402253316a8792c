//! TOML syntax, unknown keys (with "did you mean") and values of the wrong type.

use super::*;

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
