//! Statement rows → ledger entries. Each data row is read into its fields first (a row
//! that cannot be read is an error naming its line); then, in the order things happened,
//! each becomes the entries it stands for, its cash checked against the row's own
//! 发生金额 when the file has one. Two-row businesses are booked as one: 配股缴款 with its
//! later 配股入账 (one rights issue under the stock's code), 中签 with its 新股入账 (one
//! buy); 逆回购 pays out the principal (its fee a separate entry) and its 购回 brings the
//! principal back with the interest. A 新股申购 paid up front freezes its money until the
//! 申购还款 brings back what was not allotted and the allotment (中签 or 新股入账) takes the
//! rest as the shares' cost; a charge on a row that is otherwise a note (指定交易, 撤指) is a
//! fee beside the note.

use std::collections::HashMap;

use crate::broker::business::{Business, classify};
use crate::broker::columns::{Columns, Field};
use crate::broker::identity;
use crate::entry::{Entry, EntryKind, Instrument};
use crate::money::{E6_PER_FEN, amount_fen, fmt_fen, parse_scaled};
use crate::store::Source;
use wyckoff_engine::fees::{Fees, fees_for};

/// More shares than any listed company has issued is a typo, not a trade.
pub const MAX_SHARES: i64 = 100_000_000_000;
/// 1,000 亿 yuan: beyond any retail account's row.
pub const MAX_FEN: i64 = 10_000_000_000_000;
/// A price above 100,000 yuan a share is a misplaced column.
pub const MAX_PRICE_E6: i64 = 100_000 * 1_000_000;
/// A repo's quantity is in 张 of 100 yuan face.
const REPO_FACE_FEN: i64 = 10_000;

/// One row's fields, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct RawRow {
    pub line: u32,
    pub text: String,
    pub business: Business,
    pub date: u32,
    /// HHMMSS.
    pub time: Option<u32>,
    pub code: Option<String>,
    pub name: String,
    pub qty: Option<i64>,
    pub price_e6: Option<i64>,
    pub amount_fen: Option<i64>,
    /// As the file signs it.
    pub net_fen: Option<i64>,
    /// `None` when the file has no fee column.
    pub fees: Option<Fees>,
    pub contract: Option<String>,
    pub trade_no: Option<String>,
    pub serial: Option<String>,
    pub shares_balance: Option<i64>,
    pub cash_balance_fen: Option<i64>,
    /// A currency other than 人民币 named by the row.
    pub currency: Option<String>,
    /// The exchange its 交易市场 or 股东代码 names.
    pub exchange: Option<wyckoff_market::code::Exchange>,
}

/// A row turned into ledger entries.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementRow {
    pub line: u32,
    /// The business as the file words it.
    pub business: String,
    pub entries: Vec<Entry>,
    /// The holding the row's 股份余额 states, when it is of a code the ledger holds as
    /// shares (not a rights, subscription or repo code).
    pub shares_balance: Option<(String, i64)>,
    pub cash_balance_fen: Option<i64>,
    /// A trade whose fees came from the fee rules (the file gave neither fees nor 发生金额).
    pub fees_computed: bool,
}

fn cell<'a>(row: &'a [String], cols: &Columns, f: Field) -> &'a str {
    cols.get(f)
        .and_then(|i| row.get(i))
        .map(String::as_str)
        .unwrap_or("")
}

/// A number cell in units of 10^-`scale`; empty (or a dash) is `None`; anything else
/// that is not a number, has more decimals than `scale`, or is beyond `max` in size is
/// an error naming the column.
fn number(text: &str, scale: u32, what: &str, max: i64) -> Result<Option<i64>, String> {
    let t = text.trim();
    if t.is_empty() || t == "-" || t == "--" || t == "—" {
        return Ok(None);
    }
    match parse_scaled(t, scale) {
        Some(v) if v.checked_abs().is_some_and(|a| a <= max) => Ok(Some(v)),
        Some(_) => Err(format!("{what}「{t}」超出合理范围")),
        None => {
            let digits = t.trim_start_matches(['-', '+', '¥', '￥']).replace(',', "");
            let numeric = !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                && digits.matches('.').count() <= 1;
            if !numeric {
                Err(format!("{what}「{t}」不是数字"))
            } else if digits
                .split_once('.')
                .is_some_and(|(_, f)| f.trim_end_matches('0').len() > scale as usize)
            {
                Err(format!("{what}「{t}」小数位超过 {scale} 位"))
            } else {
                Err(format!("{what}「{t}」超出合理范围"))
            }
        }
    }
}

