//! The app and the CLI reach the core through one door. Among the workspace's crates their
//! manifests name only `wyckoff-session`, `wyckoff-protocol` and `wyckoff-config` (read from
//! `cargo metadata`, every dependency kind), and their sources never build a store, open a
//! pool or read one: the stores are the desk's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The chat bots are a front end too: the CLI (`bot run`, the daemon) serves them, so a
/// front end may name another front end, never a core crate.
const FRONT_ENDS: [(&str, &str); 3] = [
    ("wyckoff-desk", "src-tauri/src"),
    ("wyckoff-cli", "src-tauri/crates/cli/src"),
    ("wyckoff-bot", "src-tauri/crates/bot/src"),
];
const DOORS: [&str; 3] = ["wyckoff-session", "wyckoff-protocol", "wyckoff-config"];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The workspace crates `package` depends on, of any kind (normal, dev, build).
fn our_dependencies(meta: &Value, package: &str) -> BTreeSet<String> {
    let packages = meta["packages"].as_array().unwrap();
    let members: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    let found = packages
        .iter()
        .find(|p| p["name"] == package)
        .unwrap_or_else(|| panic!("{package} is not in the workspace"));
    found["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .filter(|name| members.contains(name))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_app_and_the_cli_name_only_the_session_protocol_and_config() {
    let meta = metadata();
    for (package, _) in FRONT_ENDS {
        let ours = our_dependencies(&meta, package);
        let stray: Vec<&String> = ours
            .iter()
            .filter(|d| !DOORS.contains(&d.as_str()))
            .filter(|d| !FRONT_ENDS.iter().any(|(front, _)| *front == d.as_str()))
            .collect();
        assert!(
            stray.is_empty(),
            "{package} reaches around the desk to {stray:?}; reach them through wyckoff_session::domain"
        );
        assert!(ours.contains("wyckoff-session"), "{package}: {ours:?}");
    }
}

/// What a front end must not do itself: build a store, open market data or a pool, read
/// a pool.
const FORBIDDEN: [&str; 7] = [
    "Store::new(",
    "MarketData::open",
    "Store::open(",
    "Outbox::new(",
    "open_pool(",
    ".pool()",
    "wyckoff_db",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's code outside its tests: tests set up real stores on their own data home.
fn code_outside_tests(path: &Path) -> Option<String> {
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return None;
    }
    let text = std::fs::read_to_string(path).unwrap();
    Some(match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_owned(),
        None => text,
    })
}

#[test]
fn the_app_and_the_cli_never_build_a_store_or_touch_a_pool() {
    let mut found = Vec::new();
    for (_, dir) in FRONT_ENDS {
        let mut files = Vec::new();
        rust_files(&workspace_root().join(dir), &mut files);
        assert!(!files.is_empty(), "no sources under {dir}");
        for file in files {
            let Some(code) = code_outside_tests(&file) else {
                continue;
            };
            for (n, line) in code.lines().enumerate() {
                // The app's own settings file (tauri-plugin-store), not a store of the core.
                if line.contains("SettingsStore::") {
                    continue;
                }
                for pattern in FORBIDDEN.iter().filter(|p| line.contains(*p)) {
                    found.push(format!("{}:{}: {pattern}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}
