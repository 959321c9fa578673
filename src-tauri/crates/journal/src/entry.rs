//! The account ledger's entries: every row of an account's history — trades, bank
//! transfers (银证转账), dividends and interest, taxes and fees, bonus and rights shares,
//! reverse repos, new-share subscriptions paid up front, and rows that move nothing
//! (指定交易, 撤指, a 新股申购 without prepayment) — as one tagged
//! enum. Money is integer fen, prices integer millionths ([`crate::money`]). Amounts are
//! magnitudes (never negative): the kind says which way the cash goes, so a statement's
//! signed 发生金额 is read once, by whoever parses it.
//!
//! What each kind does to the account (the ledger's replay is the one implementation):
//!
//! | kind | cash | holding |
//! |---|---|---|
//! | `buy` | − amount − fees | + shares, basis + amount + fees |
//! | `sell` | + amount − fees | − shares, basis × sold / held out (realised P/L) |
//! | `opening` | none | states shares at an average cost (replaces the holding) |
//! | `cash_in` / `cash_out` | ± amount | — (an external flow) |
//! | `dividend` | + amount (net as booked) | — |
//! | `interest` | + amount | — |
//! | `tax` / `fee` | − amount | — |
//! | `bonus_shares` | none | + shares, basis unchanged |
//! | `rights_issue` | − amount | + shares, basis + amount |
//! | `repo_lend` | − amount | repo principal out + amount |
//! | `repo_return` | + principal + interest | repo principal out − principal |
//! | `subscription_paid` | − amount | subscription money frozen + amount |
//! | `subscription_released` | + amount | subscription money frozen − amount |
//! | `note` | none | none |

use serde::{Deserialize, Serialize};

use crate::store::Source;
use wyckoff_engine::fees::Fees;

pub use wyckoff_engine::Instrument;

/// What happened, with its money. Serialised with `"type"`, e.g.
/// `{"type":"cash_in","amount_fen":1000000}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EntryKind {
    /// 证券买入 (any instrument with a close: stock, ETF/LOF, bond).
    Buy {
        code: String,
        shares: i64,
        price_e6: i64,
        /// The traded amount as booked (price × shares, rounded to the fen by the broker).
        amount_fen: i64,
        fees: Fees,
    },
    /// 证券卖出.
    Sell {
        code: String,
        shares: i64,
        price_e6: i64,
        amount_fen: i64,
        fees: Fees,
    },
    /// 期初: a holding as it stood (from before the journal, or edited directly) — shares
    /// at an average cost; replaces what came before, moves no cash.
    Opening {
        code: String,
        shares: i64,
        price_e6: i64,
    },
    /// 银证转账 bank → broker, or an opening cash balance.
    CashIn { amount_fen: i64 },
    /// 银证转账 broker → bank.
    CashOut { amount_fen: i64 },
    /// 股息入账 / 红利入账: the cash booked (after any tax withheld then).
    Dividend { code: String, amount_fen: i64 },
    /// 利息归本: interest on the cash balance.
    Interest { amount_fen: i64 },
    /// 股息红利差异扣税 and other taxes taken from cash.
    Tax {
        code: Option<String>,
        amount_fen: i64,
    },
    /// A fee taken from cash outside a trade (e.g. 账户管理费).
    Fee {
        code: Option<String>,
        amount_fen: i64,
    },
    /// 送股 / 转增 / 红股入账: shares in at no cost (the basis is unchanged, so the average
    /// cost falls).
    BonusShares { code: String, shares: i64 },
    /// 配股缴款 / 配股入账 booked as one: the subscription paid and the shares in.
    RightsIssue {
        code: String,
        shares: i64,
        price_e6: i64,
        amount_fen: i64,
    },
    /// 逆回购 (融券回购): cash lent out against a repo code (204xxx, 131xxx).
    RepoLend { code: String, amount_fen: i64 },
    /// 逆回购到期 (融券购回): the principal back with its interest.
    RepoReturn {
        code: String,
        principal_fen: i64,
        interest_fen: i64,
    },
    /// 新股申购 paid in full before the draw (the rule until 2016): the money is frozen
    /// against the subscription code, still the account's, until its 申购还款 brings back
    /// what was not allotted and the allotment takes the rest.
    SubscriptionPaid { code: String, amount_fen: i64 },
    /// Frozen subscription money released: the 申购还款 back into cash, or the allotted
    /// shares' cost (booked beside their buy, so the cash does not move twice).
    SubscriptionReleased { code: String, amount_fen: i64 },
    /// A row kept for the record that moves neither cash nor shares (指定交易, 撤指,
    /// 新股申购 without prepayment, 配号, …); a charge on such a row is a `fee` beside it.
    Note { text: String },
}

