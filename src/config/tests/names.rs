//! Server names and prefixes: what qualified tool names are made of.

use super::*;

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
