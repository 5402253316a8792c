//! Tool keys: `always_load` against the filters, and `tools.<tool>` overrides.

use super::*;

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