impl EntryKind {
    /// The snake_case name of the kind (its serde tag).
    pub fn as_str(&self) -> &'static str {
        match self {
            EntryKind::Buy { .. } => "buy",
            EntryKind::Sell { .. } => "sell",
            EntryKind::Opening { .. } => "opening",
            EntryKind::CashIn { .. } => "cash_in",
            EntryKind::CashOut { .. } => "cash_out",
            EntryKind::Dividend { .. } => "dividend",
            EntryKind::Interest { .. } => "interest",
            EntryKind::Tax { .. } => "tax",
            EntryKind::Fee { .. } => "fee",
            EntryKind::BonusShares { .. } => "bonus_shares",
            EntryKind::RightsIssue { .. } => "rights_issue",
            EntryKind::RepoLend { .. } => "repo_lend",
            EntryKind::RepoReturn { .. } => "repo_return",
            EntryKind::SubscriptionPaid { .. } => "subscription_paid",
            EntryKind::SubscriptionReleased { .. } => "subscription_released",
            EntryKind::Note { .. } => "note",
        }
    }

    /// The security the entry is about, if any.
    pub fn code(&self) -> Option<&str> {
        match self {
            EntryKind::Buy { code, .. }
            | EntryKind::Sell { code, .. }
            | EntryKind::Opening { code, .. }
            | EntryKind::Dividend { code, .. }
            | EntryKind::BonusShares { code, .. }
            | EntryKind::RightsIssue { code, .. }
            | EntryKind::RepoLend { code, .. }
            | EntryKind::RepoReturn { code, .. }
            | EntryKind::SubscriptionPaid { code, .. }
            | EntryKind::SubscriptionReleased { code, .. } => Some(code),
            EntryKind::Tax { code, .. } | EntryKind::Fee { code, .. } => code.as_deref(),
            EntryKind::CashIn { .. }
            | EntryKind::CashOut { .. }
            | EntryKind::Interest { .. }
            | EntryKind::Note { .. } => None,
        }
    }

    /// The entry's effect on the cash balance in fen (signed: + into the account).
    pub fn cash_fen(&self) -> i64 {
        match self {
            EntryKind::Buy {
                amount_fen, fees, ..
            } => -(amount_fen + fees.total_fen()),
            EntryKind::Sell {
                amount_fen, fees, ..
            } => amount_fen - fees.total_fen(),
            EntryKind::CashIn { amount_fen }
            | EntryKind::Dividend { amount_fen, .. }
            | EntryKind::Interest { amount_fen }
            | EntryKind::SubscriptionReleased { amount_fen, .. } => *amount_fen,
            EntryKind::CashOut { amount_fen }
            | EntryKind::Tax { amount_fen, .. }
            | EntryKind::Fee { amount_fen, .. }
            | EntryKind::RightsIssue { amount_fen, .. }
            | EntryKind::RepoLend { amount_fen, .. }
            | EntryKind::SubscriptionPaid { amount_fen, .. } => -amount_fen,
            EntryKind::RepoReturn {
                principal_fen,
                interest_fen,
                ..
            } => principal_fen + interest_fen,
            EntryKind::Opening { .. } | EntryKind::BonusShares { .. } | EntryKind::Note { .. } => 0,
        }
    }

    /// Cash moved across the account's edge (transfers): what the time-weighted return
    /// takes out of the performance.
    pub fn external_flow_fen(&self) -> i64 {
        match self {
            EntryKind::CashIn { amount_fen } => *amount_fen,
            EntryKind::CashOut { amount_fen } => -amount_fen,
            _ => 0,
        }
    }

    /// A trade's fees (none for other kinds).
    pub fn fees(&self) -> Fees {
        match self {
            EntryKind::Buy { fees, .. } | EntryKind::Sell { fees, .. } => *fees,
            _ => Fees::default(),
        }
    }

    /// Checks the figures a statement or a user could get wrong: a code of six digits,
    /// positive shares and prices, amounts and fees not negative. The message names the
    /// field.
    pub fn validate(&self) -> Result<(), String> {
        let code_ok = |c: &str| c.len() == 6 && c.bytes().all(|b| b.is_ascii_digit());
        if let Some(c) = self.code()
            && !code_ok(c)
        {
            return Err(format!("证券代码「{c}」不是 6 位数字"));
        }
        let non_negative = |what: &str, v: i64| {
            if v < 0 {
                Err(format!("{what}不能为负数"))
            } else {
                Ok(())
            }
        };
        let positive = |what: &str, v: i64| {
            if v <= 0 {
                Err(format!("{what}必须大于 0"))
            } else {
                Ok(())
            }
        };
        let fees_ok = |f: &Fees| {
            non_negative("佣金", f.commission_fen)?;
            non_negative("印花税", f.stamp_fen)?;
            non_negative("过户费", f.transfer_fen)
        };
        match self {
            EntryKind::Buy {
                shares,
                price_e6,
                amount_fen,
                fees,
                ..
            }
            | EntryKind::Sell {
                shares,
                price_e6,
                amount_fen,
                fees,
                ..
            } => {
                positive("成交数量", *shares)?;
                positive("成交价格", *price_e6)?;
                non_negative("成交金额", *amount_fen)?;
                fees_ok(fees)
            }
            EntryKind::Opening {
                shares, price_e6, ..
            } => {
                non_negative("持仓数量", *shares)?;
                positive("成本价", *price_e6)
            }
            EntryKind::CashIn { amount_fen } | EntryKind::CashOut { amount_fen } => {
                positive("转账金额", *amount_fen)
            }
            EntryKind::Dividend { amount_fen, .. }
            | EntryKind::Interest { amount_fen }
            | EntryKind::Tax { amount_fen, .. }
            | EntryKind::Fee { amount_fen, .. } => non_negative("金额", *amount_fen),
            EntryKind::BonusShares { shares, .. } => positive("送转股数", *shares),
            EntryKind::RightsIssue {
                shares,
                price_e6,
                amount_fen,
                ..
            } => {
                positive("配股数量", *shares)?;
                positive("配股价格", *price_e6)?;
                non_negative("配股金额", *amount_fen)
            }
            EntryKind::RepoLend { amount_fen, .. } => positive("逆回购金额", *amount_fen),
            EntryKind::SubscriptionPaid { amount_fen, .. }
            | EntryKind::SubscriptionReleased { amount_fen, .. } => positive("申购款", *amount_fen),
            EntryKind::RepoReturn {
                principal_fen,
                interest_fen,
                ..
            } => {
                positive("逆回购本金", *principal_fen)?;
                non_negative("逆回购利息", *interest_fen)
            }
            EntryKind::Note { .. } => Ok(()),
        }
    }
}

