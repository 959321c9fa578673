//! `wyckoff alerts …` on a fresh, offline data home over the bundled real bars: a volume
//! spike and a Wyckoff event fire once with their figures (computed here from the bars, or
//! read from `wyckoff events --json`), a second check on the same close fires nothing (the
//! cooldown), `--as-of` an earlier close fires there, and bad input is refused with nothing
//! stored. Build the binary first (`cargo build -p wyckoff-cli`; `scripts/test` does).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use wyckoff_e2e::show;
use wyckoff_market::Bar;
use wyckoff_time::iso;

type Home = wyckoff_e2e::CliHome;

/// The bundled bars of one stock (what a fresh data home's cache is seeded with).
fn bundled(code: &str) -> Vec<Bar> {
    wyckoff_market::bundled::daily_bars()
        .unwrap()
        .into_iter()
        .find(|s| s.code.digits() == code)
        .unwrap()
        .bars
}

/// Each bar from the 21st on with its volume over the mean of the 20 bars before it.
fn ratios(bars: &[Bar]) -> Vec<(usize, f64, f64)> {
    (20..bars.len())
        .map(|i| {
            let avg = bars[i - 20..i].iter().map(|b| b.volume).sum::<f64>() / 20.0;
            (i, avg, bars[i].volume / avg)
        })
        .collect()
}

fn close_to(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn a_volume_spike_fires_once_then_the_cooldown_holds_and_an_earlier_close_fires_there() {
    let home = Home::new();
    let bars = bundled("000001");
    let r = ratios(&bars);
    // The biggest spike of 2019–2020, and the biggest one before it in 2018.
    let pick = |from: u32, to: u32| {
        r.iter()
            .filter(|(i, ..)| (from..=to).contains(&bars[*i].date))
            .copied()
            .max_by(|a, b| a.2.total_cmp(&b.2))
            .unwrap()
    };
    let (late, late_avg, late_ratio) = pick(20190101, 20200616);
    let (early, _, early_ratio) = pick(20180101, 20181231);
    let k = (late_ratio.min(early_ratio) * 0.99 * 100.0).floor() / 100.0;
    assert!(k >= 2.0, "real spikes: {late_ratio} {early_ratio}");
    let rule = home.json(&[
        "alerts",
        "add",
        "000001",
        "--volume-ratio",
        &k.to_string(),
        "--json",
    ]);
    assert_eq!(rule["condition"]["type"], "volume_ratio");
    assert_eq!(rule["cooldown_days"], 1);
    let id = rule["id"].as_i64().unwrap();

    let day = iso(bars[late].date);
    let first = home.json(&["alerts", "check", "--as-of", &day, "--json"]);
    let fired = first["fired"].as_array().unwrap();
    assert_eq!(fired.len(), 1, "{first}");
    let f = &fired[0];
    assert_eq!(f["rule_id"], id);
    assert_eq!(
        (f["code"].as_str(), f["bar_date"].as_str()),
        (Some("000001"), Some(day.as_str()))
    );
    assert_eq!(first["data_date"], day.as_str());
    let fig = &f["figures"];
    assert_eq!(fig["type"], "volume_ratio");
    assert!(close_to(&fig["volume"], bars[late].volume), "{fig}");
    assert!(close_to(&fig["avg_volume_20"], late_avg), "{fig}");
    assert!(close_to(&fig["ratio"], late_ratio), "{fig}");

    // The same close again: nothing fires, the earlier firing holds it back.
    let second = home.json(&["alerts", "check", "--as-of", &day, "--json"]);
    assert_eq!(second["fired"], serde_json::json!([]), "{second}");
    assert_eq!(second["suppressed"][0]["fired_on"], day.as_str());
    // …and in text, which says so with the data's date.
    let text = home.text(&["alerts", "check", "--as-of", &day]);
    assert!(
        text.contains(&format!("data as of {day}: 0 fired")),
        "{text}"
    );
    assert!(text.contains("held back"), "{text}");

    // An earlier close is another trading day: it fires there, with its own date.
    let early_day = iso(bars[early].date);
    let past = home.json(&["alerts", "check", "--as-of", &early_day, "--json"]);
    assert_eq!(past["fired"].as_array().unwrap().len(), 1, "{past}");
    assert_eq!(past["fired"][0]["bar_date"], early_day.as_str());
    assert_eq!(past["data_date"], early_day.as_str());
    assert!(close_to(&past["fired"][0]["figures"]["ratio"], early_ratio));

    // The history holds both, newest first; text shows the figures.
    let history = home.json(&["alerts", "history", "--json"]);
    let dates: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["bar_date"].as_str().unwrap())
        .collect();
    assert_eq!(dates, vec![early_day.as_str(), day.as_str()]);
    let text = home.text(&["alerts", "history"]);
    assert!(
        text.contains(&format!("{:.2}× the 20-day average", late_ratio)),
        "{text}"
    );
}

