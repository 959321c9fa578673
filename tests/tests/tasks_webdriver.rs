//! WebDriver test of background work in the real app, with the model served
//! in-process by `wyckoff-mock-vendor` (OpenAI wire format):
//! - the model calls `screen_stocks`: the task panel shows it, it finishes with ✓, its
//!   result opens as a table, and the completion goes back to the model (a notification
//!   turn with the task id) whose answer appears under a system line;
//! - the model calls `generate_ai_report`, whose own model call is held back: the panel
//!   shows the task running with its stage while a second message is answered; released,
//!   the task finishes and its report renders;
//! - a third task is cancelled from the panel and ends as cancelled, its notice answered;
//! - reopened, the conversation words each stored notice from its typed fields, in
//!   Chinese and, after the language changes, in English.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_attr, wait_for,
    wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route};

fn text(t: &str) -> Response {
    OpenAiStream::text_response(&[t])
}

fn row(tool: &str) -> By {
    By::Css(format!(".task-panel .task-row[data-tool='{tool}']"))
}

async fn background_scenario(d: WebDriver, server: Arc<MockServer>) {
    let d = &d;
    // 1. A screen replayed on a day with a candidate: done at once, then its result.
    send(d, "扫描全市场（2019-01-31）").await;
    wait_for_answer(d, "筛选已提交").await;
    let screen = wait_attr(d, row("screen_stocks"), "data-status", "completed").await;
    assert!(screen.text().await.unwrap().contains("✓"));
    // The completion came back to the model, whose answer follows a system line.
    wait_for_answer(d, "筛选结果已读").await;
    let system = wait_for(d, By::Css(".msg.system")).await;
    assert!(
        system.text().await.unwrap().contains("后台任务完成"),
        "{:?}",
        system.text().await
    );
    let requests = server.requests_to(Route::Openai);
    let note = requests
        .iter()
        .find(|r| r.raw_body.contains("<tool-name>screen_stocks</tool-name>"))
        .expect("the notification request");
    let task_id = screen.attr("data-task-id").await.unwrap().unwrap();
    assert!(
        note.raw_body
            .contains(&format!("<task-id>{task_id}</task-id>"))
    );
    // The line is the notice of exactly that task, typed, not text read from the prompt.
    assert_eq!(
        system.attr("data-task-id").await.unwrap().as_deref(),
        Some(task_id.as_str())
    );
    assert_eq!(
        system.attr("data-outcome").await.unwrap().as_deref(),
        Some("completed")
    );
    // Its result: a sortable table of candidates.
    screen
        .find(By::Css(".task-open"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let table = wait_for(d, By::Css(".task-result .screen-table tbody tr")).await;
    assert!(table.attr("data-code").await.unwrap().is_some());
    // Each candidate says what L4's other timeframes said: the weekly trend and the 60-minute
    // check (no minute bars in this home), every line in the title naming its timeframe.
    let tf = table.find(By::Css("td.timeframes")).await.unwrap();
    let weekly = tf.attr("data-weekly").await.unwrap().unwrap_or_default();
    assert_eq!(
        tf.attr("data-intraday").await.unwrap().as_deref(),
        Some("no_minute_data")
    );
    let said = tf.text().await.unwrap();
    let word = match weekly.as_str() {
        "up" => "周线上升",
        "down" => "周线下降",
        "sideways" => "周线横盘",
        "" => "周线不足周数",
        other => panic!("weekly trend {other}"),
    };
    assert!(
        said.contains(word) && said.contains("60分钟无分钟数据"),
        "{said}"
    );
    let title = tf.attr("title").await.unwrap().unwrap_or_default();
    let heads: Vec<&str> = title
        .lines()
        .map(|l| l.split('：').next().unwrap())
        .collect();
    assert_eq!(heads, ["日线", "周线", "60分钟"], "{title}");
    shot(d, "50-task-screen-result.png").await;
    click(d, By::Css(".task-result-close")).await;

    // 2. A report whose model call is held: the task runs while the chat goes on.
    send(d, "给 000001 生成研报").await;
    wait_for_answer(d, "研报已在后台生成").await;
    let report = wait_attr(d, row("generate_ai_report"), "data-status", "running").await;
    let stage = report
        .find(By::Css(".task-stage"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(stage.contains("LLM 生成"), "{stage}");
    send(d, "第二个问题：今天几号").await;
    wait_for_answer(d, "第二个问题的回答").await;
    assert_eq!(
        report.attr("data-status").await.unwrap().as_deref(),
        Some("running"),
        "the task was still running while the chat answered"
    );
    shot(d, "51-task-running-chat-usable.png").await;
    server.open_gate("report");
    let report = wait_attr(d, row("generate_ai_report"), "data-status", "completed").await;
    report
        .find(By::Css(".task-open"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let md = wait_for(d, By::Css(".task-result .markdown.report")).await;
    assert!(md.text().await.unwrap().contains("防守"));
    click(d, By::Css(".task-result-close")).await;
    wait_for_answer(d, "研报读完了").await;

    // 3. Cancel from the panel: the task ends cancelled.
    send(d, "再给 000001 生成一份研报").await;
    wait_for_answer(d, "第二份研报已提交").await;
    let running = wait_attr(d, row("generate_ai_report"), "data-status", "running").await;
    running
        .find(By::Css(".task-cancel"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let cancelled = wait_attr(
        d,
        By::Css(".task-row[data-status='cancelled']"),
        "data-tool",
        "generate_ai_report",
    )
    .await;
    assert!(cancelled.text().await.unwrap().contains("已取消"));
    shot(d, "52-task-cancelled.png").await;
    // Its notice is answered like the others, in a follow-up turn of its own.
    wait_for_answer(d, "取消已知悉").await;
    wait_for(d, By::Css(".task-notice[data-outcome='cancelled']")).await;

    // 4. Reopened, the conversation words each stored notice from its fields, in the
    // window's language: Chinese, then English after the language changes.
    let conversation = wait_for(d, By::Css("#chat-conversations li.active"))
        .await
        .attr("data-id")
        .await
        .unwrap()
        .unwrap();
    let reopen = |d: &WebDriver| {
        let conversation = conversation.clone();
        let d = d.clone();
        async move {
            click(&d, By::Id("chat-new")).await;
            click(
                &d,
                By::Css(format!(
                    "#chat-conversations li[data-id='{conversation}'] .conv-open"
                )),
            )
            .await;
            wait_for(&d, By::Css(".msg-block.system .task-notice")).await;
        }
    };
    reopen(d).await;
    let stored = d
        .find_all(By::Css(".msg-block.system .task-notice"))
        .await
        .unwrap();
    let mut lines = Vec::new();
    for n in &stored {
        lines.push((
            n.attr("data-outcome").await.unwrap().unwrap_or_default(),
            n.text().await.unwrap(),
        ));
    }
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0].0, "completed");
    assert!(
        lines[0].1.starts_with("✅ 后台任务完成：全市场扫描"),
        "{lines:?}"
    );
    assert_eq!(lines[2].0, "cancelled");
    assert!(lines[2].1.contains("后台任务已取消"), "{lines:?}");
    assert_eq!(
        stored[0].attr("data-task-id").await.unwrap().as_deref(),
        Some(task_id.as_str())
    );

    click(d, By::Id("nav-settings")).await;
    click(d, By::Css("#set-language option[value='en']")).await;
    click(d, By::Id("settings-save")).await;
    click(d, By::Id("nav-chat")).await;
    reopen(d).await;
    let first = wait_for(d, By::Css(".msg-block.system .task-notice")).await;
    let mut english = String::new();
    for _ in 0..50 {
        english = first.text().await.unwrap();
        if english.starts_with("✅ Background task finished") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        english.starts_with("✅ Background task finished: 全市场扫描"),
        "{english}"
    );
    shot(d, "53-task-notices-reopened-in-english.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn background_tasks_show_in_the_panel_while_the_chat_goes_on() {
    let server = Arc::new(MockServer::start().await.unwrap());
    // Each response goes to the request it is meant for: a turn's next round and a
    // background task's own model call may arrive in either order.
    let push = |r: Response| server.push(Route::Openai, r);
    push(
        OpenAiStream::tool_call_response("c_scr", "screen_stocks", &json!({"as_of": "2019-01-31"}))
            .when_body_contains("扫描全市场"),
    );
    push(text("筛选已提交。").when_body_contains("全市场扫描已提交后台执行"));
    push(
        text("筛选结果已读：1 只候选。").when_body_contains("<tool-name>screen_stocks</tool-name>"),
    );
    push(
        OpenAiStream::tool_call_response(
            "c_rep",
            "generate_ai_report",
            &json!({"stock_codes": ["000001"]}),
        )
        .when_body_contains("给 000001 生成研报"),
    );
    push(text("研报已在后台生成。").when_body_contains("AI 研报已提交后台执行"));
    push(
        text("## 进攻\n暂无\n## 防守\n000001 平安银行")
            .when_body_contains("三阵营研报")
            .gated("report"),
    );
    push(text("第二个问题的回答。").when_body_contains("第二个问题"));
    push(text("研报读完了。").when_body_contains("<tool-name>generate_ai_report</tool-name>"));
    push(
        OpenAiStream::tool_call_response(
            "c_rep2",
            "generate_ai_report",
            &json!({"stock_codes": ["000001"]}),
        )
        .when_body_contains("再给 000001"),
    );
    push(text("第二份研报已提交。").when_body_contains("再给 000001"));
    // the second report's model call is never released: it is cancelled from the panel
    push(
        text("不会送出")
            .when_body_contains("三阵营研报")
            .gated("never"),
    );
    push(text("取消已知悉。").when_body_contains("<status>failed</status>"));

    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-tasks-e2e-123456"),
        ],
    );
    let s = server.clone();
    run_scenario(&driver, "tasks", move |d| background_scenario(d, s)).await;
}
