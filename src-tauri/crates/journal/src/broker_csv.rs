//! A broker's 交割单 (settlement statement) export: comma- or tab-separated text, UTF-8 or
//! GBK, a header row with the common column names of the big brokers' exports, one trade
//! a row. Every row is checked; a file with any bad row imports nothing, and each bad row
//! is named by its line. Rows of other business (bank transfers, dividends, interest,
//! subscriptions) are skipped and listed, not guessed at.

use serde::Serialize;

use crate::ledger::Side;
use crate::money::{amount_fen, parse_fen, parse_price};
use wyckoff_engine::fees::{Fees, fees_for};

/// One trade read from the file.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedFill {
    /// 1-based line in the file.
    pub line: usize,
    pub code: String,
    pub name: String,
    pub side: Side,
    pub date: u32,
    pub price_e6: i64,
    pub shares: i64,
    pub amount_fen: i64,
    pub fees: Fees,
    /// No fee column in the file: the backtest's rules supplied them.
    pub fees_computed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct RowError {
    /// 1-based line in the file.
    pub line: u32,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct SkippedRow {
    pub line: u32,
    /// The row's business, as the file words it (e.g. 银行转证券).
    pub business: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub fills: Vec<ImportedFill>,
    pub skipped: Vec<SkippedRow>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CsvError {
    #[error("文件不是 UTF-8 或 GBK 编码的文本")]
    Encoding,
    #[error("找不到表头：需要 成交日期、证券代码、操作/买卖标志、成交数量、成交价格 等列")]
    NoHeader,
    #[error("表头缺少列：{0}")]
    MissingColumn(String),
    #[error("{} 行有错误，未导入任何记录：{}", .0.len(), .0.iter().map(|e| format!("第 {} 行 {}", e.line, e.message)).collect::<Vec<_>>().join("；"))]
    BadRows(Vec<RowError>),
    #[error("文件里没有成交记录")]
    Empty,
}

/// UTF-8 (with or without BOM), else GBK; `None` when neither decodes cleanly.
pub fn decode(bytes: &[u8]) -> Option<String> {
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Some(s.to_owned());
    }
    let (text, had_errors) = encoding_rs::GBK.decode_without_bom_handling(bytes);
    (!had_errors).then(|| text.into_owned())
}

/// Splits one line on `delim`, honouring double quotes; strips Excel's `="…"` wrappers.
fn split(line: &str, delim: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == delim && !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|c| {
            let c = c.trim();
            let c = c.strip_prefix('=').unwrap_or(c).trim_matches('"');
            c.strip_prefix('\'').unwrap_or(c).trim().to_owned()
        })
        .collect()
}

/// Which column holds what.
#[derive(Debug, Default)]
struct Columns {
    date: Option<usize>,
    code: Option<usize>,
    name: Option<usize>,
    side: Option<usize>,
    shares: Option<usize>,
    price: Option<usize>,
    amount: Option<usize>,
    commission: Vec<usize>,
    stamp: Option<usize>,
    transfer: Option<usize>,
    other_fees: Vec<usize>,
    net: Option<usize>,
}

fn find(h: &[String], names: &[&str]) -> Option<usize> {
    names
        .iter()
        .find_map(|n| h.iter().position(|c| c.as_str() == *n))
}

fn columns(h: &[String]) -> Columns {
    let all = |names: &[&str]| -> Vec<usize> {
        h.iter()
            .enumerate()
            .filter(|(_, c)| names.contains(&c.as_str()))
            .map(|(i, _)| i)
            .collect()
    };
    Columns {
        date: find(h, &["成交日期", "交收日期", "发生日期", "日期", "交易日期"]),
        code: find(h, &["证券代码", "股票代码", "代码"]),
        name: find(h, &["证券名称", "股票名称", "名称"]),
        side: find(
            h,
            &[
                "操作",
                "买卖标志",
                "买卖方向",
                "业务名称",
                "摘要",
                "委托类别",
                "交易类别",
                "业务类型",
            ],
        ),
        shares: find(h, &["成交数量", "成交股数", "数量", "发生数量"]),
        price: find(h, &["成交价格", "成交均价", "成交价", "价格"]),
        amount: find(h, &["成交金额", "成交额"]),
        commission: all(&["手续费", "佣金", "净佣金"]),
        stamp: find(h, &["印花税"]),
        transfer: find(h, &["过户费"]),
        other_fees: all(&[
            "其他费",
            "其他费用",
            "规费",
            "交易规费",
            "经手费",
            "证管费",
            "附加费",
        ]),
        net: find(h, &["发生金额", "清算金额", "收付金额", "资金发生数"]),
    }
}

