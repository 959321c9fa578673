//! WebDriver test of the signed self-update, run from the AppImage users download: the real
//! app starts from a copy of `scripts/appimage --debug`'s image (our runtime extracts it and
//! runs the desk with `APPIMAGE` set), and Settings → 关于与更新 checks a local update
//! server whose manifest and signatures `scripts/update-manifest` wrote with a key made for
//! this test (the debug build trusts it through `WYCKOFF_UPDATE_PUBKEY`; a release build
//! only trusts the key in tauri.conf.json).
//!
//! In turn the server offers: the new release with one byte of the AppImage changed (the
//! signature no longer verifies), a manifest announcing 0.2.1 for the release signed as
//! 0.2.0, and the release as signed. The first two are refused in words and the installed
//! AppImage stays byte for byte the one that is running; the third replaces it, and the
//! replacement runs (`wyckoff --version` through its own runtime says 0.2.0). Then 立即重启:
//! the running desk exits and the new AppImage is started in its place (by the file
//! `APPIMAGE` names, through its own runtime): its AppRun records that it ran, and the real
//! desk it carries comes up from the new image's extraction and holds the single-instance
//! name on the session bus (so it did not hand over to the exiting old desk and quit).
//!
//! The newer release is the same desk binary repacked by the test, with a release file
//! (`usr/share/wyckoff-e2e/release`, "0.2.0") that tells its extraction apart, and an AppRun
//! that answers like the 0.2.0 CLI and, started as the desk, writes how it was started to
//! the file `WYCKOFF_E2E_RESTART_MARKER` names before it runs the desk: building a second
//! real app of another version would take minutes. The restart ends the WebDriver session:
//! the test expects that, and stops the new desk itself.
//!
//! Needs: `scripts/appimage --debug` run first (scripts/package runs it) and the debug desk
//! it packs, mksquashfs, the tauri CLI in ui/node_modules (the signer), Xvfb, tauri-driver,
//! a session bus and dbus-send.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use thirtyfour::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wyckoff_e2e::target_dir;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, run_scenario, shot, wait_for, wait_layout_settled,
};

const NOTES: &str = "威科夫新版：更快的全市场同步\nFaster full-market sync.";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The AppImage of the current (debug) build.
fn built_appimage() -> PathBuf {
    let dir = target_dir().join("debug/bundle/appimage");
    let found = std::fs::read_dir(&dir).ok().and_then(|entries| {
        entries
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "AppImage"))
    });
    found.unwrap_or_else(|| {
        panic!(
            "no AppImage in {}: run scripts/appimage --debug",
            dir.display()
        )
    })
}

/// Where the newer release's image says which release it is.
const RELEASE_FILE: &str = "usr/share/wyckoff-e2e/release";

/// A release 0.2.0 AppImage: our runtime with a squashfs holding the real desk (this build's),
/// a release file, and an AppRun that answers as the 0.2.0 CLI does and runs the desk.
fn newer_appimage(work: &Path) -> PathBuf {
    let appdir = work.join("AppDir");
    std::fs::create_dir_all(appdir.join("usr/bin")).unwrap();
    std::fs::copy(
        target_dir().join("debug/wyckoff-desk"),
        appdir.join("usr/bin/wyckoff-desk"),
    )
    .unwrap();
    let release = appdir.join(RELEASE_FILE);
    std::fs::create_dir_all(release.parent().unwrap()).unwrap();
    std::fs::write(&release, "0.2.0\n").unwrap();
    let app_run = appdir.join("AppRun");
    std::fs::write(
        &app_run,
        r#"#!/bin/sh
here="${APPDIR:-$(dirname "$(readlink -f "$0")")}"
if [ "${1:-}" = wyckoff ]; then
  echo "wyckoff 0.2.0"
  exit 0
fi
# started as the desk: the restart after the update
if [ -n "${WYCKOFF_E2E_RESTART_MARKER:-}" ]; then
  { echo "version=0.2.0"; echo "APPIMAGE=$APPIMAGE"; echo "args=$*"; } >"$WYCKOFF_E2E_RESTART_MARKER.partial"
  mv "$WYCKOFF_E2E_RESTART_MARKER.partial" "$WYCKOFF_E2E_RESTART_MARKER"
fi
exec "$here/usr/bin/wyckoff-desk" "$@"
"#,
    )
    .unwrap();
    run(Command::new("chmod").arg("755").arg(&app_run));
    let squashfs = work.join("image.squashfs");
    run(Command::new("mksquashfs")
        .arg(&appdir)
        .arg(&squashfs)
        .args([
            "-all-root",
            "-noappend",
            "-no-xattrs",
            "-comp",
            "gzip",
            // the desk binary is large; the test needs it packed, not small
            "-Xcompression-level",
            "1",
            "-quiet",
            "-no-progress",
        ]));
    let mut image = std::fs::read(target_dir().join("release/appimage-runtime")).unwrap();
    image.extend(std::fs::read(&squashfs).unwrap());
    let path = work.join("Wyckoff_Desk_0.2.0_amd64.AppImage");
    std::fs::write(&path, image).unwrap();
    run(Command::new("chmod").arg("755").arg(&path));
    path
}

