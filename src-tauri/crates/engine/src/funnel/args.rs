//! Screen arguments (REFERENCE §14.8: board, limit) plus the as-of date, and the funnel's
//! errors. Messages are the reference's, so the agent and the CLI show the same text.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Board;
use crate::dates::parse_date;

/// Largest bounded scan; a full scan is `limit = 0` (§14.8).
pub const MAX_SCREEN_LIMIT: usize = 3000;

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum FunnelError {
    #[error("不支持的 board 值 '{0}'，可选: all / main / chinext / star / bse")]
    UnknownBoard(String),
    #[error("limit 必须是非负整数；limit=0 表示全量扫描")]
    NegativeLimit,
    #[error("limit 最大支持 3000；全量扫描请传 limit=0（收到 {0}）")]
    LimitTooLarge(usize),
    #[error("as_of 日期无效: '{0}'，请用 YYYY-MM-DD 或 YYYYMMDD")]
    BadDate(String),
    #[error("as_of {as_of} 早于本地全部K线（最早 {first}），该日没有可用数据")]
    AsOfBeforeData { as_of: u32, first: u32 },
    /// The caller cancelled the screen ([`crate::Cancel`]).
    #[error("筛选已取消")]
    Cancelled,
}

impl From<crate::Cancelled> for FunnelError {
    fn from(_: crate::Cancelled) -> Self {
        FunnelError::Cancelled
    }
}

/// Which board the scan covers (§14.8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardFilter {
    #[default]
    All,
    Main,
    Chinext,
    Star,
    Bse,
}

impl BoardFilter {
    pub fn as_str(self) -> &'static str {
        match self {
            BoardFilter::All => "all",
            BoardFilter::Main => "main",
            BoardFilter::Chinext => "chinext",
            BoardFilter::Star => "star",
            BoardFilter::Bse => "bse",
        }
    }

    pub fn admits(self, board: Board) -> bool {
        match self {
            BoardFilter::All => true,
            BoardFilter::Main => board == Board::Main,
            BoardFilter::Chinext => board == Board::Chinext,
            BoardFilter::Star => board == Board::Star,
            BoardFilter::Bse => board == Board::Bse,
        }
    }
}

impl FromStr for BoardFilter {
    type Err = FunnelError;

    /// The names and the reference's aliases (gem/创业板, 主板, 科创(板), 北交(所), 全部).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.trim().to_lowercase();
        Ok(match key.as_str() {
            "" | "all" | "全部" | "全市场" | "a股" => BoardFilter::All,
            "main" | "主板" => BoardFilter::Main,
            "chinext" | "gem" | "创业板" => BoardFilter::Chinext,
            "star" | "科创" | "科创板" => BoardFilter::Star,
            "bse" | "北交" | "北交所" => BoardFilter::Bse,
            _ => return Err(FunnelError::UnknownBoard(s.to_string())),
        })
    }
}

impl fmt::Display for BoardFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one screen is asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenArgs {
    pub board: BoardFilter,
    /// Stocks to scan, the most liquid first; 0 = the whole board.
    pub limit: usize,
    /// Trading day `YYYYMMDD`; `None` = the newest bar date in the universe.
    pub as_of: Option<u32>,
}

impl ScreenArgs {
    /// Arguments as a caller (CLI flag, tool JSON) spells them; every bad value is an error
    /// that names it.
    pub fn parse(
        board: Option<&str>,
        limit: Option<i64>,
        as_of: Option<&str>,
    ) -> Result<Self, FunnelError> {
        let board = board.map_or(Ok(BoardFilter::All), BoardFilter::from_str)?;
        let limit = match limit {
            None => 0,
            Some(l) if l < 0 => return Err(FunnelError::NegativeLimit),
            Some(l) => usize::try_from(l).map_err(|_| FunnelError::NegativeLimit)?,
        };
        let as_of = match as_of.map(str::trim).filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => Some(parse_date(s).ok_or_else(|| FunnelError::BadDate(s.to_string()))?),
        };
        let args = ScreenArgs {
            board,
            limit,
            as_of,
        };
        args.validate()?;
        Ok(args)
    }

    pub fn validate(&self) -> Result<(), FunnelError> {
        if self.limit > MAX_SCREEN_LIMIT {
            return Err(FunnelError::LimitTooLarge(self.limit));
        }
        if let Some(d) = self.as_of
            && parse_date(&d.to_string()) != Some(d)
        {
            return Err(FunnelError::BadDate(d.to_string()));
        }
        Ok(())
    }
}
