//! A TDX (通达信) install brought in whole: its daily bars (`vipdoc/{sh,sz,bj}/lday/*.day`),
//! its 自选股 and custom blocks (`T0002/blocknew`) into the watchlist, and its industry file
//! through the industries import.
//!
//! `.day` layout: 32-byte little-endian records, one per trading day, ascending:
//!
//! ```text
//! u32 date YYYYMMDD   u32 open, high, low, close × 100 (fen, for stocks)
//! f32 amount (CNY)    u32 volume (shares)    u32 reserved
//! ```
//!
//! TDX keeps unadjusted prices, so every imported bar carries its own close as the raw
//! close, and a read says the bars are unadjusted until a sync replaces them with
//! forward-adjusted ones (keeping those raw closes). A stock already holding adjusted bars
//! from a sync or a CSV keeps them: two adjustment bases never share a series; TDX only
//! fills in the unadjusted closes of the days both have. The bundled sample's bars (eight
//! stocks, adjusted as of 2020) give way to the install's history.
//!
//! A file is all or nothing, like a CSV file: a truncated record, a date that is not a
//! date, an impossible bar or dates out of order reject that file (naming the record and
//! its byte offset) and the other files still import. Re-importing the same folder writes
//! nothing and says so.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;
use specta::Type;
use wyckoff_engine::Bar;

use crate::cache::{BarTable, CacheError};
use crate::code::{Exchange, StockCode};
use crate::facade::MarketData;
use crate::industries::{IndustriesImportError, IndustriesImportReport};
use crate::series::Series;
use crate::watchlist::{WatchlistError, WatchlistStore};

/// The source name TDX bars carry (their provenance, and how a sync knows they are
/// unadjusted).
pub const TDX_SOURCE: &str = "tdx-import";
/// Bytes per `.day` record.
pub const RECORD_BYTES: usize = 32;
/// Bad records listed per rejected file; the rest are counted.
pub const MAX_LISTED: usize = 20;
/// Files parsed (in parallel) and written per transaction: bounds memory (a whole market
/// is ~20 M bars) while keeping commits few.
const FILES_PER_BATCH: usize = 400;
/// A `.day` file larger than this is not one (200 years of trading days is ~1.6 MB).
const MAX_DAY_FILE: u64 = 8 << 20;
/// A block file larger than this is not a list of codes.
const MAX_BLOCK_FILE: u64 = 4 << 20;

#[derive(Debug, thiserror::Error)]
pub enum TdxError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{0}: not a TDX install (no vipdoc folder with sh/sz/bj lday data here, nor is it one); give the TDX install folder"
    )]
    NotTdx(PathBuf),
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error(transparent)]
    Watchlist(#[from] WatchlistError),
}

/// What is wrong with a `.day` file or one of its records.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum DayProblem {
    Unreadable {
        error: String,
    },
    Empty,
    /// The file ends inside a record: `bytes` trailing bytes are not a whole record.
    Truncated {
        bytes: u32,
    },
    NotADate {
        value: u32,
    },
    FutureDate {
        date: String,
    },
    /// Dates must ascend strictly.
    OutOfOrder {
        date: String,
        previous: String,
    },
    ImpossibleBar {
        /// What the sanity rules found (English).
        fault: String,
        open: f64,
        high: f64,
        low: f64,
        close: f64,
        volume: f64,
    },
}

impl std::fmt::Display for DayProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DayProblem::Unreadable { error } => write!(f, "cannot read: {error}"),
            DayProblem::Empty => f.write_str("empty file (no records)"),
            DayProblem::Truncated { bytes } => write!(
                f,
                "truncated: the last {bytes} byte(s) are not a whole {RECORD_BYTES}-byte record"
            ),
            DayProblem::NotADate { value } => write!(f, "date {value} is not a YYYYMMDD date"),
            DayProblem::FutureDate { date } => write!(f, "date {date} is in the future"),
            DayProblem::OutOfOrder { date, previous } => {
                write!(f, "date {date} does not come after {previous}")
            }
            DayProblem::ImpossibleBar {
                fault,
                open,
                high,
                low,
                close,
                volume,
            } => write!(
                f,
                "{fault} (open {open}, high {high}, low {low}, close {close}, volume {volume})"
            ),
        }
    }
}

/// One bad record: its number (1-based; 0 is the file as a whole) and byte offset.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct BadRecord {
    pub record: u32,
    pub offset: u32,
    #[serde(flatten)]
    pub problem: DayProblem,
    pub message: String,
}

impl BadRecord {
    fn new(record: usize, problem: DayProblem) -> Self {
        let record = u32::try_from(record).unwrap_or(u32::MAX);
        BadRecord {
            record,
            offset: record.saturating_sub(1).saturating_mul(RECORD_BYTES as u32),
            message: problem.to_string(),
            problem,
        }
    }
}

impl std::fmt::Display for BadRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.record == 0 {
            f.write_str(&self.message)
        } else {
            write!(
                f,
                "record {} (byte {}): {}",
                self.record, self.offset, self.message
            )
        }
    }
}

/// One record's fields as stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DayRecord {
    pub date: u32,
    pub open: u32,
    pub high: u32,
    pub low: u32,
    pub close: u32,
    pub amount: f32,
    pub volume: u32,
}

