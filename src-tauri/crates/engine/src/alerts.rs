//! Alert conditions: pure checks of one rule over one stock's bars as of the last
//! bar given, and the cooldown between two firings.
//!
//! Every check returns the evaluated bar's date and, when it fires, the exact figures that
//! made it fire; a check the bars cannot answer says which data is missing instead of
//! guessing. Prices are closes (as the diagnosis' stop-loss status reads them). Events count
//! as the engine knew them on the evaluated close — placed from the bars up to it and not
//! placed (in that place) the close before — never with hindsight (see [`crate::known_on`]).

use std::cell::OnceCell;

use wyckoff_protocol::{AlertCondition, AlertFigures, KnownEvent, MissingData, PhaseState};
use wyckoff_time::iso;

use crate::diagnosis::{DiagnosisConfig, Holding, health_with};
use crate::known_on::{Mark, structure_marks};
use crate::phases::{EventCode, SchematicKind, WyckoffStructure, wyckoff_structure};
use crate::{Bar, dates};

/// Bars in the volume average the volume rule compares the evaluated bar with (the bars
/// before it, so a spike does not dilute its own yardstick).
pub const VOLUME_WINDOW: usize = 20;

/// Bars up to the evaluated one that any condition reads, when the stock is not held:
/// the Wyckoff structure looks back [`crate::phases::SCHEMATIC_LOOKBACK`] bars from the
/// evaluated close and from the close before, and the diagnosis behind the health no further
/// than 250; a holding's health reads back to its entry too. As many as a screen reads, so
/// the screen's tail cache holds them.
pub const CHECK_BARS: usize = 320;

/// Every event name a rule can ask for, in the engine's spelling.
pub const EVENT_NAMES: [EventCode; 10] = [
    EventCode::SC,
    EventCode::AR,
    EventCode::ST,
    EventCode::Spring,
    EventCode::SOS,
    EventCode::LPS,
    EventCode::BC,
    EventCode::UTAD,
    EventCode::SOW,
    EventCode::LPSY,
];

/// The engine's name of an event (`Spring`, `UTAD`, …).
pub fn event_name(e: EventCode) -> String {
    format!("{e:?}")
}

/// An event named in any case (`spring`, `SPRING`, `Spring`); `None` if there is none.
pub fn parse_event(name: &str) -> Option<EventCode> {
    let name = name.trim();
    EVENT_NAMES
        .into_iter()
        .find(|e| event_name(*e).eq_ignore_ascii_case(name))
}

/// What a rule is checked against.
#[derive(Debug, Clone, Copy)]
pub struct AlertInput<'a> {
    pub code: &'a str,
    pub name: &'a str,
    /// Ascending, up to and including the evaluated bar.
    pub bars: &'a [Bar],
    /// The stock's holding (cost, entry date) when it is held: the health reads it.
    pub holding: Option<&'a Holding>,
    /// The holding's stop-loss from the portfolio.
    pub stop_loss: Option<f64>,
    /// The holding's target (take-profit) price from the portfolio.
    pub target: Option<f64>,
    /// The benchmark index's bars (any length; cut at each evaluated date here).
    pub bench: Option<&'a [Bar]>,
}

/// One rule on one stock.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Fired {
        bar_date: u32,
        figures: AlertFigures,
    },
    Quiet {
        bar_date: u32,
    },
    Missing(MissingData),
}

fn too_few(needed: usize, have: usize) -> Outcome {
    Outcome::Missing(MissingData::TooFewBars {
        needed: needed as u32,
        have: have as u32,
    })
}

fn schematic_name(k: SchematicKind) -> &'static str {
    match k {
        SchematicKind::Accumulation => "accumulation",
        SchematicKind::Distribution => "distribution",
    }
}

/// Checks `condition` on the last bar of `input.bars`.
pub fn evaluate(condition: &AlertCondition, input: &AlertInput) -> Outcome {
    StockCheck::new(*input).evaluate(condition)
}

/// Every rule on one stock, checked against the same bars: the Wyckoff structure as of the
/// evaluated close and as of the close before is built once, however many event and phase
/// rules read it (each would otherwise build both again).
#[derive(Debug)]
pub struct StockCheck<'a> {
    input: AlertInput<'a>,
    /// As of the close before the evaluated one, and as of the evaluated one.
    structures: OnceCell<[WyckoffStructure; 2]>,
}

