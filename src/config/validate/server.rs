//! One `[mcp_servers.<name>]` table, step by step in the order its errors are reported:
//! name and prefix, transport, timeouts, start, tool keys, the text the model reads, output
//! budget. Each step is a method in the file named for what it checks; this file only
//! destructures the raw table (so no key slips past) and hands each step its keys.

use super::super::error::ConfigError;
use super::super::raw::{RawServer, S};
use super::super::{ServerConfig, Settings, Share, Start};
use super::Server;
use super::tools::names;
use crate::suggest;

impl Server<'_, '_> {
    pub(super) fn build(
        &self,
        raw: RawServer,
        settings: &Settings,
    ) -> Result<ServerConfig, ConfigError> {
        let RawServer {
            name,
            transport,
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
            share,
            idle_stop_sec,
            trust,
            tools,
            ignored,
        } = raw;

        let name_span = name.span();
        let name = name.into_inner();
        self.check_name(&name, name_span.clone())?;
        let prefix = self.prefix(prefix, &name, name_span.clone(), settings.max_name_length)?;
        let transport = self.transport(transport, name_span, settings.inherit_env)?;
        let startup_timeout =
            self.startup_timeout(startup_timeout_sec, startup_timeout_ms, &transport)?;
        let tool_timeout = self.tool_timeout(tool_timeout_sec)?;
        let start = self.start(start)?;
        let share = self.share(share)?;
        let idle_stop = self.idle_stop(idle_stop_sec)?;
        let enabled_tools = names(enabled_tools);
        let disabled_tools = names(disabled_tools).unwrap_or_default();
        let always_load =
            self.always_load(always_load, &disabled_tools, enabled_tools.as_deref())?;
        let description = self.description(description)?;
        let search_hints = self.search_hints(search_hints)?;
        let tool_overrides =
            self.tool_overrides(tools, &disabled_tools, enabled_tools.as_deref())?;
        for key in &ignored {
            tracing::debug!(server = %name, key = *key.get_ref(), "Codex-only key ignored");
        }
        let max_output_tokens = max_output_tokens
            .map(|n| self.output_tokens(n))
            .transpose()?;

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
            enabled_tools,
            disabled_tools,
            always_load,
            tool_overrides,
            max_output_tokens,
            start,
            share,
            idle_stop,
            // `raw` accepted only the names `TrustMode::parse` knows.
            trust: trust.and_then(|t| crate::config::TrustMode::parse(t.get_ref())),
        })
    }

    /// `share = "shared" | "session"`; shared when absent.
    fn share(&self, share: Option<S<String>>) -> Result<Share, ConfigError> {
        let Some(value) = share else {
            return Ok(Share::Shared);
        };
        match value.get_ref().as_str() {
            "shared" => Ok(Share::Shared),
            "session" => Ok(Share::Session),
            other => {
                const SHARES: &[&str] = &["shared", "session"];
                Err(self.error(
                    value.span(),
                    Some("share"),
                    format!(
                        "is {other:?}; write `share = \"session\"` (the server needs its \
                         client's roots, or asks it outside a tool call: one process per \
                         session) or `share = \"shared\"` (one process for every session, \
                         the default){}",
                        suggest::hint(other, SHARES)
                    ),
                ))
            }
        }
    }

    /// `start = "eager" | "lazy"`; eager when absent.
    fn start(&self, start: Option<S<String>>) -> Result<Start, ConfigError> {
        let Some(value) = start else {
            return Ok(Start::Eager);
        };
        match value.get_ref().as_str() {
            "eager" => Ok(Start::Eager),
            "lazy" => Ok(Start::Lazy),
            other => {
                const STARTS: &[&str] = &["eager", "lazy"];
                Err(self.error(
                    value.span(),
                    Some("start"),
                    format!(
                        "is {other:?}, which is not a way to start; write `start = \"lazy\"` \
                         (at the first call) or `start = \"eager\"` (with mcp-defer, the \
                         default){}",
                        suggest::hint(other, STARTS)
                    ),
                ))
            }
        }
    }

    /// One line in the instructions: newlines and runs of spaces collapsed; empty is none.
    fn description(&self, description: Option<S<String>>) -> Result<Option<String>, ConfigError> {
        Ok(description
            .map(|d| {
                self.expand(d, "description")
                    .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
            })
            .transpose()?
            .filter(|d| !d.is_empty()))
    }

    fn search_hints(
        &self,
        search_hints: Option<S<Vec<S<String>>>>,
    ) -> Result<Vec<String>, ConfigError> {
        Ok(search_hints
            .map(|hints| {
                hints
                    .into_inner()
                    .into_iter()
                    .map(|h| self.expand(h, "search_hints"))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default())
    }
}