impl DayRecord {
    fn read(r: &[u8]) -> Self {
        let u = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
        DayRecord {
            date: u(0),
            open: u(4),
            high: u(8),
            low: u(12),
            close: u(16),
            amount: f32::from_bits(u(20)),
            volume: u(24),
        }
    }

    /// The bar of a stock's record: prices in fen become yuan.
    pub fn stock_bar(&self) -> Bar {
        let yuan = |fen: u32| f64::from(fen) / 100.0;
        Bar {
            date: self.date,
            open: yuan(self.open),
            high: yuan(self.high),
            low: yuan(self.low),
            close: yuan(self.close),
            volume: f64::from(self.volume),
            amount: f64::from(self.amount),
            turnover: None,
        }
    }
}

/// A stock's `.day` file as bars, ascending; or every bad record in it. `today`
/// (`YYYYMMDD`) rejects bars dated in the future.
pub fn parse_day(bytes: &[u8], today: u32) -> Result<Vec<Bar>, Vec<BadRecord>> {
    if bytes.is_empty() {
        return Err(vec![BadRecord::new(0, DayProblem::Empty)]);
    }
    let mut errors = Vec::new();
    let whole = bytes.len() / RECORD_BYTES;
    let tail = bytes.len() % RECORD_BYTES;
    let mut bars = Vec::with_capacity(whole);
    let mut previous: Option<u32> = None;
    for (i, chunk) in bytes.chunks_exact(RECORD_BYTES).enumerate() {
        let n = i + 1;
        let rec = DayRecord::read(chunk);
        if !crate::date::is_valid_yyyymmdd(rec.date) {
            errors.push(BadRecord::new(n, DayProblem::NotADate { value: rec.date }));
            continue;
        }
        if rec.date > today {
            errors.push(BadRecord::new(
                n,
                DayProblem::FutureDate {
                    date: crate::date::iso(rec.date),
                },
            ));
            continue;
        }
        if let Some(p) = previous
            && rec.date <= p
        {
            errors.push(BadRecord::new(
                n,
                DayProblem::OutOfOrder {
                    date: crate::date::iso(rec.date),
                    previous: crate::date::iso(p),
                },
            ));
            continue;
        }
        previous = Some(rec.date);
        let bar = rec.stock_bar();
        if let Some(fault) = crate::sanity::check_bar(&bar) {
            errors.push(BadRecord::new(
                n,
                DayProblem::ImpossibleBar {
                    fault: fault.to_string(),
                    open: bar.open,
                    high: bar.high,
                    low: bar.low,
                    close: bar.close,
                    volume: bar.volume,
                },
            ));
            continue;
        }
        bars.push(bar);
    }
    if tail > 0 {
        errors.push(BadRecord::new(
            whole + 1,
            DayProblem::Truncated { bytes: tail as u32 },
        ));
    }
    if errors.is_empty() {
        Ok(bars)
    } else {
        Err(errors)
    }
}

/// Why a `.day` file is not imported: it is not an A-share stock's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum NotAStock {
    /// An index (sh000xxx, sh880xxx, sh999xxx, sz399xxx, bj899xxx).
    Index,
    /// An ETF, LOF or other fund (sh5xxxxx, sz15/16/18xxxx): prices are in 0.001 yuan.
    Fund,
    /// A bond or repo (sh1xxxxx, sz10–13xxxx).
    Bond,
    /// A B share (sh900xxx, sz200xxx): quoted in USD / HKD.
    BShare,
    /// Anything else the stock list does not take.
    Other,
}

/// The stock a `.day` file of `exchange` named `digits` holds, or what else it is.
/// The exchange the file sits under decides: `sh000001` is the SSE Composite, not
/// Ping An Bank (`sz000001`).
pub fn classify(exchange: Exchange, digits: &str) -> Result<StockCode, NotAStock> {
    let p = |s: &str| digits.starts_with(s);
    match exchange {
        Exchange::SH if p("000") || p("880") || p("999") => return Err(NotAStock::Index),
        Exchange::SZ if p("399") => return Err(NotAStock::Index),
        Exchange::BJ if p("899") => return Err(NotAStock::Index),
        Exchange::SH if p("900") => return Err(NotAStock::BShare),
        Exchange::SZ if p("200") || p("201") => return Err(NotAStock::BShare),
        Exchange::SH if p("5") => return Err(NotAStock::Fund),
        Exchange::SZ if p("15") || p("16") || p("18") => return Err(NotAStock::Fund),
        Exchange::SH if p("1") || p("20") => return Err(NotAStock::Bond),
        Exchange::SZ if p("10") || p("11") || p("12") || p("13") => return Err(NotAStock::Bond),
        _ => {}
    }
    let prefix = match exchange {
        Exchange::SH => "sh",
        Exchange::SZ => "sz",
        Exchange::BJ => "bj",
    };
    StockCode::parse(&format!("{prefix}{digits}")).map_err(|_| NotAStock::Other)
}

/// One `.day` file found under `vipdoc`.
#[derive(Debug, Clone, PartialEq)]
pub struct DayFile {
    pub path: PathBuf,
    pub exchange: Exchange,
    pub digits: String,
}

