//! Concept strength: how each concept block (概念, a TDX install's block_gn.dat) did over
//! the last 5 trading days against the market, from the cached bars alone. A stock sits in
//! many concepts, so this is a table of its own, not the industry sector table.
//!
//! A stock's 5-day return on day D is its close on D over its close 5 bars earlier, minus
//! one (forward-adjusted bars, so a split does not read as a fall); it counts when its last
//! bar on or before D is D itself and it has those 5 bars before. A concept's return is the
//! equal-weight mean of its members' that count, the market's the same mean over every stock
//! that counts, and the relative figure the concept's minus the market's, in percentage
//! points.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use specta::Type;
use wyckoff_engine::StockSeries;

use crate::facade::{MarketData, MarketError};
use crate::industries::{LoadInfo, MemberKind, pick_load};

/// Bars back of the short window.
pub const WINDOW: usize = 5;

/// One concept on the day.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ConceptRow {
    pub concept: String,
    /// Members in the block (A-share stocks).
    pub members: u32,
    /// Of them, those with a 5-day return on the day.
    pub counted: u32,
    /// Their equal-weight mean 5-day return, percent.
    pub return_5d_pct: f64,
    /// `return_5d_pct` minus the market's, percentage points.
    pub relative_5d_pct: f64,
    /// Counted members that closed up on the day.
    pub up_today: u32,
}

/// Every concept on one day, strongest first.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ConceptTable {
    /// `YYYYMMDD`.
    pub date: u32,
    /// Stocks with a 5-day return on the day, and their mean, percent.
    pub market_stocks: u32,
    pub market_return_5d_pct: Option<f64>,
    pub rows: Vec<ConceptRow>,
}

/// A stock's 5-day return on `day` (fraction) and whether it closed up, when it counts.
fn short_return(s: &StockSeries, day: u32) -> Option<(f64, bool)> {
    let at = s.bars.partition_point(|b| b.date <= day).checked_sub(1)?;
    let bar = s.bars.get(at)?;
    if bar.date != day || at < WINDOW {
        return None;
    }
    let base = s.bars[at - WINDOW].close;
    let prev = s.bars[at - 1].close;
    (base > 0.0 && bar.close.is_finite()).then(|| (bar.close / base - 1.0, bar.close > prev))
}

