//! The environment a stdio server starts with: Codex's rule, so a pasted Codex block behaves
//! the same and one server's token never reaches another server (or the model, through a
//! tool that prints its environment).
//!
//! A server gets [`DEFAULT_ENV_VARS`], the user's network settings ([`NETWORK_ENV_VARS`]:
//! proxies and certificate authorities) and its `env_vars` from mcp-defer's environment
//! (those that are set), then its `env` on top. `inherit_env = true` (per server or in
//! `[settings]`) passes the whole environment instead, as Claude Code does.
//!
//! Values are never printed: [`ChildEnv::describe`] gives names, and a proxy URL's password
//! is registered with [`crate::redact`] so a child that echoes its environment is masked.

use std::collections::BTreeMap;
use std::ffi::OsString;

use crate::config::Transport;

/// The variables every stdio server gets from ours when they are set: Codex's lists, one
/// for Unix and one with Windows' names (`SYSTEMROOT`, `PATHEXT`, `USERPROFILE`, `APPDATA`,
/// ...), chosen by `crate::platform::env`.
pub const DEFAULT_ENV_VARS: &[&str] = crate::platform::env::DEFAULT_ENV_VARS;

/// The user's own network settings, passed by default beside [`DEFAULT_ENV_VARS`]: without
/// them `npx`, `uvx`, pip and Node servers fail behind a corporate proxy or a private CA
/// ("invalid peer certificate: UnknownIssuer") although the same command works in the
/// user's shell. Both spellings of the proxy variables, since tools disagree on which they
/// read. A proxy URL's password is passed too (the proxy needs it) and masked in output.
///
/// Package index URLs (`PIP_INDEX_URL`, `UV_INDEX_URL`, `npm_config_registry`) are left
/// out on purpose: they choose what code a launcher runs and often embed a token; npm, pip
/// and uv also read them from their config files under `HOME`, which every server gets, and
/// a server that needs one names it in `env_vars`.
pub const NETWORK_ENV_VARS: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

/// Set in every stdio server's environment to the name of its entry in servers.toml. An
/// mcp-defer that finds it refuses to serve ([`started_as`]): it was started by mcp-defer as
/// one of its servers, and serving would start the same servers again, itself among them,
/// with no end (an entry such as `npx -y mcp-defer` that `import` could not recognise). Set
/// after `env`, so no config can turn the guard off.
pub const STARTED_AS_VAR: &str = "MCP_DEFER_STARTED_AS";

/// The entry name under which an mcp-defer started this process, if one did.
pub fn started_as() -> Option<String> {
    std::env::var_os(STARTED_AS_VAR).map(|name| name.to_string_lossy().into_owned())
}

/// What a child process is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildEnv {
    /// Keep mcp-defer's environment and set `vars` on top; else `vars` is all it gets.
    pub inherit: bool,
    pub vars: BTreeMap<OsString, OsString>,
}

impl ChildEnv {
    /// The environment for a stdio server's `transport`, reading ours through `lookup`;
    /// `None` for an HTTP server.
    pub fn for_transport(
        transport: &Transport,
        lookup: &dyn Fn(&str) -> Option<OsString>,
    ) -> Option<ChildEnv> {
        let Transport::Stdio {
            env,
            env_vars,
            inherit_env,
            ..
        } = transport
        else {
            return None;
        };
        let mut vars = BTreeMap::new();
        if !inherit_env {
            for name in DEFAULT_ENV_VARS
                .iter()
                .chain(NETWORK_ENV_VARS)
                .copied()
                .chain(env_vars.iter().map(String::as_str))
            {
                if let Some(value) = lookup(name) {
                    if NETWORK_ENV_VARS.contains(&name) {
                        register_proxy_password(&value);
                    }
                    vars.insert(OsString::from(name), value);
                }
            }
        }
        for (name, value) in env {
            vars.insert(OsString::from(name), OsString::from(value));
        }
        Some(ChildEnv {
            inherit: *inherit_env,
            vars,
        })
    }

    /// As [`ChildEnv::for_transport`], from the process environment.
    pub fn from_process(transport: &Transport) -> Option<ChildEnv> {
        ChildEnv::for_transport(transport, &|name| std::env::var_os(name))
    }

    /// Marks the environment as that of mcp-defer's server `name` ([`STARTED_AS_VAR`]).
    pub fn mark_server(&mut self, name: &str) {
        self.vars
            .insert(OsString::from(STARTED_AS_VAR), OsString::from(name));
    }

