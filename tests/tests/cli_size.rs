//! `wyckoff size` and `wyckoff backtest --sizing risk` end to end through the real binary,
//! offline on a fresh data home over the bundled bars (000001 ends 2020-06-16; no index
//! bars, so the 水温 is not applied and the answer says so). The shares, the cost and the
//! risk at the stop are recomputed here with the fee schedule written out again; equity
//! and cash come from the ledger when not given; an unknown code, a stop above the entry
//! and no equity at all are refused by name; the edge where exactly one lot fits.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wyckoff_e2e::{CliHome, show};

/// Writes the risk section of the home's settings (the rest left at its defaults).
fn set_risk(h: &CliHome, risk: Value) {
    let path = h.path().join("settings.json");
    let mut s: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    s["risk"] = risk;
    std::fs::write(&path, s.to_string()).unwrap();
}

/// `amount_fen × parts / 100,000`, half a fen up.
fn part(amount_fen: i64, parts: i64) -> i64 {
    (amount_fen * parts * 2 + 100_000) / 200_000
}

/// One side's fees in fen on a day from 2023-08-28 on (commission 0.025 %, at least
/// 5.00; stamp 0.05 % on a sale; transfer 0.001 %), each to the fen.
fn hand_fees(amount_fen: i64, sell: bool) -> i64 {
    let stamp = if sell { part(amount_fen, 50) } else { 0 };
    part(amount_fen, 25).max(500) + stamp + part(amount_fen, 1)
}

/// One side's fees in fen on a day before 2023-08-28 (the stamp duty then 0.1 %): the
/// backtest's days here.
fn hand_fees_before_2023(amount_fen: i64, sell: bool) -> i64 {
    let stamp = if sell { part(amount_fen, 100) } else { 0 };
    part(amount_fen, 25).max(500) + stamp + part(amount_fen, 1)
}

/// Loss in fen of `n` shares bought at `entry` and sold at `stop` (prices in fen), fees
/// included.
fn hand_risk(n: i64, entry: i64, stop: i64) -> i64 {
    n * (entry - stop) + hand_fees(n * entry, false) + hand_fees(n * stop, true)
}

fn hand_cost(n: i64, entry: i64) -> i64 {
    n * entry + hand_fees(n * entry, false)
}

/// A price in millionths as fen (the prices here are whole fen).
fn fen_price(v: &Value) -> i64 {
    let e6 = v.as_i64().unwrap();
    assert_eq!(e6 % 10_000, 0, "{e6}");
    e6 / 10_000
}

