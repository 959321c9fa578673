//! The stock page's data (`stock_chart`): bars folded by period into compact columns, MA
//! lines, and the engine's Wyckoff reading — events with why, phase bands, the range,
//! signals, a holding's lines — plus the diagnosis and the data's freshness. The engine
//! computes every label and line here; a chart only draws them.

use chrono::{Datelike, NaiveDate};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use specta::Type;
use wyckoff_engine::ExitKind;
use wyckoff_engine::diagnosis::{DiagnosisBrief, Targets};
use wyckoff_engine::known_on::{Mark, MarkEnd, Replay, replay_schematics, schematic_marks};
use wyckoff_engine::phases::{EventCode, Schematic, SchematicKind};
use wyckoff_engine::{Bar, wyckoff_structure};
use wyckoff_market::{DataStatus, MarketData, MarketError, StockCode};

/// Moving-average windows drawn, the same ones the diagnosis reports (MA5/20/50/200).
const MA_WINDOWS: [usize; 4] = [5, 20, 50, 200];

#[derive(Debug, Clone, thiserror::Error)]
pub enum ChartError {
    /// Not a stock code in any accepted spelling.
    #[error("{message}")]
    InvalidCode { message: String },
    /// Well-formed, but neither in the stock list nor in the cache.
    #[error("unknown stock code {code}: not in the stock list and no cached bars")]
    UnknownCode { code: String },
    /// A listed stock without any cached bar (offline, never synced).
    #[error("no data for {code}: {message}")]
    NoData { code: String, message: String },
    #[error("{message}")]
    Other { message: String },
}

impl From<MarketError> for ChartError {
    fn from(e: MarketError) -> Self {
        match e {
            MarketError::Code(c) => ChartError::InvalidCode {
                message: c.to_string(),
            },
            other => ChartError::Other {
                message: other.to_string(),
            },
        }
    }
}

