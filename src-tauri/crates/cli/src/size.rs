//! `wyckoff size CODE`: how many shares one buy may take by its risk — the `size_position`
//! tool's answer, through the desk, without an LLM. Equity and cash come from the account
//! ledger (its latest NAV and cash) unless given. Exit status: 0 ok (also when the answer
//! is no shares, which it says why), 1 no data, 2 bad input.

use std::process::ExitCode;

use serde_json::json;
use wyckoff_session::reports::{
    EntrySource, FigureSource, PositionSize, SizingCap, StopChoice, StopSource,
};

use crate::market::{desk, failed, print_json, runtime, tool_failure};

#[derive(Debug, clap::Args)]
pub struct SizeArgs {
    /// A-share code: 600519, 600519.SH or sh600519.
    pub code: String,
    /// Equity in yuan; default the account ledger's latest NAV.
    #[arg(long, value_name = "YUAN")]
    pub equity: Option<f64>,
    /// Cash in yuan; default the ledger's cash (the equity, when --equity is given).
    #[arg(long, value_name = "YUAN")]
    pub cash: Option<f64>,
    /// Percent of equity lost at the stop, both sides' fees included (default: Settings'
    /// risk per trade, 1 unless changed).
    #[arg(long, value_name = "PCT")]
    pub risk_pct: Option<f64>,
    /// The most one position may cost, percent of equity, the shares already held
    /// included (default: Settings' largest position, 20 unless changed).
    #[arg(long, value_name = "PCT")]
    pub max_position_pct: Option<f64>,
    /// Shares of the stock already held, counted against the position cap; default the
    /// ledger's holding when the equity comes from the ledger, else none.
    #[arg(long, value_name = "N")]
    pub held_shares: Option<u64>,
    /// Entry price in yuan; default the last cached close.
    #[arg(long, value_name = "PRICE")]
    pub entry: Option<f64>,
    /// Stop price in yuan, under the entry; default the tighter of the structure's stop
    /// (the latest Spring or LPS low, else support) and entry − k × ATR14.
    #[arg(long, value_name = "PRICE", conflicts_with_all = ["atr_k", "stop_from"])]
    pub stop: Option<f64>,
    /// The ATR multiple of the stop (default 2).
    #[arg(long, value_name = "K")]
    pub atr_k: Option<f64>,
    /// tighter (default), structure or atr.
    #[arg(long, value_name = "RULE")]
    pub stop_from: Option<String>,
    /// Print the typed result as JSON.
    #[arg(long)]
    pub json: bool,
}

