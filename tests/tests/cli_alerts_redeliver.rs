//! An alert whose first send failed is delivered by the unattended pass, with no new check:
//! `wyckoff alerts check` records the alert and the channel answers 500, the row waits in
//! the outbox with its backoff; a plain `wyckoff daemon --once` pass before the backoff
//! sends nothing, one after it delivers the alert, and the alert's history says delivered.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{DateTime, Duration, Timelike, Utc};
use serde_json::Value;
use wyckoff_e2e::hook::hook;
use wyckoff_e2e::show;

type Home = wyckoff_e2e::CliHome;

/// `t` as the daemon's `--now` takes it (Beijing time, to the minute), rounded down.
fn beijing_minute(t: DateTime<Utc>) -> String {
    wyckoff_time::to_beijing(t)
        .format("%Y-%m-%d %H:%M")
        .to_string()
}

/// One `daemon --once` pass at `now`; it must succeed.
fn pass(home: &Home, now: &str) {
    let out = home.run(&["daemon", "--once", "--now", now]);
    assert!(out.status.success(), "daemon at {now}: {}", show(&out));
}

fn outbox(home: &Home) -> Vec<Value> {
    home.json(&["push", "outbox", "--json"])
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn an_alert_a_channel_refused_is_delivered_by_a_daemon_pass_after_its_backoff_with_no_new_check() {
    let home = Home::new();
    let h = hook(vec![(500, "down for a moment")]);
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
    // A level every close of 2020-06-16 is at or above: it fires on that close.
    home.json(&["alerts", "add", "000001", "--price-above", "0.01", "--json"]);

    let checked = home.json(&["alerts", "check", "--json"]);
    assert_eq!(checked["fired"].as_array().unwrap().len(), 1, "{checked}");
    assert_eq!(checked["fired"][0]["delivery"], "pending", "{checked}");
    assert_eq!(h.bodies().len(), 1, "the first send reached the channel");

    let rows = outbox(&home);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["status"].as_str(), rows[0]["attempts"].as_u64()),
        (Some("pending"), Some(1)),
        "{rows:?}"
    );
    assert_eq!(rows[0]["last_error"], "HTTP 500: down for a moment");
    let next: DateTime<Utc> = rows[0]["next_attempt_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    // A pass a minute before the retry is due sends nothing.
    pass(&home, &beijing_minute(next - Duration::minutes(1)));
    assert_eq!(h.bodies().len(), 1, "nothing is sent before the backoff");
    let rows = outbox(&home);
    assert_eq!(
        (rows[0]["status"].as_str(), rows[0]["attempts"].as_u64()),
        (Some("pending"), Some(1)),
        "{rows:?}"
    );

    // A pass on the first whole minute after it is due delivers the alert.
    let after = next.with_second(0).unwrap() + Duration::minutes(1);
    pass(&home, &beijing_minute(after));
    let bodies = h.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert_eq!(bodies[1]["type"], "alert");
    assert_eq!(bodies[1]["alert"]["code"], "000001");
    assert_eq!(bodies[1]["data_date"], "2020-06-16");
    let rows = outbox(&home);
    assert_eq!(
        (rows[0]["status"].as_str(), rows[0]["attempts"].as_u64()),
        (Some("sent"), Some(2)),
        "{rows:?}"
    );
    let history = home.json(&["alerts", "history", "--json"]);
    let alerts = history.as_array().unwrap();
    assert_eq!(alerts.len(), 1, "{history}");
    assert_eq!(alerts[0]["delivery"], "delivered", "{history}");
    assert_eq!(alerts[0]["delivered_to"], serde_json::json!(["desk"]));

    // A later pass sends it no more.
    pass(&home, &beijing_minute(after + Duration::minutes(5)));
    assert_eq!(h.bodies().len(), 2);
}
