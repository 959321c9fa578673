#![allow(clippy::unwrap_used, clippy::expect_used)]

use wyckoff_session::domain::market::MarketConfig;
use wyckoff_session::testing::eastmoney::{EastmoneyStub, kline, online_config};

use super::*;
use crate::commands::error::CommandErrorKind;

/// The market data of `home` whose only live source is Eastmoney at `server`, on a
/// Friday after the close (the bundled 000001 ends on the Tuesday before).
async fn online_at(home: &std::path::Path, server: &EastmoneyStub) -> MarketData {
    MarketData::open_with(online_config(home, server.base()))
        .await
        .unwrap()
}

#[tokio::test]
async fn one_stock_sync_reports_each_step_and_stores_the_new_bars() {
    let home = tempfile::tempdir().unwrap();
    // the cached close of the overlap day comes back unchanged: no re-base
    let cached = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap()
        .daily_bars("000001", None)
        .await
        .unwrap();
    let last = cached.bars.last().unwrap();
    assert_eq!(last.date, 20200616);
    let body = serde_json::json!({"rc": 0, "data": {"code": "000001", "klines": [
        kline("2020-06-16", last.close),
        kline("2020-06-17", last.close + 0.1),
        kline("2020-06-18", last.close + 0.2),
        kline("2020-06-19", last.close + 0.3),
    ]}})
    .to_string();
    let server = EastmoneyStub::start(200, body).await.unwrap();
    let md = online_at(home.path(), &server).await;

    let mut steps = Vec::new();
    let r = sync_one(&md, "000001", &mut |p| steps.push(p))
        .await
        .unwrap();
    assert_eq!(r.status, "updated");
    assert_eq!(r.new_bars, 3);
    assert_eq!(r.source.as_deref(), Some("eastmoney"));
    assert_eq!(r.last_date.as_deref(), Some("2020-06-19"));
    let step = |done| SyncProgress {
        index: 0,
        total: 1,
        code: "000001.SZ".into(),
        done,
    };
    assert_eq!(steps, vec![step(false), step(true)]);
    assert!(server.requests()[0].contains("secid=0.000001"));
    let after = md.daily_bars("000001", None).await.unwrap();
    assert_eq!(after.as_of, Some(20200619));
    assert!((after.bars.last().unwrap().close - (last.close + 0.3)).abs() < 0.01);
}

#[tokio::test]
async fn a_failing_source_is_said_with_the_code_and_nothing_changes() {
    let home = tempfile::tempdir().unwrap();
    let server = EastmoneyStub::start(502, "<html>bad gateway</html>".into())
        .await
        .unwrap();
    let md = online_at(home.path(), &server).await;
    let err = sync_one(&md, "000001", &mut |_| {}).await.unwrap_err();
    assert_eq!(err.kind, CommandErrorKind::Unavailable, "{err:?}");
    assert_eq!(err.code.as_deref(), Some("000001.SZ"));
    assert!(!err.message.is_empty());
    let after = md.daily_bars("000001", None).await.unwrap();
    assert_eq!(after.as_of, Some(20200616));
}

#[tokio::test]
async fn offline_and_bad_codes_are_refused_before_any_request() {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let mut steps = 0;
    let err = sync_one(&md, "000001", &mut |_| steps += 1)
        .await
        .unwrap_err();
    assert_eq!(err.kind, CommandErrorKind::Offline, "{err:?}");
    let err = sync_one(&md, "12ab", &mut |_| steps += 1)
        .await
        .unwrap_err();
    assert_eq!(err.kind, CommandErrorKind::InvalidInput, "{err:?}");
    assert_eq!(steps, 0);
}
