//! Whether a URI is one a resource template describes: how `resources/read` finds the server
//! of a URI that no server listed but whose template covers it.
//!
//! RFC 6570 matching, as far as routing needs it: a simple `{var}` (level 1) stands for one
//! or more characters other than `/`, `?` and `#` (what a simple expansion leaves unencoded
//! or percent-encodes); an expression with an operator (`{+path}`, `{?q}`, `{/seg}`, ...)
//! stands for any characters, which is loose but only ever picks among templates.

/// One piece of a parsed template.
#[derive(Debug, PartialEq)]
enum Part<'a> {
    Literal(&'a str),
    /// A `{var}` expression: a segment of a path.
    Simple,
    /// An expression with an operator: anything, possibly empty.
    Any,
}

fn parse(template: &str) -> Option<Vec<Part<'_>>> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Literal(&rest[..open]));
        }
        let close = rest[open..].find('}')? + open;
        let expression = &rest[open + 1..close];
        let operator = expression.chars().next()?;
        parts.push(if operator.is_ascii_alphanumeric() || operator == '_' {
            Part::Simple
        } else {
            Part::Any
        });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    Some(parts)
}

/// Whether `uri` is an expansion of `template`. A malformed template (an unclosed or empty
/// `{}`) matches nothing.
pub fn matches(template: &str, uri: &str) -> bool {
    parse(template).is_some_and(|parts| match_parts(&parts, uri))
}

fn match_parts(parts: &[Part<'_>], uri: &str) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(literal) => uri
            .strip_prefix(literal)
            .is_some_and(|tail| match_parts(rest, tail)),
        Part::Simple => {
            // The longest run of segment characters bounds the value; try every length in it.
            let run = uri.find(['/', '?', '#']).unwrap_or(uri.len());
            (1..=run)
                .rev()
                .filter(|&end| uri.is_char_boundary(end))
                .any(|end| match_parts(rest, &uri[end..]))
        }
        Part::Any => (0..=uri.len())
            .rev()
            .filter(|&end| uri.is_char_boundary(end))
            .any(|end| match_parts(rest, &uri[end..])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_simple_variable_matches_one_segment() {
        let template = "demo://resource/dynamic/text/{resourceId}";
        assert!(matches(template, "demo://resource/dynamic/text/1"));
        assert!(matches(template, "demo://resource/dynamic/text/abc%20d"));
        assert!(!matches(template, "demo://resource/dynamic/text/"));
        assert!(!matches(template, "demo://resource/dynamic/text/1/2"));
        assert!(!matches(template, "demo://resource/dynamic/blob/1"));
    }

    #[test]
    fn several_variables_and_literals_between_them() {
        let template = "file:///{dir}/{name}.txt";
        assert!(matches(template, "file:///docs/readme.txt"));
        assert!(matches(template, "file:///docs/read.me.txt"));
        assert!(!matches(template, "file:///docs/readme.md"));
        assert!(!matches(template, "file:///a/b/readme.txt"));
    }

    #[test]
    fn operator_expressions_match_anything() {
        assert!(matches("file:///{+path}", "file:///a/b/c.txt"));
        assert!(matches(
            "search://items{?q,lang}",
            "search://items?q=x&lang=en"
        ));
        assert!(matches("search://items{?q,lang}", "search://items"));
    }

    #[test]
    fn a_template_without_variables_matches_itself_only() {
        assert!(matches("demo://static", "demo://static"));
        assert!(!matches("demo://static", "demo://static/1"));
    }

    #[test]
    fn malformed_templates_match_nothing() {
        assert!(!matches("demo://{id", "demo://1"));
        assert!(!matches("demo://{}", "demo://1"));
    }
}
