//! One line of what a model-free job produced, for a schedule's run history and its
//! notification; the whole result stays with the task. Only figures the result holds are
//! quoted: a field it lacks is left out, never filled in.

use serde_json::Value;

use wyckoff_protocol::TaskRequest;

/// Candidates named in a screen's line.
const NAMED: usize = 3;
/// Held positions named in a full sync's line (the rest are counted).
const LEDGER_NAMED: usize = 10;

/// The line for `result`, the finished task's JSON; `None` when it holds none of the
/// figures (the caller keeps its own brief then).
pub fn run_summary(request: &TaskRequest, result: &Value) -> Option<String> {
    let line = match request {
        TaskRequest::Screen { .. } => screen(result),
        TaskRequest::Backtest { .. } => backtest(result),
        TaskRequest::SyncAll => sync(result),
        TaskRequest::Import { .. } => import(result),
        TaskRequest::Alerts => alerts(result),
    };
    line.filter(|l| !l.is_empty())
}

fn int(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn pct(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_f64)
        .map(|p| format!("{p:+.1}%"))
}

/// `as of 2026-12-04: 12 candidates of 5120 scanned (600519 贵州茅台, …)`.
fn screen(r: &Value) -> Option<String> {
    let candidates = r.get("candidates").and_then(Value::as_array)?;
    let mut line = match r.get("as_of").and_then(Value::as_str) {
        Some(d) => format!("as of {d}: "),
        None => String::new(),
    };
    line.push_str(&format!("{} candidates", candidates.len()));
    if let Some(total) = int(r, "universe_size") {
        line.push_str(&format!(" of {total} scanned"));
    }
    let named: Vec<String> = candidates
        .iter()
        .take(NAMED)
        .filter_map(|c| {
            let code = c.get("code")?.as_str()?;
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            Some(format!("{code} {name}").trim_end().to_owned())
        })
        .collect();
    if !named.is_empty() {
        let more = if candidates.len() > NAMED {
            ", …"
        } else {
            ""
        };
        line.push_str(&format!(" ({}{more})", named.join(", ")));
    }
    Some(line)
}

/// `2024-01-02 ~ 2024-06-28: return +3.2%, max drawdown -5.1%, 14 trades, win rate 57.1%`
/// (a scheduled backtest is one run, never a sweep).
fn backtest(r: &Value) -> Option<String> {
    let m = r.get("metrics")?;
    let mut parts = Vec::new();
    if let Some(p) = pct(m, "total_return_pct") {
        parts.push(format!("return {p}"));
    }
    if let Some(p) = pct(m, "max_drawdown_pct") {
        parts.push(format!("max drawdown {p}"));
    }
    if let Some(n) = int(m, "trades") {
        parts.push(format!("{n} trades"));
    }
    if let Some(p) = m.get("win_rate_pct").and_then(Value::as_f64) {
        parts.push(format!("win rate {p:.1}%"));
    }
    let body = parts.join(", ");
    Some(match (r.get("first_day"), r.get("last_day")) {
        (Some(Value::String(a)), Some(Value::String(b))) => format!("{a} ~ {b}: {body}"),
        _ => body,
    })
}

/// `head: 5 a, 3 b` — the counts of `keys` the result holds, each with its words.
fn with_counts(head: String, r: &Value, keys: &[(&str, &str)]) -> String {
    let said: Vec<String> = keys
        .iter()
        .filter_map(|(key, words)| int(r, key).map(|n| format!("{n} {words}")))
        .collect();
    if said.is_empty() {
        head
    } else {
        format!("{head}: {}", said.join(", "))
    }
}

/// `5120 stocks: 5100 updated, 18 up to date, 2 failed; alerts as of 2026-12-04: 3 alerts
/// fired (…)` — the alerts part when the sync ran the check.
fn sync(r: &Value) -> Option<String> {
    let total = int(r, "total")?;
    let keys = [
        ("updated", "updated"),
        ("up_to_date", "up to date"),
        ("failed", "failed"),
    ];
    let mut line = with_counts(format!("{total} stocks"), r, &keys);
    // the stock list and the name history said only when they failed: a failure there
    // leaves the bars' counts standing, and is easy to miss otherwise
    for (key, what) in [
        ("stock_list", "the stock list"),
        ("stock_history", "the stock history"),
    ] {
        if let Some(why) = r
            .get(key)
            .and_then(|v| v.get("error"))
            .and_then(Value::as_str)
        {
            line.push_str(&format!("; {what} failed: {why}"));
        }
    }
    match r.get("alerts") {
        Some(Value::Object(a)) if a.contains_key("error") => {
            let why = a.get("error").and_then(Value::as_str).unwrap_or("");
            line.push_str(&format!("; the alerts check failed: {why}"));
        }
        Some(a @ Value::Object(_)) => {
            if let Some(said) = alerts(a) {
                line.push_str(&format!("; alerts {said}"));
            }
        }
        _ => {}
    }
    if let Some(said) = r.get("ledger").and_then(ledger) {
        line.push_str(&format!("; {said}"));
    }
    Some(line)
}

