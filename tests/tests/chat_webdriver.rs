//! WebDriver test of the chat in the real app, with `wyckoff-mock-vendor` as the model
//! (OpenAI wire format): a tool turn shows a tool card; a Markdown answer is rendered by
//! the backend and anything active in it (`<script>`, `onerror`) is inert.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_e2e::{binary, target_dir};

static PORTS: LazyLock<[u16; 2]> = LazyLock::new(wyckoff_e2e::free_ports::<2>);

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: signalling our own child process by pid.
        unsafe {
            libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.0.wait();
    }
}

/// Starts the mock vendor and returns it with its base URL.
fn mock_vendor(script: &Path) -> (Killed, String) {
    let mut child = Command::new(binary("wyckoff-mock-vendor"))
        .arg("--script")
        .arg(script)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .expect("mock vendor prints its address")
        .to_owned();
    (Killed(child), url)
}

fn tauri_driver(home: &Path, xdg: &Path) -> Killed {
    let child = Command::new("tauri-driver")
        .args([
            "--port",
            &PORTS[0].to_string(),
            "--native-port",
            &PORTS[1].to_string(),
        ])
        .args(["--native-driver", "/usr/bin/WebKitWebDriver"])
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env("WYCKOFF_KEY_MOCK", "sk-chat-e2e-canary-123456")
        .env("XDG_CONFIG_HOME", xdg.join("config"))
        .env("XDG_CACHE_HOME", xdg.join("cache"))
        .spawn()
        .expect("tauri-driver must be installed (scripts/setup installs it)");
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", PORTS[0])).is_err() {
        assert!(
            Instant::now() < deadline,
            "tauri-driver did not start listening"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Killed(child)
}

async fn session() -> WebDriver {
    let app = target_dir().join("debug/wyckoff-desk");
    let caps = serde_json::json!({ "browserName": "wry", "tauri:options": { "application": app } });
    let caps: Capabilities = caps.as_object().unwrap().clone().into();
    for attempt in 1..=10 {
        match WebDriver::new(format!("http://127.0.0.1:{}", PORTS[0]), caps.clone()).await {
            Ok(d) => return d,
            Err(e) => eprintln!("session attempt {attempt} failed: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("cannot start a WebDriver session");
}

async fn wait_for(d: &WebDriver, by: By) -> WebElement {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(e) = d.find(by.clone()).await {
            return e;
        }
        assert!(Instant::now() < deadline, "element {by:?} never appeared");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn send(d: &WebDriver, text: &str) {
    let composer = wait_for(d, By::Id("composer")).await;
    composer.send_keys(text).await.unwrap();
    wait_for(d, By::Id("chat-send"))
        .await
        .click()
        .await
        .unwrap();
}

async fn chat_scenario(d: &WebDriver) {
    let shots = target_dir().join("e2e-screenshots");
    std::fs::create_dir_all(&shots).unwrap();

    // A tool turn: the model calls analyze_stock on 000001 (bundled data), then answers.
    send(d, "帮我看看 000001").await;
    let card = wait_for(
        d,
        By::Css(".tool-card[data-tool='analyze_stock'][data-status='ok']"),
    )
    .await;
    assert!(card.text().await.unwrap().contains("000001"));
    wait_for(
        d,
        By::XPath("//*[contains(@class,'final') and contains(., '的分析见上')]"),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    d.screenshot(&shots.join("10-chat-tool-card.png"))
        .await
        .unwrap();

    // A Markdown answer: rendered (table, strikethrough) and sanitised.
    send(d, "总结一下").await;
    let table = wait_for(d, By::Css(".msg.final .markdown table")).await;
    assert!(table.text().await.unwrap().contains("000001"));
    wait_for(d, By::Css(".msg.final .markdown del")).await;
    let html = wait_for(
        d,
        By::XPath("(//*[contains(@class,'final')]//*[contains(@class,'markdown')])[last()]"),
    )
    .await
    .inner_html()
    .await
    .unwrap();
    assert!(
        !html.contains("<script") && !html.contains("onerror"),
        "unsanitised markdown: {html}"
    );
    let pwned = d
        .execute(
            "return window.__pwned === undefined ? null : window.__pwned;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        pwned.json(),
        &serde_json::Value::Null,
        "script in the answer ran"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    d.screenshot(&shots.join("11-chat-markdown.png"))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn chat_streams_tool_cards_and_sanitised_markdown() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/chat_tool_then_markdown.json");
    let (_mock, url) = mock_vendor(&script);
    let home = tempfile::tempdir().unwrap();
    let settings = serde_json::json!({
        "version": 1,
        "models": [{
            "id": "mock", "provider": "openai_compatible", "model": "mock-model",
            "base_url": format!("{url}/v1"), "context_window": null,
            "input_price_per_mtok": null, "output_price_per_mtok": null
        }],
        "main_model": "mock",
    });
    std::fs::write(home.path().join("settings.json"), settings.to_string()).unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let app = target_dir().join("debug/wyckoff-desk");
    wyckoff_e2e::wait_for_app_exit(&app, Duration::from_secs(15));
    let _driver = tauri_driver(home.path(), xdg.path());
    let d = session().await;
    let handle = d.clone();
    let outcome = tokio::spawn(async move { chat_scenario(&handle).await }).await;
    if outcome.is_err() {
        let _ = d
            .screenshot(&target_dir().join("e2e-screenshots/chat-failure.png"))
            .await;
    }
    d.quit().await.unwrap();
    drop(_driver);
    wyckoff_e2e::wait_for_app_exit(&app, Duration::from_secs(15));
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}
