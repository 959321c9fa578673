//! A-share codes: one normalised `StockCode` from any of the usual spellings, with the
//! exchange and board rules and each vendor's spelling of the symbol.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
pub use wyckoff_engine::Board;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    #[error(
        "unknown stock code format: {0:?} (expected 6 digits such as 600519, 600519.SH or sh600519)"
    )]
    Format(String),
    #[error(
        "{code} is not an A-share stock code on any exchange (funds, bonds and ETFs are not supported)"
    )]
    NotAStock { code: String },
    #[error("exchange suffix {given} does not match code {code}, which trades on {expected}")]
    ExchangeMismatch {
        code: String,
        given: Exchange,
        expected: Exchange,
    },
    #[error("unknown index: {0:?} (try sse, csi300, szse, chinext, sse50, csi500 or 000300.SH)")]
    UnknownIndex(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Exchange {
    SH,
    SZ,
    BJ,
}

impl Exchange {
    pub fn as_str(self) -> &'static str {
        match self {
            Exchange::SH => "SH",
            Exchange::SZ => "SZ",
            Exchange::BJ => "BJ",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_uppercase().as_str() {
            "SH" | "SS" | "SSE" => Some(Exchange::SH),
            "SZ" | "SZSE" => Some(Exchange::SZ),
            "BJ" | "BSE" => Some(Exchange::BJ),
            _ => None,
        }
    }

    /// Eastmoney's market prefix in `secid`: 1 for Shanghai, 0 for Shenzhen and Beijing.
    pub fn eastmoney_market(self) -> u8 {
        match self {
            Exchange::SH => 1,
            Exchange::SZ | Exchange::BJ => 0,
        }
    }
}

impl fmt::Display for Exchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Exchange and board of a 6-digit stock code; `None` for non-stock prefixes. The board
/// (and whether it is a stock) is the engine's one prefix table; the exchange follows from
/// it: Shanghai's main-board codes start with 6 (A) or 9 (B), Shenzhen's with 0 or 2.
fn classify(d: &str) -> Option<(Exchange, Board)> {
    let board = Board::of_stock(d)?;
    let exchange = match board {
        Board::Star => Exchange::SH,
        Board::Chinext => Exchange::SZ,
        Board::Bse => Exchange::BJ,
        Board::Main if d.starts_with(['6', '9']) => Exchange::SH,
        Board::Main => Exchange::SZ,
    };
    Some((exchange, board))
}

/// Splits `600519`, `600519.SH`, `sh600519`, `SH600519` into digits and an optional exchange.
fn split(input: &str) -> Result<(String, Option<Exchange>), CodeError> {
    let s = input.trim();
    let fmt_err = || CodeError::Format(input.to_string());
    let (digits, ex) = if let Some((d, suffix)) = s.split_once('.') {
        (d, Some(Exchange::parse(suffix).ok_or_else(fmt_err)?))
    } else if s.len() == 8 && s.is_char_boundary(2) {
        let (prefix, d) = s.split_at(2);
        (d, Some(Exchange::parse(prefix).ok_or_else(fmt_err)?))
    } else {
        (s, None)
    };
    if digits.len() != 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fmt_err());
    }
    Ok((digits.to_string(), ex))
}

/// A normalised A-share stock code. Displays as `600519.SH`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StockCode {
    digits: String,
    exchange: Exchange,
    board: Board,
}

impl StockCode {
    pub fn parse(input: &str) -> Result<Self, CodeError> {
        let (digits, given) = split(input)?;
        let (exchange, board) = classify(&digits).ok_or_else(|| CodeError::NotAStock {
            code: digits.clone(),
        })?;
        if let Some(g) = given
            && g != exchange
        {
            return Err(CodeError::ExchangeMismatch {
                code: digits,
                given: g,
                expected: exchange,
            });
        }
        Ok(Self {
            digits,
            exchange,
            board,
        })
    }

    /// The six digits, e.g. `600519`.
    pub fn digits(&self) -> &str {
        &self.digits
    }
    pub fn exchange(&self) -> Exchange {
        self.exchange
    }
    pub fn board(&self) -> Board {
        self.board
    }
    pub fn symbol(&self) -> Symbol {
        Symbol {
            digits: self.digits.clone(),
            exchange: self.exchange,
            kind: SymbolKind::Stock,
        }
    }
}

impl fmt::Display for StockCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.digits, self.exchange)
    }
}

impl FromStr for StockCode {
    type Err = CodeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for StockCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.digits)
    }
}

impl<'de> Deserialize<'de> for StockCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        StockCode::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    Stock,
    Index,
}

/// What a source is asked for: digits + exchange + kind, spelled per vendor.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Symbol {
    pub digits: String,
    pub exchange: Exchange,
    pub kind: SymbolKind,
}

