//! What a reload of `servers.toml` changes: the new file against the running servers.
//!
//! Pure over two configs, so the whole rule is unit-tested without a process. Servers are
//! matched by table name; a server is *changed* when any field of its validated config
//! differs (its command, an argument, an env value, a timeout, its tool lists...). The
//! running servers keep their positions for the life of the process (the catalog indexes
//! by position): [`plan`] reuses a removed server's position when its name comes back,
//! and appends a new name at the end.

use super::{Config, ServerConfig, Settings};

/// What happens to one position of the running servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A new name: a new position at the end, started.
    Add,
    /// A name that was removed before and is back: its old position, started again.
    Readd,
    /// Its config differs: stopped, then started with the new config.
    Restart,
    /// Gone from the file: stopped; its position and listed tools stay.
    Remove,
}

/// The reload of one file: the running config to use from now on, and what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Every position ever run: the new file's servers at their positions, removed ones
    /// with their last config, new ones appended. Settings and profiles stay those the
    /// process started with ([`settings_changes`] names what the file changed in them).
    pub servers: Vec<ServerConfig>,
    /// Which positions to act on, in position order; every other live position is
    /// unchanged and untouched.
    pub actions: Vec<(usize, Action)>,
    /// The positions that are removed after this plan (those removed before included).
    pub removed: Vec<bool>,
}

impl Plan {
    /// Whether the file changed nothing about the servers.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// The names of the servers `action` applies to, for the log.
    pub fn names(&self, action: Action) -> Vec<&str> {
        (self.actions.iter())
            .filter(|(_, a)| *a == action)
            .map(|&(i, _)| self.servers[i].name.as_str())
            .collect()
    }
}

/// The plan that takes the running servers (`running`, one per position; `removed` marks
/// the positions a reload removed earlier) to the servers of `new`.
pub fn plan(running: &[ServerConfig], removed: &[bool], new: &Config) -> Plan {
    let mut servers = running.to_vec();
    let mut now_removed: Vec<bool> = (0..running.len())
        .map(|i| removed.get(i).copied().unwrap_or(false))
        .collect();
    let mut actions = Vec::new();
    for (index, old) in running.iter().enumerate() {
        let Some(server) = new.servers.iter().find(|s| s.name == old.name) else {
            if !now_removed[index] {
                now_removed[index] = true;
                actions.push((index, Action::Remove));
            }
            continue;
        };
        if now_removed[index] {
            now_removed[index] = false;
            actions.push((index, Action::Readd));
        } else if server != old {
            actions.push((index, Action::Restart));
        }
        servers[index] = server.clone();
    }
    for server in &new.servers {
        if !running.iter().any(|s| s.name == server.name) {
            actions.push((servers.len(), Action::Add));
            servers.push(server.clone());
            now_removed.push(false);
        }
    }
    actions.sort_by_key(|&(index, _)| index);
    Plan {
        servers,
        actions,
        removed: now_removed,
    }
}

/// The `[settings]` keys whose value differs between `old` and `new`: they apply only
/// when mcp-defer starts (the client was told them in its handshake, the index was built
/// with them), so a reload names them in its log and leaves them.
pub fn settings_changes(old: &Settings, new: &Settings) -> Vec<&'static str> {
    let Settings {
        exposure,
        max_name_length,
        search_limit,
        core_wait,
        relist_wait,
        claude_always_load,
        inherit_env,
        max_message_bytes,
        max_output_tokens,
        client_era,
        search_loads,
        semantic,
        model,
        learn,
        session_idle,
        hub,
        hub_grace,
        http,
        trust,
    } = old;
    let mut changed = Vec::new();
    let mut note = |differs: bool, key: &'static str| {
        if differs {
            changed.push(key);
        }
    };
    note(*exposure != new.exposure, "exposure");
    note(*trust != new.trust, "trust");
    note(*max_name_length != new.max_name_length, "max_name_length");
    note(*search_limit != new.search_limit, "search_limit");
    note(*core_wait != new.core_wait, "core_wait_ms");
    note(*relist_wait != new.relist_wait, "relist_wait_ms");
    note(
        *claude_always_load != new.claude_always_load,
        "claude_always_load",
    );
    note(*inherit_env != new.inherit_env, "inherit_env");
    note(
        *max_message_bytes != new.max_message_bytes,
        "max_message_bytes",
    );
    note(
        *max_output_tokens != new.max_output_tokens,
        "max_output_tokens",
    );
    note(*client_era != new.client_era, "client_era");
    note(*search_loads != new.search_loads, "search_loads");
    note(*semantic != new.semantic, "search.semantic");
    note(*model != new.model, "search.model");
    note(*learn != new.learn, "search.learn");
    note(*session_idle != new.session_idle, "session_idle_sec");
    note(*hub != new.hub, "hub");
    note(*hub_grace != new.hub_grace, "hub_grace_sec");
    note(*http != new.http, "http");
    changed
}

