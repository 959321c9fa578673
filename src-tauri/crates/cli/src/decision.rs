//! The strategy decision's suggested sizes, as `wyckoff run` prints them when a
//! `generate_strategy_decision` task it started completes: one line per buy the decision may
//! propose (an add to a holding, a reviewed candidate) with the shares the risk rules give,
//! the stop and where it came from, the risk in yuan and percent, the caps that bound and
//! the limits the buy breaks — the figures the task's result carries, nothing recomputed.

use serde_json::Value;

/// The decision tool's name.
pub const STRATEGY: &str = "generate_strategy_decision";

fn yuan(fen: i64) -> String {
    format!("{:.2}", fen as f64 / 100.0)
}

/// One buy's size in words: `700 股 · 止损 12.10（2×ATR14）· 风险 980.00 元（0.96%）…`.
fn size_words(size: &Value) -> String {
    let Some(s) = size.get("sizing").filter(|s| !s.is_null()) else {
        return format!(
            "未计算：{}",
            size.get("unavailable")
                .and_then(Value::as_str)
                .unwrap_or("没有结果")
        );
    };
    let int = |k: &str| s.get(k).and_then(Value::as_i64).unwrap_or(0);
    let mut out = format!(
        "{} 股 · 止损 {:.2}（{}）· 风险 {} 元（{:.2}%）",
        int("shares"),
        int("stop_e6") as f64 / 1e6,
        s.get("stop_from").and_then(Value::as_str).unwrap_or(""),
        yuan(int("risk_fen")),
        s.get("risk_pct").and_then(Value::as_f64).unwrap_or(0.0)
    );
    if let Some(why) = s.get("why_none").and_then(Value::as_str) {
        out.push_str(&format!(" · {why}"));
    }
    let bound: Vec<&str> = s
        .get("bound")
        .and_then(Value::as_array)
        .map(|b| b.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !bound.is_empty() {
        out.push_str(&format!(" · 受限于 {}", bound.join("；")));
    }
    let breaches: Vec<String> = size
        .get("breaches")
        .and_then(Value::as_array)
        .map(|b| {
            b.iter()
                .filter_map(|x| {
                    serde_json::from_value::<wyckoff_protocol::RiskBreach>(x.clone()).ok()
                })
                .map(|x| x.describe())
                .collect()
        })
        .unwrap_or_default();
    if !breaches.is_empty() {
        out.push_str(&format!(" · 超限：{}", breaches.join("；")));
    }
    out
}

/// The lines for a decision's result: a heading, then each sized add and candidate; empty
/// when the result carries no size.
pub fn size_lines(result: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    let rows = |key: &str| {
        result
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for d in rows("holding_decisions") {
        if let Some(size) = d.get("suggested_size") {
            lines.push(format!(
                "  加仓 {} {}：{}",
                d.get("code").and_then(Value::as_str).unwrap_or(""),
                d.get("name").and_then(Value::as_str).unwrap_or(""),
                size_words(size)
            ));
        }
    }
    for c in rows("candidate_facts") {
        if let Some(size) = c.get("suggested_size") {
            lines.push(format!(
                "  候选 {} {}：{}",
                c.get("code").and_then(Value::as_str).unwrap_or(""),
                c.get("name").and_then(Value::as_str).unwrap_or(""),
                size_words(size)
            ));
        }
    }
    if !lines.is_empty() {
        lines.insert(
            0,
            "攻防决策的建议仓位（按设置里的风控规则与当前账户）：".to_owned(),
        );
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_sized_add_and_candidate_is_one_line() {
        let sizing = json!({"shares": 700, "stop_e6": 12_100_000, "stop_from": "2×ATR14",
            "risk_fen": 98_000, "risk_pct": 0.96, "risk_budget_fen": 100_000,
            "equity_fen": 10_000_000, "proposed_risk_fen": 98_000, "proposed_risk_pct": 0.96,
            "bound": ["现金 9000.00 元：最多 700 股"], "why_none": null});
        let result = json!({
            "holding_decisions": [
                {"code": "000338", "name": "潍柴动力", "action": "add", "reason": "",
                 "suggested_size": {"code": "000338", "sizing": sizing, "breaches": [], "unavailable": null}},
                {"code": "000778", "name": "新兴铸管", "action": "keep", "reason": ""}
            ],
            "candidate_facts": [
                {"code": "000001", "name": "平安银行", "suggested_size": {"code": "000001",
                  "sizing": null, "breaches": [{"type": "positions", "count": 3, "limit": 2}],
                  "unavailable": "000001 没有本地K线"}},
                {"code": "300027", "name": "华谊兄弟"}
            ]
        });
        assert_eq!(
            size_lines(&result),
            vec![
                "攻防决策的建议仓位（按设置里的风控规则与当前账户）：".to_owned(),
                "  加仓 000338 潍柴动力：700 股 · 止损 12.10（2×ATR14）· 风险 980.00 元（0.96%） · 受限于 现金 9000.00 元：最多 700 股".to_owned(),
                "  候选 000001 平安银行：未计算：000001 没有本地K线".to_owned(),
            ]
        );
        assert!(size_lines(&json!({"holding_decisions": []})).is_empty());
    }
}