/// `YYYYMMDD`, `YYYY-MM-DD`, `YYYY/MM/DD`, `YYYY-M-D`, with or without a time after it.
pub fn parse_day(s: &str) -> Option<u32> {
    let s = s.split_whitespace().next()?;
    let s = s.replace(['/', '.'], "-");
    wyckoff_market::date::parse_date(&s).or_else(|| {
        let parts: Vec<&str> = s.split('-').collect();
        let [y, m, d] = parts.as_slice() else {
            return None;
        };
        let (y, m, d): (u32, u32, u32) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
        wyckoff_market::date::parse_date(&format!("{y:04}{m:02}{d:02}"))
    })
}

/// `09:31:05`, `9:31`, `093105`, `93105` → HHMMSS.
pub fn parse_time(s: &str) -> Option<u32> {
    let s = s.split_whitespace().last()?;
    let (h, m, sec) = if s.contains(':') {
        let p: Vec<&str> = s.split(':').collect();
        match p.as_slice() {
            [h, m] => (h.parse().ok()?, m.parse().ok()?, 0),
            [h, m, x] => (h.parse().ok()?, m.parse().ok()?, x.parse().ok()?),
            _ => return None,
        }
    } else {
        let n: u32 = s.parse().ok()?;
        (n / 10_000, n / 100 % 100, n % 100)
    };
    (h < 24 && m < 60 && sec < 60).then_some(h * 10_000 + m * 100 + sec)
}

/// Six digits; Excel drops leading zeros (`1` for 000001) and some exports add the
/// exchange (`SH600519`, `600519.SH`).
fn parse_code(s: &str) -> Option<String> {
    let t = s.trim().to_ascii_uppercase();
    let t = t
        .trim_start_matches("SH")
        .trim_start_matches("SZ")
        .trim_start_matches("BJ");
    let t = t.split('.').next().unwrap_or("");
    if t.is_empty() || t.len() > 6 || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(format!("{t:0>6}"))
}

/// An id cell: empty and all-zero ids are absent.
fn id_cell(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty() && !t.bytes().all(|b| b == b'0')).then(|| t.to_owned())
}

