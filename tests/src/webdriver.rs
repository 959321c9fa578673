//! The real app under WebDriver: tauri-driver (+ WebKitWebDriver) on free ports, a
//! session on the debug build, polling finders and screenshots. Shared by every
//! `*_webdriver` test.

// Test support: progress notes go to the test's stderr.
#![allow(clippy::print_stderr)]

use std::future::Future;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use thirtyfour::prelude::*;

use crate::{free_ports, target_dir, wait_for_app_exit};

/// How long an element may take to appear (React renders after the session starts;
/// turns stream from a local server).
const FIND_TIMEOUT: Duration = Duration::from_secs(20);

/// The debug build of the app, or the binary `WYCKOFF_E2E_APP` names (the release build
/// for the `app_perf` bench).
pub fn app_binary() -> PathBuf {
    let app = std::env::var_os("WYCKOFF_E2E_APP")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("debug/wyckoff-desk"));
    assert!(
        app.is_file(),
        "build the app first: cargo build -p wyckoff-desk --features tauri/custom-protocol"
    );
    app
}

pub fn screenshot_dir() -> PathBuf {
    let dir = target_dir().join("e2e-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

/// tauri-driver on its own free ports, stopped with SIGTERM so it also stops its
/// WebKitWebDriver child (SIGKILL would orphan it on the native port).
pub struct TauriDriver {
    child: Child,
    port: u16,
}

impl TauriDriver {
    /// Starts tauri-driver; the app it launches sees `WYCKOFF_HOME=home`, its own XDG
    /// dirs under `xdg` and `env`.
    pub fn start(home: &Path, xdg: &Path, env: &[(&str, &str)]) -> Self {
        let [port, native] = free_ports::<2>();
        let mut cmd = Command::new("tauri-driver");
        cmd.args(["--port", &port.to_string()])
            .args(["--native-port", &native.to_string()])
            .args(["--native-driver", "/usr/bin/WebKitWebDriver"])
            .env("WYCKOFF_HOME", home)
            .env("XDG_CONFIG_HOME", xdg.join("config"))
            .env("XDG_CACHE_HOME", xdg.join("cache"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd
            .spawn()
            .expect("tauri-driver must be installed (scripts/setup installs it)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "tauri-driver did not start listening"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        TauriDriver { child, port }
    }

    /// Launches the app and opens a session on it. tauri-driver listens before its
    /// WebKitWebDriver is ready, so the first requests may fail.
    pub async fn session(&self) -> WebDriver {
        let caps = serde_json::json!({
            "browserName": "wry",
            "tauri:options": { "application": app_binary() },
        });
        let caps: Capabilities = caps
            .as_object()
            .expect("capabilities object")
            .clone()
            .into();
        let mut attempt = 0;
        loop {
            match WebDriver::new(format!("http://127.0.0.1:{}", self.port), caps.clone()).await {
                Ok(d) => return d,
                Err(e) if attempt < 10 => {
                    attempt += 1;
                    eprintln!("session attempt {attempt} failed: {e}");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => panic!("cannot start a WebDriver session: {e}"),
            }
        }
    }
}

impl Drop for TauriDriver {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: sending a signal to our own child process by pid.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

/// Runs `scenario` against a fresh app session: in its own task, so a failing scenario
/// still gets a failure screenshot (`{name}-failure.png`) and quits the session (a
/// dropped WebDriver blocks for its request timeout); then waits for the app to exit,
/// since the app is single-instance and the next launch would hand over to it.
pub async fn run_scenario<F, Fut>(driver: &TauriDriver, name: &str, scenario: F)
where
    F: FnOnce(WebDriver) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    wait_for_app_exit(&app_binary(), Duration::from_secs(15));
    let d = driver.session().await;
    let outcome = tokio::spawn(scenario(d.clone())).await;
    if outcome.is_err() {
        let _ = d
            .screenshot(&screenshot_dir().join(format!("{name}-failure.png")))
            .await;
    }
    let _ = d.quit().await;
    wait_for_app_exit(&app_binary(), Duration::from_secs(15));
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}

/// The first element matching `by`, polling until [`FIND_TIMEOUT`].
pub async fn wait_for(d: &WebDriver, by: By) -> WebElement {
    let deadline = Instant::now() + FIND_TIMEOUT;
    loop {
        match d.find(by.clone()).await {
            Ok(e) => return e,
            Err(e) if Instant::now() > deadline => panic!("element {by:?} never appeared: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Waits until the page (its scrolling `.content`) has kept the same height for half a
/// second. Panels that load their data after the page appears grow it and move whatever
/// is below them: a click aimed at an element down there can land on what moved into its
/// place (how the settings page's push and MCP tests flaked).
pub async fn wait_layout_settled(d: &WebDriver) {
    const STILL: Duration = Duration::from_millis(500);
    let deadline = Instant::now() + FIND_TIMEOUT;
    let mut last = None;
    let mut since = Instant::now();
    loop {
        let height = d
            .execute(
                "const c = document.querySelector('.content'); return c ? c.scrollHeight : 0",
                vec![],
            )
            .await
            .ok()
            .and_then(|r| r.json().as_f64());
        if height != last {
            last = height;
            since = Instant::now();
        } else if since.elapsed() >= STILL {
            return;
        }
        assert!(Instant::now() < deadline, "the page kept changing height");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Replaces the text of the input matching `by` with `text`, again until it holds exactly
/// that: a form that renders again as its page's data arrives can put its default back
/// between the clear and the typing (how the replay test flaked, the date typed in front of
/// the default).
pub async fn fill(d: &WebDriver, by: By, text: &str) {
    let deadline = Instant::now() + FIND_TIMEOUT;
    loop {
        let input = wait_for(d, by.clone()).await;
        let typed = async {
            input.clear().await?;
            input.send_keys(text).await?;
            input.prop("value").await
        };
        if typed.await.ok().flatten().as_deref() == Some(text) {
            return;
        }
        assert!(Instant::now() < deadline, "{by:?} never held {text:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Clicks the first element matching `by` once it appears.
pub async fn click(d: &WebDriver, by: By) {
    let what = format!("{by:?}");
    wait_for(d, by)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {what}: {e}"));
}

/// Waits for an assistant answer containing `text`.
pub async fn wait_for_answer(d: &WebDriver, text: &str) -> WebElement {
    wait_for(
        d,
        By::XPath(format!(
            "//*[contains(@class,'final') and contains(., '{text}')]"
        )),
    )
    .await
}

/// Waits until no element matches `by`.
pub async fn wait_gone(d: &WebDriver, by: By) {
    let deadline = Instant::now() + FIND_TIMEOUT;
    while d.find(by.clone()).await.is_ok() {
        assert!(Instant::now() < deadline, "{by:?} never went away");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the element matching `by` has `attr` = `want`.
pub async fn wait_attr(d: &WebDriver, by: By, attr: &str, want: &str) -> WebElement {
    let deadline = Instant::now() + FIND_TIMEOUT;
    loop {
        let el = wait_for(d, by.clone()).await;
        if el.attr(attr).await.ok().flatten().as_deref() == Some(want) {
            return el;
        }
        assert!(Instant::now() < deadline, "{by:?} never had {attr}={want}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Types `text` into the composer and sends it.
pub async fn send(d: &WebDriver, text: &str) {
    let composer = wait_for(d, By::Id("composer")).await;
    composer.send_keys(text).await.expect("type into composer");
    click(d, By::Id("chat-send")).await;
}

/// A screenshot under `target/e2e-screenshots/`. WebKit can report elements before it
/// has painted them: give it a few frames first.
pub async fn shot(d: &WebDriver, name: &str) {
    tokio::time::sleep(Duration::from_millis(400)).await;
    d.screenshot(&screenshot_dir().join(name))
        .await
        .expect("screenshot");
}

/// A settings file whose only model is the OpenAI-compatible server at `base_url`.
pub fn mock_model_settings(home: &Path, base_url: &str) {
    let settings = serde_json::json!({
        "version": 1,
        "models": [{
            "id": "mock", "provider": "openai_compatible", "model": "mock-model",
            "base_url": base_url, "context_window": null,
            "input_price_per_mtok": 3.0, "output_price_per_mtok": 15.0
        }],
        "main_model": "mock",
    });
    std::fs::write(home.join("settings.json"), settings.to_string()).expect("write settings");
}
