//! A broker's statement (交割单 / 对账单) export read into ledger entries: the bytes
//! decoded ([`decode`]), the header's columns named ([`columns`]), each row's business
//! understood ([`business`]) and booked ([`rows`]) with an identity that makes a re-import
//! add nothing ([`identity`]), and the statement's own balance columns checked against
//! the ledger ([`reconcile`]). A row that cannot be read, or that moves shares or cash
//! the ledger cannot place, refuses the whole file with its line named; a row whose
//! business is not understood but moves nothing is listed, never guessed at.

pub mod business;
pub mod columns;
pub mod decode;
pub mod exchange;
pub mod identity;
pub mod reconcile;
pub mod rows;

use serde::Serialize;

use columns::Columns;
pub use decode::{DecodeError, MAX_BYTES, TextEncoding};
pub use reconcile::{Difference, DifferenceKind, Reconciliation};
pub use rows::StatementRow;

/// Lines searched for the header (account and title lines come first in some exports).
const HEADER_WITHIN: usize = 30;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct RowError {
    /// 1-based line in the file.
    pub line: u32,
    pub message: String,
}

/// A row left out of the ledger: its business is not one the ledger knows and it moves
/// neither shares nor cash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct SkippedRow {
    pub line: u32,
    /// The row's business, as the file words it.
    pub business: String,
}

/// A line that is not a row by rule: a 合计/小计 summary, or a note without columns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct IgnoredLine {
    pub line: u32,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CsvError {
    #[error("{0}")]
    Decode(#[from] DecodeError),
    #[error(
        "找不到表头：前 30 行里没有一行同时含 日期（成交日期/发生日期）、业务（业务名称/操作/买卖标志）和 证券代码或发生金额 的列"
    )]
    NoHeader,
    #[error("{} 行有错误，未导入任何记录：{}", .0.len(), .0.iter().map(|e| format!("第 {} 行 {}", e.line, e.message)).collect::<Vec<_>>().join("；"))]
    BadRows(Vec<RowError>),
    #[error("文件里没有交割记录")]
    Empty,
}

/// A statement read whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub encoding: TextEncoding,
    /// 1-based line of the header.
    pub header_line: u32,
    /// Rows booked, in the order things happened (a newest-first export is turned round).
    pub rows: Vec<StatementRow>,
    pub not_understood: Vec<SkippedRow>,
    pub ignored: Vec<IgnoredLine>,
    /// Header columns the reader does not use.
    pub unread_columns: Vec<String>,
    /// The exchange the statement names for a code (交易市场 / 股东代码), with the line that
    /// names it last.
    pub exchanges: std::collections::BTreeMap<String, (wyckoff_market::code::Exchange, u32)>,
}

impl Statement {
    pub fn skipped_count(&self) -> usize {
        self.not_understood.len()
    }

    pub fn entries(&self) -> impl Iterator<Item = &crate::entry::Entry> {
        self.rows.iter().flat_map(|r| &r.entries)
    }
}

/// A summary line: its first non-empty cell starts with 合计, 总计, 小计, 共计 or 汇总.
fn is_summary(cells: &[String]) -> bool {
    cells.iter().find(|c| !c.is_empty()).is_some_and(|c| {
        ["合计", "总计", "小计", "共计", "汇总"]
            .iter()
            .any(|w| c.starts_with(w))
    })
}

fn bad_rows(mut errors: Vec<RowError>) -> CsvError {
    errors.sort_by_key(|e| e.line);
    CsvError::BadRows(errors)
}

