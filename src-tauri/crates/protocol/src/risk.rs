//! The account's risk limits as they reach a decision: each breached limit by name (the
//! engine's `risk_limits` decides them), and the sizing preview an approval of a buy shows.
//! Money in fen, prices in millionths of a yuan, percents as plain percents.

use serde::{Deserialize, Serialize};
use specta::Type;

/// One account limit a buy would break (or, for the brake, that already holds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RiskBreach {
    /// Open risk to the stops after the buy, as a percent of equity, above the cap.
    Heat { heat_pct: f64, limit_pct: f64 },
    /// One industry's market value after the buy, as a percent of equity, above the cap.
    Industry {
        industry: String,
        share_pct: f64,
        limit_pct: f64,
    },
    /// Positions held after the buy, more than allowed.
    Positions { count: u32, limit: u32 },
    /// The drawdown brake: NAV this far below its high (flows taken out), at or past the
    /// limit; no new buy.
    Drawdown { drawdown_pct: f64, limit_pct: f64 },
    /// The stop-out brake: this many losing sales within the last `days` calendar days,
    /// at or past the limit; no new buy.
    StopOuts { count: u32, days: u32, limit: u32 },
    /// The proposed buy's own loss at the rules' stop (both sides' fees), as a percent of
    /// equity, above the risk per trade.
    TradeRisk { risk_pct: f64, limit_pct: f64 },
    /// The position after the buy (its cost with fees, plus the shares already held at
    /// the entry), as a percent of equity, above the largest position.
    PositionSize { cost_pct: f64, limit_pct: f64 },
    /// The buy costs (fees included) more than the cash.
    Cash { cost_fen: i64, cash_fen: i64 },
}

impl RiskBreach {
    /// The limit's name (`heat`, `industry`, `positions`, `drawdown`, `stop_outs`,
    /// `trade_risk`, `position_size`, `cash`).
    pub fn name(&self) -> &'static str {
        match self {
            RiskBreach::Heat { .. } => "heat",
            RiskBreach::Industry { .. } => "industry",
            RiskBreach::Positions { .. } => "positions",
            RiskBreach::Drawdown { .. } => "drawdown",
            RiskBreach::StopOuts { .. } => "stop_outs",
            RiskBreach::TradeRisk { .. } => "trade_risk",
            RiskBreach::PositionSize { .. } => "position_size",
            RiskBreach::Cash { .. } => "cash",
        }
    }

    /// One line saying what is breached, for the CLI and the model.
    pub fn describe(&self) -> String {
        match self {
            RiskBreach::Heat {
                heat_pct,
                limit_pct,
            } => format!("总风险 {heat_pct:.2}% 超过上限 {limit_pct:.2}%"),
            RiskBreach::Industry {
                industry,
                share_pct,
                limit_pct,
            } => format!("行业「{industry}」占 {share_pct:.2}% 超过上限 {limit_pct:.2}%"),
            RiskBreach::Positions { count, limit } => {
                format!("持仓 {count} 只超过上限 {limit} 只")
            }
            RiskBreach::Drawdown {
                drawdown_pct,
                limit_pct,
            } => format!("净值回撤 {drawdown_pct:.2}% 达到刹车线 {limit_pct:.2}%，暂停新买入"),
            RiskBreach::StopOuts { count, days, limit } => {
                format!("近 {days} 天亏损卖出 {count} 次，达到 {limit} 次，暂停新买入")
            }
            RiskBreach::TradeRisk {
                risk_pct,
                limit_pct,
            } => format!("这笔止损处亏损 {risk_pct:.2}% 超过每笔风险 {limit_pct:.2}%"),
            RiskBreach::PositionSize {
                cost_pct,
                limit_pct,
            } => format!("买入后单只仓位 {cost_pct:.2}% 超过上限 {limit_pct:.2}%"),
            RiskBreach::Cash { cost_fen, cash_fen } => format!(
                "买入金额 {:.2} 元（含费用）超过现金 {:.2} 元",
                *cost_fen as f64 / 100.0,
                *cash_fen as f64 / 100.0
            ),
        }
    }
}