/// What an AppImage's CLI says, started through its runtime with a cache of its own.
fn cli_version(image: &Path) -> String {
    let cache = tempfile::tempdir().unwrap();
    run(Command::new(image)
        .args(["wyckoff", "--version"])
        .env("XDG_CACHE_HOME", cache.path()))
    .trim()
    .to_owned()
}

/// Serves `/<name>` from the directory `root` names at the time of the request.
async fn serve(listener: tokio::net::TcpListener, root: Arc<Mutex<PathBuf>>) {
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let root = root.lock().unwrap().clone();
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
            let name = path.trim_start_matches('/').split('?').next().unwrap_or("");
            let name = name.replace("%20", " ");
            let (status, body) = match std::fs::read(root.join(&name)) {
                Ok(body) if !name.contains("..") => ("200 OK", body),
                _ => ("404 Not Found", b"not found".to_vec()),
            };
            let header = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = sock.write_all(header.as_bytes()).await;
            let _ = sock.write_all(&body).await;
            let _ = sock.shutdown().await;
        });
    }
}

async fn text(d: &WebDriver, id: &str) -> String {
    wait_for(d, By::Id(id)).await.text().await.unwrap()
}

async fn wait_text(d: &WebDriver, id: &str, want: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Ok(el) = d.find(By::Id(id)).await
            && let Ok(got) = el.text().await
            && got.contains(want)
        {
            return got;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "#{id} never held {want:?}; the page says: {:?}",
            text(d, "update-panel").await
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

struct Releases {
    serving: Arc<Mutex<PathBuf>>,
    /// Where the new version's AppRun says it was started.
    marker: PathBuf,
    /// Where the runtime extracts the AppImages it starts.
    extractions: PathBuf,
    bad_artifact: PathBuf,
    bad_manifest: PathBuf,
    good: PathBuf,
}

async fn update_scenario(
    d: WebDriver,
    r: Releases,
    installed: PathBuf,
    old: Vec<u8>,
    new: Vec<u8>,
) {
    click(&d, By::Id("nav-settings")).await;
    wait_text(&d, "update-current", "当前版本 0.1.0").await;
    // The panels above load their data late and push this one down.
    wait_layout_settled(&d).await;

    // 1. the AppImage was altered after signing: refused, nothing replaced
    *r.serving.lock().unwrap() = r.bad_artifact.clone();
    click(&d, By::Id("update-check")).await;
    wait_text(&d, "update-status", "有新版本 0.2.0").await;
    assert!(text(&d, "update-notes").await.contains("更快的全市场同步"));
    shot(&d, "update-01-available.png").await;
    click(&d, By::Id("update-install")).await;
    let refused = wait_text(&d, "update-refused", "已拒绝版本 0.2.0").await;
    assert!(refused.contains("下载的文件与签名不符"), "{refused}");
    assert!(refused.contains("当前版本继续运行"), "{refused}");
    shot(&d, "update-02-refused.png").await;
    assert!(
        std::fs::read(&installed).unwrap() == old,
        "a refused update changed the AppImage"
    );

    // 2. the manifest announces 0.2.1 for the release signed as 0.2.0: refused
    *r.serving.lock().unwrap() = r.bad_manifest.clone();
    click(&d, By::Id("update-check")).await;
    wait_text(&d, "update-status", "有新版本 0.2.1").await;
    click(&d, By::Id("update-install")).await;
    let refused = wait_text(&d, "update-refused", "已拒绝版本 0.2.1").await;
    assert!(refused.contains("签名写明的版本是 0.2.0"), "{refused}");
    assert!(
        std::fs::read(&installed).unwrap() == old,
        "a refused update changed the AppImage"
    );

    // 3. the release as signed: downloaded, verified, put in place of the running AppImage
    *r.serving.lock().unwrap() = r.good.clone();
    click(&d, By::Id("update-check")).await;
    wait_text(&d, "update-status", "有新版本 0.2.0").await;
    click(&d, By::Id("update-install")).await;
    wait_text(&d, "update-installed", "版本 0.2.0 已安装").await;
    wait_for(&d, By::Id("update-restart")).await;
    shot(&d, "update-03-installed.png").await;
    assert!(
        std::fs::read(&installed).unwrap() == new,
        "the AppImage was not replaced by the release"
    );

    // 4. restart: the desk exits and the new version starts from the AppImage. The session
    // ends with the app, so the click may not get its answer.
    assert!(!r.marker.exists(), "the new version ran before the restart");
    // The desk runs from the runtime's extraction of the old AppImage.
    let old = running(&old_desk(&r.extractions));
    assert!(!old.is_empty(), "the desk does not run from the AppImage");
    wait_layout_settled(&d).await;
    let restart = wait_for(&d, By::Id("update-restart")).await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), restart.click()).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !r.marker.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the new version was not started by the restart"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let said = std::fs::read_to_string(&r.marker).unwrap();
    assert!(said.contains("version=0.2.0"), "{said}");
    assert!(
        said.contains(&format!("APPIMAGE={}", installed.display())),
        "the new version was not started from the installed AppImage: {said}"
    );
    // ... and the old desk exited by itself (nothing here stops it).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let left: Vec<i32> = old.iter().copied().filter(|pid| alive(*pid)).collect();
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the old version still runs after the restart: {left:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // The real desk from the new image runs: started from the installed AppImage, from the
    // extraction that holds the 0.2.0 release file, and it owns the single-instance name the
    // old desk held (a desk that had met the old one there would have handed over and quit).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let new_desk = loop {
        let desks: Vec<(i32, PathBuf)> = running_under(&r.extractions)
            .into_iter()
            .filter(|(_, exe)| exe.ends_with("usr/bin/wyckoff-desk"))
            .collect();
        if let [(pid, exe)] = desks.as_slice()
            && single_instance_owner() == Some(*pid)
        {
            break (*pid, exe.clone());
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no desk from the new AppImage holds the single-instance name: desks {desks:?}, \
             owner {:?}",
            single_instance_owner()
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    };
    let (pid, exe) = new_desk;
    assert!(!old.contains(&pid));
    let extraction = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(extraction.join(RELEASE_FILE)).unwrap(),
        "0.2.0\n",
        "the desk does not run from the new image: {}",
        exe.display()
    );
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let appimage = format!("APPIMAGE={}", installed.display());
    assert!(
        environ
            .split(|b| *b == 0)
            .any(|var| var == appimage.as_bytes()),
        "the new desk was not started from the installed AppImage"
    );
    assert!(alive(pid), "the new desk exited");
    // Stopped here: it runs outside the WebDriver session.
    let _ = Command::new("kill").arg(pid.to_string()).status();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while alive(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the new desk did not stop on SIGTERM"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// Whether `pid` still runs (a zombie has exited).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// The desk the runtime extracted from the old AppImage (keyed by its hash), the only
/// extraction before the restart: the new image has not run from this cache yet.
fn old_desk(extractions: &Path) -> PathBuf {
    let extracted: Vec<PathBuf> = std::fs::read_dir(extractions)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().len() == 64)
        .filter(|p| p.join("usr/bin/wyckoff-desk").is_file())
        .collect();
    assert_eq!(extracted.len(), 1, "{extracted:?}");
    extracted[0].join("usr/bin/wyckoff-desk")
}

/// The processes whose executable lies under `dir`, with it.
fn running_under(dir: &Path) -> Vec<(i32, PathBuf)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| alive(*pid))
        .filter_map(|pid| {
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
            exe.starts_with(dir).then_some((pid, exe))
        })
        .collect()
}

