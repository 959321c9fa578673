//! `wyckoff backtest`: the funnel strategy replayed over the local cache under A-share
//! rules, without any LLM — the same code as the `run_backtest` tool. Progress on stderr
//! when it is a terminal. Exit status: 0 ok, 1 no data / failure, 2 bad input.
//!
//! A sweep: any of --hold-days, --stop-loss, --take-profit, --top-n, --entry and --triggers
//! given several values (`5,10,20`, `FROM..TO:STEP`, or both) runs every combination (at
//! most 1,000) and prints a table of them, the best by --best-by and its stability.
//!
//! `--walk-forward IS,OOS[,STEP]` (trading days) runs the grid as a walk-forward: in each
//! rolling window the in-sample best by --best-by runs out of sample; a table of windows and
//! a plain verdict.

use std::process::ExitCode;

use serde_json::{Value, json};

use crate::market::{desk, failed, print_json, runtime, tool_failure};
use crate::screen::spinner;

#[derive(Debug, clap::Args)]
pub struct BacktestArgs {
    /// First day (YYYY-MM-DD or YYYYMMDD); default 180 days ago.
    #[arg(long, value_name = "DATE")]
    pub start: Option<String>,
    /// Last day; default yesterday.
    #[arg(long, value_name = "DATE")]
    pub end: Option<String>,
    /// Trading days to hold (1–60; default 10). Several values sweep: 5,10,20 or 5..20:5.
    #[arg(long, value_name = "N|LIST|RANGE", allow_hyphen_values = true)]
    pub hold_days: Option<String>,
    /// Candidates bought a day, and portfolio slots (0–20; default 4). Sweepable.
    #[arg(long, value_name = "N|LIST|RANGE", allow_hyphen_values = true)]
    pub top_n: Option<String>,
    /// all, main, chinext, star or bse.
    #[arg(long, default_value = "all")]
    pub board: String,
    /// Stop-loss in percent (default -8; 8 and -8 both sell at −8 %). Sweepable: 5,8 or
    /// 4..10:2.
    #[arg(long, value_name = "PCT|LIST|RANGE", allow_hyphen_values = true)]
    pub stop_loss: Option<String>,
    /// Take-profit in percent (≥ 0; default 0 = none). Sweepable.
    #[arg(long, value_name = "PCT|LIST|RANGE", allow_hyphen_values = true)]
    pub take_profit: Option<String>,
    /// open = the next day's open after the signal (default); close = the signal day's
    /// close; 1455 = the signal day's 14:55 price from cached minute bars (single runs;
    /// refused, naming the picks, where none are cached). Sweepable: open,close.
    #[arg(long, value_name = "open|close|1455|LIST")]
    pub entry: Option<String>,
    /// The L4 triggers picks come from, joined with +: spring, evr, trend_pb, sos, lps,
    /// compression (default spring+evr+trend_pb). Sweepable: spring+evr,spring+evr+sos.
    #[arg(long, value_name = "SET|LIST")]
    pub triggers: Option<String>,
    /// Position sizing: equal (top-n equal slots, default; no account limits) or risk (each
    /// buy loses at most --risk-pct of equity at the stop-loss, fees included, within one
    /// slot, under the account limits in Settings: heat, positions, the drawdown and
    /// stop-out brake). Also for sweeps and walk-forwards.
    #[arg(long, value_name = "equal|risk")]
    pub sizing: Option<String>,
    /// Percent of equity at risk a trade with --sizing risk (default 1).
    #[arg(long, value_name = "PCT")]
    pub risk_pct: Option<f64>,
    /// A sweep's best combination by: sharpe (default), return, annualized, max_drawdown
    /// (the lowest), win_rate or profit_factor.
    #[arg(long, value_name = "METRIC")]
    pub best_by: Option<String>,
    /// Walk-forward in trading days: in-sample, out-of-sample and the step (default the
    /// out-of-sample length), e.g. 250,60,60. Each window's in-sample best by --best-by
    /// runs out of sample.
    #[arg(long, value_name = "IS,OOS[,STEP]")]
    pub walk_forward: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

fn f(v: &Value, dp: usize) -> String {
    v.as_f64()
        .map(|x| format!("{x:.dp$}"))
        .unwrap_or_else(|| "--".into())
}

/// The result's data notes (what fell back to today's data, and why), one a line.
fn print_notes(r: &Value) {
    for note in r["notes"].as_array().into_iter().flatten() {
        if let Some(n) = note.as_str() {
            println!("note: {n}");
        }
    }
}

fn print_text(r: &Value) {
    let m = &r["metrics"];
    println!(
        "{}  ·  {} trading days  ·  hold {}  ·  top {}  ·  stop {}%  ·  take {}%  ·  entry {}",
        r["period"].as_str().unwrap_or(""),
        r["trading_days"],
        r["args"]["hold_days"],
        r["args"]["top_n"],
        r["args"]["stop_loss_pct"],
        r["args"]["take_profit_pct"],
        r["args"]["entry_price_mode"].as_str().unwrap_or(""),
    );
    if r["args"]["sizing"]["type"] == "risk" {
        println!("{}", sizing_line(&r["args"]["sizing"]));
        let held = held_back(&r["skipped_entries"]);
        if !held.is_empty() {
            println!("held back: {held}");
        }
    }
    println!(
        "total {}%  annualised {}%  max drawdown {}%  win rate {}%  profit factor {}  Sharpe {}  turnover {}  fees {}",
        f(&m["total_return_pct"], 2),
        f(&m["annualized_return_pct"], 2),
        f(&m["max_drawdown_pct"], 2),
        f(&m["win_rate_pct"], 1),
        f(&m["profit_factor"], 2),
        f(&m["sharpe"], 2),
        f(&m["turnover"], 2),
        f(&m["fees"], 2),
    );
    match r["benchmark"]["return_pct"].as_f64() {
        Some(b) => println!(
            "benchmark {} {b:.2}%",
            r["benchmark"]["code"].as_str().unwrap_or("")
        ),
        None => println!(
            "benchmark: {}",
            r["benchmark"]["note"].as_str().unwrap_or("unavailable")
        ),
    }
    print_notes(r);
    let trades = r["trades"].as_array().cloned().unwrap_or_default();
    println!("\n{} trades", trades.len());
    for t in &trades {
        println!(
            "{} {:<8} {} @{} → {} @{}  {} shares  fees {}  P/L {} ({}%)  {}{}",
            t["code"].as_str().unwrap_or(""),
            t["name"].as_str().unwrap_or(""),
            t["entry_date"].as_str().unwrap_or(""),
            f(&t["entry_price"], 2),
            t["exit_date"].as_str().unwrap_or(""),
            f(&t["exit_price"], 2),
            t["shares"],
            f(&t["fees"], 2),
            f(&t["pnl"], 2),
            f(&t["pnl_pct"], 2),
            t["exit_reason"].as_str().unwrap_or(""),
            match t["limit_down_days"].as_u64() {
                Some(n) if n > 0 => format!(" (held {n} days by limit-down)"),
                _ => String::new(),
            },
        );
    }
}

/// A risk sizing's percent and the account limits it ran under, and where they came from.
fn sizing_line(sizing: &Value) -> String {
    let pct = |key: &str| sizing["limits"][key].as_f64().unwrap_or(0.0) / 100.0;
    format!(
        "sizing: risk {}% of equity a trade at the stop  ·  limits ({}): heat {}%, positions {}, drawdown brake {}%, {} losing sales in {} days (0 = off)",
        sizing["risk_bp"].as_f64().unwrap_or(0.0) / 100.0,
        match sizing["limits_from"].as_str() {
            Some("settings") => "from Settings",
            _ => "engine defaults",
        },
        pct("max_heat_bp"),
        sizing["limits"]["max_positions"],
        pct("drawdown_brake_bp"),
        sizing["limits"]["max_stop_outs"],
        sizing["limits"]["stop_out_days"],
    )
}

/// The picks the account limits held back, by limit (`heat_cap 3, stop_out_brake 2`).
fn held_back(skipped: &Value) -> String {
    [
        "heat_cap",
        "positions_limit",
        "drawdown_brake",
        "stop_out_brake",
    ]
    .iter()
    .filter_map(|k| skipped[*k].as_u64().map(|n| format!("{k} {n}")))
    .collect::<Vec<_>>()
    .join(", ")
}

/// Rows of cells, each column right-aligned to its widest cell.
fn table(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            r.iter()
                .zip(&widths)
                .map(|(s, w)| format!("{s:>w$}"))
                .collect::<Vec<_>>()
                .join("  ")
        })
        .collect()
}

