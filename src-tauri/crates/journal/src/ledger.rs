//! The account from its entries ([`crate::entry`]): cash, positions at moving-average
//! cost, repo principal lent out, subscription money frozen, realised P/L and the income
//! and costs booked.
//!
//! Cost: a buy adds its amount and fees to the basis; a rights issue adds what was paid;
//! bonus shares add shares and nothing to the basis; a sell takes the sold shares' share of
//! the basis (basis × sold / held, to the millionth) and realises proceeds − its fees −
//! that cost, to the fen; an opening states the holding as it stood (shares at an average
//! cost, no fees) and replaces what came before.
//!
//! Cash: each entry's [`EntryKind::cash_fen`]. When the cash on record ends a day below
//! zero — a buy paid with money whose transfer in is not on file — the shortfall is counted
//! as a transfer in on that day ([`Ledger::implied`]), so the balance never goes negative
//! and the account's value and return stay defined; every such day is listed.
//!
//! Imported history is not held to T+1 or lots (a statement is what happened); a sale of
//! more than is held, a repo returned that was never lent, or subscription money released
//! beyond what was frozen, is an error naming the entry.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::entry::{Entry, EntryKind};
use crate::money::{E6_PER_FEN, div_round};

/// A trade's side as the fill forms and the tool name it.
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

    /// The side of a trade entry (`None` for other kinds).
    pub fn of(kind: &EntryKind) -> Option<Side> {
        match kind {
            EntryKind::Buy { .. } => Some(Side::Buy),
            EntryKind::Sell { .. } => Some(Side::Sell),
            EntryKind::Opening { .. } => Some(Side::Opening),
            _ => None,
        }
    }
}

/// A code's holding after some entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Holding {
    pub shares: i64,
    /// Cost basis in millionths of a yuan (amounts and buy fees, less what sells took).
    pub basis_e6: i128,
    /// The first entry since the holding was last flat (`YYYYMMDD`), 0 when flat.
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

    fn add(&mut self, date: u32, shares: i64, cost_e6: i128) {
        if self.shares == 0 {
            self.since = date;
            self.basis_e6 = 0;
        }
        self.shares += shares;
        self.basis_e6 += cost_e6;
    }
}

/// What one sell realised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Realised {
    pub entry_id: i64,
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
        entry_id: i64,
        code: String,
        date: u32,
        sell: i64,
        held: i64,
    },
    #[error("{code} {date}：逆回购到期本金 {principal_fen} 分多于借出未还的 {lent_fen} 分")]
    RepoUnmatched {
        entry_id: i64,
        code: String,
        date: u32,
        principal_fen: i64,
        lent_fen: i64,
    },
    #[error("{code} {date}：申购款退回/中签 {released_fen} 分多于冻结未退的 {frozen_fen} 分")]
    SubscriptionUnmatched {
        entry_id: i64,
        code: String,
        date: u32,
        released_fen: i64,
        frozen_fen: i64,
    },
    #[error("{date} 的记录无效：{message}")]
    Invalid {
        entry_id: i64,
        date: u32,
        message: String,
    },
}

impl LedgerError {
    /// The entry the replay stopped at.
    pub fn entry_id(&self) -> i64 {
        match self {
            LedgerError::Oversold { entry_id, .. }
            | LedgerError::RepoUnmatched { entry_id, .. }
            | LedgerError::SubscriptionUnmatched { entry_id, .. }
            | LedgerError::Invalid { entry_id, .. } => *entry_id,
        }
    }
}

/// Sums of what the entries booked, in fen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, specta::Type)]
pub struct Totals {
    /// 银证转账 in (and opening balances).
    pub transfers_in_fen: i64,
    pub transfers_out_fen: i64,
    /// Shortfalls counted as transfers in (see the module notes).
    pub implied_in_fen: i64,
    /// Trades' fees (commission, stamp duty, transfer fee).
    pub fees_fen: i64,
    pub dividends_fen: i64,
    /// 利息归本 and reverse repos' interest.
    pub interest_fen: i64,
    /// Taxes and fees taken from cash outside a trade.
    pub taxes_fen: i64,
}

