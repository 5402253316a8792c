//! Why one server entry of a client's file is not imported. `import` goes on without it
//! and prints "skipped NAME (PATH): <this>" on stderr, so each message is the end of that
//! sentence and names the key at fault, never a value (env values and headers may be
//! secrets).

/// Why a client's entry cannot become a server table.
#[derive(Debug, thiserror::Error)]
pub(super) enum Skip {
    /// The entry is not a table of keys: "an object" (JSON) or "a mapping" (YAML).
    #[error("not {0}")]
    NotA(&'static str),
    /// Its command runs mcp-defer: importing it would proxy the proxy.
    #[error("it is mcp-defer itself")]
    IsSelf,
    /// What the transport needs is absent, as the client's own phrase ("a stdio server
    /// without a `command`", "no `type`").
    #[error("{0}")]
    Missing(&'static str),
    /// An HTTP entry without the key its URL should be under.
    #[error("an HTTP server without `{0}`")]
    HttpWithout(&'static str),
    /// A transport mcp-defer does not speak, or a server the client runs itself; the text
    /// says what to do instead.
    #[error("{0}")]
    Unsupported(&'static str),
    /// A `type` value the client's format does not have; `known` lists those it has.
    #[error("unknown {what} {found:?}{known}")]
    UnknownType {
        what: &'static str,
        found: String,
        known: &'static str,
    },
    #[error("`{0}` is empty")]
    Empty(&'static str),
    #[error("`{0}` is not a string")]
    NotString(String),
    #[error("`{0}` is not an array")]
    NotArray(String),
    #[error("`{0}` is not an array of strings")]
    NotStrings(&'static str),
    #[error("`{0}` has an item that is not a string")]
    ItemNotString(String),
    #[error("`{0}` is not an object")]
    NotObject(String),
    /// `{key}.{name}`: one value of an env or headers object.
    #[error("`{key}.{name}` is not a string")]
    ValueNotString { key: String, name: String },
}
