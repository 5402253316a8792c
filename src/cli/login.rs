//! `mcp-defer login <server>` and `mcp-defer logout <server>`: the OAuth login of one
//! remote server from the config, stored for every later `serve`, `check` and `list`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;

use super::{load_config, runtime};
use crate::config::{Config, OAuthClient, Transport};
use crate::oauth::{Prompt, Target, TokenFile};

/// How long `login` waits for the browser to come back, by default.
const DEFAULT_TIMEOUT_SEC: u64 = 300;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The server's name in the config (`[mcp_servers.<name>]`); it must have a `url`.
    server: String,
    /// The servers.toml to use [default: $MCP_DEFER_CONFIG, ./servers.toml,
    /// $XDG_CONFIG_HOME/mcp-defer/servers.toml]
    #[arg(long, short = 'c', value_name = "PATH")]
    config: Option<PathBuf>,
    /// Seconds to wait for the browser to come back to the loopback callback.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_SEC)]
    timeout: u64,
    /// Print the URL only; never try to open a browser.
    #[arg(long)]
    no_browser: bool,
}

#[derive(Debug, clap::Args)]
pub(super) struct LogoutArgs {
    /// The server's name in the config.
    server: String,
    /// The servers.toml to use [default: $MCP_DEFER_CONFIG, ./servers.toml,
    /// $XDG_CONFIG_HOME/mcp-defer/servers.toml]
    #[arg(long, short = 'c', value_name = "PATH")]
    config: Option<PathBuf>,
}

/// The URL and OAuth settings of `name`, or an error naming what is wrong.
fn http_server<'c>(config: &'c Config, name: &str) -> anyhow::Result<(&'c str, &'c OAuthClient)> {
    let Some(server) = config.servers.iter().find(|s| s.name == name) else {
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        bail!(
            "no server '{name}' in the config{}",
            crate::suggest::hint(name, &names)
        );
    };
    match &server.transport {
        Transport::Http { url, oauth, .. } => Ok((url, oauth)),
        Transport::Stdio { .. } => {
            bail!("server '{name}' is a stdio server (`command`); only HTTP servers (`url`) log in")
        }
    }
}

pub(super) fn login(args: Args) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config)?;
    let (url, client) = http_server(&config, &args.server)?;
    let file = TokenFile::default_location()?;
    let target = Target {
        name: &args.server,
        url,
        client,
    };
    let mut prompt = Terminal {
        server: args.server.clone(),
        browser: !args.no_browser && has_display(),
    };
    runtime()?
        .block_on(crate::oauth::login(
            &target,
            &file,
            Duration::from_secs(args.timeout),
            &mut prompt,
        ))
        .map_err(|e| {
            let cause = without_html(&format!("{:#}", anyhow::Error::from(e)));
            anyhow::anyhow!("login to '{}' failed: {cause}", args.server)
        })?;
    println!(
        "Logged in to '{}'. Tokens stored in {} (mode 0600).",
        args.server,
        file.path().display()
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn logout(args: LogoutArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config)?;
    let (url, _) = http_server(&config, &args.server)?;
    let file = TokenFile::default_location()?;
    if file.remove(url)? {
        println!("Logged out of '{}': its tokens are deleted.", args.server);
    } else {
        println!("No login stored for '{}'.", args.server);
    }
    Ok(ExitCode::SUCCESS)
}

/// The error text with an HTML page in it cut off: a server that is no OAuth server
/// answers the login's requests with its web pages, which say nothing to act on.
fn without_html(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let Some(at) = ["<!doctype", "<html"]
        .iter()
        .filter_map(|m| lower.find(m))
        .min()
    else {
        return text.to_owned();
    };
    format!(
        "{} an HTML page instead of an OAuth answer: this server may need no login at all \
         (`mcp-defer check` shows `needs login` for one that does), or its OAuth endpoints are \
         elsewhere",
        text[..at].trim_end().trim_end_matches(':')
    )
}

/// Shows the URL on stdout (a script reads it there) and opens a browser when asked.
struct Terminal {
    server: String,
    browser: bool,
}

impl Prompt for Terminal {
    fn show(&mut self, authorization_url: &str, redirect_uri: &str) {
        println!(
            "To log in to '{}', open this URL in a browser:",
            self.server
        );
        println!();
        // Built from the authorization server's metadata: shown, never obeyed.
        println!("  {}", crate::printable::one_line(authorization_url));
        println!();
        println!("Waiting for the browser to come back to {redirect_uri} ...");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        if self.browser {
            open_browser(authorization_url);
        }
    }
}

/// Whether a browser could be shown: a graphical session on Linux, or macOS. Never
/// needed: the URL is printed either way, for a browser on another machine.
fn has_display() -> bool {
    cfg!(target_os = "macos")
        || ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()))
            && std::io::stdout().is_terminal()
}

/// Best effort: a missing opener only means the user opens the printed URL themselves.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

#[cfg(test)]
mod tests {
    use super::without_html;

    #[test]
    fn an_html_page_in_a_login_error_is_cut() {
        let text = "client registration failed at http://x/mcp's authorization server: \
                    Registration failed: HTTP 501 Not Implemented: <!DOCTYPE HTML>\n<html>\n\
                    <body>Error</body></html>";
        let short = without_html(text);
        assert!(!short.contains('<'), "{short}");
        assert!(short.starts_with("client registration failed"), "{short}");
        assert!(short.contains("HTTP 501 Not Implemented"), "{short}");
        assert_eq!(without_html("plain cause"), "plain cause");
    }
}