/// The process holding the desk's single-instance name on the session bus, if one does.
fn single_instance_owner() -> Option<i32> {
    let bus = |args: &[&str]| -> Option<String> {
        let out = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
            ])
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let names = bus(&["org.freedesktop.DBus.ListNames"])?;
    let name = names
        .split('"')
        .find(|n| n.starts_with("com.wyckoffdesk.app.SingleInstance"))?
        .to_owned();
    let pid = bus(&[
        "org.freedesktop.DBus.GetConnectionUnixProcessID",
        &format!("string:{name}"),
    ])?;
    pid.split_whitespace().last()?.parse().ok()
}

/// Stops every process run from the AppImages' extractions of this test (the new desk the
/// restart started lives outside the WebDriver session), also when the test fails.
struct StopExtracted(PathBuf);

impl Drop for StopExtracted {
    fn drop(&mut self) {
        for (pid, _) in running_under(&self.0) {
            // Best effort: only this test's own extractions are under this folder.
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

/// The processes running `exe`.
fn running(exe: &Path) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|x| x == exe))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the AppImage (scripts/appimage --debug), Xvfb, tauri-driver and a session bus"]
async fn the_appimage_installs_a_signed_update_and_refuses_tampered_ones() {
    let old_image = built_appimage();
    assert_eq!(cli_version(&old_image), "wyckoff 0.1.0");
    let work = tempfile::tempdir().unwrap();

    // the copy the user runs
    let apps = work.path().join("Applications");
    std::fs::create_dir_all(&apps).unwrap();
    let installed = apps.join("Wyckoff_Desk.AppImage");
    std::fs::copy(&old_image, &installed).unwrap();
    let old = std::fs::read(&installed).unwrap();

    // a signing key of this test's own, the release signed with it by the release script
    let key = work.path().join("test.key");
    let tauri = repo_root().join("ui/node_modules/.bin/tauri");
    run(Command::new(&tauri)
        .args(["signer", "generate", "--ci", "-p", "", "-w"])
        .arg(&key));
    let pubkey = std::fs::read_to_string(work.path().join("test.key.pub")).unwrap();

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let newer = newer_appimage(&work.path().join("build"));
    let notes = work.path().join("notes.md");
    std::fs::write(&notes, NOTES).unwrap();
    let good = work.path().join("good");
    run(Command::new(repo_root().join("scripts/update-manifest"))
        .arg(&newer)
        .args(["0.2.0", &base])
        .arg(&notes)
        .arg(&good)
        .env("TAURI_SIGNING_PRIVATE_KEY_PATH", &key)
        .env("TAURI_SIGNING_PRIVATE_KEY_PASSWORD", ""));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(good.join("latest.json")).unwrap()).unwrap();
    assert_eq!(manifest["version"], "0.2.0");
    assert_eq!(
        manifest["platforms"]["linux-x86_64"]["url"],
        format!("{base}/Wyckoff_Desk_0.2.0_amd64.AppImage")
    );
    let new = std::fs::read(good.join("Wyckoff_Desk_0.2.0_amd64.AppImage")).unwrap();