/// Reads one data row's fields.
pub fn read_row(row: &[String], cols: &Columns, line: u32) -> Result<RawRow, String> {
    let text = cell(row, cols, Field::Business).to_owned();
    let date_text = cell(row, cols, Field::Date);
    let date = parse_day(date_text).ok_or_else(|| {
        if date_text.is_empty() {
            "缺少日期".to_owned()
        } else {
            format!("日期「{date_text}」无效")
        }
    })?;
    let time = match cell(row, cols, Field::Time) {
        "" => None,
        t => Some(parse_time(t).ok_or_else(|| format!("成交时间「{t}」无效"))?),
    };
    let code = match cell(row, cols, Field::Code) {
        "" | "-" | "--" => None,
        t => Some(parse_code(t).ok_or_else(|| format!("证券代码「{t}」不是 6 位代码"))?),
    };
    let fee = |f: Field, what: &str| -> Result<i64, String> {
        let mut sum: i64 = 0;
        for i in cols.all(f) {
            let t = row.get(*i).map(String::as_str).unwrap_or("");
            // some brokers sign fees as cash out: the size is the fee
            let v = number(t, 2, what, MAX_FEN)?.unwrap_or(0).abs();
            sum = sum
                .checked_add(v)
                .ok_or_else(|| format!("{what}超出合理范围"))?;
        }
        Ok(sum)
    };
    let fees = if cols.has_fees() {
        Some(Fees {
            commission_fen: fee(Field::Commission, "佣金")? + fee(Field::OtherFee, "其他费")?,
            stamp_fen: fee(Field::Stamp, "印花税")?,
            transfer_fen: fee(Field::Transfer, "过户费")?,
        })
    } else {
        None
    };
    let currency = match cell(row, cols, Field::Currency) {
        "" | "0" | "1" | "人民币" | "RMB" | "CNY" | "rmb" | "cny" => None,
        t => Some(t.to_owned()),
    };
    Ok(RawRow {
        line,
        business: classify(&text),
        text,
        date,
        time,
        code,
        name: wyckoff_market::meta::clean_name(cell(row, cols, Field::Name)),
        qty: number(cell(row, cols, Field::Quantity), 0, "成交数量", MAX_SHARES)?,
        price_e6: number(cell(row, cols, Field::Price), 6, "成交价格", MAX_PRICE_E6)?,
        amount_fen: number(cell(row, cols, Field::Amount), 2, "成交金额", MAX_FEN)?,
        net_fen: number(cell(row, cols, Field::Net), 2, "发生金额", MAX_FEN)?,
        fees,
        contract: id_cell(cell(row, cols, Field::Contract)),
        trade_no: id_cell(cell(row, cols, Field::TradeNo)),
        serial: id_cell(cell(row, cols, Field::Serial)),
        shares_balance: number(
            cell(row, cols, Field::SharesBalance),
            0,
            "股份余额",
            MAX_SHARES,
        )?,
        cash_balance_fen: number(cell(row, cols, Field::CashBalance), 2, "资金余额", MAX_FEN)?,
        currency,
        exchange: super::exchange::stated_exchange(
            cell(row, cols, Field::Market),
            cell(row, cols, Field::Holder),
        ),
    })
}

/// The stock a rights (配股) code stands for: Shanghai 700/760 → 600/601, Shenzhen
/// 080/082/380 → 000/002/300; a stock code stands for itself.
fn rights_underlying(code: &str) -> Option<String> {
    underlying(
        code,
        &[
            ("700", "600"),
            ("760", "601"),
            ("080", "000"),
            ("082", "002"),
            ("380", "300"),
        ],
    )
}

/// The stock a new-share subscription code stands for: Shanghai 730/780/732/787 →
/// 600/601/603/688; Shenzhen subscribes under the stock's own code.
fn allotment_underlying(code: &str) -> Option<String> {
    underlying(
        code,
        &[
            ("730", "600"),
            ("780", "601"),
            ("732", "603"),
            ("787", "688"),
        ],
    )
}

fn underlying(code: &str, map: &[(&str, &str)]) -> Option<String> {
    if Instrument::of_code(code) == Instrument::Stock {
        return Some(code.to_owned());
    }
    map.iter()
        .find(|(from, _)| code.starts_with(from))
        .map(|(_, to)| format!("{to}{}", &code[3..]))
}

/// Whether the file signs its 发生金额 (cash out negative); otherwise the business says
/// which way the cash went.
pub fn signed(rows: &[RawRow]) -> bool {
    rows.iter().any(|r| r.net_fen.is_some_and(|n| n < 0))
}

struct Ctx {
    signed: bool,
    /// Open reverse-repo principal per code, oldest first (for a return without its own).
    repo_open: HashMap<String, Vec<i64>>,
    /// Index of a listing row booked with an earlier payment → that payment's line.
    merged: HashMap<usize, u32>,
    /// Subscription money paid up front and not yet refunded or allotted in this file, by
    /// the subscription's code.
    frozen: HashMap<String, i64>,
}

/// A line and what it says (a row not understood, or what is wrong with it).
pub type LineMessage = (u32, String);
/// The rows booked, and the rows not understood (line, business).
pub type Booking = (Vec<StatementRow>, Vec<LineMessage>);

