//! The app reads `get_market_overview`'s breadth and `portfolio`'s diagnosis as typed
//! reports (the same values, read back from the JSON alike), and a stored sweep or
//! walk-forward as a typed summary (a part of `run_backtest`'s JSON); the JSON the tools
//! give the model and the CLI must stay as it was. Each case
//! is compared with the JSON recorded in `tests/golden/` (`UPDATE_GOLDEN=1` records it
//! again). A holding's diagnosis figures come from the engine: they are compared with
//! the engine's own diagnosis instead, so an engine change does not read as a tool change.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_engine::{Holding, diagnose};
use wyckoff_market::cache::BarTable;
use wyckoff_market::{ManualClock, MarketConfig, MarketData, PortfolioOp};

/// A holding's fields the `portfolio` tool copies from the engine's diagnosis.
const ENGINE_FIELDS: &[&str] = &[
    "health",
    "health_reasons",
    "pnl_pct",
    "latest_close",
    "day_change_pct",
    "ma_pattern",
    "l2_channel",
    "track",
    "accum_stage",
    "l4_triggers",
    "candidate_lane",
    "candidate_score",
    "exit_signal",
    "stop_loss_price",
    "stop_loss_status",
    "vol_ratio_20_60",
    "range_60d_pct",
    "ret_10d_pct",
    "ret_20d_pct",
    "from_year_high_pct",
    "from_year_low_pct",
    "targets",
    "diagnosis_brief",
    "formatted_text",
];

/// The bundled data with the clock at a fixed close, so freshness reads the same every day.
async fn offline() -> (MarketData, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = MarketConfig::offline(dir.path());
    cfg.clock = Arc::new(ManualClock::at_beijing(
        chrono::NaiveDate::from_ymd_opt(2020, 6, 19)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ));
    (MarketData::open_with(cfg).await.unwrap(), dir)
}

fn check(name: &str, got: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.json"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = serde_json::to_string_pretty(got).unwrap();
        std::fs::write(&path, text + "\n").unwrap();
        return;
    }
    let want: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        got,
        &want,
        "{name}: the tool's JSON changed (got {})",
        serde_json::to_string_pretty(got).unwrap()
    );
}

#[tokio::test]
async fn the_overview_says_breadth_unavailable_as_before() {
    let (md, _dir) = offline().await;
    let r = wyckoff_tools::market::overview(&md, &json!({"include_breadth": true}))
        .await
        .unwrap();
    check("overview_sparse", &r);
    typed_breadth_is_the_json(&md, &r["breadth"]).await;
}

#[tokio::test]
async fn the_overview_gives_the_days_breadth_as_before() {
    let (md, _dir) = offline().await;
    let m = market(MarketShape {
        stocks: 150,
        bars: 60,
        start: 20240102,
        seed: 9,
    });
    for s in &m.stocks {
        md.store()
            .upsert_bars(BarTable::Stocks, &s.code, &s.bars, "test:synthetic", true)
            .await
            .unwrap();
    }
    let r = wyckoff_tools::market::overview(&md, &json!({"include_breadth": true}))
        .await
        .unwrap();
    check("overview_breadth", &r["breadth"]);
    typed_breadth_is_the_json(&md, &r["breadth"]).await;
}

/// The typed breadth the app reads is the tool's `breadth`, and reads back from it.
async fn typed_breadth_is_the_json(md: &MarketData, json: &Value) {
    let typed = wyckoff_tools::market::breadth(md, None).await.unwrap();
    assert_eq!(&serde_json::to_value(&typed).unwrap(), json);
    let back: wyckoff_tools::market::MarketBreadth = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, typed);
}

#[tokio::test]
async fn an_empty_portfolio_reads_as_before() {
    let (md, _dir) = offline().await;
    let r = wyckoff_tools::portfolio::portfolio(&md, &json!({"mode": "diagnose"}))
        .await
        .unwrap();
    check("portfolio_empty", &r);
}