/// What the sizing rules give for a buy an approval asks about (worked out by the core
/// when the request is raised, never by the model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct BuySizing {
    /// The shares the rules give (a valid lot of the board, 0 when none).
    pub shares: u64,
    pub stop_e6: i64,
    /// Where the stop came from, in words (结构 / ATR / 给定).
    pub stop_from: String,
    /// Lost at the stop by the rules' shares (both sides' fees), and as a percent of equity.
    pub risk_fen: i64,
    pub risk_pct: f64,
    /// `equity × risk %`.
    pub risk_budget_fen: i64,
    pub equity_fen: i64,
    /// Lost at the stop by the proposed shares, and as a percent of equity.
    pub proposed_risk_fen: i64,
    pub proposed_risk_pct: f64,
    /// Every cap that allowed fewer shares than the risk budget, in words.
    pub bound: Vec<String>,
    /// Why the rules give no share, when they give none.
    pub why_none: Option<String>,
}

/// The approval preview of a buy (`update_portfolio` add / `record_fill` buy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct BuyPreview {
    pub code: String,
    pub name: String,
    /// What the call asks for.
    pub proposed_shares: u64,
    pub entry_e6: i64,
    /// `None` when the buy could not be sized; `unavailable` says why.
    pub sizing: Option<BuySizing>,
    pub unavailable: Option<String>,
    /// Every account limit the buy breaks.
    pub breaches: Vec<RiskBreach>,
    /// What the figures rest on (equity from the ledger or the portfolio, positions
    /// without a stop counted at full value, stocks without an industry).
    pub notes: Vec<String>,
}

/// One line of a batch `update_portfolio`, as its approval shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct BatchLine {
    /// The line's place in the call, from 1.
    pub line: u32,
    /// `add`, `update` or `remove` (the batch's action).
    pub action: String,
    pub code: String,
    pub name: String,
    /// Shares held before the line (after the batch's earlier lines); 0 when not held.
    pub held_shares: u64,
    /// Shares the line asks for (`None` for a removal, or when not given).
    pub shares: Option<u64>,
    /// An `add`'s sizing and the limits it breaks, checked on the account with the batch's
    /// earlier lines applied; `None` for an update or a removal, or a line without shares
    /// and a price (the call will refuse it).
    pub buy: Option<BuyPreview>,
}

/// The approval preview of a batch `update_portfolio` (several positions in one call): each
/// line, then what the whole batch does to the account's heat and positions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct BatchPreview {
    pub lines: Vec<BatchLine>,
    /// Open risk to the stops as a percent of equity, before and after every line.
    pub heat_before_pct: f64,
    pub heat_after_pct: f64,
    /// The heat limit, percent (0: off).
    pub max_heat_pct: f64,
    pub positions_before: u32,
    pub positions_after: u32,
    /// The positions limit (0: off).
    pub max_positions: u32,
    /// The limits the batch as a whole breaks once every line is applied (a limit it
    /// leaves over but does not raise is not counted; the brake, when it buys).
    pub breaches: Vec<RiskBreach>,
    /// What the figures rest on (said once for the batch).
    pub notes: Vec<String>,
    /// Why the account could not be read (then no line is sized and the totals are 0).
    pub unavailable: Option<String>,
}

/// Which buy of a strategy decision a size is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum SizedBuyKind {
    /// An add to a holding the decision says to add to.
    Add,
    /// A reviewed candidate the decision may open.
    Candidate,
}

/// One buy a finished strategy decision may propose, with the size the risk rules give it
/// at its last close on the current account: the figures the decision's result carries
/// (the approval's own sizing), never recomputed by the reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SizedBuy {
    pub kind: SizedBuyKind,
    pub code: String,
    #[serde(default)]
    pub name: Option<String>,
    /// The rules' answer (`shares` 0 with `why_none` when no lot fits the budget); `None`
    /// with `unavailable` saying why none could be worked out.
    #[serde(default)]
    pub sizing: Option<BuySizing>,
    /// The limits buying `sizing.shares` would break.
    #[serde(default)]
    pub breaches: Vec<RiskBreach>,
    #[serde(default)]
    pub unavailable: Option<String>,
}
