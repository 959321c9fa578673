//! Positions, average cost and realised P/L from the fills (moving average cost): a buy
//! adds its amount and fees to the cost basis; a sell takes the sold shares' share of the
//! basis (basis × sold / held, to the millionth) and realises proceeds − its fees − that
//! cost, to the fen; an opening fill states the holding as it stood (shares at an average
//! cost, no fees) and replaces what came before — it is how positions that existed before
//! the journal, or were edited directly, enter it without changing a figure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::money::{E6_PER_FEN, div_round};
use wyckoff_engine::fees::Fees;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Buy,
    Sell,
    /// 期初: the holding as it stood (a position from before the journal or edited by hand).
    Opening,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Buy => "buy",
            Side::Sell => "sell",
            Side::Opening => "opening",
        }
    }

    pub fn parse(s: &str) -> Option<Side> {
        match s.trim().to_ascii_lowercase().as_str() {
            "buy" | "b" | "买" | "买入" => Some(Side::Buy),
            "sell" | "s" | "卖" | "卖出" => Some(Side::Sell),
            "opening" => Some(Side::Opening),
            _ => None,
        }
    }
}

/// One fill as the ledger needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerFill {
    pub id: i64,
    pub code: String,
    pub side: Side,
    /// `YYYYMMDD`.
    pub date: u32,
    pub price_e6: i64,
    pub shares: i64,
    pub amount_fen: i64,
    pub fees: Fees,
}

/// A code's holding after some fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Holding {
    pub shares: i64,
    /// Cost basis in millionths of a yuan (amounts and buy fees, less what sells took).
    pub basis_e6: i128,
    /// The first fill since the holding was last flat (`YYYYMMDD`), 0 when flat.
    pub since: u32,
}

impl Holding {
    /// Average cost per share in millionths (basis / shares, rounded); `None` when flat.
    pub fn avg_cost_e6(&self) -> Option<i64> {
        (self.shares > 0).then(|| div_round(self.basis_e6, i128::from(self.shares)) as i64)
    }

    /// The basis in fen.
    pub fn basis_fen(&self) -> i64 {
        div_round(self.basis_e6, i128::from(E6_PER_FEN)) as i64
    }
}

/// What one sell realised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Realised {
    pub fill_id: i64,
    pub code: String,
    pub date: u32,
    pub shares: i64,
    pub price_e6: i64,
    /// The sold shares' cost (basis share), millionths.
    pub cost_e6: i128,
    pub pnl_fen: i64,
    /// When the holding the sale came out of started (`YYYYMMDD`).
    pub held_since: u32,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LedgerError {
    #[error("{code} {date}：卖出 {sell} 股超过当时持仓 {held} 股")]
    Oversold {
        fill_id: i64,
        code: String,
        date: u32,
        sell: i64,
        held: i64,
    },
}

/// Every code's holding and every sale's realised P/L.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    pub holdings: BTreeMap<String, Holding>,
    pub realised: Vec<Realised>,
}

impl Ledger {
    pub fn realised_fen(&self) -> i64 {
        self.realised.iter().map(|r| r.pnl_fen).sum()
    }
}

