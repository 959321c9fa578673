//! WebDriver test of edit and regenerate in the real app, the mock
//! vendor serving the model and recording what it was sent. Three turns are made; editing
//! the second question forks the conversation just before it and sends the edited text in
//! the fork; regenerating the last answer of the original forks before its last question
//! and sends that question again. Each fork's request carries exactly the history up to
//! its fork point plus the new text, each fork names its source in its header and list row,
//! and the original keeps its six messages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::Value;
use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_for, wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, RecordedRequest, Route};

const Q1: &str = "第一问：000001 怎么看";
const A1: &str = "第一答：偏弱。";
const Q2: &str = "第二问：量能如何";
const A2: &str = "第二答：缩量。";
const Q3: &str = "第三问：下周看什么";
const A3: &str = "第三答：看放量。";
const EDITED: &str = "改过的第二问：量价背离吗";
const A_EDITED: &str = "改后答：没有背离。";
const A_REGENERATED: &str = "重答：看突破。";

/// Only the memory extraction run on leaving a conversation carries this (its prompt);
/// its requests are answered "nothing to remember" and left out of the comparison.
const EXTRACTION: &str = "整理长期记忆";

fn messages(request: &RecordedRequest) -> Vec<Value> {
    request.body["messages"].as_array().unwrap().clone()
}

/// The texts of the stored messages shown, in order.
async fn shown_messages(d: &WebDriver) -> Vec<String> {
    let mut out = Vec::new();
    for block in d.find_all(By::Css(".msg-block .msg")).await.unwrap() {
        out.push(block.text().await.unwrap().trim().to_owned());
    }
    out
}

async fn wait_for_messages(d: &WebDriver, n: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let shown = shown_messages(d).await;
        if shown.len() == n {
            return shown;
        }
        assert!(std::time::Instant::now() < deadline, "{shown:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn fork_scenario(d: WebDriver, server: Arc<MockServer>) {
    let d = &d;
    for (q, a) in [(Q1, A1), (Q2, A2), (Q3, A3)] {
        send(d, q).await;
        wait_for_answer(d, a).await;
    }
    // Reopened, the stored messages carry their actions.
    click(d, By::Css("#chat-conversations li.active .conv-open")).await;
    assert_eq!(
        wait_for_messages(d, 6).await,
        [Q1, A1, Q2, A2, Q3, A3].map(String::from)
    );

    // Edit the second question: the fork is taken at the first answer (#2).
    click(d, By::Css(".msg-block[data-seq='3'] .msg-edit")).await;
    let editor = wait_for(d, By::Css(".msg-block[data-seq='3'] .msg-edit-text")).await;
    assert_eq!(editor.value().await.unwrap().as_deref(), Some(Q2));
    editor.clear().await.unwrap();
    editor.send_keys(EDITED).await.unwrap();
    shot(d, "60-fork-edit.png").await;
    click(d, By::Css(".msg-block[data-seq='3'] .msg-edit-send")).await;
    wait_for_answer(d, A_EDITED).await;
    let header = wait_for(d, By::Id("chat-forked-from")).await;
    let origin = header.text().await.unwrap();
    assert!(
        origin.contains(&format!("分叉自「{Q1}」第 2 条消息")),
        "{origin}"
    );
    let forks = d
        .find_all(By::Css("#chat-conversations li .conv-forked-from"))
        .await
        .unwrap();
    assert_eq!(forks.len(), 1);
    assert!(forks[0].text().await.unwrap().contains("第 2 条消息"));
    shot(d, "61-fork-edited.png").await;

    // The header opens the source, unchanged.
    header.click().await.unwrap();
    wait_for(d, By::Css(".msg-block[data-seq='6'] .msg-regenerate")).await;
    assert_eq!(
        wait_for_messages(d, 6).await,
        [Q1, A1, Q2, A2, Q3, A3].map(String::from)
    );
    assert!(d.find(By::Id("chat-forked-from")).await.is_err());

    // Regenerate its last answer: forked before the third question (at #4), asked again.
    click(d, By::Css(".msg-block[data-seq='6'] .msg-regenerate")).await;
    wait_for_answer(d, A_REGENERATED).await;
    let origin = wait_for(d, By::Id("chat-forked-from"))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        origin.contains(&format!("分叉自「{Q1}」第 4 条消息")),
        "{origin}"
    );
    shot(d, "62-fork-regenerated.png").await;

    // Three conversations; the original still holds its six messages.
    let rows = d.find_all(By::Css("#chat-conversations li")).await.unwrap();
    assert_eq!(rows.len(), 3);
    let mut original = None;
    for row in rows {
        if row.find(By::Css(".conv-forked-from")).await.is_err() {
            original = Some(row.attr("data-id").await.unwrap().unwrap());
        }
    }
    let original = original.expect("the original is listed without an origin");
    click(
        d,
        By::Css(format!(
            "#chat-conversations li[data-id='{original}'] .conv-open"
        )),
    )
    .await;
    wait_for(d, By::Css(".msg-block[data-seq='6']")).await;
    assert_eq!(
        wait_for_messages(d, 6).await,
        [Q1, A1, Q2, A2, Q3, A3].map(String::from)
    );

    // What the model was sent.
    let turns: Vec<RecordedRequest> = server
        .requests_to(Route::Openai)
        .into_iter()
        .filter(|r| !r.raw_body.contains(EXTRACTION))
        .collect();
    assert_eq!(turns.len(), 5, "three turns, the edit, the regeneration");
    // The edit: the second turn's request through the first answer, then the edited text.
    let (second, edit) = (messages(&turns[1]), messages(&turns[3]));
    let roles: Vec<&str> = edit.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(edit[..3], second[..3]);
    assert!(
        turns[3].last_user_text().unwrap().starts_with(EDITED),
        "{:?}",
        turns[3].last_user_text()
    );
    for later in [Q2, A2, Q3, A3] {
        assert!(
            !turns[3].raw_body.contains(later),
            "{later} in the edit's fork"
        );
    }
    // The regeneration: the third turn's request again, history and question alike.
    let (third, regenerated) = (messages(&turns[2]), messages(&turns[4]));
    assert_eq!(regenerated.len(), 6);
    assert_eq!(regenerated[..5], third[..5]);
    assert!(
        turns[4].last_user_text().unwrap().starts_with(Q3),
        "{:?}",
        turns[4].last_user_text()
    );
    for other in [A3, EDITED, A_EDITED] {
        assert!(
            !turns[4].raw_body.contains(other),
            "{other} in the regenerated fork"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn edit_and_regenerate_fork_the_conversation_and_leave_it_unchanged() {
    let server = Arc::new(MockServer::start().await.unwrap());
    // Extraction first in the queue: only its requests carry its prompt, and a turn's
    // request never does, so turns pass over these.
    for _ in 0..6 {
        server.push(
            Route::Openai,
            OpenAiStream::text_response(&["无"]).when_body_contains(EXTRACTION),
        );
    }
    // Each answer goes to the first request carrying its question from then on.
    for (question, answer) in [
        (Q1, A1),
        (Q2, A2),
        (Q3, A3),
        (EDITED, A_EDITED),
        (Q3, A_REGENERATED),
    ] {
        server.push(
            Route::Openai,
            OpenAiStream::text_response(&[answer]).when_body_contains(question),
        );
    }
    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-fork-e2e-123456"),
        ],
    );
    let s = server.clone();
    run_scenario(&driver, "fork", move |d| fork_scenario(d, s)).await;
}
