//! How the client should start mcp-defer, and how the commands adopt prints should start
//! it: the way the user started this one.
//!
//! Run through a package runner (`npx -y mcp-defer adopt claude`, `uvx mcp-defer ...`),
//! this binary sits in the runner's cache (`~/.npm/_npx/<hash>/...`,
//! `~/.cache/uv/archive-v0/<hash>/...`), which the runner may clean at any time: registering
//! that path would leave the client unable to start mcp-defer after a cache clean, with
//! the user's servers already gone from the client. So a binary in a runner's cache is
//! registered as the runner's command (`npx -y mcp-defer`), and any other binary by its
//! path, which stays where the user installed it.

use std::path::Path;

/// The package name the runners fetch.
const PACKAGE: &str = "mcp-defer";

/// How mcp-defer is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Invocation {
    /// The program the client runs.
    pub program: String,
    /// The arguments before mcp-defer's own (`-y mcp-defer` for npx).
    pub prefix: Vec<String>,
    /// How a person types it in front of a subcommand: `mcp-defer`, `npx -y mcp-defer`.
    pub shown: String,
}

impl Invocation {
    /// This process's way in: from its executable's path and the environment the runner
    /// set (`npm_config_user_agent` names the npm-family runner that ran it).
    ///
    /// # Errors
    /// When the executable's path cannot be found.
    pub(super) fn current() -> anyhow::Result<Invocation> {
        use anyhow::Context;
        let exe = std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .context("cannot find the path of this mcp-defer binary to register it")?;
        let agent = std::env::var("npm_config_user_agent").ok();
        Ok(Invocation::of(&exe, agent.as_deref()))
    }

    /// The way in for the binary at `exe`, run by the npm-family runner `agent` names (if
    /// one did).
    pub(super) fn of(exe: &Path, agent: Option<&str>) -> Invocation {
        let text = exe.to_string_lossy().replace('\\', "/");
        let parts: Vec<&str> = text.split('/').collect();
        let has = |name: &str| parts.contains(&name);
        let after = |parent: &str, name: &str| parts.windows(2).any(|w| w == [parent, name]);
        let runner: Option<&[&str]> = if has("_npx") {
            // npx's cache; pnpm, yarn and bun say who they are in the user agent.
            Some(match agent.and_then(|a| a.split('/').next()) {
                Some("pnpm") => &["pnpm", "dlx"][..],
                Some("yarn") => &["yarn", "dlx"][..],
                Some("bun") => &["bunx"][..],
                _ => &["npx", "-y"][..],
            })
        } else if after("pnpm", "dlx") {
            Some(&["pnpm", "dlx"][..])
        } else if parts.iter().any(|p| p.starts_with("bunx-")) {
            Some(&["bunx"][..])
        } else if parts.iter().any(|p| p.starts_with("archive-v")) && has("uv") {
            Some(&["uvx"][..])
        } else if after("pipx", ".cache") {
            Some(&["pipx", "run"][..])
        } else {
            None
        };
        match runner {
            Some([program, rest @ ..]) => {
                let mut prefix: Vec<String> = rest.iter().map(|w| (*w).to_owned()).collect();
                prefix.push(PACKAGE.to_owned());
                Invocation {
                    program: (*program).to_owned(),
                    shown: format!("{program} {}", prefix.join(" ")),
                    prefix,
                }
            }
            Some([]) | None => Invocation {
                program: exe.to_string_lossy().into_owned(),
                prefix: Vec::new(),
                shown: PACKAGE.to_owned(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(path: &str, agent: Option<&str>) -> (String, Vec<String>, String) {
        let i = Invocation::of(Path::new(path), agent);
        (i.program, i.prefix, i.shown)
    }

    #[test]
    fn a_runner_cache_is_registered_as_the_runner() {
        let npx =
            "/home/me/.npm/_npx/4b4c857f6efdfb61/node_modules/@mcp-defer/linux-x64/bin/mcp-defer";
        assert_eq!(
            of(
                npx,
                Some("npm/10.9.2 node/v22.12.0 linux x64 workspaces/false")
            ),
            (
                "npx".into(),
                vec!["-y".into(), "mcp-defer".into()],
                "npx -y mcp-defer".into()
            )
        );
        assert_eq!(
            of(npx, Some("pnpm/9.15.0 npm/? node/v22.12.0")).2,
            "pnpm dlx mcp-defer"
        );
        assert_eq!(
            of(r"C:\Users\me\AppData\Local\npm-cache\_npx\ab\node_modules\@mcp-defer\win32-x64\bin\mcp-defer.exe", None).2,
            "npx -y mcp-defer"
        );
        assert_eq!(
            of(
                "/home/me/.cache/pnpm/dlx/xyz/abc/node_modules/@mcp-defer/linux-x64/bin/mcp-defer",
                None
            )
            .2,
            "pnpm dlx mcp-defer"
        );
        assert_eq!(
            of(
                "/tmp/bunx-1000-mcp-defer@latest/node_modules/@mcp-defer/linux-x64/bin/mcp-defer",
                None
            )
            .2,
            "bunx mcp-defer"
        );
        assert_eq!(
            of("/home/me/.cache/uv/archive-v0/AbCdE/bin/mcp-defer", None),
            (
                "uvx".into(),
                vec!["mcp-defer".into()],
                "uvx mcp-defer".into()
            )
        );
        assert_eq!(
            of("/home/me/.local/pipx/.cache/0a1b2c/bin/mcp-defer", None).2,
            "pipx run mcp-defer"
        );
    }

    #[test]
    fn an_installed_binary_is_registered_by_its_path() {
        for path in [
            "/home/me/.cargo/bin/mcp-defer",
            "/usr/lib/node_modules/mcp-defer/node_modules/@mcp-defer/linux-x64/bin/mcp-defer",
            "/home/me/.local/share/uv/tools/mcp-defer/bin/mcp-defer",
            "/home/me/.local/pipx/venvs/mcp-defer/bin/mcp-defer",
        ] {
            assert_eq!(
                of(path, Some("npm/10.9.2 node/v22.12.0")),
                (path.into(), Vec::new(), "mcp-defer".into())
            );
        }
    }
}
