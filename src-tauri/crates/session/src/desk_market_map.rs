//! The market map a front end asks of the desk: the agent's `get_market_map` function over
//! the desk's market data, so the CLI, the app and the agent answer alike.

use wyckoff_agent::ToolError;
use wyckoff_tools::market_map::{self, MarketMap};

use crate::Desk;

impl Desk {
    /// The day's limit statistics (涨停/跌停/炸板/一字板, the 连板 ladder, 涨停溢价, seal
    /// rate) as of the last trading day on or before `as_of` (the newest when `None`), with
    /// notes on the inputs that fell back.
    pub async fn market_map(&self, as_of: Option<u32>) -> Result<MarketMap, ToolError> {
        market_map::market_map(self.market(), as_of).await
    }
}