/// Applies one fill to a holding; a sale's realised P/L when it is one.
pub fn apply(h: &mut Holding, f: &LedgerFill) -> Result<Option<Realised>, LedgerError> {
    match f.side {
        Side::Opening => {
            *h = Holding {
                shares: f.shares,
                basis_e6: i128::from(f.price_e6) * i128::from(f.shares),
                since: if f.shares > 0 { f.date } else { 0 },
            };
            Ok(None)
        }
        Side::Buy => {
            if h.shares == 0 {
                h.since = f.date;
                h.basis_e6 = 0;
            }
            h.shares += f.shares;
            h.basis_e6 += i128::from(f.amount_fen + f.fees.total_fen()) * i128::from(E6_PER_FEN);
            Ok(None)
        }
        Side::Sell => {
            if f.shares > h.shares {
                return Err(LedgerError::Oversold {
                    fill_id: f.id,
                    code: f.code.clone(),
                    date: f.date,
                    sell: f.shares,
                    held: h.shares,
                });
            }
            let cost_e6 = if f.shares == h.shares {
                h.basis_e6
            } else {
                div_round(h.basis_e6 * i128::from(f.shares), i128::from(h.shares))
            };
            let net_e6 =
                i128::from(f.amount_fen - f.fees.total_fen()) * i128::from(E6_PER_FEN) - cost_e6;
            let r = Realised {
                fill_id: f.id,
                code: f.code.clone(),
                date: f.date,
                shares: f.shares,
                price_e6: f.price_e6,
                cost_e6,
                pnl_fen: div_round(net_e6, i128::from(E6_PER_FEN)) as i64,
                held_since: h.since,
            };
            h.shares -= f.shares;
            h.basis_e6 -= cost_e6;
            if h.shares == 0 {
                *h = Holding::default();
            }
            Ok(Some(r))
        }
    }
}

/// Sorts fills into the order they happened (day, then recording order).
pub fn sort_fills(fills: &mut [LedgerFill]) {
    fills.sort_by_key(|f| (f.date, f.id));
}

/// Replays `fills` (any order) into holdings and realised P/L.
pub fn replay(fills: &[LedgerFill]) -> Result<Ledger, LedgerError> {
    let mut sorted = fills.to_vec();
    sort_fills(&mut sorted);
    let mut out = Ledger::default();
    for f in &sorted {
        let h = out.holdings.entry(f.code.clone()).or_default();
        if let Some(r) = apply(h, f)? {
            out.realised.push(r);
        }
    }
    out.holdings.retain(|_, h| h.shares > 0);
    Ok(out)
}