    /// The variable names the child receives, sorted (never values: they may be secrets).
    /// With `inherit`, "every variable of mcp-defer" comes first.
    pub fn describe(&self) -> String {
        let names: Vec<String> = self
            .vars
            .keys()
            .map(|k| k.to_string_lossy().into_owned())
            .collect();
        match (self.inherit, names.is_empty()) {
            (true, true) => "all of mcp-defer's (inherit_env)".to_owned(),
            (true, false) => format!("all of mcp-defer's (inherit_env), {}", names.join(", ")),
            (false, true) => "none".to_owned(),
            (false, false) => names.join(", "),
        }
    }
}

/// Registers the password of a proxy URL (`http://user:password@proxy:3128`) as a secret:
/// the URL shape is masked by [`crate::redact`] already, but a child may print the password
/// alone (an error quoting its settings), and a password with `@` or `/` in it defeats
/// the shape rule.
fn register_proxy_password(value: &std::ffi::OsStr) {
    let Some(value) = value.to_str() else { return };
    let Some((_, rest)) = value.split_once("://") else {
        return;
    };
    // The userinfo ends at the last `@` before the host; a password may contain `@` or `/`.
    let Some(at) = rest.rfind('@') else { return };
    if let Some((_, password)) = rest[..at].split_once(':') {
        crate::redact::register_secret(password);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(env: &[(&str, &str)], env_vars: &[&str], inherit_env: bool) -> Transport {
        Transport::Stdio {
            command: "x".into(),
            args: Vec::new(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            env_vars: env_vars.iter().map(|s| (*s).to_owned()).collect(),
            inherit_env,
            cwd: None,
        }
    }

    /// The user's home folder variable among [`DEFAULT_ENV_VARS`]: Windows has no `HOME`.
    const HOME: &str = if cfg!(windows) { "USERPROFILE" } else { "HOME" };

    /// `names` as [`ChildEnv::describe`] lists them: sorted, as the variable map is.
    fn listed(names: &[&str]) -> String {
        let mut names = names.to_vec();
        names.sort_unstable();
        names.join(", ")
    }

    fn ours(name: &str) -> Option<OsString> {
        match name {
            "PATH" => Some("/bin".into()),
            HOME => Some("/home/me".into()),
            "GITHUB_TOKEN" => Some("ghp_x".into()),
            "WANTED" => Some("yes".into()),
            _ => None,
        }
    }

    #[test]
    fn only_defaults_env_vars_and_env_are_passed() {
        let env =
            ChildEnv::for_transport(&stdio(&[("API", "k")], &["WANTED", "UNSET"], false), &ours);
        let env = env.unwrap_or_else(|| panic!("stdio"));
        assert!(!env.inherit);
        assert_eq!(env.describe(), listed(&["API", HOME, "PATH", "WANTED"]));
        assert!(!env.vars.contains_key(&OsString::from("GITHUB_TOKEN")));
    }

    #[test]
    fn network_settings_are_passed_by_default() {
        let lookup = |name: &str| match name {
            "HTTPS_PROXY" => Some(OsString::from("http://me:proxy-pass-9931@proxy:3128")),
            "no_proxy" => Some(OsString::from("localhost")),
            "SSL_CERT_FILE" => Some(OsString::from("/etc/corp.pem")),
            "PIP_INDEX_URL" => Some(OsString::from("https://u:t@pypi.corp/simple")),
            _ => ours(name),
        };
        let env = ChildEnv::for_transport(&stdio(&[], &[], false), &lookup);
        let env = env.unwrap_or_else(|| panic!("stdio"));
        assert_eq!(
            env.describe(),
            listed(&[HOME, "HTTPS_PROXY", "PATH", "SSL_CERT_FILE", "no_proxy"])
        );
        assert_eq!(
            crate::redact::redact("proxy said: bad password proxy-pass-9931"),
            "proxy said: bad password ***"
        );
    }

    #[test]
    fn inherit_env_keeps_everything_and_sets_env() {
        let env = ChildEnv::for_transport(&stdio(&[("API", "k")], &[], true), &ours);
        let env = env.unwrap_or_else(|| panic!("stdio"));
        assert!(env.inherit);
        assert_eq!(env.describe(), "all of mcp-defer's (inherit_env), API");
    }
}