    // one byte of the AppImage changed after signing
    let bad_artifact = work.path().join("bad-artifact");
    std::fs::create_dir_all(&bad_artifact).unwrap();
    let mut altered = new.clone();
    let at = altered.len() - 100;
    altered[at] ^= 0x01;
    std::fs::write(
        bad_artifact.join("Wyckoff_Desk_0.2.0_amd64.AppImage"),
        &altered,
    )
    .unwrap();
    std::fs::copy(good.join("latest.json"), bad_artifact.join("latest.json")).unwrap();

    // the manifest says 0.2.1 for the artifact and signature of 0.2.0
    let bad_manifest = work.path().join("bad-manifest");
    std::fs::create_dir_all(&bad_manifest).unwrap();
    std::fs::copy(
        good.join("Wyckoff_Desk_0.2.0_amd64.AppImage"),
        bad_manifest.join("Wyckoff_Desk_0.2.0_amd64.AppImage"),
    )
    .unwrap();
    let mut relabelled = manifest.clone();
    relabelled["version"] = "0.2.1".into();
    std::fs::write(bad_manifest.join("latest.json"), relabelled.to_string()).unwrap();

    let serving = Arc::new(Mutex::new(good.clone()));
    tokio::spawn(serve(listener, serving.clone()));

    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let extractions = xdg.path().join("cache/wyckoff-desk/appimage");
    let _stop_extracted = StopExtracted(extractions.clone());
    let marker = work.path().join("restarted.txt");
    let endpoint = format!("{base}/latest.json");
    // tauri-driver starts whatever WYCKOFF_E2E_APP names: here the AppImage itself.
    #[allow(unsafe_code)]
    // SAFETY: set before tauri-driver starts; nothing else in this test process reads the
    // environment concurrently.
    unsafe {
        std::env::set_var("WYCKOFF_E2E_APP", &installed);
    }
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_UPDATE_ENDPOINTS", &endpoint),
            ("WYCKOFF_UPDATE_PUBKEY", pubkey.trim()),
            ("WYCKOFF_E2E_RESTART_MARKER", marker.to_str().unwrap()),
        ],
    );
    let releases = Releases {
        serving,
        marker,
        extractions,
        bad_artifact,
        bad_manifest,
        good,
    };
    let (installed_in, new_in) = (installed.clone(), new.clone());
    run_scenario(&driver, "updater", move |d| {
        update_scenario(d, releases, installed_in, old, new_in)
    })
    .await;

    drop(driver);

    // The AppImage now in its place is the new release, which runs.
    let meta = std::fs::metadata(&installed).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        meta.permissions().mode() & 0o111,
        0o111,
        "the update lost the execute bits"
    );
    assert_eq!(cli_version(&installed), "wyckoff 0.2.0");
    assert_eq!(std::fs::read(&installed).unwrap(), new);
}
