//! `wyckoff push …` and `wyckoff alerts check` delivering through the outbox to a local
//! HTTP server (a plain JSON webhook): the alert arrives as JSON with its figures and the
//! data's date, a second check on the same close sends nothing, a channel that answers
//! 503 keeps the message in the outbox until a later process (`push deliver`) gets it
//! through, a 4xx is kept as failed with the channel's answer, bad URLs are refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use wyckoff_e2e::hook::hook;
use wyckoff_e2e::show;

type Home = wyckoff_e2e::CliHome;

#[test]
fn a_fired_alert_reaches_the_webhook_once_and_a_503_is_retried_from_the_outbox() {
    let home = Home::new();
    let h = hook(vec![(503, "try later")]);
    let ch = home.json(&[
        "push",
        "add",
        "desk",
        "--kind",
        "webhook",
        "--url",
        &h.url,
        "--allow-private",
        "--json",
    ]);
    assert_eq!(ch["kind"], "webhook");
    // A level every close of 2020-06-16 is at or above: it fires on that close.
    home.json(&["alerts", "add", "000001", "--price-above", "0.01", "--json"]);

    let first = home.json(&["alerts", "check", "--json"]);
    assert_eq!(first["fired"].as_array().unwrap().len(), 1, "{first}");
    let d = &first["deliveries"][0];
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_u64()),
        (Some("pending"), Some(1))
    );
    assert_eq!(d["error"], "HTTP 503: try later");
    assert_eq!(first["fired"][0]["delivery"], "pending");
    assert_eq!(
        first["fired"][0]["delivered_to"],
        serde_json::json!(["desk"])
    );
    // The channel got it once (and said 503); its body is the alert with the data's date.
    {
        let got = h.got.lock().unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["type"], "alert");
        assert_eq!(got[0]["data_date"], "2020-06-16");
        assert_eq!(got[0]["alert"]["code"], "000001");
        let text = got[0]["text"].as_str().unwrap();
        assert!(text.contains("000001 平安银行"), "{text}");
        assert!(text.contains("(data as of 2020-06-16)"), "{text}");
    }
    // A second check on the same close fires nothing and sends nothing new (the retry is
    // not due yet).
    let second = home.json(&["alerts", "check", "--json"]);
    assert_eq!(second["fired"], serde_json::json!([]));
    assert_eq!(second["deliveries"], serde_json::json!([]));
    let rows = home.json(&["push", "outbox", "--json"]);
    assert_eq!(rows[0]["status"], "pending");
    assert_eq!(rows[0]["last_error"], "HTTP 503: try later");

    // A later process, once the backoff is over, gets it through; the alert reads delivered.
    let later = (chrono::Utc::now() + chrono::TimeDelta::minutes(5)).to_rfc3339();
    let done = home.json(&["push", "deliver", "--now", &later, "--json"]);
    assert_eq!(done[0]["status"], "sent", "{done}");
    assert_eq!(h.got.lock().unwrap().len(), 2);
    let history = home.json(&["alerts", "history", "--json"]);
    assert_eq!(history[0]["delivery"], "delivered");
    let again = home.json(&["push", "deliver", "--now", &later, "--json"]);
    assert_eq!(again, serde_json::json!([]));
}

