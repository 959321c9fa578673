//! Classic Wyckoff events (SC, AR, ST, Spring, SOS, LPS; BC, AR, ST, UTAD, SOW, LPSY) and the
//! schematic phase A–E, each label with the bar dates that support it so a chart can draw it.
//!
//! The reference leaves these to the LLM (REFERENCE §15.2); the rules here are our own, chosen
//! to be simple, deterministic and testable. Accumulation rules, over the last
//! [`SCHEMATIC_LOOKBACK`] bars:
//!
//! * **SC** (selling climax): a down bar (close < previous close) with volume ≥ 2× the mean of
//!   the prior 20 bars (and ≥ 1.5× the prior 60 when they exist), a true range ≥ 1.5× the prior
//!   20-bar ATR, a close in the lowest 35 % of its range, and a low ≥ 20 % under the highest high
//!   of the prior 60 bars. The latest such bar is taken; if others qualify within the 5 bars
//!   before it, the one with the lowest low wins (a climax can span two days). A close more than
//!   10 % under the SC low afterwards invalidates the structure (the decline resumed).
//! * **AR** (automatic rally): the highest close within 15 bars after the SC, at least 3 % above
//!   the SC close. Support = SC low, resistance = AR high.
//! * **Spring**: after the AR, a low that undercuts support by more than 0.5 % (but not by 10 %)
//!   and a close back above support within 3 bars.
//! * **ST** (secondary test): after the AR and before any SOS, a swing low (±2 bars) within ±3 %
//!   of the SC low on less than 0.7× the SC volume, that is not a Spring. Up to 3 are labelled.
//! * **SOS** (sign of strength): the first up close above resistance after the AR on ≥ 1.5× the
//!   prior 20-bar mean volume.
//! * **LPS** (last point of support): after the SOS, the first swing low (±2 bars) that holds
//!   ≥ 95 % of resistance on ≤ 0.6× the SOS volume.
//! * **Phase**: A after SC (and AR); B once an ST exists; C on a Spring; D on an SOS or LPS;
//!   E when, at least 10 bars after the SOS, the last 10 closes are all above resistance and the
//!   last close is ≥ 10 % above it.
//!
//! Distribution is the mirror image: the same rules run on the reciprocal price series
//! (1/price, highs and lows swapped), which turns BC into SC, UTAD into Spring, SOW into SOS and
//! LPSY into LPS. Percent thresholds therefore apply to the reciprocal (a 20 % fall of 1/price is
//! a 25 % advance of price).

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::indicators::{mean_by, true_range_at};

/// Bars searched for a climax.
pub const SCHEMATIC_LOOKBACK: usize = 250;
const CLIMAX_VOL_20: f64 = 2.0;
const CLIMAX_VOL_60: f64 = 1.5;
const CLIMAX_RANGE_ATR: f64 = 1.5;
const CLIMAX_CLOSE_POS: f64 = 0.35;
const CLIMAX_PRIOR_MOVE: f64 = 0.20;
const CLIMAX_PRIOR_WINDOW: usize = 60;
const CLIMAX_CLUSTER: usize = 5;
const CLIMAX_INVALIDATE: f64 = 0.90;
const AR_WINDOW: usize = 15;
const AR_MIN_BOUNCE: f64 = 0.03;
const ST_BAND: f64 = 0.03;
const ST_MAX_VOL: f64 = 0.7;
const ST_MAX_COUNT: usize = 3;
const SWING: usize = 2;
const SPRING_MIN_UNDERCUT: f64 = 0.005;
const SPRING_MAX_UNDERCUT: f64 = 0.10;
const SPRING_RECLAIM_BARS: usize = 3;
const SOS_VOL: f64 = 1.5;
const LPS_HOLD: f64 = 0.95;
const LPS_MAX_VOL: f64 = 0.6;
const MARKUP_BARS: usize = 10;
const MARKUP_ABOVE: f64 = 1.10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
pub enum EventCode {
    SC,
    AR,
    ST,
    Spring,
    SOS,
    LPS,
    BC,
    UTAD,
    SOW,
    LPSY,
}

