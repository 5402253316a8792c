//! The environment a stdio server starts with: Codex's rule, so a pasted Codex block behaves
//! the same and one server's token never reaches another server (or the model, through a
//! tool that prints its environment).
//!
//! A server gets [`DEFAULT_ENV_VARS`] and its `env_vars` from mcp-defer's environment (those
//! that are set), then its `env` on top. `inherit_env = true` (per server or in
//! `[settings]`) passes the whole environment instead, as Claude Code does.

use std::collections::BTreeMap;
use std::ffi::OsString;

use crate::config::Transport;

/// The variables every stdio server gets from ours when they are set: Codex's lists, one
/// for Unix and one with Windows' names (`SYSTEMROOT`, `PATHEXT`, `USERPROFILE`, `APPDATA`,
/// ...), chosen by `crate::platform::env`.
pub const DEFAULT_ENV_VARS: &[&str] = crate::platform::env::DEFAULT_ENV_VARS;

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
                .copied()
                .chain(env_vars.iter().map(String::as_str))
            {
                if let Some(value) = lookup(name) {
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

    fn ours(name: &str) -> Option<OsString> {
        match name {
            "PATH" => Some("/bin".into()),
            "HOME" => Some("/home/me".into()),
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
        assert_eq!(env.describe(), "API, HOME, PATH, WANTED");
        assert!(!env.vars.contains_key(&OsString::from("GITHUB_TOKEN")));
    }

    #[test]
    fn inherit_env_keeps_everything_and_sets_env() {
        let env = ChildEnv::for_transport(&stdio(&[("API", "k")], &[], true), &ours);
        let env = env.unwrap_or_else(|| panic!("stdio"));
        assert!(env.inherit);
        assert_eq!(env.describe(), "all of mcp-defer's (inherit_env), API");
    }
}
