//! The strategy decision's suggested sizes, as `wyckoff run` prints them when a
//! `generate_strategy_decision` task it started completes: one line per buy the decision may
//! propose (an add to a holding, a reviewed candidate) with the shares the risk rules give,
//! the stop and where it came from, the risk in yuan and percent, the caps that bound and
//! the limits the buy breaks — the figures the task's result carries, nothing recomputed.

use serde_json::Value;
use wyckoff_protocol::{SizedBuy, SizedBuyKind};

/// The decision tool's name.
pub const STRATEGY: &str = "generate_strategy_decision";

fn yuan(fen: i64) -> String {
    format!("{:.2}", fen as f64 / 100.0)
}

/// Each buy a decision's result sizes: the adds to holdings, then the candidates, in the
/// result's order. A row whose size is not the documented shape is left out (and logged),
/// not guessed at.
pub fn sized_buys(result: &Value) -> Vec<SizedBuy> {
    let mut out = Vec::new();
    for (key, kind) in [
        ("holding_decisions", SizedBuyKind::Add),
        ("candidate_facts", SizedBuyKind::Candidate),
    ] {
        for row in result
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(size) = row.get("suggested_size").filter(|s| !s.is_null()) else {
                continue;
            };
            let mut size = size.clone();
            size["kind"] = serde_json::to_value(kind).unwrap_or(Value::Null);
            if size.get("code").is_none() {
                size["code"] = row.get("code").cloned().unwrap_or(Value::Null);
            }
            size["name"] = row.get("name").cloned().unwrap_or(Value::Null);
            match serde_json::from_value::<SizedBuy>(size) {
                Ok(buy) => out.push(buy),
                Err(e) => eprintln!("wyckoff: a {key} size not read: {e}"),
            }
        }
    }
    out
}

/// One buy's size in words: `700 股 · 止损 12.10（2×ATR14）· 风险 980.00 元（0.96%）…`.
fn size_words(buy: &SizedBuy) -> String {
    let Some(s) = &buy.sizing else {
        return format!(
            "未计算：{}",
            buy.unavailable.as_deref().unwrap_or("没有结果")
        );
    };
    let mut out = format!(
        "{} 股 · 止损 {:.2}（{}）· 风险 {} 元（{:.2}%）",
        s.shares,
        s.stop_e6 as f64 / 1e6,
        s.stop_from,
        yuan(s.risk_fen),
        s.risk_pct
    );
    if let Some(why) = &s.why_none {
        out.push_str(&format!(" · {why}"));
    }
    if !s.bound.is_empty() {
        out.push_str(&format!(" · 受限于 {}", s.bound.join("；")));
    }
    let breaches: Vec<String> = buy.breaches.iter().map(|b| b.describe()).collect();
    if !breaches.is_empty() {
        out.push_str(&format!(" · 超限：{}", breaches.join("；")));
    }
    out
}

/// The lines for a decision's sized buys: a heading, then each sized add and candidate;
/// empty when there is none.
pub fn size_lines(buys: &[SizedBuy]) -> Vec<String> {
    let mut lines: Vec<String> = buys
        .iter()
        .map(|b| {
            format!(
                "  {} {} {}：{}",
                match b.kind {
                    SizedBuyKind::Add => "加仓",
                    SizedBuyKind::Candidate => "候选",
                },
                b.code,
                b.name.as_deref().unwrap_or(""),
                size_words(b)
            )
        })
        .collect();
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
        let buys = sized_buys(&result);
        assert_eq!(buys.len(), 2);
        assert_eq!(buys[0].kind, SizedBuyKind::Add);
        assert_eq!(buys[0].sizing.as_ref().map(|s| s.shares), Some(700));
        assert_eq!(buys[1].kind, SizedBuyKind::Candidate);
        assert_eq!(buys[1].breaches.len(), 1);
        assert_eq!(
            size_lines(&buys),
            vec![
                "攻防决策的建议仓位（按设置里的风控规则与当前账户）：".to_owned(),
                "  加仓 000338 潍柴动力：700 股 · 止损 12.10（2×ATR14）· 风险 980.00 元（0.96%） · 受限于 现金 9000.00 元：最多 700 股".to_owned(),
                "  候选 000001 平安银行：未计算：000001 没有本地K线".to_owned(),
            ]
        );
        assert!(sized_buys(&json!({"holding_decisions": []})).is_empty());
        assert!(size_lines(&[]).is_empty());
    }
}