/// What a row's business says: a trade side, a business to skip, or nothing known.
enum Business {
    Trade(Side),
    Skip,
    Unknown,
}

fn business(text: &str) -> Business {
    let t = text.trim();
    if t.contains("撤") {
        return Business::Skip;
    }
    if t.contains("买") {
        return Business::Trade(Side::Buy);
    }
    if t.contains("卖") {
        return Business::Trade(Side::Sell);
    }
    match t.to_ascii_lowercase().as_str() {
        "b" | "buy" => return Business::Trade(Side::Buy),
        "s" | "sell" => return Business::Trade(Side::Sell),
        _ => {}
    }
    const OTHER: &[&str] = &[
        "转", "存", "取", "利息", "息", "红利", "股息", "派", "配号", "申购", "中签", "新股",
        "送股", "转增", "扣税", "税", "费",
    ];
    if OTHER.iter().any(|k| t.contains(k)) {
        Business::Skip
    } else {
        Business::Unknown
    }
}

/// `YYYYMMDD`, `YYYY-MM-DD` or `YYYY/MM/DD`.
fn parse_day(s: &str) -> Option<u32> {
    let s = s.trim();
    let s = s.split_whitespace().next().unwrap_or(s);
    wyckoff_market::date::parse_date(&s.replace('/', "-")).or_else(|| {
        // 2024-1-5 style
        let parts: Vec<&str> = s.split(['-', '/']).collect();
        if parts.len() != 3 {
            return None;
        }
        let y: u32 = parts[0].parse().ok()?;
        let m: u32 = parts[1].parse().ok()?;
        let d: u32 = parts[2].parse().ok()?;
        wyckoff_market::date::parse_date(&format!("{y:04}{m:02}{d:02}"))
    })
}

/// A 6-digit A-share code; Excel drops leading zeros ("1" for 000001), so short all-digit
/// codes are padded.
fn parse_code(s: &str) -> Option<String> {
    let s = s.trim();
    let padded = if !s.is_empty() && s.len() < 6 && s.bytes().all(|b| b.is_ascii_digit()) {
        format!("{s:0>6}")
    } else {
        s.to_owned()
    };
    wyckoff_market::StockCode::parse(&padded)
        .ok()
        .map(|c| c.digits().to_owned())
}

fn cell(row: &[String], i: Option<usize>) -> &str {
    i.and_then(|i| row.get(i)).map(String::as_str).unwrap_or("")
}

/// A fee cell: empty is 0; negative (some brokers sign fees) counts by its size.
fn fee_cell(row: &[String], i: Option<usize>, what: &str) -> Result<i64, String> {
    let t = cell(row, i);
    if t.is_empty() {
        return Ok(0);
    }
    parse_fen(t)
        .map(i64::abs)
        .ok_or_else(|| format!("{what}「{t}」不是金额"))
}