impl<'a> StockCheck<'a> {
    pub fn new(input: AlertInput<'a>) -> Self {
        Self {
            input,
            structures: OnceCell::new(),
        }
    }

    fn structures(&self) -> &[WyckoffStructure; 2] {
        self.structures.get_or_init(|| {
            let bars = self.input.bars;
            let before = &bars[..bars.len().saturating_sub(1)];
            [wyckoff_structure(before), wyckoff_structure(bars)]
        })
    }

    /// Checks `condition` on the last bar of the input's bars.
    pub fn evaluate(&self, condition: &AlertCondition) -> Outcome {
        let input = &self.input;
        let bars = input.bars;
        let Some(last) = bars.last() else {
            return Outcome::Missing(MissingData::NoBars);
        };
        let bar_date = last.date;
        let fired = |figures| Outcome::Fired { bar_date, figures };
        let quiet = Outcome::Quiet { bar_date };
        let close = last.close;
        match condition {
            AlertCondition::PriceAbove { level } if close >= *level => {
                fired(AlertFigures::PriceAbove {
                    close,
                    level: *level,
                })
            }
            AlertCondition::PriceBelow { level } if close <= *level => {
                fired(AlertFigures::PriceBelow {
                    close,
                    level: *level,
                })
            }
            AlertCondition::PriceAbove { .. } | AlertCondition::PriceBelow { .. } => quiet,
            AlertCondition::ChangeAbove { pct } | AlertCondition::ChangeBelow { pct } => {
                if bars.len() < 2 {
                    return too_few(2, bars.len());
                }
                let prev_close = bars[bars.len() - 2].close;
                let Some(change_pct) = last.pct_change(prev_close) else {
                    return Outcome::Missing(MissingData::NoPreviousClose);
                };
                match condition {
                    AlertCondition::ChangeAbove { .. } if change_pct >= *pct => {
                        fired(AlertFigures::ChangeAbove {
                            change_pct,
                            threshold_pct: *pct,
                            close,
                            prev_close,
                        })
                    }
                    AlertCondition::ChangeBelow { .. } if change_pct <= *pct => {
                        fired(AlertFigures::ChangeBelow {
                            change_pct,
                            threshold_pct: *pct,
                            close,
                            prev_close,
                        })
                    }
                    _ => quiet,
                }
            }
            AlertCondition::VolumeRatio { k } => {
                if bars.len() < VOLUME_WINDOW + 1 {
                    return too_few(VOLUME_WINDOW + 1, bars.len());
                }
                let window = &bars[bars.len() - 1 - VOLUME_WINDOW..bars.len() - 1];
                let avg = window.iter().map(|b| b.volume).sum::<f64>() / VOLUME_WINDOW as f64;
                if !(avg.is_finite() && avg > 0.0) {
                    return Outcome::Missing(MissingData::NoVolume);
                }
                let ratio = last.volume / avg;
                if ratio >= *k {
                    fired(AlertFigures::VolumeRatio {
                        volume: last.volume,
                        avg_volume_20: avg,
                        ratio,
                        k: *k,
                    })
                } else {
                    quiet
                }
            }
            AlertCondition::Event { event } => {
                let wanted = match event.as_deref() {
                    None => None,
                    Some(name) => match parse_event(name) {
                        Some(e) => Some(e),
                        // An unknown name is refused when the rule is added; one stored anyway
                        // matches nothing.
                        None => return quiet,
                    },
                };
                let [before, now] = self.structures();
                let events: Vec<KnownEvent> = new_events(before, now)
                    .into_iter()
                    .filter(|(e, ..)| wanted.is_none_or(|w| w == *e))
                    .map(|(e, schematic, date, price)| KnownEvent {
                        event: event_name(e),
                        schematic: schematic_name(schematic).to_owned(),
                        bar_date: iso(date),
                        price,
                        known_on: iso(bar_date),
                    })
                    .collect();
                if events.is_empty() {
                    quiet
                } else {
                    fired(AlertFigures::Event { events })
                }
            }
            AlertCondition::PhaseChange => {
                if bars.len() < 2 {
                    return too_few(2, bars.len());
                }
                let prev = &bars[..bars.len() - 1];
                let [before, now] = self.structures();
                let (from, to) = (phase_state(before), phase_state(now));
                if from == to {
                    quiet
                } else {
                    fired(AlertFigures::PhaseChange {
                        from,
                        to,
                        prev_date: iso(prev[prev.len() - 1].date),
                    })
                }
            }
            AlertCondition::HealthChange => {
                if bars.len() < 2 {
                    return too_few(2, bars.len());
                }
                let prev = &bars[..bars.len() - 1];
                let before = health(input, prev);
                let now = health(input, bars);
                if before.0 == now.0 {
                    quiet
                } else {
                    fired(AlertFigures::HealthChange {
                        from: before.0,
                        to: now.0,
                        prev_date: iso(prev[prev.len() - 1].date),
                        reasons: now.1,
                    })
                }
            }
            AlertCondition::StopLoss => match input.stop_loss {
                Some(stop_loss) if close <= stop_loss => {
                    fired(AlertFigures::StopLoss { close, stop_loss })
                }
                _ => quiet,
            },
            AlertCondition::TargetReached => match input.target {
                Some(target) if close >= target => {
                    fired(AlertFigures::TargetReached { close, target })
                }
                _ => quiet,
            },
        }
    }
}

