//! The Wyckoff engine: pure, deterministic functions over slices of daily bars.
//!
//! No I/O and no clock: data comes from the `market` crate, and "as of" a date means the caller
//! slices the bars up to it (the last bar is the as-of bar). Bars are ascending by date.
//! Nothing here returns NaN or infinity: a value that cannot be computed from the given bars is
//! `None` (JSON `null`) or an explicit status such as `数据不足` / `unavailable`.
//!
//! Formulas follow REFERENCE.md §15 with the 0.9.467 behaviour of its version note; items marked QUIRK there are
//! fixed (the holiday grace counts skipped weekdays, so a weekend is not a holiday).
//!
//! Entry points:
//! * [`diagnose`] / [`diagnose_with`] — the `analyze_stock(mode="diagnose")` output (§14.1).
//! * [`wyckoff_diagnose`] — trading range + structure triggers + stage + event (§14.12).
//! * [`market_regime`] — regime from a benchmark index, breadth optional (§15.7).
//! * [`Funnel`] / [`screen`] — the whole-market screening funnel L1–L5 (§15.1, §14.8).
//! * [`wyckoff_structure`] — SC/AR/ST/BC/Spring/SOS/LPS/UTAD labels and phase A–E (our rules,
//!   documented in [`phases`]).
//! * [`Cancel`] — long work ([`Funnel`], [`backtest`]) stops at the next check once its caller
//!   cancels.
//! * Building blocks: [`indicators`], [`identify_trading_range`], [`structure_triggers`],
//!   [`l4_triggers`], [`accum_stage`], [`exit_signal`], [`l2_channels`],
//!   [`classify_wyckoff_event`].

pub mod accumulation;
pub mod alerts;
pub mod as_of;
pub mod backtest;
mod bar;
pub mod board;
pub mod cancel;
pub mod channels;
pub mod codes;
pub mod dates;
pub mod diagnosis;
pub mod events;
pub mod exits;
pub mod fees;
pub mod funnel;
pub mod indicators;
pub mod known_on;
pub mod lanes;
pub mod limits;
pub mod phases;
pub mod regime;
pub mod risk_limits;
pub mod sectors;
pub mod sizing;
#[cfg(feature = "synthetic")]
pub mod synthetic;
pub mod timeframes;
pub mod track;
pub mod trading_range;
pub mod triggers;
pub mod universe;

pub use accumulation::{Stage, accum_stage};
pub use as_of::AsOfNotes;
pub use bar::Bar;
pub use board::{Board, Instrument};
pub use cancel::{Cancel, Cancelled, Never};
pub use channels::{ChannelConfig, ChannelReport, Track, l2_channels};
pub use diagnosis::{Diagnosis, DiagnosisConfig, Holding, diagnose, diagnose_with};
pub use events::{WyckoffDiagnose, WyckoffEvent, classify_wyckoff_event, wyckoff_diagnose};
pub use exits::{ExitConfig, ExitKind, ExitSignal, exit_signal};
pub use funnel::{
    BoardFilter, Candidate, Funnel, FunnelConfig, FunnelError, FunnelResult, ScreenArgs, screen,
};
pub use lanes::{CandidateLane, LaneContext, candidate_lane};
pub use limits::{LimitDay, LimitSeries, limit_series};
pub use phases::{Phase, WyckoffStructure, wyckoff_structure};
pub use regime::{Breadth, MarketRegime, Regime, RegimeReason, market_regime};
pub use trading_range::{TradingRange, identify_trading_range};
pub use triggers::{L4Config, Trigger, TriggerKind, l4_triggers, structure_triggers};
pub use universe::{AsOf, CapSample, NameSpan};
pub use universe::{Benchmarks, StockSeries, Universe, bars_as_of};
