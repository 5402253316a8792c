//! The shape every format converts into before it becomes a servers.toml table: the keys
//! mcp-defer reads, and what the entry left behind.

use super::skip::Skip;
use serde_json::Value as Json;

use super::Client;

/// One server as mcp-defer will run it. Strings are already in our `${VAR}` syntax.
#[derive(Debug, Default, Clone, PartialEq)]
pub(in crate::cli) struct Server {
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Variables to pass from mcp-defer's environment (Goose's `env_keys`).
    pub env_vars: Option<Vec<String>>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    pub headers: Vec<(String, String)>,
    pub bearer_token_env_var: Option<String>,
    pub enabled: Option<bool>,
    pub description: Option<String>,
    pub enabled_tools: Option<Vec<String>>,
    pub disabled_tools: Option<Vec<String>>,
    pub startup_timeout_sec: Option<f64>,
    pub tool_timeout_sec: Option<f64>,
    /// OAuth scopes from the source (Codex's `scopes`), carried for when mcp-defer logs in.
    pub scopes: Option<Vec<String>>,
    /// A pre-registered OAuth client (Claude's `oauth.clientId`, Cursor's
    /// `auth.CLIENT_ID`, Gemini's `oauth.clientId`, Codex's `oauth.client_id`): servers
    /// without dynamic registration cannot be logged in to without it.
    pub oauth_client_id: Option<String>,
    /// The variable that holds that client's secret, when the source named one.
    pub oauth_client_secret_env_var: Option<String>,
    /// The fixed port of the redirect URI that client was registered with.
    pub oauth_callback_port: Option<u16>,
    /// The source configures OAuth sign-in for this server.
    pub oauth: bool,
    /// Keys of the entry mcp-defer does not read.
    pub dropped: Vec<String>,
    /// Other things the user must know (a variable to set, a file not read).
    pub notes: Vec<String>,
}

impl Server {
    /// Why the user should know this server may need `mcp-defer login` (the other client's
    /// login is its own, in its own store): its source configures OAuth, or it is a remote
    /// HTTP server with no credentials at all, which is how Claude Code, Codex, Cursor and
    /// VS Code keep servers they sign in to.
    pub(crate) fn oauth_note(&self, client: Client, name: &str) -> Option<String> {
        let url = self.url.as_deref()?;
        let credentials = self.bearer_token_env_var.is_some()
            || self.headers.iter().any(|(name, _)| {
                let name = name.to_ascii_lowercase();
                name == "authorization" || name.contains("key") || name.contains("token")
            });
        let local = ["http://localhost", "http://127.", "http://[::1]"]
            .iter()
            .any(|p| url.starts_with(p));
        if self.oauth {
            let kept = if self.oauth_client_id.is_some() {
                ", with its registered OAuth client"
            } else {
                ""
            };
            Some(format!(
                "carried over, but {} signs in to it with OAuth and keeps that login to \
                 itself; run `mcp-defer login {name}` once{kept} (until then `check` shows it \
                 as needing a login)",
                client.label()
            ))
        } else if !credentials && !local {
            Some(format!(
                "a remote server with no credentials in the file; if it needs an OAuth \
                 login, `check` says so: run `mcp-defer login {name}` once"
            ))
        } else {
            None
        }
    }

