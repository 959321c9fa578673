//! The real `wyckoff data names import` and `data names show` on a fresh, offline data
//! home: a good file imports and shows, the same file again adds nothing and says so, a
//! file with a bad line imports nothing and names the line, the JSON report is typed, and
//! a path that is no file is bad input. Build the binary first (`cargo build -p
//! wyckoff-cli`; `scripts/test` does).

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

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const GOOD: &str = "\u{feff}date,code,name\r\n\
                    1990-12-10,000005,世纪星源\r\n\
                    20210501,000005.SZ,ST星源\r\n\
                    20180101,sh600087,*ST长油\r\n";

#[test]
fn a_good_file_imports_once_and_shows_with_its_source() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("names.csv");
    std::fs::write(&file, GOOD).unwrap();
    let path = file.to_str().unwrap();

    let out = run(home.path(), &["data", "names", "import", path]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        stdout(&out)
            .contains("imported 3 name(s) for 2 stock(s): 3 new, 0 changed, 0 already recorded"),
        "{}",
        show(&out)
    );

    // the same file again: nothing added, and it says so
    let out = run(home.path(), &["data", "names", "import", path]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        stdout(&out).contains("nothing new: all 3 name(s) for 2 stock(s) were already recorded"),
        "{}",
        show(&out)
    );
    let out = run(home.path(), &["data", "names", "import", path, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "imported");
    assert_eq!(
        (r["rows"].as_u64(), r["stocks"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(
        (r["added"].as_u64(), r["unchanged"].as_u64()),
        (Some(0), Some(3))
    );

    let out = run(home.path(), &["data", "names", "show", "000005"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    assert!(text.contains("000005 names (2):"), "{text}");
    assert!(
        text.contains("from 1990-12-10  世纪星源  [names-import]"),
        "{text}"
    );
    assert!(
        text.contains("from 2021-05-01  ST星源  [names-import]"),
        "{text}"
    );
    let h: Value = serde_json::from_slice(
        &run(
            home.path(),
            &["data", "names", "show", "sz000005", "--json"],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(h["code"], "000005");
    assert_eq!(h["spans"][1]["from"], 20210501);
    assert_eq!(h["spans"][1]["name"], "ST星源");
    assert_eq!(h["spans"][1]["first_seen"], false);
    assert_eq!(h["listing"], Value::Null);

    // data status counts what is recorded
    let st: Value =
        serde_json::from_slice(&run(home.path(), &["data", "status", "--json"]).stdout).unwrap();
    assert_eq!(st["history"]["codes_with_names"], 2, "{st}");
    assert_eq!(st["history"]["spans"], 3);
    assert_eq!(st["history"]["snapshots"], 0);
    let text = stdout(&run(home.path(), &["data", "status"]));
    assert!(
        text.contains("name history: 2 stock(s), 3 span(s)"),
        "{text}"
    );

    // a stock with no names recorded says what that means for as-of screens
    let out = run(home.path(), &["data", "names", "show", "600519"]);
    assert!(
        stdout(&out).contains(
            "600519: no recorded names; as-of screens read its ST status from today's name"
        ),
        "{}",
        show(&out)
    );
}

#[test]
fn a_file_with_a_bad_line_imports_nothing_and_names_the_line() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.csv");
    std::fs::write(
        &file,
        "20200101,000001,平安银行\n20200101,000002,万科A\n2020-02-30,000004,国华网安\n20200101,510300,沪深300ETF\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let out = run(home.path(), &["data", "names", "import", path]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let text = stdout(&out);
    assert!(
        text.contains("bad.csv: REJECTED, nothing imported (2 bad line(s))"),
        "{text}"
    );
    assert!(
        text.contains("bad.csv:3: date \"2020-02-30\" is not YYYYMMDD or YYYY-MM-DD"),
        "{text}"
    );
    assert!(
        text.contains("bad.csv:4: unknown code \"510300\""),
        "{text}"
    );

    let out = run(home.path(), &["data", "names", "import", path, "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "rejected");
    assert_eq!(r["bad_lines"], 2);
    assert_eq!(r["errors"][0]["line"], 3);
    assert_eq!(r["errors"][0]["problem"], "bad_date");
    assert_eq!(r["errors"][0]["value"], "2020-02-30");
    assert_eq!(r["errors"][1]["problem"], "unknown_code");

    // the good lines of the rejected file were not stored
    let h: Value = serde_json::from_slice(
        &run(home.path(), &["data", "names", "show", "000001", "--json"]).stdout,
    )
    .unwrap();
    assert_eq!(h["spans"], serde_json::json!([]));
}

#[test]
fn a_missing_file_a_folder_or_a_bad_code_is_bad_input() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.csv");
    for (args, want) in [
        (
            vec!["data", "names", "import", missing.to_str().unwrap()],
            "missing.csv",
        ),
        (
            vec!["data", "names", "import", dir.path().to_str().unwrap()],
            "is a folder",
        ),
        (vec!["data", "names", "show", "12345"], "unknown stock code"),
    ] {
        let out = run(home.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(want),
            "{}",
            show(&out)
        );
    }
}
