//! E-mail channels against a real SMTP server: aiosmtpd from PyPI (installed by
//! scripts/setup into target/smtp-venv), run by tests/smtp/server.py on 127.0.0.1 with
//! AUTH required, in clear, over TLS from the first byte (smtps://) or with STARTTLS
//! required (smtp://). A message is accepted with the login from the keychain, a wrong
//! password fails for good with the server's answer, a 451 is retried, a 550 fails; an
//! smtp:// channel logs in only after STARTTLS and refuses a server that does not offer it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
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
    start(user, password, None)
}

/// The server speaking TLS from the first byte with `cert` and `key` (PEM files).
fn smtps(user: &str, password: &str, cert: &Path, key: &Path) -> Smtp {
    start(user, password, Some((cert, key, "smtps")))
}

/// The server starting in clear and requiring STARTTLS (with `cert` and `key`) before
/// AUTH or a mail.
fn starttls(user: &str, password: &str, cert: &Path, key: &Path) -> Smtp {
    start(user, password, Some((cert, key, "starttls")))
}

fn start(user: &str, password: &str, tls: Option<(&Path, &Path, &str)>) -> Smtp {
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
        .args(
            tls.map(|(c, k, mode)| [c.as_os_str(), k.as_os_str(), mode.as_ref()])
                .into_iter()
                .flatten(),
        )
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
    /// The server's record lines of one kind: "mail" (accepted messages) or "auth" (every
    /// AUTH command received, noted before any check).
    fn record(&self, kind: &str) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|l| l["kind"] == kind)
            .collect()
    }

    fn mails(&self) -> Vec<Value> {
        self.record("mail")
    }

    fn auths(&self) -> Vec<Value> {
        self.record("auth")
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
        ca_cert: None,
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
    assert_eq!(mails[0]["tls"], Value::Null, "smtp+plain stays in clear");
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

/// Runs openssl in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the openssl command (package openssl) makes the test certificates");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA of our own (ca.pem) and a certificate it signed for 127.0.0.1 (server.pem,
/// server.key), as a company mail server has.
fn own_ca(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=Wyckoff Test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ],
    );
}

/// A mail server (SMTPS or STARTTLS, login trader / pa55) holding the certificate our own
/// CA signed, that CA's files kept in the returned directory.
fn own_ca_server(start: fn(&str, &str, &Path, &Path) -> Smtp) -> (Smtp, tempfile::TempDir) {
    let certs = tempfile::tempdir().unwrap();
    own_ca(certs.path());
    let server = start(
        "trader",
        "pa55",
        &certs.path().join("server.pem"),
        &certs.path().join("server.key"),
    );
    (server, certs)
}

/// Settings for me@example.com that trust the CA in `certs`.
fn trusting(certs: &tempfile::TempDir) -> EmailSettings {
    EmailSettings {
        ca_cert: Some(certs.path().join("ca.pem").to_string_lossy().into_owned()),
        ..settings(&["me@example.com"])
    }
}

