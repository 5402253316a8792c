//! Raw shapes in, the validated [`Config`] out (STYLE.md 3).
//!
//! Each raw struct is destructured exhaustively, so a key added to `raw` cannot slip past
//! without a decision here. This is where `${VAR}` expands, secrets are resolved from the
//! environment, units become `Duration`s, keys foreign to the transport are rejected and the
//! prefixes are checked for the naming scheme of DESIGN.md section 4.

use std::collections::BTreeMap;
use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{ConfigError, Source, server_table};
use super::expand::{ExpandError, expand};
use super::raw::{
    Pairs, RawAlwaysLoad, RawFile, RawHttp, RawProfile, RawServer, RawSettings, RawToolOverride, S,
};
use super::tool_filter;
use super::{
    AlwaysLoad, ClientEra, Config, DEFAULT_MAX_CONCURRENT_REQUESTS, DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT, ExposureMode, HttpSettings, LAUNCHER_STARTUP_TIMEOUT,
    MAX_CONCURRENT_REQUESTS_RANGE, MAX_IDLE_STOP_SEC, MAX_MESSAGE_BYTES_RANGE,
    MAX_NAME_LENGTH_RANGE, MAX_OUTPUT_TOKENS_RANGE, MAX_STARTUP_TIMEOUT_SEC, MAX_TOOL_TIMEOUT_SEC,
    MAX_WAIT_MS, OAuthClient, PREFIX_ROOM, Profile, SEARCH_LIMIT_RANGE, SESSION_IDLE_SEC_RANGE,
    ServerConfig, Settings, Start, TokenSource, ToolFilter, ToolOverride, Transport,
};
use crate::catalog::is_name_char;
use crate::search::Semantic;
use crate::suggest;

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

pub(super) fn build(
    file: RawFile,
    source: &Source<'_>,
    env: Env<'_>,
) -> Result<Config, ConfigError> {
    let RawFile {
        settings,
        servers,
        profiles,
    } = file;
    let settings = build_settings(settings, source, env)?;
    let mut built: Vec<(ServerConfig, Range<usize>)> = Vec::with_capacity(servers.len());
    for raw in servers {
        let span = raw.name.span();
        let server = Server {
            source,
            env,
            table: server_table(raw.name.get_ref()),
        }
        .build(raw, &settings)?;
        if let Some((first, first_span)) = built.iter().find(|(s, _)| s.prefix == server.prefix) {
            if server.prefix.is_empty() {
                return Err(source.error(
                    span,
                    format!(
                        "{} has `prefix = \"\"`, as has {} (line {}); only one server can keep \
                         its own tool and prompt names, or a tool both servers have would be \
                         two tools under one name, so set `prefix = \"...\"` in one of the two \
                         tables",
                        server_table(&server.name),
                        server_table(&first.name),
                        source.line(first_span.start),
                    ),
                ));
            }
            return Err(source.error(
                span,
                format!(
                    "{} uses the prefix `{}`, already used by {} (line {}); qualified tool names \
                     `{}__<tool>` must name one server, so set a different `prefix = \"...\"` in \
                     one of the two tables",
                    server_table(&server.name),
                    server.prefix,
                    server_table(&first.name),
                    source.line(first_span.start),
                    server.prefix,
                ),
            ));
        }
        built.push((server, span));
    }
    let servers: Vec<ServerConfig> = built.into_iter().map(|(s, _)| s).collect();
    let profiles = build_profiles(profiles, &servers, source)?;
    Ok(Config {
        path: source.path().to_owned(),
        settings,
        profiles,
        servers,
        tools: ToolFilter::default(),
    })
}

