//! "Did you mean" for misspelled keys and values.
//!
//! Names are compared after folding case and dropping `_` and `-`, so the spellings other
//! clients use (`mcpServers`, `alwaysLoad`, `enabledTools`) land on ours. Pure functions, no
//! dependencies.

/// The candidate closest to `input`, if any is close enough to be a likely typo.
///
/// Close enough: an edit distance of at most a third of the input's length (at least 1), or
/// one name containing the other (`headers` → `http_headers`). Ties go to the earlier
/// candidate, so the answer is the same every run.
pub(super) fn did_you_mean<'a>(input: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let input = fold(input);
    if input.is_empty() {
        return None;
    }
    let limit = (input.chars().count() / 3).max(1);
    candidates
        .iter()
        .filter_map(|&candidate| {
            let folded = fold(candidate);
            let distance = edit_distance(&input, &folded);
            let contains = input.len() >= 4 && folded.contains(&input)
                || folded.len() >= 4 && input.contains(&folded);
            (distance <= limit || contains).then_some((distance, candidate))
        })
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// `" (did you mean `x`?)"` or nothing, ready to append to a message.
pub(super) fn hint(input: &str, candidates: &[&str]) -> String {
    did_you_mean(input, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &[&str] = &[
        "command",
        "args",
        "http_headers",
        "env_http_headers",
        "always_load",
    ];

    #[test]
    fn typos_and_other_spellings_find_our_key() {
        assert_eq!(did_you_mean("comand", KEYS), Some("command"));
        assert_eq!(did_you_mean("arg", KEYS), Some("args"));
        assert_eq!(did_you_mean("headers", KEYS), Some("http_headers"));
        assert_eq!(did_you_mean("alwaysLoad", KEYS), Some("always_load"));
    }

    #[test]
    fn unrelated_names_get_no_suggestion() {
        assert_eq!(did_you_mean("zzz", KEYS), None);
        assert_eq!(did_you_mean("", KEYS), None);
        assert_eq!(hint("transport", KEYS), "");
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
