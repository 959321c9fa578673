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

/// A message as a webhook receives it: with its row's delivery id.
fn with_id(mut body: Value, id: &str) -> Value {
    body["delivery_id"] = json!(id);
    body
}

/// A robot's text as sent: the message's text, then the delivery id's footer.
fn footed(text: &str, id: &str) -> String {
    format!("{text}\n\nWyckoff delivery {id}")
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 5, 7, 0, 0).unwrap()
}

#[tokio::test]
async fn a_message_is_posted_as_json_and_marked_sent() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db")).await;
    let (url, script) = server(vec![]).await;
    o.add_channel("hook", ChannelKind::Webhook, Some(&url), true, None, t0())
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
    assert_eq!(
        *script.got.lock().unwrap(),
        vec![with_id(body, &d[0].delivery_id)]
    );
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
    o.add_channel("hook", ChannelKind::Webhook, Some(&url), true, None, t0())
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
    o.add_channel("hook", ChannelKind::Webhook, Some(&url), true, None, t0())
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
    o.add_channel("hook", ChannelKind::Webhook, Some(&url), true, None, t0())
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
    o.add_channel("hook", ChannelKind::Webhook, Some(&url), true, None, t0())
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
        o.add_channel(
            "a",
            ChannelKind::Webhook,
            Some("ftp://example.com/x"),
            true,
            None,
            t0(),
        )
        .await,
        "must be http or https",
    );
    refused(
        o.add_channel(
            "a",
            ChannelKind::Webhook,
            Some("http://127.0.0.1:1/x"),
            false,
            None,
            t0(),
        )
        .await,
        "--allow-private",
    );
    refused(
        o.add_channel(
            "a b",
            ChannelKind::Webhook,
            Some("https://example.com/x"),
            false,
            None,
            t0(),
        )
        .await,
        "a channel name is",
    );
    assert!(o.channels().await.unwrap().is_empty());
    let (url, _script) = server(vec![]).await;
    o.add_channel("hook", ChannelKind::Webhook, Some(&url), true, None, t0())
        .await
        .unwrap();
    refused(
        o.add_channel("hook", ChannelKind::Webhook, Some(&url), true, None, t0())
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

/// A robot server that records each request's path and query with its JSON body, and
/// answers the vendor's success (or the scripted answer).
#[derive(Clone, Default)]
struct Robot {
    answers: Arc<Mutex<Vec<(u16, &'static str)>>>,
    got: Arc<Mutex<Vec<(String, Value)>>>,
    ok: &'static str,
}

async fn robot_hook(
    State(r): State<Robot>,
    uri: axum::http::Uri,
    body: axum::Json<Value>,
) -> (StatusCode, String) {
    r.got.lock().unwrap().push((uri.to_string(), body.0));
    let mut answers = r.answers.lock().unwrap();
    let (code, text) = if answers.is_empty() {
        (200, r.ok)
    } else {
        answers.remove(0)
    };
    (StatusCode::from_u16(code).unwrap(), text.to_owned())
}

async fn robot(ok: &'static str, answers: Vec<(u16, &'static str)>) -> (String, Robot) {
    let r = Robot {
        answers: Arc::new(Mutex::new(answers)),
        got: Arc::default(),
        ok,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new()
        .fallback(axum::routing::post(robot_hook))
        .with_state(r.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, r)
}

struct Keys;

impl wyckoff_push::ChannelSecrets for Keys {
    fn token(&self, channel: &str) -> Option<String> {
        Some(format!("{channel}-token"))
    }
    fn sign_secret(&self, channel: &str) -> Option<String> {
        (channel != "wecom").then(|| "SECsign".to_owned())
    }
}

#[tokio::test]
async fn each_robot_gets_its_own_format_with_its_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db"))
        .await
        .with_secrets(Arc::new(Keys));
    let (wecom, wr) = robot(r#"{"errcode":0,"errmsg":"ok"}"#, vec![]).await;
    let (ding, dr) = robot(r#"{"errcode":0,"errmsg":"ok"}"#, vec![]).await;
    let (feishu, fr) = robot(r#"{"code":0,"msg":"success","data":{}}"#, vec![]).await;
    let (tg, tr) = robot(r#"{"ok":true,"result":{}}"#, vec![]).await;
    let add = |name: &'static str, kind, base: String, chat: Option<&'static str>| {
        let o = o.clone();
        async move {
            o.add_channel(name, kind, Some(&format!("{base}/send")), true, chat, t0())
                .await
                .unwrap()
        }
    };
    add("wecom", ChannelKind::Wecom, wecom, None).await;
    add("dingtalk", ChannelKind::Dingtalk, ding, None).await;
    add("feishu", ChannelKind::Feishu, feishu, None).await;
    add("telegram", ChannelKind::Telegram, tg, Some("-100200")).await;
    let text = "000001 平安银行 — close ≥ 10: close 12.60 ≥ 10 (data as of 2020-06-16)";
    let body = json!({"type": "alert", "text": text, "title": "提醒", "data_date": "2020-06-16"});
    o.enqueue_all(Some(1), &body, t0()).await.unwrap();
    let done = o.deliver_due(t0()).await.unwrap();
    assert!(
        done.iter().all(|d| d.status == OutboxStatus::Sent),
        "{done:?}"
    );
    assert_eq!(done.len(), 4);
    let id = |channel: &str| {
        done.iter()
            .find(|d| d.channel == channel)
            .unwrap()
            .delivery_id
            .clone()
    };

    let (path, got) = wr.got.lock().unwrap()[0].clone();
    assert_eq!(path, "/send?key=wecom-token");
    assert_eq!(
        got,
        json!({"msgtype": "markdown", "markdown": {"content": footed(text, &id("wecom"))}})
    );

    let (path, got) = dr.got.lock().unwrap()[0].clone();
    let ms = t0().timestamp_millis();
    let sign = wyckoff_push::render::dingtalk_sign(ms, "SECsign");
    let query: Vec<(String, String)> =
        url::form_urlencoded::parse(path.split_once('?').unwrap().1.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(
        query,
        vec![
            ("access_token".into(), "dingtalk-token".into()),
            ("timestamp".into(), ms.to_string()),
            ("sign".into(), sign),
        ]
    );
    assert_eq!(
        got,
        json!({"msgtype": "markdown", "markdown": {"title": "提醒", "text": footed(text, &id("dingtalk"))}})
    );

    let (path, got) = fr.got.lock().unwrap()[0].clone();
    assert_eq!(path, "/send/feishu-token");
    let s = t0().timestamp();
    assert_eq!(
        got,
        json!({"msg_type": "text", "content": {"text": footed(text, &id("feishu"))}, "timestamp": s.to_string(),
               "sign": wyckoff_push::render::feishu_sign(s, "SECsign")})
    );

    let (path, got) = tr.got.lock().unwrap()[0].clone();
    assert_eq!(path, "/send/bottelegram-token/sendMessage");
    assert_eq!(
        got,
        json!({"chat_id": "-100200", "text": footed(text, &id("telegram"))})
    );
    // No token in any stored row or error.
    let rows = serde_json::to_string(&o.rows().await.unwrap()).unwrap();
    assert!(
        !rows.contains("-token") && !rows.contains("SECsign"),
        "{rows}"
    );
}

#[tokio::test]
async fn a_refusal_inside_a_200_is_a_failure_and_a_rate_limit_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db"))
        .await
        .with_secrets(Arc::new(Keys));
    let (base, r) = robot(
        r#"{"errcode":0,"errmsg":"ok"}"#,
        vec![
            (200, r#"{"errcode":45009,"errmsg":"api freq out of limit"}"#),
            (200, r#"{"errcode":93000,"errmsg":"invalid webhook url"}"#),
        ],
    )
    .await;
    o.add_channel("wecom", ChannelKind::Wecom, Some(&base), true, None, t0())
        .await
        .unwrap();
    o.enqueue_all(Some(1), &json!({"text": "a"}), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Pending);
    let d = o.deliver_due(t0() + TimeDelta::minutes(1)).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Failed);
    assert_eq!(
        d[0].error.as_deref(),
        Some(r#"HTTP 200: {"errcode":93000,"errmsg":"invalid webhook url"}"#)
    );
    assert_eq!(r.got.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_long_message_goes_to_telegram_in_numbered_parts() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db"))
        .await
        .with_secrets(Arc::new(Keys));
    let (base, r) = robot(r#"{"ok":true}"#, vec![]).await;
    o.add_channel(
        "telegram",
        ChannelKind::Telegram,
        Some(&base),
        true,
        Some("7"),
        t0(),
    )
    .await
    .unwrap();
    let lines: Vec<String> = (0..400)
        .map(|i| format!("line {i:03}: 000001 volume 3.2× the 20-day average"))
        .collect();
    let text = lines.join("\n");
    assert!(text.chars().count() > 4096);
    o.enqueue_all(Some(1), &json!({"text": text}), t0())
        .await
        .unwrap();
    let done = o.deliver_due(t0()).await.unwrap();
    let n = done.len();
    assert!(n >= 4, "{n}");
    let got = r.got.lock().unwrap();
    let mut back = Vec::new();
    for (i, (_, body)) in got.iter().enumerate() {
        let part = body["text"].as_str().unwrap();
        assert!(part.chars().count() <= 4096);
        // Each part carries its own row's delivery id in its footer, within the limit.
        let part = part
            .strip_suffix(&format!("\n\nWyckoff delivery {}", done[i].delivery_id))
            .unwrap();
        let (label, rest) = part.split_once('\n').unwrap();
        assert_eq!(label, format!("({}/{n})", i + 1));
        back.extend(rest.lines().map(str::to_owned));
    }
    assert_eq!(back, lines);
}

#[tokio::test]
async fn a_robot_without_its_token_fails_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db")).await;
    let (base, r) = robot(r#"{"errcode":0}"#, vec![]).await;
    o.add_channel("wecom", ChannelKind::Wecom, Some(&base), true, None, t0())
        .await
        .unwrap();
    o.enqueue_all(None, &json!({"text": "a"}), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Failed);
    assert!(
        d[0].error.as_deref().unwrap().contains("no token is set"),
        "{d:?}"
    );
    assert!(r.got.lock().unwrap().is_empty());
    assert!(matches!(
        o.add_channel("tg", ChannelKind::Telegram, None, false, None, t0())
            .await,
        Err(PushError::NeedsChatId)
    ));
    assert!(matches!(
        o.add_channel("hook", ChannelKind::Webhook, None, false, None, t0())
            .await,
        Err(PushError::NeedsUrl("webhook"))
    ));
    // A robot added without --url talks to the official address.
    let c = o
        .add_channel("wc", ChannelKind::Wecom, None, false, None, t0())
        .await
        .unwrap();
    assert_eq!(c.url, "https://qyapi.weixin.qq.com/cgi-bin/webhook/send");
}

#[tokio::test]
async fn each_channel_is_sent_only_the_events_it_takes() {
    use wyckoff_push::PushEvent;
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db")).await;
    let (tasks_url, tasks_got) = server(vec![]).await;
    let (alerts_url, alerts_got) = server(vec![]).await;
    o.add_channel(
        "ops",
        ChannelKind::Webhook,
        Some(&tasks_url),
        true,
        None,
        t0(),
    )
    .await
    .unwrap();
    let plain = o
        .add_channel(
            "desk",
            ChannelKind::Webhook,
            Some(&alerts_url),
            true,
            None,
            t0(),
        )
        .await
        .unwrap();
    assert_eq!(plain.events, vec![PushEvent::Alerts], "alerts by default");
    let ops = o
        .set_events(
            "ops",
            vec![PushEvent::Schedules, PushEvent::Tasks, PushEvent::Tasks],
        )
        .await
        .unwrap();
    assert_eq!(ops.events, vec![PushEvent::Tasks, PushEvent::Schedules]);
    assert_eq!(o.channel("ops").await.unwrap().events, ops.events);
    // None, or an unknown channel: refused, nothing changed.
    assert!(matches!(
        o.set_events("ops", vec![]).await,
        Err(PushError::Events(_))
    ));
    assert!(matches!(
        o.set_events("nobody", vec![PushEvent::Tasks]).await,
        Err(PushError::NotFound(_))
    ));
    assert_eq!(o.channel("ops").await.unwrap().events, ops.events);

    let task = json!({"type": "task", "text": "task done"});
    let approval = json!({"type": "approval", "text": "waiting"});
    let alert = json!({"type": "alert", "text": "000001 close ≥ 10"});
    assert_eq!(
        o.enqueue_event(PushEvent::Tasks, &task, t0())
            .await
            .unwrap(),
        vec!["ops"]
    );
    assert!(
        o.enqueue_event(PushEvent::Approvals, &approval, t0())
            .await
            .unwrap()
            .is_empty(),
        "nobody takes approvals"
    );
    assert_eq!(
        o.enqueue_all(Some(4), &alert, t0()).await.unwrap(),
        vec!["desk"]
    );
    // Each row goes to the channel that takes its kind, the alert's with its alert id.
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!((d[0].channel.as_str(), d[0].alert_id), ("ops", None));
    assert_eq!((d[1].channel.as_str(), d[1].alert_id), ("desk", Some(4)));
    assert_eq!(
        *tasks_got.got.lock().unwrap(),
        vec![with_id(task, &d[0].delivery_id)]
    );
    assert_eq!(
        *alerts_got.got.lock().unwrap(),
        vec![with_id(alert, &d[1].delivery_id)]
    );
}

/// Queueing a whole market's alerts writes their rows in batches: every body gets one row
/// a channel, in order, each with its own delivery id, across the statements' boundaries.
#[tokio::test]
async fn many_bodies_are_queued_one_row_a_channel_in_order() {
    const BODIES: usize = 700;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wyckoff.db");
    let o = outbox(&db).await;
    o.add_channel(
        "a",
        ChannelKind::Webhook,
        Some("http://127.0.0.1:9/a"),
        true,
        None,
        t0(),
    )
    .await
    .unwrap();
    o.add_channel(
        "b",
        ChannelKind::Webhook,
        Some("http://127.0.0.1:9/b"),
        true,
        None,
        t0(),
    )
    .await
    .unwrap();
    let (channels, damaged) = o
        .channels_for(wyckoff_push::PushEvent::Alerts)
        .await
        .unwrap();
    assert!(damaged.is_empty());
    let bodies: Vec<(Option<i64>, Value)> = (0..BODIES)
        .map(|i| (Some(i as i64 + 1), json!({"text": format!("alert {i}")})))
        .collect();
    let pool = SqlitePoolOptions::new()
        .connect_with(SqliteConnectOptions::new().filename(&db))
        .await
        .unwrap();
    let mut tx = pool.begin().await.unwrap();
    Outbox::enqueue_many_on(&mut tx, &channels, &bodies, t0())
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let rows = o.rows().await.unwrap();
    assert_eq!(rows.len(), BODIES * 2);
    let ids: std::collections::HashSet<&str> =
        rows.iter().map(|r| r.delivery_id.as_str()).collect();
    assert_eq!(ids.len(), rows.len(), "each row its own delivery id");
    for (i, pair) in rows.chunks(2).enumerate() {
        let mut names: Vec<&str> = pair.iter().map(|r| r.channel.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["a", "b"], "body {i}");
        for r in pair {
            assert_eq!(r.alert_id, Some(i as i64 + 1));
            assert_eq!(r.body["text"], json!(format!("alert {i}")));
            assert_eq!(r.status, OutboxStatus::Pending);
        }
    }
}
