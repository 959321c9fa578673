//! Industry membership from Tushare through the real `wyckoff` binary, Tushare pointed
//! (`WYCKOFF_TUSHARE_URL`) at a local server speaking its wire: `data sync --list` with a
//! token loads the Shenwan level-1 industries (`index_classify`) and their members with
//! in and out dates (`index_member`); `data industries list` and `show --as-of` give the
//! membership of a past day, saying when a later one stood in; the screen's universe
//! counts it. Without Shenwan tables, `stock_basic`'s undated industries stand in, and a
//! past day says it read today's. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use wyckoff_e2e::show;
use wyckoff_market::test_support::{TushareStub, tushare_small_market};

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn online(home: &Path, base: &str, args: &[&str]) -> Output {
    Command::new(wyckoff_e2e::binary("wyckoff"))
        .args(args)
        .env("WYCKOFF_HOME", home)
        .env_remove("WYCKOFF_OFFLINE")
        .env("WYCKOFF_DATA_SOURCES", "tushare")
        .env("TUSHARE_TOKEN", "e2e-token")
        .env("WYCKOFF_TUSHARE_URL", base)
        .output()
        .unwrap()
}

fn offline(home: &Path, args: &[&str]) -> Output {
    wyckoff_e2e::wyckoff_cli(home).args(args).output().unwrap()
}

