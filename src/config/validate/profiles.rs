//! `[profiles.<name>]`: a subset of the servers served as its own MCP server. Its name is a
//! URL path segment, its servers must exist, and each tool pattern must be able to match a
//! tool of those servers, or a typo would silently hide (or show) tools.

use super::super::error::{ConfigError, Source};
use super::super::raw::{RawProfile, S};
use super::super::tool_filter;
use super::super::{Profile, ServerConfig, ToolFilter};
use crate::catalog::is_name_char;
use crate::suggest;

/// `[profiles.<name>]`: a name fit for a URL path, and servers that exist.
pub(super) fn build_profiles(
    raw: Vec<RawProfile>,
    servers: &[ServerConfig],
    source: &Source<'_>,
) -> Result<Vec<Profile>, ConfigError> {
    raw.into_iter()
        .map(|profile| build_profile(profile, servers, source))
        .collect()
}

fn build_profile(
    raw: RawProfile,
    all_servers: &[ServerConfig],
    source: &Source<'_>,
) -> Result<Profile, ConfigError> {
    let RawProfile {
        name,
        servers,
        allow_tools,
        deny_tools,
    } = raw;
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
    let names = profile_servers(&name, servers, all_servers, source)?;
    let prefixes: Vec<&str> = (all_servers.iter())
        .filter(|s| names.contains(&s.name))
        .map(|s| s.prefix.as_str())
        .collect();
    let allow = patterns(&name, "allow_tools", allow_tools, &prefixes, source)?;
    let deny = patterns(&name, "deny_tools", deny_tools, &prefixes, source)?.unwrap_or_default();
    Ok(Profile {
        name: name.into_inner(),
        servers: names,
        tools: ToolFilter::new(allow, deny),
    })
}

/// The profile's `servers`, each a table of the file.
fn profile_servers(
    name: &S<String>,
    servers: S<Vec<S<String>>>,
    all_servers: &[ServerConfig],
    source: &Source<'_>,
) -> Result<Vec<String>, ConfigError> {
    let known: Vec<&str> = all_servers.iter().map(|s| s.name.as_str()).collect();
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
    Ok(names)
}

/// `allow_tools` or `deny_tools` (`key`), each pattern able to match a tool of `prefixes`.
fn patterns(
    name: &S<String>,
    key: &str,
    list: Option<S<Vec<S<String>>>>,
    prefixes: &[&str],
    source: &Source<'_>,
) -> Result<Option<Vec<String>>, ConfigError> {
    let Some(list) = list else {
        return Ok(None);
    };
    let mut checked = Vec::new();
    for pattern in list.into_inner() {
        if let Err(why) = tool_filter::check_pattern(pattern.get_ref(), prefixes) {
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
}
