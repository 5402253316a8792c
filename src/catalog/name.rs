//! Qualified names: how a downstream tool is called on our side (DESIGN.md section 4).
//!
//! `<prefix>__<tool>`, sanitized to `[A-Za-z0-9_-]`, at most `max_len` characters. A name that
//! had to be altered (lossy sanitizing or truncation) and collides, or that is too long, gets
//! `_` + 8 hex digits of a stable hash of `server/tool`, so it stays the same run after run.
//!
//! A server with `prefix = ""` (at most one, config checks) keeps its own names, so a client
//! that called it directly calls it the same way through us. Whatever the order servers
//! connect in, a name it cannot keep as it is gets the hash suffix instead (docs/config.md
//! promises it): one that sanitizing changed (`ech\u{200b}` would otherwise become `ech_`,
//! a look-alike of another tool's), a meta tool's name in any case ([`RESERVED`]:
//! `Search_Tools` beside `search_tools` is a twin a model confuses), and one holding `__`,
//! which belongs to the prefixed servers. Its hashed names never hold `__` either (runs of
//! `_` in the stem become one), so the two name spaces cannot meet.

use std::fmt;

/// Joins the prefix and the original tool name. Config keeps `__` out of prefixes, so the
/// first `__` of a qualified name always ends the prefix.
pub const SEPARATOR: &str = "__";
/// `_` plus 8 hex digits.
const HASH_SUFFIX_LEN: usize = 9;
/// The meta tools' names (`server::meta::MetaTool`, whose tests keep the two equal): no
/// server's tool is given one.
pub const RESERVED: [&str; 3] = ["search_tools", "select_tools", "call_tool"];

/// A tool name as the client sees it. Only [`QualifiedName::assign`] makes one, so every
/// value is valid: non-empty, `[A-Za-z0-9_-]`,
/// within the length limit it was made for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QualifiedName(String);

