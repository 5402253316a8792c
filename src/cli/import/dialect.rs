//! Which client wrote an entry: the few keys whose meaning differs between clients, shared
//! by the entry conversion and the OAuth settings it carries.

/// Which client wrote the entry: decides the few keys whose meaning differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    /// Claude Code and Claude Desktop: `type` is `stdio` (default), `http` or `sse`.
    Claude,
    /// Cursor: as Claude, plus `envFile` and `auth` (its OAuth client settings).
    Cursor,
    /// VS Code: `type` is required; `envFile`, `oauth`, `dev`, `sandbox*`.
    Vscode,
    /// Gemini CLI and Qwen Code: no `type`; `url` is SSE, `httpUrl` streamable HTTP;
    /// `timeout`, `description`, `includeTools`, `excludeTools`, `trust`, `oauth`.
    Gemini,
    /// Windsurf: as Claude, with `serverUrl` for HTTP and `disabledTools`.
    Windsurf,
    /// Cline and Roo Code: `type` `stdio`, `sse`, `streamableHttp`/`streamable-http`;
    /// `timeout` (seconds), `alwaysAllow`/`autoApprove`, `disabledTools`, `watchPaths`.
    Cline,
    /// GitHub Copilot CLI: `type` `local`/`stdio`, `http`, `sse`; `tools` (`["*"]`: all) and
    /// `timeout` (ms).
    Copilot,
}