#[tokio::test]
async fn a_diagnosed_portfolio_reads_as_before() {
    let (md, _dir) = offline().await;
    let now = md.clock().now();
    // Two holdings with bars, one without (its row says so and the totals leave it out).
    for (code, shares, cost, buy) in [
        ("000001", 1000, 12.5, "2020-03-02"),
        ("002572", 100, 20.0, "2020-01-02"),
        ("600000", 500, 10.0, "2020-01-02"),
    ] {
        md.portfolio()
            .apply(
                PortfolioOp::Add {
                    code: code.into(),
                    name: format!("name {code}"),
                    shares,
                    cost_price: cost,
                    buy_dt: Some(buy.into()),
                },
                now,
            )
            .await
            .unwrap();
    }
    md.portfolio()
        .apply(PortfolioOp::SetCash { free_cash: 5000.0 }, now)
        .await
        .unwrap();
    let mut r = wyckoff_tools::portfolio::portfolio(&md, &json!({"mode": "diagnose"}))
        .await
        .unwrap();
    // The typed report the app reads is exactly the tool's JSON, and reads back from it.
    let view = md.portfolio().view().await.unwrap();
    let typed = wyckoff_tools::portfolio::diagnose_all(&md, &view)
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), r);
    let back: wyckoff_tools::portfolio::PortfolioDiagnosis =
        serde_json::from_value(r.clone()).unwrap();
    assert_eq!(back, typed);
    assert!(back.diagnostics.iter().any(|h| h.diagnosis.is_none()));
    let rows = r["diagnostics"].as_array_mut().unwrap();
    assert_eq!(rows.len(), 3);
    for row in rows.iter_mut() {
        let code = row["code"].as_str().unwrap().to_owned();
        let bars = md.daily_bars(&code, None).await.unwrap().bars;
        let row = row.as_object_mut().unwrap();
        if bars.is_empty() {
            for k in ENGINE_FIELDS {
                assert!(!row.contains_key(*k), "{code} has no bars, yet {k}");
            }
            continue;
        }
        let holding = Holding {
            cost: row["cost"].as_f64(),
            buy_dt: wyckoff_market::date::parse_date(row["buy_dt"].as_str().unwrap()),
        };
        let name = row["name"].as_str().unwrap().to_owned();
        let mut engine =
            serde_json::to_value(diagnose(&code, &name, &bars, &holding, None)).unwrap();
        round(&mut engine);
        for k in ENGINE_FIELDS {
            let got = row.remove(*k).unwrap_or_else(|| panic!("{code}: no {k}"));
            assert_eq!(got, engine[*k], "{code}: {k}");
        }
    }
    check("portfolio_diagnosed", &r);
}

/// The tools' rounding: floats to 4 decimals.
fn round(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap();
            *v = json!((x * 1e4).round() / 1e4);
        }
        Value::Array(a) => a.iter_mut().for_each(round),
        Value::Object(o) => o.values_mut().for_each(round),
        _ => {}
    }
}

