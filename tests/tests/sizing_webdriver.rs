//! WebDriver test of a buy's sizing in the real app, with the model served in-process by
//! `wyckoff-mock-vendor`: the scripted agent proposes `record_fill` buying 000001; the
//! approval dialog shows the size the rules give, the stop, the risk in yuan and percent,
//! and flags the limit the buy breaks (Settings allow one position and one is held).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use thirtyfour::prelude::*;
use wyckoff_e2e::approvals::tool_call;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_for, wait_for_answer,
    wait_gone,
};
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

/// Runs the `wyckoff` binary over `home`; it must succeed.
fn cli(home: &Path, args: &[&str]) {
    let out = wyckoff_cli(home).args(args).output().expect("run wyckoff");
    assert!(
        out.status.success(),
        "wyckoff {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Adds the risk section to the mock model's settings: one position at most.
fn allow_one_position(home: &Path) {
    let path = home.join("settings.json");
    let mut s: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    s["risk"] = json!({"max_positions": 1});
    std::fs::write(&path, s.to_string()).unwrap();
}

async fn text(d: &WebDriver, id: &str) -> String {
    wait_for(d, By::Id(id)).await.text().await.unwrap()
}

/// A number in `s` (its first, commas dropped).
fn first_number(s: &str) -> f64 {
    let n: String = s
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    n.parse().unwrap_or_else(|_| panic!("no number in {s:?}"))
}

async fn buy_is_sized_and_flagged(d: WebDriver) {
    send(&d, "按 13 元买入 000001 三百股，记一笔").await;
    let dialog = wait_for(&d, By::Id("approval-dialog")).await;
    assert!(dialog.text().await.unwrap().contains("record_fill"));
    wait_for(&d, By::Id("approval-sizing")).await;
    shot(&d, "sizing-approval.png").await;

    // The proposal beside the rules' answer.
    assert_eq!(text(&d, "sizing-proposed-shares").await, "300");
    let rule_shares = first_number(&text(&d, "sizing-rule-shares").await);
    assert!(
        rule_shares > 0.0 && rule_shares % 100.0 == 0.0,
        "a whole number of 100-share lots: {rule_shares}"
    );
    let stop = first_number(&text(&d, "sizing-stop").await);
    assert!(
        stop > 0.0 && stop < 13.0,
        "the stop is under the entry: {stop}"
    );
    // The rules' risk: yuan and percent of equity, within the 1 % budget.
    let risk = text(&d, "sizing-rule-risk").await;
    let pct: f64 = risk
        .split('(')
        .nth(1)
        .map(first_number)
        .unwrap_or_else(|| panic!("a percent in {risk:?}"));
    assert!(pct > 0.0 && pct <= 1.0, "{risk}");
    // The proposed 300 shares lose 300 × (13 − stop) and fees at the stop.
    let proposed = first_number(&text(&d, "sizing-proposed-risk").await);
    let by_hand = 300.0 * (13.0 - stop);
    assert!(
        proposed >= by_hand && proposed < by_hand + 20.0,
        "{proposed} vs {by_hand} + fees"
    );

    // The breached limit: a second position with one allowed.
    let breach = wait_for(&d, By::Css("#sizing-breaches li[data-limit='positions']")).await;
    let said = breach.text().await.unwrap();
    assert!(said.contains('2') && said.contains('1'), "{said}");

    // 000338 was bought without a stop: the heat counts all of it, and says so.
    let sizing = text(&d, "approval-sizing").await;
    assert!(
        sizing.contains("没有止损的持仓按全部市值计入总风险：000338"),
        "{sizing}"
    );

    click(&d, By::Id("approval-deny")).await;
    wait_gone(&d, By::Id("approval-dialog")).await;
    wait_for_answer(&d, "好的，没有记录。").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_approval_of_a_buy_shows_the_rules_size_and_the_limit_it_breaks() {
    let server = std::sync::Arc::new(MockServer::start().await.unwrap());
    server.push(
        Route::Openai,
        tool_call(
            "call_buy_1",
            "record_fill",
            json!({"side": "buy", "code": "000001", "shares": 300, "price": 13.0}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，没有记录。"]),
    );

    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    allow_one_position(home.path());
    // The account: 100,000 yuan and one position, in the ledger.
    cli(
        home.path(),
        &["portfolio", "cash", "in", "100000", "--date", "2020-01-02"],
    );
    cli(
        home.path(),
        &[
            "portfolio",
            "fill",
            "buy",
            "000338",
            "--shares",
            "500",
            "--price",
            "10",
            "--date",
            "2020-01-02",
        ],
    );
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "sizing", buy_is_sized_and_flagged).await;
}
