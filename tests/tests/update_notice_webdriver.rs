//! WebDriver test of the automatic update check: the real app (the debug build), its two
//! update endpoints on a local server, in the order a release is given them: a mirror, then
//! the project's releases (`WYCKOFF_UPDATE_ENDPOINTS`, which the app's updater takes in
//! place of the built-in list). The check's delay and interval are shortened to seconds
//! (`WYCKOFF_UPDATE_INTERVAL_SECS`, honoured by debug builds only). Nobody clicks 检查更新.
//!
//! The mirror is broken throughout (it answers 500, then 404, in turn). While the releases
//! endpoint answers 503 too the app says nothing (no notice, no dialog; the log says the
//! check was not done). Once the releases endpoint announces 0.2.0 the sidebar says 新版本
//! 0.2.0 可用: found on the second endpoint, every check having asked the mirror first. A
//! click opens the release notes with the install button (`APPIMAGE` names a file, as our
//! runtime does, so this copy could install), which nobody clicks: the server never sees a
//! request for the AppImage, and the file is untouched (the install itself is
//! updater_webdriver's). Then Settings' switch turns the check off: it is saved in
//! settings.json and the server hears nothing more.
//!
//! The manifest's signature is never verified here: a check reads the manifest only.
//!
//! Needs: the app built (`cargo build --workspace --bins --features tauri/custom-protocol`
//! after `npm run --prefix ui build`), Xvfb, tauri-driver and a session bus.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wyckoff_e2e::webdriver::{
    TauriDriver, click, run_scenario, shot, wait_for, wait_layout_settled,
};

const NOTES: &str = "威科夫新版：更快的全市场同步\nFaster full-market sync.";
/// Seconds between automatic checks in this test (and before the first).
const INTERVAL: u64 = 2;

#[derive(Default)]
struct Server {
    /// Requests for the releases endpoint's manifest so far.
    asked: AtomicUsize,
    /// Requests for the mirror's manifest so far (answered 500, 404, 500, …).
    mirror_asked: AtomicUsize,
    /// Requests for anything else (the AppImage the manifest names, …).
    other: AtomicUsize,
    /// Every request's path, in the order they came.
    paths: std::sync::Mutex<Vec<String>>,
    /// Whether the releases endpoint serves the manifest; until then it answers 503.
    up: AtomicBool,
}

const MIRROR: &str = "/mirror/latest.json";
const RELEASES: &str = "/latest.json";

async fn serve(listener: tokio::net::TcpListener, server: Arc<Server>, manifest: String) {
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let server = server.clone();
        let manifest = manifest.clone();
        tokio::spawn(async move {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let head = String::from_utf8_lossy(&buf).to_string();
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
            server.paths.lock().unwrap().push(path.clone());
            let (status, body) = if path == MIRROR {
                // a broken mirror: a server error, then a manifest that is not there
                if server
                    .mirror_asked
                    .fetch_add(1, Ordering::SeqCst)
                    .is_multiple_of(2)
                {
                    ("500 Internal Server Error", "mirror broken".to_owned())
                } else {
                    ("404 Not Found", "not found".to_owned())
                }
            } else if path == RELEASES {
                server.asked.fetch_add(1, Ordering::SeqCst);
                if server.up.load(Ordering::SeqCst) {
                    ("200 OK", manifest)
                } else {
                    ("503 Service Unavailable", "down for maintenance".to_owned())
                }
            } else {
                server.other.fetch_add(1, Ordering::SeqCst);
                ("404 Not Found", "not found".to_owned())
            };
            let header = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = sock.write_all(header.as_bytes()).await;
            let _ = sock.write_all(body.as_bytes()).await;
            let _ = sock.shutdown().await;
        });
    }
}

