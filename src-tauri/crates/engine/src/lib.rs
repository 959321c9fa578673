//! The Wyckoff engine: pure, deterministic functions over slices of daily bars.
//! No I/O and no clock here: data comes from the `market` crate, and "as of" a date means the
//! caller slices the bars up to it.

pub mod accumulation;
mod bar;
pub mod board;
pub mod channels;
pub mod dates;
pub mod diagnosis;
pub mod events;
pub mod exits;
pub mod indicators;
pub mod phases;
pub mod regime;
pub mod trading_range;
pub mod triggers;

pub use accumulation::{Stage, accum_stage};
pub use bar::Bar;
pub use board::Board;
pub use channels::{ChannelConfig, ChannelReport, Track, l2_channels};
pub use diagnosis::{Diagnosis, DiagnosisConfig, Holding, diagnose, diagnose_with};
pub use events::{WyckoffDiagnose, WyckoffEvent, classify_wyckoff_event, wyckoff_diagnose};
pub use exits::{ExitConfig, ExitKind, ExitSignal, exit_signal};
pub use phases::{Phase, WyckoffStructure, wyckoff_structure};
pub use regime::{Breadth, MarketRegime, Regime, market_regime};
pub use trading_range::{TradingRange, identify_trading_range};
pub use triggers::{L4Config, Trigger, TriggerKind, l4_triggers, structure_triggers};