/// The ledger's open positions a full sync brought along, each by code with what came of
/// it: `held positions: 510300 updated (2 new bars), 113050 failed: timeout`.
fn ledger(v: &Value) -> Option<String> {
    if let Some(why) = v.get("error").and_then(Value::as_str) {
        return Some(format!("the held positions failed: {why}"));
    }
    let outcomes = v.get("outcomes")?.as_array()?;
    if outcomes.is_empty() {
        return None;
    }
    let said: Vec<String> = outcomes
        .iter()
        .take(LEDGER_NAMED)
        .filter_map(|o| {
            let code = o.get("code")?.as_str()?;
            let status = o.get("status")?;
            let what = match status.get("type")?.as_str()? {
                "updated" => format!("updated ({} new bars)", int(status, "new_bars")?),
                "up_to_date" => "up to date".to_owned(),
                "failed" => format!("failed: {}", status.get("error")?.as_str()?),
                "not_supported" => "no daily bars".to_owned(),
                other => other.to_owned(),
            };
            Some(format!("{code} {what}"))
        })
        .collect();
    let more = if outcomes.len() > LEDGER_NAMED {
        format!(", and {} more", outcomes.len() - LEDGER_NAMED)
    } else {
        String::new()
    };
    Some(format!("held positions: {}{more}", said.join(", ")))
}

/// `3 of 4 files imported: 120 stocks, 36000 bars, 2 bad rows`.
fn import(r: &Value) -> Option<String> {
    let files = int(r, "files")?;
    let imported = int(r, "files_imported").unwrap_or(0);
    let keys = [
        ("stocks", "stocks"),
        ("bars", "bars"),
        ("bad_rows", "bad rows"),
    ];
    Some(with_counts(
        format!("{imported} of {files} files imported"),
        r,
        &keys,
    ))
}