    /// The servers.toml table, keys in the order a person would write them.
    pub(crate) fn into_table(self) -> toml::Table {
        let mut t = toml::Table::new();
        let string = |s: String| toml::Value::String(s);
        let strings =
            |v: Vec<String>| toml::Value::Array(v.into_iter().map(toml::Value::String).collect());
        let pairs = |v: Vec<(String, String)>| {
            toml::Value::Table(
                v.into_iter()
                    .map(|(k, v)| (k, toml::Value::String(v)))
                    .collect(),
            )
        };
        if let Some(command) = self.command {
            t.insert("command".into(), string(command));
        }
        if !self.args.is_empty() {
            t.insert("args".into(), strings(self.args));
        }
        if !self.env.is_empty() {
            t.insert("env".into(), pairs(self.env));
        }
        if let Some(vars) = self.env_vars {
            t.insert("env_vars".into(), strings(vars));
        }
        if let Some(cwd) = self.cwd {
            t.insert("cwd".into(), string(cwd));
        }
        if let Some(url) = self.url {
            t.insert("url".into(), string(url));
        }
        if let Some(var) = self.bearer_token_env_var {
            t.insert("bearer_token_env_var".into(), string(var));
        }
        if !self.headers.is_empty() {
            t.insert("http_headers".into(), pairs(self.headers));
        }
        if let Some(enabled) = self.enabled {
            t.insert("enabled".into(), toml::Value::Boolean(enabled));
        }
        if let Some(description) = self.description {
            t.insert("description".into(), string(description));
        }
        if let Some(secs) = self.startup_timeout_sec {
            t.insert("startup_timeout_sec".into(), seconds(secs));
        }
        if let Some(secs) = self.tool_timeout_sec {
            t.insert("tool_timeout_sec".into(), seconds(secs));
        }
        if let Some(tools) = self.enabled_tools {
            t.insert("enabled_tools".into(), strings(tools));
        }
        if let Some(tools) = self.disabled_tools {
            t.insert("disabled_tools".into(), strings(tools));
        }
        if let Some(scopes) = self.scopes {
            t.insert("scopes".into(), strings(scopes));
        }
        if let Some(id) = self.oauth_client_id {
            t.insert("oauth_client_id".into(), string(id));
        }
        if let Some(var) = self.oauth_client_secret_env_var {
            t.insert("oauth_client_secret_env_var".into(), string(var));
        }
        if let Some(port) = self.oauth_callback_port {
            t.insert(
                "oauth_callback_port".into(),
                toml::Value::Integer(i64::from(port)),
            );
        }
        t
    }
}

/// Whole seconds as an integer (`20`, not `20.0`), as a person writes them.
fn seconds(secs: f64) -> toml::Value {
    if secs.fract() == 0.0 && secs > 0.0 && secs < i64::MAX as f64 {
        toml::Value::Integer(secs as i64)
    } else {
        toml::Value::Float(secs)
    }
}

/// Milliseconds from a JSON number, as seconds; `None` for anything else or a non-positive
/// value (the client's default applies, and so does ours).
pub(super) fn millis_as_secs(value: &Json) -> Option<f64> {
    value
        .as_f64()
        .filter(|ms| *ms > 0.0 && ms.is_finite())
        .map(|ms| ms / 1000.0)
}

/// A JSON array of strings, or why not.
pub(super) fn strings(key: &str, value: &Json) -> Result<Vec<String>, Skip> {
    let items = value
        .as_array()
        .ok_or_else(|| Skip::NotArray(key.to_owned()))?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| Skip::ItemNotString(key.to_owned()))
        })
        .collect()
}

/// A JSON object of strings, in file order, each value through the client's `vars`
/// (every client's env and headers take its variables), or why not.
pub(super) fn pairs(
    key: &str,
    value: &Json,
    vars: &mut dyn FnMut(&str) -> String,
) -> Result<Vec<(String, String)>, Skip> {
    let map = value
        .as_object()
        .ok_or_else(|| Skip::NotObject(key.to_owned()))?;
    map.iter()
        .map(|(name, value)| match value {
            Json::String(s) => Ok((name.clone(), vars(s))),
            // Numbers and booleans are written unquoted by hand often enough.
            Json::Number(n) => Ok((name.clone(), n.to_string())),
            Json::Bool(b) => Ok((name.clone(), b.to_string())),
            _ => Err(Skip::ValueNotString {
                key: key.to_owned(),
                name: name.clone(),
            }),
        })
        .collect()
}

/// A JSON string, or why not.
pub(super) fn string(key: &str, value: &Json) -> Result<String, Skip> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Skip::NotString(key.to_owned()))
}
