//! Stock metadata: code, name, board, listing date and the optional fields some sources give.

use serde::{Deserialize, Serialize};

use crate::code::{Board, StockCode};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StockInfo {
    pub code: StockCode,
    pub name: String,
    pub board: Board,
    /// YYYYMMDD; unknown for some delisted names in the bundled list.
    pub list_date: Option<u32>,
    pub industry: Option<String>,
    /// Total market value in CNY; never known offline.
    pub market_cap: Option<f64>,
}

impl StockInfo {
    pub fn new(code: StockCode, name: &str) -> Self {
        Self {
            board: code.board(),
            code,
            name: clean_name(name),
            list_date: None,
            industry: None,
            market_cap: None,
        }
    }
}

/// Names arrive with padding and full-width letters (`万  科Ａ`); keep one clean spelling
/// so display and search agree (`万科A`).
pub fn clean_name(raw: &str) -> String {
    raw.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            _ => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_padding_and_full_width() {
        assert_eq!(clean_name("万  科Ａ"), "万科A");
        assert_eq!(clean_name("\u{3000}ＳＴ康美 "), "ST康美");
        assert_eq!(clean_name("平安银行"), "平安银行");
    }
}
