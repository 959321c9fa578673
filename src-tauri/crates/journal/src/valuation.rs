//! The journal report over the market store: the unadjusted closes the ledger is valued at
//! ([`MarketData::raw_closes`], which names the days an adjusted close stands in) and the
//! adjusted bars the exit signal reads, both from the daily cache.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::Serialize;
use wyckoff_market::MarketData;

use wyckoff_engine::Instrument;
use wyckoff_market::code::Exchange;
use wyckoff_market::instrument_bars::{InstrumentStore, instrument_exchange, no_closes_reason};
use wyckoff_market::raw::{RawBasis, RawCloses};

use crate::prices::{Close, Closes, CodeCloses, PriceBasis};
use crate::review::{self, DayValue, ExitReview, Performance};
use crate::store::{JournalError, JournalStore, JournalSummary, names_of};

/// The market's unadjusted closes as the ledger takes them.
pub fn closes_of(raw: &RawCloses) -> CodeCloses {
    CodeCloses {
        closes: raw
            .closes
            .iter()
            .map(|c| Close {
                date: c.date,
                close_e6: c.close_e6,
                exact: c.exact,
            })
            .collect(),
        basis: match &raw.basis {
            RawBasis::Exact => PriceBasis::Exact,
            basis => PriceBasis::Approximate {
                reason: basis.to_string(),
            },
        },
        none_because: None,
    }
}

/// The unadjusted closes of each code among `codes`: a stock's from the daily cache, an
/// ETF's, LOF's or bond's from the instrument bars (unadjusted as fetched, so exact); a
/// repo or a code of no known kind has none (a repo is valued at its principal), and a
/// bond whose exchange neither its digits nor a statement (`stated`) settle has none,
/// with that reason.
pub async fn valuation_closes(
    md: &MarketData,
    codes: &BTreeSet<&str>,
    stated: &BTreeMap<String, Exchange>,
) -> Result<Closes, JournalError> {
    let mut out = Closes::new();
    let instruments = InstrumentStore::new(md.pool().clone());
    for code in codes {
        if matches!(
            Instrument::of_code(code),
            Instrument::Fund | Instrument::Bond
        ) {
            if instrument_exchange(code, stated.get(*code).copied()).is_none() {
                out.insert((*code).to_owned(), CodeCloses::none(no_closes_reason(code)));
                continue;
            }
            let closes = instruments
                .closes(code)
                .await
                .map_err(|e| JournalError::Market(e.to_string()))?;
            if !closes.is_empty() {
                out.insert((*code).to_owned(), CodeCloses::exact(&closes));
            }
            continue;
        }
        if wyckoff_market::StockCode::parse(code).is_err() {
            continue;
        }
        let raw = md
            .raw_closes(code, 0..=u32::MAX)
            .await
            .map_err(|e| JournalError::Market(e.to_string()))?;
        out.insert((*code).to_owned(), closes_of(&raw));
    }
    Ok(out)
}

/// Everything the journal shows: entries and fills, derived positions, cash and realised
/// P/L, the daily NAV with its return and drawdown, and the exit reviews.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct JournalReport {
    pub summary: JournalSummary,
    pub values: Vec<DayValue>,
    pub performance: Performance,
    pub reviews: Vec<ExitReview>,
}

pub async fn report(
    md: &MarketData,
    store: &JournalStore,
    now: DateTime<Utc>,
) -> Result<JournalReport, JournalError> {
    let summary = store.summary(now).await?;
    let entries = store.entries(now).await?;
    let codes: BTreeSet<&str> = entries.iter().filter_map(|e| e.kind.code()).collect();
    let closes = valuation_closes(md, &codes, &store.stated_exchanges().await?).await?;
    let bars = md
        .cached_stock_bars(codes.iter().map(|c| c.to_string()).collect())
        .await
        .map_err(|e| JournalError::Market(e.to_string()))?;
    let (values, performance) = review::daily_values(&entries, &closes)?;
    Ok(JournalReport {
        reviews: review::exit_reviews(&entries, &names_of(&entries), &closes, &bars),
        values,
        performance,
        summary,
    })
}
