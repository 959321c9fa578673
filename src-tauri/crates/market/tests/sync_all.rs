//! `sync --all` against a local server speaking Eastmoney's kline format: the benchmark
//! indices come first, an interrupted run leaves what it finished in the cache, and a
//! re-run asks only for what is still missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use common::{FixtureServer, Recorded};
use wyckoff_market::test_support::{eastmoney_at, friday_after_close};
use wyckoff_market::{MarketConfig, MarketData, SyncEvent, SyncPlan, SyncStatus, SyncTarget};

/// Any code: one bar per trading day in [beg, end], at the bundled close where there is
/// one (so no forward-adjustment rebase is seen), else 10.
fn serve_klines(srv: &FixtureServer) {
    let cal = wyckoff_market::bundled::calendar().unwrap();
    let mut closes: HashMap<(String, u32), f64> = HashMap::new();
    for s in wyckoff_market::bundled::daily_bars().unwrap() {
        for b in s.bars {
            closes.insert((s.code.digits().to_string(), b.date), b.close);
        }
    }
    srv.set_dynamic(Arc::new(move |r: &Recorded| {
        let secid = r.param("secid")?;
        let code = secid.split('.').nth(1)?.to_string();
        let beg: u32 = r.param("beg")?.parse().ok()?;
        let end: u32 = r.param("end")?.parse().ok()?;
        let lines: Vec<String> = cal
            .trading_days_between(beg, end)
            .iter()
            .map(|d| {
                let c = closes.get(&(code.clone(), *d)).copied().unwrap_or(10.0);
                format!(
                    "{},{c},{c},{},{},1000,{},1.0,0.0,0.0,0.5",
                    wyckoff_market::date::iso(*d),
                    c * 1.01,
                    c * 0.99,
                    c * 1000.0
                )
            })
            .collect();
        let body = serde_json::json!({"rc": 0, "data": {"code": code, "klines": lines}});
        Some((200, body.to_string()))
    }));
}

async fn open(home: &std::path::Path, srv: &FixtureServer) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.sources = vec![eastmoney_at(&srv.base("eastmoney", "live"), 100)];
    // Friday 2020-06-19 after the close: the bundled bars end on the 16th
    cfg.clock = friday_after_close();
    cfg.initial_trading_days = 5;
    MarketData::open_with(cfg).await.unwrap()
}

const LISTED: [&str; 4] = ["000001", "300750", "600519", "688981"];

/// The symbols asked for, in order; a stock's adjusted and unadjusted fetches are one.
fn secids(reqs: &[Recorded]) -> Vec<String> {
    let mut asked: Vec<String> = reqs.iter().filter_map(|r| r.param("secid")).collect();
    asked.dedup();
    asked
}