fn build_settings(
    raw: RawSettings,
    source: &Source<'_>,
    env: Env<'_>,
) -> Result<Settings, ConfigError> {
    let RawSettings {
        exposure,
        max_name_length,
        search_limit,
        core_wait_ms,
        relist_wait_ms,
        claude_always_load,
        inherit_env,
        max_message_bytes,
        max_output_tokens,
        client_era,
        search_semantic,
        search_model,
        session_idle_sec,
        http,
    } = raw;
    let defaults = Settings::default();
    let in_range = |value: Option<S<i64>>,
                    key: &str,
                    range: RangeInclusive<usize>,
                    why: &str,
                    example: u128|
     -> Result<Option<usize>, ConfigError> {
        let Some(value) = value else { return Ok(None) };
        match usize::try_from(*value.get_ref()) {
            Ok(n) if range.contains(&n) => Ok(Some(n)),
            _ => Err(source.error(
                value.span(),
                format!(
                    "[settings] `{key}` is {}, but must be between {} and {} ({why}); write e.g. \
                     `{key} = {}`",
                    value.get_ref(),
                    range.start(),
                    range.end(),
                    example,
                ),
            )),
        }
    };
    let exposure = match exposure {
        None => defaults.exposure,
        Some(value) => match value.get_ref().as_str() {
            "deferred" => ExposureMode::Deferred,
            "proxy" => ExposureMode::Proxy,
            "all" => ExposureMode::All,
            other => {
                const MODES: &[&str] = &["deferred", "proxy", "all"];
                return Err(source.error(
                    value.span(),
                    format!(
                        "[settings] `exposure = {other:?}` is not a mode; write one of \
                         \"deferred\", \"proxy\", \"all\"{}",
                        suggest::hint(other, MODES)
                    ),
                ));
            }
        },
    };
    let client_era = match client_era {
        None => defaults.client_era,
        Some(value) => match value.get_ref().as_str() {
            "any" => ClientEra::Any,
            "handshake" => ClientEra::Handshake,
            other => {
                const ERAS: &[&str] = &["any", "handshake"];
                return Err(source.error(
                    value.span(),
                    format!(
                        "[settings] `client_era = {other:?}` is not an era; write \"any\" (the \
                         client's choice) or \"handshake\" (refuse `server/discover`){}",
                        suggest::hint(other, ERAS)
                    ),
                ));
            }
        },
    };
    let semantic_span = search_semantic.as_ref().map(S::span);
    let semantic = match search_semantic {
        None => defaults.semantic,
        Some(value) => match Semantic::parse(value.get_ref()) {
            Some(semantic) => semantic,
            None => {
                let other = value.get_ref();
                return Err(source.error(
                    value.span(),
                    format!(
                        "[settings.search] `semantic = {other:?}` is not a tier; write one of \
                         \"static\", \"model\", \"off\"{}",
                        suggest::hint(other, &Semantic::NAMES)
                    ),
                ));
            }
        },
    };
    let model = build_model(semantic, semantic_span, search_model, source, env)?;
    let wait = |value: Option<S<i64>>, key: &str, default: Duration| {
        in_range(
            value,
            key,
            0..=MAX_WAIT_MS,
            "milliseconds; a longer hold looks like a hung call",
            default.as_millis(),
        )
        .map(|ms| ms.map_or(default, |ms| Duration::from_millis(ms as u64)))
    };
    let session_idle = in_range(
        session_idle_sec,
        "session_idle_sec",
        SESSION_IDLE_SEC_RANGE,
        "seconds an idle HTTP session lives",
        defaults.session_idle.as_secs() as u128,
    )?
    .map_or(defaults.session_idle, |s| Duration::from_secs(s as u64));
    let http = build_http(http, source)?;
    Ok(Settings {
        session_idle,
        http,
        exposure,
        max_name_length: in_range(
            max_name_length,
            "max_name_length",
            MAX_NAME_LENGTH_RANGE,
            "room for a prefix, `__`, a tool name and a hash suffix; no provider takes more",
            defaults.max_name_length as u128,
        )?
        .unwrap_or(defaults.max_name_length),
        search_limit: in_range(
            search_limit,
            "search_limit",
            SEARCH_LIMIT_RANGE,
            "the most `search_tools` returns",
            defaults.search_limit as u128,
        )?
        .unwrap_or(defaults.search_limit),
        core_wait: wait(core_wait_ms, "core_wait_ms", defaults.core_wait)?,
        relist_wait: wait(relist_wait_ms, "relist_wait_ms", defaults.relist_wait)?,
        claude_always_load: claude_always_load
            .map_or(defaults.claude_always_load, |b| *b.get_ref()),
        inherit_env: inherit_env.map_or(defaults.inherit_env, |b| *b.get_ref()),
        max_message_bytes: in_range(
            max_message_bytes,
            "max_message_bytes",
            MAX_MESSAGE_BYTES_RANGE,
            "bytes of one JSON-RPC message, from the client or a server",
            defaults.max_message_bytes as u128,
        )?
        .unwrap_or(defaults.max_message_bytes),
        max_output_tokens: in_range(
            max_output_tokens,
            "max_output_tokens",
            MAX_OUTPUT_TOKENS_RANGE,
            "tokens of one tool result; longer results are cut",
            20_000,
        )?,
        client_era,
        semantic,
        model,
    })
}

/// `[settings.search] model`: required by `semantic = "model"` and only by it; the
/// directory is checked here (files, config, tensor shapes from the weights' header), so a
/// bad directory is a config error at load, not a silent fallback at run time.
fn build_model(
    semantic: Semantic,
    semantic_span: Option<std::ops::Range<usize>>,
    model: Option<S<String>>,
    source: &Source<'_>,
    env: Env<'_>,
) -> Result<Option<PathBuf>, ConfigError> {
    match (semantic, model) {
        // No `model`: the directory `mcp-defer model fetch` fills.
        (Semantic::Model, None) => match default_model_dir(env) {
            Some(path) => {
                check_model(&path).map_err(|message| {
                    source.error(
                        semantic_span.clone().unwrap_or(0..0),
                        format!("[settings.search] `semantic = \"model\"`: {message}"),
                    )
                })?;
                Ok(Some(path))
            }
            None => Err(source.error(
                semantic_span.unwrap_or(0..0),
                "[settings.search] `semantic = \"model\"` needs `model = \"<dir>\"`, the \
                 directory of a sentence-transformers model (config.json, tokenizer.json, \
                 model.safetensors), e.g. `model = \".models/all-MiniLM-L6-v2\"`; neither \
                 XDG_DATA_HOME nor HOME is set for the default one"
                    .to_owned(),
            )),
        },
        (Semantic::Model, Some(dir)) => {
            let span = dir.span();
            let path = PathBuf::from(dir.into_inner());
            let path = match source.path().parent() {
                Some(parent) if path.is_relative() => parent.join(path),
                _ => path,
            };
            check_model(&path).map_err(|message| {
                source.error(span, format!("[settings.search] `model`: {message}"))
            })?;
            Ok(Some(path))
        }
        (_, Some(dir)) => Err(source.error(
            dir.span(),
            "[settings.search] `model` is only read with `semantic = \"model\"`; add that \
             line, or remove `model`"
                .to_owned(),
        )),
        (_, None) => Ok(None),
    }
}

