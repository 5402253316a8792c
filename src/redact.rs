//! The one place that decides what a secret looks like in text we show: log lines, `check`
//! output, error results the model reads.
//!
//! Two rules, applied together by [`redact`]: credentials by shape (a URL's `user:password@`,
//! query parameters named like a key or token, `Bearer ...`), and credentials by value (every
//! secret the config resolved, registered once at load with [`register_secret`]). A value is
//! a secret when it came from `env`, a bearer token or an HTTP header: those are exactly the
//! places a config puts keys. Nothing here may log, or it would recurse through the writer.

use std::borrow::Cow;
use std::sync::RwLock;

mod json;

pub(crate) use json::RedactingJsonStderr;

/// What replaces a secret.
pub(crate) const MASK: &str = "***";

/// Shorter registered values are not masked: `TZ = "UTC"` or `DEBUG = "1"` would blank out
/// ordinary words everywhere, and a real key is longer than this.
const MIN_SECRET_LEN: usize = 6;

/// Query parameter (or `name=value` word) names whose value is a credential. A name counts
/// when one of its `_`/`-`/`.`-separated words (case folded) is or ends with one of these, so
/// `x-api-key`, `apikey`, `access_token` and `client_secret` count and `author` does not.
const SECRET_PARAMS: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "auth",
    "credential",
    "signature",
    "sig",
    "session",
    "sessionid",
];

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Masks `value` wherever [`redact`] sees it from now on (values too short to be a key are
/// ignored: see [`MIN_SECRET_LEN`]).
pub(crate) fn register_secret(value: &str) {
    let value = value.trim();
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    // As written, and as a `Debug` dump of a request shows it (rmcp logs requests with
    // `?`: a `"` or `\\` in the value comes out escaped, and would slip past otherwise).
    let escaped: String = value.escape_debug().collect();
    let mut secrets = SECRETS.write().unwrap_or_else(|p| p.into_inner());
    for form in [value, escaped.as_str()] {
        if !secrets.iter().any(|s| s == form) {
            secrets.push(form.to_owned());
        }
    }
    // Longest first, so a secret that contains another is masked whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// `text` with every credential masked: registered secret values, URL userinfo, secret-named
/// query parameters and `Bearer` tokens. Borrowed when there was nothing to mask.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    {
        let secrets = SECRETS.read().unwrap_or_else(|p| p.into_inner());
        for secret in secrets.iter() {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), MASK));
            }
        }
    }
    for rule in [userinfo, bare_userinfo, params, bearer, session_worker] {
        if let Some(changed) = rule(&out) {
            out = Cow::Owned(changed);
        }
    }
    out
}

/// `scheme://user:password@host` and `scheme://token@host` become `scheme://***@host`.
fn userinfo(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || is_quote(c))
            .unwrap_or(tail.len());
        let authority = &tail[..authority_end];
        match authority.rfind('@') {
            Some(at) if at > 0 && authority[..at] != *MASK => {
                out.push_str(MASK);
                out.push_str(&authority[at..]);
                changed = true;
            }
            _ => out.push_str(authority),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// `user:password@host` without a scheme, as an HTTP client logs a connection pool's key
/// (hyper-util at trace: `("http", user:password@host:port)`), becomes `***@host`. A word
/// (up to whitespace, a quote, a bracket, `,`, `;` or `=`) whose part before its last `@`
/// has a `:` and no `/`; an e-mail address has no `:` there and is kept.
fn bare_userinfo(text: &str) -> Option<String> {
    if !text.contains('@') {
        return None;
    }
    let delimiter = |c: char| {
        c.is_whitespace()
            || is_quote(c)
            || matches!(c, '(' | ')' | '[' | ']' | '{' | '}' | ',' | ';' | '=')
    };
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(delimiter).unwrap_or(rest.len());
        let word = &rest[..end];
        match word.rfind('@') {
            Some(at)
                if at > 0
                    && word[..at].contains(':')
                    && !word[..at].contains('/')
                    && word[..at] != *MASK
                    && word[at + 1..].starts_with(|c: char| c.is_alphanumeric() || c == '[') =>
            {
                out.push_str(MASK);
                out.push_str(&word[at..]);
                changed = true;
            }
            _ => out.push_str(word),
        }
        // The delimiter itself (one character), then on.
        let next = rest[end..].chars().next().map_or(0, char::len_utf8);
        out.push_str(&rest[end..end + next]);
        rest = &rest[end + next..];
    }
    changed.then_some(out)
}

