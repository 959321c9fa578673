//! The outbox over a real SQLite file, sending to a local HTTP server that answers as it
//! is told: delivered, retried after a 5xx or a refused connection (also by a new process
//! on the same file), failed for good on a 4xx with the channel's answer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use serde_json::{Value, json};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use wyckoff_push::{ChannelKind, Outbox, OutboxStatus, PushError};

#[derive(Clone, Default)]
struct Script {
    /// Statuses to answer, in order; 200 once they run out.
    answers: Arc<Mutex<Vec<(u16, &'static str)>>>,
    got: Arc<Mutex<Vec<Value>>>,
}

async fn hook(State(s): State<Script>, body: axum::Json<Value>) -> (StatusCode, String) {
    s.got.lock().unwrap().push(body.0);
    let mut answers = s.answers.lock().unwrap();
    let (code, text) = if answers.is_empty() {
        (200, "ok")
    } else {
        answers.remove(0)
    };
    (StatusCode::from_u16(code).unwrap(), text.to_owned())
}

async fn serve(script: Script, listener: tokio::net::TcpListener) {
    let app = Router::new().route("/hook", post(hook)).with_state(script);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
}

async fn server(answers: Vec<(u16, &'static str)>) -> (String, Script) {
    let script = Script {
        answers: Arc::new(Mutex::new(answers)),
        ..Script::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    serve(script.clone(), listener).await;
    (url, script)
}

async fn outbox(db: &Path) -> Outbox {
    let pool = SqlitePoolOptions::new()
        .connect_with(
            SqliteConnectOptions::new()
                .filename(db)
                .create_if_missing(true),
        )
        .await
        .unwrap();
    Outbox::new(pool, Duration::from_secs(5)).await.unwrap()
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 5, 7, 0, 0).unwrap()
}

#[tokio::test]
async fn a_message_is_posted_as_json_and_marked_sent() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db")).await;
    let (url, script) = server(vec![]).await;
    o.add_channel("hook", ChannelKind::Webhook, &url, true, t0())
        .await
        .unwrap();
    let body = json!({"type": "alerts", "text": "000001 volume 3.2×", "data_date": "2020-06-16"});
    assert_eq!(
        o.enqueue_all(Some(7), &body, t0()).await.unwrap(),
        vec!["hook"]
    );
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].status, d[0].alert_id, d[0].attempts),
        (OutboxStatus::Sent, Some(7), 1)
    );
    assert_eq!(*script.got.lock().unwrap(), vec![body]);
    assert_eq!(o.statuses_for(7).await.unwrap(), vec![OutboxStatus::Sent]);
    // Nothing is sent twice.
    assert!(
        o.deliver_due(t0() + TimeDelta::hours(2))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(script.got.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_5xx_is_retried_after_the_backoff_even_by_a_new_process() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let o = outbox(&db).await;
    let (url, script) = server(vec![(503, "busy")]).await;
    o.add_channel("hook", ChannelKind::Webhook, &url, true, t0())
        .await
        .unwrap();
    o.enqueue_all(Some(1), &json!({"text": "x"}), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Pending);
    assert_eq!(d[0].error.as_deref(), Some("HTTP 503: busy"));
    let row = &o.rows().await.unwrap()[0];
    assert_eq!(row.next_attempt_at, "2026-12-05T07:00:30Z");
    // Not due one second before the backoff ends.
    assert!(
        o.deliver_due(t0() + TimeDelta::seconds(29))
            .await
            .unwrap()
            .is_empty()
    );
    drop(o);
    // Another process on the same file delivers it once it is due.
    let again = outbox(&db).await;
    let d = again
        .deliver_due(t0() + TimeDelta::seconds(30))
        .await
        .unwrap();
    assert_eq!((d[0].status, d[0].attempts), (OutboxStatus::Sent, 2));
    assert_eq!(script.got.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_channel_down_keeps_the_message_until_it_is_up() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db")).await;
    // A port nobody listens on, then a server on that very port.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let url = format!("http://{addr}/hook");
    o.add_channel("hook", ChannelKind::Webhook, &url, true, t0())
        .await
        .unwrap();
    o.enqueue_all(None, &json!({"text": "x"}), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Pending);
    assert!(
        d[0].error.as_deref().unwrap().contains("cannot reach"),
        "{d:?}"
    );
    let script = Script::default();
    serve(
        script.clone(),
        tokio::net::TcpListener::bind(addr).await.unwrap(),
    )
    .await;
    let d = o.deliver_due(t0() + TimeDelta::minutes(1)).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Sent);
    assert_eq!(script.got.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_4xx_fails_for_good_with_the_channels_answer() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db")).await;
    let (url, script) = server(vec![(
        400,
        "{\"errcode\":93000,\"errmsg\":\"invalid key\"}",
    )])
    .await;
    o.add_channel("hook", ChannelKind::Webhook, &url, true, t0())
        .await
        .unwrap();
    o.enqueue_all(Some(3), &json!({"text": "x"}), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Failed);
    assert_eq!(
        d[0].error.as_deref(),
        Some("HTTP 400: {\"errcode\":93000,\"errmsg\":\"invalid key\"}")
    );
    assert!(
        o.deliver_due(t0() + TimeDelta::days(1))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(script.got.lock().unwrap().len(), 1);
    assert_eq!(o.statuses_for(3).await.unwrap(), vec![OutboxStatus::Failed]);
}

#[tokio::test]
async fn retries_stop_after_the_last_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db")).await;
    let max = wyckoff_push::policy::MAX_ATTEMPTS as usize;
    let (url, script) = server(vec![(500, "down"); max + 1]).await;
    o.add_channel("hook", ChannelKind::Webhook, &url, true, t0())
        .await
        .unwrap();
    o.enqueue_all(None, &json!({"text": "x"}), t0())
        .await
        .unwrap();
    let mut at = t0();
    for n in 1..=max {
        let d = o.deliver_due(at).await.unwrap();
        assert_eq!(d.len(), 1, "attempt {n}");
        let want = if n == max {
            OutboxStatus::Failed
        } else {
            OutboxStatus::Pending
        };
        assert_eq!(d[0].status, want, "attempt {n}");
        at += TimeDelta::hours(2);
    }
    assert!(o.deliver_due(at).await.unwrap().is_empty());
    assert_eq!(script.got.lock().unwrap().len(), max);
}

#[tokio::test]
async fn channels_are_checked_when_added_and_a_removed_one_fails_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db")).await;
    fn refused<T: std::fmt::Debug>(r: Result<T, PushError>, says: &str) {
        let e = r.unwrap_err();
        assert!(e.is_user_error(), "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
    refused(
        o.add_channel("a", ChannelKind::Webhook, "ftp://example.com/x", true, t0())
            .await,
        "must be http or https",
    );
    refused(
        o.add_channel(
            "a",
            ChannelKind::Webhook,
            "http://127.0.0.1:1/x",
            false,
            t0(),
        )
        .await,
        "--allow-private",
    );
    refused(
        o.add_channel(
            "a b",
            ChannelKind::Webhook,
            "https://example.com/x",
            false,
            t0(),
        )
        .await,
        "a channel name is",
    );
    assert!(o.channels().await.unwrap().is_empty());
    let (url, _script) = server(vec![]).await;
    o.add_channel("hook", ChannelKind::Webhook, &url, true, t0())
        .await
        .unwrap();
    refused(
        o.add_channel("hook", ChannelKind::Webhook, &url, true, t0())
            .await,
        "already exists",
    );
    // The test message reports the answer.
    let t = o.test("hook", t0()).await.unwrap();
    assert_eq!(
        (t.http_status, t.answer.as_str(), t.ok),
        (Some(200), "ok", true)
    );
    o.enqueue_all(None, &json!({"text": "x"}), t0())
        .await
        .unwrap();
    o.remove_channel("hook").await.unwrap();
    refused(
        o.remove_channel("hook").await,
        "no push channel named 'hook'",
    );
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Failed);
    assert_eq!(
        d[0].error.as_deref(),
        Some("the channel 'hook' was removed")
    );
}