/// The start deadline of a server without `startup_timeout_sec`: a launcher's first run
/// downloads and installs the package (a cold `npx` took 11.5-13.6 s), so launchers get
/// [`LAUNCHER_STARTUP_TIMEOUT`]; everything else Codex's default.
fn default_startup_timeout(transport: &Transport) -> Duration {
    match transport {
        Transport::Stdio { command, .. } if super::is_launcher(command) => LAUNCHER_STARTUP_TIMEOUT,
        _ => DEFAULT_STARTUP_TIMEOUT,
    }
}

/// Where `mcp-defer model fetch` puts the model (`None` without a home directory).
#[cfg(feature = "model")]
fn default_model_dir(env: Env<'_>) -> Option<PathBuf> {
    crate::search::transformer::default_dir_in(env)
}

#[cfg(not(feature = "model"))]
fn default_model_dir(_: Env<'_>) -> Option<PathBuf> {
    Some(PathBuf::from("all-MiniLM-L6-v2"))
}

#[cfg(feature = "model")]
fn check_model(path: &Path) -> Result<(), String> {
    crate::search::transformer::ModelDir::check(path)
        .map(drop)
        .map_err(|e| e.to_string())
}

#[cfg(not(feature = "model"))]
fn check_model(_: &Path) -> Result<(), String> {
    Err(
        "this mcp-defer was built without the `model` feature (the transformer tier); \
         rebuild with default features, or write `semantic = \"static\"`"
            .to_owned(),
    )
}

/// Builds one server; messages start with its table label.
struct Server<'a, 's> {
    source: &'a Source<'s>,
    env: Env<'a>,
    table: String,
}

impl Server<'_, '_> {
    fn error(
        &self,
        span: Range<usize>,
        key: Option<&str>,
        message: impl std::fmt::Display,
    ) -> ConfigError {
        let message = match key {
            Some(key) => format!("{} `{key}` {message}", self.table),
            None => format!("{} {message}", self.table),
        };
        self.source.error(span, message)
    }

    /// `${VAR}` expansion of a free-text value; errors name the key and the variable.
    fn expand(&self, value: S<String>, key: &str) -> Result<String, ConfigError> {
        expand(value.get_ref(), self.env).map_err(|e| {
            let message = match e {
                ExpandError::Unset(var) => format!(
                    "uses `${{{var}}}`, but the environment variable `{var}` is not set; set it \
                     before starting mcp-defer, or give a default: `${{{var}:-default}}`"
                ),
                ExpandError::Empty(var) => format!(
                    "uses `${{{var}}}`, but the environment variable `{var}` is set to the empty \
                     string; set it to a value, or write `${{{var}:-}}` if empty is meant"
                ),
                ExpandError::Unterminated => {
                    "has `${` without a closing `}`; close it, or write `$$` for a literal `$`"
                        .to_owned()
                }
                ExpandError::BadName(name) => format!(
                    "has `${{{name}}}`, which is not a variable name (letters, digits and `_`); \
                     fix it, or write `$$` for a literal `$`"
                ),
            };
            self.error(value.span(), Some(key), message)
        })
    }

    /// The value of the environment variable named by `key` (a secret: never in a message).
    fn resolve(&self, var: &S<String>, key: &str) -> Result<String, ConfigError> {
        let name = var.get_ref();
        if name.is_empty() {
            return Err(self.error(
                var.span(),
                Some(key),
                "is empty; write the name of an environment variable",
            ));
        }
        match (self.env)(name) {
            Some(value) if !value.is_empty() => Ok(value),
            _ => Err(self.error(
                var.span(),
                Some(key),
                format!(
                    "names the environment variable `{name}`, which is not set (or empty); set it \
                     before starting mcp-defer"
                ),
            )),
        }
    }

