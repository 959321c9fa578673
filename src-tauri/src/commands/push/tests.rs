#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use wyckoff_config::secrets::MemoryBackend;
use wyckoff_session::domain::market::{MarketConfig, MarketData};

use super::*;
use crate::commands::error::CommandErrorKind;

const PASSWORD: &str = "smtp-pw-9c41e7";

async fn outbox_in(dir: &Path) -> Outbox {
    let md = MarketData::open_with(MarketConfig::offline(dir))
        .await
        .unwrap();
    Outbox::new(md.pool().clone(), std::time::Duration::from_secs(10))
        .await
        .unwrap()
}

fn keychain(backend: MemoryBackend) -> Secrets {
    Secrets::with_backend(Box::new(backend), Box::new(|_| None))
}

fn email(url: &str, to: &[&str]) -> AddRequest {
    AddRequest {
        name: "mail".into(),
        kind: "email".into(),
        url: Some(url.into()),
        allow_private: false,
        chat_id: None,
        email: Some(EmailAddresses {
            from: "Desk <desk@example.com>".into(),
            to: to.iter().map(|t| (*t).to_owned()).collect(),
            user: Some(" login@example.com ".into()),
            ca_cert: None,
        }),
        token: Some(PASSWORD.into()),
        sign_secret: None,
        secret_header: None,
        secret_query: None,
    }
}

/// Every byte the data home holds (the database and its write-ahead log).
fn home_bytes(dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for entry in walk(dir) {
        all.extend(std::fs::read(entry).unwrap_or_default());
    }
    all
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn an_email_channel_keeps_its_addresses_and_its_password_only_in_the_keychain() {
    let dir = tempfile::tempdir().unwrap();
    let outbox = outbox_in(dir.path()).await;
    let secrets = keychain(MemoryBackend::default());
    let name = add(
        &outbox,
        &secrets,
        email(
            "smtps://mail.example.com",
            &["a@example.com", " ", "b@example.com "],
        ),
        Utc::now(),
    )
    .await
    .unwrap();
    assert_eq!(name, "mail");
    // Stored as `wyckoff push secret mail` stores it: the channel's token.
    let (stored, _) = secrets.get_push(&secret("mail", false)).unwrap();
    assert_eq!(stored.expose(), PASSWORD);
    assert!(secrets.get_push(&secret("mail", true)).is_none());

    let listed = views(
        outbox.channels().await.unwrap(),
        &outbox.rows().await.unwrap(),
        &secrets,
    );
    assert_eq!(listed.len(), 1);
    let view = &listed[0];
    assert_eq!(view.kind, "email");
    assert_eq!(view.url, "smtps://mail.example.com");
    assert!(view.has_token);
    assert_eq!(
        view.email,
        Some(EmailAddresses {
            from: "Desk <desk@example.com>".into(),
            to: vec!["a@example.com".into(), "b@example.com".into()],
            user: Some("login@example.com".into()),
            ca_cert: None,
        })
    );
    // Neither what goes to the webview nor the database holds the password.
    assert!(!serde_json::to_string(&listed).unwrap().contains(PASSWORD));
    drop(outbox);
    assert!(!contains(&home_bytes(dir.path()), PASSWORD));
}

#[tokio::test]
async fn a_bad_email_channel_is_refused_and_nothing_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let outbox = outbox_in(dir.path()).await;
    let secrets = keychain(MemoryBackend::default());
    let mut no_addresses = email("smtps://mail.example.com", &[]);
    no_addresses.email = None;
    let mut private = email("smtps://127.0.0.1:465", &["a@example.com"]);
    private.allow_private = true;
    let mut signed = email("smtps://mail.example.com", &["a@example.com"]);
    signed.sign_secret = Some("s".into());
    let mut relative_ca = email("smtps://mail.example.com", &["a@example.com"]);
    if let Some(e) = relative_ca.email.as_mut() {
        e.ca_cert = Some("ca.pem".into());
    }
    let cases = [
        (
            email("https://mail.example.com", &["a@example.com"]),
            "https",
        ),
        (
            email("smtps://127.0.0.1:465", &["a@example.com"]),
            "127.0.0.1",
        ),
        (email("smtps://mail.example.com", &[" "]), "recipient"),
        (
            email("smtps://mail.example.com", &["not an address"]),
            "not an address",
        ),
        (no_addresses, "sender"),
        (private, "only a generic webhook"),
        (signed, "signing secret"),
        (relative_ca, "full path"),
    ];
    for (request, says) in cases {
        let url = request.url.clone();
        match add(&outbox, &secrets, request, Utc::now()).await {
            Err(CommandError {
                kind: CommandErrorKind::InvalidInput,
                message,
                ..
            }) => {
                assert!(message.contains(says), "{url:?}: {message}")
            }
            other => panic!("{url:?}: {other:?}"),
        }
    }
    assert!(outbox.channels().await.unwrap().is_empty());
    assert!(secrets.get_push(&secret("mail", false)).is_none());
}

#[tokio::test]
async fn an_email_channel_is_not_kept_when_the_keychain_refuses_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let outbox = outbox_in(dir.path()).await;
    let secrets = keychain(MemoryBackend::unavailable());
    let got = add(
        &outbox,
        &secrets,
        email("smtp://mail.example.com:587", &["a@example.com"]),
        Utc::now(),
    )
    .await;
    assert!(
        matches!(
            got,
            Err(CommandError {
                kind: CommandErrorKind::Unavailable,
                ..
            })
        ),
        "{got:?}"
    );
    assert!(outbox.channels().await.unwrap().is_empty());
}
