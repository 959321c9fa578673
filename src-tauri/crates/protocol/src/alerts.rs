//! Alerts on the watchlist and holdings: the stored rules, what fired and with
//! which figures. The same JSON goes to the app and to `wyckoff alerts … --json`.

use serde::{Deserialize, Serialize};
use specta::Type;

/// What a rule watches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AlertTarget {
    /// One stock (six digits).
    Stock { code: String },
    /// Every stock in the watchlist at check time.
    Watchlist,
    /// Every holding in the portfolio at check time.
    Portfolio,
}

/// The condition a rule checks on the evaluated bar. Prices are closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AlertCondition {
    /// The close is at or above `level`.
    PriceAbove { level: f64 },
    /// The close is at or below `level`.
    PriceBelow { level: f64 },
    /// The day's change (close against the previous close) is at least `pct` percent.
    ChangeAbove { pct: f64 },
    /// The day's change is at most `pct` percent (e.g. −5).
    ChangeBelow { pct: f64 },
    /// The day's volume is at least `k` times the mean of the 20 bars before it.
    VolumeRatio { k: f64 },
    /// A Wyckoff schematic event became known on the evaluated bar; `event` names one
    /// (SC, AR, ST, Spring, SOS, LPS, BC, UTAD, SOW, LPSY), `None` for any.
    Event { event: Option<String> },
    /// The engine's active schematic or phase differs from the previous bar's.
    PhaseChange,
    /// The diagnosis' health differs from the previous bar's.
    HealthChange,
    /// A holding's close is at or below the stop-loss set on it in the portfolio (checked
    /// for every holding with a stop, no rule needed).
    StopLoss,
    /// A holding's close is at or above the target (take-profit) price set on it in the
    /// portfolio (checked for every holding with a target, no rule needed).
    TargetReached,
}

impl AlertCondition {
    /// A short name for lists and messages.
    pub fn kind(&self) -> &'static str {
        match self {
            AlertCondition::PriceAbove { .. } => "price_above",
            AlertCondition::PriceBelow { .. } => "price_below",
            AlertCondition::ChangeAbove { .. } => "change_above",
            AlertCondition::ChangeBelow { .. } => "change_below",
            AlertCondition::VolumeRatio { .. } => "volume_ratio",
            AlertCondition::Event { .. } => "event",
            AlertCondition::PhaseChange => "phase_change",
            AlertCondition::HealthChange => "health_change",
            AlertCondition::StopLoss => "stop_loss",
            AlertCondition::TargetReached => "target_reached",
        }
    }
}

/// A stored rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AlertRule {
    pub id: i64,
    pub target: AlertTarget,
    pub condition: AlertCondition,
    /// Trading days before the same rule may fire again on the same stock (1: once per
    /// trading day).
    pub cooldown_days: u32,
    pub enabled: bool,
    /// RFC 3339 (UTC).
    pub created_at: String,
}

/// A schematic (accumulation or distribution) and its phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PhaseState {
    /// `accumulation` or `distribution`.
    pub schematic: String,
    /// A–E.
    pub phase: String,
}

/// One schematic event that became known on the evaluated bar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct KnownEvent {
    /// SC, AR, ST, Spring, SOS, LPS, BC, UTAD, SOW, LPSY.
    pub event: String,
    /// `accumulation` or `distribution`.
    pub schematic: String,
    /// The bar carrying the label (YYYY-MM-DD); it can be before the evaluated bar (an ST
    /// needs two later bars to be known).
    pub bar_date: String,
    /// The price the label points at.
    pub price: f64,
    /// The close it became known on (YYYY-MM-DD): the evaluated bar.
    pub known_on: String,
}

/// The exact figures that made a rule fire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AlertFigures {
    PriceAbove {
        close: f64,
        level: f64,
    },
    PriceBelow {
        close: f64,
        level: f64,
    },
    ChangeAbove {
        change_pct: f64,
        threshold_pct: f64,
        close: f64,
        prev_close: f64,
    },
    ChangeBelow {
        change_pct: f64,
        threshold_pct: f64,
        close: f64,
        prev_close: f64,
    },
    VolumeRatio {
        volume: f64,
        /// Mean volume of the 20 bars before the evaluated one.
        avg_volume_20: f64,
        ratio: f64,
        k: f64,
    },
    Event {
        events: Vec<KnownEvent>,
    },
    PhaseChange {
        /// The previous bar's reading (`None`: no schematic then).
        from: Option<PhaseState>,
        to: Option<PhaseState>,
        prev_date: String,
    },
    HealthChange {
        from: String,
        to: String,
        prev_date: String,
        /// The engine's reasons for the new health.
        reasons: Vec<String>,
    },
    StopLoss {
        close: f64,
        stop_loss: f64,
    },
    TargetReached {
        close: f64,
        target: f64,
    },
}