/// Schematic events placed in the structure as of the evaluated close (`now`) that the
/// structure as of the close before (`before`) did not place in the same place (the same
/// event of the same schematic on the same bar): what became known on the evaluated close.
/// A revision of an event already shown (its price moved) is not new.
pub fn new_events(
    before: &WyckoffStructure,
    now: &WyckoffStructure,
) -> Vec<(EventCode, SchematicKind, u32, f64)> {
    let before = structure_marks(before);
    structure_marks(now)
        .into_iter()
        .filter(|m| !before.iter().any(|b| b.same_place(m)))
        .filter_map(|m| match m {
            Mark::Event {
                schematic,
                event,
                date,
                price,
                ..
            } => Some((event, schematic, date, price)),
            _ => None,
        })
        .collect()
}

/// The active schematic and its phase in a structure.
pub fn phase_state(st: &WyckoffStructure) -> Option<PhaseState> {
    match (st.active, st.phase) {
        (Some(kind), Some(phase)) => Some(PhaseState {
            schematic: schematic_name(kind).to_owned(),
            phase: format!("{phase:?}"),
        }),
        _ => None,
    }
}

/// The diagnosis' health and its reasons as of the last of `bars`.
fn health(input: &AlertInput, bars: &[Bar]) -> (String, Vec<String>) {
    let date = bars.last().map_or(0, |b| b.date);
    let bench = input
        .bench
        .map(|b| &b[..b.partition_point(|x| x.date <= date)])
        .filter(|b| !b.is_empty());
    let none = Holding::default();
    health_with(
        input.code,
        input.name,
        bars,
        input.holding.unwrap_or(&none),
        bench,
        &DiagnosisConfig::default(),
    )
}

/// The earlier firing (its bar date) of the same rule on the same stock that holds back a
/// firing on `bar_date`: one fewer than `cooldown_days` trading days away, on either side (a
/// check as of an earlier date is held back by a later firing too). Trading days are counted
/// on the stock's own bars (`bar_dates`, ascending); 1 means once per trading day. The
/// nearest such firing, or `None` when it may fire.
pub fn cooldown_blocker(
    bar_dates: &[u32],
    bar_date: u32,
    fired_on: &[u32],
    cooldown_days: u32,
) -> Option<u32> {
    let pos = |d: u32| bar_dates.partition_point(|x| *x < d);
    let at = pos(bar_date);
    fired_on
        .iter()
        .map(|&d| {
            // A firing on a date no cached bar has (the cache changed since) is at least
            // one step away: only the same day is zero.
            let steps = if d == bar_date {
                0
            } else {
                pos(d).abs_diff(at).max(1)
            };
            (steps, d)
        })
        .filter(|(steps, _)| *steps < cooldown_days as usize)
        .min()
        .map(|(_, d)| d)
}

/// The evaluated date for `as_of` (YYYYMMDD) over ascending bars: the index past the last
/// bar at or before it.
pub fn cut(bars: &[Bar], as_of: Option<u32>) -> &[Bar] {
    match as_of {
        Some(d) if dates::days_from_civil(d).is_some() => {
            &bars[..bars.partition_point(|b| b.date <= d)]
        }
        Some(_) => &[],
        None => bars,
    }
}

#[cfg(test)]
mod tests;
