//! `${VAR}` and `${VAR:-default}` in string values.
//!
//! The lookup is passed in, never read from `std::env` here, so tests inject variables and
//! the process environment stays untouched. Errors carry variable names only: a value may be
//! a secret, so it never appears in a message.

/// Why a string could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ExpandError {
    /// `${NAME}` with `NAME` unset and no default.
    Unset(String),
    /// `${NAME}` with `NAME` set to the empty string and no default: almost always a
    /// variable that was meant to be filled in (an empty API key, an empty path).
    Empty(String),
    /// `${` without its `}`.
    Unterminated,
    /// `${}` or a name with characters other than `[A-Za-z0-9_]`.
    BadName(String),
}

/// Expands `text`:
/// - `${NAME}` is the value of `NAME`; unset is an error, and so is set but empty (write
///   `${NAME:-}` when empty is meant).
/// - `${NAME:-default}` is the value of `NAME`, or `default` when it is unset or empty (as
///   in POSIX shells). The default is taken literally, up to the first `}`.
/// - `$$` is one literal `$`, for the rare value that needs `${` verbatim.
/// - Any other `$` is kept as is, so `$HOME` or a regex ending in `$` passes through
///   unchanged, as Codex would pass it.
pub(super) fn expand(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let after = &rest[dollar + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let close = body.find('}').ok_or(ExpandError::Unterminated)?;
            let inner = &body[..close];
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(ExpandError::BadName(name.to_owned()));
            }
            let value = match (lookup(name), default) {
                (Some(value), Some(default)) if value.is_empty() => default.to_owned(),
                (Some(value), None) if value.is_empty() => {
                    return Err(ExpandError::Empty(name.to_owned()));
                }
                (Some(value), _) => value,
                (None, Some(default)) => default.to_owned(),
                (None, None) => return Err(ExpandError::Unset(name.to_owned())),
            };
            out.push_str(&value);
            rest = &body[close + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn set_variables_expand() {
        assert_eq!(expand("${HOME}/x", &env), Ok("/home/me/x".into()));
        assert_eq!(
            expand("a${HOME}b${HOME}", &env),
            Ok("a/home/meb/home/me".into())
        );
        assert_eq!(expand("${EMPTY:-}", &env), Ok(String::new()));
    }

    #[test]
    fn set_but_empty_without_default_is_an_error() {
        assert_eq!(
            expand("${EMPTY}", &env),
            Err(ExpandError::Empty("EMPTY".into()))
        );
    }

    #[test]
    fn defaults_cover_unset_and_empty() {
        assert_eq!(expand("${NOPE:-dflt}", &env), Ok("dflt".into()));
        assert_eq!(expand("${EMPTY:-dflt}", &env), Ok("dflt".into()));
        assert_eq!(expand("${HOME:-dflt}", &env), Ok("/home/me".into()));
        assert_eq!(expand("${NOPE:-}", &env), Ok(String::new()));
    }

    #[test]
    fn unset_without_default_is_an_error_naming_the_variable() {
        assert_eq!(
            expand("x${NOPE}", &env),
            Err(ExpandError::Unset("NOPE".into()))
        );
    }

    #[test]
    fn dollars_without_braces_are_literal_and_double_dollar_escapes() {
        assert_eq!(expand("^a$ $HOME $", &env), Ok("^a$ $HOME $".into()));
        assert_eq!(expand("$${HOME}", &env), Ok("${HOME}".into()));
        assert_eq!(expand("$$$$", &env), Ok("$$".into()));
    }

    #[test]
    fn malformed_references_are_errors() {
        assert_eq!(expand("${HOME", &env), Err(ExpandError::Unterminated));
        assert_eq!(
            expand("${}", &env),
            Err(ExpandError::BadName(String::new()))
        );
        assert_eq!(
            expand("${A B}", &env),
            Err(ExpandError::BadName("A B".into()))
        );
    }
}
