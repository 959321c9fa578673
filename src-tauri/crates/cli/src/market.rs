//! `wyckoff market [--json]`: what the `get_market_overview` tool returns, without an LLM.
//! Also the data-home helpers the commands share.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde_json::Value;
use wyckoff_session::domain::agent::ToolError;
use wyckoff_session::{Desk, DeskOptions};

/// Exit status for "the data asked for is not available".
pub const EXIT_UNAVAILABLE: u8 = 1;
/// Exit status for bad input (unknown code format, bad date).
pub const EXIT_BAD_INPUT: u8 = 2;

/// A single-threaded runtime: the commands do one thing at a time.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The desk of a command that reads or writes the data home's stores (alerts, tracking,
/// chart notes, the journal, push, conversations, memory), asks it for the agent's market
/// work (analyze, screen, backtest, the market overview) or serves its market data to
/// other agents: settings resolved, `wyckoff.db` migrated and every store built as the
/// app and `wyckoff run` do. Close it with [`Desk::close`] when the command is done.
pub async fn desk() -> anyhow::Result<Arc<Desk>> {
    let desk = Desk::open(DeskOptions::from_env()).await?;
    for note in desk.settings_notes() {
        eprintln!("wyckoff: settings: {note}");
    }
    Ok(desk)
}

/// A failure that is not the user's input (data home, configuration, database): exit 1,
/// so that status 2 always means "fix the command line".
pub fn failed(e: anyhow::Error) -> ExitCode {
    eprintln!("wyckoff: {e:#}");
    ExitCode::from(EXIT_UNAVAILABLE)
}

/// Prints a tool error and maps it to an exit status.
pub fn tool_failure(e: ToolError) -> ExitCode {
    eprintln!("wyckoff: {e}");
    match e {
        ToolError::InvalidArgs(_) => ExitCode::from(EXIT_BAD_INPUT),
        _ => ExitCode::from(EXIT_UNAVAILABLE),
    }
}

/// Pretty JSON on stdout; a closed pipe (`| head`) is not an error.
pub fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    use std::io::Write;
    let text = serde_json::to_string_pretty(v)?;
    match writeln!(std::io::stdout().lock(), "{text}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn s(v: &Value) -> String {
    match v {
        Value::Null => "--".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub fn run(json: bool) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let result = rt.block_on(async {
        let desk = desk().await?;
        let overview = desk.market_overview().await;
        desk.close().await;
        anyhow::Ok(overview)
    });
    let result = match result {
        Ok(r) => r,
        Err(e) => return Ok(failed(e)),
    };
    let v = match result {
        Ok(v) => v,
        Err(e) => return Ok(tool_failure(e)),
    };
    let unavailable = wyckoff_session::reports::is_unavailable(&v);
    if json {
        print_json(&v)?;
    } else if unavailable {
        eprintln!("wyckoff: market overview unavailable: {}", s(&v["reason"]));
    } else {
        println!(
            "{:<10} {:>10} {:>8}  {:<10}  {:<7}  source",
            "index", "close", "chg%", "date", "status"
        );
        if let Some(indices) = v["indices"].as_object() {
            for (name, i) in indices {
                println!(
                    "{:<10} {:>10} {:>8}  {:<10}  {:<7}  {}",
                    name,
                    s(&i["close"]),
                    s(&i["pct_chg"]),
                    s(&i["trade_date"]),
                    s(&i["data_status"]),
                    s(&i["source"])
                );
            }
        }
        println!(
            "\ndata as of {}, status {}",
            s(&v["as_of"]),
            s(&v["data_status"])
        );
        if let Some(r) = v["reason"].as_str() {
            println!("note: {r}");
        }
    }
    Ok(if unavailable {
        ExitCode::from(EXIT_UNAVAILABLE)
    } else {
        ExitCode::SUCCESS
    })
}