#[cfg(test)]
mod tests {
    // A test panics on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::expect_used)]

    use super::*;

    fn config(toml: &str) -> Config {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("servers.toml");
        std::fs::write(&path, toml).expect("write");
        Config::load(&path).expect("valid config")
    }

    fn server(name: &str, arg: &str) -> String {
        format!("[mcp_servers.{name}]\ncommand = \"srv\"\nargs = [\"{arg}\"]\n")
    }

    #[test]
    fn added_removed_changed_and_unchanged_by_name() {
        let old = config(&[server("a", "1"), server("b", "1"), server("c", "1")].concat());
        let new = config(&[server("c", "1"), server("b", "2"), server("d", "1")].concat());
        let plan = plan(&old.servers, &[], &new);
        assert_eq!(
            plan.actions,
            vec![(0, Action::Remove), (1, Action::Restart), (3, Action::Add)],
            "c is unchanged: no action, whatever its place in the file"
        );
        let names: Vec<&str> = plan.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"], "positions never shift");
        assert_eq!(plan.removed, [true, false, false, false]);
        assert_eq!(plan.servers[1], new.servers[1], "b runs its new config");
        assert_eq!(plan.servers[0], old.servers[0], "a keeps its last config");
    }

    #[test]
    fn a_removed_name_comes_back_at_its_old_position() {
        let first = config(&[server("a", "1"), server("b", "1")].concat());
        let without = config(&server("b", "1"));
        let removal = plan(&first.servers, &[], &without);
        assert_eq!(removal.actions, vec![(0, Action::Remove)]);
        let again = plan(&removal.servers, &removal.removed, &without);
        assert!(again.is_empty(), "a removed server is not removed twice");
        let back = config(&[server("b", "1"), server("a", "2")].concat());
        let readd = plan(&removal.servers, &removal.removed, &back);
        assert_eq!(readd.actions, vec![(0, Action::Readd)]);
        assert_eq!(readd.removed, [false, false]);
        assert_eq!(
            readd.servers.len(),
            2,
            "no new position for a name seen before"
        );
        assert_eq!(
            readd.servers[0], back.servers[1],
            "with the config it comes back with"
        );
    }

    #[test]
    fn any_field_counts_as_a_change() {
        let old = config(&server("a", "1"));
        for changed in [
            format!("{}env = {{ K = \"v\" }}\n", server("a", "1")),
            format!("{}tool_timeout_sec = 5\n", server("a", "1")),
            format!("{}enabled = false\n", server("a", "1")),
            format!("{}disabled_tools = [\"x\"]\n", server("a", "1")),
        ] {
            let plan = plan(&old.servers, &[], &config(&changed));
            assert_eq!(plan.actions, vec![(0, Action::Restart)], "{changed}");
        }
    }

    #[test]
    fn the_same_file_plans_nothing() {
        let old = config(&[server("a", "1"), server("b", "1")].concat());
        assert!(plan(&old.servers, &[], &old).is_empty());
    }

    #[test]
    fn settings_changes_are_named() {
        let old = config(&server("a", "1"));
        let new = config(&format!(
            "[settings]\nsearch_limit = 3\nexposure = \"all\"\n{}",
            server("a", "1")
        ));
        assert_eq!(
            settings_changes(&old.settings, &new.settings),
            ["exposure", "search_limit"]
        );
        assert!(settings_changes(&old.settings, &old.settings).is_empty());
    }
}