#[tokio::test]
async fn a_mail_goes_over_tls_to_a_server_an_own_ca_signed_only_when_that_ca_is_trusted() {
    let (server, certs) = own_ca_server(smtps);
    let (o, _dir) = outbox("pa55").await;
    let url = format!("smtps://{}", server.addr);
    let trusted = trusting(&certs);
    o.add_email_channel("company", &url, true, &trusted, t0())
        .await
        .unwrap();
    o.add_email_channel("plain", &url, true, &settings(&["me@example.com"]), t0())
        .await
        .unwrap();

    let t = o.test("company", t0()).await.unwrap();
    assert!(t.ok, "{t:?}");
    assert!(t.answer.contains("queued"), "{t:?}");
    let mails = server.mails();
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert_eq!(mails[0]["login"], "trader");
    assert_eq!(mails[0]["tls"], "smtps");

    // Without the CA the server's certificate is not trusted: nothing is sent, and the
    // message stays in the outbox as failed with the reason (sending again cannot help).
    o.enqueue_all(Some(9), &json!({"text": "over TLS", "title": "t"}), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    let by = |name: &str| d.iter().find(|x| x.channel == name).unwrap().clone();
    assert_eq!(by("company").status, OutboxStatus::Sent, "{d:?}");
    let plain = by("plain");
    assert_eq!(plain.status, OutboxStatus::Failed, "{d:?}");
    let why = plain.error.unwrap();
    assert!(
        why.starts_with("the mail server's TLS certificate is not trusted")
            && why.contains("certificate verify failed"),
        "{why}"
    );
    let mails = server.mails();
    assert_eq!(mails.len(), 2, "{mails:?}");
    assert!(mails[1]["data"].as_str().unwrap().contains("over TLS"));
    let rows = o.rows().await.unwrap();
    let kept = rows.iter().find(|r| r.channel == "plain").unwrap();
    assert_eq!(kept.status, OutboxStatus::Failed);
    assert!(
        kept.last_error.as_deref().unwrap().contains("not trusted"),
        "{kept:?}"
    );
    let t = o.test("plain", t0()).await.unwrap();
    assert!(!t.ok && t.answer.contains("not trusted"), "{t:?}");
}

#[tokio::test]
async fn a_ca_certificate_must_be_a_readable_pem_file_given_by_its_full_path() {
    let (o, dir) = outbox("p").await;
    let not_pem = dir.path().join("ca.pem");
    std::fs::write(&not_pem, "not a certificate").unwrap();
    let cases = [
        ("ca.pem".to_owned(), "full path"),
        (
            dir.path()
                .join("missing.pem")
                .to_string_lossy()
                .into_owned(),
            "missing.pem",
        ),
        (
            not_pem.to_string_lossy().into_owned(),
            "is not a PEM certificate",
        ),
    ];
    for (path, says) in cases {
        let s = EmailSettings {
            ca_cert: Some(path.clone()),
            ..settings(&["me@example.com"])
        };
        let e = o
            .add_email_channel("mail", "smtps://smtp.example.com", false, &s, t0())
            .await
            .unwrap_err();
        assert!(
            e.is_user_error() && e.to_string().contains(says),
            "{path}: {e}"
        );
    }
    assert!(o.channels().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_smtp_url_sends_after_starttls_to_a_server_an_own_ca_signed() {
    let (server, certs) = own_ca_server(starttls);
    let (o, _dir) = outbox("pa55").await;
    let url = format!("smtp://{}", server.addr);
    let trusted = trusting(&certs);
    o.add_email_channel("company", &url, true, &trusted, t0())
        .await
        .unwrap();
    o.enqueue_all(
        Some(3),
        &json!({"text": "after STARTTLS", "title": "t"}),
        t0(),
    )
    .await
    .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Sent, "{d:?}");
    let t = o.test("company", t0()).await.unwrap();
    assert!(t.ok && t.answer.contains("queued"), "{t:?}");

    let mails = server.mails();
    assert_eq!(mails.len(), 2, "{mails:?}");
    assert!(
        mails[0]["data"]
            .as_str()
            .unwrap()
            .contains("after STARTTLS")
    );
    for m in &mails {
        assert_eq!(m["login"], "trader", "{m}");
        assert_eq!(m["tls"], "starttls", "{m}");
    }
    // The login went only over the upgraded connection, once per send.
    let auths = server.auths();
    assert_eq!(auths.len(), 2, "{auths:?}");
    assert!(auths.iter().all(|a| a["tls"] == "starttls"), "{auths:?}");
}

/// One alert sent to an `smtp://` channel "mail" at `server` trusting only the system's
/// roots, which fails for good: the outbox, why, and the outbox's directory.
async fn one_failed_send(server: &Smtp, alert: i64) -> (Outbox, String, tempfile::TempDir) {
    let (o, dir) = outbox("pa55").await;
    let url = format!("smtp://{}", server.addr);
    o.add_email_channel("mail", &url, true, &settings(&["me@example.com"]), t0())
        .await
        .unwrap();
    o.enqueue_all(Some(alert), &json!({"text": "x", "title": "t"}), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Failed, "{d:?}");
    (o, d[0].error.clone().unwrap(), dir)
}

#[tokio::test]
async fn an_smtp_url_refuses_a_server_without_starttls_and_never_sends_the_password() {
    // The plain server offers AUTH in clear but no STARTTLS.
    let server = smtp("trader", "pa55");
    // Sending again cannot help until the server (or the channel's URL) changes.
    let (o, why, _dir) = one_failed_send(&server, 5).await;
    assert!(
        why.starts_with("the mail server does not offer STARTTLS") && why.contains("smtps://"),
        "{why}"
    );
    let t = o.test("mail", t0()).await.unwrap();
    assert!(!t.ok && t.answer == why, "{t:?}");
    assert!(server.mails().is_empty());
    assert!(server.auths().is_empty(), "{:?}", server.auths());
}

#[tokio::test]
async fn an_smtp_url_fails_for_good_when_the_starttls_certificate_is_not_trusted() {
    let (server, _certs) = own_ca_server(starttls);
    // No ca_cert: only the system's roots, which did not sign this server.
    let (o, why, _dir) = one_failed_send(&server, 6).await;
    assert!(
        why.starts_with("the mail server's TLS certificate is not trusted")
            && why.contains("certificate verify failed"),
        "{why}"
    );
    let rows = o.rows().await.unwrap();
    assert_eq!(rows[0].status, OutboxStatus::Failed, "{rows:?}");
    assert!(server.mails().is_empty());
    assert!(server.auths().is_empty(), "{:?}", server.auths());
}
