//! `size_position` applies the market's 水温 read from cached index bars: a warm market
//! leaves the risk budget whole, a cold one allows no new buy (0 shares, bound by the
//! regime cap, and said why). A real SQLite data home over the bundled bars, offline, with
//! the SSE Composite's bars written into its cache up to the bundled last day (2020-06-16).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use wyckoff_engine::Regime;
use wyckoff_engine::sizing::Cap;
use wyckoff_market::cache::BarTable;
use wyckoff_market::{Bar, MarketData};
use wyckoff_tools::sizing::size_position;

use support::open;

/// The SSE Composite from 2019-01-01 to 2020-06-16, moving `step` points a day from
/// `start`.
async fn index_trend(md: &MarketData, start: f64, step: f64) {
    let cal = wyckoff_market::bundled::calendar().unwrap();
    let days = cal.trading_days_between(20190101, 20200616).to_vec();
    let bars: Vec<Bar> = days
        .iter()
        .enumerate()
        .map(|(i, &date)| {
            let c = start + step * i as f64;
            Bar {
                date,
                open: c - step,
                high: c + 5.0,
                low: c - 5.0,
                close: c,
                volume: 2.0e10,
                amount: 2.5e11,
                turnover: None,
            }
        })
        .collect();
    md.store()
        .upsert_bars(BarTable::Indices, "000001.SH", &bars, "test:fixture", true)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_cold_market_sizes_no_new_buy_and_a_warm_one_the_whole_budget() {
    let args = json!({"code": "000001", "equity": 100000, "max_position_pct": 100});

    // A steady bull market: RISK_ON, no regime cap.
    let (md, _dir) = open().await;
    index_trend(&md, 2500.0, 3.0).await;
    let warm = size_position(&md, &args).await.unwrap();
    assert_eq!(warm.regime, Some(Regime::RiskOn), "{warm:?}");
    assert!(warm.sizing.shares > 0, "{warm:?}");
    assert!(
        !warm
            .sizing
            .bound
            .iter()
            .any(|c| matches!(c, Cap::Regime { .. })),
        "{:?}",
        warm.sizing.bound
    );
    assert!(
        !warm
            .freshness
            .notes
            .iter()
            .any(|n| n.starts_with("水温未计入")),
        "{:?}",
        warm.freshness.notes
    );

    // A steady decline: no new buy, whatever the budget would allow.
    let (md, _dir) = open().await;
    index_trend(&md, 4000.0, -3.0).await;
    let cold = size_position(&md, &args).await.unwrap();
    let regime = cold.regime.expect("the 水温 was judged");
    assert!(
        matches!(regime, Regime::RiskOff | Regime::Crash),
        "{regime:?}"
    );
    assert_eq!(cold.sizing.shares, 0, "{cold:?}");
    assert!(
        cold.sizing.risk_shares > 0,
        "the budget alone would buy: {cold:?}"
    );
    assert_eq!(
        cold.sizing.bound,
        vec![Cap::Regime {
            regime,
            scale_pct: 0,
            budget_fen: 0,
            shares: 0
        }]
    );
    assert_eq!(
        cold.why_none.as_deref(),
        Some(format!("水温 {}，不开新仓", regime.as_str()).as_str())
    );
}
