//! The tray as a desktop panel drives it, for WebDriver tests run on the session bus
//! `dbus-run-session` gives the suite: stand-in daemons (tests/support/fake-notifyd.py,
//! tests/support/fake-tray-host.py as the panel's StatusNotifierWatcher), the tray menu
//! read and clicked over com.canonical.dbusmenu, and whether the page is hidden.
//! Included with `#[path]` by the tests that need it.
#![allow(dead_code)]

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use thirtyfour::prelude::*;

pub fn support(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("support")
        .join(script)
}

/// A stand-in daemon, killed when dropped.
pub struct Daemon(Child);

impl Daemon {
    /// Starts `script args…` and waits for its "ready" line (its bus name is owned).
    pub fn start(script: &str, args: &[&str]) -> Daemon {
        let mut child = Command::new("/usr/bin/python3")
            .arg(support(script))
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 with jeepney (scripts/setup installs python3-jeepney)");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "{script}");
        Daemon(child)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The tray menu's top-level entries as the panel reads them: (id, label).
pub fn tray_menu(items: &Path) -> Vec<(i64, String)> {
    let out = Command::new("/usr/bin/python3")
        .arg(support("fake-tray-host.py"))
        .arg("menu")
        .arg(items)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    entries
        .iter()
        .map(|e| {
            (
                e["id"].as_i64().unwrap(),
                e["label"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Waits until the app has registered its tray item with the watcher, then until an
/// entry's label is `want`.
pub async fn wait_tray_label(items: &Path, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let registered = std::fs::read_to_string(items).is_ok_and(|s| !s.trim().is_empty());
        let labels: Vec<String> = if registered {
            tray_menu(items).into_iter().map(|(_, l)| l).collect()
        } else {
            Vec::new()
        };
        if labels.iter().any(|l| l == want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the tray never showed {want:?}: {labels:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Clicks the tray entry labelled `label`, as the panel does.
pub fn click_tray(items: &Path, label: &str) {
    let id = tray_menu(items)
        .into_iter()
        .find(|(_, l)| l == label)
        .unwrap_or_else(|| panic!("no tray entry {label:?}"))
        .0;
    let status = Command::new("/usr/bin/python3")
        .arg(support("fake-tray-host.py"))
        .arg("click")
        .arg(items)
        .arg(id.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Whether the page is hidden, as the webview itself sees it.
pub async fn page_hidden(d: &WebDriver) -> bool {
    d.execute("return document.visibilityState", vec![])
        .await
        .unwrap()
        .json()
        .as_str()
        == Some("hidden")
}

/// Clicks the tray's Show/Hide and waits until the page is `hidden` (or shown again).
pub async fn show_hide(d: &WebDriver, items: &Path, hidden: bool) {
    click_tray(items, "显示/隐藏");
    let deadline = Instant::now() + Duration::from_secs(10);
    while page_hidden(d).await != hidden {
        assert!(
            Instant::now() < deadline,
            "the window never {}",
            if hidden { "hid" } else { "came back" }
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