#[test]
fn a_wyckoff_event_fires_on_the_close_the_engine_first_knew_it() {
    let home = Home::new();
    // What the engine showed on the last close, each mark with the close it became known on.
    let events = home.json(&["events", "000338", "--json"]);
    let mark = events["marks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["mark"]["type"] == "event" && m["known_on"] == m["since"])
        .max_by_key(|m| m["known_on"].as_u64().unwrap())
        .expect("an event on the bundled 000338 bars");
    let name = mark["mark"]["event"].as_str().unwrap().to_owned();
    let known_on = iso(mark["known_on"].as_u64().unwrap() as u32);
    let bar_date = iso(mark["bar_date"].as_u64().unwrap() as u32);

    home.json(&[
        "alerts",
        "add",
        "000338",
        "--event",
        &name.to_lowercase(),
        "--json",
    ]);
    let any = home.json(&["alerts", "add", "000338", "--event", "--json"]);
    assert_eq!(any["condition"]["event"], Value::Null);

    let r = home.json(&["alerts", "check", "--as-of", &known_on, "--json"]);
    let fired = r["fired"].as_array().unwrap();
    assert_eq!(fired.len(), 2, "the named and the any-event rule: {r}");
    for f in fired {
        assert_eq!(f["bar_date"], known_on.as_str());
        let hit = f["figures"]["events"].as_array().unwrap().iter().any(|e| {
            e["event"] == name.as_str()
                && e["bar_date"] == bar_date.as_str()
                && e["known_on"] == known_on.as_str()
        });
        assert!(hit, "{f}");
    }
    // The close before, the engine did not know it yet: nothing fired lists it.
    let bars = bundled("000338");
    let i = bars.iter().position(|b| iso(b.date) == known_on).unwrap();
    let before = iso(bars[i - 1].date);
    let r = home.json(&["alerts", "check", "--as-of", &before, "--json"]);
    for f in r["fired"].as_array().unwrap() {
        assert_eq!(f["bar_date"], before.as_str());
        for e in f["figures"]["events"].as_array().unwrap() {
            assert!(
                !(e["event"] == name.as_str() && e["bar_date"] == bar_date.as_str()),
                "{r}"
            );
        }
    }
    let text = home.text(&["alerts", "history"]);
    assert!(text.contains(&format!("{name} (")), "{text}");
    assert!(text.contains(&format!("known on {known_on}")), "{text}");
}

#[test]
fn bad_input_is_refused_with_what_is_wrong_and_nothing_is_stored() {
    let home = Home::new();
    let refused = |args: &[&str], says: &str| {
        let out = home.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    };
    refused(
        &["alerts", "add", "600994", "--price-above", "10"],
        "600994 is not in the stock list",
    );
    refused(
        &["alerts", "add", "12345", "--price-above", "10"],
        "'12345' is not an A-share code",
    );
    refused(
        &["alerts", "add", "000001", "--price-above", "ten"],
        "--price-above needs a number, got 'ten'",
    );
    refused(
        &["alerts", "add", "000001", "--price-below", "-3"],
        "the price level must be a number greater than 0",
    );
    refused(
        &["alerts", "add", "000001", "--volume-ratio", "0"],
        "the volume ratio must be a number greater than 0",
    );
    refused(
        &["alerts", "add", "000001", "--event", "sprung"],
        "unknown Wyckoff event 'sprung'",
    );
    refused(
        &[
            "alerts",
            "add",
            "000001",
            "--phase-change",
            "--cooldown",
            "0",
        ],
        "the cooldown is 1 to 250 trading days, got 0",
    );
    refused(
        &["alerts", "add", "000001"],
        "required arguments were not provided",
    );
    refused(
        &["alerts", "add", "000001", "--watchlist", "--health-change"],
        "cannot be used with",
    );
    refused(
        &["alerts", "check", "--as-of", "2020-02-30"],
        "--as-of '2020-02-30' is not a date",
    );
    refused(&["alerts", "remove", "7"], "no alert rule 7");
    assert_eq!(
        home.json(&["alerts", "list", "--json"]),
        serde_json::json!([])
    );

    // On the limits it is stored, normalised; remove takes it away.
    let rule = home.json(&[
        "alerts",
        "add",
        "sz000001",
        "--change-below",
        "-5",
        "--cooldown",
        "250",
        "--json",
    ]);
    assert_eq!(
        rule["target"],
        serde_json::json!({"type": "stock", "code": "000001"})
    );
    assert_eq!(
        rule["condition"],
        serde_json::json!({"type": "change_below", "pct": -5.0})
    );
    let list = home.text(&["alerts", "list"]);
    assert!(
        list.contains("000001: day change ≤ -5%; at most once in 250 trading days"),
        "{list}"
    );
    home.json(&["alerts", "remove", &rule["id"].to_string(), "--json"]);
    assert_eq!(
        home.json(&["alerts", "list", "--json"]),
        serde_json::json!([])
    );
}
