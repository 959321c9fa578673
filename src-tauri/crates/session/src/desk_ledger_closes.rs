//! Bringing the closes the ledger is valued at up to date, for every code it has held:
//! a stock's daily bars (with their unadjusted closes) through the market's sync, an ETF's,
//! LOF's or bond's unadjusted bars from Eastmoney ([`wyckoff_market::instrument_bars`]).
//! Repos need none (valued at their principal) and are listed as such.

use std::collections::BTreeSet;

use wyckoff_engine::Instrument;
use wyckoff_journal::JournalError;
/// The account's lines at the last day valued, as the report carries them.
pub use wyckoff_journal::{HoldingValue, Instrument as LineInstrument, Valuation};
use wyckoff_market::SyncTarget;
pub use wyckoff_market::instrument_bars::{InstrumentSyncOutcome, InstrumentSyncStatus};
use wyckoff_market::instrument_bars::{fund_source, sync_instruments};
use wyckoff_market::sync::SyncStatus;

use crate::Desk;

impl Desk {
    /// Syncs the closes of every code the ledger has held, stocks first; one outcome per
    /// code, in code order within each kind.
    pub async fn sync_ledger_closes(&self) -> Result<Vec<InstrumentSyncOutcome>, JournalError> {
        let md = self.market();
        let entries = self.journal().entries(md.clock().now()).await?;
        let codes: BTreeSet<String> = entries
            .iter()
            .filter_map(|e| e.kind.code())
            .map(str::to_owned)
            .collect();
        let (stocks, others): (Vec<String>, Vec<String>) = codes
            .into_iter()
            .partition(|c| Instrument::of_code(c) == Instrument::Stock);
        let mut out = Vec::with_capacity(stocks.len() + others.len());
        if !stocks.is_empty() {
            let report = md
                .sync(SyncTarget::Codes(stocks), &mut |_| {})
                .await
                .map_err(|e| JournalError::Market(e.to_string()))?;
            out.extend(report.outcomes.into_iter().map(|o| InstrumentSyncOutcome {
                code: o.code,
                status: match o.status {
                    SyncStatus::UpToDate | SyncStatus::NoNewData => InstrumentSyncStatus::UpToDate,
                    SyncStatus::Updated { new_bars, .. } => InstrumentSyncStatus::Updated {
                        new_bars: u32::try_from(new_bars).unwrap_or(u32::MAX),
                        fetched: u32::try_from(new_bars).unwrap_or(u32::MAX),
                        rejected: Vec::new(),
                    },
                    SyncStatus::Failed { error } => InstrumentSyncStatus::Failed { error },
                },
                last_close: o.last_date.map(wyckoff_market::date::iso),
            }));
        }
        let source = fund_source(md);
        out.extend(
            sync_instruments(md, &others, source.as_ref())
                .await
                .map_err(|e| JournalError::Market(e.to_string()))?,
        );
        Ok(out)
    }
}
