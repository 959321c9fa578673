//! Known-on dates: when each mark the engine draws became known, and when a later bar changed
//! or removed it.
//!
//! The engine reads a tape as of its last bar, and some of what it reads needs bars after the
//! labelled one: an AR is the highest close of the 15 bars after a climax (a higher close later
//! moves it), an ST is a swing low (it needs the next two bars), a Spring needs its reclaim, and
//! the latest climax in the lookback replaces an earlier one. [`replay`] runs the engine on every
//! prefix of the tape — as of each close, given only the bars up to it — and records, for every
//! mark it ever placed, the first as-of date it was placed (`known_on`) and the as-of date it
//! stopped being placed in that form (`ended`: revised when a mark of the same kind on the same
//! bar replaced it, removed otherwise).
//!
//! Marks: schematic events (SC, AR, ST, Spring, SOS, LPS and the distribution mirror), phase
//! bands, the schematic's range lines (see [`crate::phases`]), and the structure (§15.4) and L4
//! (§15.1) triggers. A trigger fires on one as-of bar and stays a fact about that day: it is
//! known on the day it fired and never ends.

use serde::{Deserialize, Serialize};
use wyckoff_time::iso;

use crate::Bar;
use crate::phases::{
    EventCode, Phase, Schematic, SchematicKind, WyckoffStructure, wyckoff_structure,
};
use crate::triggers::{L4Config, TriggerKind, l4_triggers, structure_triggers};

/// Which trigger family fired: the structure triggers over the trading range (§15.4, the
/// `wyckoff_diagnose` tool) or the formal L4 triggers (§15.1, the funnel and the diagnosis).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum TriggerFamily {
    Structure,
    L4,
}

/// One thing the engine draws, as it reads it on one as-of date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Mark {
    /// A labelled schematic event; `dates` lists the labelled bar first, then its support.
    Event {
        schematic: SchematicKind,
        event: EventCode,
        date: u32,
        price: f64,
        dates: Vec<u32>,
    },
    /// A phase of a schematic, from the event that opened it until the next phase began
    /// (`None`: still the current phase on that as-of date).
    PhaseBand {
        schematic: SchematicKind,
        phase: Phase,
        from: u32,
        until: Option<u32>,
    },
    /// The schematic's range lines (climax extreme / AR extreme); `since` is the bar that set
    /// the later of the two.
    RangeLines {
        schematic: SchematicKind,
        support: Option<f64>,
        resistance: Option<f64>,
        since: u32,
    },
    /// A trigger that fired on the as-of bar `date`; `dates` lists its bars, decisive first.
    Trigger {
        family: TriggerFamily,
        trigger: TriggerKind,
        date: u32,
        score: f64,
        dates: Vec<u32>,
    },
}

impl Mark {
    /// The bar the mark points at: an event's bar, a band's first day, the bar that set the
    /// range lines, a trigger's decisive bar.
    pub fn bar_date(&self) -> u32 {
        match self {
            Mark::Event { date, .. } => *date,
            Mark::PhaseBand { from, .. } => *from,
            Mark::RangeLines { since, .. } => *since,
            Mark::Trigger { date, dates, .. } => dates.first().copied().unwrap_or(*date),
        }
    }

    /// Whether `other` is the same kind of mark in the same place (the same event on the same
    /// bar, the same phase from the same day, the same schematic's lines set on the same bar),
    /// so that replacing one with the other is a revision rather than a removal.
    pub fn same_place(&self, other: &Mark) -> bool {
        match (self, other) {
            (
                Mark::Event {
                    schematic: s1,
                    event: e1,
                    date: d1,
                    ..
                },
                Mark::Event {
                    schematic: s2,
                    event: e2,
                    date: d2,
                    ..
                },
            ) => (s1, e1, d1) == (s2, e2, d2),
            (
                Mark::PhaseBand {
                    schematic: s1,
                    phase: p1,
                    from: f1,
                    ..
                },
                Mark::PhaseBand {
                    schematic: s2,
                    phase: p2,
                    from: f2,
                    ..
                },
            ) => (s1, p1, f1) == (s2, p2, f2),
            (
                Mark::RangeLines {
                    schematic: s1,
                    since: d1,
                    ..
                },
                Mark::RangeLines {
                    schematic: s2,
                    since: d2,
                    ..
                },
            ) => (s1, d1) == (s2, d2),
            _ => self == other,
        }
    }