/// Every code's holding, the cash and every sale's realised P/L.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    /// Held codes only after [`replay`]; flat ones may linger while replaying.
    pub holdings: BTreeMap<String, Holding>,
    pub realised: Vec<Realised>,
    /// Cash in fen (never negative at a day's end: see [`Ledger::implied`]).
    pub cash_fen: i64,
    /// Reverse repo principal lent out and not yet back, by code.
    pub repo_fen: BTreeMap<String, i64>,
    /// New-share subscription money paid and frozen, not yet refunded or allotted, by the
    /// subscription's code: still the account's, so it counts in the NAV like a repo.
    pub subscription_fen: BTreeMap<String, i64>,
    pub totals: Totals,
    /// Days whose cash on record ended below zero, and by how much (counted as in).
    pub implied: Vec<(u32, i64)>,
    /// The day being replayed (the shortfall check runs when it changes).
    day: u32,
}

impl Ledger {
    pub fn realised_fen(&self) -> i64 {
        self.realised.iter().map(|r| r.pnl_fen).sum()
    }

    pub fn repo_total_fen(&self) -> i64 {
        self.repo_fen.values().sum()
    }

    pub fn subscription_total_fen(&self) -> i64 {
        self.subscription_fen.values().sum()
    }

    /// Ends the day being replayed: a negative balance becomes an implied transfer in.
    /// Returns the amount implied (0 when none).
    pub fn end_day(&mut self) -> i64 {
        if self.cash_fen >= 0 {
            return 0;
        }
        let short = -self.cash_fen;
        self.cash_fen = 0;
        self.totals.implied_in_fen += short;
        self.implied.push((self.day, short));
        short
    }

