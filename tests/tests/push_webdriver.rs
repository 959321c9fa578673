//! WebDriver test of Settings → Push channels in the real app: a webhook on this
//! machine is refused until a private address is allowed, then a test send reaches it and
//! the panel shows the answer; a robot cannot point at a local address; a WeCom robot's key
//! goes to the keychain (a real Secret Service here), never to the database; ticking
//! "finished tasks" on a channel stores it with the channel (read back by `wyckoff push list`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_e2e::hook::hook;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, run_scenario, shot, wait_for, wait_layout_settled,
};

const KEY: &str = "wecom-robot-key-5f1c";

async fn type_into(d: &WebDriver, id: &str, value: &str) {
    let el = wait_for(d, By::Id(id)).await;
    // Select-all and delete, so React sees the input change (clear() alone does not).
    el.send_keys(Key::Control + "a").await.unwrap();
    el.send_keys(Key::Backspace).await.unwrap();
    if !value.is_empty() {
        el.send_keys(value).await.unwrap();
    }
}

async fn note(d: &WebDriver, starts: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(el) = d.find(By::Id("push-note")).await {
            let text = el.text().await.unwrap_or_default();
            if text.starts_with(starts) {
                return text;
            }
        }
        assert!(Instant::now() < deadline, "no note starting {starts}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn select_kind(d: &WebDriver, kind: &str) {
    click(d, By::Css(format!("#push-kind option[value='{kind}']"))).await;
}

async fn scenario(d: WebDriver, url: String, got: wyckoff_e2e::hook::Hook) {
    click(&d, By::Id("nav-settings")).await;
    wait_for(&d, By::Id("push-panel")).await;
    wait_layout_settled(&d).await;

    // A local webhook without "allow a private address": refused, nothing listed.
    type_into(&d, "push-name", "desk").await;
    type_into(&d, "push-url", &url).await;
    click(&d, By::Id("push-add")).await;
    let refused = note(&d, "未添加").await;
    assert!(refused.contains("127.0.0.1"), "{refused}");
    assert!(d.find(By::Css(".push-channel")).await.is_err());

    click(&d, By::Id("push-private")).await;
    click(&d, By::Id("push-add")).await;
    note(&d, "已添加渠道").await;
    let row = wait_for(&d, By::Css(".push-channel[data-name='desk']")).await;
    row.find(By::Css(".push-test"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let result = wait_for(
        &d,
        By::Css(".push-channel[data-name='desk'] .push-test-result"),
    )
    .await;
    assert_eq!(
        result.attr("data-ok").await.unwrap().as_deref(),
        Some("true")
    );
    assert_eq!(result.text().await.unwrap(), "测试成功（HTTP 200）");
    let bodies = got.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert_eq!(bodies[0]["type"], "test");

    // Alerts by default; "finished tasks" ticked is saved with the channel.
    let ev = |e: &str| By::Css(format!(".push-channel[data-name='desk'] .push-event-{e}"));
    assert!(
        d.find(ev("alerts"))
            .await
            .unwrap()
            .is_selected()
            .await
            .unwrap()
    );
    assert!(
        !d.find(ev("tasks"))
            .await
            .unwrap()
            .is_selected()
            .await
            .unwrap()
    );
    click(&d, ev("tasks")).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !d
        .find(ev("tasks"))
        .await
        .unwrap()
        .is_selected()
        .await
        .unwrap()
    {
        assert!(Instant::now() < deadline, "the tasks box stayed unticked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A robot may not point at a local address (only a generic webhook may).
    type_into(&d, "push-name", "wx").await;
    select_kind(&d, "wecom").await;
    type_into(&d, "push-url", &url).await;
    type_into(&d, "push-token", KEY).await;
    click(&d, By::Id("push-add")).await;
    let refused = note(&d, "未添加").await;
    assert!(refused.contains("127.0.0.1"), "{refused}");

    // At its official address, its key in the keychain.
    type_into(&d, "push-url", "").await;
    click(&d, By::Id("push-add")).await;
    note(&d, "已添加渠道").await;
    let wx = wait_for(&d, By::Css(".push-channel[data-name='wx']")).await;
    assert_eq!(
        wx.attr("data-has-token").await.unwrap().as_deref(),
        Some("true")
    );
    shot(&d, "89-push-channels.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn push_channels_are_added_tested_and_keep_their_keys_in_the_keychain() {
    let hook = hook(Vec::new());
    let url = hook.url.clone();
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "push", move |d| scenario(d, url, hook)).await;
    drop(driver);
    let listed = wyckoff_e2e::wyckoff_cli(home.path())
        .args(["push", "list", "--json"])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let desk = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "desk")
        .unwrap();
    assert_eq!(desk["events"], serde_json::json!(["alerts", "tasks"]));
    // The key is in the keychain, not in any file of the data home.
    let key = wyckoff_config::Secrets::system()
        .get_push(&wyckoff_config::PushSecret {
            channel: "wx".into(),
            sign: false,
        })
        .map(|(v, _)| v.expose().to_owned());
    assert_eq!(key.as_deref(), Some(KEY));
    for entry in walk(home.path()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "the key is in {}",
            entry.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