/// Every key of `part` is in `whole` with the same value (arrays element by element).
fn is_part_of(part: &Value, whole: &Value, at: &str) {
    match (part, whole) {
        (Value::Object(p), Value::Object(w)) => {
            for (k, v) in p {
                let there = w
                    .get(k)
                    .unwrap_or_else(|| panic!("{at}.{k} is not in the report"));
                is_part_of(v, there, &format!("{at}.{k}"));
            }
        }
        (Value::Array(p), Value::Array(w)) => {
            assert_eq!(p.len(), w.len(), "{at}");
            for (i, (a, b)) in p.iter().zip(w).enumerate() {
                is_part_of(a, b, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(part, whole, "{at}"),
    }
}

/// The research page's summary of a stored sweep or walk-forward reads from the tool's
/// report and is a part of it, value for value; a single backtest is neither.
#[tokio::test]
async fn research_summaries_are_a_part_of_the_reports() {
    use wyckoff_tools::backtest::ResearchReport;
    let (md, _dir) = offline().await;
    let progress = wyckoff_agent::ProgressHandle::silent();
    let period = json!({"start": "2020-01-02", "end": "2020-06-16"});
    let run = |extra: Value| {
        let mut args = period.clone();
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };
    let sweep = wyckoff_tools::backtest::run(
        &md,
        &run(
            json!({"hold_days": "5,10", "stop_loss_pct": "8,5", "entry_price_mode": "open,close"}),
        ),
        &progress,
    )
    .await
    .unwrap();
    let ResearchReport::Sweep(s) = serde_json::from_value(sweep.clone()).unwrap() else {
        panic!("a sweep reads as a sweep");
    };
    assert_eq!((s.combinations, s.rows.len()), (8, 8));
    assert_eq!(s.grid.triggers.len(), 1);
    // the page lists what the runs rest on: the cache has no name history, so the ST
    // gate read today's names for these past days, and the summary says so
    assert_eq!(
        serde_json::to_value(&s.notes).unwrap(),
        sweep["notes"],
        "the summary carries the report's notes"
    );
    assert!(
        s.notes.iter().any(|n| n.contains("ST 状态取自今日名称")),
        "{:?}",
        s.notes
    );
    let typed = serde_json::to_value(ResearchReport::Sweep(s)).unwrap();
    is_part_of(&typed, &sweep, "sweep");

    let walk = wyckoff_tools::backtest::run(
        &md,
        &json!({"start": "2019-06-03", "end": "2020-06-16", "hold_days": "5,10",
            "walk_forward": {"in_sample": 60, "out_of_sample": 30}}),
        &progress,
    )
    .await
    .unwrap();
    let ResearchReport::WalkForward(w) = serde_json::from_value(walk.clone()).unwrap() else {
        panic!("a walk-forward reads as one");
    };
    assert!(!w.windows.is_empty() && !w.out_of_sample_curve.is_empty());
    assert_eq!(serde_json::to_value(&w.notes).unwrap(), walk["notes"]);
    assert!(
        w.notes.iter().any(|n| n.contains("ST 状态取自今日名称")),
        "{:?}",
        w.notes
    );
    let typed = serde_json::to_value(ResearchReport::WalkForward(w)).unwrap();
    is_part_of(&typed, &walk, "walk_forward");

    let single = wyckoff_tools::backtest::run(&md, &period, &progress)
        .await
        .unwrap();
    assert!(serde_json::from_value::<ResearchReport>(single).is_err());
}

/// The app's watchlist reads `analyze_stock`'s typed diagnosis: the same figures the tool
/// writes (to its 4 decimals), and its bars' freshness.
#[tokio::test]
async fn a_stocks_typed_diagnosis_is_the_tools() {
    use wyckoff_tools::analyze::{StockDiagnosis, diagnose_stock};
    let (md, _dir) = offline().await;
    let v = wyckoff_tools::analyze::run(&md, &json!({"code": "000001", "mode": "diagnose"}))
        .await
        .unwrap();
    let StockDiagnosis::Diagnosed(d) = diagnose_stock(&md, "000001", None, None, None)
        .await
        .unwrap()
    else {
        panic!("000001 has bundled bars");
    };
    let mut engine = serde_json::to_value(&d.diagnosis).unwrap();
    round(&mut engine);
    for k in [
        "health",
        "latest_close",
        "day_change_pct",
        "wyckoff",
        "accum_stage",
        "name",
    ] {
        assert_eq!(v[k], engine[k], "{k}");
    }
    let fresh = wyckoff_tools::BarsFreshness::of(&d.bars);
    assert_eq!(v["data_status"], fresh.data_status.as_str());
    assert_eq!(v["as_of"], json!(fresh.as_of));
    let StockDiagnosis::NoBars(none) = diagnose_stock(&md, "600000", None, None, None)
        .await
        .unwrap()
    else {
        panic!("600000 has no bundled bars");
    };
    assert!(none.bars.is_empty());
}
