//! `[profiles.NAME] allow_tools` and `deny_tools`: which tools the clients of a profile may
//! see, by qualified name or glob (`gh__*`, `*__delete_*`, `fs__read_?ile`).
//!
//! A pattern is matched against a tool's qualified name in its plain form, `<prefix>__<tool>`
//! sanitized (DESIGN.md section 4), before any cut for length: what a user reads in
//! `mcp-defer list` for every name that fits. `*` matches any run of characters, `?` one;
//! every other character matches itself. A tool is seen when `allow_tools` is absent or
//! one of its patterns matches, and no `deny_tools` pattern does.

/// One profile's filter; empty (sees everything) unless the profile sets one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// `None`: every tool is allowed (before `deny`).
    allow: Option<Vec<String>>,
    deny: Vec<String>,
}

impl ToolFilter {
    /// From checked patterns (config validation checks them: [`check_pattern`]).
    pub(super) fn new(allow: Option<Vec<String>>, deny: Vec<String>) -> ToolFilter {
        ToolFilter { allow, deny }
    }

    /// Whether it filters nothing.
    pub fn is_empty(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }

    /// Whether the tool with this plain qualified name is seen.
    pub fn allows(&self, qualified: &str) -> bool {
        self.allow
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|p| matches(p, qualified)))
            && !self.deny.iter().any(|p| matches(p, qualified))
    }
}

/// Why a pattern can never match, as the end of a config error's sentence.
#[derive(Debug, thiserror::Error)]
pub(super) enum PatternError {
    #[error("is empty; write a qualified name such as `server__tool`, or `server__*`")]
    Empty,
    /// A character no qualified name holds; `/` and `.` (other tools' separators) get the
    /// pattern rewritten with `__` as the fix.
    #[error(
        "has `{bad}`, which no qualified name holds (only letters, digits, `_` and `-`){}",
        bad_char_hint(*bad, pattern)
    )]
    BadCharacter { bad: char, pattern: String },
    /// The literal start fits no `<prefix>__` of the profile's servers.
    #[error(
        "matches no tool of the profile's servers: qualified names start with the server's \
         prefix and `__` ({}); write e.g. `{}__{pattern}` or `*__{pattern}`",
        prefixes.iter().map(|p| format!("`{p}__*`")).collect::<Vec<_>>().join(", "),
        prefixes.first().map_or("server", String::as_str),
    )]
    NoPrefix {
        pattern: String,
        prefixes: Vec<String>,
    },
}

fn bad_char_hint(bad: char, pattern: &str) -> String {
    if bad == '/' || bad == '.' {
        format!(
            "; qualified names join server and tool with `__`: write `{}`",
            pattern.replace(['/', '.'], "__")
        )
    } else {
        "; patterns are qualified names with `*` (any run) and `?` (one character)".to_owned()
    }
}

/// Why a pattern can never match, if it cannot.
///
/// `prefixes` are the qualified-name prefixes of the profile's servers (`prefix` or the
/// table name): a pattern whose literal start fits none of `<prefix>__` matches nothing.
pub(super) fn check_pattern(pattern: &str, prefixes: &[&str]) -> Result<(), PatternError> {
    if pattern.is_empty() {
        return Err(PatternError::Empty);
    }
    if let Some(bad) = pattern
        .chars()
        .find(|&c| !(crate::catalog::is_name_char(c) || c == '*' || c == '?'))
    {
        return Err(PatternError::BadCharacter {
            bad,
            pattern: pattern.to_owned(),
        });
    }
    let literal: &str = pattern.split(['*', '?']).next().unwrap_or_default();
    let fits = prefixes.iter().any(|prefix| {
        let head = format!("{prefix}__");
        literal.starts_with(&head) || head.starts_with(literal)
    });
    if !fits {
        return Err(PatternError::NoPrefix {
            pattern: pattern.to_owned(),
            prefixes: prefixes.iter().map(|p| (*p).to_owned()).collect(),
        });
    }
    Ok(())
}

/// Whether `pattern` (`*` any run, `?` one character) matches all of `name`. Both are ASCII
/// (checked at load; qualified names are sanitized), so bytes are characters. Linear
/// backtracking to the last `*`: no pattern can make it slow.
fn matches(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == b'?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == b'*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    // A test fails loudly on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn globs_match_whole_names() {
        for (pattern, name, expected) in [
            ("gh__*", "gh__create_issue", true),
            ("gh__*", "ghx__create_issue", false),
            ("*__delete_*", "fs__delete_file", true),
            ("*__delete_*", "fs__delete", false),
            ("fs__read_?ile", "fs__read_file", true),
            ("fs__read_?ile", "fs__read_fle", false),
            ("fs__read", "fs__read_file", false),
            ("*", "anything", true),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
        ] {
            assert_eq!(matches(pattern, name), expected, "{pattern} ~ {name}");
        }
    }

    #[test]
    fn deny_wins_over_allow() {
        let filter = ToolFilter::new(Some(vec!["gh__*".into()]), vec!["gh__delete_*".into()]);
        assert!(filter.allows("gh__create_issue"));
        assert!(!filter.allows("gh__delete_repo"));
        assert!(!filter.allows("fs__read"));
        assert!(ToolFilter::default().allows("fs__read"));
    }

    #[test]
    fn patterns_that_cannot_match_say_why() {
        assert!(check_pattern("gh__*", &["gh", "fs"]).is_ok());
        assert!(check_pattern("*__read", &["gh"]).is_ok());
        assert!(check_pattern("g*", &["gh"]).is_ok());
        let slash = check_pattern("gh/create", &["gh"]).unwrap_err().to_string();
        assert!(slash.contains("write `gh__create`"), "{slash}");
        let bare = check_pattern("create_issue", &["gh"])
            .unwrap_err()
            .to_string();
        assert!(
            bare.contains("`gh__create_issue` or `*__create_issue`"),
            "{bare}"
        );
        assert!(check_pattern("", &["gh"]).is_err());
        assert!(check_pattern("gh__[ab]", &["gh"]).is_err());
    }
}