impl EventCode {
    /// Why a bar gets this label: the rule it met (the rules above, in brief).
    pub fn rule(self) -> &'static str {
        match self {
            EventCode::SC => {
                "selling climax: down bar on ≥2× the 20-day mean volume, range ≥1.5× ATR, close in the lowest 35% of the range, ≥20% under the 60-day high"
            }
            EventCode::BC => {
                "buying climax: up bar on ≥2× the 20-day mean volume, wide range, close near the high, after a ≥25% advance"
            }
            EventCode::AR => {
                "automatic rally/reaction: the extreme close within 15 bars after the climax; it sets the other side of the range"
            }
            EventCode::ST => {
                "secondary test: a swing back to within 3% of the climax on under 0.7× its volume"
            }
            EventCode::Spring => {
                "spring: a dip more than 0.5% under support, reclaimed within 3 bars"
            }
            EventCode::UTAD => {
                "upthrust after distribution: a push over resistance that fails back inside within 3 bars"
            }
            EventCode::SOS => {
                "sign of strength: first up close above resistance on ≥1.5× the 20-day mean volume"
            }
            EventCode::SOW => {
                "sign of weakness: first down close below support on ≥1.5× the 20-day mean volume"
            }
            EventCode::LPS => {
                "last point of support: first swing low after the SOS holding ≥95% of resistance on ≤0.6× the SOS volume"
            }
            EventCode::LPSY => {
                "last point of supply: first swing high after the SOW failing near support on ≤0.6× the SOW volume"
            }
        }
    }

    /// [`EventCode::rule`] in Chinese.
    pub fn rule_zh(self) -> &'static str {
        match self {
            EventCode::SC => {
                "恐慌抛售（SC）：放量 ≥ 20 日均量 2 倍的阴线，振幅 ≥ 1.5 倍 ATR，收在当日区间最低 35% 内，较 60 日高点跌 ≥ 20%"
            }
            EventCode::BC => {
                "抢购高潮（BC）：放量 ≥ 20 日均量 2 倍的阳线，大振幅，收近最高，此前已涨 ≥ 25%"
            }
            EventCode::AR => "自动反弹/回落（AR）：高潮后 15 根 K 线内的极端收盘，确定区间的另一边",
            EventCode::ST => "二次测试（ST）：回到高潮价 3% 以内，成交量不足高潮的 0.7 倍",
            EventCode::Spring => "弹簧（Spring）：跌破支撑超过 0.5%，3 根 K 线内收回",
            EventCode::UTAD => "派发后上冲（UTAD）：冲过阻力，3 根 K 线内跌回区间",
            EventCode::SOS => "强势信号（SOS）：首次放量（≥ 20 日均量 1.5 倍）收在阻力之上",
            EventCode::SOW => "弱势信号（SOW）：首次放量（≥ 20 日均量 1.5 倍）收在支撑之下",
            EventCode::LPS => {
                "最后支撑点（LPS）：SOS 后首个波段低点守住阻力的 95%，成交量 ≤ SOS 的 0.6 倍"
            }
            EventCode::LPSY => {
                "最后供应点（LPSY）：SOW 后首个波段高点在支撑附近受阻，成交量 ≤ SOW 的 0.6 倍"
            }
        }
    }

    fn mirrored(self) -> EventCode {
        match self {
            EventCode::SC => EventCode::BC,
            EventCode::Spring => EventCode::UTAD,
            EventCode::SOS => EventCode::SOW,
            EventCode::LPS => EventCode::LPSY,
            other => other,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
pub enum Phase {
    A,
    B,
    C,
    D,
    E,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SchematicKind {
    Accumulation,
    Distribution,
}

/// One labelled event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchematicEvent {
    pub event: EventCode,
    /// The bar carrying the label.
    pub date: u32,
    /// The price the label points at (a low for SC/ST/Spring/LPS, a high for BC/UTAD/…).
    pub price: f64,
    /// Dates that support the label, the labelled bar first (e.g. an ST lists its SC).
    pub dates: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schematic {
    pub kind: SchematicKind,
    pub phase: Phase,
    /// Date of the event that opened the current phase.
    pub phase_since: u32,
    /// Range bounds (SC low / AR high, or AR low / BC high); `None` before the AR.
    pub support: Option<f64>,
    pub resistance: Option<f64>,
    pub events: Vec<SchematicEvent>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WyckoffStructure {
    /// The schematic whose climax is the more recent one.
    pub active: Option<SchematicKind>,
    pub phase: Option<Phase>,
    pub accumulation: Option<Schematic>,
    pub distribution: Option<Schematic>,
}

/// One phase as a band of dates: from the event that opened it until the next phase began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PhaseSpan {
    pub phase: Phase,
    pub from: u32,
    /// The date the next phase began (exclusive); `None` for the current phase.
    pub until: Option<u32>,
}

impl Schematic {
    /// Phase bands from the events that open each phase (A: climax, B: first ST, C: Spring or
    /// UTAD, D: SOS/SOW or LPS/LPSY, E: since the schematic says so), in date order.
    pub fn phase_spans(&self) -> Vec<PhaseSpan> {
        let first = |codes: &[EventCode]| {
            self.events
                .iter()
                .filter(|e| codes.contains(&e.event))
                .map(|e| e.date)
                .min()
        };
        let mut starts: Vec<(Phase, u32)> = [
            (Phase::A, first(&[EventCode::SC, EventCode::BC])),
            (Phase::B, first(&[EventCode::ST])),
            (Phase::C, first(&[EventCode::Spring, EventCode::UTAD])),
            (
                Phase::D,
                first(&[
                    EventCode::SOS,
                    EventCode::SOW,
                    EventCode::LPS,
                    EventCode::LPSY,
                ]),
            ),
            (
                Phase::E,
                (self.phase == Phase::E).then_some(self.phase_since),
            ),
        ]
        .into_iter()
        .filter_map(|(p, d)| d.map(|d| (p, d)))
        .collect();
        starts.sort_by_key(|(_, d)| *d);
        starts
            .iter()
            .enumerate()
            .map(|(i, &(phase, from))| PhaseSpan {
                phase,
                from,
                until: starts.get(i + 1).map(|(_, next)| *next),
            })
            .collect()
    }
}

/// Label the schematics as of the last bar.
pub fn wyckoff_structure(bars: &[Bar]) -> WyckoffStructure {
    let view = &bars[bars.len().saturating_sub(SCHEMATIC_LOOKBACK)..];
    let accumulation = detect(view).map(|r| r.into_schematic(view, SchematicKind::Accumulation));
    let distribution = mirror(view)
        .and_then(|m| detect(&m).map(|r| r.into_schematic(&m, SchematicKind::Distribution)));
    let climax = |s: &Option<Schematic>| s.as_ref().and_then(|s| s.events.first()).map(|e| e.date);
    let active = match (climax(&accumulation), climax(&distribution)) {
        (Some(a), Some(d)) if d > a => Some(SchematicKind::Distribution),
        (Some(_), _) => Some(SchematicKind::Accumulation),
        (None, Some(_)) => Some(SchematicKind::Distribution),
        (None, None) => None,
    };
    let phase = match active {
        Some(SchematicKind::Accumulation) => accumulation.as_ref().map(|s| s.phase),
        Some(SchematicKind::Distribution) => distribution.as_ref().map(|s| s.phase),
        None => None,
    };
    WyckoffStructure {
        active,
        phase,
        accumulation,
        distribution,
    }
}

/// The events of both schematics read on `bars` as of the last bar, as (bar index, event,
/// price) in bar order: for a series whose bars are not days (minute bars). The detector
/// reads bars by position only; the bars' own dates are not read, so any timestamps will
/// do.
pub fn events_by_index(bars: &[Bar]) -> Vec<(usize, EventCode, f64)> {
    let indexed: Vec<Bar> = bars
        .iter()
        .enumerate()
        .map(|(i, b)| Bar {
            date: u32::try_from(i).unwrap_or(u32::MAX),
            ..*b
        })
        .collect();
    if indexed.is_empty() {
        return Vec::new();
    }
    let st = wyckoff_structure(&indexed);
    let mut out: Vec<(usize, EventCode, f64)> = [st.accumulation, st.distribution]
        .into_iter()
        .flatten()
        .flat_map(|s| s.events)
        .map(|e| (e.date as usize, e.event, e.price))
        .collect();
    out.sort_by_key(|(i, _, _)| *i);
    out
}

/// Reciprocal price series (highs and lows swapped); `None` if any price is not positive.
fn mirror(bars: &[Bar]) -> Option<Vec<Bar>> {
    bars.iter()
        .map(|b| {
            let ok = b.open > 0.0 && b.high > 0.0 && b.low > 0.0 && b.close > 0.0;
            ok.then(|| Bar {
                open: 1.0 / b.open,
                high: 1.0 / b.low,
                low: 1.0 / b.high,
                close: 1.0 / b.close,
                ..*b
            })
        })
        .collect()
}

/// Indices found by the accumulation rules.
struct Found {
    sc: usize,
    ar: Option<usize>,
    sts: Vec<usize>,
    spring: Option<(usize, usize)>,
    sos: Option<usize>,
    lps: Option<usize>,
    phase: Phase,
    phase_at: usize,
}

fn prior_mean(bars: &[Bar], i: usize, k: usize, f: impl Fn(&Bar) -> f64) -> Option<f64> {
    (i >= k).then(|| mean_by(&bars[i - k..i], f)).flatten()
}

fn is_climax(bars: &[Bar], i: usize) -> bool {
    if i < 20 {
        return false;
    }
    let b = bars[i];
    // Cheapest tests first: this runs on every bar of the lookback, twice.
    if b.close >= bars[i - 1].close || b.close_position() > CLIMAX_CLOSE_POS {
        return false;
    }
    let v20 = prior_mean(bars, i, 20, |b| b.volume);
    if !v20.is_some_and(|m| m > 0.0 && b.volume >= CLIMAX_VOL_20 * m) {
        return false;
    }
    if let Some(m) = prior_mean(bars, i, 60, |b| b.volume)
        && b.volume < CLIMAX_VOL_60 * m
    {
        return false;
    }
    let atr: f64 = (i - 20..i).map(|k| true_range_at(bars, k)).sum::<f64>() / 20.0;
    if !(atr > 0.0 && true_range_at(bars, i) >= CLIMAX_RANGE_ATR * atr) {
        return false;
    }
    let from = i.saturating_sub(CLIMAX_PRIOR_WINDOW);
    let prior_high = bars[from..i]
        .iter()
        .map(|b| b.high)
        .fold(f64::MIN, f64::max);
    prior_high > 0.0 && (prior_high - b.low) / prior_high >= CLIMAX_PRIOR_MOVE
}

fn is_swing_low(bars: &[Bar], i: usize) -> bool {
    if i < SWING || i + SWING >= bars.len() {
        return false;
    }
    bars[i - SWING..=i + SWING]
        .iter()
        .all(|o| bars[i].low <= o.low)
}

fn detect(bars: &[Bar]) -> Option<Found> {
    let n = bars.len();
    let latest = (0..n).rev().find(|&i| is_climax(bars, i))?;
    let sc = (latest.saturating_sub(CLIMAX_CLUSTER)..=latest)
        .filter(|&i| is_climax(bars, i))
        .fold(latest, |best, i| {
            if bars[i].low < bars[best].low {
                i
            } else {
                best
            }
        });
    let sc_bar = bars[sc];
    if bars[sc + 1..]
        .iter()
        .any(|b| b.close < sc_bar.low * CLIMAX_INVALIDATE)
    {
        return None;
    }
    let mut f = Found {
        sc,
        ar: None,
        sts: Vec::new(),
        spring: None,
        sos: None,
        lps: None,
        phase: Phase::A,
        phase_at: sc,
    };
    let ar_end = (sc + AR_WINDOW).min(n - 1);
    let ar = (sc + 1..=ar_end).fold(None, |best: Option<usize>, i| match best {
        Some(b) if bars[b].close >= bars[i].close => Some(b),
        _ => Some(i),
    });
    let Some(ar) = ar.filter(|&i| bars[i].close >= sc_bar.close * (1.0 + AR_MIN_BOUNCE)) else {
        return Some(f);
    };
    f.ar = Some(ar);
    let support = sc_bar.low;
    let resistance = bars[ar].high;

    f.sos = (ar + 1..n).find(|&i| {
        let b = bars[i];
        b.close > resistance
            && b.close > bars[i - 1].close
            && prior_mean(bars, i, 20, |b| b.volume)
                .is_some_and(|m| m > 0.0 && b.volume >= SOS_VOL * m)
    });
    let before_sos = f.sos.unwrap_or(n);
    f.spring = (ar + 1..before_sos).find_map(|i| {
        let low = bars[i].low;
        let undercut = low < support * (1.0 - SPRING_MIN_UNDERCUT)
            && low >= support * (1.0 - SPRING_MAX_UNDERCUT);
        if !undercut {
            return None;
        }
        (i..(i + SPRING_RECLAIM_BARS).min(n))
            .find(|&k| bars[k].close > support)
            .map(|k| (i, k))
    });
    let spring_at = f.spring.map(|s| s.0);
    f.sts = (ar + 1..before_sos)
        .filter(|&i| {
            Some(i) != spring_at
                && is_swing_low(bars, i)
                && (bars[i].low / support - 1.0).abs() <= ST_BAND
                && bars[i].low >= support * (1.0 - SPRING_MIN_UNDERCUT)
                && bars[i].volume < ST_MAX_VOL * sc_bar.volume
        })
        .take(ST_MAX_COUNT)
        .collect();
    if let Some(sos) = f.sos {
        let sos_vol = bars[sos].volume;
        f.lps = (sos + 1..n).find(|&i| {
            is_swing_low(bars, i)
                && bars[i].low >= resistance * LPS_HOLD
                && bars[i].volume <= LPS_MAX_VOL * sos_vol
        });
    }
    (f.phase, f.phase_at) = if let Some(sos) = f.sos {
        let tail_start = n.saturating_sub(MARKUP_BARS);
        let markup = n >= sos + 1 + MARKUP_BARS
            && bars[tail_start..].iter().all(|b| b.close > resistance)
            && bars[n - 1].close >= resistance * MARKUP_ABOVE;
        if markup {
            // E runs from the first close of the unbroken run above resistance, so its start
            // stays put while the markup lasts (the last 10 bars' start would move daily).
            let run_start = (sos + 1..tail_start)
                .rev()
                .take_while(|&i| bars[i].close > resistance)
                .last()
                .unwrap_or(tail_start);
            (Phase::E, run_start)
        } else {
            (Phase::D, sos)
        }
    } else if let Some((s, _)) = f.spring {
        (Phase::C, s)
    } else if let Some(&st) = f.sts.first() {
        (Phase::B, st)
    } else {
        (Phase::A, sc)
    };
    Some(f)
}

impl Found {
    fn into_schematic(self, bars: &[Bar], kind: SchematicKind) -> Schematic {
        let mirrored = kind == SchematicKind::Distribution;
        // Prices go back through the reciprocal for the mirrored series.
        let px = |x: f64| if mirrored { 1.0 / x } else { x };
        let code = |c: EventCode| if mirrored { c.mirrored() } else { c };
        let sc = bars[self.sc];
        let mut events = vec![SchematicEvent {
            event: code(EventCode::SC),
            date: sc.date,
            price: px(sc.low),
            dates: vec![sc.date],
        }];
        let mut add = |c: EventCode, i: usize, price: f64, support: &[usize]| {
            let mut dates = vec![bars[i].date];
            dates.extend(support.iter().map(|&k| bars[k].date));
            events.push(SchematicEvent {
                event: code(c),
                date: bars[i].date,
                price: px(price),
                dates,
            });
        };
        if let Some(ar) = self.ar {
            add(EventCode::AR, ar, bars[ar].high, &[self.sc]);
        }
        for &st in &self.sts {
            add(EventCode::ST, st, bars[st].low, &[self.sc]);
        }
        if let Some((s, k)) = self.spring {
            let support: &[usize] = if k != s { &[k, self.sc] } else { &[self.sc] };
            add(EventCode::Spring, s, bars[s].low, support);
        }
        if let (Some(sos), Some(ar)) = (self.sos, self.ar) {
            add(EventCode::SOS, sos, bars[sos].close, &[ar]);
        }
        if let (Some(lps), Some(sos)) = (self.lps, self.sos) {
            add(EventCode::LPS, lps, bars[lps].low, &[sos]);
        }
        events[1..].sort_by_key(|e| e.date);
        let lo = px(sc.low);
        let hi = self.ar.map(|ar| px(bars[ar].high));
        let (support, resistance) = match (mirrored, hi) {
            (false, h) => (Some(lo), h),
            (true, h) => (h, Some(lo)),
        };
        Schematic {
            kind,
            phase: self.phase,
            phase_since: bars[self.phase_at].date,
            support,
            resistance,
            events,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
