//! `wyckoff notes` through the real binary on a fresh offline data home: the notes of a
//! stock's chart in text and JSON (one the agent drew, seeded as the app stores it), one
//! removed by id, and bad input (an unknown code or note, a bad period) exiting 2 without
//! touching anything. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use chrono::{TimeZone, Utc};
use wyckoff_annotations::{AnnotationStore, Author, NotePeriod, Shape};
use wyckoff_market::{MarketConfig, MarketData};

fn wyckoff(home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = wyckoff_e2e::wyckoff_cli(home).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn notes_listed_removed_and_bad_input_refused() {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let store = AnnotationStore::new(md.pool().clone()).await.unwrap();
    let note = store
        .add(
            &md,
            "000001",
            NotePeriod::Day,
            &Shape::Box {
                from: 20190102,
                to: 20190301,
                low: 9.5,
                high: 11.0,
            },
            Author::Agent {
                conversation: "conv-9".into(),
            },
            Utc.with_ymd_and_hms(2020, 6, 17, 1, 2, 3).unwrap(),
        )
        .await
        .unwrap();
    drop(md);

    let (code, out, err) = wyckoff(home.path(), &["notes", "000001"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out.trim(),
        format!(
            "#{}  box 2019-01-02 → 2019-03-01  9.5–11.0  — agent (conv-9) · 2020-06-17T01:02:03Z",
            note.id
        )
    );
    let (_, json, _) = wyckoff(home.path(), &["notes", "000001", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["shape"]["from"], "2019-01-02");
    assert_eq!(v[0]["author"], "agent (conv-9)");

    for (args, want) in [
        (vec!["notes", "688999"], "unknown stock code 688999"),
        (
            vec!["notes", "000001", "--period", "hour"],
            "unknown period hour",
        ),
        (vec!["notes", "remove", "999"], "no chart note 999"),
    ] {
        let (code, _, err) = wyckoff(home.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let id = note.id.to_string();
    let (code, out, err) = wyckoff(home.path(), &["notes", "remove", &id]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with(&format!("removed #{id}")), "{out}");
    let (_, out, _) = wyckoff(home.path(), &["notes", "000001"]);
    assert_eq!(out.trim(), "no notes on 000001's day chart");
}
