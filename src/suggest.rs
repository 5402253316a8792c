//! "Did you mean" for misspelled config keys, values and tool names.
//!
//! Names are compared after folding case and dropping `_` and `-`, so the spellings other
//! clients use (`mcpServers`, `alwaysLoad`, `enabledTools`) land on ours. Pure functions, no
//! dependencies.

/// The candidate closest to `input`, if any is close enough to be a likely typo.
///
/// Close enough: an edit distance of at most a third of the input's length (at least 1), or
/// one name containing the other (`headers` → `http_headers`). Ties go to the earlier
/// candidate, so the answer is the same every run.
pub(crate) fn did_you_mean<'a>(input: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let input = fold(input);
    if input.is_empty() {
        return None;
    }
    let limit = (input.chars().count() / 3).max(1);
    candidates
        .iter()
        .filter_map(|&candidate| {
            let folded = fold(candidate);
            let contains = input.len() >= 4 && folded.contains(&input)
                || folded.len() >= 4 && input.contains(&folded);
            // Lengths further apart than the limit cannot be within it: skip the quadratic
            // distance for them (most candidates, for a long or odd input).
            let gap = input.chars().count().abs_diff(folded.chars().count());
            if gap > limit && !contains {
                return None;
            }
            let distance = edit_distance(&input, &folded);
            (distance <= limit || contains).then_some((distance, candidate))
        })
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// `" (did you mean `x`?)"` or nothing, ready to append to a message.
pub(crate) fn hint(input: &str, candidates: &[&str]) -> String {
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

/// Edit distance over characters where swapping two neighbours counts as one edit (optimal
/// string alignment): `raed` is one typo away from `read`, not two.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows: the one before the previous is needed for transpositions.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
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
        assert_eq!(edit_distance("raed", "read"), 1, "a swap is one edit");
    }
}