#[tokio::test]
async fn an_interrupted_sync_all_resumes_where_it_stopped() {
    let srv = FixtureServer::start().await;
    serve_klines(&srv);
    let home = tempfile::tempdir().unwrap();
    {
        // a small market: the stock list trimmed to four names
        let md = open(home.path(), &srv).await;
        let keep = LISTED.map(|c| format!("'{c}'")).join(",");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM market_stocks WHERE code NOT IN ({keep})"
        )))
        .execute(md.pool())
        .await
        .unwrap();
        md.pool().close().await;
    }
    // the whole market: 3 indices, then the 4 listed stocks and the 7 other bundled ones
    let order = [
        "1.000001", "1.000300", "0.399006", "0.000001", "0.000338", "0.000778", "0.000783",
        "0.002572", "0.300027", "0.300750", "1.600519", "1.601318", "1.603220", "1.688981",
    ];

    // run 1 is interrupted (like Ctrl-C) once five symbols have finished
    let md = open(home.path(), &srv).await;
    let plan = md.sync_plan(&SyncTarget::All).await.unwrap();
    // the 8 bundled stocks end 2020-06-16; indices and 3 listed stocks are not cached
    assert_eq!(
        plan,
        SyncPlan {
            total: 14,
            fresh: 0,
            stale: 8,
            missing: 6
        }
    );
    let stop = Arc::new(tokio::sync::Notify::new());
    let mut finished = Vec::new();
    let stopper = stop.clone();
    let mut progress = |ev: SyncEvent| {
        if let SyncEvent::Finished { outcome, total, .. } = ev {
            assert_eq!(total, order.len());
            finished.push(outcome);
            if finished.len() == 5 {
                stopper.notify_one();
            }
        }
    };
    tokio::select! {
        // the stop signal is checked first on every wake-up
        biased;
        _ = stop.notified() => {}
        r = md.sync(SyncTarget::All, &mut progress) => panic!("not interrupted: {r:?}"),
    }
    drop(md);
    assert_eq!(finished.len(), 5);
    assert!(
        finished
            .iter()
            .all(|o| matches!(o.status, SyncStatus::Updated { .. })),
        "{finished:?}"
    );

    // run 2 (its own server, so run 1's request in flight cannot be mistaken for one of
    // its own) fetches only the nine symbols run 1 did not finish
    let srv2 = FixtureServer::start().await;
    serve_klines(&srv2);
    let md = open(home.path(), &srv2).await;
    let plan = md.sync_plan(&SyncTarget::All).await.unwrap();
    assert_eq!((plan.fresh, plan.stale + plan.missing), (5, 9), "{plan:?}");
    let rep = md.sync(SyncTarget::All, &mut |_| {}).await.unwrap();
    assert_eq!(rep.outcomes.len(), order.len());
    assert_eq!(
        (rep.up_to_date, rep.updated, rep.failed),
        (5, 9, 0),
        "{rep:?}"
    );
    assert_eq!(secids(&srv2.requests())[..], order[5..]);
    // run 1 asked for indices first, then stocks by code (and perhaps the sixth when
    // it was interrupted)
    let first_run = secids(&srv.requests());
    assert_eq!(first_run[..5], order[..5]);
    assert!(first_run.len() <= 6, "{first_run:?}");
    let sse = md.index_bars("sse", None).await.unwrap();
    assert_eq!(sse.as_of, Some(20200619));
    let u = md.load_universe(None).await.unwrap();
    assert!(u.report.missing_benchmarks.is_empty());
    assert_eq!(u.universe.stocks.len(), 11);

    // run 3: everything is up to date, no request at all
    assert_eq!(md.sync_plan(&SyncTarget::All).await.unwrap().fresh, 14);
    let before = srv2.requests().len();
    let rep = md.sync(SyncTarget::All, &mut |_| {}).await.unwrap();
    assert_eq!((rep.up_to_date, rep.updated), (order.len(), 0));
    assert_eq!(srv2.requests().len(), before);
}

/// A stock a history source names as delisted is fetched up to its last day and no
/// further, counts as complete from then on (no request, no "stale"), and a read of it
/// says it was delisted and still has its name.
#[tokio::test]
async fn a_delisted_stock_is_fetched_once_up_to_its_last_day() {
    let srv = FixtureServer::start().await;
    serve_klines(&srv);
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), &srv).await;
    // Tuesday 2020-06-16 was its last day; the clock is Friday the 19th after the close
    md.history()
        .record_listings(
            &[wyckoff_market::Listing {
                code: "600087".into(),
                name: "退市长油".into(),
                status: wyckoff_market::ListStatus::Delisted,
                list_date: Some(19970610),
                delist_date: Some(20200616),
            }],
            "tushare",
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let rep = md.sync(SyncTarget::All, &mut |_| {}).await.unwrap();
    assert_eq!(rep.failed, 0, "{rep:?}");
    let asked: Vec<Recorded> = srv
        .requests()
        .into_iter()
        .filter(|r| r.param("secid").as_deref() == Some("1.600087"))
        .collect();
    assert!(!asked.is_empty(), "the delisted stock was not fetched");
    assert!(
        asked
            .iter()
            .all(|r| r.param("end").as_deref() == Some("20200616")),
        "asked past its last day: {:?}",
        asked.iter().map(|r| r.param("end")).collect::<Vec<_>>()
    );
    let bars = md.daily_bars("600087", None).await.unwrap();
    assert_eq!(bars.as_of, Some(20200616));
    assert_eq!(bars.name.as_deref(), Some("退市长油"));
    assert_eq!(
        bars.notes,
        vec![wyckoff_market::DataNote::Delisted {
            code: "600087".into(),
            last_day: "2020-06-16".into(),
        }]
    );
    // complete: the next sync asks nothing of it
    let plan = md.sync_plan(&SyncTarget::All).await.unwrap();
    assert_eq!(plan.fresh, plan.total, "{plan:?}");
    let before = srv.requests().len();
    md.sync(SyncTarget::All, &mut |_| {}).await.unwrap();
    assert_eq!(srv.requests().len(), before);
}
