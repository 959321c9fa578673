//! `wyckoff memory` against a real wyckoff.db in a temp data home.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn memory(home: &Path, args: &[&str]) -> Output {
    Command::new(wyckoff_e2e::binary("wyckoff"))
        .arg("memory")
        .args(args)
        .env("WYCKOFF_HOME", home)
        .output()
        .unwrap()
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn add_list_search_edit_delete() {
    let home = tempfile::tempdir().unwrap();
    let added = json(&memory(
        home.path(),
        &[
            "add",
            "preference",
            "不买白酒股，贵州茅台 600519 除外",
            "--json",
        ],
    ));
    let id = added["id"].as_i64().unwrap();
    assert_eq!(added["memory_type"], "preference");
    json(&memory(
        home.path(),
        &["add", "market_view", "银行板块估值偏低", "--json"],
    ));

    let prefs = json(&memory(
        home.path(),
        &["list", "--type", "preference", "--json"],
    ));
    assert_eq!(prefs.as_array().unwrap().len(), 1);

    // A two-character Chinese query and a stock code both find it.
    for query in ["茅台", "白酒", "600519"] {
        let hits = json(&memory(home.path(), &["search", query, "--json"]));
        let ids: Vec<i64> = hits
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, vec![id], "query {query}");
    }

    let edited = json(&memory(
        home.path(),
        &["edit", &id.to_string(), "只做主板", "--json"],
    ));
    assert_eq!(edited["content"], "只做主板");

    let text = memory(home.path(), &["list"]);
    let listing = String::from_utf8(text.stdout).unwrap();
    assert!(
        listing.contains(&format!("#{id} ")) && listing.contains("只做主板"),
        "{listing}"
    );

    json(&memory(home.path(), &["delete", &id.to_string(), "--json"]));
    let after = json(&memory(home.path(), &["search", "主板", "--json"]));
    assert_eq!(after, serde_json::json!([]));
}

#[test]
fn bad_input_is_explained() {
    let home = tempfile::tempdir().unwrap();
    let unknown_type = memory(home.path(), &["add", "gossip", "x"]);
    assert_eq!(unknown_type.status.code(), Some(2));
    let err = String::from_utf8(unknown_type.stderr).unwrap();
    assert!(
        err.contains("gossip") && err.contains("preference"),
        "{err}"
    );

    let missing = memory(home.path(), &["delete", "4242"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8(missing.stderr).unwrap().contains("4242"));
}
