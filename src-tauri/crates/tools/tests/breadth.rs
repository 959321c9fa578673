//! Market breadth in `get_market_overview` (include_breadth): computed from the cached
//! stock bars when enough stocks traded that day, otherwise unavailable with how many did.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::cache::BarTable;
use wyckoff_market::{MarketConfig, MarketData};

async fn offline() -> (MarketData, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(dir.path()))
        .await
        .unwrap();
    (md, dir)
}

#[tokio::test]
async fn too_few_stocks_is_unavailable_not_invented() {
    let (md, _dir) = offline().await;
    let r = wyckoff_tools::market::overview(&md, &json!({"include_breadth": true}))
        .await
        .unwrap();
    let b = &r["breadth"];
    assert_eq!(b["data_status"], "unavailable", "{b}");
    assert_eq!(b["sample_size"], 8, "the bundled stocks traded that day");
    assert!(b.get("pct_above_ma20").is_none());
    assert!(b["reason"].as_str().unwrap().contains("100"));
}

#[tokio::test]
async fn a_full_enough_market_gives_the_days_breadth() {
    let (md, _dir) = offline().await;
    // 150 synthetic (seeded, labelled) stocks on weekdays of 2024.
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
    let day = m.stocks[0].bars.last().unwrap().date;
    let r = wyckoff_tools::market::overview(&md, &json!({"include_breadth": true}))
        .await
        .unwrap();
    let b = &r["breadth"];
    assert_eq!(b["data_status"], "ok", "{b}");
    assert_eq!(b["sample_size"], 150);
    assert_eq!(b["trade_date"], wyckoff_market::date::iso(day));
    // The figures are those of the bars: count by hand.
    let ups = m
        .stocks
        .iter()
        .filter(|s| {
            let n = s.bars.len();
            s.bars[n - 1].close > s.bars[n - 2].close
        })
        .count();
    let want = ups as f64 / 150.0 * 100.0;
    assert!(
        (b["up_ratio_pct"].as_f64().unwrap() - want).abs() < 0.01,
        "{b}"
    );
    let above = m
        .stocks
        .iter()
        .filter(|s| {
            let n = s.bars.len();
            let ma20 = s.bars[n - 20..].iter().map(|b| b.close).sum::<f64>() / 20.0;
            s.bars[n - 1].close > ma20
        })
        .count();
    let want = above as f64 / 150.0 * 100.0;
    assert!(
        (b["pct_above_ma20"].as_f64().unwrap() - want).abs() < 0.01,
        "{b}"
    );
}

/// The parameter's description is what the model knows about breadth: it must name every
/// figure a computed breadth carries and the sample below which it is unavailable — and
/// no longer claim that breadth cannot be had.
#[tokio::test]
async fn the_include_breadth_description_says_what_the_tool_returns() {
    let params = wyckoff_tools::market::overview_parameters();
    let described = params["properties"]["include_breadth"]["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!described.contains("不提供"), "{described}");

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
    let figures: Vec<&String> = r["breadth"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v.is_number())
        .map(|(k, _)| k)
        .collect();
    assert!(figures.len() >= 5, "{figures:?}");
    for key in figures {
        assert!(
            described.contains(key.as_str()),
            "{key} not in: {described}"
        );
    }

    let (sparse, _dir2) = offline().await;
    let r = wyckoff_tools::market::overview(&sparse, &json!({"include_breadth": true}))
        .await
        .unwrap();
    assert_eq!(r["breadth"]["data_status"], "unavailable");
    let need = r["breadth"]["min_sample"].as_u64().unwrap();
    assert!(
        described.contains(&format!("少于 {need} 只")),
        "{described}"
    );
    assert!(described.contains("unavailable"), "{described}");
}