/// `as of 2020-06-16: 2 alerts fired (000001 平安银行 — …), 1 held back by its cooldown`.
fn alerts(r: &Value) -> Option<String> {
    let fired = int(r, "fired")?;
    let mut line = match r.get("data_date").and_then(Value::as_str) {
        Some(d) => format!("as of {d}: "),
        None => String::new(),
    };
    line.push_str(&format!("{fired} alerts fired"));
    let named: Vec<&str> = r
        .get("alerts")
        .and_then(Value::as_array)
        .map(|a| a.iter().take(NAMED).filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !named.is_empty() {
        line.push_str(&format!(" ({})", named.join("; ")));
    }
    if let Some(n) = int(r, "suppressed").filter(|n| *n > 0) {
        line.push_str(&format!(", {n} held back by their cooldown"));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn screen_request() -> TaskRequest {
        TaskRequest::Screen {
            as_of: None,
            board: None,
            limit: None,
        }
    }

    #[test]
    fn each_job_is_summed_up_from_the_figures_its_result_holds() {
        let backtest = TaskRequest::Backtest {
            start: "2024-01-02".into(),
            end: "2024-06-28".into(),
            hold_days: 10,
            top_n: 4,
        };
        let cases = [
            (
                screen_request(),
                json!({"as_of": "2026-12-04", "universe_size": 5120, "candidates": [
                    {"code": "600519", "name": "贵州茅台"}, {"code": "000001", "name": "平安银行"},
                    {"code": "300750", "name": "宁德时代"}, {"code": "601318", "name": "中国平安"}]}),
                Some(
                    "as of 2026-12-04: 4 candidates of 5120 scanned (600519 贵州茅台, 000001 平安银行, 300750 宁德时代, …)",
                ),
            ),
            (
                screen_request(),
                json!({"as_of": "2026-12-04", "universe_size": 5120, "candidates": []}),
                Some("as of 2026-12-04: 0 candidates of 5120 scanned"),
            ),
            (
                backtest.clone(),
                json!({"first_day": "2024-01-02", "last_day": "2024-06-28", "metrics": {
                    "total_return_pct": 3.24, "max_drawdown_pct": -5.06, "trades": 14, "win_rate_pct": 57.14}}),
                Some(
                    "2024-01-02 ~ 2024-06-28: return +3.2%, max drawdown -5.1%, 14 trades, win rate 57.1%",
                ),
            ),
            (
                backtest.clone(),
                // No closed trade: no win rate, and none is made up.
                json!({"metrics": {"total_return_pct": 0.0, "max_drawdown_pct": 0.0, "trades": 0, "win_rate_pct": null}}),
                Some("return +0.0%, max drawdown +0.0%, 0 trades"),
            ),
            (
                TaskRequest::SyncAll,
                json!({"total": 5120, "updated": 5100, "up_to_date": 18, "failed": 2}),
                Some("5120 stocks: 5100 updated, 18 up to date, 2 failed"),
            ),
            (
                TaskRequest::SyncAll,
                json!({"total": 2, "updated": 2, "up_to_date": 0, "failed": 0, "alerts": {
                    "data_date": "2020-06-18", "fired": 1, "suppressed": 0, "alerts": [
                    "000001 平安银行 — close ≥ 10: close 12.60 ≥ 10 (data as of 2020-06-18)"]}}),
                Some(
                    "2 stocks: 2 updated, 0 up to date, 0 failed; alerts as of 2020-06-18: 1 alerts fired (000001 平安银行 — close ≥ 10: close 12.60 ≥ 10 (data as of 2020-06-18))",
                ),
            ),
            (
                TaskRequest::SyncAll,
                json!({"total": 2, "updated": 2, "up_to_date": 0, "failed": 0, "alerts": {"error": "alert store: disk I/O error"}}),
                Some(
                    "2 stocks: 2 updated, 0 up to date, 0 failed; the alerts check failed: alert store: disk I/O error",
                ),
            ),
            (
                TaskRequest::SyncAll,
                json!({"total": 2, "updated": 2, "up_to_date": 0, "failed": 0, "alerts": null}),
                Some("2 stocks: 2 updated, 0 up to date, 0 failed"),
            ),
            (
                TaskRequest::SyncAll,
                json!({"total": 2, "updated": 2, "up_to_date": 0, "failed": 0,
                    "stock_list": {"ok": false, "error": "the stock list: eastmoney: timeout"},
                    "stock_history": {"error": "tushare: token rejected"}}),
                Some(
                    "2 stocks: 2 updated, 0 up to date, 0 failed; the stock list failed: the stock list: eastmoney: timeout; the stock history failed: tushare: token rejected",
                ),
            ),
            (
                TaskRequest::SyncAll,
                json!({"total": 2, "updated": 2, "up_to_date": 0, "failed": 0,
                    "stock_list": {"ok": true, "stocks": 5120, "source": "eastmoney"},
                    "stock_history": null}),
                Some("2 stocks: 2 updated, 0 up to date, 0 failed"),
            ),
            (
                TaskRequest::SyncAll,
                json!({"total": 2, "updated": 2, "up_to_date": 0, "failed": 0,
                    "ledger": {"summary": "…", "outcomes": [
                        {"code": "510300", "status": {"type": "updated", "new_bars": 2, "fetched": 2, "rejected": []}, "last_close": "2020-06-19"},
                        {"code": "600001", "status": {"type": "up_to_date"}, "last_close": null},
                        {"code": "113050", "status": {"type": "failed", "error": "timeout"}, "last_close": null}]}}),
                Some(
                    "2 stocks: 2 updated, 0 up to date, 0 failed; held positions: 510300 updated (2 new bars), 600001 up to date, 113050 failed: timeout",
                ),
            ),
            (
                TaskRequest::SyncAll,
                json!({"total": 2, "updated": 2, "up_to_date": 0, "failed": 0,
                    "ledger": {"error": "journal: database is locked"}}),
                Some(
                    "2 stocks: 2 updated, 0 up to date, 0 failed; the held positions failed: journal: database is locked",
                ),
            ),
            (
                TaskRequest::SyncAll,
                json!({"total": 2, "updated": 2, "up_to_date": 0, "failed": 0,
                    "ledger": {"summary": "…", "outcomes": []}}),
                Some("2 stocks: 2 updated, 0 up to date, 0 failed"),
            ),
            (
                TaskRequest::Import { path: "/x".into() },
                json!({"files": 4, "files_imported": 3, "stocks": 120, "bars": 36000, "bad_rows": 2}),
                Some("3 of 4 files imported: 120 stocks, 36000 bars, 2 bad rows"),
            ),
            (
                TaskRequest::Alerts,
                json!({"data_date": "2020-06-16", "fired": 2, "suppressed": 1, "alerts": [
                    "000001 平安银行 — close ≥ 10: close 12.60 ≥ 10 (data as of 2020-06-16)",
                    "000338 潍柴动力 — any Wyckoff event: AR (distribution) on 2020-06-16 at 15.20, known on 2020-06-16 (data as of 2020-06-16)"]}),
                Some(
                    "as of 2020-06-16: 2 alerts fired (000001 平安银行 — close ≥ 10: close 12.60 ≥ 10 (data as of 2020-06-16); 000338 潍柴动力 — any Wyckoff event: AR (distribution) on 2020-06-16 at 15.20, known on 2020-06-16 (data as of 2020-06-16)), 1 held back by their cooldown",
                ),
            ),
            (
                TaskRequest::Alerts,
                json!({"data_date": null, "fired": 0, "suppressed": 0, "alerts": []}),
                Some("0 alerts fired"),
            ),
            (backtest, json!({"unexpected": true}), None),
            (screen_request(), json!("not an object"), None),
        ];
        for (request, result, want) in cases {
            assert_eq!(run_summary(&request, &result).as_deref(), want, "{result}");
        }
    }
}
