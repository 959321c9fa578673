//! A-share boards, from the 6-digit code (REFERENCE §15.0 `core/cn_boards`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Board {
    Main,
    /// ChiNext, 300/301.
    Chinext,
    /// STAR market, 688/689.
    Star,
    /// Beijing exchange, 4xx/8xx/9xx.
    Bse,
}

impl Board {
    /// Board of a code such as `600519`, `300027.SZ` or `sh688001` (digits are what count).
    pub fn from_code(code: &str) -> Board {
        let digits: String = code.chars().filter(|c| c.is_ascii_digit()).collect();
        if digits.starts_with("300") || digits.starts_with("301") {
            Board::Chinext
        } else if digits.starts_with("688") || digits.starts_with("689") {
            Board::Star
        } else if digits.starts_with('4') || digits.starts_with('8') || digits.starts_with('9') {
            Board::Bse
        } else {
            Board::Main
        }
    }

    /// EVR day-change scale (REFERENCE §15.1 L4 EVR: main 1.0, chinext 1.2, bse 1.2, star 1.4).
    pub fn evr_scale(self) -> f64 {
        match self {
            Board::Main => 1.0,
            Board::Chinext | Board::Bse => 1.2,
            Board::Star => 1.4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_from_codes() {
        assert_eq!(Board::from_code("000001"), Board::Main);
        assert_eq!(Board::from_code("600519.SH"), Board::Main);
        assert_eq!(Board::from_code("300027"), Board::Chinext);
        assert_eq!(Board::from_code("sh688001"), Board::Star);
        assert_eq!(Board::from_code("830799"), Board::Bse);
    }
}
