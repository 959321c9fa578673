//! `wyckoff mcp serve`: the engine's read-only tools over MCP under the risk settings of
//! the data home served (its size_position defaults, each screen candidate's suggested size
//! and limits, a risk-sized backtest's limits), read as the app and the CLI read them.

use tokio_util::sync::CancellationToken;
use wyckoff_mcp::{HttpServer, ServeError};

use crate::Desk;

impl Desk {
    /// Serves MCP on stdin/stdout until the client closes them.
    pub async fn serve_mcp_stdio(&self) -> Result<(), ServeError> {
        let rules = crate::desk_risk::risk_rules(&self.settings().risk);
        wyckoff_mcp::serve_stdio(self.market().clone(), rules).await
    }

    /// Serves MCP on `listener` (streamable HTTP, loopback) until `stop` is cancelled.
    pub async fn serve_mcp_http(
        &self,
        listener: HttpServer,
        stop: CancellationToken,
    ) -> Result<(), ServeError> {
        let rules = crate::desk_risk::risk_rules(&self.settings().risk);
        listener.serve(self.market().clone(), rules, stop).await
    }
}
