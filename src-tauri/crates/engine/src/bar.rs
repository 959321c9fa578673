use serde::{Deserialize, Serialize};

/// One daily bar. Prices are forward-adjusted (qfq) unless the source says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bar {
    /// Trading day as `YYYYMMDD` (e.g. 20200616); integer so bars are `Copy` and cheap to compare.
    pub date: u32,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
    /// Shares (not lots).
    pub volume: f64,
    /// Traded value in CNY.
    pub amount: f64,
    /// Turnover rate in percent, when the source provides it.
    pub turnover: Option<f64>,
}
