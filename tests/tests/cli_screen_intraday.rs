//! `wyckoff screen`'s second timeframe at L4, through the real binary over the bundled real
//! daily bars: with no minute bars every candidate says it has no minute data (never a
//! silent pass); once `wyckoff data sync CODE --period 60m` has cached the trigger day's
//! 60-minute bars (from a local server speaking Eastmoney's `klt` format), a day that closed
//! at the top of its range with the last hour up reads as confirmed and one that faded as
//! not confirmed, each with where the day closed in its range; the L4 layer counts them;
//! the candidates and their scores are the same as before (a report, not a filter). L4 also
//! reads the weekly structure each trigger sits in — the same reading `wyckoff analyze`
//! gives of that stock as of that day — and each candidate's lines say which timeframe said
//! what (daily trigger, weekly, 60-minute).
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/http.rs"]
mod http;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use http::{Reply, Request};
use serde_json::{Value, json};
use wyckoff_e2e::{show, wyckoff_cli};

/// How a served trigger day moves, as (open, close, high, low) fractions of the stock's
/// real daily close for the bars ending 10:30, 11:30, 14:00 and 15:00 (test data: the 15:00
/// close is the daily close the screen read).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// Sold off in the morning, closed at the day's high, last hour up.
    Strong,
    /// Rose in the morning, faded into the close, last hour down.
    Faded,
}

impl Shape {
    fn hours(self) -> [(u16, [f64; 4]); 4] {
        match self {
            Shape::Strong => [
                (1030, [1.00, 0.96, 1.00, 0.95]),
                (1130, [0.96, 0.98, 0.99, 0.96]),
                (1400, [0.98, 0.99, 0.995, 0.975]),
                (1500, [0.99, 1.00, 1.00, 0.985]),
            ],
            Shape::Faded => [
                (1030, [0.98, 1.03, 1.04, 0.98]),
                (1130, [1.03, 1.02, 1.03, 1.01]),
                (1400, [1.02, 1.005, 1.02, 1.00]),
                (1500, [1.005, 1.00, 1.005, 0.995]),
            ],
        }
    }

    /// The served lines (Eastmoney's `klt=60` format) of `day` (YYYY-MM-DD) around `close`.
    fn lines(self, day: &str, close: f64) -> Vec<String> {
        self.hours()
            .iter()
            .map(|(hhmm, f)| {
                let p = |i: usize| format!("{:.2}", close * f[i]);
                format!(
                    "{day} {:02}:{:02},{},{},{},{},1000,1000000.00,0.00,0.00,0.00,0.10",
                    hhmm / 100,
                    hhmm % 100,
                    p(0),
                    p(1),
                    p(2),
                    p(3)
                )
            })
            .collect()
    }
}

/// Where the served day closed in its own range, percent, from the served lines.
fn close_in_range(lines: &[String]) -> f64 {
    let fields = |l: &String| -> Vec<f64> {
        l.split(',')
            .skip(1)
            .take(4)
            .map(|x| x.parse().unwrap())
            .collect()
    };
    let all: Vec<Vec<f64>> = lines.iter().map(fields).collect();
    let high = all.iter().map(|f| f[2]).fold(f64::MIN, f64::max);
    let low = all.iter().map(|f| f[3]).fold(f64::MAX, f64::min);
    (all.last().unwrap()[1] - low) / (high - low) * 100.0
}

type Served = Arc<Mutex<HashMap<String, Vec<String>>>>;

/// Serves, for `klt=60`, the lines registered for the asked code; nothing for the rest.
fn server() -> (String, Served) {
    let served: Served = Arc::new(Mutex::new(HashMap::new()));
    let lines = served.clone();
    let base = http::serve(move |req: &Request| {
        let code = req
            .param("secid")
            .and_then(|s| s.split('.').nth(1))
            .unwrap_or("");
        Reply::json(match lines.lock().unwrap().get(code) {
            Some(k) if req.line.contains("klt=60&") => {
                json!({"rc": 0, "data": {"code": code, "klines": k}})
            }
            _ => json!({"rc": 0, "data": null}),
        })
    });
    (base, served)
}

fn run(mut cmd: Command, args: &[&str]) -> Output {
    cmd.args(args).output().unwrap()
}

