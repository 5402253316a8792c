//! Which of a failed child's stderr lines go into its cause: the last few, without stack
//! frames, and the first line that says what went wrong when it came before them.
//!
//! A Node server that cannot start prints the reason once ("Error [ERR_MODULE_NOT_FOUND]:
//! Cannot find package 'zod'"), then a dozen `at ...` frames and a `{ code: ... }` block; the
//! last eight lines alone were frames, and the one line that explains was cut.

/// Words (lower case) of a line that says what went wrong.
const EXPLAINS: &[&str] = &[
    "error",
    "cannot",
    "can't",
    "not found",
    "no such",
    "failed",
    "fatal",
    "denied",
    "refused",
    "invalid",
    "missing",
    "unable",
    "enoent",
    "econnrefused",
];

/// The cause text from `lines` (oldest first): the last `max` non-empty lines that are not
/// stack frames, joined with " | ", preceded by the first explaining line that came before
/// them (and " | ... | "). `None` when nothing is left.
pub(super) fn cause<'a>(lines: impl Iterator<Item = &'a str>, max: usize) -> Option<String> {
    let kept: Vec<&str> = lines
        .map(str::trim)
        .filter(|l| !l.is_empty() && !is_frame(l))
        .collect();
    let start = kept.len().saturating_sub(max);
    let tail = kept[start..].join(" | ");
    let explains = kept[..start].iter().find(|l| {
        let lower = l.to_ascii_lowercase();
        EXPLAINS.iter().any(|w| lower.contains(w))
    });
    let cause = match explains {
        Some(line) => format!("{line} | ... | {tail}"),
        None if tail.is_empty() => return None,
        None => tail,
    };
    Some(match npx_cache_hint(&kept) {
        Some(hint) => format!("{cause} | {hint}"),
        None => cause,
    })
}

/// A module missing from a package under npx's cache (`~/.npm/_npx/<hash>/`): an install
/// cut short (an `npx` killed mid-download) leaves it so, and every later start fails the
/// same way until the folder is deleted.
fn npx_cache_hint(lines: &[&str]) -> Option<&'static str> {
    lines
        .iter()
        .any(|l| {
            l.contains("/_npx/") && (l.contains("Cannot find") || l.contains("MODULE_NOT_FOUND"))
        })
        .then_some(
            "hint: npx's cache under ~/.npm/_npx looks incomplete (an install cut short?); \
             delete that folder and start again",
        )
}

/// A stack frame: `at f (file:1:2)` (Node, Java, .NET).
fn is_frame(line: &str) -> bool {
    line.starts_with("at ") && (line.ends_with(')') || line.contains(':'))
}

#[cfg(test)]
mod tests {
    use super::cause;

    #[test]
    fn the_line_that_explains_survives_a_stack_trace() {
        let node = "node:internal/modules/esm/resolve:873
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /home/u/.npm/_npx/1/node_modules/x/dist/index.js
    at packageResolve (node:internal/modules/esm/resolve:873:9)
    at moduleResolve (node:internal/modules/esm/resolve:946:18)
    at defaultResolve (node:internal/modules/esm/resolve:1188:11)
    at ModuleLoader.defaultResolve (node:internal/modules/esm/loader:642:12)
{
  code: 'ERR_MODULE_NOT_FOUND'
}

Node.js v22.12.0";
        let got = cause(node.lines(), 3).unwrap_or_default();
        assert!(
            got.starts_with("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod'"),
            "{got}"
        );
        assert!(
            got.contains("code: 'ERR_MODULE_NOT_FOUND' | } | Node.js v22.12.0"),
            "{got}"
        );
        assert!(!got.contains("packageResolve"), "{got}");
        assert!(got.contains("hint: npx's cache under ~/.npm/_npx"), "{got}");
    }

    #[test]
    fn a_short_stderr_is_quoted_whole() {
        assert_eq!(
            cause(["fatal: GITHUB_TOKEN is not set", ""].into_iter(), 8).as_deref(),
            Some("fatal: GITHUB_TOKEN is not set")
        );
        assert_eq!(cause(["", " "].into_iter(), 8), None);
    }
}
