//! Start every server, wait until each has settled, and build the catalog: what the
//! one-shot commands (`check`, `list`, `search`) need before they print anything.

use tokio_util::sync::CancellationToken;

use super::{Event, Pool};
use crate::catalog::{Catalog, ServerKey};
use crate::config::Config;

/// A pool whose servers have all settled, and the catalog of what they listed.
pub struct Settled {
    pub pool: Pool,
    pub catalog: Catalog,
    /// Each server's handshake `instructions`, by config index.
    pub instructions: Vec<Option<String>>,
}

/// Starts the pool and waits until every server is ready, failed or disabled (each bounded
/// by its `startup_timeout`), then feeds every listed tool to a new [`Catalog`].
/// The caller ends the pool with [`Pool::shutdown`].
pub async fn settle(config: &Config, shutdown: CancellationToken) -> Settled {
    let (pool, mut events) = Pool::start(config, shutdown);
    pool.settled().await;
    let mut catalog = Catalog::new(config.settings.max_name_length);
    let mut instructions = vec![None; config.servers.len()];
    while let Ok(event) = events.try_recv() {
        let Event::Tools {
            server,
            tools,
            instructions: text,
        } = event
        else {
            continue;
        };
        let Some(cfg) = config.servers.get(server) else {
            continue;
        };
        let key = ServerKey {
            name: &cfg.name,
            prefix: &cfg.prefix,
            index: server,
        };
        catalog.update_server(key, tools);
        instructions[server] = text;
    }
    Settled {
        pool,
        catalog,
        instructions,
    }
}
