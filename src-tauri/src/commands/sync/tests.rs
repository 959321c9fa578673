#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wyckoff_session::domain::market::breaker::BreakerConfig;
use wyckoff_session::domain::market::sources::SourcePolicy;
use wyckoff_session::domain::market::sources::eastmoney::EastmoneyConfig;
use wyckoff_session::domain::market::{ManualClock, MarketConfig, SourceSpec};

use super::*;
use crate::commands::error::CommandErrorKind;

/// A local server answering every request with `status` and `body` (Eastmoney's kline
/// JSON), recording each request line.
async fn serve(status: u16, body: String) -> (String, Arc<Mutex<Vec<String>>>) {
    serve_after(Duration::ZERO, status, body).await
}

/// [`serve`], answering each request after `delay` (a slow vendor).
async fn serve_after(
    delay: Duration,
    status: u16,
    body: String,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 8192];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = sock.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            let head = String::from_utf8_lossy(&got);
            log.lock()
                .unwrap()
                .push(head.lines().next().unwrap_or("").to_owned());
            tokio::time::sleep(delay).await;
            let reply = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    (base, seen)
}

/// Offline data home whose only live source is Eastmoney at `base`, on Friday
/// 2020-06-19 after the close (the bundled 000001 ends on Tuesday 2020-06-16).
async fn online_at(home: &std::path::Path, base: &str) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.sources = vec![SourceSpec::Eastmoney(
        EastmoneyConfig {
            kline_base: base.to_owned(),
            list_base: base.to_owned(),
            page_interval: Duration::ZERO,
            page_size: 100,
        },
        SourcePolicy {
            min_interval: Duration::ZERO,
            max_retries: 0,
            backoff_base: Duration::from_millis(1),
            backoff_max: Duration::from_millis(5),
            breaker: BreakerConfig {
                failure_threshold: 5,
                cooldown: Duration::from_secs(60),
            },
        },
    )];
    cfg.clock = Arc::new(ManualClock::at_beijing(
        chrono::NaiveDate::from_ymd_opt(2020, 6, 19)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ));
    MarketData::open_with(cfg).await.unwrap()
}

fn kline(date: &str, close: f64) -> String {
    format!(
        "{date},{o:.2},{close:.2},{h:.2},{l:.2},100000,150000000.0,2.0,0.5,0.1,0.8",
        o = close - 0.1,
        h = close + 0.2,
        l = close - 0.2
    )
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
    let (base, seen) = serve(200, body).await;
    let md = online_at(home.path(), &base).await;

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
    assert!(seen.lock().unwrap()[0].contains("secid=0.000001"));
    let after = md.daily_bars("000001", None).await.unwrap();
    assert_eq!(after.as_of, Some(20200619));
    assert!((after.bars.last().unwrap().close - (last.close + 0.3)).abs() < 0.01);
}

#[tokio::test]
async fn a_failing_source_is_said_with_the_code_and_nothing_changes() {
    let home = tempfile::tempdir().unwrap();
    let (base, _) = serve(502, "<html>bad gateway</html>".into()).await;
    let md = online_at(home.path(), &base).await;
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