fn parse_row(row: &[String], c: &Columns, line: usize) -> Result<Option<ImportedFill>, String> {
    let side_text = cell(row, c.side);
    let side = match business(side_text) {
        Business::Trade(s) => s,
        Business::Skip => return Ok(None),
        Business::Unknown => {
            return Err(format!("操作「{side_text}」不是买入或卖出"));
        }
    };
    let date_text = cell(row, c.date);
    let date = parse_day(date_text).ok_or_else(|| format!("成交日期「{date_text}」无效"))?;
    let code_text = cell(row, c.code);
    let code =
        parse_code(code_text).ok_or_else(|| format!("证券代码「{code_text}」不是 A 股代码"))?;
    let shares_text = cell(row, c.shares);
    let shares = crate::money::parse_scaled(shares_text, 0)
        .map(i64::abs)
        .filter(|s| *s > 0)
        .ok_or_else(|| format!("成交数量「{shares_text}」不是正整数"))?;
    let price_text = cell(row, c.price);
    let price_e6 = parse_price(price_text)
        .filter(|p| *p > 0)
        .ok_or_else(|| format!("成交价格「{price_text}」不是正数"))?;
    let computed = amount_fen(price_e6, shares);
    let amount = match cell(row, c.amount) {
        "" => computed,
        t => {
            let a = parse_fen(t)
                .map(i64::abs)
                .ok_or_else(|| format!("成交金额「{t}」不是金额"))?;
            // an average price (成交均价) is rounded: allow half a 0.001 per share + 1 fen
            let slack = shares / 2000 + 1;
            if (a - computed).abs() > slack {
                return Err(format!(
                    "成交金额 {t} 与 价格×数量 {} 不符",
                    crate::money::fmt_fen(computed)
                ));
            }
            a
        }
    };
    let has_fee_columns = !c.commission.is_empty()
        || c.stamp.is_some()
        || c.transfer.is_some()
        || !c.other_fees.is_empty();
    let fees = if has_fee_columns {
        let mut commission = 0;
        for i in c.commission.iter().chain(&c.other_fees) {
            commission += fee_cell(row, Some(*i), "手续费")?;
        }
        Fees {
            commission_fen: commission,
            stamp_fen: fee_cell(row, c.stamp, "印花税")?,
            transfer_fen: fee_cell(row, c.transfer, "过户费")?,
        }
    } else {
        fees_for(amount, side == Side::Sell, date)
    };
    if let Some(net_text) = (!cell(row, c.net).is_empty()).then(|| cell(row, c.net)) {
        let net = parse_fen(net_text)
            .map(i64::abs)
            .ok_or_else(|| format!("发生金额「{net_text}」不是金额"))?;
        let want = match side {
            Side::Sell => amount - fees.total_fen(),
            _ => amount + fees.total_fen(),
        };
        if net != want {
            return Err(format!(
                "发生金额 {net_text} 与 成交金额{}费用 {} 不符",
                if side == Side::Sell { "减" } else { "加" },
                crate::money::fmt_fen(want)
            ));
        }
    }
    Ok(Some(ImportedFill {
        line,
        code,
        name: wyckoff_market::meta::clean_name(cell(row, c.name)),
        side,
        date,
        price_e6,
        shares,
        amount_fen: amount,
        fees,
        fees_computed: !has_fee_columns,
    }))
}