/// The install's `vipdoc` folder: `path` itself, or `path/vipdoc` (any letter case).
pub fn find_vipdoc(path: &Path) -> Result<PathBuf, TdxError> {
    let has_lday = |v: &Path| {
        ["sh", "sz", "bj"]
            .iter()
            .any(|m| child_ci(v, m).is_some_and(|d| child_ci(&d, "lday").is_some()))
    };
    if path.is_dir() && has_lday(path) {
        return Ok(path.to_path_buf());
    }
    if let Some(v) = child_ci(path, "vipdoc")
        && has_lday(&v)
    {
        return Ok(v);
    }
    if !path.exists() {
        return Err(TdxError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        });
    }
    Err(TdxError::NotTdx(path.to_path_buf()))
}

/// `dir/name`, matching the name's letter case loosely (a Windows install copied over).
fn child_ci(dir: &Path, name: &str) -> Option<PathBuf> {
    let exact = dir.join(name);
    if exact.exists() {
        return Some(exact);
    }
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
        })
}

/// Every `{sh,sz,bj}NNNNNN.day` under `vipdoc/{sh,sz,bj}/lday`, by exchange then code.
pub fn day_files(vipdoc: &Path) -> Result<Vec<DayFile>, TdxError> {
    let mut out = Vec::new();
    for (m, exchange) in [
        ("sh", Exchange::SH),
        ("sz", Exchange::SZ),
        ("bj", Exchange::BJ),
    ] {
        let Some(lday) = child_ci(vipdoc, m).and_then(|d| child_ci(&d, "lday")) else {
            continue;
        };
        let io = |source| TdxError::Io {
            path: lday.clone(),
            source,
        };
        for entry in std::fs::read_dir(&lday).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let lower = name.to_ascii_lowercase();
            let Some(stem) = lower.strip_suffix(".day") else {
                continue;
            };
            let Some(digits) = stem.strip_prefix(m) else {
                continue;
            };
            if digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit()) {
                out.push(DayFile {
                    path,
                    exchange,
                    digits: digits.to_string(),
                });
            }
        }
    }
    out.sort_by(|a, b| (a.exchange.as_str(), &a.digits).cmp(&(b.exchange.as_str(), &b.digits)));
    Ok(out)
}

/// What importing one stock's bars did to its stored series (a pure decision, so the
/// policy is tested without a database).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeriesCounts {
    /// Days the store did not have.
    pub added: usize,
    /// Days stored from TDX before whose figures TDX now gives differently.
    pub changed: usize,
    /// Days stored exactly so already.
    pub unchanged: usize,
    /// The stock holds adjusted bars from elsewhere: they are kept, and this many of their
    /// days got TDX's close as their unadjusted close.
    pub raw_filled: usize,
    /// The stock holds adjusted bars from elsewhere, and TDX has this many days they lack:
    /// not mixed in (a sync brings them, adjusted).
    pub not_mixed: usize,
    pub kept_adjusted: bool,
    /// Bundled sample bars this stock held, replaced by TDX's history.
    pub bundled_replaced: usize,
}

/// The series to store for `bars` (ascending, from TDX) given what is `stored`, or `None`
/// when nothing changes.
pub fn plan_series(stored: Option<Series>, bars: &[Bar]) -> (Option<Series>, SeriesCounts) {
    let mut c = SeriesCounts::default();
    let raw_of = |bs: &[Bar]| bs.iter().map(|b| (b.date, b.close)).collect::<Vec<_>>();
    let Some(mut series) = stored.filter(|s| !s.bars.is_empty()) else {
        if bars.is_empty() {
            return (None, c);
        }
        c.added = bars.len();
        let mut s = Series::default();
        return match s.merge_with_raw(bars, &raw_of(bars), TDX_SOURCE, true) {
            Ok(()) => (Some(s), c),
            Err(e) => {
                tracing::warn!(error = %e, "TDX bars not stored");
                (None, SeriesCounts::default())
            }
        };
    };
    let of = |name: &str| series.sources.iter().position(|s| s == name);
    let (tdx, bundled) = (of(TDX_SOURCE), of(crate::bundled::BARS_SOURCE));
    let ours = |s: &u8| Some(usize::from(*s)) == tdx || Some(usize::from(*s)) == bundled;
    if bundled.is_some() && series.source_of.iter().all(ours) {
        // the bundled sample (adjusted as of its end, years old) gives way to the
        // install's whole history: one basis per series
        c.bundled_replaced = series
            .source_of
            .iter()
            .filter(|s| Some(usize::from(**s)) == bundled)
            .count();
        let (fresh, counts) = plan_series(None, bars);
        c.added = counts.added;
        return (fresh, c);
    }
    let only_tdx = tdx.is_some_and(|t| series.source_of.iter().all(|s| usize::from(*s) == t));
    if !only_tdx {
        // adjusted bars stay as they are; TDX's closes are those days' real closes
        c.kept_adjusted = true;
        series.raw_close.resize(series.bars.len(), None);
        let mut fill = Vec::new();
        for b in bars {
            match series.bars.binary_search_by_key(&b.date, |s| s.date) {
                Ok(i) if series.raw_close[i].is_none() => fill.push((b.date, b.close)),
                Ok(_) => {}
                Err(_) => c.not_mixed += 1,
            }
        }
        c.raw_filled = series.attach_raw(&fill);
        return (if c.raw_filled > 0 { Some(series) } else { None }, c);
    }
    let mut write = Vec::new();
    for b in bars {
        match series.bars.binary_search_by_key(&b.date, |s| s.date) {
            Ok(i) if same_bar(&series.bars[i], b) => c.unchanged += 1,
            Ok(_) => {
                c.changed += 1;
                write.push(*b);
            }
            Err(_) => {
                c.added += 1;
                write.push(*b);
            }
        }
    }
    if write.is_empty() {
        return (None, c);
    }
    match series.merge_with_raw(&write, &raw_of(&write), TDX_SOURCE, true) {
        Ok(()) => (Some(series), c),
        Err(e) => {
            tracing::warn!(error = %e, "TDX bars not stored");
            (None, SeriesCounts::default())
        }
    }
}

