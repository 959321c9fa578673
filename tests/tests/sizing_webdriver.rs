//! WebDriver test of a buy's sizing in the real app, with the model served in-process by
//! `wyckoff-mock-vendor`: the scripted agent proposes `record_fill` buying 000001; the
//! approval dialog shows the size the rules give, the stop, the risk in yuan and percent,
//! and flags the limit the buy breaks (Settings allow one position and one is held).
//! Then a batch `update_portfolio` buying two stocks: the dialog previews each line with
//! its size and breached limit, and the batch's heat and positions before and after; and a
//! strategy decision that says to add to the held stock: its view shows the rules' size of
//! the add and of the reviewed candidate, with the stop, the risk and the limit broken.

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

/// Waits for the panel's row of the newest `tool` task to complete, then opens it.
async fn open_when_done(d: &WebDriver, tool: &str) {
    let row = format!(".task-row[data-tool='{tool}']");
    wait_for(d, By::Css(&row)).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    loop {
        let first = d.find(By::Css(&row)).await.unwrap();
        match first.attr("data-status").await.unwrap().as_deref() {
            Some("completed") => break,
            Some("running" | "queued") => {}
            other => panic!(
                "{tool} ended {other:?}: {}",
                first.text().await.unwrap_or_default()
            ),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{tool} never completed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    click(d, By::Css(format!("{row} .task-open"))).await;
}

async fn batch_and_decision_are_sized(d: WebDriver) {
    // A batch of two buys, one position held and one allowed.
    send(&d, "按收盘价各买 000001 一百股、300027 两百股").await;
    wait_for(&d, By::Id("approval-batch")).await;
    shot(&d, "sizing-batch-approval.png").await;
    let rows = d
        .find_all(By::Css("#approval-batch tbody tr"))
        .await
        .unwrap();
    let mut codes = Vec::new();
    for r in &rows {
        codes.push(r.attr("data-code").await.unwrap().unwrap_or_default());
    }
    assert_eq!(codes, ["000001", "300027"]);
    for r in &rows {
        // each line sized by the rules: whole lots, and the stop under the line's price
        let rule = r
            .find(By::Css(".batch-rule-shares"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let shares = first_number(&rule);
        assert!(shares > 0.0 && shares % 100.0 == 0.0, "{rule}");
        let risk = r
            .find(By::Css(".batch-risk"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(risk.contains('%'), "{risk}");
        // the second position and the third each break the limit of one
        let breaches = r.attr("data-breaches").await.unwrap().unwrap_or_default();
        assert!(breaches.split(' ').any(|b| b == "positions"), "{breaches}");
    }
    let first_line = rows[0].text().await.unwrap();
    assert!(first_line.contains("持仓 2 只 > 1 只"), "{first_line}");
    let second_line = rows[1].text().await.unwrap();
    assert!(second_line.contains("持仓 3 只 > 1 只"), "{second_line}");
    assert_eq!(text(&d, "batch-positions").await, "持仓 1 → 3 只");
    let heat = text(&d, "batch-heat").await;
    let (before, after) = heat.split_once('→').unwrap();
    assert!(first_number(after) > first_number(before), "{heat}");
    wait_for(&d, By::Css("#batch-breaches li[data-limit='positions']")).await;
    click(&d, By::Id("approval-deny")).await;
    wait_gone(&d, By::Id("approval-dialog")).await;
    wait_for_answer(&d, "好的，没有调仓。").await;

    // The strategy decision: an add to 000338 and the candidate 000001, each sized.
    send(&d, "生成攻防决策").await;
    wait_for_answer(&d, "攻防决策已完成。").await;
    open_when_done(&d, "generate_strategy_decision").await;
    let add = wait_for(
        &d,
        By::Css("#decision-table tr[data-code='000338'][data-action='add'] .suggested-size"),
    )
    .await;
    shot(&d, "sizing-decision.png").await;
    let shares = first_number(&add.attr("data-shares").await.unwrap().unwrap_or_default());
    assert!(shares > 0.0 && shares % 100.0 == 0.0, "{shares}");
    let said = add.text().await.unwrap();
    assert!(said.contains(&format!("{shares} 股")), "{said}");
    assert!(said.contains("风险 ¥") && said.contains('%'), "{said}");
    let stop = first_number(
        said.split("止损")
            .nth(1)
            .unwrap_or_else(|| panic!("a stop in {said:?}")),
    );
    assert!(
        stop > 0.0 && stop < 13.53,
        "the stop under the last close: {said}"
    );
    // an add is no new position
    let breaches = add.attr("data-breaches").await.unwrap().unwrap_or_default();
    assert!(!breaches.contains("positions"), "{breaches}");
    let cand = wait_for(
        &d,
        By::Css("#decision-candidates tr[data-code='000001'] .suggested-size"),
    )
    .await;
    let breaches = cand
        .attr("data-breaches")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(
        breaches.split(' ').any(|b| b == "positions"),
        "a second position with one allowed: {breaches}"
    );
    let said = cand.text().await.unwrap();
    assert!(said.contains("超限") && said.contains("持仓数"), "{said}");
    assert!(said.contains("止损"), "{said}");
}

/// The Markdown and JSON block the scripted model writes for the decision.
const DECISION: &str = "## 持仓去留\n| 000338 | 潍柴动力 | 加仓 | 放量突破 | 跌破止损清仓 |\n\n## 新候选\n000001\n\n```json\n{\"holdings\": [{\"code\": \"000338\", \"action\": \"add\", \"reason\": \"放量突破\"}]}\n```\n";

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn a_batch_and_a_decision_show_the_rules_sizes() {
    let server = std::sync::Arc::new(MockServer::start().await.unwrap());
    server.push(
        Route::Openai,
        tool_call(
            "call_batch_1",
            "update_portfolio",
            json!({"action": "add", "items": [
                {"code": "000001", "shares": 100, "cost_price": 12.89, "buy_dt": "2020-06-16"},
                {"code": "300027", "shares": 200, "cost_price": 3.92, "buy_dt": "2020-06-16"}
            ]}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，没有调仓。"]),
    );
    // The decision task's own request (its system prompt names the 交易决策官) is answered
    // by this one wherever it falls among the turn's requests.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&[DECISION]).when_body_contains("交易决策官"),
    );
    server.push(
        Route::Openai,
        tool_call(
            "call_decision_1",
            "generate_strategy_decision",
            json!({"report_text": "## 进攻\n000001", "reviewed_codes": ["000001"]}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["决策在后台生成。"]),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["攻防决策已完成。"]),
    );

    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    allow_one_position(home.path());
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
    run_scenario(
        &driver,
        "sizing-batch-decision",
        batch_and_decision_are_sized,
    )
    .await;
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