    /// Applies one entry (in date order: a new day first ends the previous one); a sale's
    /// realised P/L when it is one.
    pub fn apply(&mut self, e: &Entry) -> Result<Option<Realised>, LedgerError> {
        if e.date != self.day {
            if self.day != 0 {
                self.end_day();
            }
            self.day = e.date;
        }
        e.kind.validate().map_err(|message| LedgerError::Invalid {
            entry_id: e.id,
            date: e.date,
            message,
        })?;
        let mut realised = None;
        match &e.kind {
            EntryKind::Opening {
                code,
                shares,
                price_e6,
            } => {
                self.holdings.insert(
                    code.clone(),
                    Holding {
                        shares: *shares,
                        basis_e6: i128::from(*price_e6) * i128::from(*shares),
                        since: if *shares > 0 { e.date } else { 0 },
                    },
                );
            }
            EntryKind::Buy {
                code,
                shares,
                amount_fen,
                fees,
                ..
            } => {
                let cost = i128::from(amount_fen + fees.total_fen()) * i128::from(E6_PER_FEN);
                self.holdings
                    .entry(code.clone())
                    .or_default()
                    .add(e.date, *shares, cost);
            }
            EntryKind::RightsIssue {
                code,
                shares,
                amount_fen,
                ..
            } => {
                let cost = i128::from(*amount_fen) * i128::from(E6_PER_FEN);
                self.holdings
                    .entry(code.clone())
                    .or_default()
                    .add(e.date, *shares, cost);
            }
            EntryKind::BonusShares { code, shares } => {
                self.holdings
                    .entry(code.clone())
                    .or_default()
                    .add(e.date, *shares, 0);
            }
            EntryKind::Sell {
                code,
                shares,
                price_e6,
                amount_fen,
                fees,
            } => {
                let h = self.holdings.entry(code.clone()).or_default();
                if *shares > h.shares {
                    return Err(LedgerError::Oversold {
                        entry_id: e.id,
                        code: code.clone(),
                        date: e.date,
                        sell: *shares,
                        held: h.shares,
                    });
                }
                let cost_e6 = if *shares == h.shares {
                    h.basis_e6
                } else {
                    div_round(h.basis_e6 * i128::from(*shares), i128::from(h.shares))
                };
                let net_e6 =
                    i128::from(amount_fen - fees.total_fen()) * i128::from(E6_PER_FEN) - cost_e6;
                realised = Some(Realised {
                    entry_id: e.id,
                    code: code.clone(),
                    date: e.date,
                    shares: *shares,
                    price_e6: *price_e6,
                    cost_e6,
                    pnl_fen: div_round(net_e6, i128::from(E6_PER_FEN)) as i64,
                    held_since: h.since,
                });
                h.shares -= shares;
                h.basis_e6 -= cost_e6;
                if h.shares == 0 {
                    *h = Holding::default();
                }
            }
            EntryKind::RepoLend { code, amount_fen } => {
                *self.repo_fen.entry(code.clone()).or_default() += amount_fen;
            }
            EntryKind::RepoReturn {
                code,
                principal_fen,
                interest_fen,
            } => {
                let lent = self.repo_fen.get(code).copied().unwrap_or(0);
                if *principal_fen > lent {
                    return Err(LedgerError::RepoUnmatched {
                        entry_id: e.id,
                        code: code.clone(),
                        date: e.date,
                        principal_fen: *principal_fen,
                        lent_fen: lent,
                    });
                }
                if lent == *principal_fen {
                    self.repo_fen.remove(code);
                } else {
                    self.repo_fen.insert(code.clone(), lent - principal_fen);
                }
                self.totals.interest_fen += interest_fen;
            }
            EntryKind::SubscriptionPaid { code, amount_fen } => {
                *self.subscription_fen.entry(code.clone()).or_default() += amount_fen;
            }
            EntryKind::SubscriptionReleased { code, amount_fen } => {
                let frozen = self.subscription_fen.get(code).copied().unwrap_or(0);
                if *amount_fen > frozen {
                    return Err(LedgerError::SubscriptionUnmatched {
                        entry_id: e.id,
                        code: code.clone(),
                        date: e.date,
                        released_fen: *amount_fen,
                        frozen_fen: frozen,
                    });
                }
                if frozen == *amount_fen {
                    self.subscription_fen.remove(code);
                } else {
                    self.subscription_fen
                        .insert(code.clone(), frozen - amount_fen);
                }
            }
            EntryKind::CashIn { amount_fen } => self.totals.transfers_in_fen += amount_fen,
            EntryKind::CashOut { amount_fen } => self.totals.transfers_out_fen += amount_fen,
            EntryKind::Dividend { amount_fen, .. } => self.totals.dividends_fen += amount_fen,
            EntryKind::Interest { amount_fen } => self.totals.interest_fen += amount_fen,
            EntryKind::Tax { amount_fen, .. } | EntryKind::Fee { amount_fen, .. } => {
                self.totals.taxes_fen += amount_fen
            }
            EntryKind::Note { .. } => {}
        }
        self.totals.fees_fen += e.kind.fees().total_fen();
        self.cash_fen += e.kind.cash_fen();
        if let Some(r) = &realised {
            self.realised.push(r.clone());
        }
        Ok(realised)
    }

    /// The held codes (shares > 0).
    pub fn held(&self) -> impl Iterator<Item = (&String, &Holding)> {
        self.holdings.iter().filter(|(_, h)| h.shares > 0)
    }
}

/// Sorts entries into the order they happened (day, then recording order — an import
/// stores a statement's rows oldest first).
pub fn sort_entries(entries: &mut [Entry]) {
    entries.sort_by_key(|e| (e.date, e.id));
}

