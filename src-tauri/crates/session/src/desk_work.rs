//! The work a front end asks of the desk without a model: a stock's analysis, the screen,
//! a backtest, the market overview, the stock page, the portfolio, and the background
//! jobs the overview's buttons, schedules and the research page start. Each method is the
//! agent tool's own function over the desk's market data (and its task manager), so the
//! CLI, the app and the agent answer alike, with the same JSON and the same errors; the
//! front ends never reach the tool modules. What they name of it is in [`crate::reports`].

use serde_json::{Value, json};
use wyckoff_agent::{ProgressHandle, ToolError};
use wyckoff_engine::MarketRegime;
use wyckoff_engine::funnel::FunnelResult;
use wyckoff_market::PortfolioView;
use wyckoff_protocol::{TaskInfo, TaskRequest};
use wyckoff_tools::{analyze, backtest, chart, jobs, market, portfolio, regime, screen, sizing};
use wyckoff_track::{Origin, TrackError};

use crate::Desk;
use crate::reports::{
    ChartError, JobError, MarketBreadth, Period, PortfolioDiagnosis, PortfolioUpdated,
    PositionSize, ResearchPlan, StockChart, StockDiagnosis, UpdateError,
};

impl Desk {
    /// `analyze_stock`'s answer for `args` (`code`, `mode` diagnose or price, `as_of`,
    /// `cost`, `buy_dt`, `days`), as the agent gets it.
    pub async fn analyze(&self, args: &Value) -> Result<Value, ToolError> {
        analyze::run(self.market(), args).await
    }

    /// One stock's diagnosis at its last close, typed (no holding): a stock without bars
    /// says so rather than failing.
    pub async fn diagnose_stock(&self, code: &str) -> Result<StockDiagnosis, ToolError> {
        analyze::diagnose_stock(self.market(), code, None, None, None).await
    }

    /// The whole-market funnel for `args` (`board`, `limit`, `as_of`): its typed result
    /// and `screen_stocks`' JSON of it.
    pub async fn screen(
        &self,
        args: &Value,
        progress: &ProgressHandle,
    ) -> Result<(FunnelResult, Value), ToolError> {
        let (result, mut value) = screen::screen(self.market(), args, progress).await?;
        // Each candidate with the size the risk rules in Settings suggest.
        screen::with_suggested_sizes(self.market(), &self.backtest_rules(), &result, &mut value)
            .await;
        Ok((result, value))
    }

    /// Keeps a screen's candidates for forward tracking; `None` when there were none.
    pub async fn save_screen(
        &self,
        result: &FunnelResult,
        origin: Origin,
    ) -> Result<Option<i64>, TrackError> {
        screen::save_for_tracking(self.market(), result, origin).await
    }

    /// `run_backtest`'s answer for `args`: one backtest, a sweep or a walk-forward, risk
    /// sizing under the risk rules in Settings.
    pub async fn backtest(
        &self,
        args: &Value,
        progress: &ProgressHandle,
    ) -> Result<Value, ToolError> {
        backtest::run_under(self.market(), args, progress, Some(&self.backtest_rules())).await
    }

    /// `size_position`'s answer for `args` (`code`; `equity`, `cash`, `entry`, `stop` in
    /// yuan; `risk_pct`, `max_position_pct`, `atr_k`, `stop_from`, `held_shares`), typed:
    /// the shares one buy may take by its risk, equity and cash from the ledger unless
    /// given, the risk per trade and the largest position from Settings unless given (as
    /// the agent's tool, `mcp serve` and the approvals take them).
    pub async fn size_position(&self, args: &Value) -> Result<PositionSize, ToolError> {
        sizing::size_position(
            self.market(),
            &sizing::args_under(&self.backtest_rules(), args),
        )
        .await
    }

    /// `get_market_overview`'s answer for the last cached day: the indices and 水温.
    pub async fn market_overview(&self) -> Result<Value, ToolError> {
        market::overview(self.market(), &json!({})).await
    }

    /// The market regime (水温) as of `date` (the last cached index day when `None`).
    pub async fn market_regime(
        &self,
        date: Option<u32>,
    ) -> Result<(MarketRegime, Option<String>), ToolError> {
        regime::regime_as_of(self.market(), date).await
    }

    /// The market's breadth on `date` (the last cached day when `None`), or why there is
    /// none.
    pub async fn market_breadth(&self, date: Option<u32>) -> Result<MarketBreadth, ToolError> {
        market::breadth(self.market(), date).await
    }

    /// The stock page for `code` at `period`; `as_of` (YYYYMMDD) gives the page as it
    /// stood at that close.
    pub async fn chart(
        &self,
        code: &str,
        period: Period,
        as_of: Option<u32>,
    ) -> Result<StockChart, ChartError> {
        chart::build_chart_as_of(self.market(), code, period, as_of).await
    }

    /// The portfolio's positions diagnosed as the `portfolio` tool (mode diagnose) does.
    pub async fn diagnose_portfolio(
        &self,
        view: &PortfolioView,
    ) -> Result<PortfolioDiagnosis, ToolError> {
        portfolio::diagnose_all(self.market(), view).await
    }

    /// An edit through `update_portfolio`'s validation (`action` add, update, remove or
    /// set_cash, with `items` for a batch): what was written, or the refusal that wrote
    /// nothing, as the agent's tool decides them.
    pub async fn update_portfolio(&self, args: &Value) -> Result<PortfolioUpdated, UpdateError> {
        portfolio::apply(self.market(), args).await
    }

    /// Starts `request` as a background task of no conversation (a screen, a backtest, the
    /// full-market sync — with the ledger's open positions, [`Desk::start_full_sync`] — a
    /// CSV import or an alerts check).
    pub async fn start_job(&self, request: &TaskRequest) -> Result<TaskInfo, JobError> {
        if matches!(request, TaskRequest::SyncAll) {
            return self.start_full_sync().await;
        }
        jobs::start_under(
            self.market(),
            self.services().background(),
            request,
            Some(self.backtest_rules()),
        )
        .await
    }

    /// What a sweep or walk-forward with `args` would run (combinations, each axis's
    /// values), or why it would not; dates are checked against today in Beijing.
    pub fn research_plan(&self, args: &Value) -> Result<ResearchPlan, ToolError> {
        backtest::plan_under(args, self.today(), Some(&self.backtest_rules()))
    }

    /// Starts a sweep or walk-forward as a `run_backtest` task of no conversation, checked
    /// first so that a typo is refused here rather than becoming a failed task.
    pub async fn start_research(&self, args: Value) -> Result<TaskInfo, JobError> {
        self.research_plan(&args)
            .map_err(|e| JobError::Refused(e.to_string()))?;
        let tool = backtest::tool_under(self.market().clone(), self.backtest_rules());
        self.services()
            .background()
            .start_for_user(tool, args)
            .await
            .map_err(|e| JobError::Refused(e.to_string()))
    }

    /// Today in Beijing as YYYYMMDD, by the market data's clock.
    fn today(&self) -> u32 {
        wyckoff_market::date::to_yyyymmdd(self.market().clock().now_beijing().date())
    }
}
