//! The file as serde sees it. PLACEHOLDER: minimal parse, replaced by the config work.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    settings: RawSettings,
    #[serde(default)]
    mcp_servers: indexmap::IndexMap<String, RawServer>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    exposure: Option<String>,
    max_name_length: Option<usize>,
    search_limit: Option<usize>,
    core_wait_ms: Option<u64>,
    relist_wait_ms: Option<u64>,
    claude_always_load: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawAlwaysLoad {
    All(bool),
    Tools(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    env_vars: Vec<String>,
    cwd: Option<String>,
    url: Option<String>,
    description: Option<String>,
    prefix: Option<String>,
    #[serde(default)]
    search_hints: Vec<String>,
    enabled: Option<bool>,
    required: Option<bool>,
    startup_timeout_sec: Option<f64>,
    tool_timeout_sec: Option<f64>,
    enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    disabled_tools: Vec<String>,
    always_load: Option<RawAlwaysLoad>,
}

pub(super) fn parse(
    text: &str,
    path: &Path,
    _env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        path: path.to_owned(),
        line: 0,
        message,
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
    let d = Settings::default();
    let settings = Settings {
        exposure: match raw.settings.exposure.as_deref() {
            None | Some("deferred") => Exposure::Deferred,
            Some("proxy") => Exposure::Proxy,
            Some("all") => Exposure::All,
            Some(other) => return Err(invalid(format!("bad exposure {other}"))),
        },
        max_name_length: raw.settings.max_name_length.unwrap_or(d.max_name_length),
        search_limit: raw.settings.search_limit.unwrap_or(d.search_limit),
        core_wait: raw
            .settings
            .core_wait_ms
            .map_or(d.core_wait, Duration::from_millis),
        relist_wait: raw
            .settings
            .relist_wait_ms
            .map_or(d.relist_wait, Duration::from_millis),
        claude_always_load: raw.settings.claude_always_load.unwrap_or(true),
    };
    let servers = raw
        .mcp_servers
        .into_iter()
        .map(|(name, s)| {
            let transport = match (s.command, s.url) {
                (Some(command), None) => Transport::Stdio {
                    command,
                    args: s.args,
                    env: s.env,
                    env_vars: s.env_vars,
                    cwd: s.cwd.map(Into::into),
                },
                (None, Some(url)) => Transport::Http {
                    url,
                    bearer_token: None,
                    headers: BTreeMap::new(),
                },
                _ => return Err(invalid(format!("{name}: command or url"))),
            };
            Ok(ServerConfig {
                prefix: s.prefix.unwrap_or_else(|| name.clone()),
                name,
                description: s.description,
                search_hints: s.search_hints,
                transport,
                enabled: s.enabled.unwrap_or(true),
                required: s.required.unwrap_or(false),
                startup_timeout: s
                    .startup_timeout_sec
                    .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_secs_f64),
                tool_timeout: s
                    .tool_timeout_sec
                    .map_or(DEFAULT_TOOL_TIMEOUT, Duration::from_secs_f64),
                enabled_tools: s.enabled_tools,
                disabled_tools: s.disabled_tools,
                always_load: match s.always_load {
                    None | Some(RawAlwaysLoad::All(false)) => AlwaysLoad::None,
                    Some(RawAlwaysLoad::All(true)) => AlwaysLoad::All,
                    Some(RawAlwaysLoad::Tools(t)) => AlwaysLoad::Tools(t),
                },
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Config {
        path: path.to_owned(),
        settings,
        servers,
    })
}
