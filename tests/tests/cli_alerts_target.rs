//! A holding's target price from the CLI: `wyckoff portfolio levels` sets the stop-loss and
//! the target beside it, and `wyckoff alerts check --json` fires "target reached" (no rule
//! needed) on the close that reaches it — on the bundled real bars of 索菲亚 (002572),
//! closes read off the data file by hand: 2020-06-15 22.04, 2020-06-16 23.22. Bad levels
//! are refused with exit 2 and change nothing. Build the binary first
//! (`cargo build -p wyckoff-cli`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wyckoff_e2e::show;

type Home = wyckoff_e2e::CliHome;

#[test]
fn a_holdings_target_fires_on_the_close_that_reaches_it() {
    let home = Home::new();
    home.json(&[
        "portfolio",
        "fill",
        "buy",
        "002572",
        "--shares",
        "100",
        "--price",
        "20",
        "--date",
        "2020-01-02",
        "--json",
    ]);
    let p = home.json(&[
        "portfolio",
        "levels",
        "002572",
        "--stop",
        "21",
        "--target",
        "23",
        "--json",
    ]);
    assert_eq!(
        (&p["code"], &p["stop_loss"], &p["target_price"]),
        (&json!("002572"), &json!(21.0), &json!(23.0))
    );

    // Refused, exit 2, nothing changed: not a number, not above the stop, not held.
    for args in [
        &["portfolio", "levels", "002572", "--target", "abc"][..],
        &["portfolio", "levels", "002572", "--target", "20"][..],
        &["portfolio", "levels", "002572", "--stop", "-1"][..],
        &["portfolio", "levels", "600519", "--target", "9"][..],
    ] {
        let out = home.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
    }
    let p = home.json(&["portfolio", "levels", "002572", "--json"]);
    assert_eq!(
        (&p["stop_loss"], &p["target_price"]),
        (&json!(21.0), &json!(23.0))
    );

    // 22.04 on the 15th: between the stop and the target, nothing fires.
    let quiet = home.json(&["alerts", "check", "--as-of", "2020-06-15", "--json"]);
    assert_eq!(quiet["fired"], json!([]), "{quiet}");
    assert_eq!(quiet["data_date"], "2020-06-15");

    // 23.22 on the 16th ≥ 23: the target fires, with its figures and no rule.
    let hit = home.json(&["alerts", "check", "--as-of", "2020-06-16", "--json"]);
    let fired = hit["fired"].as_array().unwrap();
    assert_eq!(fired.len(), 1, "{hit}");
    let f = &fired[0];
    assert_eq!(f["rule_id"], Value::Null);
    assert_eq!(
        (&f["code"], &f["bar_date"]),
        (&json!("002572"), &json!("2020-06-16"))
    );
    assert_eq!(f["condition"], json!({"type": "target_reached"}));
    assert_eq!(
        f["figures"],
        json!({"type": "target_reached", "close": 23.22, "target": 23.0})
    );
    // The same close again: the once-a-day cooldown holds it back.
    let again = home.json(&["alerts", "check", "--as-of", "2020-06-16", "--json"]);
    assert_eq!(again["fired"], json!([]), "{again}");
    assert_eq!(again["suppressed"].as_array().unwrap().len(), 1, "{again}");

    // Cleared, the target is checked no more.
    let p = home.json(&[
        "portfolio",
        "levels",
        "002572",
        "--target",
        "none",
        "--json",
    ]);
    assert_eq!(
        (&p["stop_loss"], &p["target_price"]),
        (&json!(21.0), &Value::Null)
    );
    let history = home.json(&["alerts", "history", "--json"]);
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
}
