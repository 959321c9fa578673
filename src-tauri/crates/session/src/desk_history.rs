//! Stock history as of a date, as a front end reaches it: a user's `date,code,name` file
//! imported, the names and listing recorded for a stock, and the vendor's history fetched.
//! The work is the market data's own; the desk only hands it out.

use std::path::Path;

use wyckoff_market::history::{CodeHistory, HistoryCounts, HistorySync, HistorySyncError};
use wyckoff_market::industries::{IndustriesImportError, IndustriesImportReport, LoadInfo};
use wyckoff_market::name_import::{NamesImportError, NamesImportReport};
use wyckoff_market::{MarketError, StockCode};

use crate::Desk;

impl Desk {
    /// Imports a CSV of names in force from each date (`date,code,name`): all of it, or
    /// nothing with every bad line named; rows already recorded are counted, not added.
    pub async fn import_names(&self, path: &Path) -> Result<NamesImportReport, NamesImportError> {
        self.market().import_names(path).await
    }

    /// Imports industry and concept membership (a `code,industry` CSV, or a TDX install's
    /// folder or files), dated today: all of it, or nothing with every bad line named; the
    /// membership the latest load already holds is not stored again.
    pub async fn import_industries(
        &self,
        path: &Path,
    ) -> Result<IndustriesImportReport, IndustriesImportError> {
        self.market().import_industries(path).await
    }

    /// The membership loads on record, oldest first.
    pub async fn industry_loads(&self) -> Result<Vec<LoadInfo>, MarketError> {
        Ok(self.market().industries().loads().await?)
    }

    /// The names and listing recorded for `code` (any spelling of a stock code).
    pub async fn name_history(&self, code: &str) -> Result<CodeHistory, MarketError> {
        let code = StockCode::parse(code)?;
        Ok(self.market().history().of(code.digits()).await?)
    }

    /// How much history the store holds (spans, listings, snapshots).
    pub async fn history_counts(&self) -> Result<HistoryCounts, MarketError> {
        Ok(self.market().history().counts().await?)
    }

    /// Fetches every name change and listing from a source that has them (Tushare with a
    /// token); `Ok(None)` when none is configured.
    pub async fn sync_stock_history(&self) -> Result<Option<HistorySync>, HistorySyncError> {
        self.market().sync_stock_history().await
    }
}
