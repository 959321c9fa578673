//! CSV import of forward-adjusted daily bars, so a user can bring full-market history from
//! any tool they already use. A file is all or nothing: one bad row and none of its rows
//! are stored (every bad row is reported with file and line). Good files are written
//! through the same series merge the live sync uses.
//!
//! Format: a header row naming the columns `date, code, open, high, low, close, volume`
//! and optionally `amount` (any order, extra columns ignored); dates `YYYY-MM-DD` or
//! `YYYYMMDD`; codes `600519`, `600519.SH` or `sh600519`; volume in shares, amount in CNY.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;
use wyckoff_engine::Bar;

use crate::cache::{BarTable, CacheError, CacheStore};
use crate::code::StockCode;
use crate::sanity::BarFault;

/// The source name imported bars carry (shown as their provenance).
pub const IMPORT_SOURCE: &str = "csv-import";
const REQUIRED: [&str; 7] = ["date", "code", "open", "high", "low", "close", "volume"];
/// Bad rows listed per file; the rest are counted.
pub const MAX_LISTED_ERRORS: usize = 50;
/// Bars written per transaction: large enough that commits do not dominate.
const BARS_PER_WRITE: usize = 250_000;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}: no .csv files in this folder")]
    NoCsvFiles(PathBuf),
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// One rejected row (line 1 is the header; line 0 is the file as a whole): what is
/// wrong with its figures, for the window to word in its language, and `message`, the
/// same in English for the CLI, the model and the log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BadRow {
    pub line: usize,
    #[serde(flatten)]
    pub problem: RowProblem,
    pub message: String,
}

impl BadRow {
    pub fn new(line: usize, problem: RowProblem) -> Self {
        BadRow {
            line,
            message: problem.to_string(),
            problem,
        }
    }
}

/// What is wrong with a file or one of its rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum RowProblem {
    Unreadable {
        error: String,
    },
    /// `valid_up_to`: the bytes before the first that is not UTF-8.
    NotUtf8 {
        valid_up_to: usize,
    },
    EmptyFile,
    HeaderIsData,
    MissingColumns {
        columns: Vec<String>,
    },
    NoDataRows,
    FieldCount {
        fields: usize,
        header: usize,
    },
    UnknownCode {
        code: String,
        reason: String,
    },
    BadDate {
        value: String,
    },
    FutureDate {
        date: String,
    },
    NotANumber {
        column: String,
        value: String,
    },
    ImpossibleBar {
        fault: BarFault,
        open: f64,
        high: f64,
        low: f64,
        close: f64,
        volume: f64,
    },
    DuplicateDate {
        date: String,
        code: String,
        first_line: usize,
    },
}