/// One entry of the account's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Entry {
    /// The store's id (0 before it is stored); replay orders a day's entries by it.
    pub id: i64,
    /// `YYYYMMDD`.
    pub date: u32,
    /// `HHMMSS` when the source gives it (a statement's 成交时间).
    pub time: Option<u32>,
    /// The security's name as the source wrote it (empty for cash rows).
    pub name: String,
    pub kind: EntryKind,
    pub source: Source,
    /// What makes a re-import of the same row recognisable (合同编号 / 成交编号, or the
    /// row's own fields); `None` for entries made by hand. Unique within an account.
    pub identity: Option<String>,
}

impl Entry {
    /// The instrument of the entry's code (`None` for entries without one).
    pub fn instrument(&self) -> Option<Instrument> {
        self.kind.code().map(Instrument::of_code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_serialise_with_their_tag() {
        let k = EntryKind::CashIn {
            amount_fen: 1_000_000,
        };
        assert_eq!(
            serde_json::to_string(&k).unwrap(),
            r#"{"type":"cash_in","amount_fen":1000000}"#
        );
        let k = EntryKind::RepoReturn {
            code: "204001".into(),
            principal_fen: 10_000_000,
            interest_fen: 548,
        };
        let text = serde_json::to_string(&k).unwrap();
        assert!(text.starts_with(r#"{"type":"repo_return""#), "{text}");
        assert_eq!(serde_json::from_str::<EntryKind>(&text).unwrap(), k);
    }

    #[test]
    fn cash_effects_by_kind() {
        let fees = Fees {
            commission_fen: 500,
            stamp_fen: 0,
            transfer_fen: 10,
        };
        let cases = [
            (
                EntryKind::Buy {
                    code: "600519".into(),
                    shares: 100,
                    price_e6: 10_000_000,
                    amount_fen: 100_000,
                    fees,
                },
                -100_510,
            ),
            (
                EntryKind::Sell {
                    code: "600519".into(),
                    shares: 100,
                    price_e6: 10_000_000,
                    amount_fen: 100_000,
                    fees,
                },
                99_490,
            ),
            (EntryKind::CashOut { amount_fen: 700 }, -700),
            (
                EntryKind::RightsIssue {
                    code: "600519".into(),
                    shares: 30,
                    price_e6: 8_000_000,
                    amount_fen: 24_000,
                },
                -24_000,
            ),
            (
                EntryKind::RepoLend {
                    code: "204001".into(),
                    amount_fen: 10_000_000,
                },
                -10_000_000,
            ),
            (
                EntryKind::BonusShares {
                    code: "600519".into(),
                    shares: 30,
                },
                0,
            ),
        ];
        for (k, want) in cases {
            assert_eq!(k.cash_fen(), want, "{k:?}");
        }
    }

    #[test]
    fn validation_names_the_field() {
        let k = EntryKind::Buy {
            code: "60051".into(),
            shares: 100,
            price_e6: 1,
            amount_fen: 0,
            fees: Fees::default(),
        };
        assert!(k.validate().unwrap_err().contains("60051"));
        let k = EntryKind::CashIn { amount_fen: -5 };
        assert!(k.validate().unwrap_err().contains("转账金额"));
    }
}
