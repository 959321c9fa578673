//! `wyckoff track`: the saved screens' candidates with their figures so far, the hit
//! rates (`stats`), and `backfill` — the funnel replayed as of each past trading day.
//! Exit status: 0 ok, 1 no data / failure, 2 bad input.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use wyckoff_session::domain::engine::track::{GroupBy, HitRate, Outcome};
use wyckoff_session::domain::track::{TrackStats, TrackedScreen};

use crate::market::{desk, failed, print_json, runtime};

#[derive(Debug, clap::Args)]
pub struct TrackArgs {
    #[command(subcommand)]
    pub command: Option<TrackCommand>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum TrackCommand {
    /// Hit rates (net return > 0 after fees) with counts, per trigger, track and 水温, by horizon.
    Stats {
        #[arg(long)]
        json: bool,
    },
    /// Replay the funnel as of every trading day in [FROM, TO] over the cache and save
    /// each day's screen (progress on stderr).
    Backfill {
        /// First day, YYYY-MM-DD or YYYYMMDD.
        #[arg(long, value_name = "DATE")]
        from: String,
        /// Last day, YYYY-MM-DD or YYYYMMDD.
        #[arg(long, value_name = "DATE")]
        to: String,
    },
}

const EXIT_BAD_INPUT: u8 = 2;

fn pct(x: f64) -> String {
    format!("{x:+.2}%")
}

fn outcome_cell(o: &Outcome) -> String {
    match o {
        Outcome::Pending { .. } => "pending".into(),
        Outcome::NoEntry { .. } => "not bought".into(),
        Outcome::Done { net_return_pct, .. } => pct(*net_return_pct),
    }
}

fn print_screens(screens: &[TrackedScreen]) {
    if screens.is_empty() {
        println!("no saved screens yet: `wyckoff screen --save` or `wyckoff track backfill`");
        return;
    }
    for s in screens {
        println!(
            "screen #{}  as of {}  ·  {}  ·  board {}  ·  水温 {}  ·  {} candidates",
            s.id,
            s.as_of,
            serde_json::to_value(s.origin)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            s.board,
            s.regime.as_deref().unwrap_or("--"),
            s.candidates.len(),
        );
        if s.candidates.is_empty() {
            continue;
        }
        println!(
            "  {:<7} {:<10} {:<20} {:>6}  {:>9} {:>9} {:>9} {:>9}",
            "code", "name", "triggers", "score", "1d", "5d", "10d", "20d"
        );
        for c in &s.candidates {
            let cells: Vec<String> = c.outcomes.iter().map(outcome_cell).collect();
            println!(
                "  {:<7} {:<10} {:<20} {:>6.2}  {}",
                c.code,
                c.name,
                c.triggers.join("+"),
                c.score,
                cells
                    .iter()
                    .map(|c| format!("{c:>9}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
    println!(
        "\nnet return after fees, bought at the next trading day's open and sold at the close N trading days after it (T+1; a limit-down close waits for the next); not bought: a limit-up open or suspended"
    );
}

fn rate_cell(r: Option<&HitRate>) -> String {
    match r {
        Some(HitRate {
            hit_rate_pct: Some(p),
            signals,
            ..
        }) => format!("{p:.0}% of {signals}"),
        Some(r) if r.pending > 0 => format!("{} pending", r.pending),
        _ => "--".into(),
    }
}

fn print_stats(st: &TrackStats) {
    println!(
        "{} screens · {} signals (a stock on a day counts once) · hit = net return > 0 after fees",
        st.screens, st.signals
    );
    if st.rates.is_empty() {
        return;
    }
    let head: Vec<String> = st
        .horizons
        .iter()
        .map(|h| format!("{:>14}", format!("{h}d")))
        .collect();
    println!("{:<8} {:<24} {}", "by", "key", head.join(" "));
    let mut keys: Vec<(GroupBy, &str)> =
        st.rates.iter().map(|r| (r.group, r.key.as_str())).collect();
    keys.dedup();
    for (g, k) in keys {
        let cells: Vec<String> = st
            .horizons
            .iter()
            .map(|h| {
                let r = st
                    .rates
                    .iter()
                    .find(|r| r.group == g && r.key == k && r.horizon == *h);
                format!("{:>14}", rate_cell(r))
            })
            .collect();
        let by = match g {
            GroupBy::All => "all",
            GroupBy::Trigger => "trigger",
            GroupBy::Track => "track",
            GroupBy::Regime => "水温",
        };
        println!("{by:<8} {k:<24} {}", cells.join(" "));
    }
}

fn date_arg(flag: &str, s: &str) -> Result<u32, String> {
    wyckoff_session::domain::engine::dates::parse_date(s)
        .ok_or_else(|| format!("{flag} '{s}' is not a date (YYYY-MM-DD or YYYYMMDD)"))
}

pub fn run(a: TrackArgs) -> anyhow::Result<ExitCode> {
    if let Some(TrackCommand::Backfill { from, to }) = &a.command {
        let (from, to) = match (date_arg("--from", from), date_arg("--to", to)) {
            (Ok(f), Ok(t)) if f <= t => (f, t),
            (Ok(_), Ok(_)) => {
                eprintln!("wyckoff: --from is after --to");
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("wyckoff: {e}");
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
        };
        return backfill(from, to);
    }
    let rt = runtime()?;
    let result = rt.block_on(async {
        let desk = desk().await?;
        let tracked = wyckoff_session::domain::track::tracked(desk.market(), desk.tracking())
            .await
            .context("following the saved screens");
        desk.close().await;
        tracked
    });
    let screens = match result {
        Ok(s) => s,
        Err(e) => return Ok(failed(e)),
    };
    match a.command {
        Some(TrackCommand::Stats { json }) => {
            let st = wyckoff_session::domain::track::stats_of(&screens);
            if json || a.json {
                print_json(&st)?;
            } else {
                print_stats(&st);
            }
        }
        _ if a.json => print_json(&screens)?,
        _ => print_screens(&screens),
    }
    Ok(ExitCode::SUCCESS)
}

fn backfill(from: u32, to: u32) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let started = Instant::now();
    let result = rt.block_on(async {
        let desk = desk().await?;
        let report = wyckoff_session::domain::track::backfill(
            desk.market(),
            desk.tracking(),
            from,
            to,
            move |done, total, day| {
                eprintln!(
                    "backfill {done}/{total}  {}",
                    wyckoff_session::domain::market::date::iso(day)
                );
            },
        )
        .await
        .context("backfilling");
        desk.close().await;
        report
    });
    let report = match result {
        Ok(r) => r,
        Err(e) => return Ok(failed(e)),
    };
    let secs = started.elapsed().as_secs_f64();
    println!(
        "backfilled {} trading days over {} stocks: {} candidates saved in {secs:.1} s ({:.0} ms a day)",
        report.days,
        report.stocks,
        report.candidates,
        if report.days > 0 {
            secs * 1000.0 / report.days as f64
        } else {
            0.0
        }
    );
    for note in &report.notes {
        println!("note: {note}");
    }
    if report.days == 0 {
        eprintln!("wyckoff: no cached trading day in that range");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