fn ok_json(out: Output) -> Value {
    assert!(out.status.success(), "{}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn screen(home: &Path, day: &str) -> Value {
    ok_json(run(
        wyckoff_cli(home),
        &["screen", "--json", "--as-of", day],
    ))
}

fn l4_note(r: &Value) -> String {
    r["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["layer"] == "L4")
        .unwrap()["note"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// The L4 note's weekly part from the candidates' weekly trends.
fn weekly_note(r: &Value) -> String {
    let mut n = [0; 4];
    for c in r["candidates"].as_array().unwrap() {
        let i = match c["weekly"]["trend"].as_str() {
            Some("up") => 0,
            Some("sideways") => 1,
            Some("down") => 2,
            None => 3,
            Some(other) => panic!("weekly trend {other}"),
        };
        n[i] += 1;
    }
    format!(
        "周线上升 {}，横盘 {}，下降 {}，不足14周 {}；",
        n[0], n[1], n[2], n[3]
    )
}

/// The candidates without their 60-minute check: what L4 decided.
fn decided(r: &Value) -> Vec<Value> {
    r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.as_object_mut().unwrap().remove("intraday_60m");
            // the 60-minute line changes with the check; the daily and weekly ones do not
            let lines = c["timeframes"].as_array_mut().unwrap();
            lines.retain(|l| l["timeframe"] != "minutes60");
            c
        })
        .collect()
}

#[test]
fn l4_reads_the_trigger_day_on_cached_60_minute_bars_and_says_when_it_has_none() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // the two latest screened days (walking back over weekdays) that have a candidate
    let mut days: Vec<(String, Value)> = Vec::new();
    let mut d = chrono::NaiveDate::from_ymd_opt(2020, 6, 16).unwrap();
    while days.len() < 2 && d.format("%Y").to_string() != "2018" {
        use chrono::Datelike;
        if d.weekday().number_from_monday() <= 5 {
            let iso = d.format("%Y-%m-%d").to_string();
            let r = screen(h, &iso);
            if !r["candidates"].as_array().unwrap().is_empty() {
                days.push((iso, r));
            }
        }
        d = d.pred_opt().unwrap();
    }
    assert_eq!(days.len(), 2, "the bundled bars give candidates");

    // nothing cached: every candidate says so, and L4 counts them
    for (day, r) in &days {
        let cands = r["candidates"].as_array().unwrap();
        for c in cands {
            assert_eq!(
                c["intraday_60m"],
                json!({"type": "no_minute_data"}),
                "{day}: {c}"
            );
        }
        assert_eq!(
            l4_note(r),
            format!(
                "{}60分钟确认 0，未确认 0，无分钟数据 {}（仅标注，不筛选）",
                weekly_note(r),
                cands.len()
            )
        );
        for c in cands {
            weekly_is_the_diagnosis(h, c);
        }
    }

    // the first day's first candidate held into the close, the second day's faded
    let (base, served) = server();
    let mut expect: Vec<(String, String, &str, f64)> = Vec::new();
    for ((day, r), shape) in days.iter().zip([Shape::Strong, Shape::Faded]) {
        let c = &r["candidates"][0];
        let code = c["code"].as_str().unwrap().to_owned();
        let trigger_day = c["bars_as_of"].as_str().unwrap();
        let lines = shape.lines(trigger_day, c["last_close"].as_f64().unwrap());
        let pct = close_in_range(&lines);
        served
            .lock()
            .unwrap()
            .entry(code.clone())
            .or_default()
            .extend(lines);
        let kind = match shape {
            Shape::Strong => "confirmed",
            Shape::Faded => "not_confirmed",
        };
        expect.push((day.clone(), code, kind, pct));
    }
    for (_, code, _, _) in &expect {
        let mut cmd = wyckoff_cli(h);
        cmd.env_remove("WYCKOFF_OFFLINE")
            .env("WYCKOFF_DATA_SOURCES", "eastmoney")
            .env("WYCKOFF_EASTMONEY_URL", &base);
        let synced = ok_json(run(
            cmd,
            &["data", "sync", code, "--period", "60m", "--json"],
        ));
        assert_eq!(synced["failed"], 0, "{synced}");
    }

    for ((day, before), (_, code, kind, pct)) in days.iter().zip(&expect) {
        let after = screen(h, day);
        // the same candidates, scores and triggers: the check reports, it does not filter
        assert_eq!(decided(&after), decided(before), "{day}");
        let cands = after["candidates"].as_array().unwrap();
        let c = cands.iter().find(|c| c["code"] == *code).unwrap();
        let check = &c["intraday_60m"];
        assert_eq!(check["type"], *kind, "{day} {code}: {c}");
        let got = check["close_in_range_pct"].as_f64().unwrap();
        assert!((got - pct).abs() < 0.01, "{day} {code}: {got} vs {pct}");
        assert_eq!(
            check["last_hour_down"].as_bool().unwrap_or(false),
            *kind == "not_confirmed"
        );
        // any other candidate of the day still has nothing cached for its trigger day
        let others = cands.iter().filter(|o| o["code"] != *code);
        let none = others
            .inspect(|o| assert_eq!(o["intraday_60m"]["type"], "no_minute_data", "{o}"))
            .count();
        let (yes, no) = if *kind == "confirmed" { (1, 0) } else { (0, 1) };
        assert_eq!(
            l4_note(&after),
            format!(
                "{}60分钟确认 {yes}，未确认 {no}，无分钟数据 {none}（仅标注，不筛选）",
                weekly_note(&after)
            )
        );
        let line = c["timeframes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["timeframe"] == "minutes60")
            .unwrap();
        let want = if *kind == "confirmed" {
            "60-minute: confirmed"
        } else {
            "60-minute: not confirmed"
        };
        assert!(line["en"].as_str().unwrap().starts_with(want), "{line}");
        // the diagnosis of the stock as of its trigger day reads the same 60-minute bars
        // the same way, and says so in a line of its own
        let trigger_day = c["bars_as_of"].as_str().unwrap();
        let a = ok_json(run(
            wyckoff_cli(h),
            &["analyze", code, "--as-of", trigger_day, "--json"],
        ));
        let theirs = &a["timeframes"]["intraday"];
        assert_eq!(theirs["type"], check["type"], "{code} {trigger_day}: {a}");
        let got = theirs["close_in_range_pct"].as_f64().unwrap();
        assert!(
            (got - pct).abs() < 0.01,
            "{code} {trigger_day}: {got} vs {pct}"
        );
        let lines = a["timeframes"]["lines"].as_array().unwrap();
        let minutes = lines
            .iter()
            .find(|l| l["timeframe"] == "minutes60")
            .unwrap_or_else(|| panic!("no 60-minute line in {a}"));
        assert!(
            minutes["en"].as_str().unwrap().starts_with(want),
            "{minutes}"
        );
        assert_eq!(minutes["zh"], line["zh"], "{code} {trigger_day}");
        // the text report shows the check beside each candidate
        let text = run(wyckoff_cli(h), &["screen", "--as-of", day]);
        assert!(text.status.success(), "{}", show(&text));
        let text = String::from_utf8_lossy(&text.stdout).to_string();
        let row = text
            .lines()
            .find(|l| l.starts_with(code.as_str()))
            .unwrap_or_else(|| panic!("no row of {code} in {text}"));
        assert!(row.trim_end().ends_with(kind), "{row}");
        // and the weekly trend beside it
        let trend = c["weekly"]["trend"].as_str().unwrap_or("-");
        assert!(row.contains(&format!(" {trend} ")), "{trend}: {row}");
    }
}

/// A candidate's weekly context is what `wyckoff analyze` reads of the stock as of its
/// trigger day, and its lines name daily, weekly and 60-minute in that order, the daily one
/// naming its triggers.
fn weekly_is_the_diagnosis(home: &Path, c: &Value) {
    let code = c["code"].as_str().unwrap();
    let day = c["bars_as_of"].as_str().unwrap();
    let tf: Vec<&str> = c["timeframes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["timeframe"].as_str().unwrap())
        .collect();
    assert_eq!(tf, ["daily", "weekly", "minutes60"], "{c}");
    let daily = c["timeframes"][0]["en"].as_str().unwrap();
    for t in c["triggers"].as_array().unwrap() {
        assert!(daily.contains(t["kind"].as_str().unwrap()), "{daily}: {c}");
    }
    assert!(daily.ends_with(day), "{daily}");
    let a = ok_json(run(
        wyckoff_cli(home),
        &["analyze", code, "--as-of", day, "--json"],
    ));
    let theirs = &a["timeframes"]["weekly"];
    let ours = &c["weekly"];
    if theirs.is_null() {
        assert!(ours.is_null(), "{code} {day}: {ours}");
        return;
    }
    assert_eq!(ours["trend"], theirs["trend"], "{code} {day}");
    assert!(ours["weeks"].as_u64().is_some(), "{ours}");
    for k in [
        "range_low",
        "range_high",
        "position_pct",
        "ma10",
        "ma10_4w_ago",
    ] {
        let (x, y) = (ours[k].as_f64().unwrap(), theirs[k].as_f64().unwrap());
        assert!((x - y).abs() < 0.01, "{code} {day} {k}: {x} vs {y}");
    }
    let weekly_line = c["timeframes"][1]["en"].as_str().unwrap();
    let theirs_line = a["timeframes"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["timeframe"] == "weekly")
        .unwrap()["en"]
        .as_str()
        .unwrap();
    assert_eq!(weekly_line, theirs_line, "{code} {day}");
}
