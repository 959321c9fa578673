//! `wyckoff market map [--as-of DATE] [--days N] [--json]`: what the `get_market_map` tool
//! returns — the day's limit counts, the 连板 ladder, 涨停溢价 and the seal rate — without an
//! LLM; with `--days`, the same figures for each of the last N trading days (the series the
//! app's map page draws).

use std::process::ExitCode;

use clap::Args;

use crate::market::{EXIT_BAD_INPUT, desk, failed, print_json, runtime, tool_failure};

/// Stocks of the ladder printed in text (the JSON has them all).
const LADDER_LINES: usize = 20;

#[derive(Debug, Args)]
pub struct MapArgs {
    /// The trading day (YYYY-MM-DD or YYYYMMDD); the newest cached day when omitted, the
    /// last trading day before it for a day without trading.
    #[arg(long)]
    pub as_of: Option<String>,
    /// The limit statistics of each of the last N trading days up to that day (1 to 250)
    /// and the industries' rotation trails, instead of one day's map.
    #[arg(long)]
    pub days: Option<u32>,
    /// Print the typed report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "--".into(), |v| format!("{v:+.2}%"))
}

pub fn run(a: MapArgs) -> anyhow::Result<ExitCode> {
    let as_of = match a.as_of.as_deref() {
        Some(d) => match wyckoff_session::domain::market::date::parse_date(d) {
            Some(d) => Some(d),
            None => {
                eprintln!("wyckoff: --as-of must be a real date such as 2020-06-16, not {d:?}");
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
        },
        None => None,
    };
    if let Some(days) = a.days {
        return run_series(as_of, days, a.json);
    }
    let rt = runtime()?;
    let result = rt.block_on(async {
        let desk = desk().await?;
        let map = desk.market_map(as_of).await;
        desk.close().await;
        anyhow::Ok(map)
    });
    let map = match result {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => return Ok(tool_failure(e)),
        Err(e) => return Ok(failed(e)),
    };
    if a.json {
        print_json(&map)?;
        return Ok(ExitCode::SUCCESS);
    }
    let l = &map.limits;
    println!("market map {} ({} stocks)", map.trade_date, l.stocks);
    println!(
        "limit-up {}  limit-down {}  failed {}  one-price up {}  one-price down {}",
        l.limit_up, l.limit_down, l.failed, l.one_price_up, l.one_price_down
    );
    println!(
        "seal rate {}  premium {} (of {})  highest board {}",
        l.seal_rate
            .map_or_else(|| "--".into(), |r| format!("{:.1}%", r * 100.0)),
        pct(l.premium_pct),
        l.premium_stocks,
        l.highest_board
    );
    if !l.ladder.is_empty() {
        println!("\n{:>6}  {:<8} name", "boards", "code");
        for s in l.ladder.iter().take(LADDER_LINES) {
            println!(
                "{:>6}  {:<8} {}{}{}",
                s.boards,
                s.code,
                s.name,
                if s.one_price { "  一字" } else { "" },
                if s.name_known { "" } else { "  (today's name)" }
            );
        }
        if l.ladder.len() > LADDER_LINES {
            println!("… and {} more", l.ladder.len() - LADDER_LINES);
        }
    }
    if let Some(sec) = &map.sectors {
        println!(
            "\n{:<12} {:>4} {:>8} {:>8} {:>7} {:>7} {:>4} {:<10} leaders",
            "industry", "n", "rel 5d", "rel 20d", ">MA20", "amount", "涨停", "rotation"
        );
        for r in &sec.rows {
            let leaders: Vec<String> = r
                .leaders
                .iter()
                .map(|l| format!("{} {:+.1}%", l.name, l.change_pct))
                .collect();
            println!(
                "{:<12} {:>4} {:>8} {:>8} {:>7} {:>7} {:>4} {:<10} {}",
                r.industry,
                r.members,
                pct(r.relative_short_pct),
                pct(r.relative_long_pct),
                r.breadth_pct
                    .map_or_else(|| "--".into(), |b| format!("{b:.0}%")),
                r.amount_share_pct
                    .map_or_else(|| "--".into(), |a| format!("{a:.1}%")),
                r.limit_up.map_or_else(|| "--".into(), |n| n.to_string()),
                r.rotation
                    .map_or_else(|| "--".into(), |x| format!("{x:?}").to_lowercase()),
                leaders.join(", ")
            );
        }
    }
    for n in &map.notes {
        println!("note: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `--days N`: one line of limit figures a trading day, oldest first.
fn run_series(as_of: Option<u32>, days: u32, json: bool) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let result = rt.block_on(async {
        let desk = desk().await?;
        let days = usize::try_from(days).unwrap_or(usize::MAX);
        let series = desk.market_map_series(as_of, days).await;
        desk.close().await;
        anyhow::Ok(series)
    });
    let series = match result {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Ok(tool_failure(e)),
        Err(e) => return Ok(failed(e)),
    };
    if json {
        print_json(&series)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "market map, {} trading days to {}",
        series.limits.len(),
        series.trade_date
    );
    println!(
        "{:<10} {:>6} {:>5} {:>5} {:>5} {:>5} {:>6} {:>8} {:>5}",
        "date", "stocks", "up", "down", "fail", "1-up", "seal", "premium", "board"
    );
    for l in &series.limits {
        println!(
            "{:<10} {:>6} {:>5} {:>5} {:>5} {:>5} {:>6} {:>8} {:>5}",
            wyckoff_session::domain::market::date::iso(l.date),
            l.stocks,
            l.limit_up,
            l.limit_down,
            l.failed,
            l.one_price_up,
            l.seal_rate
                .map_or_else(|| "--".into(), |r| format!("{:.1}%", r * 100.0)),
            pct(l.premium_pct),
            l.highest_board
        );
    }
    for n in &series.notes {
        println!("note: {n}");
    }
    Ok(ExitCode::SUCCESS)
}