/// Reads a whole export; `Err(BadRows)` lists every bad row (nothing is to be imported).
pub fn parse(bytes: &[u8]) -> Result<Parsed, CsvError> {
    let text = decode(bytes).ok_or(CsvError::Encoding)?;
    let lines: Vec<&str> = text.lines().collect();
    // the header is the first line (within the first 20) naming a date and a code column
    let mut header = None;
    for (i, l) in lines.iter().enumerate().take(20) {
        let delim = if l.contains('\t') { '\t' } else { ',' };
        let h = split(l, delim);
        let c = columns(&h);
        if c.date.is_some() && c.code.is_some() {
            header = Some((i, delim, c));
            break;
        }
    }
    let (hi, delim, cols) = header.ok_or(CsvError::NoHeader)?;
    let missing: Vec<&str> = [
        ("操作/买卖标志", cols.side.is_none()),
        ("成交数量", cols.shares.is_none()),
        ("成交价格/成交均价", cols.price.is_none()),
    ]
    .into_iter()
    .filter(|(_, m)| *m)
    .map(|(n, _)| n)
    .collect();
    if !missing.is_empty() {
        return Err(CsvError::MissingColumn(missing.join("、")));
    }
    let mut fills = Vec::new();
    let mut skipped = Vec::new();
    let mut errors = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(hi + 1) {
        let line = i + 1;
        if l.trim().is_empty() || l.trim_start().starts_with('#') {
            continue;
        }
        let row = split(l, delim);
        if row.iter().all(String::is_empty) {
            continue;
        }
        match parse_row(&row, &cols, line) {
            Ok(Some(f)) => fills.push(f),
            Ok(None) => skipped.push(SkippedRow {
                line: line as u32,
                business: cell(&row, cols.side).to_owned(),
            }),
            Err(message) => errors.push(RowError {
                line: line as u32,
                message,
            }),
        }
    }
    if !errors.is_empty() {
        return Err(CsvError::BadRows(errors));
    }
    if fills.is_empty() {
        return Err(CsvError::Empty);
    }
    Ok(Parsed { fills, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "成交日期,证券代码,证券名称,操作,成交数量,成交均价,成交金额,手续费,印花税,过户费,发生金额\n\
20240102,600519,贵州茅台,证券买入,100,1700.00,170000.00,42.50,0.00,1.70,-170044.20\n\
20240103,000001,平安银行,证券买入,1000,9.35,9350.00,5.00,0.00,0.09,-9355.09\n\
20240104,,,银行转证券,,,,,,,50000.00\n\
20240305,600519,贵州茅台,证券卖出,100,1750.50,175050.00,43.76,87.53,1.75,174916.96\n";

    #[test]
    fn reads_a_good_export_with_its_fees() {
        let p = parse(GOOD.as_bytes()).unwrap();
        assert_eq!(p.fills.len(), 3);
        let sell = &p.fills[2];
        assert_eq!(
            (sell.line, sell.side, sell.date, sell.shares, sell.price_e6),
            (5, Side::Sell, 20240305, 100, 1_750_500_000)
        );
        assert_eq!(sell.amount_fen, 17_505_000);
        assert_eq!(
            sell.fees,
            Fees {
                commission_fen: 4376,
                stamp_fen: 8753,
                transfer_fen: 175
            }
        );
        assert!(!sell.fees_computed);
        assert_eq!(
            p.skipped,
            vec![SkippedRow {
                line: 4,
                business: "银行转证券".into()
            }]
        );
    }

    #[test]
    fn gbk_and_tabs_and_excel_wrappers() {
        let text = "买卖标志\t成交日期\t证券代码\t证券名称\t成交数量\t成交价格\n\
买入\t2024-01-02\t=\"000001\"\t平安银行\t1000\t9.35\n\
卖出\t2024/03/05\t1\t平安银行\t-1000\t10.00\n";
        let (gbk, _, bad) = encoding_rs::GBK.encode(text);
        assert!(!bad);
        let p = parse(&gbk).unwrap();
        assert_eq!(p.fills.len(), 2);
        assert_eq!(p.fills[1].code, "000001");
        assert_eq!(p.fills[1].shares, 1000);
        assert_eq!(p.fills[1].date, 20240305);
        // no fee column: the backtest's rules; 10,000.00 sold on 2024-03-05:
        // commission 5.00, stamp 5.00, transfer 0.10
        assert!(p.fills[1].fees_computed);
        assert_eq!(p.fills[1].fees.total_fen(), 500 + 500 + 10);
    }

    #[test]
    fn every_bad_row_is_named_by_its_line() {
        let text = format!(
            "{GOOD}20240306,600519,贵州茅台,证券卖出,abc,1750.50,,,,,\n\
20240307,12345678,某某,证券买入,100,1.00,,,,,\n\
20240230,600519,贵州茅台,证券买入,100,1.00,,,,,\n\
20240308,600519,贵州茅台,融券,100,1.00,,,,,\n\
20240308,600519,贵州茅台,证券买入,100,1.00,999.00,,,,\n"
        );
        match parse(text.as_bytes()).unwrap_err() {
            CsvError::BadRows(errs) => {
                let lines: Vec<u32> = errs.iter().map(|e| e.line).collect();
                assert_eq!(lines, [6, 7, 8, 9, 10], "{errs:?}");
                assert!(errs[0].message.contains("成交数量"));
                assert!(errs[1].message.contains("证券代码"));
                assert!(errs[2].message.contains("成交日期"));
                assert!(errs[3].message.contains("融券"));
                assert!(errs[4].message.contains("成交金额"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_wrong_settlement_amount_is_a_bad_row() {
        let text = GOOD.replace("174916.96", "174916.00");
        let err = parse(text.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("第 5 行 发生金额"), "{err}");
    }

    #[test]
    fn headers_and_encodings_are_checked() {
        assert_eq!(parse(&[0xff, 0xfe, 0x00, 0x41]), Err(CsvError::Encoding));
        assert_eq!(parse("a,b,c\n1,2,3\n".as_bytes()), Err(CsvError::NoHeader));
        assert!(matches!(
            parse("成交日期,证券代码\n20240102,600519\n".as_bytes()),
            Err(CsvError::MissingColumn(_))
        ));
    }
}
