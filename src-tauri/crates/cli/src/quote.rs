//! `wyckoff quote CODE…`: live snapshot quotes (Tencent, Eastmoney as the fallback) with
//! each stock's partial bar of the day, through the desk. A quote is never written to the
//! daily cache. Exit status: 0 every code quoted, 1 no source answered (or offline), 2 a
//! bad code or one no source knows.

use std::process::ExitCode;

use wyckoff_session::desk_quotes::{IntradayOutcome, LiveQuote, QuoteError, QuoteView};
use wyckoff_session::domain::alerts::describe;

use crate::market::{EXIT_BAD_INPUT, EXIT_UNAVAILABLE, desk, print_json, runtime};

#[derive(Debug, clap::Args)]
pub struct QuoteArgs {
    /// A-share codes: 600519, 600519.SH or sh600519.
    #[arg(required = true, value_name = "CODE")]
    pub codes: Vec<String>,
    /// Print the quotes as JSON.
    #[arg(long)]
    pub json: bool,
}

fn price(e6: i64) -> String {
    if e6 <= 0 {
        "--".into()
    } else {
        format!("{:.2}", e6 as f64 / 1e6)
    }
}

fn line(q: &LiveQuote) -> String {
    let quote = &q.quote;
    let change = quote
        .change_pct()
        .map_or_else(|| "--".to_owned(), |c| format!("{c:+.2}%"));
    let bar = match &q.partial {
        Some(p) => format!(
            "partial · {}: open {} high {} low {} vol {} amount {:.0}",
            p.time,
            price(p.open_e6),
            price(p.high_e6),
            price(p.low_e6),
            p.volume,
            p.amount_fen as f64 / 100.0
        ),
        None => "no trade yet today".into(),
    };
    format!(
        "{} {}  {} {change} (prev {})  {bar}  [{} {}]",
        quote.code,
        quote.name,
        price(quote.last_e6),
        price(quote.prev_close_e6),
        quote.source,
        quote.time
    )
}

fn print_text(view: &QuoteView) {
    for q in &view.quotes {
        println!("{}", line(q));
    }
    for f in &view.failed {
        eprintln!("wyckoff: {} failed, fell back: {}", f.source, f.error);
    }
}

pub fn run(args: QuoteArgs) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    Ok(rt.block_on(async move {
        let desk = match desk().await {
            Ok(d) => d,
            Err(e) => return crate::market::failed(e),
        };
        let result = desk.quotes(&args.codes).await;
        desk.close().await;
        match result {
            Ok(view) => {
                if args.json {
                    if let Err(e) = print_json(&view) {
                        return crate::market::failed(e);
                    }
                } else {
                    print_text(&view);
                }
                if view.unknown.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    eprintln!("wyckoff: no quote source knows {}", view.unknown.join(", "));
                    ExitCode::from(EXIT_BAD_INPUT)
                }
            }
            Err(e @ (QuoteError::BadCode { .. } | QuoteError::NoCodes)) => {
                eprintln!("wyckoff: {e}");
                ExitCode::from(EXIT_BAD_INPUT)
            }
            Err(e) => {
                eprintln!("wyckoff: {e}");
                ExitCode::from(EXIT_UNAVAILABLE)
            }
        }
    }))
}

/// What a daemon pass's intraday alerts check did, when it ran: one JSON object
/// `{"intraday": …}` a line, or a line of text per fired alert.
pub fn print_intraday(outcome: Option<&IntradayOutcome>, json: bool) -> anyhow::Result<()> {
    let Some(IntradayOutcome::Ran { run }) = outcome else {
        return Ok(());
    };
    if json {
        println!(
            "{}",
            serde_json::to_string(&serde_json::json!({ "intraday": run }))?
        );
        return Ok(());
    }
    println!(
        "intraday alerts at {} Beijing: {} stocks quoted, {} fired, {} held back by cooldown",
        run.at,
        run.quoted.len(),
        run.report.fired.len(),
        run.report.suppressed.len()
    );
    for alert in &run.report.fired {
        println!("  {}", describe::alert_text(alert));
    }
    for f in &run.failed_sources {
        eprintln!("wyckoff: quote source failed, fell back: {f}");
    }
    Ok(())
}
