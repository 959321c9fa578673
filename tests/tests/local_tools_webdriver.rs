//! WebDriver test of the local tools in the real app, the model served in-process by
//! `wyckoff-mock-vendor`:
//! - Settings → Local tools adds a folder for the file tools (saved to settings.json);
//! - `write_file` into that folder asks first and the dialog shows the resolved path and
//!   the diff; denied, the file is unchanged; allowed, it holds the new content;
//! - `exec_command`'s dialog shows the exact command and the folder it runs in, and what
//!   "always allow" would allow from then on (every `echo …` command);
//! - Stop during a running command leaves none of its processes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use thirtyfour::prelude::*;
use wyckoff_e2e::live_processes_with;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_for, wait_for_answer,
    wait_gone,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

async fn folders_diffs_and_commands(
    d: WebDriver,
    home: std::path::PathBuf,
    research: std::path::PathBuf,
) {
    let plan = research.join("plan.md");

    // The folder is allowed from Settings.
    click(&d, By::Id("nav-settings")).await;
    let folders = wait_for(&d, By::Id("set-file-roots")).await;
    folders.scroll_into_view().await.unwrap();
    folders
        .send_keys(research.display().to_string())
        .await
        .unwrap();
    click(&d, By::Id("settings-save")).await;
    let msg = wait_for(&d, By::Id("settings-message")).await;
    assert_eq!(msg.attr("class").await.unwrap().as_deref(), Some("ok"));
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.join("settings.json")).unwrap()).unwrap();
    assert_eq!(saved["file_roots"], json!([research.display().to_string()]));

    // write_file: the dialog shows the path and the diff; deny leaves the file as it was.
    click(&d, By::Id("nav-chat")).await;
    send(&d, "把计划里的 b 改成 B").await;
    wait_for(&d, By::Id("approval-dialog")).await;
    let path = wait_for(&d, By::Id("approval-path"))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(path, plan.display().to_string());
    let removed = wait_for(&d, By::Css("#approval-diff .diff-del"))
        .await
        .text()
        .await
        .unwrap();
    let added = wait_for(&d, By::Css("#approval-diff .diff-add"))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!((removed.as_str(), added.as_str()), ("-b", "+B"));
    shot(&d, "local-tools-write-diff.png").await;
    click(&d, By::Id("approval-deny")).await;
    wait_for_answer(&d, "没有修改。").await;
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "a\nb\nc\n");

    // Asked again and allowed once: written.
    send(&d, "还是改吧").await;
    wait_for(&d, By::Id("approval-diff")).await;
    click(&d, By::Id("approval-allow-once")).await;
    wait_gone(&d, By::Id("approval-dialog")).await;
    wait_for_answer(&d, "已修改。").await;
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "a\nB\nc\n");

    // exec_command: the exact command and its folder, before anything runs.
    send(&d, "看看工作目录").await;
    let command = wait_for(&d, By::Id("approval-command"))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(command, "ls -la && touch ran-marker");
    let cwd = wait_for(&d, By::Id("approval-cwd"))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(cwd, home.join("workspace").display().to_string());
    shot(&d, "local-tools-exec-command.png").await;
    click(&d, By::Id("approval-deny")).await;
    wait_for_answer(&d, "命令未执行。").await;
    assert!(!home.join("workspace").join("ran-marker").exists());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn local_tools_show_what_they_will_do_before_asking() {
    let research = tempfile::tempdir().unwrap();
    let research_dir = research.path().canonicalize().unwrap();
    std::fs::write(research_dir.join("plan.md"), "a\nb\nc\n").unwrap();
    let write = || {
        OpenAiStream::tool_call_response(
            "call_write",
            "write_file",
            &json!({"path": research_dir.join("plan.md"), "content": "a\nB\nc\n"}),
        )
    };
    let server = MockServer::start().await.unwrap();
    server.push(Route::Openai, write());
    server.push(Route::Openai, OpenAiStream::text_response(&["没有修改。"]));
    server.push(Route::Openai, write());
    server.push(Route::Openai, OpenAiStream::text_response(&["已修改。"]));
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_exec",
            "exec_command",
            &json!({"command": "ls -la && touch ran-marker"}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["命令未执行。"]),
    );

    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    let home_dir = home.path().to_path_buf();
    run_scenario(&driver, "local-tools", move |d| {
        folders_diffs_and_commands(d, home_dir, research_dir)
    })
    .await;
}

/// In the long command's line: `sleep 300.4187 & sleep 300.4187; wait`.
const STOP_MARKER: &str = "300.4187";

async fn always_scope_then_stop_during_a_command(d: WebDriver) {
    // A simple command: the dialog says what "always allow" would allow from now on.
    send(&d, "打个招呼").await;
    let scope = wait_for(&d, By::Id("approval-always-allows"))
        .await
        .text()
        .await
        .unwrap();
    assert!(scope.contains("每条「echo …」命令"), "{scope}");
    shot(&d, "local-tools-always-scope.png").await;
    click(&d, By::Id("approval-deny")).await;
    wait_for_answer(&d, "没有打招呼。").await;

    // A chained command is not offered "always"; allowed once, it runs until Stop.
    send(&d, "跑一个长命令").await;
    wait_for(&d, By::Id("approval-command")).await;
    assert!(d.find(By::Id("approval-always-allows")).await.is_err());
    assert!(d.find(By::Id("approval-allow-always")).await.is_err());
    click(&d, By::Id("approval-allow-once")).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while live_processes_with(STOP_MARKER).len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the command's sleeps never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    click(&d, By::Id("chat-stop")).await;
    wait_gone(&d, By::Id("chat-stop")).await;
    // SIGKILL lands asynchronously; poll briefly rather than assert on timing.
    let mut left = live_processes_with(STOP_MARKER);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        left = live_processes_with(STOP_MARKER);
    }
    for pid in &left {
        // Clean up what the defect left, so the next run starts clear.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(left.is_empty(), "still running after Stop: {left:?}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn stop_during_a_command_leaves_none_of_its_processes() {
    assert!(
        live_processes_with(STOP_MARKER).is_empty(),
        "leftovers of an earlier run hold the marker"
    );
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_echo",
            "exec_command",
            &json!({"command": "echo hello"}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["没有打招呼。"]),
    );
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_long",
            "exec_command",
            &json!({"command": format!("sleep {STOP_MARKER} & sleep {STOP_MARKER}; wait"), "timeout": 100}),
        ),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&["命令结束。"]));

    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(
        &driver,
        "local-tools-stop",
        always_scope_then_stop_during_a_command,
    )
    .await;
}
