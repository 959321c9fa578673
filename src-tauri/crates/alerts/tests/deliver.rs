//! A check's alerts and their push rows over a real SQLite file: an alert is recorded only
//! together with its outbox rows (a failure part-way leaves neither, so the next check
//! fires it again instead of holding it back by a cooldown nobody was told about), and a
//! damaged channel row is skipped and named while every other channel gets the alerts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use chrono::{TimeZone, Utc};
use wyckoff_alerts::deliver::check_and_push;
use wyckoff_alerts::{AlertStore, NewRule, validate};
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_protocol::{AlertCondition, AlertTarget, DeliveryStatus};
use wyckoff_push::{ChannelKind, Outbox};

/// 平安银行, one of the bundled stocks.
const CODE: &str = "000001";
/// Rules that all fire on the latest close.
const RULES: usize = 5;

struct Env {
    _dir: tempfile::TempDir,
    md: MarketData,
    store: AlertStore,
    outbox: Outbox,
}

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 5, 8, 0, 0).unwrap()
}

/// A port nothing listens on: each send is refused and stays pending.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(dir.path()))
        .await
        .unwrap();
    let store = AlertStore::new(md.pool().clone()).await.unwrap();
    let outbox = Outbox::new(md.pool().clone(), Duration::from_secs(5))
        .await
        .unwrap();
    let url = format!("http://127.0.0.1:{}/hook", closed_port());
    outbox
        .add_channel("desk", ChannelKind::Webhook, Some(&url), true, None, now())
        .await
        .unwrap();
    for i in 0..RULES {
        let rule = validate(
            &md,
            NewRule {
                target: AlertTarget::Stock { code: CODE.into() },
                condition: AlertCondition::PriceAbove {
                    level: 0.01 * (i + 1) as f64,
                },
                cooldown_days: 5,
            },
        )
        .unwrap();
        store.add_rule(&rule, now()).await.unwrap();
    }
    Env {
        _dir: dir,
        md,
        store,
        outbox,
    }
}

#[tokio::test]
async fn alerts_are_recorded_only_together_with_their_outbox_rows() {
    let e = env().await;
    // The database refuses the third outbox row, as a process killed part-way through
    // queueing (or a full disk) would leave it.
    sqlx::query(
        "CREATE TRIGGER cut_short BEFORE INSERT ON push_outbox WHEN (SELECT count(*) FROM push_outbox) >= 2 BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    )
    .execute(e.md.pool())
    .await
    .unwrap();
    let failed = check_and_push(&e.md, &e.store, &e.outbox, None, now()).await;
    assert!(failed.is_err(), "{failed:?}");
    // Neither the alerts nor a part of their rows were kept.
    assert!(e.store.history(100).await.unwrap().is_empty());
    assert!(e.outbox.rows().await.unwrap().is_empty());

    sqlx::query("DROP TRIGGER cut_short")
        .execute(e.md.pool())
        .await
        .unwrap();
    // The next check fires every alert again (no cooldown holds them back) and queues each.
    let run = check_and_push(&e.md, &e.store, &e.outbox, None, now())
        .await
        .unwrap();
    assert_eq!(run.report.fired.len(), RULES, "{:?}", run.report);
    assert!(run.report.suppressed.is_empty(), "{:?}", run.report);
    let rows = e.outbox.rows().await.unwrap();
    assert_eq!(rows.len(), RULES);
    for alert in e.store.history(100).await.unwrap() {
        assert_eq!(alert.delivered_to, vec!["desk".to_owned()]);
        assert_eq!(alert.delivery, DeliveryStatus::Pending);
        assert_eq!(
            rows.iter().filter(|r| r.alert_id == Some(alert.id)).count(),
            1
        );
    }
}

#[tokio::test]
async fn a_damaged_channel_row_is_skipped_and_named_and_the_others_get_the_alerts() {
    let e = env().await;
    sqlx::query(
        "INSERT INTO push_channels (name, kind, url, allow_private, created_at) VALUES ('broken', 'pager', 'https://example.com/x', 0, '2026-12-01T00:00:00Z')",
    )
    .execute(e.md.pool())
    .await
    .unwrap();
    let run = check_and_push(&e.md, &e.store, &e.outbox, None, now())
        .await
        .unwrap();
    assert_eq!(run.report.fired.len(), RULES);
    assert_eq!(run.damaged_channels.len(), 1);
    assert_eq!(run.damaged_channels[0].name, "broken");
    assert!(
        run.damaged_channels[0].why.contains("pager"),
        "{:?}",
        run.damaged_channels
    );
    let rows = e.outbox.rows().await.unwrap();
    assert_eq!(rows.len(), RULES);
    assert!(rows.iter().all(|r| r.channel == "desk"));
    assert!(
        run.report
            .fired
            .iter()
            .all(|a| a.delivered_to == vec!["desk".to_owned()]),
        "{:?}",
        run.report.fired
    );
}
