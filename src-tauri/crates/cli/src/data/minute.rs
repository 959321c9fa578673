//! `wyckoff data sync CODE… --period 60m` (minute bars into the cache) and the minute part
//! of `wyckoff data status`.

use std::process::ExitCode;

use serde_json::json;
use wyckoff_session::domain::market::StockCode;
use wyckoff_session::domain::market::minute::{MinutePeriod, time_label};
use wyckoff_session::domain::market::minute_sync::{
    MinuteStatus, MinuteSyncEvent, MinuteSyncOutcome, MinuteSyncStatus,
};

use crate::market::{EXIT_BAD_INPUT, EXIT_UNAVAILABLE, desk, failed, print_json, runtime};

/// `--period` as given: `day` (the daily sync) or a minute period.
pub fn parse_period(text: &str) -> Result<Option<MinutePeriod>, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" | "day" | "1d" | "d" | "daily" => Ok(None),
        other => MinutePeriod::parse(other)
            .map(Some)
            .ok_or_else(|| format!("--period {text:?} is not a period: day, 60m, 30m, 15m or 5m")),
    }
}

fn outcome_line(o: &MinuteSyncOutcome) -> String {
    match &o.status {
        MinuteSyncStatus::Updated {
            source,
            new_bars,
            fetched,
            unfinished,
            rejected,
            failed_before,
        } => {
            let mut line = format!(
                "{} {}: {new_bars} new bar(s) of {fetched} from {source}",
                o.code, o.period
            );
            if let Some(c) = &o.coverage {
                line.push_str(&format!(
                    "; cached {} .. {} ({} bars)",
                    time_label(c.first_time),
                    time_label(c.last_time),
                    c.bars
                ));
            }
            if *unfinished > 0 {
                line.push_str(&format!("; {unfinished} bar(s) still forming left out"));
            }
            if !rejected.is_empty() {
                line.push_str(&format!(
                    "; {} row(s) refused: {}",
                    rejected.len(),
                    rejected.join("; ")
                ));
            }
            for f in failed_before {
                line.push_str(&format!("; before it {f}"));
            }
            line
        }
        MinuteSyncStatus::Failed { error } => format!("{} {} FAILED: {error}", o.code, o.period),
    }
}

/// Syncs `codes` at `period`; every code is checked before anything is fetched.
pub fn sync(codes: Vec<String>, period: MinutePeriod, json: bool) -> anyhow::Result<ExitCode> {
    let mut bad = Vec::new();
    let mut wanted = Vec::new();
    for c in &codes {
        match StockCode::parse(c) {
            Ok(s) => wanted.push(s.digits().to_owned()),
            Err(e) => bad.push(e.to_string()),
        }
    }
    if codes.is_empty() {
        bad.push(format!(
            "--period {period} needs the stock codes to sync (minute bars are kept for the stocks you watch)"
        ));
    }
    if !bad.is_empty() {
        for b in bad {
            eprintln!("wyckoff: {b}");
        }
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let rt = runtime()?;
    let synced = rt.block_on(async {
        let desk = desk().await?;
        let mut progress = |ev: MinuteSyncEvent| {
            if let MinuteSyncEvent::Finished {
                outcome,
                done,
                total,
            } = ev
                && !json
            {
                eprintln!("[{done}/{total}] {}", outcome_line(&outcome));
            }
        };
        let r = desk.sync_minutes(&wanted, period, &mut progress).await;
        desk.close().await;
        anyhow::Ok(r?)
    });
    let outcomes = match synced {
        Ok(o) => o,
        Err(e) => return Ok(failed(e)),
    };
    let n_failed = outcomes
        .iter()
        .filter(|o| matches!(o.status, MinuteSyncStatus::Failed { .. }))
        .count();
    if json {
        print_json(&json!({
            "period": period,
            "outcomes": outcomes,
            "failed": n_failed,
        }))?;
    } else {
        for o in &outcomes {
            println!("{}", outcome_line(o));
        }
        println!(
            "synced {} code(s) at {period}: {} updated, {n_failed} failed",
            outcomes.len(),
            outcomes.len() - n_failed
        );
    }
    Ok(if n_failed > 0 {
        ExitCode::from(EXIT_UNAVAILABLE)
    } else {
        ExitCode::SUCCESS
    })
}

/// The minute part of `data status`.
pub fn print_status(s: &MinuteStatus) {
    if s.series.is_empty() {
        println!(
            "minute bars: none cached (wyckoff data sync CODE --period 60m; from {})",
            if s.sources.is_empty() {
                "no source: offline".to_owned()
            } else {
                s.sources.join(" → ")
            }
        );
    } else {
        println!("minute bars ({} series):", s.series.len());
        for c in &s.series {
            println!(
                "  {:<8} {:>3}  {} .. {}  {:>6} bars  {:.1} bytes/bar",
                c.code,
                c.period.label(),
                time_label(c.first_time),
                time_label(c.last_time),
                c.bars,
                f64::from(c.bytes) / f64::from(c.bars.max(1))
            );
        }
    }
    for r in &s.reach {
        println!(
            "  {} {} reaches back to {} ({} bars, through {}; asked for {} at {})",
            r.source,
            r.period.label(),
            time_label(r.earliest),
            r.bars,
            time_label(r.latest),
            r.code,
            r.asked_at
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods() {
        assert_eq!(parse_period("day"), Ok(None));
        assert_eq!(parse_period("60m"), Ok(Some(MinutePeriod::M60)));
        assert_eq!(parse_period("5m"), Ok(Some(MinutePeriod::M5)));
        assert!(
            parse_period("2h")
                .unwrap_err()
                .contains("60m, 30m, 15m or 5m")
        );
    }
}