fn same_bar(a: &Bar, b: &Bar) -> bool {
    a.date == b.date
        && a.open == b.open
        && a.high == b.high
        && a.low == b.low
        && a.close == b.close
        && a.volume == b.volume
        && a.amount == b.amount
}

/// A rejected `.day` file: nothing of it was stored.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct RejectedDayFile {
    pub path: String,
    /// The first [`MAX_LISTED`] bad records.
    pub errors: Vec<BadRecord>,
    pub bad_records: u32,
}

/// `.day` files left out because they are not A-share stocks', by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct SkippedFiles {
    pub kind: NotAStock,
    pub files: u32,
}

/// One block file read into the watchlist.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct BlockOutcome {
    /// The block's name as TDX shows it (自选股 for ZXG.blk).
    pub name: String,
    pub path: String,
    #[serde(flatten)]
    pub status: BlockStatus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum BlockStatus {
    Read {
        /// Stock codes in the block.
        stocks: u32,
        /// Of those, codes the watchlist did not hold yet.
        added: u32,
        /// Lines naming an index, fund, bond or B share (not watchable stocks).
        not_stocks: u32,
    },
    /// Nothing of this block was added.
    Rejected { errors: Vec<String> },
}

/// The install's industry file, through the industries import.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TdxIndustries {
    Imported {
        report: IndustriesImportReport,
    },
    /// No tdxhy.cfg or block_gn.dat in the install.
    NotFound,
    Failed {
        /// In English.
        error: String,
        /// The same, typed, for a front end to word.
        failure: crate::industries::IndustriesFailure,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct TdxImportReport {
    /// The install folder.
    pub path: String,
    /// `.day` files found.
    pub files: u32,
    pub skipped: Vec<SkippedFiles>,
    /// Stock files read without a fault.
    pub stocks: u32,
    /// Stocks whose stored series changed.
    pub stocks_written: u32,
    pub bars_added: u32,
    pub bars_changed: u32,
    pub bars_unchanged: u32,
    /// Stocks that already held adjusted bars from a sync or a CSV: kept as they are.
    pub kept_adjusted: u32,
    /// Of those, days that got TDX's close as their unadjusted close.
    pub raw_filled: u32,
    /// Of those, TDX days not mixed into their adjusted series.
    pub not_mixed: u32,
    /// Stocks whose bundled sample bars (adjusted as of 2020) gave way to TDX's history.
    pub bundled_replaced: u32,
    pub rejected: Vec<RejectedDayFile>,
    /// The last day of any imported bar (`YYYYMMDD`).
    pub last_date: Option<u32>,
    /// Imported stocks the cached stock list does not name (names unknown until a
    /// `wyckoff data sync --list`).
    pub not_in_stock_list: u32,
    pub blocks: Vec<BlockOutcome>,
    /// Stocks the watchlist did not hold before (across every block).
    pub watchlist_added: u32,
    pub industries: TdxIndustries,
}

impl TdxImportReport {
    /// True when this import stored nothing new (no bar, raw close or watchlist entry).
    pub fn nothing_new(&self) -> bool {
        self.stocks_written == 0 && self.watchlist_added == 0
    }

    pub fn anything_rejected(&self) -> bool {
        !self.rejected.is_empty()
            || self
                .blocks
                .iter()
                .any(|b| matches!(b.status, BlockStatus::Rejected { .. }))
    }
}

/// Where an import is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TdxStage {
    Bars,
    Watchlist,
    Industries,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TdxEvent {
    Progress {
        stage: TdxStage,
        done: u32,
        total: u32,
    },
}

/// The codes of one block file: one per line, a market digit (0 Shenzhen, 1 Shanghai,
/// 2 Beijing) then six digits. Lines that are not stocks are counted, malformed ones
/// listed (1-based line numbers).
pub fn parse_blk(text: &str) -> Result<(Vec<StockCode>, usize), Vec<String>> {
    let mut codes = Vec::new();
    let mut not_stocks = 0;
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim().trim_start_matches('\u{feff}');
        if l.is_empty() {
            continue;
        }
        let (m, digits) = l.split_at(l.char_indices().nth(1).map_or(l.len(), |(i, _)| i));
        let digits = digits.trim_start_matches('#');
        let exchange = match m {
            "0" => Some(Exchange::SZ),
            "1" => Some(Exchange::SH),
            "2" => Some(Exchange::BJ),
            _ => None,
        };
        let (Some(exchange), true) = (
            exchange,
            digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit()),
        ) else {
            errors.push(format!(
                "line {}: {l:?} is not a market digit (0 Shenzhen, 1 Shanghai, 2 Beijing) and a six-digit code",
                i + 1
            ));
            continue;
        };
        match classify(exchange, digits) {
            Ok(code) => {
                if seen.insert(code.digits().to_string()) {
                    codes.push(code);
                }
            }
            Err(_) => not_stocks += 1,
        }
    }
    if errors.is_empty() {
        Ok((codes, not_stocks))
    } else {
        Err(errors)
    }
}

