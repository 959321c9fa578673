//! `wyckoff alerts check` records what fired and queues it for push as one step: a check
//! cut off part-way through queueing leaves no alert behind that the cooldown would then
//! hold back from every later check, and a damaged push channel row is skipped and named
//! while every other channel gets the alerts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use wyckoff_e2e::hook::hook;
use wyckoff_e2e::{run_sql, show};

type Home = wyckoff_e2e::CliHome;

/// Rules on 000001 that all fire on its last close (2020-06-16).
const RULES: usize = 4;

fn setup(home: &Home, url: &str) {
    home.json(&[
        "push",
        "add",
        "desk",
        "--kind",
        "webhook",
        "--url",
        url,
        "--allow-private",
        "--json",
    ]);
    for i in 1..=RULES {
        let level = format!("0.0{i}");
        home.json(&[
            "alerts",
            "add",
            "000001",
            "--price-above",
            &level,
            "--cooldown",
            "5",
            "--json",
        ]);
    }
}

#[test]
fn a_check_cut_off_while_queueing_keeps_no_alert_the_cooldown_would_then_hide() {
    let home = Home::new();
    let h = hook(vec![]);
    setup(&home, &h.url);
    // The database refuses the third outbox row, as a check killed part-way through
    // queueing (or a full disk) would leave it.
    run_sql(
        home.path(),
        "CREATE TRIGGER cut_short BEFORE INSERT ON push_outbox WHEN (SELECT count(*) FROM push_outbox) >= 2 BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    );
    let out = home.run(&["alerts", "check"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert_eq!(
        home.json(&["alerts", "history", "--json"]),
        serde_json::json!([])
    );
    assert_eq!(
        home.json(&["push", "outbox", "--json"]),
        serde_json::json!([])
    );

    run_sql(home.path(), "DROP TRIGGER cut_short");
    let r = home.json(&["alerts", "check", "--json"]);
    assert_eq!(r["fired"].as_array().unwrap().len(), RULES, "{r}");
    assert_eq!(r["suppressed"], serde_json::json!([]), "{r}");
    assert_eq!(h.bodies().len(), RULES);
    let history = home.json(&["alerts", "history", "--json"]);
    for a in history.as_array().unwrap() {
        assert_eq!(a["delivery"], "delivered", "{a}");
    }
}

#[test]
fn a_damaged_channel_row_is_skipped_and_named_and_the_others_get_the_alerts() {
    let home = Home::new();
    let h = hook(vec![]);
    setup(&home, &h.url);
    run_sql(
        home.path(),
        "INSERT INTO push_channels (name, kind, url, allow_private, created_at) VALUES ('broken', 'pager', 'https://example.com/x', 0, '2026-12-01T00:00:00Z')",
    );
    let out = home.run(&["alerts", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("push channel broken is damaged and was skipped: kind 'pager'"),
        "{text}"
    );
    assert_eq!(h.bodies().len(), RULES);
    let history = home.json(&["alerts", "history", "--json"]);
    assert_eq!(history.as_array().unwrap().len(), RULES);
    for a in history.as_array().unwrap() {
        assert_eq!(a["delivered_to"], serde_json::json!(["desk"]), "{a}");
        assert_eq!(a["delivery"], "delivered", "{a}");
    }
    // `push list` still lists the good channel and names the damaged one.
    let out = home.run(&["push", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("desk"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("push channel broken is damaged"));
}
