//! WebDriver tests of the real desktop app: tauri-driver + WebKitWebDriver under Xvfb,
//! with a real Secret Service. `scripts/test` runs them inside `dbus-run-session`:
//! `xvfb-run -a cargo test -p wyckoff-e2e -- --ignored --test-threads=1`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)] // test helpers panic and report on purpose

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_config::Secrets;
use wyckoff_config::secrets::{KeyringBackend, SecretId, Vendor};
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_attr, wait_for};
const ANTHROPIC: SecretId = SecretId::Provider {
    vendor: Vendor::Anthropic,
};

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

    click(d, By::Id("nav-settings")).await;
    let canary = format!("sk-ant-e2e-canary-{}", std::process::id());
    let input = wait_for(d, By::Id("key-input-anthropic")).await;
    input.send_keys(&canary).await.unwrap();
    click(d, By::Id("key-save-anthropic")).await;

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
    click(d, By::Id("set-close-to-tray")).await;
    click(d, By::Id("settings-save")).await;
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
    click(d, By::Id("settings-save")).await;
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
    click(d, By::Id("key-delete-anthropic")).await;
    wait_attr(d, By::Id("key-status-anthropic"), "data-set", "false").await;
    assert!(keychain().get(&ANTHROPIC).is_none());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a Secret Service"]
async fn settings_and_keychain_through_the_real_app() {
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    // No key from the environment: the one typed in the app must come from the keychain.
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("ANTHROPIC_API_KEY", "")]);
    let home_path = home.path().to_path_buf();
    run_scenario(&driver, "settings", move |d| async move {
        keys_and_settings_scenario(&d, &home_path).await
    })
    .await;
}