/// The holdings as of the end of `date` (fills on or before it).
pub fn holdings_on(sorted: &[LedgerFill], date: u32) -> BTreeMap<String, Holding> {
    let mut out: BTreeMap<String, Holding> = BTreeMap::new();
    for f in sorted.iter().take_while(|f| f.date <= date) {
        let h = out.entry(f.code.clone()).or_default();
        // an oversold sell is refused when recorded; here it only leaves the holding alone
        let _ = apply(h, f);
    }
    out.retain(|_, h| h.shares > 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::amount_fen;
    use wyckoff_engine::fees::fees_for;

    fn fill(id: i64, side: Side, date: u32, price_e6: i64, shares: i64) -> LedgerFill {
        let amount = if side == Side::Opening {
            0
        } else {
            amount_fen(price_e6, shares)
        };
        LedgerFill {
            id,
            code: "600519".into(),
            side,
            date,
            price_e6,
            shares,
            amount_fen: amount,
            fees: if side == Side::Opening {
                Fees::default()
            } else {
                fees_for(amount, side == Side::Sell, date)
            },
        }
    }

    #[test]
    fn average_cost_and_realised_pnl_by_hand() {
        let fills = [
            // buy 1000 × 10.00 = 10,000.00 + fees 5.00 + 0.10 → basis 10,005.10
            fill(1, Side::Buy, 20240102, 10_000_000, 1000),
            // buy 500 × 11.00 = 5,500.00 + 5.00 + 0.06 (0.055 → 0.06) → basis 15,510.16,
            // 1500 shares: average 10.340107 (15,510.16 / 1500 = 10.3401066…)
            fill(2, Side::Buy, 20240103, 11_000_000, 500),
        ];
        let l = replay(&fills).unwrap();
        let h = l.holdings["600519"];
        assert_eq!(h.shares, 1500);
        assert_eq!(h.basis_e6, 15_510_160_000);
        assert_eq!(h.avg_cost_e6(), Some(10_340_107));
        assert_eq!(h.since, 20240102);

        // sell 600 × 12.00 = 7,200.00 on 2024-03-01: fees 5.00 + stamp 3.60 + 0.07 (0.072)
        // = 8.67; cost 15,510.16 × 600 / 1500 = 6,204.064; P/L 7,200 − 8.67 − 6,204.064
        // = 987.266 → 987.27
        let mut all = fills.to_vec();
        all.push(fill(3, Side::Sell, 20240301, 12_000_000, 600));
        let l = replay(&all).unwrap();
        assert_eq!(l.realised.len(), 1);
        assert_eq!(l.realised[0].cost_e6, 6_204_064_000);
        assert_eq!(l.realised[0].pnl_fen, 98_727);
        let h = l.holdings["600519"];
        // 900 left with basis 15,510.16 − 6,204.064 = 9,306.096: average unchanged 10.340107
        assert_eq!(h.shares, 900);
        assert_eq!(h.basis_e6, 9_306_096_000);
        assert_eq!(h.avg_cost_e6(), Some(10_340_107));

        // sell the other 900 × 9.50 = 8,550.00: fees 5.00 + 4.28 (4.275) + 0.09 (0.0855)
        // = 9.37; P/L 8,550 − 9.37 − 9,306.096 = −765.466 → −765.47; flat afterwards
        all.push(fill(4, Side::Sell, 20240305, 9_500_000, 900));
        let l = replay(&all).unwrap();
        assert_eq!(l.realised[1].pnl_fen, -76_547);
        assert_eq!(l.realised_fen(), 98_727 - 76_547);
        assert!(!l.holdings.contains_key("600519"));
    }

    #[test]
    fn an_opening_fill_keeps_the_positions_figures() {
        // 300 shares at 10.123456 from before the journal
        let l = replay(&[fill(1, Side::Opening, 20230105, 10_123_456, 300)]).unwrap();
        let h = l.holdings["600519"];
        assert_eq!(
            (h.shares, h.avg_cost_e6(), h.since),
            (300, Some(10_123_456), 20230105)
        );
        assert!(l.realised.is_empty());
        // a buy on top: 100 × 11.00 = 1,100.00 + 5.00 + 0.01 (0.011) → basis
        // 3,037.0368 + 1,105.01 = 4,142.0468, 400 shares → 10.355117
        let l = replay(&[
            fill(1, Side::Opening, 20230105, 10_123_456, 300),
            fill(2, Side::Buy, 20240105, 11_000_000, 100),
        ])
        .unwrap();
        assert_eq!(l.holdings["600519"].avg_cost_e6(), Some(10_355_117));
        assert_eq!(l.holdings["600519"].since, 20230105);
    }

    #[test]
    fn an_oversell_is_refused_and_fills_replay_in_date_order() {
        let err = replay(&[
            fill(1, Side::Buy, 20240102, 10_000_000, 100),
            fill(2, Side::Sell, 20240103, 10_000_000, 200),
        ])
        .unwrap_err();
        assert!(
            err.to_string().contains("卖出 200 股超过当时持仓 100 股"),
            "{err}"
        );
        // recorded out of order: the sale (id 1) is dated after the buy (id 2)
        let l = replay(&[
            fill(1, Side::Sell, 20240105, 10_000_000, 100),
            fill(2, Side::Buy, 20240102, 10_000_000, 100),
        ])
        .unwrap();
        assert_eq!(l.realised.len(), 1);
        assert_eq!(l.realised[0].held_since, 20240102);
    }

    #[test]
    fn holdings_on_a_day_count_only_fills_up_to_it() {
        let mut fills = vec![
            fill(1, Side::Buy, 20240102, 10_000_000, 100),
            fill(2, Side::Buy, 20240104, 10_000_000, 200),
            fill(3, Side::Sell, 20240108, 10_000_000, 300),
        ];
        sort_fills(&mut fills);
        assert_eq!(holdings_on(&fills, 20240101).len(), 0);
        assert_eq!(holdings_on(&fills, 20240103)["600519"].shares, 100);
        assert_eq!(holdings_on(&fills, 20240105)["600519"].shares, 300);
        assert!(holdings_on(&fills, 20240108).is_empty());
    }
}