fn yuan(fen: i64) -> String {
    let sign = if fen < 0 { "-" } else { "" };
    let a = fen.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

fn price(e6: i64) -> String {
    let fen = e6 / 10_000;
    if e6 % 10_000 == 0 {
        yuan(fen)
    } else {
        format!("{:.4}", e6 as f64 / 1e6)
    }
}

fn pct_bp(bp: u32) -> String {
    format!("{}%", f64::from(bp) / 100.0)
}

fn stop_text(s: &StopChoice) -> String {
    let source = |src: &StopSource| match src {
        StopSource::Given => "given".to_owned(),
        StopSource::Spring { date } => format!("Spring low of {date}"),
        StopSource::Lps { date } => format!("LPS low of {date}"),
        StopSource::Support => "the range's support".to_owned(),
        StopSource::TradingRange => "the trading range's support".to_owned(),
        StopSource::Atr { atr_e6, k } => format!("{k} × ATR14 {}", price(*atr_e6)),
    };
    let mut line = format!(
        "stop {} ({})",
        price(s.chosen.stop_e6),
        source(&s.chosen.source)
    );
    let others: Vec<String> = s
        .considered
        .iter()
        .filter(|c| **c != s.chosen)
        .map(|c| format!("{} ({})", price(c.stop_e6), source(&c.source)))
        .collect();
    if !others.is_empty() {
        line.push_str(&format!("; looser: {}", others.join(", ")));
    }
    line
}

fn cap_text(c: &SizingCap) -> String {
    match c {
        SizingCap::Regime {
            regime,
            scale_pct,
            budget_fen,
            shares,
        } => format!(
            "水温 {}: risk budget ×{scale_pct}% = {} → {shares} shares",
            regime.as_str(),
            yuan(*budget_fen)
        ),
        SizingCap::Cash { cash_fen, shares } => {
            format!("cash {} → {shares} shares", yuan(*cash_fen))
        }
        SizingCap::PositionBudget {
            max_position_bp,
            held_value_fen,
            budget_fen,
            shares,
        } if *held_value_fen > 0 => format!(
            "position budget {} of equity less {} held = {} → {shares} shares",
            pct_bp(*max_position_bp),
            yuan(*held_value_fen),
            yuan(*budget_fen)
        ),
        SizingCap::PositionBudget {
            max_position_bp,
            budget_fen,
            shares,
            ..
        } => format!(
            "position budget {} of equity = {} → {shares} shares",
            pct_bp(*max_position_bp),
            yuan(*budget_fen)
        ),
    }
}

fn source_text(s: &FigureSource) -> String {
    match s {
        FigureSource::Given => "given".to_owned(),
        FigureSource::Ledger { date: Some(d) } => format!("ledger NAV on {d}"),
        FigureSource::Ledger { date: None } => "ledger".to_owned(),
        FigureSource::Equity => "the equity given".to_owned(),
    }
}

fn print_text(p: &PositionSize) {
    let z = &p.sizing;
    let entry = match &p.entry_source {
        EntrySource::Given => "given".to_owned(),
        EntrySource::LastClose { date } => format!("close of {date}"),
    };
    println!(
        "{} {}  ·  board {}  ·  lot {} then steps of {}",
        p.code,
        p.name,
        p.board.as_str(),
        z.lot.minimum,
        z.lot.step
    );
    println!(
        "entry {} ({entry})  ·  {}",
        price(z.entry_e6),
        stop_text(&p.stop)
    );
    println!(
        "equity {} ({})  ·  cash {} ({})  ·  risk {} = {}  ·  水温 {}",
        yuan(z.equity_fen),
        source_text(&p.equity_source),
        yuan(z.cash_fen),
        source_text(&p.cash_source),
        pct_bp(z.risk_bp),
        yuan(z.risk_budget_fen),
        p.regime.map_or("not applied", |r| r.as_str()),
    );
    if z.held_value_fen > 0 {
        println!(
            "held {} shares worth {} at the entry, counted against the position budget",
            p.held_shares,
            yuan(z.held_value_fen)
        );
    }
    println!(
        "buy {} shares  ·  cost {} (fees {})  ·  risk at the stop {} ({:.2}% of equity, fees included)",
        z.shares,
        yuan(z.cost_fen),
        yuan(z.buy_fees_fen),
        yuan(z.risk_fen),
        z.risk_pct
    );
    if z.bound.is_empty() {
        println!("bound by: the risk budget ({} shares)", z.risk_shares);
    } else {
        println!(
            "bound by: {} (the risk budget alone: {} shares)",
            z.bound.iter().map(cap_text).collect::<Vec<_>>().join("; "),
            z.risk_shares
        );
    }
    if let Some(why) = &p.why_none {
        println!("no buy: {why}");
    }
    for n in &p.freshness.notes {
        println!("note: {n}");
    }
}

pub fn run(a: SizeArgs) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let result = rt.block_on(async {
        let desk = desk().await?;
        let args = json!({
            "code": a.code, "equity": a.equity, "cash": a.cash, "risk_pct": a.risk_pct,
            "max_position_pct": a.max_position_pct, "entry": a.entry, "stop": a.stop,
            "atr_k": a.atr_k, "stop_from": a.stop_from, "held_shares": a.held_shares,
        });
        let sized = desk.size_position(&args).await;
        desk.close().await;
        anyhow::Ok(sized)
    });
    let sized = match result {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Ok(tool_failure(e)),
        Err(e) => return Ok(failed(e)),
    };
    if a.json {
        print_json(&sized)?;
    } else {
        print_text(&sized);
    }
    Ok(ExitCode::SUCCESS)
}
