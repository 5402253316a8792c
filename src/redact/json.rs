//! The JSON log (`--log-format json`) masked value by value: a text rule run over a whole
//! JSON line would miss `"session_id":"..."` (no `=`) and could eat a closing quote, so
//! each line is parsed, each string value goes through [`redact`], and the values of
//! fields named like a credential (the same names as the text rule) become `***`.
//! A line that is not JSON (it cannot come from the JSON formatter) is masked as text.

use std::borrow::Cow;

use serde_json::Value;

use super::{MASK, redact, secret_name};

/// One JSON log line (or several, one a line) with every secret masked; still JSON.
pub(crate) fn redact_json_lines(text: &str) -> Cow<'_, str> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        match serde_json::from_str::<Value>(body) {
            Ok(mut value) if value.is_object() => {
                if mask(&mut value, false) {
                    changed = true;
                    out.push_str(&value.to_string());
                    out.push_str(&line[body.len()..]);
                } else {
                    out.push_str(line);
                }
            }
            _ => {
                let masked = redact(line);
                changed |= matches!(masked, Cow::Owned(_));
                out.push_str(&masked);
            }
        }
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// Masks `value` in place (all of it when `secret`); whether anything changed.
fn mask(value: &mut Value, secret: bool) -> bool {
    match value {
        Value::String(text) if secret => {
            let changed = text != MASK;
            *text = MASK.to_owned();
            changed
        }
        Value::String(text) => match redact(text) {
            Cow::Owned(masked) => {
                *text = masked;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Value::Number(_) | Value::Bool(_) if secret => {
            *value = Value::String(MASK.to_owned());
            true
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| mask(item, secret) | changed),
        Value::Object(fields) => {
            // rmcp's span for an HTTP session names its id plainly:
            // `{"name":"streamable_http_session","id":"..."}`.
            let session_span = fields
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| name.ends_with("_session"));
            fields.iter_mut().fold(false, |changed, (key, item)| {
                let secret = secret || secret_name(key) || (session_span && key == "id");
                mask(item, secret) | changed
            })
        }
        Value::Null | Value::Number(_) | Value::Bool(_) => false,
    }
}

/// [`super::RedactingStderr`] for JSON lines: each line masked by [`redact_json_lines`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RedactingJsonStderr;

impl std::io::Write for RedactingJsonStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(redact_json_lines(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactingJsonStderr {
    type Writer = RedactingJsonStderr;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingJsonStderr
    }
}

#[cfg(test)]
mod tests {
    // A test fails loudly on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn fields_named_like_secrets_and_session_spans_are_masked_and_stay_json() {
        let line = r#"{"level":"DEBUG","fields":{"message":"create new session","session_id":"7d25c3fa-1c08"},"target":"rmcp","span":{"id":"7d25c3fa-1c08","name":"streamable_http_session"},"spans":[{"id":"7d25c3fa-1c08","name":"streamable_http_session"}]}"#;
        let masked = redact_json_lines(&format!("{line}\n")).into_owned();
        assert!(masked.ends_with("}\n"), "{masked}");
        assert!(!masked.contains("7d25c3fa"), "{masked}");
        let value: Value = serde_json::from_str(&masked).unwrap();
        assert_eq!(value["fields"]["session_id"], MASK);
        assert_eq!(value["span"]["id"], MASK);
        assert_eq!(value["fields"]["message"], "create new session");
    }

    #[test]
    fn a_secret_named_field_holding_an_array_is_masked_item_by_item() {
        let line = r#"{"fields":{"message":"headers","token":["tok-abc123","tok-def456"],"api_key":[7,true,{"inner":"tok-ghi789"},["tok-jkl012"]],"names":["plain"]}}"#;
        let masked = redact_json_lines(line).into_owned();
        assert!(!masked.contains("tok-"), "{masked}");
        assert!(
            !masked.contains('7') && !masked.contains("true"),
            "{masked}"
        );
        let value: Value = serde_json::from_str(&masked).unwrap();
        assert_eq!(value["fields"]["token"], serde_json::json!([MASK, MASK]));
        assert_eq!(
            value["fields"]["api_key"],
            serde_json::json!([MASK, MASK, {"inner": MASK}, [MASK]])
        );
        assert_eq!(value["fields"]["names"], serde_json::json!(["plain"]));
    }

    #[test]
    fn strings_go_through_the_text_rules_and_clean_lines_are_kept() {
        let line =
            r#"{"fields":{"message":"cannot reach https://bob:pw@h/x","error":"Bearer abc.def"}}"#;
        let masked = redact_json_lines(line).into_owned();
        let value: Value = serde_json::from_str(&masked).unwrap();
        assert_eq!(value["fields"]["message"], "cannot reach https://***@h/x");
        assert_eq!(value["fields"]["error"], "Bearer ***");
        let clean = r#"{"fields":{"message":"ready","id":3}}"#;
        assert!(matches!(redact_json_lines(clean), Cow::Borrowed(_)));
    }
}