fn offline_json(home: &Path, args: &[&str]) -> Value {
    let out = offline(home, args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One day of bars for whatever is asked, and the small market's history.
fn bars_or_history(api: &str, request: &Value) -> Option<Vec<Value>> {
    let p = &request["params"];
    match api {
        "daily" | "adj_factor" => Some(vec![json!({
            "ts_code": p["ts_code"], "trade_date": p["end_date"], "open": 2.0, "high": 2.2,
            "low": 1.9, "close": 2.1, "vol": 1000.0, "amount": 210.0, "adj_factor": 1.0,
        })]),
        "namechange" | "stock_basic" | "daily_basic" => Some(tushare_small_market(api, request)),
        _ => None,
    }
}

/// Shenwan: 000001 in 银行 until 2021-07-30, in 非银金融 from then; 601318 in 非银金融 only
/// from 2021-12-10; 000002 left 房地产 in 2020 (so it is in none today).
fn shenwan(api: &str, request: &Value) -> Vec<Value> {
    if let Some(rows) = bars_or_history(api, request) {
        return rows;
    }
    if request["params"]["offset"].as_u64().unwrap_or(0) > 0 {
        return Vec::new();
    }
    let member = |index: &str, code: &str, from: &str, until: Option<&str>| json!({"index_code": index, "con_code": code, "in_date": from, "out_date": until});
    match (api, request["params"]["index_code"].as_str()) {
        ("index_classify", _) => ["801780.SI 银行", "801790.SI 非银金融", "801180.SI 房地产"]
            .iter()
            .map(|s| {
                let (code, name) = s.split_once(' ').unwrap();
                json!({"index_code": code, "industry_name": name, "level": "L1", "src": "SW2021"})
            })
            .collect(),
        ("index_member", Some("801780.SI")) => vec![member(
            "801780.SI",
            "000001.SZ",
            "20140101",
            Some("20210730"),
        )],
        ("index_member", Some("801790.SI")) => vec![
            member("801790.SI", "000001.SZ", "20210730", None),
            member("801790.SI", "601318.SH", "20211210", None),
            // a fund the table lists too: skipped
            member("801790.SI", "510300.SH", "20200101", None),
        ],
        ("index_member", Some("801180.SI")) => vec![member(
            "801180.SI",
            "000002.SZ",
            "19910129",
            Some("20200101"),
        )],
        _ => Vec::new(),
    }
}

#[test]
fn a_tushare_sync_loads_dated_shenwan_industries_that_a_past_day_reads() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let server = TushareStub::start(shenwan).unwrap();

    let out = online(h, server.base(), &["data", "sync", "000005", "--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "industries: Shenwan level 1 (tushare), 2 stock(s) in 3 industries today, 4 dated span(s); new "
        ),
        "{text}"
    );
    // what went over the wire: the level-1 SW2021 classes, then each one's members
    let requests = server.requests();
    let classify: Vec<&Value> = requests
        .iter()
        .filter(|r| r["api_name"] == "index_classify")
        .collect();
    assert_eq!(classify[0]["params"]["level"], "L1");
    assert_eq!(classify[0]["params"]["src"], "SW2021");
    let mut asked: Vec<&str> = requests
        .iter()
        .filter(|r| r["api_name"] == "index_member" && r["params"]["offset"] == 0)
        .map(|r| r["params"]["index_code"].as_str().unwrap())
        .collect();
    asked.sort_unstable();
    assert_eq!(asked, ["801180.SI", "801780.SI", "801790.SI"]);
    assert!(requests.iter().all(|r| r["token"] == "e2e-token"));

    // the load on record: today's members (000001 and 601318 in 非银金融)
    let out = offline(h, &["data", "industries", "list"]);
    let text = stdout(&out);
    assert!(
        text.contains("tushare_sw 2 stock(s) in 1 industry"),
        "{text}"
    );

    // a past day reads the span in force then; today the one that is open
    let out = offline(
        h,
        &[
            "data",
            "industries",
            "show",
            "000001",
            "--as-of",
            "2020-06-16",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    assert!(
        text.contains("000001 industry (2020-06-16): 银行  [tushare_sw "),
        "{text}"
    );
    assert!(!text.contains("a later membership"), "{text}");
    let text = stdout(&offline(h, &["data", "industries", "show", "000001"]));
    assert!(
        text.contains("000001 industry (latest): 非银金融"),
        "{text}"
    );
    // 000002 left 房地产 on 2020-01-01: in it the day before, in none today
    let m = offline_json(
        h,
        &[
            "data",
            "industries",
            "show",
            "000002",
            "--as-of",
            "2019-12-31",
            "--json",
        ],
    );
    assert_eq!(m["industry"], "房地产", "{m}");
    let m = offline_json(h, &["data", "industries", "show", "000002", "--json"]);
    assert_eq!(m["industry"], Value::Null, "{m}");
    // 601318 joined only later: the later membership stands in, and says so
    let m = offline_json(
        h,
        &[
            "data",
            "industries",
            "show",
            "601318",
            "--as-of",
            "2020-06-16",
            "--json",
        ],
    );
    assert_eq!(m["industry"], "非银金融", "{m}");
    assert_eq!(m["industry_later"], true, "{m}");
    assert_eq!(m["industry_load"]["source"], "tushare_sw");
    let text = stdout(&offline(
        h,
        &[
            "data",
            "industries",
            "show",
            "601318",
            "--as-of",
            "2020-06-16",
        ],
    ));
    assert!(
        text.contains("a later membership: none known that early"),
        "{text}"
    );

    // the screen of that day reads the same: 000001 and 601318 (the later one counted)
    let r = offline_json(h, &["screen", "--as-of", "2020-06-16", "--json"]);
    let ind = &r["cache"]["industries"];
    assert_eq!(ind["load"]["source"], "tushare_sw", "{ind}");
    assert_eq!(ind["from_later_load"], 1, "{ind}");

    // synced again: the same spans, nothing stored anew
    let out = online(h, server.base(), &["data", "sync", "000005", "--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        stdout(&out).contains("4 dated span(s); unchanged since "),
        "{}",
        show(&out)
    );
    let loads = offline_json(h, &["data", "industries", "list", "--json"]);
    assert_eq!(loads.as_array().unwrap().len(), 1, "{loads}");
}

#[test]
fn without_shenwan_tables_the_stock_lists_undated_industries_stand_in_and_say_so() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // no index_classify rows: the small market's stock_basic says 测试 for both listed stocks
    let server =
        TushareStub::start(|api, request| bars_or_history(api, request).unwrap_or_default())
            .unwrap();
    let out = online(
        h,
        server.base(),
        &["data", "sync", "000005", "--list", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ind = &v["stock_history"]["industries"];
    assert_eq!(ind["kind"], "stock_basic", "{ind}");
    assert_eq!(
        (ind["stocks"].as_u64(), ind["industries"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(
        ind["why"]
            .as_str()
            .unwrap()
            .contains("index_classify named no Shenwan"),
        "{ind}"
    );
    assert_eq!(ind["write"], "added");

    let m = offline_json(
        h,
        &[
            "data",
            "industries",
            "show",
            "000005",
            "--as-of",
            "2020-06-16",
            "--json",
        ],
    );
    assert_eq!(m["industry"], "测试", "{m}");
    assert_eq!(m["industry_load"]["source"], "tushare");
    // today's membership read for a past day: said
    assert_eq!(m["industry_later"], true, "{m}");
}
