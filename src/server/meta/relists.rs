//! What a client does when its tool list grows, known by the `clientInfo.name` of its
//! handshake (DESIGN.md 7a, each measured with the real CLI and the client kit). It decides
//! two things for a result that grew the list: whether to hold it until the client has
//! re-listed, and whether the client will have the tool in its next model request, so the
//! result need not carry the tool's schema for `call_tool`.

/// How a client takes a grown tool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Relists {
    /// Re-lists while the call that grew the list is pending, and builds its next model
    /// request from that list when the result was held for it (Claude Code, OpenCode).
    WhileHeld,
    /// Never re-lists on its own (Codex by default, Qwen Code), or re-sorts what it lists
    /// (Copilot CLI): a search appends nothing, nothing is held, and results
    /// carry the schemas that `call_tool` needs.
    Never,
    /// Not measured: `select_tools` holds (a client that lets the hold time out is taken as
    /// [`Relists::Never`]); `search_tools` does not hold, and carries the schemas.
    Unknown,
}

/// `clientInfo.name` prefixes, most specific first.
const KNOWN: &[(&str, Relists)] = &[
    ("claude-code", Relists::WhileHeld),
    ("opencode", Relists::WhileHeld),
    // Copilot CLI re-lists once the call returned (and waits for it), but it sorts MCP tools
    // by name: a tool
    // appended on a search lands before ours and re-bills its whole prompt (the cache-cost
    // bench: 23-36k tokens per session). Served as one that does not re-list, a search
    // gives it schemas and changes nothing.
    ("copilot-cli", Relists::Never),
    // `codex-mcp-client`; with its `mcp_tool_list_changed` feature on it re-lists, but only
    // after the call returned, and its model request does not wait for that.
    ("codex-mcp-client", Relists::Never),
    // `qwen-cli-mcp-client-<server>`.
    ("qwen-cli-mcp-client", Relists::Never),
];

impl Relists {
    pub(crate) fn of(client_name: &str) -> Relists {
        (KNOWN.iter())
            .find(|(prefix, _)| client_name.starts_with(prefix))
            .map_or(Relists::Unknown, |(_, relists)| *relists)
    }
}

#[cfg(test)]
mod tests {
    use super::Relists;

    #[test]
    fn measured_clients_are_known_by_their_names() {
        assert_eq!(Relists::of("claude-code"), Relists::WhileHeld);
        assert_eq!(Relists::of("opencode"), Relists::WhileHeld);
        assert_eq!(Relists::of("copilot-cli"), Relists::Never);
        assert_eq!(Relists::of("codex-mcp-client"), Relists::Never);
        assert_eq!(Relists::of("qwen-cli-mcp-client-time"), Relists::Never);
        // Gemini CLI re-lists at once but builds its next request before it applies the
        // list: the tool is callable one step later, so it needs the schema.
        assert_eq!(Relists::of("gemini-cli-mcp-client"), Relists::Unknown);
        assert_eq!(Relists::of("raw"), Relists::Unknown);
    }
}
