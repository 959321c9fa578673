//! E-mail channels against a real SMTP server: aiosmtpd from PyPI (installed by
//! scripts/setup into target/smtp-venv), run by tests/smtp/server.py on 127.0.0.1 with
//! AUTH required. A message is accepted with the login from the keychain, a wrong password
//! fails for good with the server's answer, a 451 is retried, a 550 fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use serde_json::{Value, json};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use wyckoff_push::{ChannelSecrets, EmailSettings, Outbox, OutboxStatus, PushError};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

struct Smtp {
    child: Child,
    addr: String,
    record: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Smtp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn smtp(user: &str, password: &str) -> Smtp {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"));
    let python = target.join("smtp-venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run scripts/setup (it installs aiosmtpd)",
        python.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("mail.jsonl");
    let mut child = Command::new(python)
        .arg(workspace().join("tests/smtp/server.py"))
        .arg(&record)
        .arg(user)
        .arg(password)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.trim().strip_prefix("listening ").unwrap().to_owned();
    Smtp {
        child,
        addr,
        record,
        _dir: dir,
    }
}

impl Smtp {
    fn mails(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

struct Password(&'static str);

impl ChannelSecrets for Password {
    fn token(&self, _channel: &str) -> Option<String> {
        Some(self.0.to_owned())
    }
    fn sign_secret(&self, _channel: &str) -> Option<String> {
        None
    }
}

async fn outbox(password: &'static str) -> (Outbox, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let pool = SqlitePoolOptions::new()
        .connect_with(
            SqliteConnectOptions::new()
                .filename(dir.path().join("w.db"))
                .create_if_missing(true),
        )
        .await
        .unwrap();
    let o = Outbox::new(pool, Duration::from_secs(10))
        .await
        .unwrap()
        .with_secrets(Arc::new(Password(password)));
    (o, dir)
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 5, 7, 0, 0).unwrap()
}

fn settings(to: &[&str]) -> EmailSettings {
    EmailSettings {
        from: "Wyckoff Desk <desk@example.com>".into(),
        to: to.iter().map(|t| (*t).to_owned()).collect(),
        username: Some("trader".into()),
    }
}

#[tokio::test]
async fn an_alert_is_mailed_with_the_login_from_the_keychain() {
    let server = smtp("trader", "pa55");
    let (o, _dir) = outbox("pa55").await;
    let url = format!("smtp+plain://{}", server.addr);
    o.add_email_channel("mail", &url, true, &settings(&["me@example.com"]), t0())
        .await
        .unwrap();
    let text = "000001 - close >= 10: close 12.60 >= 10 (data as of 2020-06-16)";
    o.enqueue_all(
        Some(4),
        &json!({"text": text, "title": "Wyckoff alert 000001"}),
        t0(),
    )
    .await
    .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Sent, "{d:?}");
    let mails = server.mails();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0]["from"], "desk@example.com");
    assert_eq!(mails[0]["to"], json!(["me@example.com"]));
    assert_eq!(mails[0]["login"], "trader");
    let data = mails[0]["data"].as_str().unwrap();
    assert!(data.contains("Subject: Wyckoff alert 000001"), "{data}");
    assert!(data.contains(text), "{data}");
    // The test message goes the same way and says what the server answered.
    let t = o.test("mail", t0()).await.unwrap();
    assert!(t.ok, "{t:?}");
    assert!(t.answer.contains("queued"), "{t:?}");
}

#[tokio::test]
async fn a_wrong_password_fails_for_good_and_a_busy_mailbox_is_retried() {
    let server = smtp("trader", "pa55");
    let (o, _dir) = outbox("wrong").await;
    let url = format!("smtp+plain://{}", server.addr);
    o.add_email_channel("mail", &url, true, &settings(&["me@example.com"]), t0())
        .await
        .unwrap();
    o.enqueue_all(None, &json!({"text": "x"}), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Failed, "{d:?}");
    assert!(
        d[0].error.as_deref().unwrap().starts_with("SMTP 535"),
        "{d:?}"
    );
    assert!(server.mails().is_empty());

    let (o, _dir2) = outbox("pa55").await;
    o.add_email_channel("busy", &url, true, &settings(&["busy@example.com"]), t0())
        .await
        .unwrap();
    o.add_email_channel("gone", &url, true, &settings(&["reject@example.com"]), t0())
        .await
        .unwrap();
    o.enqueue_all(None, &json!({"text": "x"}), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    let by = |name: &str| d.iter().find(|x| x.channel == name).unwrap().clone();
    assert_eq!(by("busy").status, OutboxStatus::Pending, "{d:?}");
    assert!(by("busy").error.unwrap().starts_with("SMTP 451"), "{d:?}");
    assert_eq!(by("gone").status, OutboxStatus::Failed, "{d:?}");
    assert!(by("gone").error.unwrap().starts_with("SMTP 550"), "{d:?}");
    // Still busy next time: kept for later, never lost.
    let d = o.deliver_due(t0() + TimeDelta::minutes(1)).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Pending);
}

#[tokio::test]
async fn smtp_urls_and_addresses_are_checked_when_added() {
    let (o, _dir) = outbox("p").await;
    let refused = |r: Result<wyckoff_push::Channel, PushError>, says: &str| {
        let e = r.unwrap_err();
        assert!(e.is_user_error() && e.to_string().contains(says), "{e}");
    };
    let s = settings(&["me@example.com"]);
    refused(
        o.add_email_channel("a", "smtp+plain://mail.example.com:25", false, &s, t0())
            .await,
        "plain-text SMTP",
    );
    refused(
        o.add_email_channel("a", "smtps://127.0.0.1:465", false, &s, t0())
            .await,
        "loopback address",
    );
    refused(
        o.add_email_channel("a", "https://smtp.example.com", false, &s, t0())
            .await,
        "must be http or https",
    );
    refused(
        o.add_email_channel("a", "smtps://smtp.example.com", false, &settings(&[]), t0())
            .await,
        "at least one recipient",
    );
    refused(
        o.add_email_channel(
            "a",
            "smtps://smtp.example.com",
            false,
            &settings(&["not an address"]),
            t0(),
        )
        .await,
        "recipient 'not an address'",
    );
    let c = o
        .add_email_channel("a", "smtps://smtp.example.com", false, &s, t0())
        .await
        .unwrap();
    assert_eq!(c.email, Some(s));
}
