//! The statement's own balances against the ledger: each day's closing 资金余额 and each
//! holding's closing 股份余额 on that day (the last row of the day that states it, in
//! the order things happened) beside what the ledger's entries up to the end of that day
//! derive. Every difference is named (code, day, the statement's figure and the
//! ledger's), so a missing opening balance, a row from before the file or a wrong fee is
//! found where it starts.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::broker::rows::StatementRow;
use crate::entry::Entry;
use crate::ledger::Ledger;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum DifferenceKind {
    /// 资金余额, fen.
    Cash,
    /// 股份余额, shares.
    Shares,
}

/// One balance the statement states, beside the ledger's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct Difference {
    pub kind: DifferenceKind,
    /// The holding's code (`None` for cash).
    pub code: Option<String>,
    /// YYYY-MM-DD.
    pub date: String,
    /// The statement line that states it.
    pub line: u32,
    /// The statement's figure (fen for cash, shares for a holding).
    pub statement: i64,
    /// What the ledger derives at the end of that day.
    pub derived: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, specta::Type)]
pub struct Reconciliation {
    /// The file has a 资金余额 column / a 股份余额 column.
    pub has_cash_balance: bool,
    pub has_shares_balance: bool,
    /// Balances compared (day-ends of cash, day-ends of holdings).
    pub checked: u32,
    /// The last stated balance of cash and of each holding in the file, with the ledger's
    /// (the table a reader checks against the statement's last page).
    pub closing: Vec<Difference>,
    /// Every compared balance that differs, oldest first.
    pub differences: Vec<Difference>,
}

impl Reconciliation {
    pub fn matches(&self) -> bool {
        self.differences.is_empty()
    }
}

/// A balance the statement states at the end of a day: cash (`code: None`, fen) or a
/// holding's shares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct Checkpoint {
    /// `YYYYMMDD`.
    pub date: u32,
    pub code: Option<String>,
    pub line: u32,
    pub stated: i64,
}

/// Each day's last stated balance of cash and of each holding, in the order things
/// happened (`rows` are in that order).
pub fn checkpoints(rows: &[StatementRow]) -> Vec<Checkpoint> {
    let mut points: BTreeMap<(u32, Option<String>), (u32, i64)> = BTreeMap::new();
    for r in rows {
        let Some(date) = r.entries.first().map(|e| e.date) else {
            continue;
        };
        if let Some(c) = r.cash_balance_fen {
            points.insert((date, None), (r.line, c));
        }
        if let Some((code, s)) = &r.shares_balance {
            points.insert((date, Some(code.clone())), (r.line, *s));
        }
    }
    points
        .into_iter()
        .map(|((date, code), (line, stated))| Checkpoint {
            date,
            code,
            line,
            stated,
        })
        .collect()
}

/// Compares the stated balances with what the ledger's replay of `entries` (all the
/// account's, any order) derives at the end of each day: its cash (after any shortfall
/// counted as a transfer in) and its holdings. An entry the replay refuses is passed over
/// here; the import refuses it with its line.
pub fn reconcile(points: &[Checkpoint], entries: &[Entry]) -> Reconciliation {
    let mut points: Vec<&Checkpoint> = points.iter().collect();
    points.sort_by_key(|p| (p.date, p.code.clone()));
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by_key(|e| (e.date, e.id));
    let mut ledger = Ledger::default();
    let mut next = 0;
    let mut out = Reconciliation::default();
    let mut last: BTreeMap<Option<String>, Difference> = BTreeMap::new();
    for p in points {
        while let Some(e) = sorted.get(next).filter(|e| e.date <= p.date) {
            let _ = ledger.apply(e);
            next += 1;
        }
        ledger.end_day();
        let (kind, derived) = match &p.code {
            None => {
                out.has_cash_balance = true;
                (DifferenceKind::Cash, ledger.cash_fen)
            }
            Some(c) => {
                out.has_shares_balance = true;
                (
                    DifferenceKind::Shares,
                    ledger.holdings.get(c).map(|h| h.shares).unwrap_or(0),
                )
            }
        };
        let d = Difference {
            kind,
            code: p.code.clone(),
            date: wyckoff_time::iso(p.date),
            line: p.line,
            statement: p.stated,
            derived,
        };
        out.checked += 1;
        if d.statement != d.derived {
            out.differences.push(d.clone());
        }
        last.insert(p.code.clone(), d);
    }
    out.closing = last.into_values().collect();
    out
}
