//! `wyckoff analyze CODE`: prints what the `analyze_stock` tool returns, without an LLM.
//! `--as-of` replays the tape as it stood at that close; `--cost`/`--buy-dt` describe a
//! holding. Exit status: 0 ok, 1 no data available, 2 bad input.

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::market::{
    EXIT_BAD_INPUT, EXIT_UNAVAILABLE, desk, failed, print_json, runtime, tool_failure,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Wyckoff health diagnosis.
    Diagnose,
    /// Recent daily bars.
    Price,
}

#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    /// A-share code: 600519, 600519.SH or sh600519.
    pub code: String,
    /// Print the tool's JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Analyse only bars up to this close (YYYY-MM-DD or YYYYMMDD).
    #[arg(long, value_name = "DATE")]
    pub as_of: Option<String>,
    /// Cost price of a holding (diagnose).
    #[arg(long, value_name = "PRICE")]
    pub cost: Option<f64>,
    /// Entry date of a holding; exit signals look only at bars from it on.
    #[arg(long, value_name = "DATE")]
    pub buy_dt: Option<String>,
    #[arg(long, value_enum, default_value = "diagnose")]
    pub mode: Mode,
    /// Bars to show in price mode (1–250, default 30).
    #[arg(long, value_name = "N")]
    pub days: Option<i64>,
}

fn bad_input(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("wyckoff: {msg}");
    ExitCode::from(EXIT_BAD_INPUT)
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "--".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// "data as of 2020-06-16, source bundled:zvt, status stale — run `…` when online".
fn freshness_line(v: &Value, code: &str) -> String {
    let status = text(&v["data_status"]);
    let mut line = format!(
        "data as of {}, source {}, status {status}",
        text(&v["as_of"]),
        text(&v["source"])
    );
    if let Some(r) = v["requested_as_of"].as_str() {
        line.push_str(&format!(" (replay as of {r})"));
    }
    if status == "stale" {
        line.push_str(&format!(" — run `wyckoff data sync {code}` when online"));
    }
    line
}

fn notes(v: &Value) -> Vec<String> {
    v["notes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                // the freshness line already says it
                .filter(|n| !n.starts_with("data is stale"))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

pub fn run(a: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    // bad input is refused before the data home is touched
    let code = match wyckoff_session::domain::market::StockCode::parse(&a.code) {
        Ok(c) => c.digits().to_string(),
        Err(e) => return Ok(bad_input(e)),
    };
    let mut args = Map::new();
    args.insert("code".into(), json!(code));
    args.insert(
        "mode".into(),
        json!(match a.mode {
            Mode::Diagnose => "diagnose",
            Mode::Price => "price",
        }),
    );
    for (key, value) in [("as_of", &a.as_of), ("buy_dt", &a.buy_dt)] {
        if let Some(d) = value {
            if wyckoff_session::domain::market::date::parse_date(d).is_none() {
                return Ok(bad_input(format!(
                    "--{} must be a real date as YYYY-MM-DD or YYYYMMDD, got {d:?}",
                    key.replace('_', "-")
                )));
            }
            args.insert(key.into(), json!(d));
        }
    }
    if let Some(c) = a.cost {
        if !(c.is_finite() && c >= 0.0) {
            return Ok(bad_input(format!("--cost must be a price ≥ 0, got {c}")));
        }
        args.insert("cost".into(), json!(c));
    }
    if let Some(d) = a.days {
        args.insert("days".into(), json!(d));
    }
    let args = Value::Object(args);

    let rt = runtime()?;
    let result = rt.block_on(async {
        let desk = desk().await?;
        let analysed = desk.analyze(&args).await;
        desk.close().await;
        anyhow::Ok(analysed)
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
    if a.json {
        print_json(&v)?;
    } else if unavailable {
        let name = text(&v["name"]);
        eprintln!(
            "wyckoff: no daily bars for {code} {name}: {}",
            notes(&v).join("; ")
        );
    } else if a.mode == Mode::Price {
        println!(
            "{} {}  ({} bars, forward-adjusted)",
            code,
            text(&v["name"]),
            text(&v["days"])
        );
        println!(
            "{:<10} {:>9} {:>9} {:>9} {:>9} {:>14} {:>7}",
            "date", "open", "high", "low", "close", "volume", "chg%"
        );
        for r in v["data"].as_array().into_iter().flatten() {
            println!(
                "{:<10} {:>9} {:>9} {:>9} {:>9} {:>14} {:>7}",
                text(&r["date"]),
                text(&r["open"]),
                text(&r["high"]),
                text(&r["low"]),
                text(&r["close"]),
                text(&r["volume"]),
                text(&r["pct_chg"])
            );
        }
        println!("\n{}", freshness_line(&v, &code));
    } else {
        println!("{}", text(&v["formatted_text"]));
        println!("\n{}", freshness_line(&v, &code));
    }
    if !a.json && !unavailable {
        for n in notes(&v) {
            println!("note: {n}");
        }
    }
    Ok(if unavailable {
        ExitCode::from(EXIT_UNAVAILABLE)
    } else {
        ExitCode::SUCCESS
    })
}