/// `blocknew.cfg`: 120-byte records, a 50-byte GBK block name then the 70-byte name of its
/// `.blk` file (without the extension), both NUL-padded. Returns (name, file stem).
pub fn parse_blocknew_cfg(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    const RECORD: usize = 120;
    if !bytes.len().is_multiple_of(RECORD) {
        return Err(format!(
            "{} bytes is not a whole number of {RECORD}-byte block records",
            bytes.len()
        ));
    }
    let text = |b: &[u8]| {
        let end = b.iter().position(|c| *c == 0).unwrap_or(b.len());
        encoding_rs::GB18030.decode(&b[..end]).0.trim().to_string()
    };
    Ok(bytes
        .chunks_exact(RECORD)
        .map(|r| (text(&r[..50]), text(&r[50..])))
        .filter(|(_, file)| !file.is_empty())
        .collect())
}

/// The block files to read: ZXG.blk (自选股) first, then each custom block blocknew.cfg
/// names, as (name, path); or why blocknew.cfg cannot be read.
fn block_files(root: &Path) -> (Vec<(String, PathBuf)>, Option<BlockOutcome>) {
    let Some(dir) = child_ci(root, "T0002").and_then(|t| child_ci(&t, "blocknew")) else {
        return (Vec::new(), None);
    };
    let mut out = Vec::new();
    if let Some(zxg) = child_ci(&dir, "ZXG.blk") {
        out.push(("自选股".to_string(), zxg));
    }
    let Some(cfg) = child_ci(&dir, "blocknew.cfg") else {
        return (out, None);
    };
    let rejected = |errors| {
        Some(BlockOutcome {
            name: "blocknew.cfg".into(),
            path: cfg.display().to_string(),
            status: BlockStatus::Rejected { errors },
        })
    };
    let bytes = match read_capped(&cfg, MAX_BLOCK_FILE) {
        Ok(b) => b,
        Err(e) => return (out, rejected(vec![e])),
    };
    match parse_blocknew_cfg(&bytes) {
        Ok(blocks) => {
            for (name, stem) in blocks {
                match child_ci(&dir, &format!("{stem}.blk")) {
                    Some(p) if !out.iter().any(|(_, q)| *q == p) => out.push((name, p)),
                    Some(_) => {}
                    None => tracing::warn!(block = %name, file = %stem, "block file missing"),
                }
            }
            (out, None)
        }
        Err(e) => (out, rejected(vec![e])),
    }
}

fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > max {
        return Err(format!(
            "{} bytes is more than such a file can be ({max} at most)",
            meta.len()
        ));
    }
    std::fs::read(path).map_err(|e| e.to_string())
}

/// One file's parse, done off the async runtime.
enum Parsed {
    Bars(String, Vec<Bar>),
    Rejected(RejectedDayFile),
}

