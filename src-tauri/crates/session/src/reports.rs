//! What a front end names of the work the desk does for it (the market methods of
//! [`crate::Desk`]): the typed reports, their errors, the task names and the few pure
//! functions around them. Anything that reads the market data or starts a task is a desk
//! method; what is here needs no desk.

/// The stock page: its period, its payload and why it could not be drawn.
pub use wyckoff_tools::chart::{ChartError, Period, StockChart};

/// The stock page's payload from a market data alone, for benchmarks and end-to-end tests
/// that compare the page with what the engine draws; a front end asks [`crate::Desk::chart`].
pub use wyckoff_tools::chart::build_chart;

/// One stock's diagnosis, typed ([`crate::Desk::diagnose_stock`]).
pub use wyckoff_tools::analyze::StockDiagnosis;

/// Whether a tool's answer says its data is unavailable, and how fresh a series is.
pub use wyckoff_tools::{BarsFreshness, is_unavailable};

/// The engine's sizing of one buy: the stop chosen, the shares and every cap that bound.
pub use wyckoff_engine::sizing::{Cap as SizingCap, Sizing, Stop, StopChoice, StopSource};

/// A buy sized by its risk ([`crate::Desk::size_position`]): where each input came from,
/// the stop and the engine's sizing.
pub use wyckoff_tools::sizing::{EntrySource, FigureSource, PositionSize};

/// The market map: the day's limit statistics and sector table, the range series with the
/// rotation trails, an industry's members ([`crate::Desk::market_map`] and after).
pub use wyckoff_tools::market_map::{
    IndustryMember, IndustryMembers, MapNote, MarketMap, MarketMapSeries, RotationPoint,
    RotationTrail,
};

/// The market's breadth ([`crate::Desk::market_breadth`]).
pub use wyckoff_tools::market::MarketBreadth;

/// The portfolio diagnosed ([`crate::Desk::diagnose_portfolio`]).
pub use wyckoff_tools::portfolio::{HoldingReport, PortfolioDiagnosis};

/// A portfolio edit written, or why not ([`crate::Desk::update_portfolio`]).
pub use wyckoff_tools::portfolio::{PortfolioRefusal, UpdateError, Updated as PortfolioUpdated};

/// Sweeps and walk-forwards: the request, its plan, the stored report, and the best row
/// of a sweep by another metric (a pure function of the stored grid).
pub use wyckoff_tools::backtest::{
    BestOf, ResearchPlan, ResearchReport, ResearchRequest, best_of as sweep_best_of,
};

/// The background tasks' tool names, as their `TaskInfo::tool_name` says them.
pub use wyckoff_tools::backtest::NAME as BACKTEST_TASK;
pub use wyckoff_tools::sync::{IMPORT as IMPORT_TASK, SYNC_ALL as SYNC_ALL_TASK};

/// One step of a sync, as the stock page's progress shows it.
pub use wyckoff_tools::sync::SyncProgress;

/// Why a job did not start, and the check a stored job gets before it is saved (a
/// schedule's screen board and limit, refused as `wyckoff screen` refuses them).
pub use wyckoff_tools::jobs::{JobError, check as check_job};

/// A chart note as the agent's `annotate_chart` lists it.
pub use wyckoff_tools::annotate::describe as describe_note;

/// Ends every shell command the agent's `exec_command` still runs (their process groups),
/// for a process that is about to exit.
pub use wyckoff_tools::exec::kill_all_running as kill_running_commands;

/// The account's risk under the limits in Settings ([`crate::Desk::portfolio_risk`]).
pub use wyckoff_engine::risk_limits::{IndustryShare, PortfolioRisk, RiskLimits};
pub use wyckoff_tools::risk::{AccountRisk, EquitySource};
