//! Why `serve --http` refuses to start: the bind and token rules, each naming its fix.

use std::net::SocketAddr;

/// Why `serve --http` cannot start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    #[error(
        "refusing to serve on {addr} without auth: anyone who can reach it could call every \
         configured server. Set `tokens_env = \"VAR\"` or `token_file = \"path\"` under \
         [settings.http] in {config}, or bind 127.0.0.1"
    )]
    OpenBind { addr: SocketAddr, config: String },
    #[error(
        "[settings.http] tokens_env = \"{var}\": the variable is unset or holds no token; \
         export {var}=<token>"
    )]
    NoTokenInEnv { var: String },
    #[error("[settings.http] token_file = \"{path}\": cannot read it: {cause}")]
    TokenFile { path: String, cause: std::io::Error },
    #[error("[settings.http] token_file = \"{path}\" holds no token; write one a line")]
    NoTokenInFile { path: String },
}
