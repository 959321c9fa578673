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

/// A one-price ("frozen") limit day: range ≤ 1 % and |open − close| ≤ 1 % (REFERENCE §15.1 L4 Spring).
const FROZEN_MAX_FRAC: f64 = 0.01;

impl Bar {
    /// True range against the previous close (just high − low for the first bar).
    pub fn true_range(&self, prev_close: Option<f64>) -> f64 {
        let hl = self.high - self.low;
        match prev_close {
            Some(pc) => hl.max((self.high - pc).abs()).max((self.low - pc).abs()),
            None => hl,
        }
    }

    /// Day change in percent against `prev_close`; `None` when the previous close is not positive.
    pub fn pct_change(&self, prev_close: f64) -> Option<f64> {
        (prev_close > 0.0).then(|| (self.close / prev_close - 1.0) * 100.0)
    }

    /// One-price limit day on which nobody could trade the pattern (REFERENCE §15.1 L4).
    pub fn is_frozen(&self) -> bool {
        if self.close <= 0.0 {
            return false;
        }
        (self.high - self.low) / self.close <= FROZEN_MAX_FRAC
            && (self.open - self.close).abs() / self.close <= FROZEN_MAX_FRAC
    }

    /// Upper shadow as a fraction of the day's range (0 when the range is zero).
    pub fn upper_shadow_frac(&self) -> f64 {
        let range = self.high - self.low;
        if range <= 0.0 {
            return 0.0;
        }
        (self.high - self.open.max(self.close)) / range
    }

    /// Where the close sits in the day's range: 0 = at the low, 1 = at the high (0.5 if no range).
    pub fn close_position(&self) -> f64 {
        let range = self.high - self.low;
        if range <= 0.0 {
            return 0.5;
        }
        ((self.close - self.low) / range).clamp(0.0, 1.0)
    }
}
