//! The account journal: fills — buys and sells with their fees to the fen, computed by the
//! engine's fee schedule ([`wyckoff_engine::fees`], the backtest's) when not given —
//! recorded from the portfolio page, `wyckoff portfolio fill` or the `record_fill` tool
//! (behind approval), or imported from a broker's 交割单; positions, average cost and
//! realised P/L derived from them; the daily account value and each sale's exit review from
//! the cached bars.

pub mod broker_csv;
pub mod entry;
pub mod ledger;
pub mod money;
pub mod review;
pub mod store;

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;
use wyckoff_engine::Bar;
use wyckoff_market::MarketData;
use wyckoff_market::cache::BarTable;

pub use entry::{Entry, EntryKind, Instrument};
pub use ledger::Side;
pub use review::{AfterSale, DayValue, ExitAtSale, ExitReview};
pub use store::{
    DerivedPosition, FillRow, ImportOutcome, JournalError, JournalStore, JournalSummary, NewFill,
    RecordOutcome, Source,
};
pub use wyckoff_engine::fees::{Fees, fees_for};

/// The cached daily bars of each code (none for a code the cache does not have).
pub async fn cached_bars(
    md: &MarketData,
    codes: BTreeSet<&str>,
) -> Result<HashMap<String, Vec<Bar>>, JournalError> {
    let mut out = HashMap::new();
    for code in codes {
        let Ok(parsed) = wyckoff_market::StockCode::parse(code) else {
            continue;
        };
        let loaded = md
            .store()
            .load_bars(BarTable::Stocks, &parsed.symbol().key(), None)
            .await
            .map_err(|e| JournalError::Market(e.to_string()))?;
        out.insert(code.to_owned(), loaded.bars);
    }
    Ok(out)
}

/// Everything the journal shows: fills, derived positions, realised P/L, the daily value
/// and the exit reviews.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct JournalReport {
    pub summary: JournalSummary,
    pub values: Vec<DayValue>,
    pub reviews: Vec<ExitReview>,
}

pub async fn report(
    md: &MarketData,
    store: &JournalStore,
    now: DateTime<Utc>,
) -> Result<JournalReport, JournalError> {
    let summary = store.summary(now).await?;
    let (fills, names) = store.ledger_fills(now).await?;
    let codes: BTreeSet<&str> = fills.iter().map(|f| f.code.as_str()).collect();
    let bars = cached_bars(md, codes).await?;
    Ok(JournalReport {
        values: review::daily_values(&fills, &bars),
        reviews: review::exit_reviews(&fills, &names, &bars),
        summary,
    })
}