/// Turns the rows (in the order things happened) into entries. Errors name the line.
pub fn to_entries(raws: &[RawRow]) -> Result<Booking, Vec<LineMessage>> {
    let mut ctx = Ctx {
        signed: signed(raws),
        repo_open: HashMap::new(),
        merged: HashMap::new(),
        frozen: HashMap::new(),
    };
    pair_listings(raws, &mut ctx);
    let ids = identity::identities(raws);
    let mut out = Vec::new();
    let mut not_understood = Vec::new();
    let mut errors = Vec::new();
    for (i, r) in raws.iter().enumerate() {
        match row_entries(i, r, raws, &mut ctx) {
            Ok(None) => not_understood.push((r.line, r.text.clone())),
            Ok(Some((kinds, fees_computed))) => {
                let entries = kinds
                    .into_iter()
                    .enumerate()
                    .map(|(k, kind)| Entry {
                        id: 0,
                        date: r.date,
                        time: r.time,
                        name: r.name.clone(),
                        kind,
                        source: Source::Import,
                        identity: Some(if k == 0 {
                            ids[i].clone()
                        } else {
                            format!("{}/{k}", ids[i])
                        }),
                    })
                    .collect();
                out.push(StatementRow {
                    line: r.line,
                    business: r.text.clone(),
                    entries,
                    shares_balance: shares_balance(r),
                    cash_balance_fen: r.cash_balance_fen,
                    fees_computed,
                });
            }
            Err(m) => errors.push((r.line, m)),
        }
    }
    if errors.is_empty() {
        Ok((out, not_understood))
    } else {
        Err(errors)
    }
}

/// The row's 股份余额 when it is of the code the ledger holds as shares.
fn shares_balance(r: &RawRow) -> Option<(String, i64)> {
    let code = r.code.as_ref()?;
    let holds_shares = match r.business {
        Business::Buy | Business::Sell => Instrument::of_code(code) != Instrument::Repo,
        Business::BonusShares | Business::RightsListed | Business::NewSharesListed => true,
        _ => false,
    };
    holds_shares
        .then_some(r.shares_balance)
        .flatten()
        .map(|b| (code.clone(), b))
}

/// Pairs each 配股缴款 / 中签 with the first later 配股入账 / 新股入账 of the same quantity
/// (preferring the code the payment's code stands for).
fn pair_listings(raws: &[RawRow], ctx: &mut Ctx) {
    for (i, r) in raws.iter().enumerate() {
        let (listed, map): (Business, fn(&str) -> Option<String>) = match r.business {
            Business::RightsPaid => (Business::RightsListed, rights_underlying),
            Business::Allotted => (Business::NewSharesListed, allotment_underlying),
            _ => continue,
        };
        let Some(qty) = r.qty.map(i64::abs).filter(|q| *q > 0) else {
            continue;
        };
        let want = r.code.as_deref().and_then(map);
        let candidates = raws.iter().enumerate().skip(i + 1).filter(|(j, l)| {
            l.business == listed
                && l.qty.map(i64::abs) == Some(qty)
                && l.code.is_some()
                && !ctx.merged.contains_key(j)
        });
        let mut best = None;
        for (j, l) in candidates {
            if want.is_some() && l.code == want {
                best = Some(j);
                break;
            }
            best.get_or_insert(j);
        }
        if let Some(j) = best {
            ctx.merged.insert(j, r.line);
        }
    }
}

/// The listing row booked with payment `i`, if any.
fn listing_of(i: usize, ctx: &Ctx, raws: &[RawRow]) -> Option<usize> {
    ctx.merged
        .iter()
        .find(|(_, line)| **line == raws[i].line)
        .map(|(j, _)| *j)
}

type Booked = Option<(Vec<EntryKind>, bool)>;

