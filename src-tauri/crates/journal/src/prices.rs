//! The closes the ledger values holdings at: money needs the prices that were paid, so
//! these are unadjusted (raw) closes in integer millionths, each code's series marked exact
//! or approximate. Approximate means forward-adjusted (qfq) closes stood in — their past
//! values sit below what was traded after every later dividend — and the reason says why;
//! every figure valued with them says it is approximate.

use std::collections::HashMap;

use serde::Serialize;

/// How a code's closes relate to the prices that were traded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PriceBasis {
    /// Unadjusted closes, as traded.
    Exact,
    /// Stand-ins (adjusted closes); the reason names what was missing.
    Approximate { reason: String },
}

/// One day's close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Close {
    /// `YYYYMMDD`.
    pub date: u32,
    /// Millionths of a yuan.
    pub close_e6: i64,
    /// False: an adjusted close stands in for the day's real one.
    pub exact: bool,
}

/// One code's daily closes, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeCloses {
    pub closes: Vec<Close>,
    pub basis: PriceBasis,
    /// Why there are no closes at all, when it is not for want of a sync (a bond whose
    /// exchange nothing names); the holding says it.
    pub none_because: Option<String>,
}

impl CodeCloses {
    /// Closes all exact (a test's or a source's unadjusted series).
    pub fn exact(closes: &[(u32, i64)]) -> CodeCloses {
        CodeCloses {
            closes: closes
                .iter()
                .map(|&(date, close_e6)| Close {
                    date,
                    close_e6,
                    exact: true,
                })
                .collect(),
            basis: PriceBasis::Exact,
            none_because: None,
        }
    }

    /// No closes, for `reason`.
    pub fn none(reason: String) -> CodeCloses {
        CodeCloses {
            closes: Vec::new(),
            basis: PriceBasis::Exact,
            none_because: Some(reason),
        }
    }

    /// The last close on or before `day` (a suspended stock is valued at it).
    pub fn on(&self, day: u32) -> Option<Close> {
        let i = self.closes.partition_point(|c| c.date <= day);
        i.checked_sub(1).map(|i| self.closes[i])
    }

    pub fn is_exact(&self) -> bool {
        self.basis == PriceBasis::Exact
    }
}

/// Closes by code (a code missing has none).
pub type Closes = HashMap<String, CodeCloses>;

/// A code valued at approximate closes, and why.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ApproximateCode {
    pub code: String,
    pub reason: String,
}

/// The codes among `codes` whose closes are approximate, in code order.
pub fn approximate_codes<'a>(
    closes: &Closes,
    codes: impl IntoIterator<Item = &'a str>,
) -> Vec<ApproximateCode> {
    let mut out: Vec<ApproximateCode> = codes
        .into_iter()
        .filter_map(|c| match closes.get(c).map(|s| &s.basis) {
            Some(PriceBasis::Approximate { reason }) => Some(ApproximateCode {
                code: c.to_owned(),
                reason: reason.clone(),
            }),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| a.code.cmp(&b.code));
    out.dedup_by(|a, b| a.code == b.code);
    out
}
