//! The account journal: a ledger of entries — trades with their fees to the fen (computed
//! by the engine's fee schedule, [`wyckoff_engine::fees`], when not given), bank transfers,
//! dividends and interest, taxes, bonus and rights shares, reverse repos — recorded from
//! the portfolio page, `wyckoff portfolio` or the `record_fill` tool (behind approval), or
//! imported from a broker's statement; cash, positions, average cost and realised P/L
//! derived from them; the daily NAV at unadjusted closes, its time-weighted return and
//! drawdown, and each sale's exit review.

pub mod broker;
pub mod entry;
pub mod import_store;
pub mod ledger;
pub mod money;
pub mod prices;
pub mod review;
pub mod store;
pub mod valuation;

pub use broker::MAX_BYTES as STATEMENT_MAX_BYTES;
pub use broker::{Difference, DifferenceKind, Reconciliation};
pub use entry::{Entry, EntryKind, Instrument};
pub use import_store::{ImportOutcome, KindCount};
pub use ledger::{Side, Totals};
pub use prices::{ApproximateCode, Close, Closes, CodeCloses, PriceBasis};
pub use review::{
    AfterSale, DayValue, ExitAtSale, ExitReview, HoldingValue, Performance, Valuation,
};
pub use store::{
    DerivedPosition, EntriesImported, EntryOutcome, EntryRow, FillRow, ImpliedTransfer, ImportRow,
    JournalError, JournalStore, JournalSummary, NewEntry, NewFill, RecordOutcome, Source,
};
pub use valuation::{JournalReport, report, valuation_closes};
pub use wyckoff_engine::fees::{Fees, fees_for};