fn row_entries(i: usize, r: &RawRow, raws: &[RawRow], ctx: &mut Ctx) -> Result<Booked, String> {
    let biz = r.text.as_str();
    let code = || r.code.clone().ok_or_else(|| format!("{biz} 缺少证券代码"));
    let moves_cash = r.net_fen.is_some_and(|n| n != 0);
    if let Some(cur) = &r.currency
        && (moves_cash || r.amount_fen.is_some_and(|a| a != 0))
    {
        return Err(format!("币种「{cur}」不是人民币，账本只记人民币"));
    }
    // the cash a money row moved: its 发生金额, else its 成交金额
    let cash = |what: &str| -> Result<i64, String> {
        r.net_fen
            .or(r.amount_fen)
            .map(i64::abs)
            .filter(|a| *a > 0)
            .ok_or_else(|| format!("{biz} 缺少{what}金额"))
    };
    let qty_in = |what: &str| -> Result<i64, String> {
        match r.qty {
            Some(q) if q > 0 => Ok(q),
            Some(q) if q < 0 => Err(format!("{what}数量 {q} 为负")),
            _ => Err(format!("{biz} 缺少{what}数量")),
        }
    };
    let mut fees_computed = false;
    let kinds: Vec<EntryKind> = match r.business {
        Business::Buy | Business::Sell => {
            let code = code()?;
            if Instrument::of_code(&code) == Instrument::Repo {
                if r.business == Business::Buy {
                    return Err(format!(
                        "买入回购代码 {code}（融资回购，借入资金）不在账本支持范围"
                    ));
                }
                repo_lend(r, code, ctx)?
            } else {
                let (kind, computed) = trade(r, code)?;
                fees_computed = computed;
                vec![kind]
            }
        }
        Business::RepoLend => repo_lend(r, code()?, ctx)?,
        Business::RepoReturn => {
            let code = code()?;
            let open = ctx.repo_open.entry(code.clone()).or_default();
            let principal = match (r.qty, r.amount_fen) {
                (Some(q), _) if q != 0 => q
                    .abs()
                    .checked_mul(REPO_FACE_FEN)
                    .ok_or("回购数量超出合理范围")?,
                (_, Some(a)) if a != 0 => a.abs(),
                _ if !open.is_empty() => open[0],
                _ => return Err(format!("{biz} 缺少数量或成交金额，无法确定本金")),
            };
            if let Some(k) = open.iter().position(|p| *p == principal) {
                open.remove(k);
            }
            let back = r
                .net_fen
                .map(i64::abs)
                .ok_or_else(|| format!("{biz} 缺少发生金额，无法确定利息"))?;
            let interest = back - principal;
            if interest < 0 {
                return Err(format!(
                    "{biz} 发生金额 {} 少于本金 {}",
                    fmt_fen(back),
                    fmt_fen(principal)
                ));
            }
            vec![EntryKind::RepoReturn {
                code,
                principal_fen: principal,
                interest_fen: interest,
            }]
        }
        Business::BonusShares => {
            if moves_cash {
                return Err(format!("{biz} 不应有发生金额"));
            }
            vec![EntryKind::BonusShares {
                code: code()?,
                shares: qty_in("送转股")?,
            }]
        }
        Business::Dividend => vec![EntryKind::Dividend {
            code: code()?,
            amount_fen: cash("股息")?,
        }],
        Business::Tax => vec![EntryKind::Tax {
            code: r.code.clone(),
            amount_fen: cash("扣税")?,
        }],
        Business::Interest => {
            let a = cash("利息")?;
            if ctx.signed && r.net_fen.is_some_and(|n| n < 0) {
                // interest charged (融资利息, 透支利息) is a cost
                vec![EntryKind::Fee {
                    code: r.code.clone(),
                    amount_fen: a,
                }]
            } else {
                vec![EntryKind::Interest { amount_fen: a }]
            }
        }
        Business::Fee => vec![EntryKind::Fee {
            code: r.code.clone(),
            amount_fen: cash("费用")?,
        }],
        Business::CashIn => vec![EntryKind::CashIn {
            amount_fen: cash("转账")?,
        }],
        Business::CashOut => vec![EntryKind::CashOut {
            amount_fen: cash("转账")?,
        }],
        Business::RightsPaid => {
            let paid_code = code()?;
            let shares = qty_in("配股")?;
            let stock = match listing_of(i, ctx, raws) {
                Some(j) => raws[j].code.clone(),
                None => rights_underlying(&paid_code),
            }
            .ok_or_else(|| {
                format!("配股代码 {paid_code} 对应的股票无法确定（文件里也没有对应的配股入账行）")
            })?;
            let amount = match r.net_fen {
                Some(n) if n != 0 => n.abs(),
                _ => {
                    r.amount_fen
                        .map(i64::abs)
                        .ok_or_else(|| format!("{biz} 缺少缴款金额"))?
                        + r.fees.map(|f| f.total_fen()).unwrap_or(0)
                }
            };
            let price_e6 = match r.price_e6 {
                Some(p) if p > 0 => p,
                _ => return Err(format!("{biz} 缺少配股价格")),
            };
            vec![EntryKind::RightsIssue {
                code: stock,
                shares,
                price_e6,
                amount_fen: amount,
            }]
        }
        Business::Allotted | Business::NewSharesListed
            if !moves_cash
                && !ctx.merged.contains_key(&i)
                && frozen_cover(r, allotted_stock(i, r, ctx, raws).as_deref(), ctx).is_some() =>
        {
            let stock =
                allotted_stock(i, r, ctx, raws).ok_or_else(|| format!("{biz} 缺少证券代码"))?;
            let (sub_code, cost) = frozen_cover(r, Some(&stock), ctx)
                .ok_or_else(|| format!("{biz} 没有对应的冻结申购款"))?;
            allot_from_frozen(r, stock, sub_code, cost, ctx)?
        }
        Business::Allotted
            if r.qty.is_some_and(|q| q != 0)
                && (moves_cash
                    || (r.net_fen.is_none() && r.amount_fen.is_some_and(|a| a != 0))) =>
        {
            let sub_code = code()?;
            let stock = match listing_of(i, ctx, raws) {
                Some(j) => raws[j].code.clone(),
                None => allotment_underlying(&sub_code),
            }
            .ok_or_else(|| {
                format!("中签代码 {sub_code} 对应的股票无法确定（文件里也没有对应的新股入账行）")
            })?;
            let (kind, computed) = trade(r, stock)?;
            fees_computed = computed;
            vec![kind]
        }
        Business::RightsListed | Business::NewSharesListed => {
            if moves_cash {
                return Err(format!("{biz} 不应有发生金额"));
            }
            let text = match ctx.merged.get(&i) {
                Some(paid) => format!("{biz} {}（随第 {paid} 行缴款记入）", r.qty.unwrap_or(0)),
                None => format!("{biz} {}（缴款不在本文件）", r.qty.unwrap_or(0)),
            };
            vec![EntryKind::Note { text }]
        }
        Business::Subscription | Business::Allotted if moves_cash => {
            let code = code()?;
            let amount = cash("申购")?;
            let back = if ctx.signed {
                r.net_fen.is_some_and(|n| n > 0)
            } else {
                REFUND_WORDS.iter().any(|w| biz.contains(w))
            };
            let open = ctx.frozen.entry(code.clone()).or_default();
            if back {
                // a refund of money frozen before this file is the ledger's to check
                *open = (*open - amount).max(0);
                vec![EntryKind::SubscriptionReleased {
                    code,
                    amount_fen: amount,
                }]
            } else {
                *open += amount;
                vec![EntryKind::SubscriptionPaid {
                    code,
                    amount_fen: amount,
                }]
            }
        }
        Business::Note if moves_cash => {
            let amount = cash("费用")?;
            let charge = if ctx.signed {
                r.net_fen.is_some_and(|n| n < 0)
            } else {
                true
            };
            let money = if charge {
                EntryKind::Fee {
                    code: r.code.clone(),
                    amount_fen: amount,
                }
            } else {
                EntryKind::Interest { amount_fen: amount }
            };
            vec![EntryKind::Note { text: note_text(r) }, money]
        }
        Business::Allotted | Business::Subscription | Business::Note => {
            // an allotment that books nothing leaves its listing row to book itself
            ctx.merged.retain(|_, line| *line != r.line);
            vec![EntryKind::Note { text: note_text(r) }]
        }
        Business::Unknown => {
            let moves_shares = r.qty.is_some_and(|q| q != 0) && r.code.is_some();
            let moves_money =
                moves_cash || (r.net_fen.is_none() && r.amount_fen.is_some_and(|a| a != 0));
            if moves_shares || moves_cash || moves_money {
                return Err(format!(
                    "不认识的业务「{biz}」动了{}，无法放进账本",
                    if moves_shares { "股份" } else { "资金" }
                ));
            }
            return Ok(None);
        }
    };
    for k in &kinds {
        k.validate()?;
    }
    check_net(r, &kinds, ctx.signed)?;
    Ok(Some((kinds, fees_computed)))
}

