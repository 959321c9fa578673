//! The exchange a statement row names for its code: a 交易市场 cell (上海 / 沪A / SH…,
//! 深圳 / 深A / SZ…) or, failing that, the 股东代码 the row was traded under — a Shanghai
//! account starts with a letter (A for individuals, B/C/D/E/F… for institutions), a
//! Shenzhen one with 0. Only that: any other cell names nothing, and a code whose exchange
//! nothing names is left unvalued rather than guessed.

use wyckoff_market::code::Exchange;

/// The exchange `market` (a 交易市场 cell) or, when it names none, `holder` (a 股东代码)
/// names.
pub fn stated_exchange(market: &str, holder: &str) -> Option<Exchange> {
    of_market(market).or_else(|| of_holder(holder))
}

fn of_market(cell: &str) -> Option<Exchange> {
    let t = cell.trim();
    let upper = t.to_ascii_uppercase();
    if t.contains('沪') || t.contains("上海") || t.contains("上交") {
        return Some(Exchange::SH);
    }
    if t.contains('深') {
        return Some(Exchange::SZ);
    }
    match upper.as_str() {
        "SH" | "SSE" | "SHA" | "SHSE" | "XSHG" => Some(Exchange::SH),
        "SZ" | "SZSE" | "SZA" | "XSHE" => Some(Exchange::SZ),
        _ => None,
    }
}

fn of_holder(cell: &str) -> Option<Exchange> {
    // Excel's ="…" and quotes are gone by now; a masked account (A12****789) still
    // starts as the account does
    let t = cell.trim();
    let first = t.chars().next()?;
    if t.chars().count() < 6 {
        return None;
    }
    if first.is_ascii_alphabetic() {
        Some(Exchange::SH)
    } else if first == '0' {
        Some(Exchange::SZ)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Exchange::{SH, SZ};

    #[test]
    fn the_exchange_a_row_names() {
        for (market, holder, want) in [
            // 交易市场 as brokers write it
            ("上海A股", "", Some(SH)),
            ("沪A", "", Some(SH)),
            ("上海", "", Some(SH)),
            ("上交所", "", Some(SH)),
            ("深圳A股", "", Some(SZ)),
            ("深A", "", Some(SZ)),
            ("深圳", "", Some(SZ)),
            ("SH", "", Some(SH)),
            ("sz", "", Some(SZ)),
            ("XSHG", "", Some(SH)),
            // 股东代码: a letter is Shanghai, 0 is Shenzhen
            ("", "A123456789", Some(SH)),
            ("", "B880012345", Some(SH)),
            ("", "E012345678", Some(SH)),
            ("", "0123456789", Some(SZ)),
            ("", "A12****789", Some(SH)),
            // the market cell wins over the account
            ("深A", "A123456789", Some(SZ)),
            // nothing named: never guessed
            ("", "", None),
            ("人民币", "", None),
            ("北京", "", None),
            ("", "1234567890", None),
            ("", "9876543210", None),
            ("", "A1", None),
            ("--", "--", None),
        ] {
            assert_eq!(
                stated_exchange(market, holder),
                want,
                "{market:?} {holder:?}"
            );
        }
    }
}