impl Symbol {
    /// Eastmoney `secid`: `1.600519`, `1.000001` (SSE Composite), `0.000001` (Ping An Bank).
    pub fn eastmoney_secid(&self) -> String {
        format!("{}.{}", self.exchange.eastmoney_market(), self.digits)
    }
    /// TickFlow and Tushare spelling: `600519.SH`.
    pub fn dotted(&self) -> String {
        format!("{}.{}", self.digits, self.exchange)
    }
    /// Tencent spelling: `sh600519`.
    pub fn tencent(&self) -> String {
        format!(
            "{}{}",
            self.exchange.as_str().to_ascii_lowercase(),
            self.digits
        )
    }
    /// Cache key; indices and stocks never collide because the exchange is part of it.
    pub fn key(&self) -> String {
        self.dotted()
    }
}

/// A benchmark index. Codes like 000001 collide with stocks, so indices are their own type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexCode {
    digits: String,
    exchange: Exchange,
    name: &'static str,
}

/// (digits, exchange, name, aliases)
const INDICES: &[(&str, Exchange, &str, &[&str])] = &[
    (
        "000001",
        Exchange::SH,
        "上证指数",
        &["sse", "sh", "上证", "上证指数", "沪指"],
    ),
    (
        "000300",
        Exchange::SH,
        "沪深300",
        &["csi300", "300", "沪深300", "hs300"],
    ),
    (
        "399001",
        Exchange::SZ,
        "深证成指",
        &["szse", "sz", "深证", "深成指", "深证成指"],
    ),
    (
        "399006",
        Exchange::SZ,
        "创业板指",
        &["chinext", "创业板", "创业板指"],
    ),
    ("000016", Exchange::SH, "上证50", &["sse50", "上证50"]),
    ("000905", Exchange::SH, "中证500", &["csi500", "中证500"]),
];

impl IndexCode {
    /// Accepts an alias (`sse`, `沪深300`, …) or an explicit `000300.SH` / `sh000300`.
    pub fn parse(input: &str) -> Result<Self, CodeError> {
        let t = input.trim();
        let lower = t.to_ascii_lowercase();
        for (d, ex, name, aliases) in INDICES {
            if aliases.contains(&lower.as_str()) {
                return Ok(Self {
                    digits: (*d).to_string(),
                    exchange: *ex,
                    name,
                });
            }
        }
        // an explicit exchange is required: 000001 alone is Ping An Bank, not the SSE index
        let (digits, ex) = split(t).map_err(|_| CodeError::UnknownIndex(input.to_string()))?;
        let ex = ex.ok_or_else(|| CodeError::UnknownIndex(input.to_string()))?;
        let name = INDICES
            .iter()
            .find(|(d, e, _, _)| *d == digits && *e == ex)
            .map(|(_, _, n, _)| *n)
            .unwrap_or("");
        Ok(Self {
            digits,
            exchange: ex,
            name,
        })
    }

    pub fn sse_composite() -> Self {
        Self {
            digits: "000001".into(),
            exchange: Exchange::SH,
            name: "上证指数",
        }
    }
    pub fn digits(&self) -> &str {
        &self.digits
    }
    pub fn exchange(&self) -> Exchange {
        self.exchange
    }
    /// Chinese name for the well-known indices, empty otherwise.
    pub fn name(&self) -> &'static str {
        self.name
    }
    pub fn symbol(&self) -> Symbol {
        Symbol {
            digits: self.digits.clone(),
            exchange: self.exchange,
            kind: SymbolKind::Index,
        }
    }
}

impl fmt::Display for IndexCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.digits, self.exchange)
    }
}