/// How an unsigned file words subscription money coming back.
const REFUND_WORDS: &[&str] = &["还款", "返款", "退款", "退还", "返还", "解冻"];

/// The stock an allotment row is for: a listing row's own code; a 中签 row's paired
/// listing, else the stock its subscription code stands for.
fn allotted_stock(i: usize, r: &RawRow, ctx: &Ctx, raws: &[RawRow]) -> Option<String> {
    match r.business {
        Business::NewSharesListed => r.code.clone(),
        _ => match listing_of(i, ctx, raws) {
            Some(j) => raws[j].code.clone(),
            None => r.code.as_deref().and_then(allotment_underlying),
        },
    }
}

/// The cost of allotted shares and the subscription whose frozen money pays it: the row's
/// 成交金额, else price × quantity, else all that is still frozen; `None` when no
/// subscription for the stock has that much frozen in this file.
fn frozen_cover(r: &RawRow, stock: Option<&str>, ctx: &Ctx) -> Option<(String, i64)> {
    let stock = stock?;
    let shares = r.qty.filter(|q| *q > 0)?;
    let mut open: Vec<(&String, &i64)> = ctx
        .frozen
        .iter()
        .filter(|(code, left)| {
            **left > 0
                && (code.as_str() == stock || allotment_underlying(code).as_deref() == Some(stock))
        })
        .collect();
    open.sort();
    let (code, left) = open.first()?;
    let cost = match (r.amount_fen, r.price_e6) {
        (Some(a), _) if a != 0 => a.abs(),
        (_, Some(p)) if p > 0 => amount_fen(p, shares),
        _ => **left,
    };
    (cost > 0 && cost <= **left).then(|| ((*code).clone(), cost))
}

