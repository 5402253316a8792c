//! Each client's variable syntax rewritten into ours (`${NAME}`, `${NAME:-default}`), so
//! the imported file reads the same environment the client did.
//!
//! - Claude Code: `${NAME}`, `${NAME:-default}`: ours already.
//! - Cursor and VS Code: `${env:NAME}`, `${userHome}`, `${workspaceFolder}`,
//!   `${workspaceFolderBasename}`, `${pathSeparator}`; VS Code also `${input:ID}`, a value it
//!   prompts for, which becomes an environment variable named after the ID
//!   (<https://code.visualstudio.com/docs/copilot/reference/mcp-configuration>).
//! - Gemini CLI and Qwen Code: `$NAME` and `${NAME}` in values
//!   (<https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md>).
//! - OpenCode: `{env:NAME}`; `{file:PATH}` has no equivalent
//!   (<https://opencode.ai/docs/config/#variables>).

use std::path::Path;

/// Cursor's and VS Code's `${...}` variables. `inputs` collects the `${input:ID}`s seen, in
/// order, for the note that names the variable to set.
pub(super) fn editor(text: &str, workspace: &Path, inputs: &mut Vec<String>) -> String {
    replace_braced(text, "${", |inner| {
        if let Some(name) = inner.strip_prefix("env:") {
            return Some(format!("${{{name}}}"));
        }
        if let Some(id) = inner.strip_prefix("input:") {
            if !inputs.iter().any(|i| i == id) {
                inputs.push(id.to_owned());
            }
            return Some(format!("${{{}}}", input_variable(id)));
        }
        match inner {
            "userHome" => Some("${HOME}".to_owned()),
            "workspaceFolder" => Some(escape(&workspace.display().to_string())),
            "workspaceFolderBasename" => Some(escape(
                &workspace
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            )),
            "pathSeparator" | "/" => Some("/".to_owned()),
            _ => None,
        }
    })
}

/// The environment variable that stands for VS Code's `${input:ID}`: the ID in upper case,
/// every character outside `[A-Z0-9_]` as `_` (`api-key` → `API_KEY`).
pub(super) fn input_variable(id: &str) -> String {
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) || name.is_empty() {
        format!("INPUT_{name}")
    } else {
        name
    }
}

/// Gemini CLI's `$NAME` (a letter or `_`, then letters, digits, `_`) as `${NAME}`; `${...}`
/// is kept as written.
pub(super) fn gemini(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let rest = &text[i + 1..];
        let len = rest
            .char_indices()
            .take_while(|(j, ch)| {
                ch.is_ascii_alphanumeric() && (*j > 0 || !ch.is_ascii_digit()) || *ch == '_'
            })
            .count();
        if len == 0 {
            out.push('$');
            continue;
        }
        out.push_str(&format!("${{{}}}", &rest[..len]));
        for _ in 0..len {
            chars.next();
        }
    }
    out
}

/// OpenCode's `{env:NAME}` as `${NAME}`; `files` collects `{file:PATH}`s, which are left
/// as written for the user to replace.
pub(super) fn opencode(text: &str, files: &mut Vec<String>) -> String {
    replace_braced(text, "{", |inner| {
        if let Some(name) = inner.strip_prefix("env:") {
            Some(format!("${{{name}}}"))
        } else {
            if let Some(path) = inner.strip_prefix("file:") {
                files.push(path.to_owned());
            }
            None
        }
    })
}

/// Replaces each `<open>inner}` for which `with` returns a replacement; others stay.
fn replace_braced(text: &str, open: &str, mut with: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        out.push_str(&rest[..start]);
        let after = &rest[start + open.len()..];
        match after.find('}') {
            Some(close) => match with(&after[..close]) {
                Some(replacement) => {
                    out.push_str(&replacement);
                    rest = &after[close + 1..];
                }
                None => {
                    out.push_str(open);
                    rest = after;
                }
            },
            None => {
                out.push_str(open);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A literal value in our syntax: `$` written as `$$` only where it would start `${`.
fn escape(text: &str) -> String {
    text.replace("${", "$${")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_variables_become_ours() {
        let mut inputs = Vec::new();
        let ws = Path::new("/work/app");
        assert_eq!(
            editor(
                "${env:TOKEN} ${input:api-key} ${userHome}/x ${workspaceFolder}/db ${config:x}",
                ws,
                &mut inputs
            ),
            "${TOKEN} ${API_KEY} ${HOME}/x /work/app/db ${config:x}"
        );
        assert_eq!(inputs, ["api-key"]);
        assert_eq!(input_variable("9lives"), "INPUT_9LIVES");
    }

    #[test]
    fn gemini_bare_variables_get_braces() {
        assert_eq!(gemini("$DB_URL"), "${DB_URL}");
        assert_eq!(gemini("${API_KEY}"), "${API_KEY}");
        assert_eq!(gemini("a $ b $1 x$Y_2z"), "a $ b $1 x${Y_2z}");
    }

    #[test]
    fn opencode_env_references_become_ours() {
        let mut files = Vec::new();
        assert_eq!(
            opencode("Bearer {env:TOKEN} {file:~/.secret}", &mut files),
            "Bearer ${TOKEN} {file:~/.secret}"
        );
        assert_eq!(files, ["~/.secret"]);
    }
}
