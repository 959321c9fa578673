//! WebDriver test of skills in the real app, the model served in-process by
//! `wyckoff-mock-vendor`: typing `/` opens the palette with the built-ins and the user's
//! skill, typing filters it, Esc closes it, Enter picks; the picked skill runs with its
//! expansion sent to the model, and the reopened conversation shows what was typed with
//! the skill; an unknown `/word` is refused under the composer; Settings → Skills names
//! the malformed file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, shot, wait_for, wait_for_answer,
    wait_gone,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

async fn options(d: &WebDriver) -> Vec<String> {
    let mut names = Vec::new();
    for o in d
        .find_all(By::Css("#slash-palette [role=option]"))
        .await
        .unwrap()
    {
        names.push(o.attr("data-skill").await.unwrap().unwrap_or_default());
    }
    names
}

async fn wait_options(d: &WebDriver, want: &[&str]) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let got = options(d).await;
        if got == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "palette shows {got:?}, want {want:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn palette_and_skill_turn(d: WebDriver, server: std::sync::Arc<MockServer>) {
    let composer = wait_for(&d, By::Id("composer")).await;
    composer.send_keys("/").await.unwrap();
    wait_options(
        &d,
        &[
            "backtest", "checkup", "report", "screen", "strategy", "weekly",
        ],
    )
    .await;
    let weekly_badge = wait_for(&d, By::Css("#slash-palette [data-skill=weekly] .badge"))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(weekly_badge, "自定义");
    shot(&d, "skills-palette.png").await;

    composer.send_keys("we").await.unwrap();
    wait_options(&d, &["weekly"]).await;
    composer.send_keys(Key::Escape).await.unwrap();
    wait_gone(&d, By::Id("slash-palette")).await;
    // typing on opens it again; ↓ then ↑ stays on the one match; Enter picks it
    composer.send_keys("e").await.unwrap();
    wait_options(&d, &["weekly"]).await;
    composer.send_keys(Key::Down).await.unwrap();
    composer.send_keys(Key::Enter).await.unwrap();
    wait_gone(&d, By::Id("slash-palette")).await;
    assert_eq!(composer.prop("value").await.unwrap().unwrap(), "/weekly ");
    assert!(
        server.requests_to(Route::Openai).is_empty(),
        "picking sends nothing"
    );

    composer.send_keys("600519").await.unwrap();
    composer.send_keys(Key::Enter).await.unwrap();
    wait_for_answer(&d, "复盘完成。").await;
    let sent = server.requests_to(Route::Openai);
    let user = sent[0].last_user_text().unwrap();
    assert!(user.starts_with("复盘本周：600519"), "{user}");

    // An unknown /word: said under the composer, nothing sent.
    composer.send_keys("/nope 000001").await.unwrap();
    wait_gone(&d, By::Css("#slash-palette [role=option]")).await;
    composer.send_keys(Key::Enter).await.unwrap();
    let error = wait_for(&d, By::Id("composer-error"))
        .await
        .text()
        .await
        .unwrap();
    assert!(error.contains("/nope"), "{error}");
    assert_eq!(server.requests_to(Route::Openai).len(), 1);

    // Reopened, the conversation shows what was typed and which skill expanded it.
    click(&d, By::Id("chat-new")).await;
    click(&d, By::Css("#chat-conversations li .conv-open")).await;
    let mark = wait_for(
        &d,
        By::Css(".msg.user details.skill-mark[data-skill=weekly]"),
    )
    .await;
    let user_line = d
        .find(By::Css("#transcript .msg.user"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(user_line.starts_with("/weekly 600519"), "{user_line}");
    assert_eq!(
        mark.attr("open").await.unwrap(),
        None,
        "the expansion stays folded"
    );
    mark.find(By::Css("summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert!(mark.attr("open").await.unwrap().is_some());
    let expansion = wait_for(&d, By::Css(".skill-expansion"))
        .await
        .text()
        .await
        .unwrap();
    assert!(expansion.starts_with("复盘本周：600519"), "{expansion}");

    // Settings → Skills: the user's skill with its file, the malformed file named.
    click(&d, By::Id("nav-settings")).await;
    let weekly = wait_for(&d, By::Css("#skills-panel li[data-skill=weekly]")).await;
    weekly.scroll_into_view().await.unwrap();
    assert!(weekly.text().await.unwrap().contains("weekly.md"));
    let warnings = wait_for(&d, By::Id("skills-warnings"))
        .await
        .text()
        .await
        .unwrap();
    assert!(warnings.contains("broken.md"), "{warnings}");
    shot(&d, "skills-settings.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_slash_palette_runs_skills_and_settings_list_them() {
    let server = std::sync::Arc::new(MockServer::start().await.unwrap());
    server.push(Route::Openai, OpenAiStream::text_response(&["复盘完成。"]));
    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let skills = home.path().join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(
        skills.join("weekly.md"),
        "---\nname: weekly\ndescription: 周复盘\n---\n复盘本周：{user_input}",
    )
    .unwrap();
    // malformed front matter: skipped and named (a differing `name:` would only warn)
    std::fs::write(skills.join("broken.md"), "---\njust words\n---\nx").unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    let s = server.clone();
    run_scenario(&driver, "skills", move |d| palette_and_skill_turn(d, s)).await;
}
