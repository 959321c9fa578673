//! `wyckoff data sync` tells what the cache already holds before it fetches anything
//! (the plan), on a fresh offline data home. Build the binary first
//! (`cargo build -p wyckoff-cli`; `scripts/test` does).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::Value;

#[test]
fn sync_reports_its_plan_from_the_cache_before_fetching() {
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(wyckoff_e2e::binary("wyckoff"))
            .args(args)
            .env("WYCKOFF_HOME", home.path())
            .env("WYCKOFF_OFFLINE", "1")
            .env_remove("WYCKOFF_DATA_SOURCES")
            .output()
            .unwrap()
    };
    // 000001 is bundled (ends 2020-06-16: stale today), 600519 is not cached, plus an index
    let out = run(&[
        "data", "sync", "000001", "600519", "--index", "csi300", "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "offline: every fetch fails");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["plan"]["total"], 3, "{v}");
    assert_eq!(v["plan"]["fresh"], 0);
    assert_eq!(v["plan"]["stale"], 1);
    assert_eq!(v["plan"]["missing"], 2);
    assert_eq!(v["offline"], true);
    let out = run(&["data", "sync", "000001"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 symbol(s): 0 already up to date, 1 stale, 0 not cached"),
        "{err}"
    );
}