/// Allotted shares paid from frozen subscription money: the money released and the shares
/// bought with it in one row, so the cash does not move.
fn allot_from_frozen(
    r: &RawRow,
    stock: String,
    sub_code: String,
    cost: i64,
    ctx: &mut Ctx,
) -> Result<Vec<EntryKind>, String> {
    let shares = r
        .qty
        .filter(|q| *q > 0)
        .ok_or_else(|| format!("{} 缺少数量", r.text))?;
    let price_e6 = match r.price_e6 {
        Some(p) if p > 0 => p,
        _ => i64::try_from(i128::from(cost) * i128::from(E6_PER_FEN) / i128::from(shares))
            .map_err(|_| "中签价格超出合理范围".to_owned())?,
    };
    if let Some(left) = ctx.frozen.get_mut(&sub_code) {
        *left -= cost;
    }
    Ok(vec![
        EntryKind::SubscriptionReleased {
            code: sub_code,
            amount_fen: cost,
        },
        EntryKind::Buy {
            code: stock,
            shares,
            price_e6,
            amount_fen: cost,
            fees: Fees::default(),
        },
    ])
}

fn note_text(r: &RawRow) -> String {
    let mut t = r.text.clone();
    if let Some(c) = &r.code {
        t.push(' ');
        t.push_str(c);
    }
    if let Some(q) = r.qty.filter(|q| *q != 0) {
        t.push_str(&format!(" {q}"));
    }
    t
}