/// A parameter of a sweep row as the table shows it.
fn param(row: &Value, key: &str) -> String {
    match &row[key] {
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("+"),
        Value::String(s) => s.clone(),
        // -8.0 reads -8.
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
            _ => n.to_string(),
        },
        v => v.to_string(),
    }
}

const PARAM_HEADS: [(&str, &str); 6] = [
    ("hold_days", "hold"),
    ("stop_loss_pct", "stop%"),
    ("take_profit_pct", "take%"),
    ("top_n", "top"),
    ("entry_price_mode", "entry"),
    ("triggers", "triggers"),
];

fn print_sweep(r: &Value) {
    let swept: Vec<&str> = r["swept"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rows = r["rows"].as_array().cloned().unwrap_or_default();
    let best = r["best"].as_u64().map(|b| b as usize);
    let best_by = r["best_by"].as_str().unwrap_or("");
    println!(
        "{}  ·  {} trading days  ·  {} combinations ({})  ·  best by {best_by}",
        r["period"].as_str().unwrap_or(""),
        r["trading_days"],
        r["combinations"],
        swept.join(" × "),
    );
    // What every row shares.
    if let Some(first) = rows.first() {
        let fixed: Vec<String> = PARAM_HEADS
            .iter()
            .filter(|(key, _)| !swept.contains(key))
            .map(|(key, head)| format!("{head} {}", param(first, key)))
            .collect();
        println!("fixed: {}", fixed.join("  ·  "));
    }
    let risk_sized = r["grid"]["sizing"]["type"] == "risk";
    if risk_sized {
        println!("{}", sizing_line(&r["grid"]["sizing"]));
    }
    print_notes(r);
    let shown: Vec<(&str, &str)> = PARAM_HEADS
        .iter()
        .copied()
        .filter(|(key, _)| swept.contains(key))
        .collect();
    let mut lines: Vec<Vec<String>> = vec![
        std::iter::once("#".to_owned())
            .chain(shown.iter().map(|(_, head)| (*head).to_owned()))
            .chain(
                [
                    "return%", "annual%", "maxDD%", "Sharpe", "win%", "PF", "trades", "turnover",
                ]
                .map(String::from),
            )
            .chain(risk_sized.then(|| "held back".to_owned()))
            .collect(),
    ];
    for (i, row) in rows.iter().enumerate() {
        let m = &row["metrics"];
        let mark = if best == Some(i) { "*" } else { "" };
        lines.push(
            std::iter::once(format!("{mark}{}", i + 1))
                .chain(shown.iter().map(|(key, _)| param(row, key)))
                .chain([
                    f(&m["total_return_pct"], 2),
                    f(&m["annualized_return_pct"], 2),
                    f(&m["max_drawdown_pct"], 2),
                    f(&m["sharpe"], 2),
                    f(&m["win_rate_pct"], 1),
                    f(&m["profit_factor"], 2),
                    m["trades"].to_string(),
                    f(&m["turnover"], 2),
                ])
                .chain(risk_sized.then(|| {
                    let held = held_back(&row["skipped_entries"]);
                    if held.is_empty() {
                        "-".to_owned()
                    } else {
                        held
                    }
                }))
                .collect(),
        );
    }
    println!();
    for line in table(&lines) {
        println!("{line}");
    }
    println!();
    let Some(b) = best else {
        println!("best: no combination has a {best_by} value (no trades, or no losing trade)");
        return;
    };
    let row = &rows[b];
    let described: Vec<String> = shown
        .iter()
        .map(|(key, head)| format!("{head} {}", param(row, key)))
        .collect();
    println!(
        "best #{} by {best_by}: {}  —  return {}%, Sharpe {}, max drawdown {}%",
        b + 1,
        described.join("  ·  "),
        f(&row["metrics"]["total_return_pct"], 2),
        f(&row["metrics"]["sharpe"], 2),
        f(&row["metrics"]["max_drawdown_pct"], 2),
    );
    let st = &r["stability"];
    if !st.is_null() {
        println!(
            "stability {} (0 = its neighbours do as badly as the worst combination, 1 = as well as the best): {} neighbours, {best_by} mean {}, worst {}; worst of all {}",
            f(&st["score"], 2),
            st["neighbours"].as_array().map_or(0, Vec::len),
            f(&st["neighbour_mean"], 2),
            f(&st["neighbour_worst"], 2),
            f(&st["grid_worst"], 2),
        );
    }
    match r["benchmark"]["return_pct"].as_f64() {
        Some(x) => println!(
            "benchmark {} {x:.2}%",
            r["benchmark"]["code"].as_str().unwrap_or("")
        ),
        None => println!(
            "benchmark: {}",
            r["benchmark"]["note"].as_str().unwrap_or("unavailable")
        ),
    }
}

fn print_walk_forward(r: &Value) {
    let grid = &r["grid"];
    let swept: Vec<(&str, &str)> = PARAM_HEADS
        .iter()
        .copied()
        .filter(|(key, _)| grid[*key].as_array().is_some_and(|a| a.len() > 1))
        .collect();
    let spec = &r["spec"];
    let best_by = r["best_by"].as_str().unwrap_or("");
    println!(
        "{}  ·  {} trading days  ·  walk-forward in-sample {} / out-of-sample {} / step {}  ·  {} combinations  ·  best in sample by {best_by}",
        r["period"].as_str().unwrap_or(""),
        r["trading_days"],
        spec["in_sample"],
        spec["out_of_sample"],
        spec["step"],
        r["combinations"],
    );
    if grid["sizing"]["type"] == "risk" {
        println!("{}", sizing_line(&grid["sizing"]));
    }
    let mut lines: Vec<Vec<String>> = vec![
        ["#", "in sample", "out of sample"]
            .into_iter()
            .map(String::from)
            .chain(swept.iter().map(|(_, head)| (*head).to_owned()))
            .chain([
                format!("IS {best_by}"),
                "IS return%".into(),
                "OOS return%".into(),
                "OOS Sharpe".into(),
                "OOS maxDD%".into(),
                "OOS trades".into(),
            ])
            .collect(),
    ];
    for w in r["windows"].as_array().into_iter().flatten() {
        let span = |a: &str, b: &str| {
            format!(
                "{}~{}",
                w[a].as_str().unwrap_or(""),
                w[b].as_str().unwrap_or("")
            )
        };
        let partial = if w["partial"] == true { "*" } else { "" };
        let oos = &w["out_of_sample"];
        lines.push(
            [
                w["index"].to_string(),
                span("in_sample_start", "in_sample_end"),
                format!(
                    "{}{partial}",
                    span("out_of_sample_start", "out_of_sample_end")
                ),
            ]
            .into_iter()
            .chain(swept.iter().map(|(key, _)| {
                if w["chosen"].is_null() {
                    "--".to_owned()
                } else {
                    param(&w["chosen"], key)
                }
            }))
            .chain([
                f(&w["in_sample_metric"], 2),
                f(&w["in_sample"]["total_return_pct"], 2),
                f(&oos["total_return_pct"], 2),
                f(&oos["sharpe"], 2),
                f(&oos["max_drawdown_pct"], 2),
                if oos.is_null() {
                    "--".to_owned()
                } else {
                    oos["trades"].to_string()
                },
            ])
            .collect(),
        );
    }
    println!();
    for line in table(&lines) {
        println!("{line}");
    }
    println!();
    if r["windows"]
        .as_array()
        .is_some_and(|ws| ws.iter().any(|w| w["partial"] == true))
    {
        println!("* the last out-of-sample window is shorter: the period ended");
    }
    let v = &r["verdict"];
    println!(
        "out of sample chained: return {}%, annualised {}%  ·  in sample (the choices, mean annualised) {}%  ·  efficiency {}",
        f(&v["out_of_sample_return_pct"], 2),
        f(&v["out_of_sample_annualized_pct"], 2),
        f(&v["in_sample_annualized_pct"], 2),
        f(&v["efficiency"], 2),
    );
    println!("verdict: {}", v["text"].as_str().unwrap_or(""));
    print_notes(r);
}

pub fn run(a: BacktestArgs) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let bar = spinner();
    let result = rt.block_on(async {
        let desk = desk().await?;
        // Values go to the tool as written: it parses lists and ranges (and says what is
        // wrong with them) for the agent and the CLI alike.
        let args = json!({
            "start": a.start, "end": a.end, "hold_days": a.hold_days, "top_n": a.top_n,
            "board": a.board, "stop_loss_pct": a.stop_loss, "take_profit_pct": a.take_profit,
            "entry_price_mode": a.entry, "triggers": a.triggers, "best_by": a.best_by,
            "walk_forward": a.walk_forward, "sizing": a.sizing, "risk_pct": a.risk_pct,
        });
        let show = crate::screen::spinner_progress(&bar);
        let tested = desk.backtest(&args, &show).await;
        desk.close().await;
        anyhow::Ok(tested)
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let value = match result {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return Ok(tool_failure(e)),
        Err(e) => return Ok(failed(e)),
    };
    if a.json {
        print_json(&value)?;
    } else if value["kind"] == "walk_forward" {
        print_walk_forward(&value);
    } else if value["kind"] == "sweep" {
        print_sweep(&value);
    } else {
        print_text(&value);
    }
    Ok(ExitCode::SUCCESS)
}
