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

/// `data sync --list` with a Tushare token, Tushare pointed (`WYCKOFF_TUSHARE_URL`) at a
/// local server speaking its wire: every name change and listing is stored, delistings
/// included, and the day's stock list is recorded as a snapshot that adds no "first seen"
/// name the history already dates; `data names show` then gives them back.
#[test]
fn a_sync_with_a_tushare_token_stores_names_delistings_and_the_days_list() {
    use wyckoff_market::test_support::{TushareStub, tushare_small_market};

    let home = tempfile::tempdir().unwrap();
    // and one day of bars, on the last day asked for
    let server = TushareStub::start(|api, request| {
        let p = &request["params"];
        let day = serde_json::json!({
            "ts_code": p["ts_code"], "trade_date": p["end_date"], "open": 2.0, "high": 2.2,
            "low": 1.9, "close": 2.1, "vol": 1000.0, "amount": 210.0, "adj_factor": 1.0,
        });
        match api {
            "daily" | "adj_factor" => vec![day],
            _ => tushare_small_market(api, request),
        }
    })
    .unwrap();
    let online = |args: &[&str]| {
        Command::new(wyckoff_e2e::binary("wyckoff"))
            .args(args)
            .env("WYCKOFF_HOME", home.path())
            .env_remove("WYCKOFF_OFFLINE")
            .env("WYCKOFF_DATA_SOURCES", "tushare")
            .env("TUSHARE_TOKEN", "e2e-token")
            .env("WYCKOFF_TUSHARE_URL", server.base())
            .output()
            .unwrap()
    };
    let out = online(&["data", "sync", "000005", "--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    assert!(text.contains("synced 1 code(s): 1 updated"), "{text}");
    assert!(
        text.contains(
            "stock history: 5 name change(s) from tushare (5 new, 0 changed, 0 already recorded), 3 listing(s) (1 delisted, 0 paused)"
        ),
        "{text}"
    );
    assert!(
        text.contains("stock list: 2 names from tushare; recorded as the ")
            && text.contains(" snapshot, 0 name(s) first seen"),
        "{text}"
    );
    // the token went with every call, to the mirror and nowhere else
    let requests = server.requests();
    assert!(
        requests.iter().all(|r| r["token"] == "e2e-token"),
        "{requests:?}"
    );
    let apis = server.apis();
    for api in ["namechange", "stock_basic", "daily"] {
        assert!(apis.iter().any(|a| a == api), "{api}: {apis:?}");
    }

    let h: Value = serde_json::from_slice(
        &run(home.path(), &["data", "names", "show", "000005", "--json"]).stdout,
    )
    .unwrap();
    let spans: Vec<(u64, &str, &str)> = h["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["from"].as_u64().unwrap(),
                s["name"].as_str().unwrap(),
                s["source"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        spans,
        [
            (19901210, "世纪星源", "tushare"),
            (20210501, "ST星源", "tushare")
        ]
    );
    assert_eq!(h["listing"]["status"], "listed");

    let out = run(home.path(), &["data", "names", "show", "600087"]);
    let text = stdout(&out);
    assert!(
        text.contains("from 2013-05-07  *ST长油  [tushare]"),
        "{text}"
    );
    let h: Value = serde_json::from_slice(
        &run(home.path(), &["data", "names", "show", "600087", "--json"]).stdout,
    )
    .unwrap();
    assert_eq!(h["listing"]["status"], "delisted", "{h}");
    assert_eq!(h["listing"]["delist_date"], 20140605);

    let st: Value =
        serde_json::from_slice(&run(home.path(), &["data", "status", "--json"]).stdout).unwrap();
    assert_eq!(st["history"]["codes_with_names"], 3, "{st}");
    assert_eq!(st["history"]["delisted"], 1);
    assert_eq!(st["history"]["snapshots"], 1);
    assert_eq!(st["history"]["first_seen_spans"], 0);
}
