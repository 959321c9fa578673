//! WebDriver test of Settings → Schedules in the real app, offline with
//! the bundled bars and no model: a schedule added with the 收盘后 15:05 preset and the
//! screen job is listed as 交易日 15:05 with a next run time; "run now" is disabled while
//! the screen runs, then its history holds a `done` run marked "run now" with the task it
//! produced, whose result opens from there; a bad cron expression is refused under the
//! form in words and nothing is listed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_for};

const ITEM: &str = "#schedules-panel .sched-item[data-name='after_close']";

async fn type_into(d: &WebDriver, id: &str, value: &str) {
    let input = wait_for(d, By::Id(id)).await;
    input.send_keys(Key::Control + "a").await.unwrap();
    input.send_keys(Key::Backspace).await.unwrap();
    input.send_keys(value).await.unwrap();
}

/// The newest run row of the schedule, once one exists with a final status.
async fn wait_finished_run(d: &WebDriver) -> WebElement {
    // The run is a full-market screen over the bundled bars: seconds to a minute.
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Ok(row) = d
            .find(By::Css(format!("{ITEM} .sched-runs .sched-run-row")))
            .await
        {
            match row.attr("data-status").await.unwrap().as_deref() {
                Some("running") | None => {}
                Some(_) => return row,
            }
        }
        assert!(Instant::now() < deadline, "the run never finished");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn scenario(d: WebDriver) {
    let d = &d;
    click(d, By::Id("nav-settings")).await;
    wait_for(d, By::Id("sched-empty")).await;

    // Added with the after-close preset: 15:05 on trading days, the screen job.
    type_into(d, "sched-name", "after_close").await;
    click(d, By::Id("sched-preset-after-close")).await;
    // The form takes the preset on its next render.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut value = None;
    while Instant::now() < deadline {
        value = wait_for(d, By::Id("sched-time"))
            .await
            .prop("value")
            .await
            .unwrap();
        if value.as_deref() == Some("15:05") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(value.as_deref(), Some("15:05"));
    assert!(
        wait_for(d, By::Id("sched-days-trading"))
            .await
            .is_selected()
            .await
            .unwrap()
    );
    click(d, By::Id("sched-job-screen")).await;
    click(d, By::Id("sched-add")).await;

    let item = wait_for(d, By::Css(ITEM)).await;
    let note = wait_for(d, By::Id("sched-form-note")).await;
    assert_eq!(note.attr("class").await.unwrap().as_deref(), Some("ok"));
    let text_of = |sel: &'static str| {
        let item = item.clone();
        async move { item.find(By::Css(sel)).await.unwrap().text().await.unwrap() }
    };
    assert_eq!(text_of(".sched-when").await, "交易日 15:05");
    assert_eq!(text_of(".sched-job").await, "全市场选股");
    // A Beijing minute, at 15:05.
    let next = item
        .find(By::Css(".sched-next"))
        .await
        .unwrap()
        .attr("data-next")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next.len(), "YYYY-MM-DD HH:MM".len(), "next run {next:?}");
    assert!(next.ends_with(" 15:05"), "next run {next:?}");
    assert!(
        item.find(By::Css(".sched-no-runs")).await.is_ok(),
        "no run yet"
    );
    item.scroll_into_view().await.unwrap();
    shot(d, "80-schedule-added.png").await;

    // Run now: the button says it is running and cannot be pressed again meanwhile (read
    // in one script, so a run that ends between two reads cannot mix the states).
    click(d, By::Css(format!("{ITEM} .sched-run-now"))).await;
    let state = d
        .execute(
            &format!(
                "const b = document.querySelector(\"{ITEM} .sched-run-now\"); \
                 return [b.getAttribute('aria-busy'), b.disabled, b.textContent];"
            ),
            vec![],
        )
        .await
        .unwrap();
    let state = state.json().as_array().unwrap().clone();
    if state[0] == "true" {
        assert_eq!(state[1], true, "{state:?}");
        assert_eq!(state[2], "运行中…", "{state:?}");
    } else {
        assert_eq!(state[1], false, "{state:?}");
        assert_eq!(state[2], "立即运行", "{state:?}");
    }

    let row = wait_finished_run(d).await;
    assert_eq!(
        row.attr("data-status").await.unwrap().as_deref(),
        Some("done"),
        "{}",
        row.text().await.unwrap_or_default()
    );
    let task_id = row.attr("data-task-id").await.unwrap();
    assert!(
        task_id.as_deref().is_some_and(|id| !id.is_empty()),
        "run has no task id"
    );
    let status = row.find(By::Css(".sched-status")).await.unwrap();
    assert_eq!(status.text().await.unwrap(), "完成");
    let when = row.find(By::Css(".sched-run-when")).await.unwrap();
    assert_eq!(when.text().await.unwrap(), "手动运行");
    let run_now = d
        .find(By::Css(format!("{ITEM} .sched-run-now")))
        .await
        .unwrap();
    assert!(run_now.is_enabled().await.unwrap());
    assert_eq!(run_now.text().await.unwrap(), "立即运行");
    row.scroll_into_view().await.unwrap();
    shot(d, "81-schedule-run-history.png").await;

    // The run's task: its result opens from the history.
    row.find(By::Css(".sched-open-task"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    // The result loads after the view opens (加载中… first).
    wait_for(
        d,
        By::Css(format!(
            "#schedules-panel .task-result[data-task-id='{}'] .screen-table",
            task_id.unwrap()
        )),
    )
    .await;
    shot(d, "82-schedule-run-result.png").await;
    click(d, By::Css("#schedules-panel .task-result-close")).await;

    // A bad cron expression: refused under the form in words, nothing listed.
    type_into(d, "sched-name", "bad_cron").await;
    click(d, By::Id("sched-mode-cron")).await;
    type_into(d, "sched-cron", "61 * * * *").await;
    click(d, By::Id("sched-add")).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let note = loop {
        let note = wait_for(d, By::Id("sched-form-note")).await;
        if note.attr("class").await.unwrap().as_deref() == Some("error") {
            break note;
        }
        assert!(Instant::now() < deadline, "no error shown");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let said = note.text().await.unwrap();
    assert!(said.starts_with("未添加："), "{said}");
    assert!(said.contains("61 * * * *"), "{said}");
    assert!(
        d.find(By::Css(
            "#schedules-panel .sched-item[data-name='bad_cron']"
        ))
        .await
        .is_err()
    );
    assert_eq!(
        d.find_all(By::Css("#schedules-panel .sched-item"))
            .await
            .unwrap()
            .len(),
        1
    );
    note.scroll_into_view().await.unwrap();
    shot(d, "83-schedule-bad-cron.png").await;

    // Edit: the form takes the schedule (its name fixed); moved before the open, its
    // history stays.
    click(d, By::Css(format!("{ITEM} .sched-edit"))).await;
    let name = wait_for(d, By::Id("sched-name")).await;
    assert_eq!(
        name.prop("value").await.unwrap().as_deref(),
        Some("after_close")
    );
    assert!(!name.is_enabled().await.unwrap());
    let time = wait_for(d, By::Id("sched-time")).await;
    assert_eq!(time.prop("value").await.unwrap().as_deref(), Some("15:05"));
    click(d, By::Id("sched-preset-pre-open")).await;
    click(d, By::Id("sched-add")).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let item = wait_for(d, By::Css(ITEM)).await;
        let when = item
            .find(By::Css(".sched-when"))
            .await
            .unwrap()
            .text()
            .await;
        if when.as_deref().ok() == Some("交易日 09:25") {
            let next = item.find(By::Css(".sched-next")).await.unwrap();
            let next = next.text().await.unwrap();
            assert!(next.ends_with(" 09:25"), "{next}");
            assert_eq!(
                item.find_all(By::Css(".sched-run-row"))
                    .await
                    .unwrap()
                    .len(),
                1
            );
            break;
        }
        assert!(Instant::now() < deadline, "the edit never showed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let note = wait_for(d, By::Id("sched-form-note")).await;
    assert!(note.text().await.unwrap().contains("after_close"));
    assert!(
        wait_for(d, By::Id("sched-name"))
            .await
            .is_enabled()
            .await
            .unwrap()
    );
    shot(d, "84-schedule-edited.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn a_preset_schedule_runs_now_shows_its_history_is_edited_and_a_bad_cron_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "schedules", scenario).await;
}
