//! The environment in a server table: `${VAR}` expansion of free text, variables named by
//! `*_env_var` keys resolved to secrets, and what `execve` cannot carry. Secrets read here
//! are never quoted in a message (config/error.rs); the variable's name is, as the fix.

use std::ops::Range;

use super::super::error::ConfigError;
use super::super::expand::{ExpandError, expand};
use super::super::raw::S;
use super::Server;

impl Server<'_, '_> {
    /// `${VAR}` expansion of a free-text value; errors name the key and the variable.
    pub(super) fn expand(&self, value: S<String>, key: &str) -> Result<String, ConfigError> {
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
    pub(super) fn resolve(&self, var: &S<String>, key: &str) -> Result<String, ConfigError> {
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

    /// Refuses what `execve` cannot carry: NUL anywhere, `=` or an empty name in a variable
    /// name. Caught here, the error names the key and line instead of failing every spawn.
    pub(super) fn check_exec_text(
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
}
