//! A server's tool keys: `enabled_tools`, `disabled_tools`, `always_load` and the
//! `[mcp_servers.<name>.tools.<tool>]` overrides. They are checked against each other, since
//! a core tool or an override for a tool the filters remove would silently never show up.

use super::super::error::{ConfigError, bare_or_quoted};
use super::super::raw::{RawAlwaysLoad, RawToolOverride, S};
use super::super::{AlwaysLoad, ToolOverride};
use super::Server;

/// A list of names as written, without spans.
pub(super) fn names(list: Option<S<Vec<S<String>>>>) -> Option<Vec<String>> {
    list.map(|l| {
        l.into_inner()
            .into_iter()
            .map(S::into_inner)
            .collect::<Vec<_>>()
    })
}

impl Server<'_, '_> {
    /// `always_load`; `disabled` and `enabled` are the filters it must not contradict.
    pub(super) fn always_load(
        &self,
        always_load: Option<S<RawAlwaysLoad>>,
        disabled: &[String],
        enabled: Option<&[String]>,
    ) -> Result<AlwaysLoad, ConfigError> {
        match always_load.map(S::into_inner) {
            None | Some(RawAlwaysLoad::Bool(false)) => Ok(AlwaysLoad::None),
            Some(RawAlwaysLoad::Bool(true)) => Ok(AlwaysLoad::All),
            Some(RawAlwaysLoad::Tools(tools)) if tools.is_empty() => Ok(AlwaysLoad::None),
            Some(RawAlwaysLoad::Tools(tools)) => {
                // A core tool the filters remove would silently never show up; the two keys
                // contradict each other, and the fix is one edit, so this is an error.
                for tool in &tools {
                    let tool_name = tool.get_ref();
                    if disabled.contains(tool_name) {
                        return Err(self.error(
                            tool.span(),
                            Some("always_load"),
                            format!("pins `{tool_name}`, which `disabled_tools` removes; drop it from one of the two lists"),
                        ));
                    }
                    if enabled.is_some_and(|e| !e.contains(tool_name)) {
                        return Err(self.error(
                            tool.span(),
                            Some("always_load"),
                            format!("pins `{tool_name}`, which is not in `enabled_tools`; add it there or drop it here"),
                        ));
                    }
                }
                Ok(AlwaysLoad::Tools(
                    tools.into_iter().map(S::into_inner).collect(),
                ))
            }
        }
    }

    /// Every `[mcp_servers.<name>.tools.<tool>]` that overrides something, in file order.
    pub(super) fn tool_overrides(
        &self,
        tools: Vec<RawToolOverride>,
        disabled: &[String],
        enabled: Option<&[String]>,
    ) -> Result<Vec<ToolOverride>, ConfigError> {
        tools
            .into_iter()
            .map(|tool| self.tool_override(tool, disabled, enabled))
            .filter_map(Result::transpose)
            .collect()
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
        let label = format!("tools.{}", bare_or_quoted(tool));
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
}
