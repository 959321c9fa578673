//! The account ledger as the front ends ask for it: the report (entries, positions, cash,
//! the daily NAV at unadjusted closes with its return and drawdown, the exit reviews),
//! a fill, and the other entries a person records by hand (a 银证转账 in or out). The
//! journal does the work; the desk supplies its store, market data and clock.

use wyckoff_journal::{
    EntryKind, EntryOutcome, JournalError, JournalReport, JournalSummary, NewEntry, NewFill,
    RecordOutcome, Source,
};

use crate::Desk;

/// Which way a bank transfer (银证转账) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CashDirection {
    /// Bank → broker (or an opening balance).
    In,
    /// Broker → bank.
    Out,
}

impl Desk {
    /// The journal report as of the desk's clock.
    pub async fn journal_report(&self) -> Result<JournalReport, JournalError> {
        let md = self.market();
        wyckoff_journal::report(md, self.journal(), md.clock().now()).await
    }

    /// The entries, positions, cash and realised P/L (no prices read).
    pub async fn journal_summary(&self) -> Result<JournalSummary, JournalError> {
        self.journal().summary(self.market().clock().now()).await
    }

    /// Records a buy or sell; the position is re-derived.
    pub async fn record_fill(
        &self,
        fill: &NewFill,
        source: Source,
    ) -> Result<RecordOutcome, JournalError> {
        self.journal()
            .record(fill, source, self.market().clock().now())
            .await
    }

    /// Records a bank transfer of `amount_fen` on `date` (`YYYYMMDD`; today, Beijing
    /// time, when `None`).
    pub async fn record_cash(
        &self,
        direction: CashDirection,
        amount_fen: i64,
        date: Option<u32>,
        source: Source,
    ) -> Result<EntryOutcome, JournalError> {
        let md = self.market();
        let date = date
            .unwrap_or_else(|| wyckoff_market::date::to_yyyymmdd(md.clock().now_beijing().date()));
        let kind = match direction {
            CashDirection::In => EntryKind::CashIn { amount_fen },
            CashDirection::Out => EntryKind::CashOut { amount_fen },
        };
        self.record_entry(
            &NewEntry {
                date,
                name: String::new(),
                kind,
            },
            source,
        )
        .await
    }

    /// Records any entry that is not a trade (a transfer, a dividend, a note…).
    pub async fn record_entry(
        &self,
        entry: &NewEntry,
        source: Source,
    ) -> Result<EntryOutcome, JournalError> {
        self.journal()
            .record_entry(entry, source, self.market().clock().now())
            .await
    }
}
