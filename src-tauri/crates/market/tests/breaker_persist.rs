//! A source found unreachable by one process is skipped by the next one on the same data
//! home until its cool-down ends (the breaker lives in `wyckoff.db`), and the skip is
//! reported once, not on every read. Time is a `ManualClock`; the sources are local.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use chrono::NaiveDate;
use wyckoff_market::breaker::UNREACHABLE_COOLDOWN;
use wyckoff_market::notes::DataNote;
use wyckoff_market::sources::SourcePolicy;
use wyckoff_market::sources::eastmoney::EastmoneyConfig;
use wyckoff_market::{Clock, ManualClock, MarketConfig, MarketData, SourceSpec};

/// A port nothing listens on: connection refused.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A listener that counts the connections made to it and closes each at once.
async fn counting_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (port, count)
}

fn config(home: &std::path::Path, port: u16, clock: Arc<ManualClock>) -> MarketConfig {
    let base = format!("http://127.0.0.1:{port}");
    MarketConfig {
        sources: vec![SourceSpec::Eastmoney(
            EastmoneyConfig {
                kline_base: base.clone(),
                list_base: base,
                page_interval: Duration::ZERO,
                page_size: 100,
            },
            SourcePolicy {
                min_interval: Duration::ZERO,
                max_retries: 0,
                ..SourcePolicy::default()
            },
        )],
        fetch_on_read: true,
        http_timeout: Duration::from_secs(5),
        clock,
        ..MarketConfig::new(home)
    }
}

fn clock_at(hour: u32, min: u32) -> Arc<ManualClock> {
    Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2024, 2, 1)
            .unwrap()
            .and_hms_opt(hour, min, 0)
            .unwrap(),
    ))
}

fn skip_notes(notes: &[DataNote]) -> Vec<String> {
    notes
        .iter()
        .filter_map(|n| match n {
            DataNote::RefreshFailed { error }
                if error.contains("could not be reached recently") =>
            {
                Some(error.clone())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_unreachable_source_is_skipped_by_the_next_process_until_its_cooldown_ends() {
    let home = tempfile::tempdir().unwrap();

    // Process 1: eastmoney refuses the connection; the breaker opens and is stored.
    let first = MarketData::open_with(config(home.path(), closed_port(), clock_at(16, 0)))
        .await
        .unwrap();
    let r = first.daily_bars("000001", None).await.unwrap();
    assert!(!r.bars.is_empty(), "the cache answers");
    assert!(
        r.notes
            .iter()
            .any(|n| n.to_string().contains("cannot connect")),
        "{:?}",
        r.notes
    );
    // The failure opened the breaker: said at once, with until when.
    let said = skip_notes(&r.notes);
    assert_eq!(said.len(), 1, "{:?}", r.notes);
    assert!(
        said[0].starts_with(
            "eastmoney could not be reached recently; not tried again until 2024-02-01 16:05:00 (UTC+8)"
        ),
        "{}",
        said[0]
    );
    drop(first);

    // Process 2, a minute later, with eastmoney now pointed at a listener that counts.
    let (port, connections) = counting_listener().await;
    let second = MarketData::open_with(config(home.path(), port, clock_at(16, 1)))
        .await
        .unwrap();
    let r = second.daily_bars("000001", None).await.unwrap();
    assert!(!r.bars.is_empty());
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "the source is not contacted"
    );
    // Said once: later reads, in this process or another, are quiet about it.
    assert!(
        !r.notes
            .iter()
            .any(|n| matches!(n, DataNote::RefreshFailed { .. })),
        "{:?}",
        r.notes
    );
    let r = second.daily_bars("600519", None).await.unwrap();
    assert!(skip_notes(&r.notes).is_empty(), "{:?}", r.notes);
    assert!(
        !r.notes
            .iter()
            .any(|n| matches!(n, DataNote::RefreshFailed { .. })),
        "{:?}",
        r.notes
    );
    drop(second);
    let third = MarketData::open_with(config(home.path(), port, clock_at(16, 4)))
        .await
        .unwrap();
    let r = third.daily_bars("000001", None).await.unwrap();
    assert!(skip_notes(&r.notes).is_empty(), "{:?}", r.notes);
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    drop(third);

    // Past the cool-down the next process tries the source again.
    let later = clock_at(16, 0);
    later.advance(UNREACHABLE_COOLDOWN + Duration::from_secs(1));
    assert!(later.now() > clock_at(16, 5).now());
    let fourth = MarketData::open_with(config(home.path(), port, later))
        .await
        .unwrap();
    fourth.daily_bars("000001", None).await.unwrap();
    assert!(
        connections.load(Ordering::SeqCst) >= 1,
        "one probe after the cool-down"
    );
}
