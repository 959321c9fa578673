//! The real app delivers an alert whose first send failed, on its own timer, with no new
//! check: `wyckoff alerts check` records the alert and the channel answers 500, the row
//! waits in the outbox with its backoff; the app is then opened and left alone (no check,
//! no daemon). Nothing goes out before the backoff is over; after it, the app's timer
//! sends the alert, the outbox row is sent, the alert's history says delivered and the
//! alert centre shows it delivered.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)] // how many early looks there were goes to the log

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use thirtyfour::prelude::*;
use wyckoff_e2e::hook::hook;
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_for};

type Home = wyckoff_e2e::CliHome;
type Bodies = Arc<Mutex<Vec<Value>>>;

/// The backoff is 30 s and the timer ticks every 15 s; the rest is room for a slow,
/// shared machine starting the app.
const DEADLINE: Duration = Duration::from_secs(120);

fn outbox(home: &Home) -> Vec<Value> {
    home.json(&["push", "outbox", "--json"])
        .as_array()
        .unwrap()
        .clone()
}

fn count(got: &Bodies) -> usize {
    got.lock().unwrap().len()
}

/// A CLI call from the scenario's task: it blocks, so off the runtime's worker.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

async fn scenario(d: WebDriver, home: Arc<Home>, got: Bodies, next: DateTime<Utc>) {
    // The app is up; only its timer may send from here on.
    wait_for(&d, By::Id("nav-alerts")).await;

    let deadline = Instant::now() + DEADLINE;
    let mut early_looks = 0;
    loop {
        // What was seen is read before the clock: if the clock is still before the row's
        // retry time, everything seen happened before it too, so no send was due yet.
        let sent = count(&got);
        let rows = blocking(|| outbox(&home));
        if Utc::now() < next {
            early_looks += 1;
            assert_eq!(sent, 1, "a second send before the backoff was over");
            assert_eq!(
                (rows[0]["status"].as_str(), rows[0]["attempts"].as_u64()),
                (Some("pending"), Some(1)),
                "{rows:?}"
            );
        }
        if sent >= 2 && rows[0]["status"] == "sent" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the app did not send the alert again within {DEADLINE:?} \
             ({sent} sends, outbox {rows:?})"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    eprintln!("{early_looks} looks before the retry was due saw no second send");

    let bodies = got.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert_eq!(bodies[1]["type"], "alert");
    assert_eq!(bodies[1]["alert"]["code"], "000001");
    assert_eq!(bodies[1]["data_date"], "2020-06-16");
    let rows = blocking(|| outbox(&home));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["status"].as_str(), rows[0]["attempts"].as_u64()),
        (Some("sent"), Some(2)),
        "{rows:?}"
    );
    let history = blocking(|| home.json(&["alerts", "history", "--json"]));
    let alerts = history.as_array().unwrap();
    assert_eq!(alerts.len(), 1, "{history}");
    assert_eq!(alerts[0]["delivery"], "delivered", "{history}");
    assert_eq!(alerts[0]["delivered_to"], json!(["desk"]));

    // The alert centre (opened only now, so it loads after the delivery) says so too.
    click(&d, By::Id("nav-alerts")).await;
    wait_for(
        &d,
        By::Css(".alert-row[data-code='000001'][data-delivery='delivered']"),
    )
    .await;
    shot(&d, "alerts-redelivered.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_app_timer_delivers_an_alert_a_channel_refused_after_its_backoff_with_no_new_check() {
    let home = Arc::new(Home::new());
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

    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    let (in_app, got) = (home.clone(), h.got.clone());
    run_scenario(&driver, "alerts-redeliver", move |d| {
        scenario(d, in_app, got, next)
    })
    .await;
    drop(driver);
    // Sent once more, and only once.
    assert_eq!(h.bodies().len(), 2, "{:?}", h.bodies());
}
