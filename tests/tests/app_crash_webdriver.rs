//! Crash safety of the desktop app: `kill -9` of the real app while a
//! turn streams, then the app started again on the same data home. Nothing stored before
//! the kill is lost (an earlier finished turn, the killed turn's user message), SQLite's
//! integrity check passes, and the killed turn is marked interrupted — in the database
//! and in the reopened conversation. While the app's turn streams, the CLI runs a turn on
//! the same data home: it works and leaves the app's open turn alone.
//!
//! The model is an in-process mock vendor (OpenAI's stream) whose second answer stalls
//! after its first words, so the kill lands mid-stream.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::Row;
use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, app_binary, click, mock_model_settings, run_scenario, send, shot, wait_for,
    wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

// no stock codes: a code in an answer without analyze_stock makes the loop guard retry
const FIRST_QUESTION: &str = "先聊聊威科夫方法";
const FIRST_ANSWER: &str = "威科夫方法看量价关系。";
const SECOND_QUESTION: &str = "吸筹阶段怎么判断？";
const STREAMED: &str = "吸筹阶段的特征是";
const CLI_QUESTION: &str = "命令行也来问一句";
const CLI_ANSWER: &str = "命令行的回答。";

/// Pids of running processes of `exe` whose `WYCKOFF_HOME` is `home`: this test's app
/// only, never a copy another test runs at the same time.
fn app_pids(exe: &Path, home: &Path) -> Vec<i32> {
    let mut wanted = b"WYCKOFF_HOME=".to_vec();
    wanted.extend_from_slice(home.as_os_str().as_encoded_bytes());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p == exe))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_slice()))
        })
        .collect()
}

async fn answered_then_killed_mid_stream(d: WebDriver, server: Arc<MockServer>, home: PathBuf) {
    send(&d, FIRST_QUESTION).await;
    wait_for_answer(&d, FIRST_ANSWER).await;
    send(&d, SECOND_QUESTION).await;
    // the stream has started: its first words are on screen
    wait_for(
        &d,
        By::XPath(format!(
            "//*[contains(@class,'streaming') and contains(., '{STREAMED}')]"
        )),
    )
    .await;
    assert_eq!(server.requests_to(Route::Openai).len(), 2);
    shot(&d, "80-app-crash-before-kill.png").await;

    // The CLI on the same data home while the app's turn is open: it answers (no
    // "database is locked") and leaves the app's live turn alone.
    let (h, url) = (home.clone(), format!("{}/v1", server.url()));
    let out = tokio::task::spawn_blocking(move || {
        wyckoff_e2e::wyckoff_cli(&h)
            .args([
                "run",
                "--provider",
                "openai",
                "--base-url",
                &url,
                CLI_QUESTION,
            ])
            .env("OPENAI_API_KEY", "sk-e2e-app-and-cli-0000")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(printed.contains(CLI_ANSWER), "{printed}");
    let pool = db(&home).await;
    let open: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM conversation_turn WHERE outcome IS NULL")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(open, 1, "the app's streaming turn is still open");
    pool.close().await;

    let app = app_binary();
    let pids = app_pids(&app, &home);
    assert!(!pids.is_empty(), "the app is not running");
    for pid in pids {
        #[allow(unsafe_code)]
        // SAFETY: a signal to the app process this test launched (found by its binary).
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !app_pids(&app, &home).is_empty() {
        assert!(Instant::now() < deadline, "the app survived SIGKILL");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn reopened_after_the_crash(d: WebDriver) {
    // the CLI's conversation is the newest: open the app's by its title
    click(
        &d,
        By::XPath(format!(
            "//*[@id='chat-conversations']//li[contains(., '{FIRST_QUESTION}')]//*[contains(@class,'conv-open')]"
        )),
    )
    .await;
    let transcript = wait_for(&d, By::Id("transcript")).await;
    wait_for(&d, By::Id("chat-interrupted")).await;
    wait_for(&d, By::Css(".msg.user.interrupted")).await;
    let text = transcript.text().await.unwrap();
    for expected in [FIRST_QUESTION, FIRST_ANSWER, SECOND_QUESTION] {
        assert!(text.contains(expected), "missing {expected:?} in {text}");
    }
    shot(&d, "81-app-crash-reopened.png").await;
}

async fn db(home: &Path) -> sqlx::SqlitePool {
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(home.join("wyckoff.db"))
        .busy_timeout(Duration::from_secs(5));
    sqlx::SqlitePool::connect_with(opts).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn app_killed_mid_stream_reopens_with_the_turn_marked_interrupted() {
    let server = Arc::new(MockServer::start().await.unwrap());
    server.push(Route::Openai, OpenAiStream::text_response(&[FIRST_ANSWER]));
    // Starts answering, then never sends another byte.
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .text(&[STREAMED])
            .response()
            .stall_after(2),
    );
    // for the CLI that runs beside the app
    server.push(Route::Openai, OpenAiStream::text_response(&[CLI_ANSWER]));
    let home = tempfile::tempdir().unwrap();
    let h: PathBuf = home.path().to_path_buf();
    mock_model_settings(&h, &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(&h, xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);

    let (s, h2) = (server.clone(), h.clone());
    run_scenario(&driver, "app-crash", move |d| {
        answered_then_killed_mid_stream(d, s, h2)
    })
    .await;

    // Straight after the kill, before any restart: what was written is there, intact.
    let pool = db(&h).await;
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(check, "ok");
    let conversation: String = sqlx::query_scalar(
        "SELECT conversation_id FROM conversation_message WHERE message LIKE ? LIMIT 1",
    )
    .bind(format!("%{SECOND_QUESTION}%"))
    .fetch_one(&pool)
    .await
    .unwrap();
    let stored: Vec<(String, String)> = sqlx::query(
        "SELECT role, message FROM conversation_message WHERE conversation_id = ? ORDER BY seq",
    )
    .bind(&conversation)
    .fetch_all(&pool)
    .await
    .unwrap()
    .into_iter()
    .map(|r| (r.get("role"), r.get("message")))
    .collect();
    assert!(stored.len() >= 3, "{stored:?}");
    assert!(stored[0].1.contains(FIRST_QUESTION) && stored[1].1.contains(FIRST_ANSWER));
    assert_eq!(stored[2].0, "user");
    assert!(stored[2].1.contains(SECOND_QUESTION));
    pool.close().await;

    run_scenario(&driver, "app-crash-restart", reopened_after_the_crash).await;

    let pool = db(&h).await;
    let outcomes: Vec<Option<String>> = sqlx::query_scalar(
        "SELECT outcome FROM conversation_turn WHERE conversation_id = ? ORDER BY started_at, rowid",
    )
    .bind(&conversation)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        outcomes,
        vec![Some("done".to_owned()), Some("interrupted".to_owned())]
    );
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(check, "ok");
}