impl QualifiedName {
    /// The name for `tool` of the server with `prefix` (and table name `server`, for the hash).
    /// `taken` says whether a candidate is already used by another tool; the result is never
    /// a taken name.
    ///
    /// The plain sanitized form is used when it fits and is free. Otherwise the name is cut to
    /// leave room for the hash suffix; the hash covers `server/tool`, so two tools never
    /// share one unless 32 bits collide, and then the suffix is re-hashed with a counter.
    pub fn assign(
        server: &str,
        prefix: &str,
        tool: &str,
        max_len: usize,
        taken: impl Fn(&str) -> bool,
    ) -> QualifiedName {
        let (plain, own_name_free) = if prefix.is_empty() {
            let own = sanitize(tool);
            let free = own == tool && is_free_for_unprefixed(&own);
            (own, free)
        } else {
            (sanitize(&format!("{prefix}{SEPARATOR}{tool}")), true)
        };
        if own_name_free && plain.len() <= max_len && !taken(&plain) {
            return QualifiedName(plain);
        }
        let keep = max_len.saturating_sub(HASH_SUFFIX_LEN).max(1);
        let stem = if prefix.is_empty() {
            unprefixed_stem(&plain, keep)
        } else {
            // `sanitize` leaves only ASCII, so byte slicing is on character boundaries.
            plain[..plain.len().min(keep)].to_owned()
        };
        let key = format!("{server}/{tool}");
        (0u32..)
            .map(|salt| {
                let hash = if salt == 0 {
                    fnv1a(key.as_bytes())
                } else {
                    fnv1a(format!("{key}#{salt}").as_bytes())
                };
                format!("{stem}_{hash:08x}")
            })
            .find(|candidate| !taken(candidate))
            .map(QualifiedName)
            .unwrap_or_else(|| unreachable!("an endless iterator ends only by `find`"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for QualifiedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for QualifiedName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for QualifiedName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// The one name character set, `[A-Za-z0-9_-]`: of qualified names, server names and
/// prefixes (DESIGN.md section 4). What providers accept in a tool name, and a bare TOML key.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Every character outside the name set ([`is_name_char`]) becomes `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect()
}

/// Whether a server with `prefix = ""` may have `name` as it is: not empty, not a meta
/// tool's in any case, and not in the prefixed servers' `<prefix>__` space.
fn is_free_for_unprefixed(name: &str) -> bool {
    !name.is_empty()
        && !name.contains(SEPARATOR)
        && !RESERVED.iter().any(|meta| meta.eq_ignore_ascii_case(name))
}

/// The part of a sanitized unprefixed name kept before its hash suffix, at most `keep`
/// characters: runs of `_` made one and a trailing `_` dropped, so the hashed name holds
/// no `__` (the prefixed servers' space).
fn unprefixed_stem(name: &str, keep: usize) -> String {
    let mut stem = String::with_capacity(name.len().min(keep));
    for c in name.chars() {
        if stem.len() == keep {
            break;
        }
        if !(c == '_' && stem.ends_with('_')) {
            stem.push(c);
        }
    }
    stem.truncate(stem.trim_end_matches('_').len());
    stem
}

/// Whether `name` could be a qualified name under `max_len`.
pub fn is_valid(name: &str, max_len: usize) -> bool {
    !name.is_empty() && name.len() <= max_len && name.chars().all(is_name_char)
}

/// 32-bit FNV-1a: tiny, and the same on every platform and release, which is all the suffix
/// needs (std's hashers are seeded or unspecified across versions).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn free(_: &str) -> bool {
        false
    }

    #[test]
    fn plain_names_are_prefix_separator_tool() {
        let name = QualifiedName::assign("github", "gh", "create_issue", 64, free);
        assert_eq!(name.as_str(), "gh__create_issue");
    }

    #[test]
    fn characters_outside_the_set_become_underscores() {
        let name = QualifiedName::assign("fs", "fs", "read.file/v2 é", 64, free);
        assert_eq!(name.as_str(), "fs__read_file_v2__");
    }

    #[test]
    fn long_names_are_cut_and_get_a_stable_hash() {
        let tool = "a".repeat(80);
        let name = QualifiedName::assign("srv", "srv", &tool, 64, free);
        assert_eq!(name.as_str().len(), 64);
        assert!(name.as_str().starts_with("srv__aaaa"));
        let again = QualifiedName::assign("srv", "srv", &tool, 64, free);
        assert_eq!(name, again, "the same input must give the same name");
        // The suffix is the FNV-1a of `server/tool`, pinned so a release cannot change it.
        assert_eq!(
            &name.as_str()[55..],
            &format!("_{:08x}", fnv1a(format!("srv/{tool}").as_bytes()))
        );
    }

    #[test]
    fn exactly_at_the_limit_is_kept_whole() {
        let tool = "b".repeat(64 - "srv__".len());
        let name = QualifiedName::assign("srv", "srv", &tool, 64, free);
        assert_eq!(name.as_str(), format!("srv__{tool}"));
    }

    #[test]
    fn a_lower_limit_is_honoured() {
        let name =
            QualifiedName::assign("github", "github", "create_pull_request_review", 24, free);
        assert_eq!(name.as_str().len(), 24);
    }

    #[test]
    fn a_collision_gets_a_hash_and_never_a_taken_name() {
        let first = QualifiedName::assign("fs", "fs", "read_file", 64, free);
        let second = QualifiedName::assign("fs", "fs", "read.file", 64, |n| n == first.as_str());
        assert_ne!(first, second);
        assert!(second.as_str().starts_with("fs__read_file_"));
        assert_eq!(second.as_str().len(), "fs__read_file_".len() + 8);
    }

    #[test]
    fn a_hash_collision_moves_on_to_a_salted_hash() {
        let tool = "x".repeat(100);
        let first = QualifiedName::assign("s", "s", &tool, 20, free);
        let second = QualifiedName::assign("s", "s", &tool, 20, |n| n == first.as_str());
        assert_ne!(first, second);
        assert_eq!(second.as_str().len(), 20);
    }

    #[test]
    fn an_unprefixed_server_keeps_its_own_names() {
        let name = QualifiedName::assign("everything", "", "test_simple_text", 64, free);
        assert_eq!(name.as_str(), "test_simple_text");
        let name = QualifiedName::assign("everything", "", "Read-File_2", 64, free);
        assert_eq!(name.as_str(), "Read-File_2");
    }

    /// Issue 35 item 10: `ech\u{200b}` became `ech_`, `call_tool\u{feff}` `call_tool_`, with
    /// no hash, look-alikes of other names; docs/config.md promises the hash for these.
    #[test]
    fn an_unprefixed_name_changed_by_sanitizing_gets_the_hash() {
        for (tool, stem) in [
            ("read.file", "read_file"),
            ("ech\u{200b}", "ech"),
            ("echó", "ech"),
            ("call_tool\u{feff}", "call_tool"),
            ("search_tools\u{200b}", "search_tools"),
            ("a\u{0}\u{1}b", "a_b"),
            ("é", ""),
        ] {
            let name = QualifiedName::assign("everything", "", tool, 64, free);
            let hash = format!("_{:08x}", fnv1a(format!("everything/{tool}").as_bytes()));
            assert_eq!(name.as_str(), format!("{stem}{hash}"), "{tool:?}");
            assert!(!name.as_str().contains(SEPARATOR), "{name}");
        }
    }

    #[test]
    fn meta_tool_names_are_reserved_in_any_case() {
        for tool in ["Search_Tools", "SELECT_TOOLS", "call_Tool"] {
            let name = QualifiedName::assign("everything", "", tool, 64, free);
            let hash = format!("_{:08x}", fnv1a(format!("everything/{tool}").as_bytes()));
            assert_eq!(name.as_str(), format!("{tool}{hash}"));
        }
        // A prefixed server's names never meet the meta tools'.
        let name = QualifiedName::assign("s", "s", "Search_Tools", 64, free);
        assert_eq!(name.as_str(), "s__Search_Tools");
    }

    #[test]
    fn an_unprefixed_server_never_gets_a_meta_tool_name_or_one_with_the_separator() {
        for tool in RESERVED.into_iter().chain(["gh__create_issue", ""]) {
            let name = QualifiedName::assign("everything", "", tool, 64, free);
            assert_ne!(name.as_str(), tool);
            assert!(is_valid(name.as_str(), 64), "invalid: {name}");
            // The hash suffix, so the name is the same every run.
            let hash = format!("_{:08x}", fnv1a(format!("everything/{tool}").as_bytes()));
            assert!(name.as_str().ends_with(&hash), "{name}");
            assert!(!name.as_str().contains(SEPARATOR), "{name}");
            assert_eq!(
                name,
                QualifiedName::assign("everything", "", tool, 64, free)
            );
        }
    }

    #[test]
    fn an_unprefixed_name_that_is_taken_or_too_long_gets_the_hash() {
        let taken = QualifiedName::assign("s", "", "echo", 64, |n| n == "echo");
        assert!(taken.as_str().starts_with("echo_"));
        let long = QualifiedName::assign("s", "", &"c".repeat(70), 64, free);
        assert_eq!(long.as_str().len(), 64);
    }

    proptest! {
        /// Whatever the tools are called, every name is valid, unique and the same next run.
        #[test]
        fn any_input_gives_valid_unique_stable_names(
            tools in proptest::collection::vec(".{0,90}", 1..40),
            max_len in 16usize..=64,
        ) {
            let assign_all = || {
                let mut taken: HashSet<String> = HashSet::new();
                tools
                    .iter()
                    .map(|tool| {
                        let name = QualifiedName::assign("server", "srv", tool, max_len, |n| taken.contains(n));
                        taken.insert(name.as_str().to_owned());
                        name
                    })
                    .collect::<Vec<_>>()
            };
            let names = assign_all();
            for name in &names {
                prop_assert!(is_valid(name.as_str(), max_len), "invalid: {name}");
            }
            let distinct: HashSet<_> = names.iter().collect();
            prop_assert_eq!(distinct.len(), names.len());
            prop_assert_eq!(names, assign_all());
        }

        /// With `prefix = ""`: every name is its tool's own or carries the hash, and none
        /// is a meta tool's in any case or in the prefixed servers' `__` space.
        #[test]
        fn unprefixed_names_are_own_or_hashed_and_never_meta_or_separated(
            tools in proptest::collection::vec("(?s).{0,70}", 1..30),
            max_len in 16usize..=64,
        ) {
            let mut taken: HashSet<String> = HashSet::new();
            for tool in &tools {
                let name = QualifiedName::assign("srv", "", tool, max_len, |n| taken.contains(n));
                let name = name.as_str();
                prop_assert!(is_valid(name, max_len), "invalid: {}", name);
                prop_assert!(!RESERVED.iter().any(|m| m.eq_ignore_ascii_case(name)));
                prop_assert!(!name.contains(SEPARATOR), "{}", name);
                if name != tool {
                    let tail = &name[name.len() - HASH_SUFFIX_LEN..];
                    prop_assert!(tail.starts_with('_'), "{} for {:?}", name, tool);
                    prop_assert!(tail[1..].chars().all(|c| c.is_ascii_hexdigit()));
                }
                prop_assert!(taken.insert(name.to_owned()), "{} given twice", name);
            }
        }
    }
}