/// A buy or sell of anything with a price: quantity, price and amount agree (an average
/// price is rounded: half a 0.001 per share plus a fen), fees from the file's columns,
/// else from its 发生金额, else (stocks) from the fee rules.
fn trade(r: &RawRow, code: String) -> Result<(EntryKind, bool), String> {
    let buy = matches!(r.business, Business::Buy | Business::Allotted);
    let biz = &r.text;
    let shares = match r.qty {
        Some(q) if q > 0 => q,
        // a sale's quantity signed as shares out
        Some(q) if q < 0 && !buy => -q,
        Some(q) if q < 0 => return Err(format!("成交数量 {q} 为负，但{biz}应增加持仓")),
        _ => return Err(format!("{biz} 缺少成交数量")),
    };
    let amount_cell = r.amount_fen.map(i64::abs);
    let price_e6 = match r.price_e6 {
        Some(p) if p > 0 => p,
        Some(p) if p < 0 => return Err("成交价格不能为负".into()),
        // an allotment may print only the amount
        _ => match amount_cell {
            Some(a) if a > 0 => a * 10_000 / shares,
            _ => return Err(format!("{biz} 缺少成交价格")),
        },
    };
    let computed = amount_fen(price_e6, shares);
    let (shares, amount) = match amount_cell {
        None => (shares, computed),
        Some(a) => {
            let slack = shares / 2000 + 1;
            if (a - computed).abs() <= slack {
                (shares, a)
            } else if Instrument::of_code(&code) == Instrument::Bond
                && (a - amount_fen(price_e6, shares * 10)).abs() <= slack * 10
            {
                // a Shanghai bond counted in 手 of 10 张
                (shares * 10, a)
            } else {
                return Err(format!(
                    "成交金额 {} 与 价格×数量 {} 不符",
                    fmt_fen(a),
                    fmt_fen(computed)
                ));
            }
        }
    };
    let (fees, fees_computed) = match (r.fees, r.net_fen) {
        (Some(f), _) => (f, false),
        (None, Some(n)) => {
            let f = if buy {
                n.abs() - amount
            } else {
                amount - n.abs()
            };
            if f < 0 {
                return Err(format!(
                    "发生金额 {} 与 成交金额 {} 不符（费用为负）",
                    fmt_fen(n),
                    fmt_fen(amount)
                ));
            }
            (
                Fees {
                    commission_fen: f,
                    ..Fees::default()
                },
                false,
            )
        }
        (None, None) if Instrument::of_code(&code) == Instrument::Stock => {
            (fees_for(amount, !buy, r.date), true)
        }
        (None, None) => (Fees::default(), true),
    };
    let kind = if buy {
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
    };
    Ok((kind, fees_computed))
}

/// 逆回购: the principal out (成交金额, else quantity × 100 yuan) and its fee as a
/// separate entry (from the fee columns, else what 发生金额 holds beyond the principal).
fn repo_lend(r: &RawRow, code: String, ctx: &mut Ctx) -> Result<Vec<EntryKind>, String> {
    let principal = match (r.amount_fen, r.qty) {
        (Some(a), _) if a != 0 => a.abs(),
        (_, Some(q)) if q != 0 => q
            .abs()
            .checked_mul(REPO_FACE_FEN)
            .ok_or("回购数量超出合理范围")?,
        _ => return Err(format!("{} 缺少成交金额", r.text)),
    };
    let fee = match (r.fees, r.net_fen) {
        (Some(f), _) => f.total_fen(),
        (None, Some(n)) => n.abs() - principal,
        (None, None) => 0,
    };
    if fee < 0 {
        return Err(format!(
            "发生金额 {} 少于回购本金 {}",
            fmt_fen(r.net_fen.unwrap_or(0)),
            fmt_fen(principal)
        ));
    }
    ctx.repo_open
        .entry(code.clone())
        .or_default()
        .push(principal);
    let mut out = vec![EntryKind::RepoLend {
        code: code.clone(),
        amount_fen: principal,
    }];
    if fee > 0 {
        out.push(EntryKind::Fee {
            code: Some(code),
            amount_fen: fee,
        });
    }
    Ok(out)
}

/// The row's 发生金额 is the cash its entries move (signed files: sign too).
fn check_net(r: &RawRow, kinds: &[EntryKind], signed: bool) -> Result<(), String> {
    let Some(net) = r.net_fen else {
        return Ok(());
    };
    let cash: i64 = kinds.iter().map(EntryKind::cash_fen).sum();
    let ok = if signed {
        net == cash
    } else {
        net.abs() == cash.abs()
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "发生金额 {} 与本行算出的资金变动 {} 不符",
            fmt_fen(net),
            fmt_fen(cash)
        ))
    }
}
