//! `wyckoff screen`: the whole-market funnel over the local cache, without any LLM — the
//! same code as the `screen_stocks` tool. Progress on stderr when it is a terminal.
//! Exit status: 0 ok, 1 no data / failure, 2 bad input.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};

use crate::market::{desk, failed, print_json, runtime, tool_failure};

#[derive(Debug, clap::Args)]
pub struct ScreenArgs {
    /// all, main, chinext, star or bse.
    #[arg(long, default_value = "all")]
    pub board: String,
    /// Screen as of this close (YYYY-MM-DD or YYYYMMDD); default the newest cached day.
    #[arg(long, value_name = "DATE")]
    pub as_of: Option<String>,
    /// Scan the N most liquid stocks (at most 3000); 0 = the whole board.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub limit: i64,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Save the run with its candidates for forward tracking (`wyckoff track`).
    #[arg(long)]
    pub save: bool,
}

/// A spinner on stderr for a terminal; nothing otherwise (scripts read stdout).
pub fn spinner() -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed:>3} {msg}") {
        bar.set_style(style);
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    Some(bar)
}

/// The spinner's message follows the tool's progress (nothing shown without a terminal).
pub fn spinner_progress(
    bar: &Option<ProgressBar>,
) -> wyckoff_session::domain::agent::ProgressHandle {
    match bar.clone() {
        Some(b) => wyckoff_session::domain::agent::ProgressHandle::new(move |p| {
            b.set_message(format!("{} {}", p.stage, p.detail));
        }),
        None => wyckoff_session::domain::agent::ProgressHandle::silent(),
    }
}

fn num(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Null => "--".into(),
        other => other.to_string(),
    }
}

fn print_text(r: &Value) {
    let regime = &r["regime"];
    println!(
        "as of {}  ·  universe {}  ·  水温 {}  ·  new buys {}  ·  data {}",
        num(&r["as_of"]),
        num(&r["universe_size"]),
        num(&regime["regime"]["regime"]),
        if regime["new_buy_allowed"] == true {
            "allowed"
        } else {
            "blocked"
        },
        num(&r["data_quality"]["status"]),
    );
    if let Some(reason) = regime["reason"].as_str() {
        println!("  {reason}");
    }
    for l in r["layers"].as_array().into_iter().flatten() {
        let note = l["note"]
            .as_str()
            .map(|n| format!("  ({n})"))
            .unwrap_or_default();
        println!(
            "  {:<3} {:>5} → {:<5}{note}",
            num(&l["layer"]),
            num(&l["input"]),
            num(&l["passed"])
        );
    }
    let cands = r["candidates"].as_array().cloned().unwrap_or_default();
    println!("\n{} candidates", cands.len());
    if !cands.is_empty() {
        println!(
            "{:<7} {:<10} {:<18} {:<22} {:>6} {:>8} {:<10} {:<9} {:<14}",
            "code", "name", "channel", "triggers", "score", "close", "bars", "weekly", "60m"
        );
    }
    for c in &cands {
        let triggers: Vec<String> = c["triggers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| num(&t["kind"]))
            .collect();
        println!(
            "{:<7} {:<10} {:<18} {:<22} {:>6} {:>8} {:<10} {:<9} {:<14}",
            num(&c["code"]),
            num(&c["name"]),
            num(&c["channel"]),
            triggers.join("+"),
            num(&c["score"]),
            num(&c["last_close"]),
            num(&c["bars_as_of"]),
            c["weekly"]["trend"].as_str().unwrap_or("-"),
            num(&c["intraday_60m"]["type"]),
        );
    }
    // The risk rules' suggested size of each candidate (a screen of today only).
    let sized: Vec<String> = cands
        .iter()
        .filter_map(|c| {
            let z = &c["suggested_size"];
            if z.is_null() {
                return None;
            }
            let breaks: Vec<String> = z["breaches"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|b| num(&b["type"]))
                .collect();
            let size = match z["sizing"]["shares"].as_u64() {
                Some(0) => format!("no lot fits ({})", num(&z["sizing"]["why_none"])),
                Some(n) => format!(
                    "{n} shares, risk {:.2} yuan ({}%) to the stop {:.2}",
                    z["sizing"]["risk_fen"].as_f64().unwrap_or(0.0) / 100.0,
                    num(&z["sizing"]["risk_pct"]),
                    z["sizing"]["stop_e6"].as_f64().unwrap_or(0.0) / 1e6,
                ),
                None => format!("none: {}", num(&z["unavailable"])),
            };
            Some(if breaks.is_empty() {
                format!("  {} {size}", num(&c["code"]))
            } else {
                format!("  {} {size}; breaks {}", num(&c["code"]), breaks.join(", "))
            })
        })
        .collect();
    if !sized.is_empty() {
        println!(
            "
suggested sizes (the risk rules in Settings):"
        );
        for line in sized {
            println!("{line}");
        }
    }
    if let Some(n) = r["suggested_size_note"].as_str() {
        println!(
            "
note: {n}"
        );
    }
    let skipped = r["skipped"].as_array().map(Vec::len).unwrap_or(0);
    if skipped > 0 {
        println!(
            "\n{skipped} stocks skipped (missing, stale or corrupt data): {}",
            r["skipped_counts"]
        );
    }
    for w in r["data_quality"]["warnings"]
        .as_array()
        .into_iter()
        .flatten()
    {
        println!("warning: {}", num(w));
    }
}

pub fn run(a: ScreenArgs) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let bar = spinner();
    let result = rt.block_on(async {
        let desk = desk().await?;
        let args = json!({"board": a.board, "limit": a.limit, "as_of": a.as_of});
        let show = spinner_progress(&bar);
        let screened = desk.screen(&args, &show).await;
        let saved = match (&screened, a.save) {
            (Ok((result, _)), true) => desk
                .save_screen(result, wyckoff_session::domain::track::Origin::Cli)
                .await
                .context("saving the screen for tracking"),
            _ => Ok(None),
        };
        desk.close().await;
        let saved = saved?;
        anyhow::Ok(screened.map(|(_, mut v)| {
            if let Some(id) = saved {
                v["tracked_screen_id"] = json!(id);
            }
            (v, saved)
        }))
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let result = match result {
        Ok(r) => r,
        Err(e) => return Ok(failed(e)),
    };
    let (value, saved) = match result {
        Ok(v) => v,
        Err(e) => return Ok(tool_failure(e)),
    };
    let _output = tracing::info_span!(target: "wyckoff::stage", "output");
    if a.json {
        print_json(&value)?;
    } else {
        print_text(&value);
        if let Some(id) = saved {
            println!("\nsaved for tracking as screen #{id} (see `wyckoff track`)");
        }
    }
    Ok(ExitCode::SUCCESS)
}
