//! `wyckoff backtest`: the funnel strategy replayed over the local cache under A-share
//! rules, without any LLM — the same code as the `run_backtest` tool. Progress on stderr
//! when it is a terminal. Exit status: 0 ok, 1 no data / failure, 2 bad input.

use std::process::ExitCode;

use serde_json::{Value, json};

use crate::market::{failed, open, print_json, runtime, tool_failure};
use crate::screen::spinner;

#[derive(Debug, clap::Args)]
pub struct BacktestArgs {
    /// First day (YYYY-MM-DD or YYYYMMDD); default 180 days ago.
    #[arg(long, value_name = "DATE")]
    pub start: Option<String>,
    /// Last day; default yesterday.
    #[arg(long, value_name = "DATE")]
    pub end: Option<String>,
    /// Trading days to hold (1–60).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub hold_days: i64,
    /// Candidates bought a day, and portfolio slots (0–20).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub top_n: i64,
    /// all, main, chinext, star or bse.
    #[arg(long, default_value = "all")]
    pub board: String,
    /// Stop-loss in percent (≤ 0), e.g. -8.
    #[arg(long, value_name = "PCT", default_value_t = -8.0, allow_negative_numbers = true)]
    pub stop_loss: f64,
    /// Take-profit in percent (≥ 0); 0 = none.
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub take_profit: f64,
    /// open = the next day's open after the signal; close = the signal day's close.
    #[arg(long, value_name = "open|close", default_value = "open")]
    pub entry: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

fn f(v: &Value, dp: usize) -> String {
    v.as_f64()
        .map(|x| format!("{x:.dp$}"))
        .unwrap_or_else(|| "--".into())
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

pub fn run(a: BacktestArgs) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let bar = spinner();
    let result = rt.block_on(async {
        let md = open().await?;
        let args = json!({
            "start": a.start, "end": a.end, "hold_days": a.hold_days, "top_n": a.top_n,
            "board": a.board, "stop_loss_pct": a.stop_loss, "take_profit_pct": a.take_profit,
            "entry_price_mode": a.entry,
        });
        let show = crate::screen::spinner_progress(&bar);
        anyhow::Ok(wyckoff_tools::backtest::run(&md, &args, &show).await)
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
    } else {
        print_text(&value);
    }
    Ok(ExitCode::SUCCESS)
}