fn err(h: &CliHome, args: &[&str], code: i32) -> String {
    let out = h.run(args);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", show(&out));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_buy_sized_by_its_risk_with_every_cap_named() {
    let h = CliHome::new();
    let r = h.json(&["size", "000001", "--equity", "100000", "--json"]);
    assert_eq!(r["code"], "000001");
    assert_eq!(r["board"], "main");
    assert_eq!(r["as_of"], "2020-06-16");
    assert_eq!(r["entry_source"]["type"], "last_close");
    assert_eq!(r["equity_source"]["type"], "given");
    assert_eq!(r["cash_source"]["type"], "equity");
    assert_eq!(r["regime"], Value::Null);
    let notes = r["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("水温未计入")),
        "{notes:?}"
    );
    let z = &r["sizing"];
    let (entry, stop) = (fen_price(&z["entry_e6"]), fen_price(&z["stop_e6"]));
    assert_eq!(entry, 1289, "the last close");
    // the default stop: the tighter of the two considered, under the entry
    let considered: Vec<i64> = r["stop"]["considered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| fen_price(&s["stop_e6"]))
        .collect();
    assert_eq!(considered.len(), 2, "{}", r["stop"]);
    assert_eq!(Some(stop), considered.iter().copied().max());
    assert!(stop < entry);
    // The risk budget alone: the most 100-share lots losing at most 1,000.00 at the stop.
    let lots = |ok: &dyn Fn(i64) -> bool| {
        let mut n = 0;
        while ok(n + 100) {
            n += 100;
        }
        n
    };
    let by_risk = lots(&|n| hand_risk(n, entry, stop) <= 100_000);
    let by_position = lots(&|n| hand_cost(n, entry) <= 2_000_000);
    assert_eq!(z["risk_shares"], by_risk);
    let shares = by_risk.min(by_position);
    assert!(shares > 0);
    assert_eq!(z["shares"], shares);
    assert_eq!(z["risk_fen"], hand_risk(shares, entry, stop));
    assert_eq!(z["cost_fen"], hand_cost(shares, entry));
    assert!(z["risk_fen"].as_i64().unwrap() <= 100_000);
    // 20 % of 100,000 buys fewer lots than the risk would allow: that cap is named.
    assert!(by_position < by_risk, "{by_position} {by_risk}");
    assert_eq!(
        z["bound"],
        serde_json::json!([{
            "type": "position_budget", "max_position_bp": 2000, "held_value_fen": 0,
            "budget_fen": 2_000_000, "shares": by_position
        }])
    );
    // The text says the same.
    let text = h.text(&["size", "000001", "--equity", "100000"]);
    assert!(text.contains(&format!("buy {shares} shares")), "{text}");
    assert!(
        text.contains("bound by: position budget 20% of equity = 20000.00"),
        "{text}"
    );
    assert!(text.contains("水温 not applied"), "{text}");
}

#[test]
fn equity_and_cash_come_from_the_ledger() {
    let h = CliHome::new();
    let e = err(&h, &["size", "000001"], 2);
    assert!(e.contains("--equity"), "{e}");
    h.json(&[
        "portfolio",
        "cash",
        "in",
        "50000",
        "--date",
        "2020-01-02",
        "--json",
    ]);
    // buy 1000 × 16.00 = 16,000.00 + 5.00 + 0.16: cash 33,994.84
    let out = h.run(&[
        "portfolio",
        "fill",
        "buy",
        "000001",
        "--shares",
        "1000",
        "--price",
        "16.00",
        "--date",
        "2020-01-02",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let days = h.json(&["portfolio", "value", "--json"]);
    let last = days.as_array().unwrap().last().unwrap().clone();
    let nav = last["nav_fen"].as_i64().unwrap();
    let r = h.json(&[
        "size",
        "000001",
        "--entry",
        "10",
        "--stop",
        "9",
        "--max-position-pct",
        "100",
        "--json",
    ]);
    assert_eq!(r["equity_source"]["type"], "ledger");
    assert_eq!(r["equity_source"]["date"], last["date"]);
    assert_eq!(r["sizing"]["equity_fen"], nav);
    assert_eq!(r["cash_source"]["type"], "ledger");
    assert_eq!(r["sizing"]["cash_fen"], 3_399_484);
    assert_eq!(r["entry_source"]["type"], "given");
    assert_eq!(r["stop"]["chosen"]["source"]["type"], "given");
    // the ledger's 1,000 shares count against the position cap, at the entry
    assert_eq!(r["held_shares"], 1000);
    assert_eq!(r["sizing"]["held_value_fen"], 1_000_000);
    // 1 % of the NAV at 1.00 a share to the stop
    let budget = nav / 100;
    let shares = r["sizing"]["shares"].as_i64().unwrap();
    assert!(shares > 0, "{r}");
    assert!(hand_risk(shares, 1000, 900) <= budget, "{r}");
    assert!(hand_risk(shares + 100, 1000, 900) > budget, "{r}");
}

#[test]
fn bad_input_is_refused_by_name() {
    let h = CliHome::new();
    let e = err(&h, &["size", "999999", "--equity", "100000"], 2);
    assert!(e.contains("999999"), "{e}");
    let e = err(
        &h,
        &["size", "000001", "--equity", "100000", "--stop", "30"],
        2,
    );
    assert!(e.contains("止损价 30.00 不低于买入价 12.89"), "{e}");
    let e = err(
        &h,
        &["size", "000001", "--equity", "100000", "--risk-pct", "0"],
        2,
    );
    assert!(e.contains("risk_pct"), "{e}");
    let e = err(
        &h,
        &[
            "size",
            "000001",
            "--equity",
            "100000",
            "--stop-from",
            "moon",
        ],
        2,
    );
    assert!(e.contains("stop_from"), "{e}");
}

#[test]
fn exactly_one_lot_fits_or_none() {
    let h = CliHome::new();
    // 100 shares at 10.00 to a 9.00 stop lose 100.00 + 5.01 (the buy) + 5.46 (the sale):
    // 110.47, 1 % of 11,047.00.
    assert_eq!(hand_risk(100, 1000, 900), 11_047);
    let at = |equity: &str| {
        h.json(&[
            "size",
            "000001",
            "--entry",
            "10",
            "--stop",
            "9",
            "--equity",
            equity,
            "--max-position-pct",
            "100",
            "--json",
        ])
    };
    let one = at("11047");
    assert_eq!(one["sizing"]["shares"], 100);
    assert_eq!(one["sizing"]["risk_fen"], 11_047);
    assert_eq!(one["why_none"], Value::Null);
    let none = at("11046.99");
    assert_eq!(none["sizing"]["shares"], 0);
    assert_eq!(none["sizing"]["bound"], serde_json::json!([]));
    assert_eq!(
        none["why_none"],
        "风险预算 110.46 元不够买最小的 100 股（含双边费用）"
    );
    // The cash at its edge: 100 shares cost 1,005.01.
    let cash = |c: &str| {
        h.json(&[
            "size", "000001", "--entry", "10", "--stop", "5", "--equity", "100000", "--cash", c,
            "--json",
        ])
    };
    assert_eq!(cash("1005.01")["sizing"]["shares"], 100);
    let short = cash("1005");
    assert_eq!(short["sizing"]["shares"], 0);
    assert_eq!(short["sizing"]["bound"][0]["type"], "cash");
    let text = h.text(&[
        "size", "000001", "--entry", "10", "--stop", "5", "--equity", "100000", "--cash", "1005",
    ]);
    assert!(
        text.contains("no buy: 现金 1005.00 元不够买最小的 100 股（含费用）"),
        "{text}"
    );
}

#[test]
fn the_settings_risk_is_the_default() {
    let h = CliHome::new();
    let size = |extra: &[&str]| {
        let mut args = vec![
            "size", "000001", "--equity", "100000", "--entry", "10", "--stop", "9.5", "--json",
        ];
        args.extend_from_slice(extra);
        h.json(&args)
    };
    // The engine's defaults with no settings: 1 % and 20 %.
    let r = size(&[]);
    assert_eq!(
        (&r["sizing"]["risk_bp"], &r["sizing"]["risk_budget_fen"]),
        (&json!(100), &json!(100_000))
    );
    assert_eq!(r["sizing"]["max_position_bp"], 2000);
    // Settings at 0.5 % a trade and 5 % a position: the budget halves, the cap follows.
    set_risk(
        &h,
        json!({"risk_per_trade_pct": 0.5, "max_position_pct": 5.0}),
    );
    let r = size(&[]);
    let z = &r["sizing"];
    assert_eq!(
        (&z["risk_bp"], &z["risk_budget_fen"]),
        (&json!(50), &json!(50_000))
    );
    assert_eq!(z["max_position_bp"], 500);
    // 5,000.00 buys 400 at 10.00 (4,005.04; 500 cost 5,005.05), fewer than the risk
    // budget's 900 at 0.50 a share
    assert_eq!(z["shares"], 400);
    assert_eq!(z["bound"][0]["type"], "position_budget");
    assert_eq!(z["bound"][0]["budget_fen"], 500_000);
    // A figure given overrides the setting.
    let r = size(&["--risk-pct", "1", "--max-position-pct", "20"]);
    assert_eq!(
        (&r["sizing"]["risk_bp"], &r["sizing"]["risk_budget_fen"]),
        (&json!(100), &json!(100_000))
    );
    assert_eq!(r["sizing"]["max_position_bp"], 2000);
    let text = h.text(&[
        "size", "000001", "--equity", "100000", "--entry", "10", "--stop", "9.5",
    ]);
    assert!(text.contains("risk 0.5% = 500.00"), "{text}");
}

#[test]
fn an_add_takes_only_what_the_position_cap_has_left() {
    let h = CliHome::new();
    let size = |held: &str| {
        h.json(&[
            "size",
            "000001",
            "--equity",
            "100000",
            "--entry",
            "10",
            "--stop",
            "9.9",
            "--held-shares",
            held,
            "--json",
        ])
    };
    // 1,500 held at 10.00 are 15 % of 100,000: the 20 % cap leaves 5,000.00, 400 shares
    // (4,005.04; 500 cost 5,005.05).
    let r = size("1500");
    let z = &r["sizing"];
    assert_eq!(r["held_shares"], 1500);
    assert_eq!(z["held_value_fen"], 1_500_000);
    assert_eq!(z["shares"], 400);
    assert_eq!(z["cost_fen"], hand_cost(400, 1000));
    assert_eq!(hand_cost(500, 1000), 500_505);
    assert_eq!(
        z["bound"],
        json!([{
            "type": "position_budget", "max_position_bp": 2000, "held_value_fen": 1_500_000,
            "budget_fen": 500_000, "shares": 400
        }])
    );
    // Held at the cap: nothing more, and why.
    let full = size("2000");
    assert_eq!(full["sizing"]["shares"], 0);
    assert_eq!(
        full["why_none"],
        "单只仓位上限已用去 20000.00 元（已持有），剩余 0.00 元不够买最小的 100 股（含费用）"
    );
    let text = h.text(&[
        "size",
        "000001",
        "--equity",
        "100000",
        "--entry",
        "10",
        "--stop",
        "9.9",
        "--held-shares",
        "1500",
    ]);
    assert!(
        text.contains("position budget 20% of equity less 15000.00 held = 5000.00 → 400 shares"),
        "{text}"
    );
    assert!(text.contains("held 1500 shares worth 15000.00"), "{text}");
}

#[test]
fn the_atr_multiple_sets_the_stop() {
    let h = CliHome::new();
    let atr = |k: &str| {
        h.json(&[
            "size",
            "000001",
            "--equity",
            "100000",
            "--max-position-pct",
            "100",
            "--stop-from",
            "atr",
            "--atr-k",
            k,
            "--json",
        ])
    };
    let one = atr("1");
    let chosen = &one["stop"]["chosen"];
    assert_eq!(chosen["source"]["type"], "atr");
    assert_eq!(chosen["source"]["k"], 1.0);
    let atr_e6 = chosen["source"]["atr_e6"].as_i64().unwrap();
    let entry_e6 = one["sizing"]["entry_e6"].as_i64().unwrap();
    assert_eq!(entry_e6, 12_890_000);
    // entry − k × ATR14, rounded down to the fen
    let stop_at = |k: i64| (entry_e6 - k * atr_e6).div_euclid(10_000) * 10_000;
    assert_eq!(chosen["stop_e6"], stop_at(1));
    let three = atr("3");
    assert_eq!(three["stop"]["chosen"]["source"]["k"], 3.0);
    assert_eq!(three["stop"]["chosen"]["stop_e6"], stop_at(3));
    assert!(stop_at(3) < stop_at(1));
    // a wider stop risks more a share: no more shares than the tighter one
    let shares = |r: &Value| r["sizing"]["shares"].as_i64().unwrap();
    assert!(
        shares(&three) <= shares(&one),
        "{} {}",
        shares(&three),
        shares(&one)
    );
    let entry = fen_price(&one["sizing"]["entry_e6"]);
    let stop3 = fen_price(&three["stop"]["chosen"]["stop_e6"]);
    assert!(hand_risk(shares(&three), entry, stop3) <= 100_000);
    assert!(hand_risk(shares(&three) + 100, entry, stop3) > 100_000);
    // a price and a multiple together are refused
    let e = err(
        &h,
        &[
            "size", "000001", "--equity", "100000", "--stop", "12", "--atr-k", "2",
        ],
        2,
    );
    assert!(e.contains("--atr-k"), "{e}");
}

fn backtest(h: &CliHome, extra: &[&str]) -> Value {
    let mut args = vec![
        "backtest",
        "--json",
        "--start",
        "2019-06-01",
        "--end",
        "2020-06-16",
        "--hold-days",
        "5",
    ];
    args.extend_from_slice(extra);
    h.json(&args)
}

#[test]
fn the_backtest_sizes_by_risk_reproducibly_within_the_budget() {
    let h = CliHome::new();
    let risk = ["--sizing", "risk", "--risk-pct", "1", "--top-n", "1"];
    let r = backtest(&h, &risk);
    assert_eq!(r, backtest(&h, &risk), "the same run twice");
    assert_eq!(r["args"]["sizing"]["type"], "risk");
    assert_eq!(r["args"]["sizing"]["risk_bp"], 100);
    assert_eq!(r["args"]["sizing"]["limits_from"], "settings");
    let trades = r["trades"].as_array().unwrap();
    assert!(trades.len() >= 3, "{}", trades.len());
    // One position at a time: the equity at each buy is the cash left by the trades
    // before it. The JSON's prices are rounded to 4 decimals: a fen of slack.
    let mut trades = trades.clone();
    trades.sort_by_key(|t| t["entry_date"].as_str().unwrap().to_owned());
    let mut equity = 100_000.0;
    for t in &trades {
        let shares = t["shares"].as_f64().unwrap();
        let entry = t["entry_price"].as_f64().unwrap();
        let stop = entry * 0.92;
        assert_eq!(shares % 100.0, 0.0, "{t}");
        let fees =
            |amount: f64, sell: bool| hand_fees_before_2023((amount * 100.0).round() as i64, sell);
        let risk_fen = shares * (entry - stop) * 100.0
            + (fees(shares * entry, false) + fees(shares * stop, true)) as f64;
        let budget_fen = equity * 100.0 * 0.01;
        assert!(
            risk_fen <= budget_fen + 1.0,
            "{risk_fen} fen > 1% of {equity}: {t}"
        );
        equity += t["pnl"].as_f64().unwrap();
    }
    // Several positions at once: each trade's risk at entry, recomputed here from its
    // shares, price and the −8 % stop with the fee schedule, is within 2 % of the equity it
    // was sized from, as the trade reports it; the account guards held some buys back.
    let many = ["--sizing", "risk", "--risk-pct", "2", "--top-n", "5"];
    let r = backtest(&h, &many);
    assert_eq!(r, backtest(&h, &many), "the same run twice");
    let trades = r["trades"].as_array().unwrap();
    assert!(trades.len() >= 3, "{}", trades.len());
    for t in trades {
        let shares = t["shares"].as_f64().unwrap();
        let entry = t["entry_price"].as_f64().unwrap();
        let stop = entry * 0.92;
        let fees =
            |amount: f64, sell: bool| hand_fees_before_2023((amount * 100.0).round() as i64, sell);
        let risk_fen = shares * (entry - stop) * 100.0
            + (fees(shares * entry, false) + fees(shares * stop, true)) as f64;
        let at_entry = &t["entry_risk"];
        let equity = at_entry["equity"].as_f64().unwrap();
        assert!(
            risk_fen <= equity * 2.0 + 1.0,
            "{risk_fen} fen > 2% of {equity}: {t}"
        );
        let said = at_entry["risk"].as_f64().unwrap() * 100.0;
        assert!((said - risk_fen).abs() <= 2.0, "{said} vs {risk_fen}: {t}");
    }
    let skipped = &r["skipped_entries"];
    assert!(
        skipped.get("heat_cap").is_some() || skipped.get("drawdown_brake").is_some(),
        "five 2 % positions would put 10 % at risk: {skipped}"
    );
    // Equal slots buy differently.
    let equal = backtest(&h, &["--top-n", "1"]);
    assert!(equal["args"].get("sizing").is_none());
    assert_ne!(equal["trades"], r["trades"]);
}
