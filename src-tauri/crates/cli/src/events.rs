//! `wyckoff events CODE [--as-of DATE] [--json]`: the marks the engine showed as of a close —
//! schematic events, phase bands, range lines and triggers — each with the bar it points at,
//! the date it became known and why. The engine is replayed over the cached bars up to that
//! close only, so nothing later leaks in. `--period 60m|30m|15m|5m`: the Wyckoff events the
//! engine reads on the cached minute bars themselves (what the stock page's minute chart
//! marks), with how fresh those bars are. Exit status: 0 ok, 1 no data available (no bars
//! cached), 2 bad input (code format, unknown code, a period or date that is not one, a date
//! outside the cached bars).

use std::process::ExitCode;

use serde::Serialize;
use wyckoff_session::domain::engine::L4Config;
use wyckoff_session::domain::engine::known_on::{ExplainedMark, Mark, MarkEnd, known_as_of};
use wyckoff_session::domain::market::StockCode;
use wyckoff_session::time::iso;

use crate::market::{EXIT_BAD_INPUT, EXIT_UNAVAILABLE, desk, failed, print_json, runtime};

/// Triggers of this many trading days up to the as-of close are listed in text mode; all of
/// them are in `--json`.
const RECENT_TRIGGER_BARS: usize = 20;

#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// A-share code: 600519, 600519.SH or sh600519.
    pub code: String,
    /// The close to read as of (YYYY-MM-DD or YYYYMMDD); a non-trading day means the close
    /// before it. Default: the newest cached bar.
    #[arg(long, value_name = "DATE")]
    pub as_of: Option<String>,
    /// The bars read: day (default), or 60m, 30m, 15m, 5m — the events the engine reads on
    /// the cached minute bars of that period (`wyckoff data sync CODE --period 60m`).
    #[arg(long, default_value = "day")]
    pub period: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The `--json` output.
#[derive(Debug, Serialize)]
struct KnownEvents {
    code: String,
    /// The name the stock carried on the as-of close (its recorded name history), else
    /// today's.
    name: Option<String>,
    /// The as-of close is before the newest bar and no recorded name covers it: `name` is
    /// today's, which may not be the one it had then.
    name_from_today: bool,
    /// The as-of close the marks were read on.
    as_of: u32,
    /// The first cached bar the replay started from.
    first_bar: u32,
    source: Option<String>,
    /// Standing schematic marks and every trigger fired up to the close, in the order they
    /// became known.
    marks: Vec<ExplainedMark>,
}

fn bad_input(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("wyckoff: {msg}");
    ExitCode::from(EXIT_BAD_INPUT)
}

fn describe(m: &Mark) -> String {
    let kind = |s: &wyckoff_session::domain::engine::phases::SchematicKind| match s {
        wyckoff_session::domain::engine::phases::SchematicKind::Accumulation => "accumulation",
        wyckoff_session::domain::engine::phases::SchematicKind::Distribution => "distribution",
    };
    match m {
        Mark::Event {
            schematic,
            event,
            price,
            ..
        } => format!("{event:?} @ {price:.2} ({})", kind(schematic)),
        Mark::PhaseBand {
            schematic, phase, ..
        } => format!("phase {phase:?} ({})", kind(schematic)),
        Mark::RangeLines {
            schematic,
            support,
            resistance,
            ..
        } => {
            let p = |x: &Option<f64>| x.map_or_else(|| "--".to_owned(), |v| format!("{v:.2}"));
            format!(
                "range {}–{} ({})",
                p(support),
                p(resistance),
                kind(schematic)
            )
        }
        Mark::Trigger {
            family, trigger, ..
        } => format!("{} {family:?}", trigger.as_str()),
    }
}

fn row(m: &ExplainedMark) -> String {
    let ended = match m.ended {
        Some(MarkEnd::Revised { on }) => format!(" (revised {})", iso(on)),
        Some(MarkEnd::Removed { on }) => format!(" (removed {})", iso(on)),
        None if m.since > m.known_on => format!(" (in this form since {})", iso(m.since)),
        None => String::new(),
    };
    format!(
        "{:<10}  {:<10}  {:<34}  {}{ended}",
        iso(m.bar_date),
        iso(m.known_on),
        describe(&m.mark),
        m.why
    )
}

/// The name in force on `day` from `spans` (ascending `(from, name)`), else `today`'s; and
/// whether today's stood in for a day before the newest bar (`newest`).
fn name_on(
    spans: &[(u32, String)],
    day: u32,
    newest: u32,
    today: Option<&str>,
) -> (Option<String>, bool) {
    match spans.iter().rev().find(|(from, _)| *from <= day) {
        Some((_, name)) => (Some(name.clone()), false),
        None => (today.map(str::to_owned), day < newest),
    }
}

