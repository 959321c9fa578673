// A risk section for test fixtures of whole Settings objects (any valid values will do;
// the backend's defaults are the Rust `RiskSettings::default`).
import type { RiskSettings } from "../bindings";

export const riskFixture: RiskSettings = {
  risk_per_trade_pct: 1,
  max_position_pct: 20,
  max_heat_pct: 6,
  max_industry_pct: 30,
  max_positions: 8,
  drawdown_brake_pct: 15,
  max_stop_outs: 3,
  stop_out_days: 10,
};
