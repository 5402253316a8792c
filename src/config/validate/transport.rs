//! How a server is reached: exactly one of `command` (stdio) and `url` (HTTP), with the keys
//! of the other transport rejected by name, so a pasted block that mixes them fails at load
//! with the key to remove instead of being half ignored. Secrets met on the way (env values,
//! tokens, header values, URL credentials) are registered for redaction here, as they are read.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::super::error::ConfigError;
use super::super::raw::{Pairs, RawTransport, S};
use super::super::{OAuthClient, Transport};
use super::Server;

impl Server<'_, '_> {
    /// The one transport of the table at `name_span`; `inherit_env` defaults to
    /// `[settings] inherit_env`.
    pub(super) fn transport(
        &self,
        raw: RawTransport,
        name_span: Range<usize>,
        default_inherit_env: bool,
    ) -> Result<Transport, ConfigError> {
        let RawTransport {
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
        } = raw;
        if let Some(token) = bearer_token {
            return Err(self.error(
                token.span(),
                Some("bearer_token"),
                "(an inline secret) is not supported, as in Codex; put the token in an \
                 environment variable and write `bearer_token_env_var = \"NAME\"`",
            ));
        }
        match (command, url) {
            (Some(_), Some(url)) => Err(self.error(
                url.span(),
                None,
                "has both `command` (a stdio server) and `url` (an HTTP server); keep the \
                 one that matches how this server runs and remove the other",
            )),
            (None, None) => Err(self.error(
                name_span,
                None,
                "has neither `command` nor `url`; add `command = \"...\"` to start a stdio \
                 server, or `url = \"https://...\"` for an HTTP server",
            )),
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
                let inherit_env = inherit_env.map_or(default_inherit_env, |b| *b.get_ref());
                self.stdio(command, args, env, env_vars, cwd, inherit_env)
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
                )
            }
        }
    }

    /// The first (in the file) of the `present` keys, named as foreign to this transport.
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

    fn stdio(
        &self,
        command: S<String>,
        args: Option<S<Vec<S<String>>>>,
        env: Option<S<Pairs>>,
        env_vars: Option<S<Vec<S<String>>>>,
        cwd: Option<S<String>>,
        inherit_env: bool,
    ) -> Result<Transport, ConfigError> {
        let command = self.command(command)?;
        let args = self.args(args)?;
        let env_map = self.env_map(env)?;
        let env_vars = self.env_vars(env_vars)?;
        let cwd = cwd.map(|c| self.cwd(c)).transpose()?;
        Ok(Transport::Stdio {
            command,
            args,
            env: env_map,
            env_vars,
            inherit_env,
            cwd,
        })
    }

    /// `command`: expanded, never empty.
    fn command(&self, command: S<String>) -> Result<String, ConfigError> {
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
        Ok(command)
    }

    fn args(&self, args: Option<S<Vec<S<String>>>>) -> Result<Vec<String>, ConfigError> {
        args.map(S::into_inner)
            .unwrap_or_default()
            .into_iter()
            .map(|a| {
                let span = a.span();
                let arg = self.expand(a, "args")?;
                self.check_exec_text(span, "args", &arg, false)?;
                Ok(arg)
            })
            .collect()
    }

    /// `env = { NAME = "value" }`: each value expanded and registered as a secret.
    fn env_map(&self, env: Option<S<Pairs>>) -> Result<BTreeMap<String, String>, ConfigError> {
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
        Ok(env_map)
    }

    fn env_vars(&self, env_vars: Option<S<Vec<S<String>>>>) -> Result<Vec<String>, ConfigError> {
        env_vars
            .map(S::into_inner)
            .unwrap_or_default()
            .into_iter()
            .map(|name| {
                self.check_exec_text(name.span(), "env_vars", name.get_ref(), true)?;
                Ok(name.into_inner())
            })
            .collect()
    }

    fn cwd(&self, cwd: S<String>) -> Result<PathBuf, ConfigError> {
        self.expand(cwd, "cwd").map(|c| {
            let c = PathBuf::from(c);
            if c.is_relative() {
                config_dir(self.source.path()).join(c)
            } else {
                c
            }
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
        let url = self.url(url)?;
        let bearer_token = bearer_token_env_var
            .map(|var| self.resolve(&var, "bearer_token_env_var"))
            .transpose()?;
        if let Some(token) = &bearer_token {
            crate::redact::register_secret(token);
        }
        crate::redact::register_url_credentials(&url);
        let headers = self.headers(http_headers, env_http_headers)?;
        Ok(Transport::Http {
            url,
            bearer_token,
            headers,
            oauth,
        })
    }

    /// `url`: expanded, `http://` or `https://`.
    fn url(&self, url: S<String>) -> Result<String, ConfigError> {
        let url_span = url.span();
        let url = self.expand(url, "url")?;
        let scheme_ok = ["http://", "https://"].iter().any(|s| {
            url.get(..s.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(s))
        });
        if !scheme_ok {
            return Err(self.error(url_span, Some("url"), "must start with `http://` or `https://`; write e.g. `url = \"https://example.com/mcp\"`"));
        }
        Ok(url)
    }

    /// `http_headers` expanded, then `env_http_headers` resolved; every value a secret.
    fn headers(
        &self,
        http_headers: Option<S<Pairs>>,
        env_http_headers: Option<S<Pairs>>,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
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
        Ok(headers)
    }

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

    /// The OAuth client settings `mcp-defer login` uses; the secret is read from its
    /// variable now, as `bearer_token_env_var` is.
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

/// Relative `cwd` values are relative to the file they are written in, not to wherever
/// mcp-defer happens to be started, so one file works from any directory.
fn config_dir(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new(""))
}