    /// Why the engine placed it: the rule it met and the days supporting it.
    pub fn why(&self) -> String {
        match self {
            Mark::Event { event, dates, .. } => with_support(event.rule(), dates, "with", ", "),
            Mark::PhaseBand { phase, .. } => phase_rule(*phase).to_owned(),
            Mark::RangeLines { schematic, .. } => match schematic {
                SchematicKind::Accumulation => {
                    "range lines: support at the selling climax's low, resistance at the automatic rally's high"
                }
                SchematicKind::Distribution => {
                    "range lines: resistance at the buying climax's high, support at the automatic reaction's low"
                }
            }
            .to_owned(),
            Mark::Trigger {
                family,
                trigger,
                score,
                ..
            } => format!(
                "{} trigger: {} (score {score:.2})",
                match family {
                    TriggerFamily::Structure => "structure (§15.4)",
                    TriggerFamily::L4 => "L4 (§15.1)",
                },
                trigger_rule(*trigger)
            ),
        }
    }

    /// [`Mark::why`] in Chinese.
    pub fn why_zh(&self) -> String {
        match self {
            Mark::Event { event, dates, .. } => with_support(event.rule_zh(), dates, "参照", "、"),
            Mark::PhaseBand { phase, .. } => phase_rule_zh(*phase).to_owned(),
            Mark::RangeLines { schematic, .. } => match schematic {
                SchematicKind::Accumulation => "区间线：支撑为恐慌抛售低点，阻力为自动反弹高点",
                SchematicKind::Distribution => "区间线：阻力为抢购高潮高点，支撑为自动回落低点",
            }
            .to_owned(),
            Mark::Trigger {
                family,
                trigger,
                score,
                ..
            } => format!(
                "{}触发：{}（分数 {score:.2}）",
                match family {
                    TriggerFamily::Structure => "结构",
                    TriggerFamily::L4 => "L4 ",
                },
                trigger_rule_zh(*trigger)
            ),
        }
    }
}

fn with_support(rule: &str, dates: &[u32], word: &str, sep: &str) -> String {
    let support: Vec<String> = dates.iter().skip(1).map(|d| iso(*d)).collect();
    match (support.is_empty(), word) {
        (true, _) => rule.to_owned(),
        (false, "参照") => format!("{rule}（参照 {}）", support.join(sep)),
        (false, _) => format!("{rule} ({word} {})", support.join(sep)),
    }
}

fn phase_rule(p: Phase) -> &'static str {
    match p {
        Phase::A => "phase A: opened by the climax",
        Phase::B => "phase B: opened by the first secondary test",
        Phase::C => "phase C: opened by the spring (or UTAD)",
        Phase::D => "phase D: opened by the sign of strength (or weakness) or its last point",
        Phase::E => {
            "phase E: ten closes above resistance, the last ≥10% above it, since the run began"
        }
    }
}

fn phase_rule_zh(p: Phase) -> &'static str {
    match p {
        Phase::A => "A 阶段：由高潮开启",
        Phase::B => "B 阶段：由首次二次测试开启",
        Phase::C => "C 阶段：由弹簧（或 UTAD）开启",
        Phase::D => "D 阶段：由强势（或弱势）信号或其最后支撑/供应点开启",
        Phase::E => "E 阶段：连续 10 日收在阻力之上且最后一日高出 10% 以上，自该段起点起",
    }
}

fn trigger_rule(t: TriggerKind) -> &'static str {
    match t {
        TriggerKind::Spring => "Spring — a dip under support closed back above it on volume",
        TriggerKind::Lps => "LPS — a quiet pullback that holds support",
        TriggerKind::Evr => "EVR — heavy volume with little price progress, the low held",
        TriggerKind::Compression => "Compression — volume and daily range contracting",
        TriggerKind::Sos => "SOS — a strong up day on heavy volume at or over resistance",
        TriggerKind::TrendPullback => "TrendPB — a low-volume pullback in an uptrend",
    }
}

fn trigger_rule_zh(t: TriggerKind) -> &'static str {
    match t {
        TriggerKind::Spring => "Spring——跌破支撑后放量收回",
        TriggerKind::Lps => "LPS——缩量回踩守住支撑",
        TriggerKind::Evr => "EVR——放量而价格少动，低点守住",
        TriggerKind::Compression => "Compression——量能与振幅同步收缩",
        TriggerKind::Sos => "SOS——放量大涨站上阻力",
        TriggerKind::TrendPullback => "TrendPB——上升趋势中的缩量回踩",
    }
}

