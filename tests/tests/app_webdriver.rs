//! WebDriver tests of the real desktop app: tauri-driver + WebKitWebDriver under Xvfb,
//! with a real Secret Service. `scripts/test` runs them inside `dbus-run-session`:
//! `xvfb-run -a cargo test -p wyckoff-e2e -- --ignored --test-threads=1`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)] // test helpers panic and report on purpose

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_config::Secrets;
use wyckoff_config::secrets::{KeyringBackend, SecretId, Vendor};
use wyckoff_e2e::target_dir;

static PORTS: LazyLock<[u16; 2]> = LazyLock::new(wyckoff_e2e::free_ports::<2>);
const ANTHROPIC: SecretId = SecretId::Provider {
    vendor: Vendor::Anthropic,
};

fn screenshot_dir() -> PathBuf {
    let dir = target_dir().join("e2e-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// tauri-driver, stopped with SIGTERM so it also stops its WebKitWebDriver child
/// (SIGKILL would orphan it on the native port).
struct TauriDriver(Child);

impl TauriDriver {
    fn start(home: &Path, xdg: &Path) -> Self {
        let child = Command::new("tauri-driver")
            .args([
                "--port",
                &PORTS[0].to_string(),
                "--native-port",
                &PORTS[1].to_string(),
            ])
            .args(["--native-driver", "/usr/bin/WebKitWebDriver"])
            .env("WYCKOFF_HOME", home)
            .env("XDG_CONFIG_HOME", xdg.join("config"))
            .env("XDG_CACHE_HOME", xdg.join("cache"))
            .env_remove("ANTHROPIC_API_KEY")
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
        TauriDriver(child)
    }
}

impl Drop for TauriDriver {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: sending a signal to our own child process by pid.
        unsafe {
            libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.0.wait();
    }
}

async fn session() -> WebDriver {
    let app = target_dir().join("debug/wyckoff-desk");
    assert!(
        app.is_file(),
        "build the app first: cargo build -p wyckoff-desk --features tauri/custom-protocol"
    );
    let caps = serde_json::json!({
        "browserName": "wry",
        "tauri:options": { "application": app },
    });
    let caps: Capabilities = caps.as_object().unwrap().clone().into();
    // tauri-driver listens before its WebKitWebDriver is ready; the first session
    // request can fail while the native driver starts.
    let mut attempt = 0;
    loop {
        match WebDriver::new(format!("http://127.0.0.1:{}", PORTS[0]), caps.clone()).await {
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

/// React renders after the session starts: poll instead of failing on the first miss.
async fn wait_for(d: &WebDriver, by: By) -> WebElement {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match d.find(by.clone()).await {
            Ok(e) => return e,
            Err(e) if Instant::now() > deadline => panic!("element {by:?} never appeared: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

async fn wait_attr(d: &WebDriver, by: By, attr: &str, want: &str) -> WebElement {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let el = wait_for(d, by.clone()).await;
        if el.attr(attr).await.unwrap().as_deref() == Some(want) {
            return el;
        }
        assert!(Instant::now() < deadline, "{by:?} never had {attr}={want}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// WebKit can report elements before it has painted them: give it a few frames.
async fn shot(d: &WebDriver, name: &str) {
    tokio::time::sleep(Duration::from_millis(400)).await;
    d.screenshot(&screenshot_dir().join(name)).await.unwrap();
}

fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return hits;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            hits.extend(files_containing(&path, needle));
        } else if std::fs::read(&path)
            .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        {
            hits.push(path);
        }
    }
    hits
}

fn keychain() -> Secrets {
    Secrets::with_backend(Box::new(KeyringBackend::default()), Box::new(|_| None))
}

async fn keys_and_settings_scenario(d: &WebDriver, home: &Path) {
    // The main window renders; a fresh home has no model and says where to go.
    wait_for(d, By::Id("no-model")).await;
    let shown_home = wait_for(d, By::Id("data-home")).await.text().await.unwrap();
    assert_eq!(shown_home, home.display().to_string());
    shot(d, "01-home.png").await;

    wait_for(d, By::Id("nav-settings"))
        .await
        .click()
        .await
        .unwrap();
    let canary = format!("sk-ant-e2e-canary-{}", std::process::id());
    let input = wait_for(d, By::Id("key-input-anthropic")).await;
    input.send_keys(&canary).await.unwrap();
    wait_for(d, By::Id("key-save-anthropic"))
        .await
        .click()
        .await
        .unwrap();

    let status = wait_attr(d, By::Id("key-status-anthropic"), "data-set", "true").await;
    assert!(
        status.text().await.unwrap().contains("钥匙串"),
        "the key should come from the keychain"
    );
    assert_eq!(
        wait_for(d, By::Id("key-input-anthropic"))
            .await
            .value()
            .await
            .unwrap()
            .as_deref(),
        Some("")
    );
    assert!(
        !d.source().await.unwrap().contains(&canary),
        "the key value must not be in the DOM"
    );
    shot(d, "02-settings-key-set.png").await;

    // Stored in the real keychain, and in no file under the data home.
    assert_eq!(
        keychain()
            .get(&ANTHROPIC)
            .map(|(v, _)| v.expose().to_owned()),
        Some(canary.clone())
    );
    assert_eq!(files_containing(home, &canary), Vec::<PathBuf>::new());

    // A valid change is saved…
    wait_for(d, By::Id("set-close-to-tray"))
        .await
        .click()
        .await
        .unwrap();
    wait_for(d, By::Id("settings-save"))
        .await
        .click()
        .await
        .unwrap();
    let msg = wait_for(d, By::Id("settings-message")).await;
    assert_eq!(msg.attr("class").await.unwrap().as_deref(), Some("ok"));
    let settings_file = home.join("settings.json");
    let saved = std::fs::read(&settings_file).expect("settings file written");
    let saved_json: serde_json::Value = serde_json::from_slice(&saved).unwrap();
    assert_eq!(saved_json["close_to_tray"], serde_json::json!(false));

    // …a negative timeout is rejected with a clear message and the file is unchanged.
    let timeout = wait_for(d, By::Id("set-stream-idle")).await;
    timeout.clear().await.unwrap();
    timeout.send_keys("-5").await.unwrap();
    wait_for(d, By::Id("settings-save"))
        .await
        .click()
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let msg = wait_for(d, By::Id("settings-message")).await;
        let text = msg.text().await.unwrap();
        if msg.attr("class").await.unwrap().as_deref() == Some("error") {
            assert!(
                text.contains("stream_idle_timeout_secs") && text.contains("-5"),
                "unclear error: {text}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no error shown for a negative timeout (message: {text})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        std::fs::read(&settings_file).unwrap(),
        saved,
        "a rejected setting must not change the file"
    );
    shot(d, "03-settings-rejected.png").await;

    // Deleting removes it from the keychain.
    wait_for(d, By::Id("key-delete-anthropic"))
        .await
        .click()
        .await
        .unwrap();
    wait_attr(d, By::Id("key-status-anthropic"), "data-set", "false").await;
    assert!(keychain().get(&ANTHROPIC).is_none());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a Secret Service"]
async fn settings_and_keychain_through_the_real_app() {
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let app = target_dir().join("debug/wyckoff-desk");
    wyckoff_e2e::wait_for_app_exit(&app, Duration::from_secs(15));
    let _driver = TauriDriver::start(home.path(), xdg.path());
    let d = session().await;
    // Run the scenario in its own task so a failure still quits the session (a dropped
    // WebDriver blocks for its request timeout).
    let handle = d.clone();
    let home_path = home.path().to_path_buf();
    let outcome =
        tokio::spawn(async move { keys_and_settings_scenario(&handle, &home_path).await }).await;
    if outcome.is_err() {
        let _ = d.screenshot(&screenshot_dir().join("failure.png")).await;
    }
    d.quit().await.unwrap();
    drop(_driver);
    wyckoff_e2e::wait_for_app_exit(&app, Duration::from_secs(15));
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}