/// Where a fired alert went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Recorded only: no push channel is set up.
    Recorded,
    /// Waiting in the outbox for at least one channel.
    Pending,
    Delivered,
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Recorded => "recorded",
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<DeliveryStatus> {
        [
            DeliveryStatus::Recorded,
            DeliveryStatus::Pending,
            DeliveryStatus::Delivered,
            DeliveryStatus::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// A rule that fired on a stock's bar, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct FiredAlert {
    pub id: i64,
    /// `None` for a holding's stop-loss or target (from the portfolio, no rule).
    pub rule_id: Option<i64>,
    pub code: String,
    pub name: Option<String>,
    /// The bar it fired on (YYYY-MM-DD): the data's date.
    pub bar_date: String,
    pub condition: AlertCondition,
    pub figures: AlertFigures,
    /// Channels it was handed to.
    pub delivered_to: Vec<String>,
    pub delivery: DeliveryStatus,
    /// RFC 3339 (UTC).
    pub created_at: String,
    /// Fired during the session on the day's partial bar (a live quote, not the close):
    /// the quote's Beijing time, `YYYY-MM-DD HH:MM`. `None` for a check on daily closes.
    #[serde(default)]
    pub intraday_at: Option<String>,
}

/// A rule that would have fired but its cooldown holds it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SuppressedAlert {
    pub rule_id: Option<i64>,
    pub code: String,
    pub bar_date: String,
    /// The bar of the earlier firing that holds it back (YYYY-MM-DD).
    pub fired_on: String,
    pub cooldown_days: u32,
}

/// Why a rule could not be evaluated on a stock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MissingData {
    /// No cached bar at or before the as-of date.
    NoBars,
    /// The rule needs `needed` bars up to the evaluated one; the cache has `have`.
    TooFewBars { needed: u32, have: u32 },
    /// The 20 bars before the evaluated one traded no volume: no ratio to compare.
    NoVolume,
    /// The previous close is not positive: no day change.
    NoPreviousClose,
}

/// A rule that could not be evaluated on a stock, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct UnevaluatedAlert {
    pub rule_id: Option<i64>,
    pub code: String,
    pub missing: MissingData,
}

/// What a check read from today's data instead of the checked day's own, and the stocks it
/// left out as delisted by then (the alerts' mirror of the engine's as-of notes). A check
/// of the data's newest day reads today's names as that day's own: nothing falls back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct AlertAsOfNotes {
    /// Stocks checked (those left out as delisted are not among them).
    pub stocks: u32,
    /// Of them, those whose name — and so their ST status — on a past day is today's: no
    /// recorded name covers the day. Their alerts carry today's name.
    pub st_from_today: u32,
    /// Stocks a rule targets that were delisted before the day checked: not evaluated on
    /// their old last bar.
    pub delisted: u32,
    /// Their codes, ascending.
    pub delisted_codes: Vec<String>,
}

/// What one `check` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AlertCheckReport {
    /// The as-of date asked for (YYYY-MM-DD); `None`: each stock's latest bar.
    pub as_of: Option<String>,
    /// The newest bar any evaluated stock had (YYYY-MM-DD): the data's date.
    pub data_date: Option<String>,
    pub rules: u32,
    /// Distinct stocks evaluated.
    pub stocks: u32,
    pub fired: Vec<FiredAlert>,
    pub suppressed: Vec<SuppressedAlert>,
    pub unevaluated: Vec<UnevaluatedAlert>,
    /// What fell back to today's data, and the delisted stocks left out.
    #[serde(default)]
    pub as_of_notes: AlertAsOfNotes,
    /// [`Self::as_of_notes`] in words, one line each; empty when every fact was the day's own
    /// and nothing was left out.
    #[serde(default)]
    pub notes: Vec<String>,
}