/// How a mark stopped being placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MarkEnd {
    /// Replaced on `on` by a mark of the same kind in the same place (see [`Mark::same_place`]).
    Revised { on: u32 },
    /// Gone on `on` with nothing in its place.
    Removed { on: u32 },
}

impl MarkEnd {
    /// The first as-of date that no longer shows the mark in this form.
    pub fn on(self) -> u32 {
        match self {
            MarkEnd::Revised { on } | MarkEnd::Removed { on } => on,
        }
    }
}

/// A mark with the dates it was known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct KnownMark {
    pub mark: Mark,
    /// See [`Mark::bar_date`].
    pub bar_date: u32,
    /// The first as-of date on which the engine, given only the bars up to it, placed it —
    /// in this form or in an earlier one it revised into this (an open phase band that a new
    /// phase closed keeps the date the band was first drawn).
    pub known_on: u32,
    /// The first as-of date of this form; later than `known_on` when it is a revision.
    pub since: u32,
    /// When a later bar revised or removed it; `None` while it still stands at the last bar
    /// (triggers never end: they are facts about the day they fired).
    pub ended: Option<MarkEnd>,
}

impl KnownMark {
    /// Whether the engine showed this mark, in this form, as of `date`.
    pub fn known_at(&self, date: u32) -> bool {
        self.since <= date && self.ended.is_none_or(|e| e.on() > date)
    }
}

/// A known mark with why the engine placed it, as the CLI's `--json` and the app show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ExplainedMark {
    pub mark: Mark,
    pub bar_date: u32,
    pub known_on: u32,
    pub since: u32,
    pub ended: Option<MarkEnd>,
    /// [`Mark::why`].
    pub why: String,
    /// [`Mark::why_zh`].
    pub why_zh: String,
}

impl From<&KnownMark> for ExplainedMark {
    fn from(k: &KnownMark) -> Self {
        ExplainedMark {
            why: k.mark.why(),
            why_zh: k.mark.why_zh(),
            mark: k.mark.clone(),
            bar_date: k.bar_date,
            known_on: k.known_on,
            since: k.since,
            ended: k.ended,
        }
    }
}

/// Every mark the engine placed over a tape, in the order they became known.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, specta::Type)]
pub struct Replay {
    pub marks: Vec<KnownMark>,
}

impl Replay {
    /// The marks the engine showed as of `date`: the standing schematic marks in their form on
    /// that date, and every trigger that had fired by then.
    pub fn known_at(&self, date: u32) -> impl Iterator<Item = &KnownMark> {
        self.marks.iter().filter(move |m| m.known_at(date))
    }

    /// When the engine first placed `mark` (see [`KnownMark::known_on`]), `None` if it never
    /// placed it in this form.
    pub fn known_on(&self, mark: &Mark) -> Option<u32> {
        self.marks
            .iter()
            .find(|k| k.mark == *mark)
            .map(|k| k.known_on)
    }
}

/// A schematic's marks as the engine places them: its events, its phase bands and its range
/// lines.
pub fn schematic_marks(s: &Schematic) -> Vec<Mark> {
    let mut out = Vec::new();
    push_schematic_marks(s, &mut out);
    out
}

fn push_schematic_marks(s: &Schematic, out: &mut Vec<Mark>) {
    let kind = s.kind;
    out.extend(s.events.iter().map(|e| Mark::Event {
        schematic: kind,
        event: e.event,
        date: e.date,
        price: e.price,
        dates: e.dates.clone(),
    }));
    out.extend(s.phase_spans().into_iter().map(|p| Mark::PhaseBand {
        schematic: kind,
        phase: p.phase,
        from: p.from,
        until: p.until,
    }));
    let climax = s.events.first().map(|e| e.date);
    let ar = s
        .events
        .iter()
        .find(|e| e.event == EventCode::AR)
        .map(|e| e.date);
    if let Some(since) = ar.or(climax) {
        out.push(Mark::RangeLines {
            schematic: kind,
            support: s.support,
            resistance: s.resistance,
            since,
        });
    }
}