/// Registers the credentials in a URL's userinfo (`https://user:password@host`, or a
/// token as the user: `https://TOKEN@host`) as secrets, as written and percent-decoded:
/// an HTTP client may log them in any shape (a pool key without the scheme, a decoded
/// basic-auth pair), and the shape rules cannot know every one.
pub(crate) fn register_url_credentials(url: &str) {
    let Some((_, rest)) = url.split_once("://") else {
        return;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let Some(at) = authority.rfind('@') else {
        return;
    };
    let userinfo = &authority[..at];
    let secret = match userinfo.split_once(':') {
        Some((_, password)) => password,
        None => userinfo,
    };
    register_secret(secret);
    register_secret(&percent_decoded(secret));
}

/// `%XX` escapes decoded; anything else (a lone `%`, invalid UTF-8) kept as it is.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(Some(hi)), Some(Some(lo))) = (
                bytes.get(i + 1).map(|&b| hex(b)),
                bytes.get(i + 2).map(|&b| hex(b)),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// `name=value` where `name` looks like a credential, after `?`, `&`, `;`, a space or the
/// start: the value (up to `&`, `#`, whitespace, a quote or `,`) becomes `***`.
fn params(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(eq) = rest.find('=') {
        let (before, after) = rest.split_at(eq);
        // Past the last character that cannot be part of a name (it may be several bytes).
        let name_start = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let name = &before[name_start..];
        let after = &after[1..];
        let lower = name.to_ascii_lowercase();
        // rmcp's span for an HTTP session names its id plainly: `..._session{id="..."}`.
        let session_span = lower == "id" && before[..name_start].ends_with("_session{");
        let secret = session_span || secret_name(&lower);
        out.push_str(before);
        out.push('=');
        // A secret's quoted value (a `tracing` field logged with `?`: `session_id="..."`)
        // is masked inside its quotes; any other quoted text is scanned on as before.
        if secret && after.starts_with('"') {
            let value_end = after[1..].find('"').map_or(after.len(), |i| i + 2);
            out.push_str("\"***\"");
            changed |= &after[..value_end] != "\"***\"";
            rest = &after[value_end..];
            continue;
        }
        let value_end = after
            .find(|c: char| {
                matches!(c, '&' | '#' | ',' | ';' | ')') || c.is_whitespace() || is_quote(c)
            })
            .unwrap_or(after.len());
        if value_end > 0 && &after[..value_end] != MASK && secret {
            out.push_str(MASK);
            changed = true;
        } else {
            out.push_str(&after[..value_end]);
        }
        rest = &after[value_end..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// Whether a parameter or field named `name` holds a credential: one of its
/// `_`/`-`/`.`-separated words (case folded) is or ends with a [`SECRET_PARAMS`] word.
fn secret_name(name: &str) -> bool {
    name.to_ascii_lowercase()
        .split(['_', '-', '.'])
        .any(|word| SECRET_PARAMS.iter().any(|p| word.ends_with(p)))
}

/// `Bearer <token>` (any case) becomes `Bearer ***`.
fn bearer(text: &str) -> Option<String> {
    const WORD: &str = "bearer ";
    let lower = text.to_ascii_lowercase();
    if !lower.contains(WORD) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut last = 0;
    for (at, _) in lower.match_indices(WORD) {
        if at < last {
            continue;
        }
        let start = at + WORD.len();
        let end = text[start..]
            .find(|c: char| c.is_whitespace() || is_quote(c) || c == ',')
            .map_or(text.len(), |i| start + i);
        if end > start && &text[start..end] != MASK {
            out.push_str(&text[last..start]);
            out.push_str(MASK);
            last = end;
            changed = true;
        }
    }
    out.push_str(&text[last..]);
    changed.then_some(out)
}

/// rmcp names each HTTP session's transport worker `streamable-http-session-<id>` (a span
/// field, in every line logged inside it): the id, which is the session's bearer
/// credential, becomes `***`.
fn session_worker(text: &str) -> Option<String> {
    const NAME: &str = "streamable-http-session-";
    if !text.contains(NAME) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(at) = rest.find(NAME) {
        let start = at + NAME.len();
        out.push_str(&rest[..start]);
        let id_end = rest[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .map_or(rest.len(), |i| start + i);
        if id_end > start {
            out.push_str(MASK);
            changed = true;
        }
        rest = &rest[id_end..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

fn is_quote(c: char) -> bool {
    matches!(c, '"' | '\'' | '`' | '<' | '>')
}

/// A `MakeWriter` for the log: every line written to stderr goes through [`redact`] first, so
/// no log line at any level (ours, rmcp's, reqwest's, a child's stderr) carries a secret,
/// nor a control character the terminal would act on.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RedactingStderr;

impl std::io::Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        // Control characters from a server's stderr or error body are shown, not obeyed.
        let text = redact(&text);
        std::io::stderr().write_all(crate::printable::printable(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactingStderr {
    type Writer = RedactingStderr;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingStderr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the stdin fuzz test: a name cut right after a multi-byte character panicked
    /// in the logger, for any log line with `=` after such a character.
    #[test]
    fn text_around_multibyte_characters_is_kept_whole() {
        assert_eq!(redact("㆐token=abc"), "㆐token=***");
        assert_eq!(redact("\"<㆐=x"), "\"<㆐=x");
        assert_eq!(redact("é=1 ü_key=2 ☃"), "é=1 ü_key=*** ☃");
    }

    #[test]
    fn url_credentials_are_masked() {
        assert_eq!(
            redact("cannot reach https://bob:hunter22@example.com/mcp?api_key=abc123&x=1: refused"),
            "cannot reach https://***@example.com/mcp?api_key=***&x=1: refused"
        );
        assert_eq!(
            redact("http://ghp_tok@h/p?token=zz#f"),
            "http://***@h/p?token=***#f"
        );
        assert_eq!(
            redact("see http://example.com/a?q=1"),
            "see http://example.com/a?q=1"
        );
    }

    #[test]
    fn userinfo_without_a_scheme_is_masked_and_mail_addresses_kept() {
        assert_eq!(
            redact(
                r#"checkout waiting for idle connection: ("http", alice:pw-9f3@127.0.0.1:8080)"#
            ),
            r#"checkout waiting for idle connection: ("http", ***@127.0.0.1:8080)"#
        );
        assert_eq!(
            redact("mail bob@example.com at 10:30"),
            "mail bob@example.com at 10:30"
        );
        assert_eq!(redact("http://***@h and x"), "http://***@h and x");
    }

    #[test]
    fn url_credentials_registered_are_masked_in_any_shape() {
        register_url_credentials("https://carol:p%40ss-word-42@host.example/mcp");
        register_url_credentials("https://ghp_tokenvalue99@host.example/mcp");
        assert_eq!(
            redact("basic carol p@ss-word-42 / ghp_tokenvalue99"),
            "basic carol *** / ***"
        );
    }

    #[test]
    fn quoted_session_ids_and_rmcp_session_spans_are_masked() {
        assert_eq!(
            redact(r#"create new session session_id="7d25c3fa-1c08" next"#),
            r#"create new session session_id="***" next"#
        );
        assert_eq!(
            redact(r#"DEBUG streamable_http_session{id="7d25c3fa-1c08"}: rmcp: x id=2"#),
            r#"DEBUG streamable_http_session{id="***"}: rmcp: x id=2"#
        );
    }

    #[test]
    fn session_ids_in_rmcp_worker_names_are_masked() {
        assert_eq!(
            redact("TRACE transport_worker{name=streamable-http-session-7d25c3fa-1c08-4e}: x"),
            "TRACE transport_worker{name=streamable-http-session-***}: x"
        );
        assert_eq!(
            redact(r#"{"name":"streamable-http-session-abc123"}"#),
            r#"{"name":"streamable-http-session-***"}"#
        );
        assert_eq!(
            redact("streamable-http-session-***"),
            "streamable-http-session-***"
        );
    }

    #[test]
    fn bearer_tokens_and_named_values_are_masked() {
        assert_eq!(
            redact("authorization: Bearer sk-live-123, next"),
            "authorization: Bearer ***, next"
        );
        assert_eq!(
            redact("client_secret=s3cr3t rest"),
            "client_secret=*** rest"
        );
        assert_eq!(redact("a = b, x=1"), "a = b, x=1");
    }

    #[test]
    fn registered_values_are_masked_as_a_debug_dump_escapes_them() {
        register_secret(r#"quote"in-secret\x"#);
        assert_eq!(
            redact(r#"String("quote\"in-secret\\x") and quote"in-secret\x"#),
            r#"String("***") and ***"#
        );
    }

    #[test]
    fn registered_values_are_masked_and_short_ones_ignored() {
        register_secret("planted-value-77");
        register_secret("UTC");
        assert_eq!(redact("env: planted-value-77 in UTC"), "env: *** in UTC");
    }
}
