//! `[settings]` values checked against their ranges.

use super::*;

#[test]
fn settings_values_are_checked() {
    fails(
        &lines(&["[settings]", "client_era = \"handshak\""]),
        2,
        &[
            "`client_era = \"handshak\"`",
            "\"auto\"",
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
        &lines(&["[settings]", "search_loads = 9"]),
        2,
        &["`search_loads`", "between 0 and 8"],
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
        &lines(&["[settings.search]", "learn = \"shard\""]),
        2,
        &[
            "[settings.search]",
            "`learn`",
            "\"principal\", \"shared\"",
            "did you mean `shared`?",
        ],
    );
    fails(
        &lines(&["[settings.search]", "learn = 1"]),
        2,
        &[
            "`learn`",
            "`\"principal\"`, `\"shared\"`, `true` or `false`",
        ],
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
fn learn_takes_a_mode_or_a_boolean_and_defaults_to_per_principal() {
    use crate::search::usage::Learn;
    let learn = |value: &str| ok(&lines(&["[settings.search]", &format!("learn = {value}")]));
    assert_eq!(learn("\"shared\"").settings.learn, Learn::Shared);
    assert_eq!(learn("\"principal\"").settings.learn, Learn::Principal);
    assert_eq!(learn("true").settings.learn, Learn::Principal);
    assert_eq!(learn("false").settings.learn, Learn::Off);
    assert_eq!(ok("").settings.learn, Learn::Principal);
}