/// Replays `entries` (any order) into the account as it stands after the last one.
pub fn replay(entries: &[Entry]) -> Result<Ledger, LedgerError> {
    let mut sorted = entries.to_vec();
    sort_entries(&mut sorted);
    let mut out = Ledger::default();
    for e in &sorted {
        out.apply(e)?;
    }
    out.end_day();
    out.holdings.retain(|_, h| h.shares > 0);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::amount_fen;
    use crate::store::Source;
    use wyckoff_engine::fees::{Fees, fees_for};

    fn entry(id: i64, date: u32, kind: EntryKind) -> Entry {
        Entry {
            id,
            date,
            time: None,
            name: String::new(),
            kind,
            source: Source::Import,
            identity: None,
        }
    }

    fn trade(id: i64, side: Side, date: u32, price_e6: i64, shares: i64) -> Entry {
        let code = "600519".to_string();
        let kind = match side {
            Side::Opening => EntryKind::Opening {
                code,
                shares,
                price_e6,
            },
            Side::Buy | Side::Sell => {
                let amount = amount_fen(price_e6, shares);
                let fees = fees_for(amount, side == Side::Sell, date);
                if side == Side::Buy {
                    EntryKind::Buy {
                        code,
                        shares,
                        price_e6,
                        amount_fen: amount,
                        fees,
                    }
                } else {
                    EntryKind::Sell {
                        code,
                        shares,
                        price_e6,
                        amount_fen: amount,
                        fees,
                    }
                }
            }
        };
        entry(id, date, kind)
    }

    #[test]
    fn average_cost_and_realised_pnl_by_hand() {
        let fills = [
            // buy 1000 × 10.00 = 10,000.00 + fees 5.00 + 0.10 → basis 10,005.10
            trade(1, Side::Buy, 20240102, 10_000_000, 1000),
            // buy 500 × 11.00 = 5,500.00 + 5.00 + 0.06 (0.055 → 0.06) → basis 15,510.16,
            // 1500 shares: average 10.340107 (15,510.16 / 1500 = 10.3401066…)
            trade(2, Side::Buy, 20240103, 11_000_000, 500),
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
        all.push(trade(3, Side::Sell, 20240301, 12_000_000, 600));
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
        all.push(trade(4, Side::Sell, 20240305, 9_500_000, 900));
        let l = replay(&all).unwrap();
        assert_eq!(l.realised[1].pnl_fen, -76_547);
        assert_eq!(l.realised_fen(), 98_727 - 76_547);
        assert!(!l.holdings.contains_key("600519"));
    }

    #[test]
    fn an_opening_keeps_the_positions_figures() {
        // 300 shares at 10.123456 from before the journal
        let l = replay(&[trade(1, Side::Opening, 20230105, 10_123_456, 300)]).unwrap();
        let h = l.holdings["600519"];
        assert_eq!(
            (h.shares, h.avg_cost_e6(), h.since),
            (300, Some(10_123_456), 20230105)
        );
        assert!(l.realised.is_empty());
        // an opening moves no cash
        assert_eq!((l.cash_fen, l.totals.implied_in_fen), (0, 0));
        // a buy on top: 100 × 11.00 = 1,100.00 + 5.00 + 0.01 (0.011) → basis
        // 3,037.0368 + 1,105.01 = 4,142.0468, 400 shares → 10.355117
        let l = replay(&[
            trade(1, Side::Opening, 20230105, 10_123_456, 300),
            trade(2, Side::Buy, 20240105, 11_000_000, 100),
        ])
        .unwrap();
        assert_eq!(l.holdings["600519"].avg_cost_e6(), Some(10_355_117));
        assert_eq!(l.holdings["600519"].since, 20230105);
    }

    #[test]
    fn an_oversell_names_the_entry_and_entries_replay_in_date_order() {
        let err = replay(&[
            trade(1, Side::Buy, 20240102, 10_000_000, 100),
            trade(7, Side::Sell, 20240103, 10_000_000, 200),
        ])
        .unwrap_err();
        assert_eq!(err.entry_id(), 7);
        assert!(
            err.to_string().contains("卖出 200 股超过当时持仓 100 股"),
            "{err}"
        );
        // recorded out of order: the sale (id 1) is dated after the buy (id 2)
        let l = replay(&[
            trade(1, Side::Sell, 20240105, 10_000_000, 100),
            trade(2, Side::Buy, 20240102, 10_000_000, 100),
        ])
        .unwrap();
        assert_eq!(l.realised.len(), 1);
        assert_eq!(l.realised[0].held_since, 20240102);
    }

    #[test]
    fn cash_through_every_kind_by_hand() {
        let fees = Fees {
            commission_fen: 500,
            stamp_fen: 0,
            transfer_fen: 10,
        };
        let entries = [
            // 100,000.00 in
            entry(
                1,
                20240102,
                EntryKind::CashIn {
                    amount_fen: 10_000_000,
                },
            ),
            // buy 1000 × 10.00 = 10,000.00 + 5.10 fees → cash 89,994.90, basis 10,005.10
            entry(
                2,
                20240102,
                EntryKind::Buy {
                    code: "600000".into(),
                    shares: 1000,
                    price_e6: 10_000_000,
                    amount_fen: 1_000_000,
                    fees,
                },
            ),
            // 10 送 3: 300 shares in, basis unchanged → 1300 at 7.696231 (10,005.10 / 1300)
            entry(
                3,
                20240601,
                EntryKind::BonusShares {
                    code: "600000".into(),
                    shares: 300,
                },
            ),
            // 股息 300.00 in, 差异扣税 30.00 out
            entry(
                4,
                20240601,
                EntryKind::Dividend {
                    code: "600000".into(),
                    amount_fen: 30_000,
                },
            ),
            entry(
                5,
                20240605,
                EntryKind::Tax {
                    code: Some("600000".into()),
                    amount_fen: 3_000,
                },
            ),
            // 配股 130 × 6.00 = 780.00 paid → 1430 shares, basis 10,785.10
            entry(
                6,
                20240610,
                EntryKind::RightsIssue {
                    code: "600000".into(),
                    shares: 130,
                    price_e6: 6_000_000,
                    amount_fen: 78_000,
                },
            ),
            // 逆回购 50,000.00 out, back with 5.48 interest
            entry(
                7,
                20240611,
                EntryKind::RepoLend {
                    code: "204001".into(),
                    amount_fen: 5_000_000,
                },
            ),
            entry(
                8,
                20240612,
                EntryKind::RepoReturn {
                    code: "204001".into(),
                    principal_fen: 5_000_000,
                    interest_fen: 548,
                },
            ),
            // 利息归本 1.23; 指定交易 moves nothing; 20,000.00 out
            entry(9, 20240620, EntryKind::Interest { amount_fen: 123 }),
            entry(
                10,
                20240620,
                EntryKind::Note {
                    text: "指定交易".into(),
                },
            ),
            entry(
                11,
                20240621,
                EntryKind::CashOut {
                    amount_fen: 2_000_000,
                },
            ),
        ];
        let l = replay(&entries).unwrap();
        // 100,000.00 − 10,005.10 + 300.00 − 30.00 − 780.00 − 50,000.00 + 50,005.48
        // + 1.23 − 20,000.00 = 69,491.61
        assert_eq!(l.cash_fen, 6_949_161);
        let h = l.holdings["600000"];
        assert_eq!((h.shares, h.basis_fen()), (1430, 1_078_510));
        assert!(l.repo_fen.is_empty());
        assert_eq!(
            l.totals,
            Totals {
                transfers_in_fen: 10_000_000,
                transfers_out_fen: 2_000_000,
                implied_in_fen: 0,
                fees_fen: 510,
                dividends_fen: 30_000,
                interest_fen: 548 + 123,
                taxes_fen: 3_000,
            }
        );
        // mid-way: the repo is lent out (an asset, not lost cash)
        let l = replay(&entries[..7]).unwrap();
        assert_eq!(l.repo_total_fen(), 5_000_000);
    }

    #[test]
    fn a_repo_returned_that_was_never_lent_names_the_entry() {
        let err = replay(&[entry(
            3,
            20240612,
            EntryKind::RepoReturn {
                code: "131810".into(),
                principal_fen: 100_000,
                interest_fen: 1,
            },
        )])
        .unwrap_err();
        assert_eq!(err.entry_id(), 3);
        assert!(err.to_string().contains("131810"), "{err}");
    }

    #[test]
    fn a_prepaid_subscription_is_frozen_until_its_refund_and_allotment() {
        let paid = |id, date, amount_fen| {
            entry(
                id,
                date,
                EntryKind::SubscriptionPaid {
                    code: "732123".into(),
                    amount_fen,
                },
            )
        };
        let released = |id, date, amount_fen| {
            entry(
                id,
                date,
                EntryKind::SubscriptionReleased {
                    code: "732123".into(),
                    amount_fen,
                },
            )
        };
        let cash_in = entry(
            1,
            20150105,
            EntryKind::CashIn {
                amount_fen: 2_000_000,
            },
        );
        // 10,000.00 frozen on the 6th: cash 10,000.00, frozen 10,000.00
        let l = replay(&[cash_in.clone(), paid(2, 20150106, 1_000_000)]).unwrap();
        assert_eq!(
            (l.cash_fen, l.subscription_total_fen()),
            (1_000_000, 1_000_000)
        );
        // 9,000.00 refunded on the 9th; 500 shares at 2.00 arrive on the 15th from the rest
        let allotted = [
            released(4, 20150115, 100_000),
            entry(
                5,
                20150115,
                EntryKind::Buy {
                    code: "603123".into(),
                    shares: 500,
                    price_e6: 2_000_000,
                    amount_fen: 100_000,
                    fees: Fees::default(),
                },
            ),
        ];
        let mut all = vec![
            cash_in,
            paid(2, 20150106, 1_000_000),
            released(3, 20150109, 900_000),
        ];
        let l = replay(&all).unwrap();
        assert_eq!(
            (l.cash_fen, l.subscription_total_fen()),
            (1_900_000, 100_000)
        );
        all.extend(allotted);
        let l = replay(&all).unwrap();
        assert_eq!(l.cash_fen, 1_900_000);
        assert!(l.subscription_fen.is_empty(), "{:?}", l.subscription_fen);
        let h = l.holdings["603123"];
        assert_eq!((h.shares, h.basis_fen()), (500, 100_000));
        assert!(l.implied.is_empty());
        // more released than was frozen names the entry
        let err = replay(&[
            paid(1, 20150106, 1_000_000),
            released(7, 20150109, 1_000_001),
        ])
        .unwrap_err();
        assert_eq!(err.entry_id(), 7);
        assert!(err.to_string().contains("732123"), "{err}");
    }

    #[test]
    fn a_shortfall_at_a_days_end_is_an_implied_transfer_in() {
        // no cash on record: the buy of 10,005.10 is funded from outside that day; the
        // sale's proceeds stay as cash and pay the next buy, the rest of which is implied
        let l = replay(&[
            trade(1, Side::Buy, 20240102, 10_000_000, 1000),
            trade(2, Side::Sell, 20240103, 12_000_000, 1000),
            trade(3, Side::Buy, 20240104, 13_000_000, 1000),
        ])
        .unwrap();
        // sell 12,000.00 − (5.00 + 6.00 stamp + 0.12) = 11,988.88 in; buy 13,000.00 +
        // 5.00 + 0.13 = 13,005.13 out: short 1,016.25 on the 4th
        assert_eq!(l.implied, [(20240102, 1_000_510), (20240104, 101_625)]);
        assert_eq!(l.totals.implied_in_fen, 1_000_510 + 101_625);
        assert_eq!(l.cash_fen, 0);
        // a same-day sale pays a same-day buy: only the day's end counts
        let l = replay(&[
            trade(1, Side::Opening, 20240101, 10_000_000, 1000),
            trade(2, Side::Sell, 20240103, 12_000_000, 1000),
            trade(3, Side::Buy, 20240103, 11_000_000, 1000),
        ])
        .unwrap();
        assert!(l.implied.is_empty(), "{:?}", l.implied);
    }
}