/// The schematic marks (events, phase bands, range lines of both schematics) the engine places
/// from these bars alone, as of the last bar.
pub fn standing_marks(bars: &[Bar]) -> Vec<Mark> {
    structure_marks(&wyckoff_structure(bars))
}

/// The schematic marks of a structure already built (see [`standing_marks`]).
pub fn structure_marks(st: &WyckoffStructure) -> Vec<Mark> {
    let mut out = Vec::new();
    for s in [&st.accumulation, &st.distribution].into_iter().flatten() {
        push_schematic_marks(s, &mut out);
    }
    out
}

/// The triggers that fire on the last bar of `bars`: structure triggers, then L4 triggers.
pub fn fired_triggers(bars: &[Bar], l4: &L4Config) -> Vec<Mark> {
    let Some(last) = bars.last() else {
        return Vec::new();
    };
    let mark = |family| {
        move |t: crate::Trigger| Mark::Trigger {
            family,
            trigger: t.kind,
            date: last.date,
            score: t.score,
            dates: t.dates,
        }
    };
    let mut out: Vec<Mark> = structure_triggers(bars)
        .triggers
        .into_iter()
        .map(mark(TriggerFamily::Structure))
        .collect();
    out.extend(
        l4_triggers(bars, l4)
            .into_iter()
            .map(mark(TriggerFamily::L4)),
    );
    out
}

/// Replays the engine over every prefix of `bars` (ascending by date): for each as-of close,
/// the marks placed from the bars up to it alone, diffed against the day before.
pub fn replay(bars: &[Bar], l4: &L4Config) -> Replay {
    replay_with(bars, |prefix| fired_triggers(prefix, l4))
}

/// The marks known at the close of `target` — the last bar on or before it — each
/// explained, from the bars up to that close alone (`wyckoff events`, the MCP tool
/// `stock_events`): that close and its marks, or `None` when `target` is before the first
/// bar or after the last.
pub fn known_as_of(bars: &[Bar], target: u32, l4: &L4Config) -> Option<(u32, Vec<ExplainedMark>)> {
    let (first, last) = (bars.first()?, bars.last()?);
    if target < first.date || target > last.date {
        return None;
    }
    // Only the bars up to the close: what the engine could know then, nothing after.
    let upto = &bars[..bars.partition_point(|b| b.date <= target)];
    let close = upto.last().map_or(target, |b| b.date);
    let marks = replay(upto, l4)
        .known_at(close)
        .map(ExplainedMark::from)
        .collect();
    Some((close, marks))
}

/// [`replay`] without the triggers: the schematic marks only (what the stock chart draws).
pub fn replay_schematics(bars: &[Bar]) -> Replay {
    replay_with(bars, |_| Vec::new())
}

fn replay_with(bars: &[Bar], triggers: impl Fn(&[Bar]) -> Vec<Mark>) -> Replay {
    let mut marks: Vec<KnownMark> = Vec::new();
    // Indices into `marks` of the schematic marks standing as of the previous close.
    let mut standing: Vec<usize> = Vec::new();
    for end in 1..=bars.len() {
        let prefix = &bars[..end];
        let date = bars[end - 1].date;
        let now = standing_marks(prefix);
        // Marks revised today: their replacements keep their known-on date.
        let mut revised: Vec<usize> = Vec::new();
        standing.retain(|&i| {
            let m = &mut marks[i];
            if now.contains(&m.mark) {
                return true;
            }
            m.ended = Some(if now.iter().any(|n| n.same_place(&m.mark)) {
                revised.push(i);
                MarkEnd::Revised { on: date }
            } else {
                MarkEnd::Removed { on: date }
            });
            false
        });
        for mark in now {
            if !standing.iter().any(|&i| marks[i].mark == mark) {
                let known_on = revised
                    .iter()
                    .find(|&&i| marks[i].mark.same_place(&mark))
                    .map_or(date, |&i| marks[i].known_on);
                standing.push(marks.len());
                marks.push(KnownMark {
                    bar_date: mark.bar_date(),
                    mark,
                    known_on,
                    since: date,
                    ended: None,
                });
            }
        }
        marks.extend(triggers(prefix).into_iter().map(|mark| KnownMark {
            bar_date: mark.bar_date(),
            mark,
            known_on: date,
            since: date,
            ended: None,
        }));
    }
    Replay { marks }
}

#[cfg(test)]
mod tests;