/// The exchange an exchange-traded fund (ETF / LOF) or listed bond trades on, by its
/// code: Shanghai 5xxxxx funds and 11xxxx bonds (110/113/118 convertibles), Shenzhen
/// 15xxxx / 16xxxx funds and 12xxxx bonds (123/127/128 convertibles). `None` for anything
/// else — stocks, repos (204xxx / 131xxx: cash lent, no daily close) and the codes whose
/// exchange the digits do not settle (10xxxx and 13xxxx are both Shanghai treasuries and
/// Shenzhen bonds).
pub fn fund_or_bond_exchange(digits: &str) -> Option<Exchange> {
    if digits.len() != 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match wyckoff_engine::Instrument::of_code(digits) {
        wyckoff_engine::Instrument::Fund | wyckoff_engine::Instrument::Bond => {}
        _ => return None,
    }
    match &digits[..2] {
        p if p.starts_with('5') => Some(Exchange::SH),
        "15" | "16" | "12" => Some(Exchange::SZ),
        "11" => Some(Exchange::SH),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn funds_and_bonds_by_exchange() {
        for (code, want) in [
            ("510300", Some(Exchange::SH)),
            ("588000", Some(Exchange::SH)),
            ("159915", Some(Exchange::SZ)),
            ("161725", Some(Exchange::SZ)),
            ("113050", Some(Exchange::SH)),
            ("110059", Some(Exchange::SH)),
            ("123001", Some(Exchange::SZ)),
            ("127050", Some(Exchange::SZ)),
            ("128136", Some(Exchange::SZ)),
            ("204001", None),
            ("131810", None),
            ("600519", None),
            ("000001", None),
            ("101234", None),
            ("51030", None),
            ("51030x", None),
        ] {
            assert_eq!(fund_or_bond_exchange(code), want, "{code}");
        }
    }

    #[test]
    fn all_spellings_normalise_to_one_code() {
        let want = StockCode::parse("600519").unwrap();
        for s in [
            "600519",
            "600519.SH",
            "600519.sh",
            "sh600519",
            "SH600519",
            " 600519 ",
        ] {
            assert_eq!(StockCode::parse(s).unwrap(), want, "{s}");
        }
        assert_eq!(want.to_string(), "600519.SH");
        assert_eq!(want.digits(), "600519");
    }

    #[test]
    fn exchange_and_board_table() {
        let cases = [
            ("600519", Exchange::SH, Board::Main),
            ("601318", Exchange::SH, Board::Main),
            ("603220", Exchange::SH, Board::Main),
            ("605001", Exchange::SH, Board::Main),
            ("688981", Exchange::SH, Board::Star),
            ("689009", Exchange::SH, Board::Star),
            ("900901", Exchange::SH, Board::Main),
            ("000001", Exchange::SZ, Board::Main),
            ("002572", Exchange::SZ, Board::Main),
            ("003816", Exchange::SZ, Board::Main),
            ("200002", Exchange::SZ, Board::Main),
            ("300027", Exchange::SZ, Board::Chinext),
            ("301001", Exchange::SZ, Board::Chinext),
            ("430047", Exchange::BJ, Board::Bse),
            ("830799", Exchange::BJ, Board::Bse),
            ("873223", Exchange::BJ, Board::Bse),
            ("920001", Exchange::BJ, Board::Bse),
        ];
        for (c, ex, b) in cases {
            let code = StockCode::parse(c).unwrap();
            assert_eq!((code.exchange(), code.board()), (ex, b), "{c}");
        }
    }

    #[test]
    fn clear_errors() {
        for bad in [
            "60051",
            "6005190",
            "abc",
            "",
            "xx600519",
            "600519.HK",
            "600519.",
            "平安银行",
        ] {
            let e = StockCode::parse(bad).unwrap_err();
            assert!(
                e.to_string().starts_with("unknown stock code format"),
                "{bad}: {e}"
            );
        }
        assert!(matches!(
            StockCode::parse("510300"),
            Err(CodeError::NotAStock { .. })
        ));
        assert!(matches!(
            StockCode::parse("123456"),
            Err(CodeError::NotAStock { .. })
        ));
        let e = StockCode::parse("000001.SH").unwrap_err();
        assert!(matches!(e, CodeError::ExchangeMismatch { .. }), "{e}");
        assert!(StockCode::parse("sz600519").is_err());
    }

    #[test]
    fn vendor_spellings() {
        let s = StockCode::parse("sh600519").unwrap().symbol();
        assert_eq!(s.eastmoney_secid(), "1.600519");
        assert_eq!(s.dotted(), "600519.SH");
        assert_eq!(s.tencent(), "sh600519");
        let z = StockCode::parse("000001").unwrap().symbol();
        assert_eq!(z.eastmoney_secid(), "0.000001");
        assert_eq!(z.tencent(), "sz000001");
        let b = StockCode::parse("830799").unwrap().symbol();
        assert_eq!(b.eastmoney_secid(), "0.830799");
        assert_eq!(b.dotted(), "830799.BJ");
        assert_eq!(b.tencent(), "bj830799");
    }

    #[test]
    fn indices_use_shanghai_secid_and_aliases() {
        let sse = IndexCode::parse("sse").unwrap();
        assert_eq!(sse.symbol().eastmoney_secid(), "1.000001");
        assert_eq!(sse.name(), "上证指数");
        assert_eq!(
            IndexCode::parse("沪深300")
                .unwrap()
                .symbol()
                .eastmoney_secid(),
            "1.000300"
        );
        assert_eq!(IndexCode::parse("000300.SH").unwrap().name(), "沪深300");
        assert_eq!(
            IndexCode::parse("chinext").unwrap().to_string(),
            "399006.SZ"
        );
        assert_eq!(
            IndexCode::parse("399006.SZ")
                .unwrap()
                .symbol()
                .eastmoney_secid(),
            "0.399006"
        );
        assert!(matches!(
            IndexCode::parse("000001"),
            Err(CodeError::UnknownIndex(_))
        ));
        assert!(IndexCode::parse("nonsense").is_err());
    }

    #[test]
    fn serde_uses_six_digits() {
        let c = StockCode::parse("600519.SH").unwrap();
        assert_eq!(serde_json::to_string(&c).unwrap(), "\"600519\"");
        let back: StockCode = serde_json::from_str("\"sh600519\"").unwrap();
        assert_eq!(back, c);
    }
}