impl std::fmt::Display for RowProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let header = || format!("{},amount (optional)", REQUIRED.join(","));
        match self {
            RowProblem::Unreadable { error } => write!(f, "cannot read: {error}"),
            RowProblem::NotUtf8 { valid_up_to } => write!(
                f,
                "not UTF-8 text (from byte {}); save the file as UTF-8",
                valid_up_to + 1
            ),
            RowProblem::EmptyFile => {
                write!(f, "file is empty; a header row is required: {}", header())
            }
            RowProblem::HeaderIsData => write!(
                f,
                "the first row is data, but a header row is required: {}",
                header()
            ),
            RowProblem::MissingColumns { columns } => {
                write!(f, "header lacks column(s) {}", columns.join(", "))
            }
            RowProblem::NoDataRows => f.write_str("no data rows after the header"),
            RowProblem::FieldCount { fields, header } => {
                write!(f, "{fields} field(s), the header has {header}")
            }
            RowProblem::UnknownCode { code, reason } => {
                write!(f, "unknown code {code:?}: {reason}")
            }
            RowProblem::BadDate { value } => {
                write!(f, "date {value:?} is not YYYY-MM-DD or YYYYMMDD")
            }
            RowProblem::FutureDate { date } => write!(f, "date {date} is in the future"),
            RowProblem::NotANumber { column, value } => {
                write!(f, "{column} {value:?} is not a number")
            }
            RowProblem::ImpossibleBar {
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
            RowProblem::DuplicateDate {
                date,
                code,
                first_line,
            } => write!(
                f,
                "duplicate date {date} for {code} (first on line {first_line})"
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FileStatus {
    Imported {
        stocks: usize,
        bars: usize,
    },
    /// Nothing from this file was stored.
    Rejected {
        /// The first `MAX_LISTED_ERRORS` problems.
        errors: Vec<BadRow>,
        bad_rows: usize,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileOutcome {
    pub path: String,
    #[serde(flatten)]
    pub status: FileStatus,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ImportEvent {
    FileDone {
        index: usize,
        total: usize,
        outcome: FileOutcome,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    pub files: usize,
    pub files_imported: usize,
    pub files_rejected: usize,
    /// Distinct stocks written.
    pub stocks: usize,
    pub bars: usize,
    pub bad_rows: usize,
    /// Imported codes the cached stock list does not name (names unknown until a
    /// `wyckoff data sync --list`).
    pub not_in_stock_list: Vec<String>,
    pub outcomes: Vec<FileOutcome>,
}

impl ImportReport {
    pub fn anything_rejected(&self) -> bool {
        self.files_rejected > 0
    }
}

/// A file that parsed cleanly: bars per cache key, ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedFile {
    pub series: Vec<(String, Vec<Bar>)>,
    pub has_amount: bool,
}

impl ParsedFile {
    pub fn bars(&self) -> usize {
        self.series.iter().map(|(_, b)| b.len()).sum()
    }
}

/// The `.csv` files to import: `path` itself, or the folder's `.csv` files by name.
pub fn csv_files(path: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(io)? {
        let p = entry.map_err(io)?.path();
        let is_csv = p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if is_csv && p.is_file() {
            files.push(p);
        }
    }
    if files.is_empty() {
        return Err(ImportError::NoCsvFiles(path.to_path_buf()));
    }
    files.sort();
    Ok(files)
}

/// Parses one file's text. `today` (`YYYYMMDD`) rejects bars dated in the future.
pub fn parse_csv(text: &str, today: u32) -> Result<ParsedFile, Vec<BadRow>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate();
    let Some((_, header)) = lines.find(|(_, l)| !l.trim().is_empty()) else {
        return Err(vec![BadRow::new(0, RowProblem::EmptyFile)]);
    };
    let names: Vec<String> = header
        .split(',')
        .map(|h| unquote(h).to_ascii_lowercase())
        .collect();
    let col = |n: &str| names.iter().position(|h| h == n);
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|n| col(n).is_none())
        .collect();
    if !missing.is_empty() {
        let looks_like_data =
            crate::date::parse_date(unquote(header.split(',').next().unwrap_or(""))).is_some();
        let problem = if looks_like_data {
            RowProblem::HeaderIsData
        } else {
            RowProblem::MissingColumns {
                columns: missing.iter().map(|c| c.to_string()).collect(),
            }
        };
        return Err(vec![BadRow::new(1, problem)]);
    }
    let idx: Vec<usize> = REQUIRED.iter().filter_map(|n| col(n)).collect();
    let amount_col = col("amount");
    let width = names.len();

    let mut errors = Vec::new();
    let mut by_code: HashMap<String, (Vec<Bar>, Vec<usize>)> = HashMap::new();
    let mut codes: HashMap<String, Result<String, RowProblem>> = HashMap::new();
    let mut rows = 0usize;
    let mut fields: Vec<&str> = Vec::with_capacity(width);
    for (i, line) in lines {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        rows += 1;
        fields.clear();
        fields.extend(line.split(',').map(unquote));
        if fields.len() != width {
            errors.push(BadRow::new(
                line_no,
                RowProblem::FieldCount {
                    fields: fields.len(),
                    header: width,
                },
            ));
            continue;
        }
        let raw_code = fields[idx[1]];
        let key = codes
            .entry(raw_code.to_string())
            .or_insert_with(|| {
                StockCode::parse(raw_code)
                    .map(|c| c.symbol().key())
                    .map_err(|e| RowProblem::UnknownCode {
                        code: raw_code.to_string(),
                        reason: e.to_string(),
                    })
            })
            .clone();
        match parse_row(&fields, &idx, amount_col, today).and_then(|bar| key.map(|k| (k, bar))) {
            Ok((key, bar)) => {
                let entry = by_code.entry(key).or_default();
                entry.0.push(bar);
                entry.1.push(line_no);
            }
            Err(problem) => errors.push(BadRow::new(line_no, problem)),
        }
    }
    if rows == 0 && errors.is_empty() {
        return Err(vec![BadRow::new(0, RowProblem::NoDataRows)]);
    }
    let mut series: Vec<(String, Vec<Bar>)> = Vec::with_capacity(by_code.len());
    for (key, (bars, lines)) in by_code {
        let mut order: Vec<usize> = (0..bars.len()).collect();
        order.sort_by_key(|&i| (bars[i].date, lines[i]));
        for w in order.windows(2) {
            if bars[w[0]].date == bars[w[1]].date {
                errors.push(BadRow::new(
                    lines[w[1]],
                    RowProblem::DuplicateDate {
                        date: crate::date::iso(bars[w[1]].date),
                        code: key.clone(),
                        first_line: lines[w[0]],
                    },
                ));
            }
        }
        series.push((key, order.into_iter().map(|i| bars[i]).collect()));
    }
    if !errors.is_empty() {
        errors.sort_by_key(|e| e.line);
        return Err(errors);
    }
    series.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(ParsedFile {
        series,
        has_amount: amount_col.is_some(),
    })
}

fn unquote(s: &str) -> &str {
    let t = s.trim();
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
        .trim()
}

fn parse_row(
    f: &[&str],
    idx: &[usize],
    amount_col: Option<usize>,
    today: u32,
) -> Result<Bar, RowProblem> {
    let date = parse_date_fast(f[idx[0]]).ok_or_else(|| RowProblem::BadDate {
        value: f[idx[0]].to_string(),
    })?;
    if date > today {
        return Err(RowProblem::FutureDate {
            date: crate::date::iso(date),
        });
    }
    let num = |column: &str, s: &str| -> Result<f64, RowProblem> {
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(RowProblem::NotANumber {
                column: column.to_string(),
                value: s.to_string(),
            }),
        }
    };
    let bar = Bar {
        date,
        open: num("open", f[idx[2]])?,
        high: num("high", f[idx[3]])?,
        low: num("low", f[idx[4]])?,
        close: num("close", f[idx[5]])?,
        volume: num("volume", f[idx[6]])?,
        amount: match amount_col {
            Some(c) => num("amount", f[c])?,
            None => 0.0,
        },
        turnover: None,
    };
    if let Some(fault) = crate::sanity::check_bar(&bar) {
        return Err(RowProblem::ImpossibleBar {
            fault,
            open: bar.open,
            high: bar.high,
            low: bar.low,
            close: bar.close,
            volume: bar.volume,
        });
    }
    Ok(bar)
}

/// `YYYY-MM-DD` or `YYYYMMDD` without allocating (millions of rows per import).
fn parse_date_fast(s: &str) -> Option<u32> {
    let b = s.as_bytes();
    let digits: [u8; 8] = match b.len() {
        8 => b.try_into().ok()?,
        10 if b[4] == b'-' && b[7] == b'-' => [b[0], b[1], b[2], b[3], b[5], b[6], b[8], b[9]],
        _ => return None,
    };
    let mut v = 0u32;
    for d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(d - b'0');
    }
    // a real calendar date only (20230230 is not)
    crate::date::from_yyyymmdd(v).map(|_| v)
}

/// Imports `path` (a file or a folder of `.csv` files) into the store. Each file is parsed
/// whole before anything of it is written.
pub async fn import_path(
    store: &CacheStore,
    path: &Path,
    now: DateTime<Utc>,
    today: u32,
    progress: &mut (dyn FnMut(ImportEvent) + Send),
) -> Result<ImportReport, ImportError> {
    let files = csv_files(path)?;
    let listed: std::collections::HashSet<String> = store
        .load_stocks()
        .await?
        .into_iter()
        .map(|s| s.code.symbol().key())
        .collect();
    let total = files.len();
    let mut report = ImportReport {
        files: total,
        ..ImportReport::default()
    };
    let mut stocks = std::collections::BTreeSet::new();
    // good files wait here until enough bars are pending for one transaction
    let mut pending: [Vec<(String, Vec<Bar>)>; 2] = [Vec::new(), Vec::new()];
    let mut pending_bars = 0usize;
    for (index, file) in files.iter().enumerate() {
        let shown = file.display().to_string();
        let status = match std::fs::read(file) {
            Err(e) => FileStatus::Rejected {
                errors: vec![BadRow::new(
                    0,
                    RowProblem::Unreadable {
                        error: e.to_string(),
                    },
                )],
                bad_rows: 1,
            },
            Ok(bytes) => match String::from_utf8(bytes) {
                Err(e) => FileStatus::Rejected {
                    errors: vec![BadRow::new(
                        0,
                        RowProblem::NotUtf8 {
                            valid_up_to: e.utf8_error().valid_up_to(),
                        },
                    )],
                    bad_rows: 1,
                },
                Ok(text) => match parse_csv(&text, today) {
                    Err(errors) => FileStatus::Rejected {
                        bad_rows: errors.len(),
                        errors: errors.into_iter().take(MAX_LISTED_ERRORS).collect(),
                    },
                    Ok(parsed) => {
                        let bars = parsed.bars();
                        let n = parsed.series.len();
                        for (key, _) in &parsed.series {
                            stocks.insert(key.clone());
                        }
                        pending_bars += bars;
                        pending[usize::from(parsed.has_amount)].extend(parsed.series);
                        FileStatus::Imported { stocks: n, bars }
                    }
                },
            },
        };
        match &status {
            FileStatus::Imported { bars, .. } => {
                report.files_imported += 1;
                report.bars += bars;
            }
            FileStatus::Rejected { bad_rows, .. } => {
                report.files_rejected += 1;
                report.bad_rows += bad_rows;
                tracing::warn!(file = %shown, bad_rows, "CSV file rejected");
            }
        }
        if pending_bars >= BARS_PER_WRITE {
            flush(store, &mut pending, now).await?;
            pending_bars = 0;
        }
        let outcome = FileOutcome {
            path: shown,
            status,
        };
        progress(ImportEvent::FileDone {
            index,
            total,
            outcome: outcome.clone(),
        });
        report.outcomes.push(outcome);
    }
    flush(store, &mut pending, now).await?;
    report.stocks = stocks.len();
    report.not_in_stock_list = stocks
        .into_iter()
        .filter(|k| !listed.contains(k))
        .map(|k| k.split('.').next().unwrap_or_default().to_string())
        .collect();
    Ok(report)
}

async fn flush(
    store: &CacheStore,
    pending: &mut [Vec<(String, Vec<Bar>)>; 2],
    now: DateTime<Utc>,
) -> Result<(), ImportError> {
    for (has_amount, batch) in pending.iter_mut().enumerate() {
        if batch.is_empty() {
            continue;
        }
        store
            .upsert_many(BarTable::Stocks, batch, IMPORT_SOURCE, has_amount == 1, now)
            .await?;
        batch.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TODAY: u32 = 20261201;

    fn errors(text: &str) -> Vec<BadRow> {
        parse_csv(text, TODAY).unwrap_err()
    }

    #[test]
    fn accepts_both_date_shapes_all_code_spellings_and_any_column_order() {
        let text = "\u{feff}Code,Date,Open,High,Low,Close,Volume,Amount,extra\n\
                    600519,2024-01-03,10,11,9,10.5,1000,10500,x\n\
                    600519.SH,20240102,10,11,9,10,1000,10000,y\n\
                    \"sz000001\",2024-01-02,5,5.5,4.5,5,200,1000,z\n\n";
        let p = parse_csv(text, TODAY).unwrap();
        assert!(p.has_amount);
        assert_eq!(p.series.len(), 2);
        assert_eq!(p.series[0].0, "000001.SZ");
        let (key, bars) = &p.series[1];
        assert_eq!(key, "600519.SH");
        let dates: Vec<u32> = bars.iter().map(|b| b.date).collect();
        assert_eq!(dates, [20240102, 20240103]);
        assert_eq!(bars[1].close, 10.5);
        assert_eq!(bars[1].amount, 10500.0);
        let no_amount = parse_csv(
            "date,code,open,high,low,close,volume\n20240102,600519,1,1,1,1,0\n",
            TODAY,
        )
        .unwrap();
        assert!(!no_amount.has_amount);
    }

    #[test]
    fn every_bad_row_is_reported_with_its_line_and_what_is_wrong() {
        let text = "date,code,open,high,low,close,volume\n\
                    2024-01-02,600519,10,11,9,10,1000\n\
                    2024-01-03,600519,10,abc,9,10,1000\n\
                    2024-01-04,600519,10,9,11,10,1000\n\
                    2024-13-01,600519,10,11,9,10,1000\n\
                    2024-01-05,999999,10,11,9,10,1000\n\
                    2024-01-02,600519,10,11,9,10,1000\n\
                    2024-01-08,600519,10,11,9,10\n\
                    2024-01-09,600519,10,11,9,-10,1000\n\
                    2024-01-10,600519,10,11,9,10,-5\n\
                    2030-01-02,600519,10,11,9,10,1000\n";
        let e = errors(text);
        let got: Vec<(usize, &str)> = e.iter().map(|r| (r.line, r.message.as_str())).collect();
        let want = [
            (3, "high \"abc\" is not a number"),
            (4, "high below"),
            (5, "not YYYY-MM-DD"),
            (6, "unknown code \"999999\""),
            (
                7,
                "duplicate date 2024-01-02 for 600519.SH (first on line 2)",
            ),
            (8, "6 field(s), the header has 7"),
            (9, "non-positive price"),
            (10, "volume"),
            (11, "in the future"),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((line, msg), (wl, wm)) in got.iter().zip(want) {
            assert_eq!(*line, wl, "{msg}");
            assert!(msg.contains(wm), "line {line}: {msg} (want {wm})");
        }
    }

    #[test]
    fn a_bad_row_carries_its_problem_with_figures_and_the_english_message() {
        let text = "date,code,open,high,low,close,volume\n\
                    2024-01-04,600519,10,9,11,10,1000\n\
                    2024-01-05,600519,10,11,9,10\n";
        let json = serde_json::to_value(errors(text)).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {
                    "line": 2, "problem": "impossible_bar", "fault": "high_below_body",
                    "open": 10.0, "high": 9.0, "low": 11.0, "close": 10.0, "volume": 1000.0,
                    "message": "high below open/close/low (open 10, high 9, low 11, close 10, volume 1000)"
                },
                {
                    "line": 3, "problem": "field_count", "fields": 6, "header": 7,
                    "message": "6 field(s), the header has 7"
                }
            ])
        );
    }

    #[test]
    fn empty_files_and_missing_headers_are_rejected_as_a_whole() {
        for (text, want) in [
            ("", "file is empty"),
            ("\n\n", "file is empty"),
            ("date,code,open,high,low,close,volume\n", "no data rows"),
            (
                "date,code,open,high,low,close\n20240102,600519,1,1,1,1\n",
                "lacks column(s) volume",
            ),
            (
                "2024-01-02,600519,10,11,9,10,1000\n",
                "header row is required",
            ),
        ] {
            let e = errors(text);
            assert_eq!(e.len(), 1, "{text:?}: {e:?}");
            assert!(e[0].message.contains(want), "{text:?}: {}", e[0].message);
        }
    }

    #[test]
    fn fast_date_parse_agrees_with_the_strict_one() {
        for s in [
            "20240102",
            "2024-01-02",
            "20230230",
            "2023-02-29",
            "2024-02-29",
            "2024/01/02",
            "240102",
            "2024-1-02",
            "abcdefgh",
        ] {
            assert_eq!(parse_date_fast(s), crate::date::parse_date(s), "{s}");
        }
    }
}