impl From<wyckoff_market::CodeError> for ChartError {
    fn from(e: wyckoff_market::CodeError) -> Self {
        ChartError::InvalidCode {
            message: e.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    Day,
    Week,
    Month,
}

/// Bars as parallel columns (one JSON object per bar would triple the payload).
/// Dates are `YYYYMMDD`; for weeks and months, the last trading day in the bucket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Type)]
pub struct BarColumns {
    pub dates: Vec<u32>,
    pub open: Vec<f64>,
    pub high: Vec<f64>,
    pub low: Vec<f64>,
    pub close: Vec<f64>,
    pub volume: Vec<f64>,
}

/// One MA line: `values[i]` belongs to bar `start + i` (no value before the window fills).
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct MaLine {
    pub window: u32,
    pub start: u32,
    pub values: Vec<f64>,
}

/// A labelled Wyckoff event, placed on the chart bar that contains its day.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ChartEvent {
    /// SC, AR, ST, Spring, SOS, LPS, BC, UTAD, SOW, LPSY.
    pub label: String,
    /// The daily bar the engine labelled.
    pub date: u32,
    /// The chart bar (week/month) that day falls in; equals `date` on the daily chart.
    pub bar_date: u32,
    pub price: f64,
    /// Why the engine labelled it: the rule it met and the days supporting it.
    pub why: String,
    /// The same in Chinese.
    pub why_zh: String,
    /// The first close as of which the engine, given only the bars up to it, placed this
    /// label on this day (`None` only if the replay never saw it, which it always does).
    pub known_on: Option<u32>,
    /// As known then: when a later bar first revised or removed the label as it was first
    /// placed. Always `None` in the hindsight list.
    pub ended: Option<MarkEnd>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct PhaseBand {
    /// A–E.
    pub phase: String,
    pub from: u32,
    /// Inclusive; the last bar for the current phase.
    pub to: u32,
    /// The first close as of which the engine drew this band (from its opening event).
    pub known_on: Option<u32>,
}

/// A trigger (entry) or exit signal on the last bar.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ChartSignal {
    /// `trigger` or `exit`.
    pub kind: String,
    pub date: u32,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct HoldingLines {
    pub cost: f64,
    pub shares: i64,
    pub stop_loss: Option<f64>,
    pub target: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct WyckoffReading {
    /// `accumulation` or `distribution`, when a schematic is active.
    pub schematic: Option<String>,
    pub phase: Option<String>,
    pub support: Option<f64>,
    pub resistance: Option<f64>,
    pub mid: Option<f64>,
    /// The first close as of which the engine drew the current range lines.
    pub range_known_on: Option<u32>,
    /// With hindsight: every schematic the engine read over the history, each in its latest,
    /// most developed form.
    pub events: Vec<ChartEvent>,
    /// As known then: every label as the engine first placed it, on the close it became
    /// known, with when a later bar revised or removed it.
    pub known_events: Vec<ChartEvent>,
    pub phases: Vec<PhaseBand>,
}

/// `analyze_stock`'s diagnosis card as the stock page carries it: what the page, its signals
/// and a holding's lines read, typed, and the card's other fields as the tool gave them, so
/// it serialises exactly as the agent sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct DiagnosisCard {
    pub code: String,
    pub name: String,
    /// The last bar's date (YYYY-MM-DD).
    pub as_of: Option<String>,
    /// GREEN, YELLOW or RED (the engine's rating).
    pub health: String,
    pub health_reasons: Vec<String>,
    /// The holding's cost, when the stock is held.
    pub cost: Option<f64>,
    pub candidate_lane: Option<String>,
    /// The kind of entry the candidate lane triggered on the last bar.
    pub candidate_entry_type: Option<String>,
    pub exit_signal: Option<ExitKind>,
    pub stop_loss_price: Option<f64>,
    pub targets: Targets,
    pub diagnosis_brief: DiagnosisBrief,
    /// The rest of the card (moving averages, channels, triggers, the structure, the
    /// benchmark, the 水温, freshness and notes), for the agent's view of it.
    #[serde(flatten)]
    #[specta(skip)]
    pub rest: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct StockChart {
    pub code: String,
    pub name: Option<String>,
    pub period: Period,
    pub bars: BarColumns,
    pub ma: Vec<MaLine>,
    pub reading: WyckoffReading,
    pub signals: Vec<ChartSignal>,
    pub holding: Option<HoldingLines>,
    /// The diagnosis card, as `analyze_stock` gives it to the agent.
    pub diagnosis: DiagnosisCard,
    pub source: Option<String>,
    /// Date of the newest daily bar.
    pub as_of: Option<u32>,
    /// ok, stale, partial or unavailable.
    pub data_status: String,
    pub stale: bool,
    pub notes: Vec<wyckoff_market::DataNote>,
}

fn status_str(s: DataStatus) -> String {
    match s {
        DataStatus::Ok => "ok",
        DataStatus::Stale => "stale",
        DataStatus::Partial => "partial",
        DataStatus::Unavailable => "unavailable",
    }
    .to_owned()
}

fn naive(d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt((d / 10000) as i32, (d / 100) % 100, d % 100)
}

/// The bucket a day belongs to: ISO week for weeks (a week spanning New Year stays one
/// bucket), calendar month for months.
fn bucket(d: u32, period: Period) -> u32 {
    match period {
        Period::Day => d,
        Period::Week => naive(d)
            .map(|n| {
                let w = n.iso_week();
                (w.year() as u32) * 100 + w.week()
            })
            .unwrap_or(d),
        Period::Month => d / 100,
    }
}

/// Daily bars folded into weeks or months: first open, highest high, lowest low, last close,
/// summed volume and amount, dated by the bucket's last trading day.
pub fn aggregate(bars: &[Bar], period: Period) -> Vec<Bar> {
    if period == Period::Day {
        return bars.to_vec();
    }
    let mut out: Vec<Bar> = Vec::new();
    let mut last_bucket = None;
    for b in bars {
        let key = bucket(b.date, period);
        match out.last_mut() {
            Some(acc) if last_bucket == Some(key) => {
                acc.date = b.date;
                acc.high = acc.high.max(b.high);
                acc.low = acc.low.min(b.low);
                acc.close = b.close;
                acc.volume += b.volume;
                acc.amount += b.amount;
                acc.turnover = match (acc.turnover, b.turnover) {
                    (Some(a), Some(t)) => Some(a + t),
                    _ => None,
                };
            }
            _ => out.push(*b),
        }
        last_bucket = Some(key);
    }
    out
}

/// The chart bar (by date) holding a given day: the first bar dated on or after it.
fn bar_date_for(dates: &[u32], day: u32) -> Option<u32> {
    let i = dates.partition_point(|d| *d < day);
    dates.get(i).copied()
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn columns(bars: &[Bar]) -> BarColumns {
    BarColumns {
        dates: bars.iter().map(|b| b.date).collect(),
        open: bars.iter().map(|b| round3(b.open)).collect(),
        high: bars.iter().map(|b| round3(b.high)).collect(),
        low: bars.iter().map(|b| round3(b.low)).collect(),
        close: bars.iter().map(|b| round3(b.close)).collect(),
        volume: bars.iter().map(|b| b.volume.round()).collect(),
    }
}

/// Simple moving averages of the close, one running sum per window.
pub fn moving_averages(close: &[f64], windows: &[usize]) -> Vec<MaLine> {
    windows
        .iter()
        .filter(|w| **w > 0 && close.len() >= **w)
        .map(|&w| {
            let mut sum: f64 = close[..w].iter().sum();
            let mut values = Vec::with_capacity(close.len() - w + 1);
            values.push(round3(sum / w as f64));
            for i in w..close.len() {
                sum += close[i] - close[i - w];
                values.push(round3(sum / w as f64));
            }
            MaLine {
                window: w as u32,
                start: (w - 1) as u32,
                values,
            }
        })
        .collect()
}

fn event_label(code: EventCode) -> String {
    format!("{code:?}")
}

/// Phase bands from the events that open each phase (A: climax, B: first ST, C: Spring or
/// UTAD, D: SOS/SOW or LPS/LPSY, E: since the engine says so), the last one running to the
/// last bar. `known_on` is left for the caller.
pub fn phase_bands(s: &Schematic, last_date: u32) -> Vec<PhaseBand> {
    s.phase_spans()
        .into_iter()
        .map(|span| PhaseBand {
            phase: format!("{:?}", span.phase),
            from: span.from,
            to: span
                .until
                .map_or(last_date, |next| next.saturating_sub(1).max(span.from)),
            known_on: None,
        })
        .collect()
}

/// How often (in daily bars) the engine's reading is replayed over the history, so schematics
/// that completed long ago are drawn too (the engine only reads the last 250 bars).
const HISTORY_STEP: usize = 20;

fn active_schematic(daily: &[Bar]) -> Option<Schematic> {
    let st = wyckoff_structure(daily);
    match st.active {
        Some(SchematicKind::Accumulation) => st.accumulation,
        Some(SchematicKind::Distribution) => st.distribution,
        None => None,
    }
}

/// The engine's reading as it stood at every `HISTORY_STEP`-th close and at the last one:
/// one entry per schematic (kind + climax day), in its latest, most developed form, with the
/// last date it was still the active reading.
pub fn schematic_history(daily: &[Bar]) -> Vec<(Schematic, u32)> {
    let n = daily.len();
    let mut ends: Vec<usize> = (1..=n / HISTORY_STEP).map(|k| k * HISTORY_STEP).collect();
    if ends.last() != Some(&n) && n > 0 {
        ends.push(n);
    }
    let mut out: Vec<(Schematic, u32)> = Vec::new();
    for end in ends {
        let Some(s) = active_schematic(&daily[..end]) else {
            continue;
        };
        let seen_to = daily[end - 1].date;
        let key = (s.kind, s.events.first().map(|e| e.date));
        match out
            .iter_mut()
            .find(|(o, _)| (o.kind, o.events.first().map(|e| e.date)) == key)
        {
            Some(slot) => *slot = (s, seen_to),
            None => out.push((s, seen_to)),
        }
    }
    out
}

/// A schematic event as a chart label, placed on the chart bar holding its day.
fn chart_event(mark: &Mark, chart_dates: &[u32], known_on: Option<u32>) -> Option<ChartEvent> {
    let Mark::Event {
        event, date, price, ..
    } = mark
    else {
        return None;
    };
    Some(ChartEvent {
        label: event_label(*event),
        date: *date,
        bar_date: bar_date_for(chart_dates, *date)?,
        price: round3(*price),
        why: mark.why(),
        why_zh: mark.why_zh(),
        known_on,
        ended: None,
    })
}

/// The engine's reading of the daily bars, placed on the chart's (daily/weekly/monthly) bars:
/// range lines and phase from the reading at the last close; events and phase bands from
/// every schematic the engine read over the history (with hindsight), and every label as the
/// engine first placed it (as known then). Each carries the close it became known on, from a
/// replay of the engine over every close.
fn reading(daily: &[Bar], chart_dates: &[u32]) -> WyckoffReading {
    let last = daily.last().map(|b| b.date).unwrap_or(0);
    let history = schematic_history(daily);
    let known: Replay = replay_schematics(daily);
    let current = history
        .last()
        .filter(|(_, seen_to)| *seen_to == last)
        .map(|(s, _)| s);
    let mut events: Vec<ChartEvent> = Vec::new();
    let mut phases: Vec<PhaseBand> = Vec::new();
    for (s, seen_to) in &history {
        let marks = schematic_marks(s);
        for m in &marks {
            let Mark::Event { event, date, .. } = m else {
                continue;
            };
            if events
                .iter()
                .any(|x| x.date == *date && x.label == event_label(*event))
            {
                continue;
            }
            events.extend(chart_event(m, chart_dates, known.known_on(m)));
        }
        // The engine's phase bands come in the same order as the schematic's spans.
        let band_marks = marks.iter().filter(|m| matches!(m, Mark::PhaseBand { .. }));
        phases.extend(
            phase_bands(s, *seen_to)
                .into_iter()
                .zip(band_marks)
                .filter_map(|(b, m)| {
                    Some(PhaseBand {
                        phase: b.phase,
                        from: bar_date_for(chart_dates, b.from)?,
                        to: bar_date_for(chart_dates, b.to)?,
                        known_on: known.known_on(m),
                    })
                }),
        );
    }
    events.sort_by_key(|e| e.date);
    phases.sort_by_key(|b| b.from);
    // As known then: each label in the form it was first placed (the start of its lineage).
    let mut known_events: Vec<ChartEvent> = known
        .marks
        .iter()
        .filter(|k| k.since == k.known_on)
        .filter_map(|k| {
            let mut e = chart_event(&k.mark, chart_dates, Some(k.known_on))?;
            e.ended = k.ended;
            Some(e)
        })
        .collect();
    known_events.sort_by_key(|e| (e.date, e.known_on));
    let (support, resistance) = current.map_or((None, None), |s| (s.support, s.resistance));
    let range_known_on = current.and_then(|s| {
        schematic_marks(s)
            .iter()
            .find(|m| matches!(m, Mark::RangeLines { .. }))
            .and_then(|m| known.known_on(m))
    });
    let mid = match (support, resistance) {
        (Some(lo), Some(hi)) => Some(round3((lo + hi) / 2.0)),
        _ => None,
    };
    WyckoffReading {
        schematic: current.map(|s| {
            match s.kind {
                SchematicKind::Accumulation => "accumulation",
                SchematicKind::Distribution => "distribution",
            }
            .to_owned()
        }),
        phase: current.map(|s| format!("{:?}", s.phase)),
        support: support.map(round3),
        resistance: resistance.map(round3),
        mid,
        range_known_on,
        events,
        known_events,
        phases,
    }
}

/// Trigger and exit signals the diagnosis found on its last bar.
fn signals(diagnosis: &DiagnosisCard, last_chart_date: Option<u32>) -> Vec<ChartSignal> {
    let Some(date) = last_chart_date else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(entry) = &diagnosis.candidate_entry_type {
        let lane = diagnosis.candidate_lane.as_deref().unwrap_or_default();
        out.push(ChartSignal {
            kind: "trigger".into(),
            date,
            label: format!("{entry} {lane}").trim().to_owned(),
        });
    }
    if let Some(exit) = diagnosis.exit_signal {
        out.push(ChartSignal {
            kind: "exit".into(),
            date,
            label: exit.as_str().to_owned(),
        });
    }
    out
}

/// Everything the stock page draws, for one stock and period. Unknown codes and stocks
/// without any cached bar are errors that say which.
pub async fn build_chart(
    md: &MarketData,
    code: &str,
    period: Period,
) -> Result<StockChart, ChartError> {
    build_chart_as_of(md, code, period, None).await
}

/// [`build_chart`] as the chart stood at the close of `as_of` (YYYYMMDD): only the bars up
/// to it, the reading and diagnosis the engine gives from those alone (the stock page's
/// replay).
pub async fn build_chart_as_of(
    md: &MarketData,
    code: &str,
    period: Period,
    as_of: Option<u32>,
) -> Result<StockChart, ChartError> {
    let parsed = StockCode::parse(code)?;
    let digits = parsed.digits().to_owned();
    let r = md.daily_bars(&digits, as_of).await?;
    if r.bars.is_empty() {
        if md.stock_info(&parsed).is_none() {
            return Err(ChartError::UnknownCode { code: digits });
        }
        return Err(ChartError::NoData {
            code: digits,
            message: wyckoff_market::notes::texts(&r.notes).join("; "),
        });
    }
    let held = md
        .portfolio()
        .view()
        .await
        .map_err(|e| ChartError::Other {
            message: e.to_string(),
        })?
        .positions
        .into_iter()
        .find(|p| p.code == digits);
    let mut args = json!({"code": digits, "mode": "diagnose"});
    if let Some(d) = as_of {
        args["as_of"] = json!(d.to_string());
    }
    if let Some(p) = &held {
        args["cost"] = json!(p.cost_price);
        args["buy_dt"] = json!(p.buy_dt);
    }
    let card = crate::analyze::run(md, &args)
        .await
        .map_err(|e| ChartError::Other {
            message: e.to_string(),
        })?;
    let diagnosis: DiagnosisCard = serde_json::from_value(card).map_err(|e| ChartError::Other {
        message: format!("analyze_stock's diagnosis of {digits} is not a diagnosis card: {e}"),
    })?;
    let bars = aggregate(&r.bars, period);
    let cols = columns(&bars);
    let ma = moving_averages(&cols.close, &MA_WINDOWS);
    let reading = reading(&r.bars, &cols.dates);
    let signals = signals(&diagnosis, cols.dates.last().copied());
    let holding = held.map(|p| HoldingLines {
        cost: p.cost_price,
        shares: p.shares,
        stop_loss: p.stop_loss.or(diagnosis.stop_loss_price),
        target: diagnosis.targets.conservative,
    });
    Ok(StockChart {
        code: digits,
        name: r.name.clone(),
        period,
        bars: cols,
        ma,
        reading,
        signals,
        holding,
        diagnosis,
        source: r.source.clone(),
        as_of: r.as_of,
        data_status: status_str(r.data_status),
        stale: r.data_status != DataStatus::Ok,
        notes: r.notes.clone(),
    })
}

#[cfg(test)]
mod tests;
