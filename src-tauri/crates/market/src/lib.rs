//! Market data: codes, the trading calendar, bundled offline data, live sources, the SQLite
//! bar cache, incremental sync and the portfolio store, behind the `MarketData` facade.

pub mod breaker;
pub mod bundled;
pub mod cache;
pub mod calendar;
pub mod clock;
pub mod code;
pub mod date;
pub mod facade;
pub mod meta;
pub mod portfolio;
pub mod ratelimit;
pub mod sanity;
pub mod search;
pub mod sources;
pub mod sync;

pub use calendar::TradingCalendar;
pub use clock::{Clock, ManualClock, SystemClock};
pub use code::{Board, CodeError, Exchange, IndexCode, StockCode, Symbol, SymbolKind};
pub use facade::{
    BarsResult, CodeStatus, Credentials, DataStatus, MarketConfig, MarketData, MarketError,
    MetaResult, SourceSpec, StatusReport, SyncReport, SyncTarget,
};
pub use meta::StockInfo;
pub use portfolio::{PortfolioError, PortfolioOp, PortfolioStore, PortfolioView, Position};
pub use search::{SearchHit, StockDirectory};
pub use sync::{Freshness, SyncEvent, SyncOutcome, SyncStatus};
pub use wyckoff_engine::Bar;
