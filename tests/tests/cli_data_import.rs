//! The real `wyckoff data import` on a fresh, offline data home with real CSV files: the
//! summary, the JSON report, exit codes, and bars that `wyckoff data status` then shows.
//! Build the binary first (`cargo build -p wyckoff-cli`; `scripts/test` does).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use wyckoff_e2e::show;

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(wyckoff_e2e::binary("wyckoff"))
        .args(args)
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env_remove("WYCKOFF_DATA_SOURCES")
        .output()
        .unwrap()
}

const GOOD: &str = "date,code,open,high,low,close,volume,amount\n\
                    2024-01-02,600519,1700,1720,1690,1710,1000,1700000\n\
                    20240103,600519.SH,1710,1730,1700,1725,1200,2000000\n";

#[test]
fn a_good_file_imports_and_shows_in_status() {
    let home = tempfile::tempdir().unwrap();
    let csv = tempfile::tempdir().unwrap();
    let file = csv.path().join("moutai.csv");
    std::fs::write(&file, GOOD).unwrap();
    let out = run(home.path(), &["data", "import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("imported 1 of 1 file(s): 1 stock(s), 2 bar(s); 0 file(s) rejected"),
        "{text}"
    );
    let out = run(home.path(), &["data", "status", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let st: Value = serde_json::from_slice(&out.stdout).unwrap();
    let moutai = st["stocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["code"] == "600519")
        .unwrap_or_else(|| panic!("{st}"));
    assert_eq!(moutai["bars"], 2);
    assert_eq!(moutai["last_date"], 20240103);
    assert_eq!(moutai["sources"][0]["source"], "csv-import");
}

#[test]
fn a_folder_with_a_bad_file_imports_the_rest_reports_lines_and_exits_non_zero() {
    let home = tempfile::tempdir().unwrap();
    let csv = tempfile::tempdir().unwrap();
    std::fs::write(csv.path().join("a.csv"), GOOD).unwrap();
    std::fs::write(
        csv.path().join("b.csv"),
        "date,code,open,high,low,close,volume\n2024-01-02,601012,20,21,19,20.5,100\n2024-01-03,601012,20,19,21,20.5,100\n",
    )
    .unwrap();
    let dir = csv.path().to_str().unwrap();
    let out = run(home.path(), &["data", "import", dir]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("b.csv: REJECTED, nothing imported (1 bad row(s))"),
        "{text}"
    );
    assert!(text.contains("b.csv:3: high below"), "{text}");
    // the same again as JSON: the good file is simply merged again
    let out = run(home.path(), &["data", "import", dir, "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["files"], 2);
    assert_eq!(r["files_imported"], 1);
    assert_eq!(r["files_rejected"], 1);
    assert_eq!(r["bars"], 2);
    assert_eq!(r["outcomes"][1]["status"], "rejected");
    assert_eq!(r["outcomes"][1]["errors"][0]["line"], 3);
    let out = run(home.path(), &["data", "status", "--json"]);
    let st: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = st["stocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["code"].as_str())
        .collect();
    assert!(
        codes.contains(&"600519") && !codes.contains(&"601012"),
        "{codes:?}"
    );
}

#[test]
fn a_missing_path_or_a_folder_without_csv_is_bad_input() {
    let home = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let missing = empty.path().join("missing.csv");
    for (path, want) in [
        (missing.to_str().unwrap(), "missing.csv"),
        (empty.path().to_str().unwrap(), "no .csv files"),
    ] {
        let out = run(home.path(), &["data", "import", path]);
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(want),
            "{}",
            show(&out)
        );
    }
}