pub fn run(a: EventsArgs) -> anyhow::Result<ExitCode> {
    // bad input is refused before the data home is touched
    let code = match StockCode::parse(&a.code) {
        Ok(c) => c,
        Err(e) => return Ok(bad_input(e)),
    };
    let as_of = match a.as_of.as_deref() {
        Some(d) => match wyckoff_session::domain::market::date::parse_date(d) {
            Some(v) => Some(v),
            None => {
                return Ok(bad_input(format!(
                    "--as-of must be a real date as YYYY-MM-DD or YYYYMMDD, got {d:?}"
                )));
            }
        },
        None => None,
    };
    let period = match crate::data::minute::parse_period(&a.period) {
        Ok(p) => p,
        Err(e) => return Ok(bad_input(e)),
    };
    if let Some(period) = period {
        if let Some(d) = &a.as_of {
            return Ok(bad_input(format!(
                "--as-of {d} reads daily closes; --period {} reads every cached {} bar (leave one out)",
                period.label(),
                period.label()
            )));
        }
        return minute_events(code, period, a.json);
    }
    let digits = code.digits().to_owned();
    let rt = runtime()?;
    let loaded = rt.block_on(async {
        let desk = desk().await?;
        let md = desk.market();
        let r = md.daily_bars(&digits, None).await;
        let listed = md.stock_info(&code).is_some();
        let names = md.history().spans_of(&digits).await;
        desk.close().await;
        let names: Vec<(u32, String)> = names?.into_iter().map(|s| (s.from, s.name)).collect();
        anyhow::Ok((r?, listed, names))
    });
    let (r, listed, names) = match loaded {
        Ok(v) => v,
        Err(e) => return Ok(failed(e)),
    };
    let (Some(first), Some(last)) = (r.bars.first(), r.bars.last()) else {
        if !listed {
            return Ok(bad_input(format!(
                "unknown stock code {digits}: not in the stock list and no cached bars"
            )));
        }
        eprintln!(
            "wyckoff: no data offline for {digits}: run `wyckoff data sync {digits}` when online"
        );
        return Ok(ExitCode::from(EXIT_UNAVAILABLE));
    };
    let target = as_of.unwrap_or(last.date);
    let Some((as_of_date, marks)) = known_as_of(&r.bars, target, &L4Config::for_code(&digits))
    else {
        return Ok(bad_input(format!(
            "--as-of {} is outside the cached bars of {digits} ({} … {})",
            iso(target),
            iso(first.date),
            iso(last.date)
        )));
    };
    let bars = &r.bars[..r.bars.partition_point(|b| b.date <= as_of_date)];
    let (name, name_from_today) = name_on(&names, as_of_date, last.date, r.name.as_deref());
    if a.json {
        print_json(&KnownEvents {
            code: digits,
            name,
            name_from_today,
            as_of: as_of_date,
            first_bar: first.date,
            source: r.source.clone(),
            marks,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{digits} {} — marks known as of {} (the engine replayed over {} bars from {}, source {})",
        name.as_deref().unwrap_or(""),
        iso(as_of_date),
        bars.len(),
        iso(first.date),
        r.source.as_deref().unwrap_or("--")
    );
    if name_from_today {
        println!("note: the name is today's: no recorded name for {digits} covers that day");
    }
    let recent_from = bars[bars.len().saturating_sub(RECENT_TRIGGER_BARS)].date;
    let (triggers, standing): (Vec<&ExplainedMark>, Vec<&ExplainedMark>) = marks
        .iter()
        .partition(|m| matches!(m.mark, Mark::Trigger { .. }));
    println!("\n{:<10}  {:<10}  {:<34}  why", "bar", "known on", "mark");
    if standing.is_empty() {
        println!("(no schematic as of this close)");
    }
    for m in &standing {
        println!("{}", row(m));
    }
    let recent: Vec<&&ExplainedMark> = triggers
        .iter()
        .filter(|m| m.known_on >= recent_from)
        .collect();
    println!(
        "\ntriggers fired in the last {RECENT_TRIGGER_BARS} trading days ({} in all since {}; --json lists every one):",
        triggers.len(),
        iso(first.date)
    );
    for m in &recent {
        println!("{}", row(m));
    }
    Ok(ExitCode::SUCCESS)
}

/// One event the engine read on the minute bars.
#[derive(Debug, Serialize)]
struct MinuteEvent {
    /// SC, AR, ST, Spring, SOS, … (distribution: BC, UTAD, SOW, LPSY).
    event: String,
    /// The bar it labelled, YYYYMMDDHHMM (its end, Beijing time).
    bar_time: u64,
    /// The event's price (unadjusted, as the minute bars are).
    price: f64,
    /// The rule the bar met.
    why: String,
}

/// The `--json` output at a minute period.
#[derive(Debug, Serialize)]
struct MinuteEvents {
    code: String,
    name: Option<String>,
    /// `60m`, `30m`, `15m` or `5m`.
    period: String,
    /// The cached bars read: how many, the first and the newest bar's end (YYYYMMDDHHMM).
    bars: usize,
    first_bar: u64,
    newest_bar: u64,
    /// Calendar days from the newest bar's day to today (Beijing): how stale the bars are.
    newest_bar_age_days: i64,
    /// Today's date by the desk's clock (Beijing), YYYYMMDD.
    today: u32,
    sources: Vec<String>,
    /// Read by bar position: a rule's "20-day mean" is 20 bars of this period here.
    events: Vec<MinuteEvent>,
}

fn why_of(label: &str) -> String {
    use wyckoff_session::domain::engine::phases::EventCode;
    serde_json::from_value::<EventCode>(serde_json::Value::String(label.to_owned()))
        .map(|e| e.rule().to_owned())
        .unwrap_or_default()
}

/// `wyckoff events CODE --period P`: the events the engine reads on the cached `period` bars.
fn minute_events(
    code: StockCode,
    period: wyckoff_session::domain::market::minute::MinutePeriod,
    json: bool,
) -> anyhow::Result<ExitCode> {
    use wyckoff_session::domain::market::minute::time_label;
    let digits = code.digits().to_owned();
    let label = period.label();
    let rt = runtime()?;
    let loaded = rt.block_on(async {
        let desk = desk().await?;
        let listed = desk.market().stock_info(&code).is_some();
        let chart = desk.minute_chart(&digits, period).await;
        let now = desk.clock().now_beijing();
        desk.close().await;
        anyhow::Ok((chart?, listed, now))
    });
    let (chart, listed, now) = match loaded {
        Ok(v) => v,
        Err(e) => return Ok(failed(e)),
    };
    let (Some(&first), Some(&newest)) = (chart.times.first(), chart.times.last()) else {
        if !listed {
            return Ok(bad_input(format!(
                "unknown stock code {digits}: not in the stock list and no cached bars"
            )));
        }
        eprintln!(
            "wyckoff: no {label} bars cached for {digits}: run `wyckoff data sync {digits} --period {label}` first"
        );
        return Ok(ExitCode::from(EXIT_UNAVAILABLE));
    };
    let today = now.date();
    let newest_day = wyckoff_session::time::from_yyyymmdd((newest / 10_000) as u32);
    let age = newest_day.map_or(0, |d| (today - d).num_days());
    let events: Vec<MinuteEvent> = chart
        .marks
        .iter()
        .filter(|m| m.timeframe == label)
        .map(|m| MinuteEvent {
            event: m.label.clone(),
            bar_time: m.bar_time,
            price: m.price,
            why: why_of(&m.label),
        })
        .collect();
    if json {
        print_json(&MinuteEvents {
            code: digits,
            name: chart.name,
            period: label.to_owned(),
            bars: chart.times.len(),
            first_bar: first,
            newest_bar: newest,
            newest_bar_age_days: age,
            today: wyckoff_session::time::to_yyyymmdd(today),
            sources: chart.sources,
            events,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{digits} {} — Wyckoff events on the cached {label} bars ({} bars, {} … {}, source {})",
        chart.name.as_deref().unwrap_or(""),
        chart.times.len(),
        time_label(first),
        time_label(newest),
        if chart.sources.is_empty() {
            "--".to_owned()
        } else {
            chart.sources.join(", ")
        }
    );
    println!(
        "newest bar {}: {age} day(s) before today ({}); `wyckoff data sync {digits} --period {label}` refreshes them",
        time_label(newest),
        wyckoff_session::time::iso(wyckoff_session::time::to_yyyymmdd(today))
    );
    println!(
        "read by bar position: a rule's \"20-day\" is 20 {label} bars here; the daily reading is `wyckoff events {digits}`"
    );
    if events.is_empty() {
        println!("\n(no Wyckoff event on these {label} bars)");
        return Ok(ExitCode::SUCCESS);
    }
    println!("\n{:<16}  {:<7}  {:>9}  why", "bar", "event", "price");
    for e in &events {
        println!(
            "{:<16}  {:<7}  {:>9.2}  {}",
            time_label(e.bar_time),
            e.event,
            e.price,
            e.why
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::name_on;

    #[test]
    fn the_name_shown_is_the_one_in_force_on_the_close() {
        let spans = vec![
            (19900101, "世纪星源".to_owned()),
            (20210501, "ST星源".to_owned()),
        ];
        // (spans, day, newest bar, name, today's stood in)
        type Case<'a> = (&'a [(u32, String)], u32, u32, &'a str, bool);
        let cases: [Case<'_>; 5] = [
            (&spans, 20190116, 20260105, "世纪星源", false),
            (&spans, 20210501, 20260105, "ST星源", false),
            (&spans[1..], 20190116, 20260105, "ST星源", true),
            (&[], 20190116, 20260105, "ST星源", true),
            // the newest close: today's name is that day's own
            (&[], 20260105, 20260105, "ST星源", false),
        ];
        for (spans, day, newest, name, fell_back) in cases {
            assert_eq!(
                name_on(spans, day, newest, Some("ST星源")),
                (Some(name.to_owned()), fell_back),
                "{spans:?} on {day}"
            );
        }
    }
}
