//! The market map a front end asks of the desk: the agent's `get_market_map` function over
//! the desk's market data, so the CLI, the app and the agent answer alike; and for the
//! app's map page, the limit statistics and rotation trails over a range and an industry's
//! members, from the same universe and the same engine figures.

use wyckoff_agent::ToolError;
use wyckoff_market::concepts::ConceptStrength;
use wyckoff_market::membership::StockMembership;
use wyckoff_market::{MarketError, StockCode};
use wyckoff_tools::market_map::{self, IndustryMembers, MarketMap, MarketMapSeries};

use crate::Desk;

impl Desk {
    /// The day's limit statistics (涨停/跌停/炸板/一字板, the 连板 ladder, 涨停溢价, seal
    /// rate) as of the last trading day on or before `as_of` (the newest when `None`), with
    /// notes on the inputs that fell back.
    pub async fn market_map(&self, as_of: Option<u32>) -> Result<MarketMap, ToolError> {
        market_map::market_map(self.market(), as_of).await
    }

    /// The limit statistics of the last `days` trading days up to `as_of`'s (the newest when
    /// `None`), and each industry's rotation trail over the last 20 of them.
    pub async fn market_map_series(
        &self,
        as_of: Option<u32>,
        days: usize,
    ) -> Result<MarketMapSeries, ToolError> {
        market_map::market_series(self.market(), as_of, days).await
    }

    /// The members of `industry` on `as_of`'s trading day (the newest when `None`): each
    /// one's name then, day and 5-day return, traded value and whether it closed limit-up.
    pub async fn industry_members(
        &self,
        industry: &str,
        as_of: Option<u32>,
    ) -> Result<IndustryMembers, ToolError> {
        market_map::industry_members(self.market(), industry, as_of).await
    }

    /// `code`'s industry and concept and style blocks as of `as_of` (the latest loads when
    /// `None`), with the loads they were read from and whether a later one stood in.
    pub async fn stock_membership(
        &self,
        code: &str,
        as_of: Option<u32>,
    ) -> Result<StockMembership, MarketError> {
        let code = StockCode::parse(code)?;
        Ok(self
            .market()
            .industries()
            .membership_of(code.digits(), as_of)
            .await?)
    }

    /// Each concept block's 5-day return against the market's on the last cached trading
    /// day on or before `as_of` (the newest when `None`), strongest first.
    pub async fn concept_strength(
        &self,
        as_of: Option<u32>,
    ) -> Result<ConceptStrength, MarketError> {
        self.market().concept_strength(as_of).await
    }
}