/// The concept table of `day`: `members` maps each concept to its six-digit codes.
pub fn concept_table(
    stocks: &[StockSeries],
    members: &BTreeMap<String, Vec<String>>,
    day: u32,
) -> ConceptTable {
    let returns: HashMap<&str, (f64, bool)> = stocks
        .iter()
        .filter_map(|s| short_return(s, day).map(|r| (s.code.as_str(), r)))
        .collect();
    let market = (!returns.is_empty())
        .then(|| returns.values().map(|(r, _)| r).sum::<f64>() / returns.len() as f64);
    let mut rows: Vec<ConceptRow> = members
        .iter()
        .filter_map(|(concept, codes)| {
            let got: Vec<(f64, bool)> = codes
                .iter()
                .filter_map(|c| returns.get(c.as_str()).copied())
                .collect();
            let m = market?;
            if got.is_empty() {
                return None;
            }
            let mean = got.iter().map(|(r, _)| r).sum::<f64>() / got.len() as f64;
            Some(ConceptRow {
                concept: concept.clone(),
                members: codes.len() as u32,
                counted: got.len() as u32,
                return_5d_pct: mean * 100.0,
                relative_5d_pct: (mean - m) * 100.0,
                up_today: got.iter().filter(|(_, up)| *up).count() as u32,
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        b.relative_5d_pct
            .total_cmp(&a.relative_5d_pct)
            .then_with(|| a.concept.cmp(&b.concept))
    });
    ConceptTable {
        date: day,
        market_stocks: returns.len() as u32,
        market_return_5d_pct: market.map(|m| m * 100.0),
        rows,
    }
}

/// The concept table as a front end shows it: the blocks' load and whether it is later
/// than the day.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ConceptStrength {
    /// `None`: no concept blocks on record (a TDX install's block_gn.dat gives them).
    pub load: Option<LoadInfo>,
    /// The load is dated after the day (none earlier exists): today's blocks stand in.
    pub load_later: bool,
    /// `None` with no blocks, or no bars cached on or before the day.
    pub table: Option<ConceptTable>,
}

impl MarketData {
    /// Concept strength on the last cached trading day on or before `as_of` (the newest
    /// when `None`), over the concept blocks that day reads.
    pub async fn concept_strength(
        &self,
        as_of: Option<u32>,
    ) -> Result<ConceptStrength, MarketError> {
        let store = self.industries();
        let loads: Vec<LoadInfo> = store
            .loads()
            .await?
            .into_iter()
            .filter(|l| l.kind == MemberKind::Concept)
            .collect();
        let (Some(load), later) = pick_load(&loads, as_of) else {
            return Ok(ConceptStrength {
                load: None,
                load_later: false,
                table: None,
            });
        };
        let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for m in store.members(load.id).await? {
            if m.kind == MemberKind::Concept {
                members.entry(m.name).or_default().push(m.code);
            }
        }
        let loaded = self.universe(as_of, Some(WINDOW + 2)).await?;
        let table = loaded
            .report
            .last_date
            .map(|day| concept_table(&loaded.universe.stocks, &members, day));
        Ok(ConceptStrength {
            load: Some(load.clone()),
            load_later: later,
            table,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_engine::{Bar, Board};

    fn stock(code: &str, closes: &[(u32, f64)]) -> StockSeries {
        StockSeries {
            code: code.into(),
            name: code.into(),
            board: Board::Main,
            industry: None,
            market_cap_yi: None,
            list_date: None,
            bars: closes
                .iter()
                .map(|&(date, close)| Bar {
                    date,
                    open: close,
                    high: close,
                    low: close,
                    close,
                    volume: 1.0,
                    amount: 1.0,
                    turnover: None,
                })
                .collect(),
            name_history: Vec::new(),
            delist_date: None,
            cap_history: Vec::new(),
        }
    }

    fn days(closes: &[f64]) -> Vec<(u32, f64)> {
        closes
            .iter()
            .enumerate()
            .map(|(i, &c)| (20240101 + i as u32, c))
            .collect()
    }

    #[test]
    fn a_concepts_5_day_return_against_the_markets_by_hand() {
        // day 20240106: six bars each; A +10 %, B -10 %, C +20 % (up today), D too short
        let stocks = [
            stock("000001", &days(&[10.0, 9.0, 9.0, 9.0, 12.0, 11.0])),
            stock("000002", &days(&[10.0, 10.0, 10.0, 10.0, 8.0, 9.0])),
            stock("000003", &days(&[5.0, 5.0, 5.0, 5.0, 5.0, 6.0])),
            stock("000004", &days(&[10.0, 11.0])[..]),
        ];
        let mut members = BTreeMap::new();
        members.insert(
            "甲".to_string(),
            vec!["000001".to_string(), "000003".to_string()],
        );
        members.insert(
            "乙".to_string(),
            vec!["000002".to_string(), "000004".to_string()],
        );
        members.insert("丙".to_string(), vec!["000004".to_string()]);
        let t = concept_table(&stocks, &members, 20240106);
        // market: (10 - 10 + 20) / 3
        let market = 20.0 / 3.0;
        assert_eq!(t.market_stocks, 3);
        assert!((t.market_return_5d_pct.unwrap() - market).abs() < 1e-9);
        let got: Vec<(&str, u32, u32, u32)> = t
            .rows
            .iter()
            .map(|r| (r.concept.as_str(), r.members, r.counted, r.up_today))
            .collect();
        // 丙 has no member that counts: no row
        assert_eq!(got, [("甲", 2, 2, 1), ("乙", 2, 1, 1)]);
        assert!((t.rows[0].return_5d_pct - 15.0).abs() < 1e-9);
        assert!((t.rows[0].relative_5d_pct - (15.0 - market)).abs() < 1e-9);
        assert!((t.rows[1].relative_5d_pct - (-10.0 - market)).abs() < 1e-9);
        // a day some stock has no bar on: it does not count that day
        let t = concept_table(&stocks, &members, 20240107);
        assert_eq!((t.market_stocks, t.rows.len()), (0, 0));
        assert_eq!(t.market_return_5d_pct, None);
    }
}
