//! Market data: codes, the trading calendar, bundled offline data, live sources, the SQLite
//! bar cache, incremental sync and the portfolio store, behind the `MarketData` facade.
//!
//! Typical use (tools crate, CLI):
//!
//! ```text
//! let md = MarketData::open_with(MarketConfig::from_env(&wyckoff_home)?).await?;
//! let r = md.daily_bars("600519", None).await?;      // BarsResult { bars, source, as_of, data_status, notes, .. }
//! let idx = md.index_bars("sse", Some(20200616)).await?;
//! let hits = md.search("payh", 10);                  // code / name / pinyin
//! let rep = md.sync(SyncTarget::Codes(vec!["600519".into()]), &mut |ev| { /* progress */ }).await?;
//! let raw = md.raw_closes("601318", 20190102..=20191231).await?; // unadjusted, for money
//! let st = md.status().await?;                       // per-code coverage + freshness
//! let u = md.load_universe(None).await?;             // whole market → engine Universe + report
//! let imp = md.import_csv(path, &mut |ev| { .. }).await?; // CSV file or folder, all-or-nothing per file
//! let view = md.portfolio().view().await?;
//! ```
//!
//! Offline (no source configured, or every source unreachable) reads come from the cache,
//! which is seeded on first open with the bundled real data (8 stocks 2005–2020, the SSE
//! calendar, a 2023 code list; see `bundled::NOTICE`). What is missing is reported in
//! `data_status`/`notes`, never invented. Bars are stored as one checksummed columnar
//! BLOB per symbol (`series`), so the whole market reads back in one row per stock.

pub mod breaker;
pub mod bundled;
pub mod cache;
pub mod calendar;
pub mod calendar_store;
pub mod cap_history;
pub mod clock;
pub mod code;
pub mod concepts;
pub mod date;
pub mod facade;
pub mod history;
pub mod import;
pub mod industries;
pub mod industry_spans;
pub mod instrument_bars;
pub mod membership;
pub mod meta;
pub mod minute;
pub mod minute_chart;
pub mod minute_sync;
pub mod name_import;
pub mod notes;
pub mod portfolio;
pub mod quote;
pub mod quote_session;
pub mod ratelimit;
pub mod raw;
pub mod sanity;
pub mod search;
pub mod series;
pub mod sources;
pub mod sync;
pub mod tail_cache;
pub mod tdx;
#[cfg(feature = "test-support")]
pub mod test_support;
pub mod universe;
pub mod watchlist;

pub use calendar::TradingCalendar;
pub use clock::{Clock, ManualClock, SystemClock};
pub use code::{Board, CodeError, Exchange, IndexCode, StockCode, Symbol, SymbolKind};
pub use facade::{
    BarsResult, CodeStatus, Credentials, DataStatus, MarketConfig, MarketData, MarketError,
    MetaResult, SourceSpec, StatusReport, SyncPlan, SyncReport, SyncTarget,
};
pub use history::{HistoryStore, HistorySync, ListStatus, Listing, NameChange, SnapshotInfo};
pub use import::{FileOutcome, FileStatus, ImportEvent, ImportReport};
pub use meta::StockInfo;
pub use name_import::{NamesImportError, NamesImportReport, NamesImportStatus};
pub use notes::DataNote;
pub use portfolio::{PortfolioError, PortfolioOp, PortfolioStore, PortfolioView, Position};
pub use raw::{RawBasis, RawClose, RawCloses, RawGap, RawGapReason, price_e6};
pub use search::{SearchHit, StockDirectory};
pub use sync::{Freshness, SyncEvent, SyncOutcome, SyncStatus};
pub use tdx::{TdxError, TdxEvent, TdxImportReport};
pub use universe::{LoadedUniverse, SkipReason, SkippedStock, UniverseReport, load_universe};
pub use wyckoff_engine::Bar;