fn log_text(home: &std::path::Path) -> String {
    std::fs::read_dir(home.join("logs"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

async fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every request for the releases manifest came right after one for the mirror's: each check
/// tried the mirror first. Also asserts nothing else was asked for.
fn assert_mirror_first(server: &Server) {
    let paths = server.paths.lock().unwrap().clone();
    for (i, path) in paths.iter().enumerate() {
        assert!(
            path == MIRROR || path == RELEASES,
            "a request for something else than a manifest: {path} ({paths:?})"
        );
        if path == RELEASES {
            assert!(
                i > 0 && paths[i - 1] == MIRROR,
                "the releases endpoint was asked before the mirror: {paths:?}"
            );
        }
    }
    assert_eq!(server.other.load(Ordering::SeqCst), 0, "{paths:?}");
}

async fn scenario(
    d: WebDriver,
    server: Arc<Server>,
    home: std::path::PathBuf,
    appimage: std::path::PathBuf,
) {
    // The server is down: checks happen, and the window says nothing about them.
    let h = home.clone();
    wait_until(
        "a check against the server that is down",
        Duration::from_secs(30),
        || {
            server.asked.load(Ordering::SeqCst) >= 2
                && log_text(&h).contains("automatic update check not done")
        },
    )
    .await;
    wait_for(&d, By::Id("nav-settings")).await;
    // the mirror answered both ways (500 and 404) before the releases endpoint's 503s
    assert!(server.mirror_asked.load(Ordering::SeqCst) >= 2);
    assert_mirror_first(&server);
    assert!(d.find(By::Id("update-indicator")).await.is_err());
    assert!(d.find(By::Css("[role=dialog]")).await.is_err());
    let alerts = d.find_all(By::Css("[role=alert]")).await.unwrap();
    for a in alerts {
        let said = a.text().await.unwrap();
        assert!(
            !said.contains("update"),
            "an alert about the update check: {said}"
        );
    }

    // The releases endpoint announces 0.2.0: the sidebar says so, without anyone checking by
    // hand, though the mirror before it still fails.
    server.up.store(true, Ordering::SeqCst);
    let notice = wait_for(&d, By::Id("update-indicator")).await;
    assert_eq!(notice.text().await.unwrap(), "新版本 0.2.0 可用");
    assert_mirror_first(&server);
    assert!(d.find(By::Id("page-settings")).await.is_err());
    shot(&d, "update-notice-01-sidebar.png").await;

    // A click opens the release notes and the install step.
    notice.click().await.unwrap();
    let dialog = wait_for(&d, By::Id("update-dialog")).await;
    let status = dialog
        .find(By::Id("update-status"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(status.contains("有新版本 0.2.0"), "{status}");
    assert!(status.contains("发布于 2026-12-01"), "{status}");
    let notes = dialog
        .find(By::Id("update-notes"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(notes, NOTES);
    // this copy could install (APPIMAGE names a file), and waits for the user's word: the
    // checks so far asked for manifests only
    assert!(dialog.find(By::Id("update-install")).await.is_ok());
    assert!(dialog.find(By::Id("update-cannot-install")).await.is_err());
    shot(&d, "update-notice-02-notes.png").await;
    assert_mirror_first(&server);
    click(&d, By::Id("update-dialog-close")).await;
    assert!(d.find(By::Id("update-dialog")).await.is_err());

    // Settings turns the automatic check off: saved, and the server hears nothing more.
    click(&d, By::Id("nav-settings")).await;
    wait_layout_settled(&d).await;
    let switch = wait_for(&d, By::Id("set-check-for-updates")).await;
    assert_eq!(
        switch.prop("checked").await.unwrap().as_deref(),
        Some("true")
    );
    switch.click().await.unwrap();
    click(&d, By::Id("settings-save")).await;
    let saved = wait_for(&d, By::Id("settings-message")).await;
    assert_eq!(saved.attr("class").await.unwrap().as_deref(), Some("ok"));
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(file["check_for_updates"], false, "{file}");
    // a check already under way when the switch was saved may still land
    tokio::time::sleep(Duration::from_secs(INTERVAL)).await;
    let before = server.asked.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(INTERVAL * 3)).await;
    assert_eq!(
        server.asked.load(Ordering::SeqCst),
        before,
        "the server was asked after the automatic check was turned off"
    );
    // Nothing was downloaded or installed without a click on 下载并安装.
    assert_mirror_first(&server);
    assert_eq!(
        std::fs::read(&appimage).unwrap(),
        b"the AppImage the user runs",
        "the AppImage was replaced without the user's word"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the built app, Xvfb, tauri-driver and a session bus"]
async fn the_sidebar_tells_of_a_new_version_found_by_the_automatic_check() {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let manifest = serde_json::json!({
        "version": "0.2.0",
        "notes": NOTES,
        "pub_date": "2026-12-01T08:00:00Z",
        "platforms": {
            "linux-x86_64": {
                "signature": "never verified: this test downloads nothing",
                "url": format!("{base}/Wyckoff_Desk_0.2.0_amd64.AppImage"),
            }
        }
    })
    .to_string();
    let server = Arc::new(Server::default());
    tokio::spawn(serve(listener, server.clone(), manifest));

    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    // No market data source: WYCKOFF_OFFLINE would turn the automatic check off too.
    std::fs::write(
        home.path().join("settings.json"),
        serde_json::json!({"version": 1, "data_sources": []}).to_string(),
    )
    .unwrap();
    // the mirror first, then the releases: the order a release build is given them
    let endpoints = format!("{base}{MIRROR} {base}{RELEASES}");
    let interval = INTERVAL.to_string();
    // As our AppImage runtime does: the updater would replace this file, were it asked to.
    let appimage = xdg.path().join("Wyckoff_Desk.AppImage");
    std::fs::write(&appimage, b"the AppImage the user runs").unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_UPDATE_ENDPOINTS", &endpoints),
            ("WYCKOFF_UPDATE_INTERVAL_SECS", &interval),
            ("APPIMAGE", appimage.to_str().unwrap()),
        ],
    );
    let home_path = home.path().to_path_buf();
    run_scenario(&driver, "update-notice", move |d| {
        scenario(d, server, home_path, appimage)
    })
    .await;
}
