//! Where mcp-defer keeps its files, by each OS's convention (the `dirs` crate asks the OS:
//! known folders on Windows, `~/Library` on macOS, the XDG variables on Linux):
//!
//! | | Linux | macOS | Windows |
//! |---|---|---|---|
//! | config | `$XDG_CONFIG_HOME` or `~/.config` | `~/Library/Application Support` | `%APPDATA%` (Roaming) |
//! | cache | `$XDG_CACHE_HOME` or `~/.cache` | `~/Library/Caches` | `%LOCALAPPDATA%` |
//! | data (tokens) | `$XDG_DATA_HOME` or `~/.local/share` | `~/Library/Application Support` | `%LOCALAPPDATA%` |
//!
//! each followed by `mcp-defer`. An `XDG_*` variable that is set (to an absolute path) wins
//! on macOS too: whoever sets it wants it. Tokens stay in the local, not the roaming, app
//! data on Windows: a login belongs to this machine.

use std::ffi::OsString;
use std::path::PathBuf;

/// The folder inside each base directory.
const APP: &str = "mcp-defer";

/// The user's home directory (`HOME`, else the password database; `%USERPROFILE%` on
/// Windows).
pub(crate) fn home_dir() -> Option<PathBuf> {
    ::dirs::home_dir()
}

/// The base directory the user's clients keep their configs in (`~/.config` on Linux,
/// `%APPDATA%` on Windows); Claude Desktop and VS Code put their folders there.
pub(crate) fn config_home() -> Option<PathBuf> {
    xdg_or("XDG_CONFIG_HOME", ::dirs::config_dir())
}

/// `<config>/mcp-defer`, where `servers.toml` is looked for last.
pub(crate) fn config_dir() -> Option<PathBuf> {
    config_home().map(|d| d.join(APP))
}

/// `<cache>/mcp-defer`: tool lists, embedding vectors.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    xdg_or("XDG_CACHE_HOME", ::dirs::cache_dir()).map(|d| d.join(APP))
}

/// `<data>/mcp-defer`: the OAuth token file.
pub(crate) fn data_dir() -> Option<PathBuf> {
    xdg_or("XDG_DATA_HOME", ::dirs::data_local_dir()).map(|d| d.join(APP))
}

/// As [`data_dir`], reading the variables through `env` instead of asking the OS: the
/// config loader checks `semantic = "model"`'s default directory with an injected
/// environment, and it must name the same place `mcp-defer model fetch` fills. The OS's
/// places by their variables: `%LOCALAPPDATA%` on Windows, `~/Library/Application Support`
/// on macOS, `~/.local/share` elsewhere.
#[cfg(any(feature = "model", test))]
pub(crate) fn data_dir_in(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let os_default = if cfg!(windows) {
        var("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library").join("Application Support"))
    } else {
        var("HOME").map(|h| h.join(".local").join("share"))
    };
    choose(env("XDG_DATA_HOME").map(OsString::from), os_default).map(|d| d.join(APP))
}

/// `$var` when it is an absolute path (the XDG rule: a relative one is ignored), else the
/// OS's own place. On Linux `dirs` already reads the variable; this makes macOS agree.
fn xdg_or(var: &str, os_default: Option<PathBuf>) -> Option<PathBuf> {
    choose(std::env::var_os(var), os_default)
}

fn choose(xdg: Option<OsString>, os_default: Option<PathBuf>) -> Option<PathBuf> {
    if cfg!(unix) {
        let xdg = xdg.map(PathBuf::from).filter(|p| p.is_absolute());
        if xdg.is_some() {
            return xdg;
        }
    }
    os_default
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_xdg_variable_wins_on_unix_and_a_relative_one_is_ignored() {
        let os = Some(PathBuf::from("/os/default"));
        let abs = if cfg!(windows) { r"C:\x" } else { "/xdg" };
        let chosen = choose(Some(abs.into()), os.clone());
        if cfg!(unix) {
            assert_eq!(chosen, Some(PathBuf::from(abs)));
        } else {
            assert_eq!(chosen, os);
        }
        assert_eq!(choose(Some("relative".into()), os.clone()), os);
        assert_eq!(choose(Some("".into()), os.clone()), os);
        assert_eq!(choose(None, None), None);
    }

    #[test]
    fn the_data_directory_read_from_variables_is_the_os_place() {
        let env = |name: &str| match name {
            "HOME" => Some("/home/me".to_owned()),
            "LOCALAPPDATA" => Some(r"C:\Users\me\AppData\Local".to_owned()),
            _ => None,
        };
        let expected = if cfg!(windows) {
            PathBuf::from(r"C:\Users\me\AppData\Local\mcp-defer")
        } else if cfg!(target_os = "macos") {
            PathBuf::from("/home/me/Library/Application Support/mcp-defer")
        } else {
            PathBuf::from("/home/me/.local/share/mcp-defer")
        };
        assert_eq!(data_dir_in(&env), Some(expected));
        assert_eq!(data_dir_in(&|_| None), None);
    }

    #[test]
    fn every_directory_ends_in_the_app_folder() {
        for dir in [config_dir(), cache_dir(), data_dir()]
            .into_iter()
            .flatten()
        {
            assert!(dir.ends_with(APP), "{}", dir.display());
        }
    }
}
