//! JSON with comments and trailing commas, as VS Code (`mcp.json`), Gemini CLI
//! (`settings.json`) and OpenCode (`opencode.jsonc`) accept it, made plain JSON.
//!
//! Comments and trailing commas become spaces (newlines kept), so serde_json's line and
//! column in an error still point into the user's file.

/// `text` with `//` and `/* */` comments and commas before `}` or `]` blanked out.
pub(super) fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    // Where the last comma outside strings is, while only blanks and comments follow it.
    let mut comma: Option<usize> = None;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                comma = None;
            }
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                for byte in &mut out[i..end] {
                    if *byte != b'\n' {
                        *byte = b' ';
                    }
                }
                i = end;
                continue;
            }
            (b',', _) => comma = Some(i),
            (b'}' | b']', _) => {
                if let Some(at) = comma.take() {
                    out[at] = b' ';
                }
            }
            (b' ' | b'\t' | b'\r' | b'\n', _) => {}
            _ => comma = None,
        }
        i += 1;
    }
    // Only ASCII bytes were replaced, each by an ASCII space, so the text is still UTF-8;
    // the lossy conversion never has to replace anything.
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_go_strings_stay() {
        let text = "{\n  // a comment\n  \"a\": \"http://x//y\", /* b */\n  \"c\": [1, 2,],\n}\n";
        let json: serde_json::Value = serde_json::from_str(&strip(text)).unwrap_or_default();
        assert_eq!(json, serde_json::json!({"a": "http://x//y", "c": [1, 2]}));
        assert_eq!(strip(text).lines().count(), text.lines().count());
        assert_eq!(strip(r#"{"a": "\"//,}"}"#), r#"{"a": "\"//,}"}"#);
    }
}
