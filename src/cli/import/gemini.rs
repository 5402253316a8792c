//! Gemini CLI (`~/.gemini/settings.json`, `.gemini/settings.json`) and Qwen Code, its fork
//! (`~/.qwen/settings.json`, `.qwen/settings.json`): `mcpServers` entries with `command`,
//! `args`, `env` (`$VAR` and `${VAR}` expand), `cwd`, `httpUrl` (streamable HTTP), `url`
//! (SSE), `headers`, `timeout` (ms), `description`, `includeTools`, `excludeTools`, `trust`
//! and `oauth` (<https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md>,
//! <https://qwenlm.github.io/qwen-code-docs/en/users/features/mcp/>).

use std::path::Path;

use serde_json::Value as Json;

use super::dialect::Dialect;
use super::entry;
use super::{Cx, Imported, import_servers, vars};

pub(super) fn import(
    json: &Json,
    path: &Path,
    cx: &Cx<'_>,
    out: &mut Imported,
) -> anyhow::Result<()> {
    import_servers(json, "mcpServers", path, cx.client, out, |server| {
        entry::convert(server, Dialect::Gemini, cx, &mut vars::gemini)
    })
}
