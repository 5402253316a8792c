//! `mcp-defer serve` over stdio: through the user's hub for this config when it is on
//! (the default where the OS has one), else alone; and `serve --hub`, the hub itself.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::{serve_alone, serve_config};
use crate::config::{Config, Share};
use crate::platform::hub::HUB_SUPPORTED;
use crate::relay::{Hub, Place};

/// The variable that turns the hub on or off whatever the config says (tests, one-off runs).
const HUB_ENV: &str = "MCP_DEFER_HUB";

/// `serve` over stdio: joins (or starts) the hub of this config and relays the session to
/// it; serves alone when the hub is off or cannot be reached, saying why.
pub(super) fn serve(
    path: Option<PathBuf>,
    profile: Option<String>,
    no_hub: bool,
) -> anyhow::Result<ExitCode> {
    let config = serve_config(path, profile.clone())?;
    let Some(hub) = hub_for(&config, profile.as_deref(), no_hub) else {
        return serve_alone(config, profile);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let joined = runtime.block_on(hub.join());
    let channel = match joined {
        Ok(channel) => channel,
        Err(err) => {
            tracing::warn!(error = %err, "cannot join or start the hub; this session runs its own servers");
            drop(runtime);
            return serve_alone(config, profile);
        }
    };
    tracing::debug!(socket = %hub.place.socket().display(), "joined the hub");
    // What it took to start (arguments, config, runtime) is not touched again: the relay
    // gives back its pages now, and those of each exchange once idle (`relay::IDLE_TRIM`).
    crate::platform::trim_resident_set();
    let max = config.settings.max_message_bytes;
    let relayed = runtime.block_on(crate::relay::relay(hub, channel, max));
    // stdin may be read on a blocking thread that never returns (see `serve_alone`).
    runtime.shutdown_background();
    relayed.context("cannot write to the client")?;
    Ok(ExitCode::SUCCESS)
}

/// The hub this session should use, or `None` to serve alone: `--no-hub`, `MCP_DEFER_HUB`,
/// `[settings] hub`, and whether this OS and the hub directory allow one.
fn hub_for(config: &Config, profile: Option<&str>, no_hub: bool) -> Option<Hub> {
    let wanted = match std::env::var(HUB_ENV)
        .ok()
        .as_deref()
        .map(str::to_ascii_lowercase)
    {
        _ if no_hub => false,
        Some(v) if matches!(v.as_str(), "0" | "false" | "off" | "no") => false,
        Some(v) if matches!(v.as_str(), "1" | "true" | "on" | "yes") => true,
        _ => config.settings.hub,
    };
    if !wanted {
        return None;
    }
    if !HUB_SUPPORTED {
        tracing::info!(
            "the hub is not available on this OS yet: this session runs its own servers, one \
             mcp-defer process per session (as with `[settings] hub = false`)"
        );
        return None;
    }
    if let Some(server) = (config.enabled_servers()).find(|s| s.share == Share::Session) {
        tracing::info!(
            server = %server.name,
            "share = \"session\": this config's sessions run alone, each with its own servers"
        );
        return None;
    }
    let canonical = match config.path.canonicalize() {
        Ok(path) => path,
        Err(err) => {
            tracing::warn!(error = %err, config = %config.path.display(), "no hub: the config path cannot be resolved");
            return None;
        }
    };
    match Place::for_config(&canonical, profile) {
        Ok(place) => Some(Hub {
            place,
            config: canonical,
            profile: profile.map(str::to_owned),
        }),
        Err(err) => {
            tracing::warn!(error = %err, "no hub; this session runs its own servers");
            None
        }
    }
}

/// `serve --hub`: the hub of this config, at the place its sessions compute.
pub(super) fn serve_hub(config: Config, profile: Option<String>) -> anyhow::Result<ExitCode> {
    let canonical = config
        .path
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", config.path.display()))?;
    let place = Place::for_config(&canonical, profile.as_deref())?;
    // Many sessions at once: every core serves them, as `serve --http` does.
    let runtime = super::runtime()?;
    let served = runtime.block_on(crate::server::serve_hub(config, profile, &place.socket()));
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served?;
    Ok(ExitCode::SUCCESS)
}