    fn build(&self, raw: RawServer, settings: &Settings) -> Result<ServerConfig, ConfigError> {
        let RawServer {
            name,
            command,
            args,
            env,
            env_vars,
            cwd,
            inherit_env,
            url,
            bearer_token,
            bearer_token_env_var,
            http_headers,
            env_http_headers,
            scopes,
            oauth_client_id,
            oauth_client_secret_env_var,
            oauth_callback_port,
            enabled,
            required,
            startup_timeout_sec,
            startup_timeout_ms,
            tool_timeout_sec,
            enabled_tools,
            disabled_tools,
            description,
            prefix,
            always_load,
            search_hints,
            max_output_tokens,
            start,
            idle_stop_sec,
            tools,
            ignored,
        } = raw;

        let name_span = name.span();
        let name = name.into_inner();
        self.check_name(&name, name_span.clone())?;
        let prefix = match prefix {
            // `prefix = ""`: the server's tools and prompts keep their own names (one server
            // only, checked in `build`; see `catalog::name` for the names it cannot have).
            Some(prefix) if prefix.get_ref().is_empty() => prefix.into_inner(),
            Some(prefix) => {
                self.check_prefix(prefix.get_ref(), settings.max_name_length)
                    .map_err(|why| {
                        self.error(
                            prefix.span(),
                            Some("prefix"),
                            format!(
                                "`{}` {why}; write e.g. `prefix = \"{}\"`",
                                prefix.get_ref(),
                                suggest_prefix(prefix.get_ref(), settings.max_name_length)
                            ),
                        )
                    })?;
                prefix.into_inner()
            }
            None => {
                self.check_prefix(&name, settings.max_name_length)
                    .map_err(|why| {
                        self.error(
                        name_span.clone(),
                        None,
                        format!(
                            "cannot serve as the prefix of qualified tool names: the name {why}; \
                             add `prefix = \"{}\"` to this table",
                            suggest_prefix(&name, settings.max_name_length)
                        ),
                    )
                    })?;
                name.clone()
            }
        };

        if let Some(token) = bearer_token {
            return Err(self.error(
                token.span(),
                Some("bearer_token"),
                "(an inline secret) is not supported, as in Codex; put the token in an \
                 environment variable and write `bearer_token_env_var = \"NAME\"`",
            ));
        }

        let transport = match (command, url) {
            (Some(_), Some(url)) => {
                return Err(self.error(
                    url.span(),
                    None,
                    "has both `command` (a stdio server) and `url` (an HTTP server); keep the \
                     one that matches how this server runs and remove the other",
                ));
            }
            (None, None) => {
                return Err(self.error(
                    name_span,
                    None,
                    "has neither `command` nor `url`; add `command = \"...\"` to start a stdio \
                     server, or `url = \"https://...\"` for an HTTP server",
                ));
            }
            (Some(command), None) => {
                let foreign = [
                    (
                        "bearer_token_env_var",
                        bearer_token_env_var.as_ref().map(S::span),
                    ),
                    ("http_headers", http_headers.as_ref().map(S::span)),
                    ("env_http_headers", env_http_headers.as_ref().map(S::span)),
                    ("scopes", scopes.as_ref().map(S::span)),
                    ("oauth_client_id", oauth_client_id.as_ref().map(S::span)),
                    (
                        "oauth_client_secret_env_var",
                        oauth_client_secret_env_var.as_ref().map(S::span),
                    ),
                    (
                        "oauth_callback_port",
                        oauth_callback_port.as_ref().map(S::span),
                    ),
                ];
                self.reject_foreign(
                    &foreign,
                    "HTTP servers (`url`)",
                    "a stdio server (`command`)",
                    "pass settings to the process with `env` or `args` instead",
                )?;
                let inherit_env = inherit_env.map_or(settings.inherit_env, |b| *b.get_ref());
                self.stdio(command, args, env, env_vars, cwd, inherit_env)?
            }
            (None, Some(url)) => {
                let foreign = [
                    ("args", args.as_ref().map(S::span)),
                    ("env", env.as_ref().map(S::span)),
                    ("env_vars", env_vars.as_ref().map(S::span)),
                    ("cwd", cwd.as_ref().map(S::span)),
                    ("inherit_env", inherit_env.as_ref().map(S::span)),
                ];
                self.reject_foreign(
                    &foreign,
                    "stdio servers (`command`)",
                    "an HTTP server (`url`)",
                    "use `http_headers` or `env_http_headers` for settings",
                )?;
                let mut oauth = self.oauth(scopes, oauth_client_id, oauth_client_secret_env_var)?;
                oauth.callback_port = oauth_callback_port
                    .map(|port| self.callback_port(port))
                    .transpose()?;
                self.http(
                    url,
                    bearer_token_env_var,
                    http_headers,
                    env_http_headers,
                    oauth,
                )?
            }
        };

        let startup_timeout = match (startup_timeout_sec, startup_timeout_ms) {
            (Some(sec), _) => self.seconds(sec, "startup_timeout_sec", MAX_STARTUP_TIMEOUT_SEC)?,
            (None, Some(ms)) => match u64::try_from(*ms.get_ref()) {
                Ok(n) if n > 0 && n as f64 <= MAX_STARTUP_TIMEOUT_SEC * 1000.0 => {
                    Duration::from_millis(n)
                }
                _ => {
                    return Err(self.error(
                        ms.span(),
                        Some("startup_timeout_ms"),
                        format!(
                            "is {}, but must be a positive number of milliseconds, between 1 and {}; better, write \
                             `startup_timeout_sec = 10`",
                            ms.get_ref(),
                            MAX_STARTUP_TIMEOUT_SEC * 1000.0
                        ),
                    ));
                }
            },
            (None, None) => default_startup_timeout(&transport),
        };
        let tool_timeout = match tool_timeout_sec {
            Some(sec) => self.seconds(sec, "tool_timeout_sec", MAX_TOOL_TIMEOUT_SEC)?,
            None => DEFAULT_TOOL_TIMEOUT,
        };
        let start = match start {
            None => Start::Eager,
            Some(value) => match value.get_ref().as_str() {
                "eager" => Start::Eager,
                "lazy" => Start::Lazy,
                other => {
                    const STARTS: &[&str] = &["eager", "lazy"];
                    return Err(self.error(
                        value.span(),
                        Some("start"),
                        format!(
                            "is {other:?}, which is not a way to start; write `start = \"lazy\"` \
                             (at the first call) or `start = \"eager\"` (with mcp-defer, the \
                             default){}",
                            suggest::hint(other, STARTS)
                        ),
                    ));
                }
            },
        };
        let idle_stop = idle_stop_sec
            .map(|sec| self.seconds(sec, "idle_stop_sec", MAX_IDLE_STOP_SEC))
            .transpose()?;

        let names = |list: Option<S<Vec<S<String>>>>| {
            list.map(|l| {
                l.into_inner()
                    .into_iter()
                    .map(S::into_inner)
                    .collect::<Vec<_>>()
            })
        };
        let enabled_list = enabled_tools.as_ref().map(|l| {
            l.get_ref()
                .iter()
                .map(|t| t.get_ref().clone())
                .collect::<Vec<_>>()
        });
        let disabled_list = names(disabled_tools).unwrap_or_default();
        let always_load = match always_load.map(S::into_inner) {
            None | Some(RawAlwaysLoad::Bool(false)) => AlwaysLoad::None,
            Some(RawAlwaysLoad::Bool(true)) => AlwaysLoad::All,
            Some(RawAlwaysLoad::Tools(tools)) if tools.is_empty() => AlwaysLoad::None,
            Some(RawAlwaysLoad::Tools(tools)) => {
                // A core tool the filters remove would silently never show up; the two keys
                // contradict each other, and the fix is one edit, so this is an error.
                for tool in &tools {
                    let tool_name = tool.get_ref();
                    if disabled_list.contains(tool_name) {
                        return Err(self.error(
                            tool.span(),
                            Some("always_load"),
                            format!("pins `{tool_name}`, which `disabled_tools` removes; drop it from one of the two lists"),
                        ));
                    }
                    if enabled_list
                        .as_ref()
                        .is_some_and(|e| !e.contains(tool_name))
                    {
                        return Err(self.error(
                            tool.span(),
                            Some("always_load"),
                            format!("pins `{tool_name}`, which is not in `enabled_tools`; add it there or drop it here"),
                        ));
                    }
                }
                AlwaysLoad::Tools(tools.into_iter().map(S::into_inner).collect())
            }
        };

        let description = description
            .map(|d| {
                // One line in the instructions: collapse newlines and runs of spaces.
                self.expand(d, "description")
                    .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
            })
            .transpose()?
            .filter(|d| !d.is_empty());
        let search_hints = search_hints
            .map(|hints| {
                hints
                    .into_inner()
                    .into_iter()
                    .map(|h| self.expand(h, "search_hints"))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();

        let tool_overrides = tools
            .into_iter()
            .map(|tool| self.tool_override(tool, &disabled_list, enabled_list.as_deref()))
            .filter_map(Result::transpose)
            .collect::<Result<Vec<_>, _>>()?;

        for key in &ignored {
            tracing::debug!(server = %name, key = *key.get_ref(), "Codex-only key ignored");
        }

        Ok(ServerConfig {
            name,
            prefix,
            description,
            search_hints,
            transport,
            enabled: enabled.is_none_or(|b| *b.get_ref()),
            required: required.is_some_and(|b| *b.get_ref()),
            startup_timeout,
            tool_timeout,
            enabled_tools: enabled_list,
            disabled_tools: disabled_list,
            always_load,
            tool_overrides,
            max_output_tokens: max_output_tokens
                .map(|n| self.output_tokens(n))
                .transpose()?,
            start,
            idle_stop,
        })
    }

    /// One `[mcp_servers.<name>.tools.<tool>]`: text expanded and trimmed (it is what
    /// the model reads as the tool's description), never empty, never for a filtered tool.
    fn tool_override(
        &self,
        raw: RawToolOverride,
        disabled: &[String],
        enabled: Option<&[String]>,
    ) -> Result<Option<ToolOverride>, ConfigError> {
        let RawToolOverride {
            name,
            description,
            title,
        } = raw;
        let tool = name.get_ref();
        let label = format!("tools.{}", super::error::bare_or_quoted(tool));
        let text = |value: Option<S<String>>, key: &str| -> Result<Option<String>, ConfigError> {
            let Some(value) = value else { return Ok(None) };
            let span = value.span();
            let key = format!("{label}.{key}");
            let expanded = self.expand(value, &key)?;
            if expanded.trim().is_empty() {
                return Err(self.error(
                    span,
                    Some(&key),
                    "is empty; write the text the model should read, or remove the key to keep \
                     the server's own",
                ));
            }
            Ok(Some(expanded.trim().to_owned()))
        };
        let description = text(description, "description")?;
        let title = text(title, "title")?;
        // A table with only Codex's `approval_mode` overrides nothing; it loads, as Codex's.
        if description.is_none() && title.is_none() {
            return Ok(None);
        }
        let filtered = if disabled.contains(tool) {
            Some("`disabled_tools` removes it")
        } else if enabled.is_some_and(|e| !e.contains(tool)) {
            Some("it is not in `enabled_tools`")
        } else {
            None
        };
        if let Some(why) = filtered {
            return Err(self.error(
                name.span(),
                Some(&label),
                format!("overrides a tool that is never shown: {why}; drop one of the two"),
            ));
        }
        Ok(Some(ToolOverride {
            tool: name.into_inner(),
            description,
            title,
        }))
    }

    fn output_tokens(&self, value: S<i64>) -> Result<usize, ConfigError> {
        match usize::try_from(*value.get_ref()) {
            Ok(n) if MAX_OUTPUT_TOKENS_RANGE.contains(&n) => Ok(n),
            _ => Err(self.error(
                value.span(),
                Some("max_output_tokens"),
                format!(
                    "is {}, but must be between {} and {} (tokens of one tool result; longer \
                     results are cut); write e.g. `max_output_tokens = 20000`",
                    value.get_ref(),
                    MAX_OUTPUT_TOKENS_RANGE.start(),
                    MAX_OUTPUT_TOKENS_RANGE.end()
                ),
            )),
        }
    }

    fn check_name(&self, name: &str, span: Range<usize>) -> Result<(), ConfigError> {
        if name.is_empty() {
            return Err(self.error(
                span,
                None,
                "has an empty server name; name the table, e.g. `[mcp_servers.docs]`",
            ));
        }
        if !is_name(name) {
            return Err(self.error(
                span,
                None,
                format!(
                    "has a server name with characters other than letters, digits, `_` and `-`; \
                     rename the table, e.g. `[mcp_servers.{}]`",
                    sanitize(name)
                ),
            ));
        }
        Ok(())
    }

    /// Why `prefix` cannot start qualified names, if it cannot. Qualified names are
    /// `<prefix>__<tool>` and the catalog splits them at the first `__`, so a prefix holding
    /// `__` or ending in `_` would split in the wrong place; one starting with `_` reads as a
    /// private name to some clients. The length leaves room under `max_name_length` for `__`,
    /// one tool character and the catalog's 9-character hash suffix.
    fn check_prefix(&self, prefix: &str, max_name_length: usize) -> Result<(), String> {
        let max = max_name_length.saturating_sub(PREFIX_ROOM);
        if prefix.is_empty() {
            Err("is empty".to_owned())
        } else if !is_name(prefix) {
            Err("has characters other than letters, digits, `_` and `-`".to_owned())
        } else if prefix.contains("__") {
            Err("contains `__`, which separates the prefix from the tool name".to_owned())
        } else if prefix.starts_with('_') || prefix.ends_with('_') {
            Err("starts or ends with `_`, which would blur the `__` separator".to_owned())
        } else if prefix.len() > max {
            Err(format!(
                "is {} characters long, but at most {max} fit under `max_name_length = \
                 {max_name_length}` with room for a tool name",
                prefix.len()
            ))
        } else {
            Ok(())
        }
    }

    fn reject_foreign(
        &self,
        present: &[(&str, Option<Range<usize>>)],
        only_for: &str,
        this_is: &str,
        instead: &str,
    ) -> Result<(), ConfigError> {
        let first = present
            .iter()
            .filter_map(|(key, span)| span.clone().map(|span| (*key, span)))
            .min_by_key(|(_, span)| span.start);
        match first {
            None => Ok(()),
            Some((key, span)) => Err(self.error(
                span,
                Some(key),
                format!("applies only to {only_for}, and this is {this_is}; remove it ({instead})"),
            )),
        }
    }

    /// A timeout in seconds, in `(0, max]`: a bound keeps every deadline computed from it
    /// far from `Instant` overflow.
    fn seconds(&self, value: S<f64>, key: &str, max: f64) -> Result<Duration, ConfigError> {
        let secs = *value.get_ref();
        if secs > 0.0
            && secs <= max
            && let Ok(duration) = Duration::try_from_secs_f64(secs)
        {
            return Ok(duration);
        }
        Err(self.error(
            value.span(),
            Some(key),
            format!(
                "is {secs}, but must be a positive, finite number of seconds, at most {max} \
                 (allowed: greater than 0 up to {max}); write e.g. `{key} = 30`"
            ),
        ))
    }

    /// Refuses what `execve` cannot carry: NUL anywhere, `=` or an empty name in a variable
    /// name. Caught here, the error names the key and line instead of failing every spawn.
    fn check_exec_text(
        &self,
        span: Range<usize>,
        key: &str,
        text: &str,
        is_var_name: bool,
    ) -> Result<(), ConfigError> {
        if text.contains('\0') {
            return Err(self.error(
                span,
                Some(key),
                "contains a NUL byte, which a process cannot receive; remove it",
            ));
        }
        if is_var_name && (text.is_empty() || text.contains('=')) {
            return Err(self.error(
                span,
                Some(key),
                "is not a usable environment variable name (empty, or contains `=`); write a \
                 name such as `API_KEY`",
            ));
        }
        Ok(())
    }

    fn stdio(
        &self,
        command: S<String>,
        args: Option<S<Vec<S<String>>>>,
        env: Option<S<Pairs>>,
        env_vars: Option<S<Vec<S<String>>>>,
        cwd: Option<S<String>>,
        inherit_env: bool,
    ) -> Result<Transport, ConfigError> {
        let command_span = command.span();
        let command = self.expand(command, "command")?;
        self.check_exec_text(command_span.clone(), "command", &command, false)?;
        if command.trim().is_empty() {
            return Err(self.error(
                command_span,
                Some("command"),
                "is empty; write the program to run, e.g. `command = \"npx\"`",
            ));
        }
        let args = args
            .map(S::into_inner)
            .unwrap_or_default()
            .into_iter()
            .map(|a| {
                let span = a.span();
                let arg = self.expand(a, "args")?;
                self.check_exec_text(span, "args", &arg, false)?;
                Ok(arg)
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        let mut env_map = BTreeMap::new();
        for (name, value) in env.map(S::into_inner).unwrap_or_default() {
            let key = format!("env.{}", name.get_ref());
            self.check_exec_text(name.span(), &key, name.get_ref(), true)?;
            let span = value.span();
            let value = self.expand(value, &key)?;
            self.check_exec_text(span, &key, &value, false)?;
            crate::redact::register_secret(&value);
            env_map.insert(name.into_inner(), value);
        }
        let env_vars = env_vars
            .map(S::into_inner)
            .unwrap_or_default()
            .into_iter()
            .map(|name| {
                self.check_exec_text(name.span(), "env_vars", name.get_ref(), true)?;
                Ok(name.into_inner())
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        let cwd = cwd
            .map(|c| {
                self.expand(c, "cwd").map(|c| {
                    let c = PathBuf::from(c);
                    if c.is_relative() {
                        config_dir(self.source.path()).join(c)
                    } else {
                        c
                    }
                })
            })
            .transpose()?;
        Ok(Transport::Stdio {
            command,
            args,
            env: env_map,
            env_vars,
            inherit_env,
            cwd,
        })
    }

    fn http(
        &self,
        url: S<String>,
        bearer_token_env_var: Option<S<String>>,
        http_headers: Option<S<Pairs>>,
        env_http_headers: Option<S<Pairs>>,
        oauth: OAuthClient,
    ) -> Result<Transport, ConfigError> {
        let url_span = url.span();
        let url = self.expand(url, "url")?;
        let scheme_ok = ["http://", "https://"].iter().any(|s| {
            url.get(..s.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(s))
        });
        if !scheme_ok {
            return Err(self.error(url_span, Some("url"), "must start with `http://` or `https://`; write e.g. `url = \"https://example.com/mcp\"`"));
        }
        let bearer_token = bearer_token_env_var
            .map(|var| self.resolve(&var, "bearer_token_env_var"))
            .transpose()?;
        if let Some(token) = &bearer_token {
            crate::redact::register_secret(token);
        }
        crate::redact::register_url_credentials(&url);
        let mut headers = BTreeMap::new();
        for (name, value) in http_headers.map(S::into_inner).unwrap_or_default() {
            let key = format!("http_headers.{}", name.get_ref());
            headers.insert(name.into_inner(), self.expand(value, &key)?);
        }
        // After `http_headers`, so the environment wins on a shared name (as in Codex).
        for (name, var) in env_http_headers.map(S::into_inner).unwrap_or_default() {
            let key = format!("env_http_headers.{}", name.get_ref());
            headers.insert(name.into_inner(), self.resolve(&var, &key)?);
        }
        for value in headers.values() {
            crate::redact::register_secret(value);
        }
        Ok(Transport::Http {
            url,
            bearer_token,
            headers,
            oauth,
        })
    }

    /// The OAuth client settings `mcp-defer login` uses; the secret is read from its
    /// variable now, as `bearer_token_env_var` is.
    /// `oauth_callback_port`: a port a loopback listener can bind (1-65535).
    fn callback_port(&self, port: S<i64>) -> Result<u16, ConfigError> {
        match u16::try_from(*port.get_ref()) {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(self.error(
                port.span(),
                Some("oauth_callback_port"),
                format!(
                    "is {}, but must be a port between 1 and 65535: the one in the redirect \
                     URI the client was registered with (`http://localhost:<port>/callback`)",
                    port.get_ref()
                ),
            )),
        }
    }

    fn oauth(
        &self,
        scopes: Option<S<Vec<S<String>>>>,
        client_id: Option<S<String>>,
        client_secret_env_var: Option<S<String>>,
    ) -> Result<OAuthClient, ConfigError> {
        if let (Some(var), None) = (&client_secret_env_var, &client_id) {
            return Err(self.error(
                var.span(),
                Some("oauth_client_secret_env_var"),
                "needs `oauth_client_id`: a secret belongs to a client registered beforehand; \
                 add `oauth_client_id = \"...\"`",
            ));
        }
        let client_secret = client_secret_env_var
            .map(|var| self.resolve(&var, "oauth_client_secret_env_var"))
            .transpose()?;
        if let Some(secret) = &client_secret {
            crate::redact::register_secret(secret);
        }
        Ok(OAuthClient {
            client_id: client_id
                .map(|id| self.expand(id, "oauth_client_id"))
                .transpose()?,
            client_secret,
            scopes: scopes
                .map(|list| list.into_inner().into_iter().map(S::into_inner).collect())
                .unwrap_or_default(),
            callback_port: None,
        })
    }
}

fn is_name(s: &str) -> bool {
    s.chars().all(is_name_char)
}

/// `s` with every character outside the name set replaced, as qualified names are.
fn sanitize(s: &str) -> String {
    let out = crate::catalog::sanitize(s);
    if out.is_empty() {
        "server".to_owned()
    } else {
        out
    }
}

/// A prefix close to `name` that passes [`Server::check_prefix`], for the fix in messages.
fn suggest_prefix(name: &str, max_name_length: usize) -> String {
    let sanitized = sanitize(name);
    let mut collapsed = String::with_capacity(sanitized.len());
    for c in sanitized.chars() {
        if !(c == '_' && collapsed.ends_with('_')) {
            collapsed.push(c);
        }
    }
    let max = max_name_length.saturating_sub(PREFIX_ROOM).max(1);
    let cut: String = collapsed.trim_matches('_').chars().take(max).collect();
    let cut = cut.trim_end_matches('_');
    if cut.is_empty() {
        "srv".to_owned()
    } else {
        cut.to_owned()
    }
}

/// Relative `cwd` values are relative to the file they are written in, not to wherever
/// mcp-defer happens to be started, so one file works from any directory.
fn config_dir(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new(""))
}

/// `[settings.http]`: one token source at most; lists as written.
fn build_http(raw: RawHttp, source: &Source<'_>) -> Result<HttpSettings, ConfigError> {
    let RawHttp {
        tokens_env,
        token_file,
        allowed_origins,
        allowed_hosts,
        max_concurrent_requests,
        header_timeout_sec,
        body_timeout_sec,
        max_connections,
        max_sessions_per_token,
    } = raw;
    let defaults = HttpSettings::default();
    let secs = |d: Duration| usize::try_from(d.as_secs()).unwrap_or(usize::MAX);
    let header_timeout = bounded(
        source,
        header_timeout_sec,
        "header_timeout_sec",
        "seconds to send a request's headers",
        &crate::config::HTTP_TIMEOUT_SEC_RANGE,
        secs(defaults.header_timeout),
    )?;
    let body_timeout = bounded(
        source,
        body_timeout_sec,
        "body_timeout_sec",
        "seconds to send a request's body",
        &crate::config::HTTP_TIMEOUT_SEC_RANGE,
        secs(defaults.body_timeout),
    )?;
    let max_connections = bounded(
        source,
        max_connections,
        "max_connections",
        "connections served at once",
        &crate::config::MAX_CONNECTIONS_RANGE,
        defaults.max_connections,
    )?;
    let max_sessions_per_token = bounded(
        source,
        max_sessions_per_token,
        "max_sessions_per_token",
        "sessions one token may hold open",
        &crate::config::MAX_SESSIONS_PER_TOKEN_RANGE,
        defaults.max_sessions_per_token,
    )?;
    let tokens = match (tokens_env, token_file) {
        (Some(_), Some(file)) => {
            return Err(source.error(
                file.span(),
                "[settings.http] sets both `tokens_env` and `token_file`; keep one".to_owned(),
            ));
        }
        (Some(env), None) => Some(TokenSource::Env(env.into_inner())),
        (None, Some(file)) => {
            let path = PathBuf::from(file.into_inner());
            // Relative to the config file, as a user reading the file would expect.
            let path = match source.path().parent() {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path,
            };
            Some(TokenSource::File(path))
        }
        (None, None) => None,
    };
    let list = |value: Option<S<Vec<S<String>>>>| -> Vec<String> {
        value
            .map(|v| v.into_inner().into_iter().map(S::into_inner).collect())
            .unwrap_or_default()
    };
    let max_concurrent_requests = match max_concurrent_requests {
        None => defaults.max_concurrent_requests,
        Some(value) => match usize::try_from(*value.get_ref()) {
            Ok(n) if MAX_CONCURRENT_REQUESTS_RANGE.contains(&n) => n,
            _ => {
                return Err(source.error(
                    value.span(),
                    format!(
                        "[settings.http] `max_concurrent_requests` is {}, but must be between \
                         {} and {} (requests one session may have in flight); write e.g. \
                         `max_concurrent_requests = {}`",
                        value.get_ref(),
                        MAX_CONCURRENT_REQUESTS_RANGE.start(),
                        MAX_CONCURRENT_REQUESTS_RANGE.end(),
                        DEFAULT_MAX_CONCURRENT_REQUESTS
                    ),
                ));
            }
        },
    };
    Ok(HttpSettings {
        tokens,
        allowed_origins: list(allowed_origins),
        allowed_hosts: list(allowed_hosts),
        max_concurrent_requests,
        header_timeout: Duration::from_secs(header_timeout as u64),
        body_timeout: Duration::from_secs(body_timeout as u64),
        max_connections,
        max_sessions_per_token,
    })
}

/// A `[settings.http]` integer `key` within `range` (what it counts: `what`), or `default`.
fn bounded(
    source: &Source<'_>,
    value: Option<S<i64>>,
    key: &str,
    what: &str,
    range: &std::ops::RangeInclusive<usize>,
    default: usize,
) -> Result<usize, ConfigError> {
    let Some(value) = value else {
        return Ok(default);
    };
    match usize::try_from(*value.get_ref()) {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(source.error(
            value.span(),
            format!(
                "[settings.http] `{key}` is {}, but must be between {} and {} ({what}); write \
                 e.g. `{key} = {default}`",
                value.get_ref(),
                range.start(),
                range.end(),
            ),
        )),
    }
}

/// `[profiles.<name>]`: a name fit for a URL path, and servers that exist.
fn build_profiles(
    raw: Vec<RawProfile>,
    servers: &[ServerConfig],
    source: &Source<'_>,
) -> Result<Vec<Profile>, ConfigError> {
    let known: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    let all_servers = servers;
    let mut profiles = Vec::with_capacity(raw.len());
    for RawProfile {
        name,
        servers,
        allow_tools,
        deny_tools,
    } in raw
    {
        if name.get_ref().is_empty() || !name.get_ref().chars().all(is_name_char) {
            return Err(source.error(
                name.span(),
                format!(
                    "[profiles.{}]: a profile name is served at /mcp/<name>, so it may hold only \
                     letters, digits, `_` and `-`",
                    name.get_ref()
                ),
            ));
        }
        let Some(servers) = servers else {
            return Err(source.error(
                name.span(),
                format!(
                    "[profiles.{}] names no servers; write `servers = [\"...\"]`",
                    name.get_ref()
                ),
            ));
        };
        let mut names = Vec::new();
        for server in servers.into_inner() {
            if !known.contains(&server.get_ref().as_str()) {
                return Err(source.error(
                    server.span(),
                    format!(
                        "[profiles.{}] names the server `{}`, which has no \
                         `[mcp_servers.{}]` table{}",
                        name.get_ref(),
                        server.get_ref(),
                        server.get_ref(),
                        suggest::hint(server.get_ref(), &known)
                    ),
                ));
            }
            names.push(server.into_inner());
        }
        let prefixes: Vec<&str> = (all_servers.iter())
            .filter(|s| names.contains(&s.name))
            .map(|s| s.prefix.as_str())
            .collect();
        let patterns = |key: &str, list: Option<S<Vec<S<String>>>>| {
            let Some(list) = list else {
                return Ok(None);
            };
            let mut checked = Vec::new();
            for pattern in list.into_inner() {
                if let Err(why) = tool_filter::check_pattern(pattern.get_ref(), &prefixes) {
                    return Err(source.error(
                        pattern.span(),
                        format!(
                            "[profiles.{}] {key}: `{}` {why}",
                            name.get_ref(),
                            pattern.get_ref()
                        ),
                    ));
                }
                checked.push(pattern.into_inner());
            }
            Ok(Some(checked))
        };
        let allow = patterns("allow_tools", allow_tools)?;
        let deny = patterns("deny_tools", deny_tools)?.unwrap_or_default();
        profiles.push(Profile {
            name: name.into_inner(),
            servers: names,
            tools: ToolFilter::new(allow, deny),
        });
    }
    Ok(profiles)
}
