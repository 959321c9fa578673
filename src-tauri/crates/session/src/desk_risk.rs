//! The account's risk a front end asks of the desk: heat, the largest industry's share,
//! positions against the limit and the brake, under the limits in Settings; and the rules
//! (risk per trade, largest position, limits) the approval of a buy is previewed with.

use wyckoff_agent::ToolError;
use wyckoff_config::settings::RiskSettings;
use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_tools::risk::{AccountRisk, RiskRules, account_risk};

use crate::Desk;

/// `x %` as basis points (validated settings are within 0–100 %).
fn bp(pct: f64) -> u32 {
    (pct * 100.0).round().clamp(0.0, 10_000.0) as u32
}

fn count(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

/// The settings' risk section as the engine's rules.
pub(crate) fn risk_rules(s: &RiskSettings) -> RiskRules {
    RiskRules {
        risk_bp: bp(s.risk_per_trade_pct),
        max_position_bp: bp(s.max_position_pct),
        limits: RiskLimits {
            max_heat_bp: bp(s.max_heat_pct),
            max_industry_bp: bp(s.max_industry_pct),
            max_positions: count(s.max_positions),
            drawdown_brake_bp: bp(s.drawdown_brake_pct),
            max_stop_outs: count(s.max_stop_outs),
            stop_out_days: count(s.stop_out_days),
        },
    }
}

/// Replaces `run_backtest` and `screen_stocks` in `registry` with ones under the risk rules
/// in Settings (`s`), as the desk's own backtests and screens run: risk sizing under its
/// limits, candidates with their suggested sizes.
pub(crate) fn register_limited_backtest(
    registry: &mut wyckoff_agent::ToolRegistry,
    md: std::sync::Arc<wyckoff_market::MarketData>,
    s: &RiskSettings,
) {
    registry.register(wyckoff_tools::backtest::tool_under(
        md.clone(),
        risk_rules(s),
    ));
    // The screen's candidates carry the size the same rules suggest.
    registry.register(wyckoff_tools::screen::tool_under(md.clone(), risk_rules(s)));
    // size_position: what a call leaves out of the risk per trade and the largest position
    // is the Settings', as mcp serve answers it.
    registry.register(wyckoff_tools::sizing::tool_under(md, risk_rules(s)));
}

impl Desk {
    /// The risk rules in Settings, as a risk-sized backtest runs under them.
    pub(crate) fn backtest_rules(&self) -> RiskRules {
        risk_rules(&self.settings().risk)
    }

    /// The account's risk now under the limits in Settings.
    pub async fn portfolio_risk(&self) -> Result<AccountRisk, ToolError> {
        let rules = risk_rules(&self.settings().risk);
        account_risk(self.market(), &rules.limits).await
    }
}