/// Reads a whole export. `Err(BadRows)` lists every row that cannot be read or booked.
pub fn parse(bytes: &[u8]) -> Result<Statement, CsvError> {
    let decoded = decode::decode(bytes)?;
    let lines = decode::lines(&decoded.text);
    let (hi, delim, cols) = lines
        .iter()
        .take(HEADER_WITHIN)
        .find_map(|(n, l)| {
            let delim = decode::delimiter(l);
            let c = Columns::of_header(&decode::split(l, delim));
            c.is_header().then_some((*n, delim, c))
        })
        .ok_or(CsvError::NoHeader)?;
    let mut raws = Vec::new();
    let mut ignored = Vec::new();
    let mut errors = Vec::new();
    for (n, l) in lines.iter().skip(hi) {
        let line = *n as u32;
        let cells = decode::split(l, delim);
        if cells.iter().all(String::is_empty) {
            continue;
        }
        if cells.len() == 1 || is_summary(&cells) || l.trim_start().starts_with('#') {
            ignored.push(IgnoredLine {
                line,
                text: l.trim().to_owned(),
            });
            continue;
        }
        match rows::read_row(&cells, &cols, line) {
            Ok(r) => raws.push(r),
            Err(message) => errors.push(RowError { line, message }),
        }
    }
    if raws.is_empty() && errors.is_empty() {
        return Err(CsvError::Empty);
    }
    if raws.first().map(|r| r.date) > raws.last().map(|r| r.date) {
        raws.reverse();
    }
    // the rows that read are booked even when others did not, so one refusal names every
    // bad line
    let exchanges = raws
        .iter()
        .filter_map(|r| Some((r.code.clone()?, (r.exchange?, r.line))))
        .collect();
    let booked = rows::to_entries(&raws);
    let (rows, not_understood) = match booked {
        Ok(b) if errors.is_empty() => b,
        Ok(_) => return Err(bad_rows(errors)),
        Err(errs) => {
            errors.extend(
                errs.into_iter()
                    .map(|(line, message)| RowError { line, message }),
            );
            return Err(bad_rows(errors));
        }
    };
    let mut not_understood: Vec<SkippedRow> = not_understood
        .into_iter()
        .map(|(line, business)| SkippedRow { line, business })
        .collect();
    not_understood.sort_by_key(|s| s.line);
    Ok(Statement {
        exchanges,
        encoding: decoded.encoding,
        header_line: hi as u32,
        rows,
        not_understood,
        ignored,
        unread_columns: cols.unread.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Entry, EntryKind};
    use business::Business;

    const STATEMENT: &[u8] = include_bytes!("../../tests/fixtures/broker/statement_2023.csv");
    const FIXTURES: &[(&str, &[u8])] = &[
        ("statement_2023.csv", STATEMENT),
        (
            "tonghuashun_generic.txt",
            include_bytes!("../../tests/fixtures/broker/tonghuashun_generic.txt"),
        ),
        (
            "eastmoney_style.csv",
            include_bytes!("../../tests/fixtures/broker/eastmoney_style.csv"),
        ),
        (
            "citic_style.csv",
            include_bytes!("../../tests/fixtures/broker/citic_style.csv"),
        ),
        (
            "guotaijunan_style.csv",
            include_bytes!("../../tests/fixtures/broker/guotaijunan_style.csv"),
        ),
        (
            "subscription_prepaid_2015.csv",
            include_bytes!("../../tests/fixtures/broker/subscription_prepaid_2015.csv"),
        ),
    ];

    /// The entries as a store would number them.
    fn numbered(st: &Statement) -> Vec<Entry> {
        st.entries()
            .enumerate()
            .map(|(i, e)| Entry {
                id: i as i64 + 1,
                ..e.clone()
            })
            .collect()
    }

    fn kinds(st: &Statement) -> Vec<&'static str> {
        st.entries().map(|e| e.kind.as_str()).collect()
    }

    #[test]
    fn a_whole_year_books_every_business() {
        let st = parse(STATEMENT).unwrap();
        assert_eq!(st.encoding, TextEncoding::Utf8);
        assert_eq!(
            kinds(&st),
            [
                "note",         // 指定交易
                "cash_in",      // 银行转证券
                "buy",          // 600036
                "buy",          // 510300 ETF
                "buy",          // 000651
                "repo_lend",    // 融券回购 50,000.00
                "fee",          // its 0.50
                "repo_return",  // 融券购回
                "sell",         // 600036
                "note",         // 新股申购
                "dividend",     // 股息入账
                "bonus_shares", // 红股入账
                "sell",         // 000651
                "rights_issue", // 配股缴款, under 600036
                "note",         // 配股入账 (booked with the payment)
                "sell",         // 600036
                "tax",          // 股息红利差异扣税
                "sell",         // 510300
                "interest",     // 利息归本
                "cash_out",     // 证券转银行
            ]
        );
        let find = |k: &str| st.entries().find(|e| e.kind.as_str() == k).unwrap();
        assert_eq!(
            find("rights_issue").kind,
            EntryKind::RightsIssue {
                code: "600036".into(),
                shares: 150,
                price_e6: 8_590_000,
                amount_fen: 128_850
            }
        );
        assert_eq!(
            find("repo_return").kind,
            EntryKind::RepoReturn {
                code: "204001".into(),
                principal_fen: 5_000_000,
                interest_fen: 966
            }
        );
        assert_eq!(
            find("bonus_shares").kind,
            EntryKind::BonusShares {
                code: "000651".into(),
                shares: 600
            }
        );
        let etf = st.entries().nth(3).unwrap();
        assert_eq!(
            (etf.kind.code(), etf.time, etf.name.as_str()),
            (Some("510300"), Some(100_241), "沪深300ETF")
        );
        // the 合计 line is left out by rule and said so
        assert_eq!(st.ignored.len(), 1);
        assert_eq!(st.ignored[0].line, 21);
        assert!(st.not_understood.is_empty());
        // the 股东代码 column is read: each code's account names its exchange
        assert!(!st.unread_columns.contains(&"股东代码".to_owned()));
        use wyckoff_market::code::Exchange;
        assert_eq!(st.exchanges["510300"].0, Exchange::SH);
        assert_eq!(st.exchanges["000651"].0, Exchange::SZ);
    }

    #[test]
    fn every_fixture_reconciles_with_its_own_balances() {
        for (name, bytes) in FIXTURES {
            let st = parse(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            let r = reconcile::reconcile(&reconcile::checkpoints(&st.rows), &numbered(&st));
            assert!(r.has_cash_balance, "{name}");
            assert!(r.has_shares_balance, "{name}");
            assert!(r.checked >= 4, "{name}: {r:?}");
            assert_eq!(r.differences, [], "{name}");
        }
    }

    #[test]
    fn gbk_and_bom_read_the_same_rows() {
        let text = std::str::from_utf8(STATEMENT).unwrap();
        let (gbk, _, bad) = encoding_rs::GBK.encode(text);
        assert!(!bad);
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend_from_slice(STATEMENT);
        let plain = parse(STATEMENT).unwrap();
        for (bytes, enc) in [
            (gbk.to_vec(), TextEncoding::Gbk),
            (bom, TextEncoding::Utf8Bom),
        ] {
            let st = parse(&bytes).unwrap();
            assert_eq!(st.encoding, enc);
            assert_eq!(st.rows, plain.rows);
        }
    }

    #[test]
    fn broker_styles() {
        // 同花顺: tabs, GBK, ="…" cells; a repo lent as 证券卖出 131810 and back by 拆出质押购回
        let ths = parse(FIXTURES[1].1).unwrap();
        assert_eq!(ths.encoding, TextEncoding::Gbk);
        assert_eq!(
            kinds(&ths),
            [
                "cash_in",
                "buy",
                "buy",
                "repo_lend",
                "fee",
                "repo_return",
                "sell",
                "sell"
            ]
        );
        let id = ths.entries().nth(1).unwrap().identity.clone().unwrap();
        assert!(id.contains("order=201") && id.contains("fill=9001"), "{id}");
        // 中信: newest first with title lines, unsigned 收付金额: booked oldest first
        let citic = parse(FIXTURES[3].1).unwrap();
        let dates: Vec<u32> = citic.entries().map(|e| e.date).collect();
        assert!(dates.windows(2).all(|w| w[0] <= w[1]), "{dates:?}");
        assert_eq!(citic.entries().next().unwrap().kind.as_str(), "cash_in");
        assert_eq!(citic.ignored.len(), 1);
        // 国泰君安: two identical buys on one day, no ids or times: told apart by order
        let gtja = parse(FIXTURES[4].1).unwrap();
        let ids: Vec<String> = gtja.entries().filter_map(|e| e.identity.clone()).collect();
        assert_eq!(ids.len(), 5);
        assert_eq!(format!("{}#2", ids[1]), ids[2]);
        // 东方财富: BOM, 佣金 + 经手费 + 证管费
        assert_eq!(
            parse(FIXTURES[2].1).unwrap().encoding,
            TextEncoding::Utf8Bom
        );
    }

    const HEAD: &str = "成交日期,业务名称,证券代码,证券名称,成交数量,成交价格,成交金额,手续费,印花税,过户费,发生金额\n";

    fn bad_lines(body: &str) -> Vec<RowError> {
        match parse(format!("{HEAD}{body}").as_bytes()) {
            Err(CsvError::BadRows(rows)) => rows,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rows_the_ledger_cannot_place_refuse_the_file_by_line() {
        let rows = bad_lines(
            "20240102,证券买入,600519,贵州茅台,100,1700.00,170000.00,42.50,0,1.70,-170044.20\n\
20240103,股份转出,600519,贵州茅台,100,,,,,,\n\
20240104,证券买入,000001,平安银行,-100,10.00,1000.00,5,0,0.01,-1005.01\n\
20240105,证券买入,000001,平安银行,100,10.00,99999999999999999999,5,0,0.01,\n\
20240106,证券买入,000001,平安银行,1000000000000,10.00,,5,0,0.01,\n\
20240107,指定交易,,,,,,,,,-5.00\n\
20240108,证券买入,000001,平安银行,100,10.00,1000.00,5,0,0.01,-1000.00\n\
20240230,证券买入,000001,平安银行,100,10.00,1000.00,5,0,0.01,\n\
20240109,证券买入,204001,GC001,100,2.0,10000.00,0,0,0,\n",
        );
        let got: Vec<(u32, &str)> = rows.iter().map(|r| (r.line, r.message.as_str())).collect();
        let want_words = [
            (3, "股份转出"),
            (4, "为负"),
            (5, "超出合理范围"),
            (6, "超出合理范围"),
            (8, "发生金额"),
            (9, "日期"),
            (10, "融资回购"),
        ];
        assert_eq!(got.len(), want_words.len(), "{got:?}");
        for ((line, msg), (want_line, word)) in got.iter().zip(want_words) {
            assert_eq!(*line, want_line, "{got:?}");
            assert!(msg.contains(word), "line {line}: {msg}");
        }
    }

    #[test]
    fn a_prepaid_subscription_is_frozen_then_refunded_and_allotted() {
        let st = parse(FIXTURES[5].1).unwrap();
        assert_eq!(
            kinds(&st),
            [
                "cash_in",
                "note", // 指定交易
                "fee",  // its 5.00
                "buy",  // 600036
                "subscription_paid",
                "note",                  // 申购配号
                "subscription_released", // 中签: 1,000.00 of the frozen money
                "buy",                   // … buys the 500 shares
                "subscription_released", // 申购还款 9,000.00
                "note",                  // 新股入账 (booked with the 中签)
                "sell",
                "note", // 撤销指定
                "fee",
            ]
        );
        let e: Vec<&EntryKind> = st.entries().map(|e| &e.kind).collect();
        assert_eq!(
            *e[2],
            EntryKind::Fee {
                code: Some("799999".into()),
                amount_fen: 500
            }
        );
        assert_eq!(
            *e[4],
            EntryKind::SubscriptionPaid {
                code: "732123".into(),
                amount_fen: 1_000_000
            }
        );
        assert_eq!(
            *e[6],
            EntryKind::SubscriptionReleased {
                code: "732123".into(),
                amount_fen: 100_000
            }
        );
        assert_eq!(
            *e[7],
            EntryKind::Buy {
                code: "603123".into(),
                shares: 500,
                price_e6: 2_000_000,
                amount_fen: 100_000,
                fees: wyckoff_engine::fees::Fees::default()
            }
        );
        assert_eq!(
            *e[8],
            EntryKind::SubscriptionReleased {
                code: "732123".into(),
                amount_fen: 900_000
            }
        );
        let l = crate::ledger::replay(&numbered(&st)).unwrap();
        // 50,000.00 − 5.00 − 16,006.00 − 10,000.00 + 9,000.00 + 1,432.56 − 5.00
        assert_eq!(l.cash_fen, 3_441_656);
        assert!(l.subscription_fen.is_empty(), "{:?}", l.subscription_fen);
        assert_eq!(l.totals.taxes_fen, 1_000);
        // the new shares cost 1,000.00 and sold for 1,440.00 − 7.44 fees
        assert_eq!(l.realised_fen(), 43_256);
        assert_eq!(
            l.held()
                .map(|(c, h)| (c.as_str(), h.shares))
                .collect::<Vec<_>>(),
            [("600036", 1000)]
        );
    }

    #[test]
    fn a_listing_takes_its_cost_from_the_frozen_money_and_charges_ride_beside_notes() {
        // no 中签 row: the 新股入账 takes what stayed frozen after the refund; an unsigned
        // file says a refund by its words
        let st = parse(
            format!(
                "{HEAD}20150105,银行转证券,,,,,,,,,20000.00\n\
20150107,新股申购,732123,某某申购,5000,2.00,10000.00,,,,-10000.00\n\
20150112,申购还款,732123,某某申购,,,,,,,9000.00\n\
20150120,新股入账,603123,某某股份,500,,,,,,\n\
20150121,指定交易,,,,,,,,,-5.00\n"
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            kinds(&st),
            [
                "cash_in",
                "subscription_paid",
                "subscription_released",
                "subscription_released",
                "buy",
                "note",
                "fee"
            ]
        );
        let buy = st.entries().nth(4).unwrap();
        assert_eq!(
            (buy.kind.code(), buy.kind.cash_fen()),
            (Some("603123"), -100_000)
        );
        let l = crate::ledger::replay(&numbered(&st)).unwrap();
        assert_eq!(l.cash_fen, 2_000_000 - 1_000_000 + 900_000 - 500);
        assert_eq!(l.holdings["603123"].basis_fen(), 100_000);
        let unsigned = parse(
            format!(
                "{HEAD}20150105,银行转证券,,,,,,,,,20000.00\n\
20150107,新股申购,002999,某某股份,5000,2.00,10000.00,,,,10000.00\n\
20150112,申购返款,002999,某某股份,,,,,,,10000.00\n"
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            kinds(&unsigned),
            ["cash_in", "subscription_paid", "subscription_released"]
        );
        let l = crate::ledger::replay(&numbered(&unsigned)).unwrap();
        assert_eq!((l.cash_fen, l.subscription_total_fen()), (2_000_000, 0));
    }

    #[test]
    fn a_business_not_understood_that_moves_nothing_is_listed() {
        let st = parse(
            format!("{HEAD}20240102,银行转证券,,,,,,,,,10000.00\n20240103,密码修改,,,,,,,,,0.00\n")
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            st.not_understood,
            [SkippedRow {
                line: 3,
                business: "密码修改".into()
            }]
        );
        assert_eq!(kinds(&st), ["cash_in"]);
        assert_eq!(business::classify("密码修改"), Business::Unknown);
    }

    #[test]
    fn headers_and_empty_files() {
        assert_eq!(parse(b"a,b,c\n1,2,3\n"), Err(CsvError::NoHeader));
        assert_eq!(parse(HEAD.as_bytes()), Err(CsvError::Empty));
        assert!(matches!(
            parse(b"PK\x03\x04..."),
            Err(CsvError::Decode(DecodeError::Workbook))
        ));
    }
}
