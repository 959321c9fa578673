use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::MemoryError;

/// The seed's five memory types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryType {
    /// Investment style, taboos, risk limits. Never decays, never pruned by age.
    Preference,
    /// What was concluded in a past session.
    Session,
    StockOpinion,
    Decision,
    MarketView,
}

impl MemoryType {
    pub const ALL: [MemoryType; 5] = [
        MemoryType::Preference,
        MemoryType::Session,
        MemoryType::StockOpinion,
        MemoryType::Decision,
        MemoryType::MarketView,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::Preference => "preference",
            MemoryType::Session => "session",
            MemoryType::StockOpinion => "stock_opinion",
            MemoryType::Decision => "decision",
            MemoryType::MarketView => "market_view",
        }
    }

    pub(crate) fn valid_list() -> String {
        MemoryType::ALL.map(MemoryType::as_str).join(", ")
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MemoryType {
    type Err = MemoryError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        MemoryType::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(t))
            .ok_or_else(|| MemoryError::UnknownType {
                given: s.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_type_and_rejects_others_listing_valid_ones() {
        for t in MemoryType::ALL {
            assert_eq!(t.as_str().parse::<MemoryType>().unwrap(), t);
        }
        assert_eq!(
            " Preference ".parse::<MemoryType>().unwrap(),
            MemoryType::Preference
        );
        let err = "persona".parse::<MemoryType>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown memory type `persona`; valid types: preference, session, stock_opinion, decision, market_view"
        );
    }
}