fn parse_file(file: &DayFile, code: &StockCode, today: u32) -> Parsed {
    let shown = file.path.display().to_string();
    let reject = |errors: Vec<BadRecord>| {
        Parsed::Rejected(RejectedDayFile {
            path: shown.clone(),
            bad_records: u32::try_from(errors.len()).unwrap_or(u32::MAX),
            errors: errors.into_iter().take(MAX_LISTED).collect(),
        })
    };
    let bytes = match read_capped(&file.path, MAX_DAY_FILE) {
        Ok(b) => b,
        Err(error) => return reject(vec![BadRecord::new(0, DayProblem::Unreadable { error })]),
    };
    match parse_day(&bytes, today) {
        Ok(bars) => Parsed::Bars(code.symbol().key(), bars),
        Err(errors) => reject(errors),
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl MarketData {
    /// Imports a TDX install (see [`crate::tdx`]): its stocks' daily bars, its 自选股 and
    /// custom blocks into the watchlist, and its industry file. Bars dated after today
    /// (Beijing) are rejected.
    pub async fn import_tdx(
        &self,
        path: &Path,
        progress: &mut (dyn FnMut(TdxEvent) + Send),
    ) -> Result<TdxImportReport, TdxError> {
        let root_given = path.to_path_buf();
        let vipdoc = find_vipdoc(path)?;
        // the install root holds T0002 (blocks, industries) beside vipdoc
        let root = if vipdoc == path {
            path.parent()
                .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
        } else {
            path.to_path_buf()
        };
        let today = crate::date::to_yyyymmdd(self.clock().now_beijing().date());
        let now = self.clock().now();
        let files = day_files(&vipdoc)?;
        let mut skipped: BTreeMap<NotAStock, usize> = BTreeMap::new();
        let mut stocks: Vec<(DayFile, StockCode)> = Vec::new();
        for f in files.iter() {
            match classify(f.exchange, &f.digits) {
                Ok(code) => stocks.push((f.clone(), code)),
                Err(kind) => *skipped.entry(kind).or_default() += 1,
            }
        }
        let listed: HashSet<String> = self
            .store()
            .load_stocks()
            .await?
            .into_iter()
            .map(|s| s.code.digits().to_string())
            .collect();
        let mut report = TdxImportReport {
            path: root_given.display().to_string(),
            files: count(files.len()),
            skipped: skipped
                .into_iter()
                .map(|(kind, n)| SkippedFiles {
                    kind,
                    files: count(n),
                })
                .collect(),
            stocks: 0,
            stocks_written: 0,
            bars_added: 0,
            bars_changed: 0,
            bars_unchanged: 0,
            kept_adjusted: 0,
            raw_filled: 0,
            not_mixed: 0,
            bundled_replaced: 0,
            rejected: Vec::new(),
            last_date: None,
            not_in_stock_list: 0,
            blocks: Vec::new(),
            watchlist_added: 0,
            industries: TdxIndustries::NotFound,
        };
        let total = count(stocks.len());
        let mut done = 0u32;
        progress(TdxEvent::Progress {
            stage: TdxStage::Bars,
            done,
            total,
        });
        let mut totals = SeriesCounts::default();
        for batch in stocks.chunks(FILES_PER_BATCH) {
            let owned: Vec<(DayFile, StockCode)> = batch.to_vec();
            let parsed: Vec<Parsed> = tokio::task::spawn_blocking(move || {
                owned
                    .par_iter()
                    .map(|(f, code)| parse_file(f, code, today))
                    .collect()
            })
            .await
            .map_err(|e| TdxError::Io {
                path: vipdoc.clone(),
                source: std::io::Error::other(e.to_string()),
            })?;
            let mut keys = Vec::new();
            let mut series_bars = Vec::new();
            for p in parsed {
                match p {
                    Parsed::Bars(key, bars) => {
                        report.stocks += 1;
                        if let Some(last) = bars.last() {
                            report.last_date = report.last_date.max(Some(last.date));
                        }
                        let digits = key.split('.').next().unwrap_or_default();
                        if !listed.contains(digits) {
                            report.not_in_stock_list += 1;
                        }
                        keys.push(key);
                        series_bars.push(bars);
                    }
                    Parsed::Rejected(r) => {
                        tracing::warn!(file = %r.path, bad_records = r.bad_records, "TDX file rejected");
                        report.rejected.push(r);
                    }
                }
            }
            let mut update = |i: usize, stored: Option<Series>| {
                let bars = &series_bars[i];
                let (series, c) = plan_series(stored, bars);
                totals.added += c.added;
                totals.changed += c.changed;
                totals.unchanged += c.unchanged;
                totals.raw_filled += c.raw_filled;
                totals.not_mixed += c.not_mixed;
                if c.kept_adjusted {
                    report.kept_adjusted += 1;
                }
                if c.bundled_replaced > 0 {
                    report.bundled_replaced += 1;
                }
                let first = bars.first()?.date;
                let last = bars.last()?.date;
                series.map(|s| (s, first, last))
            };
            let written = self
                .store()
                .rewrite_many(BarTable::Stocks, &keys, TDX_SOURCE, now, &mut update)
                .await?;
            report.stocks_written += count(written);
            done += count(batch.len());
            progress(TdxEvent::Progress {
                stage: TdxStage::Bars,
                done,
                total,
            });
        }
        report.bars_added = count(totals.added);
        report.bars_changed = count(totals.changed);
        report.bars_unchanged = count(totals.unchanged);
        report.raw_filled = count(totals.raw_filled);
        report.not_mixed = count(totals.not_mixed);

        let (blocks, cfg_problem) = block_files(&root);
        let watchlist = WatchlistStore::new(self.pool().clone());
        let total = count(blocks.len());
        for (i, (name, file)) in blocks.into_iter().enumerate() {
            progress(TdxEvent::Progress {
                stage: TdxStage::Watchlist,
                done: count(i),
                total,
            });
            let parsed = read_capped(&file, MAX_BLOCK_FILE)
                .map_err(|e| vec![e])
                .and_then(|bytes| match String::from_utf8(bytes) {
                    Ok(t) => parse_blk(&t),
                    Err(e) => parse_blk(&encoding_rs::GB18030.decode(e.as_bytes()).0),
                });
            let status = match parsed {
                Err(errors) => BlockStatus::Rejected { errors },
                Ok((codes, not_stocks)) => {
                    let mut added = 0;
                    for c in &codes {
                        if !watchlist.contains(c.digits()).await? {
                            watchlist.add(c.digits(), now).await?;
                            added += 1;
                        }
                    }
                    report.watchlist_added += added;
                    BlockStatus::Read {
                        stocks: count(codes.len()),
                        added,
                        not_stocks: count(not_stocks),
                    }
                }
            };
            report.blocks.push(BlockOutcome {
                name,
                path: file.display().to_string(),
                status,
            });
        }
        report.blocks.extend(cfg_problem);

        progress(TdxEvent::Progress {
            stage: TdxStage::Industries,
            done: 0,
            total: 1,
        });
        report.industries = match self.import_industries(&root).await {
            Ok(r) => TdxIndustries::Imported { report: r },
            Err(IndustriesImportError::NotTdxFolder { .. }) => TdxIndustries::NotFound,
            Err(e) => TdxIndustries::Failed {
                error: e.to_string(),
                failure: e.failure(),
            },
        };
        progress(TdxEvent::Progress {
            stage: TdxStage::Industries,
            done: 1,
            total: 1,
        });
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(date: u32, o: u32, h: u32, l: u32, c: u32, amount: f32, vol: u32) -> Vec<u8> {
        let mut r = Vec::with_capacity(32);
        for v in [date, o, h, l, c] {
            r.extend_from_slice(&v.to_le_bytes());
        }
        r.extend_from_slice(&amount.to_le_bytes());
        r.extend_from_slice(&vol.to_le_bytes());
        r.extend_from_slice(&0u32.to_le_bytes());
        r
    }

    #[test]
    fn records_read_as_bars_in_yuan_with_volume_and_amount() {
        let mut f = record(20240102, 1712, 1750, 1700, 1745, 123_456_780.0, 7_100_000);
        f.extend(record(
            20240103,
            1745,
            1745,
            1690,
            1699,
            98_000_000.0,
            5_000_000,
        ));
        let bars = parse_day(&f, 20261201).unwrap();
        assert_eq!(bars.len(), 2);
        assert_eq!(bars[0].date, 20240102);
        assert_eq!(bars[0].open, 17.12);
        assert_eq!(bars[0].high, 17.5);
        assert_eq!(bars[0].low, 17.0);
        assert_eq!(bars[0].close, 17.45);
        assert_eq!(bars[0].volume, 7_100_000.0);
        assert_eq!(bars[0].amount, f64::from(123_456_780.0f32));
        assert_eq!(bars[1].close, 16.99);
    }

    #[test]
    fn every_bad_record_is_named_with_its_number_and_offset() {
        let mut f = record(20240102, 1000, 1100, 900, 1000, 1.0, 10);
        f.extend(record(20241340, 1000, 1100, 900, 1000, 1.0, 10)); // not a date
        f.extend(record(20240101, 1000, 1100, 900, 1000, 1.0, 10)); // before the first
        f.extend(record(20240104, 1000, 900, 1100, 1000, 1.0, 10)); // high below low
        f.extend(record(20300104, 1000, 1100, 900, 1000, 1.0, 10)); // future
        f.extend(&[1, 2, 3, 4, 5]); // a torn last record
        let e = parse_day(&f, 20261201).unwrap_err();
        let got: Vec<(u32, u32, &str)> = e
            .iter()
            .map(|r| (r.record, r.offset, r.message.as_str()))
            .collect();
        let want = [
            (2, 32, "date 20241340 is not a YYYYMMDD date"),
            (3, 64, "date 2024-01-01 does not come after 2024-01-02"),
            (4, 96, "high below"),
            (5, 128, "date 2030-01-04 is in the future"),
            (6, 160, "truncated: the last 5 byte(s)"),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((rec, off, msg), (wr, wo, wm)) in got.iter().zip(want) {
            assert_eq!((*rec, *off), (wr, wo), "{msg}");
            assert!(msg.contains(wm), "record {rec}: {msg} (want {wm})");
        }
        assert_eq!(
            e[0].to_string(),
            "record 2 (byte 32): date 20241340 is not a YYYYMMDD date"
        );
        assert_eq!(parse_day(&[], 20261201).unwrap_err()[0].record, 0);
    }

    #[test]
    fn files_are_classified_by_exchange_and_prefix() {
        let cases = [
            (Exchange::SH, "600519", Ok("600519")),
            (Exchange::SH, "688981", Ok("688981")),
            (Exchange::SZ, "000001", Ok("000001")),
            (Exchange::SZ, "300750", Ok("300750")),
            (Exchange::BJ, "430047", Ok("430047")),
            (Exchange::BJ, "920001", Ok("920001")),
            (Exchange::SH, "000001", Err(NotAStock::Index)),
            (Exchange::SH, "880001", Err(NotAStock::Index)),
            (Exchange::SZ, "399001", Err(NotAStock::Index)),
            (Exchange::BJ, "899050", Err(NotAStock::Index)),
            (Exchange::SH, "510300", Err(NotAStock::Fund)),
            (Exchange::SZ, "159915", Err(NotAStock::Fund)),
            (Exchange::SH, "113050", Err(NotAStock::Bond)),
            (Exchange::SZ, "123001", Err(NotAStock::Bond)),
            (Exchange::SH, "900901", Err(NotAStock::BShare)),
            (Exchange::SZ, "200002", Err(NotAStock::BShare)),
            (Exchange::SZ, "600519", Err(NotAStock::Other)),
            (Exchange::SH, "700001", Err(NotAStock::Other)),
        ];
        for (ex, digits, want) in cases {
            let got = classify(ex, digits).map(|c| c.digits().to_string());
            assert_eq!(got, want.map(str::to_string), "{ex}{digits}");
        }
    }

    fn bar(date: u32, close: f64) -> Bar {
        Bar {
            date,
            open: close,
            high: close,
            low: close,
            close,
            volume: 100.0,
            amount: 1000.0,
            turnover: None,
        }
    }

    #[test]
    fn a_series_is_written_only_when_tdx_brings_something_new() {
        let first = [bar(20240102, 10.0), bar(20240103, 10.5)];
        let (s, c) = plan_series(None, &first);
        let s = s.unwrap();
        assert_eq!(c.added, 2);
        assert_eq!(s.raw_closes(), [(20240102, 10.0), (20240103, 10.5)]);

        let (again, c) = plan_series(Some(s.clone()), &first);
        assert!(again.is_none());
        assert_eq!((c.added, c.changed, c.unchanged), (0, 0, 2));

        let more = [
            bar(20240102, 10.0),
            bar(20240103, 10.6),
            bar(20240104, 11.0),
        ];
        let (s2, c) = plan_series(Some(s), &more);
        assert_eq!((c.added, c.changed, c.unchanged), (1, 1, 1));
        let s2 = s2.unwrap();
        assert_eq!(s2.bars.len(), 3);
        assert_eq!(s2.raw_closes()[1], (20240103, 10.6));
    }

    #[test]
    fn adjusted_bars_from_elsewhere_are_kept_and_get_only_raw_closes() {
        let mut synced = Series::default();
        synced
            .merge(&[bar(20240102, 9.0), bar(20240103, 9.5)], "eastmoney", true)
            .unwrap();
        let tdx = [
            bar(20240102, 10.0),
            bar(20240103, 10.5),
            bar(20240104, 11.0),
        ];
        let (s, c) = plan_series(Some(synced), &tdx);
        assert!(c.kept_adjusted);
        assert_eq!((c.raw_filled, c.not_mixed, c.added), (2, 1, 0));
        let s = s.unwrap();
        let closes: Vec<f64> = s.bars.iter().map(|b| b.close).collect();
        assert_eq!(closes, [9.0, 9.5], "adjusted bars untouched");
        assert_eq!(s.raw_closes(), [(20240102, 10.0), (20240103, 10.5)]);
        // a second import has nothing to fill in
        let (again, c) = plan_series(Some(s), &tdx);
        assert!(again.is_none());
        assert_eq!(c.raw_filled, 0);
    }

    #[test]
    fn the_bundled_sample_gives_way_to_the_install() {
        let mut bundled = Series::default();
        bundled
            .merge(
                &[bar(20200615, 5.0), bar(20200616, 5.1)],
                crate::bundled::BARS_SOURCE,
                true,
            )
            .unwrap();
        let tdx = [bar(20200616, 12.0), bar(20240102, 10.0)];
        let (s, c) = plan_series(Some(bundled), &tdx);
        assert_eq!(
            (c.bundled_replaced, c.added, c.kept_adjusted),
            (2, 2, false)
        );
        let s = s.unwrap();
        assert_eq!(s.sources, [TDX_SOURCE]);
        assert_eq!(s.raw_closes(), [(20200616, 12.0), (20240102, 10.0)]);
        let (again, c) = plan_series(Some(s), &tdx);
        assert!(again.is_none());
        assert_eq!(c.unchanged, 2);
    }

    #[test]
    fn block_files_read_market_digit_codes() {
        let (codes, not_stocks) = parse_blk(
            "\r\n1600519\r\n0000001\r\n0300750\r\n2430047\r\n1000001\r\n0159915\r\n1600519\r\n",
        )
        .unwrap();
        let got: Vec<String> = codes.iter().map(|c| c.symbol().key()).collect();
        assert_eq!(got, ["600519.SH", "000001.SZ", "300750.SZ", "430047.BJ"]);
        assert_eq!(not_stocks, 2);
        let e = parse_blk("1600519\nhello\n9600519\n").unwrap_err();
        assert_eq!(e.len(), 2);
        assert!(e[0].starts_with("line 2:"), "{e:?}");
        assert!(e[1].starts_with("line 3:"), "{e:?}");
    }

    #[test]
    fn blocknew_cfg_names_each_block_file() {
        let mut cfg = Vec::new();
        for (name, file) in [("短线", "DX"), ("长线", "CX")] {
            let (gbk, _, _) = encoding_rs::GBK.encode(name);
            let mut rec = vec![0u8; 120];
            rec[..gbk.len()].copy_from_slice(&gbk);
            rec[50..50 + file.len()].copy_from_slice(file.as_bytes());
            cfg.extend(rec);
        }
        let blocks = parse_blocknew_cfg(&cfg).unwrap();
        assert_eq!(
            blocks,
            [("短线".into(), "DX".into()), ("长线".into(), "CX".into())]
        );
        assert!(
            parse_blocknew_cfg(&cfg[..100])
                .unwrap_err()
                .contains("120-byte")
        );
    }
}
