//! What changed between the approved definition and the one a server lists now, as
//! `mcp-defer trust` shows it: the description as a word diff (`[-removed-]{+added+}`, as
//! `git diff --word-diff` writes it), every other field as the JSON paths added, removed
//! or changed. Server text is shown through `printable`, so a hidden or control character
//! is seen as its escape, not obeyed by the terminal.

use std::collections::BTreeMap;

use serde_json::Value;

use super::definition::Definition;
use crate::printable::one_line;

/// Longest description (in words, either side) diffed word by word; longer ones are shown
/// whole, old then new (the diff is quadratic).
const MAX_DIFF_WORDS: usize = 4000;

/// The change from `previous` (none: a tool never approved) to `now`, one line a change,
/// each indented by two spaces.
pub fn describe(previous: Option<&Definition>, now: &Definition) -> Vec<String> {
    let before = previous.map_or(Value::Null, Definition::value);
    let after = now.value();
    let text = |v: &Value| {
        v.get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let mut lines = Vec::new();
    let (old, new) = (text(&before), text(&after));
    if previous.is_none() {
        lines.push(format!("  description: {}", one_line(&new)));
    } else if old != new {
        lines.push(format!("  description: {}", word_diff(&old, &new)));
    }
    let (old, new) = (flatten(&before), flatten(&after));
    for (path, value) in &new {
        if path == "description" {
            continue;
        }
        match old.get(path) {
            None => lines.push(format!("  + {path}: {}", one_line(value))),
            Some(was) if was != value => {
                lines.push(format!(
                    "  ~ {path}: {} -> {}",
                    one_line(was),
                    one_line(value)
                ));
            }
            Some(_) => {}
        }
    }
    for (path, value) in &old {
        if path != "description" && !new.contains_key(path) {
            lines.push(format!("  - {path}: {}", one_line(value)));
        }
    }
    lines
}

/// `old` to `new` word by word: unchanged words as they are, removed runs as `[-...-]`,
/// added runs as `{+...+}`.
pub fn word_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.split_whitespace().collect();
    let b: Vec<&str> = new.split_whitespace().collect();
    if a.len() > MAX_DIFF_WORDS || b.len() > MAX_DIFF_WORDS {
        return format!("[-{}-]{{+{}+}}", one_line(old), one_line(new));
    }
    // Longest common subsequence table, from the end.
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out: Vec<String> = Vec::new();
    let (mut removed, mut added): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let flush = |out: &mut Vec<String>, removed: &mut Vec<&str>, added: &mut Vec<&str>| {
        if !removed.is_empty() {
            out.push(format!("[-{}-]", one_line(&removed.join(" "))));
            removed.clear();
        }
        if !added.is_empty() {
            out.push(format!("{{+{}+}}", one_line(&added.join(" "))));
            added.clear();
        }
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            flush(&mut out, &mut removed, &mut added);
            out.push(one_line(a[i]).into_owned());
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            added.push(b[j]);
            j += 1;
        } else {
            removed.push(a[i]);
            i += 1;
        }
    }
    flush(&mut out, &mut removed, &mut added);
    out.join(" ")
}

/// Every leaf of `value` by its JSON path (`inputSchema.properties.path.type`), as JSON.
fn flatten(value: &Value) -> BTreeMap<String, String> {
    fn walk(value: &Value, path: String, out: &mut BTreeMap<String, String>) {
        match value {
            Value::Object(object) if !object.is_empty() => {
                for (key, item) in object {
                    let here = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(item, here, out);
                }
            }
            Value::Null if path.is_empty() => {}
            leaf => {
                out.insert(path, leaf.to_string());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(value, String::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::definition::Overridden;

    #[test]
    fn a_word_diff_marks_only_the_changed_words() {
        assert_eq!(
            word_diff(
                "Reads a file from disk.",
                "Reads a file and mails it from disk."
            ),
            "Reads a file {+and mails it+} from disk."
        );
        assert_eq!(word_diff("a b c", "a x c"), "a [-b-] {+x+} c");
    }

    #[test]
    fn schema_changes_are_named_by_path() {
        let old = Definition::of(
            r#"{"name":"t","description":"D","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}"#,
            Overridden::default(),
        );
        let new = Definition::of(
            r#"{"name":"t","description":"D","inputSchema":{"type":"object","properties":{"path":{"type":"number"},"sidenote":{"type":"string"}}}}"#,
            Overridden::default(),
        );
        let lines = describe(Some(&old), &new);
        assert_eq!(
            lines,
            [
                "  ~ inputSchema.properties.path.type: \"string\" -> \"number\"",
                "  + inputSchema.properties.sidenote.type: \"string\"",
            ]
        );
    }
}