#[test]
fn a_4xx_is_kept_as_failed_with_the_answer_and_the_test_send_shows_it() {
    let home = Home::new();
    let h = hook(vec![(400, "bad token"), (403, "forbidden")]);
    home.json(&[
        "push",
        "add",
        "desk",
        "--kind",
        "webhook",
        "--url",
        &h.url,
        "--allow-private",
        "--json",
    ]);
    home.json(&["alerts", "add", "000001", "--price-above", "0.01", "--json"]);
    let r = home.json(&["alerts", "check", "--json"]);
    assert_eq!(r["deliveries"][0]["status"], "failed");
    assert_eq!(r["fired"][0]["delivery"], "failed");
    assert_eq!(r["deliveries"][0]["error"], "HTTP 400: bad token");
    // The test send prints the channel's answer and exits 1 when it was not accepted.
    let out = home.run(&["push", "test", "desk"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("desk: HTTP 403: forbidden"));
    let ok = home.json(&["push", "test", "desk", "--json"]);
    assert_eq!(
        (ok["http_status"].as_u64(), ok["ok"].as_bool()),
        (Some(200), Some(true))
    );
    assert_eq!(h.got.lock().unwrap()[2]["type"], "test");
}

#[test]
fn bad_push_urls_are_refused_and_nothing_is_stored() {
    let home = Home::new();
    let refused = |args: &[&str], says: &str| {
        let out = home.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    };
    refused(
        &[
            "push",
            "add",
            "a",
            "--kind",
            "webhook",
            "--url",
            "ftp://example.com/x",
        ],
        "a push URL must be http or https",
    );
    refused(
        &[
            "push",
            "add",
            "a",
            "--kind",
            "webhook",
            "--url",
            "http://127.0.0.1:9/x",
        ],
        "allowed only for a generic webhook added with --allow-private",
    );
    refused(
        &[
            "push",
            "add",
            "a",
            "--kind",
            "webhook",
            "--url",
            "http://169.254.169.254/x",
            "--allow-private",
        ],
        "never a push target",
    );
    refused(
        &[
            "push",
            "add",
            "a",
            "--kind",
            "wecom",
            "--url",
            "http://127.0.0.1:9/x",
            "--allow-private",
        ],
        "--allow-private is only for a generic webhook",
    );
    refused(
        &[
            "push",
            "add",
            "a",
            "--kind",
            "wecom",
            "--url",
            "http://127.0.0.1:9/x",
        ],
        "loopback address",
    );
    refused(
        &["push", "add", "a", "--kind", "telegram"],
        "a Telegram channel needs --chat-id",
    );
    refused(
        &["push", "add", "a", "--kind", "webhook"],
        "webhook channels need --url",
    );
    refused(&["push", "remove", "a"], "no push channel named 'a'");
    refused(&["push", "secret", "a"], "no push channel named 'a'");
    assert_eq!(
        home.json(&["push", "list", "--json"]),
        serde_json::json!([])
    );

    refused(
        &[
            "push",
            "add",
            "m",
            "--kind",
            "email",
            "--url",
            "smtps://smtp.example.com",
            "--from",
            "desk@example.com",
        ],
        "at least one recipient",
    );
    refused(
        &[
            "push",
            "add",
            "m",
            "--kind",
            "email",
            "--url",
            "smtp+plain://127.0.0.1:25",
            "--from",
            "desk@example.com",
            "--to",
            "me@example.com",
        ],
        "loopback address",
    );
    refused(
        &[
            "push",
            "add",
            "m",
            "--kind",
            "email",
            "--to",
            "me@example.com",
        ],
        "e-mail channels need --url",
    );
    let mail = home.json(&[
        "push",
        "add",
        "mail",
        "--kind",
        "email",
        "--url",
        "smtps://smtp.example.com",
        "--from",
        "Desk <desk@example.com>",
        "--to",
        "me@example.com,you@example.com",
        "--json",
    ]);
    assert_eq!(
        mail["email"]["to"],
        serde_json::json!(["me@example.com", "you@example.com"])
    );
    home.json(&["push", "remove", "mail", "--json"]);

    // An own CA to trust: a PEM certificate, kept by its full path (a relative one is read
    // where the command runs); anything else is refused.
    let certs = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("openssl")
        .current_dir(certs.path())
        .args([
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
        ])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", show(&made));
    std::fs::write(certs.path().join("junk.pem"), "not a certificate").unwrap();
    let email_with_ca = |ca: &str| {
        wyckoff_e2e::wyckoff_cli(home.path())
            .current_dir(certs.path())
            .env_remove("WYCKOFF_DATA_SOURCES")
            .args([
                "push",
                "add",
                "corp",
                "--kind",
                "email",
                "--url",
                "smtps://smtp.example.com",
                "--from",
                "desk@example.com",
                "--to",
                "me@example.com",
                "--ca-cert",
                ca,
                "--json",
            ])
            .output()
            .unwrap()
    };
    let junk = email_with_ca("junk.pem");
    assert_eq!(junk.status.code(), Some(2), "{}", show(&junk));
    assert!(
        String::from_utf8_lossy(&junk.stderr).contains("is not a PEM certificate"),
        "{}",
        show(&junk)
    );
    let corp = email_with_ca("ca.pem");
    assert_eq!(corp.status.code(), Some(0), "{}", show(&corp));
    let corp: Value = serde_json::from_slice(&corp.stdout).unwrap();
    assert_eq!(
        corp["email"]["ca_cert"],
        certs.path().join("ca.pem").to_string_lossy().as_ref()
    );
    home.json(&["push", "remove", "corp", "--json"]);

    // A robot added without --url talks to its official address; no secret is stored here.
    let wc = home.json(&["push", "add", "team", "--kind", "wecom", "--json"]);
    assert_eq!(
        wc["url"],
        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send"
    );
    let tg = home.json(&[
        "push",
        "add",
        "phone",
        "--kind",
        "telegram",
        "--chat-id",
        "-1001",
        "--json",
    ]);
    assert_eq!(
        (tg["url"].as_str(), tg["chat_id"].as_str()),
        (Some("https://api.telegram.org/"), Some("-1001"))
    );
}
