//! Fund and bond daily bars from a local server speaking Eastmoney's kline format: the
//! request names the fund's or bond's `secid` unadjusted (`fqt=0`), the bars land in the
//! instrument store as closes in millionths, a second sync asks only from the last stored
//! day, a repo is not asked for at all, a 10xxxx bond is asked on the exchange its statement
//! named and not at all when none was named, and offline nothing is asked and the outcome
//! says so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{FixtureServer, Recorded};
use wyckoff_market::code::Exchange;
use wyckoff_market::instrument_bars::{
    InstrumentStore, InstrumentSyncStatus, LedgerCode, sync_instruments,
};
use wyckoff_market::sources::eastmoney_fund::EastmoneyFund;
use wyckoff_market::test_support::friday_after_close;
use wyckoff_market::{MarketConfig, MarketData};

/// Three days of an ETF and a bond, as Eastmoney writes them (date, open, close, high,
/// low, volume in lots, amount, amplitude, change %, change, turnover).
fn serve(srv: &FixtureServer) {
    srv.set_dynamic(Arc::new(|r: &Recorded| {
        let secid = r.param("secid")?;
        let beg: u32 = r.param("beg")?.parse().ok()?;
        let rows: &[(u32, &str)] = match secid.as_str() {
            "1.510300" => &[
                (
                    20200615,
                    "2020-06-15,3.950,3.912,3.960,3.900,4520000,1.77e9,1.5,-1.0,-0.04,0.9",
                ),
                (
                    20200616,
                    "2020-06-16,3.930,4.010,4.020,3.925,5120000,2.03e9,2.4,2.5,0.098,1.1",
                ),
                (
                    20200619,
                    "2020-06-19,4.050,4.087,4.100,4.030,6020000,2.45e9,1.7,0.6,0.025,1.2",
                ),
            ],
            "0.127050" => &[
                (
                    20200616,
                    "2020-06-16,115.000,116.250,116.900,114.800,21000,2.43e6,1.8,1.1,1.25,3.2",
                ),
                (
                    20200619,
                    "2020-06-19,116.300,117.400,118.000,116.000,18000,2.11e6,1.7,1.0,1.15,2.8",
                ),
            ],
            "0.101234" => &[(
                20200619,
                "2020-06-19,100.100,100.250,100.300,100.000,300,3.0e5,0.3,0.1,0.1,0.1",
            )],
            _ => return Some((200, r#"{"rc":0,"data":null}"#.to_owned())),
        };
        let lines: Vec<&str> = rows
            .iter()
            .filter(|(d, _)| *d >= beg)
            .map(|(_, l)| *l)
            .collect();
        let body = serde_json::json!({"rc": 0, "data": {"code": secid, "klines": lines}});
        Some((200, body.to_string()))
    }));
}

async fn open(home: &std::path::Path) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    // Friday 2020-06-19 16:00 Beijing: the 19th is closed
    cfg.clock = friday_after_close();
    MarketData::open_with(cfg).await.unwrap()
}

#[tokio::test]
async fn fund_and_bond_closes_come_unadjusted_and_the_next_sync_asks_from_the_last_day() {
    let srv = FixtureServer::start().await;
    serve(&srv);
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let src = EastmoneyFund::new(&srv.base("eastmoney", "live"));
    let mut codes: Vec<LedgerCode> = ["510300", "127050", "204001", "108001"]
        .map(LedgerCode::bare)
        .to_vec();
    codes.push(LedgerCode {
        code: "101234".to_owned(),
        stated: Some(Exchange::SZ),
    });
    let mut heard = Vec::new();
    let out = sync_instruments(&md, &codes, Some(&src), &mut |i, c| {
        heard.push((i, c.to_owned()))
    })
    .await
    .unwrap();
    assert_eq!(
        heard.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    assert_eq!(heard[4].1, "101234");

    let reqs = srv.requests();
    let asked: Vec<String> = reqs.iter().filter_map(|r| r.param("secid")).collect();
    assert_eq!(
        asked,
        ["1.510300", "0.127050", "0.101234"],
        "the repo and the bond of no stated exchange are not asked for"
    );
    for r in &reqs {
        assert_eq!(r.param("fqt").as_deref(), Some("0"), "unadjusted");
        assert_eq!(r.param("klt").as_deref(), Some("101"), "daily");
        assert_eq!(r.param("end").as_deref(), Some("20200619"));
    }
    assert!(
        matches!(
            out[0].status,
            InstrumentSyncStatus::Updated { new_bars: 3, .. }
        ),
        "{out:?}"
    );
    assert_eq!(out[0].last_close.as_deref(), Some("2020-06-19"));
    assert!(
        matches!(
            out[1].status,
            InstrumentSyncStatus::Updated { new_bars: 2, .. }
        ),
        "{out:?}"
    );
    assert!(
        matches!(out[2].status, InstrumentSyncStatus::NotSupported { .. }),
        "{out:?}"
    );
    match &out[3].status {
        InstrumentSyncStatus::NotSupported { reason } => {
            assert!(reason.contains("交易市场或股东代码"), "{reason}")
        }
        s => panic!("{s:?}"),
    }
    assert!(
        matches!(
            out[4].status,
            InstrumentSyncStatus::Updated { new_bars: 1, .. }
        ),
        "{out:?}"
    );

    let store = InstrumentStore::new(md.pool().clone());
    assert_eq!(
        store.closes("510300").await.unwrap(),
        [
            (20200615, 3_912_000),
            (20200616, 4_010_000),
            (20200619, 4_087_000)
        ]
    );
    assert_eq!(
        store.closes("127050").await.unwrap(),
        [(20200616, 116_250_000), (20200619, 117_400_000)]
    );
    // nothing stored as a stock series: the fund is not a stock to the market
    assert!(md.raw_closes("510300", 0..=u32::MAX).await.is_err());

    // up to date: nothing is asked again
    let again = sync_instruments(&md, &codes, Some(&src), &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!(srv.requests().len(), 3, "{again:?}");
    assert!(
        again[..2]
            .iter()
            .all(|o| o.status == InstrumentSyncStatus::UpToDate)
    );
}

#[tokio::test]
async fn a_sync_from_a_stored_day_asks_from_that_day_and_offline_asks_nothing() {
    let srv = FixtureServer::start().await;
    serve(&srv);
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let store = InstrumentStore::new(md.pool().clone());
    let bar = wyckoff_market::Bar {
        date: 20200616,
        open: 3.93,
        high: 4.02,
        low: 3.925,
        close: 4.01,
        volume: 5.12e8,
        amount: 2.03e9,
        turnover: None,
    };
    store
        .save("510300", &[bar], "eastmoney", md.clock().now())
        .await
        .unwrap();

    let offline = sync_instruments(&md, &[LedgerCode::bare("510300")], None, &mut |_, _| {})
        .await
        .unwrap();
    assert!(srv.requests().is_empty());
    match &offline[0].status {
        InstrumentSyncStatus::Failed { error } => assert!(error.contains("东方财富"), "{error}"),
        s => panic!("{s:?}"),
    }
    assert_eq!(offline[0].last_close.as_deref(), Some("2020-06-16"));

    let src = EastmoneyFund::new(&srv.base("eastmoney", "live"));
    let out = sync_instruments(
        &md,
        &[LedgerCode::bare("510300")],
        Some(&src),
        &mut |_, _| {},
    )
    .await
    .unwrap();
    assert_eq!(srv.requests()[0].param("beg").as_deref(), Some("20200616"));
    assert!(
        matches!(
            out[0].status,
            InstrumentSyncStatus::Updated { new_bars: 1, .. }
        ),
        "{out:?}"
    );
}
