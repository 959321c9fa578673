//! `wyckoff data names import FILE`: the names stocks carried, from a user's own records.
//! Each row is `date,code,name`: the name in force from that date (until the code's next
//! row or record). Dates `YYYYMMDD` or `YYYY-MM-DD`; codes `600519`, `600519.SH` or
//! `sh600519`; UTF-8 with or without a BOM; the header row is optional (with one, the
//! columns may come in any order and others are ignored). A file with any bad line imports
//! nothing, and every bad line is named. Importing the same rows again adds nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;
use specta::Type;

use crate::cache::CacheError;
use crate::code::StockCode;
use crate::history::{HistoryStore, IMPORT_SOURCE, NameChange, SpanWrite};
use crate::meta::clean_name;

/// Larger files are refused before they are read: a name history of every A-share since
/// 1990 is a few MB.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// Bad lines listed in a report; the rest are counted.
pub const MAX_LISTED_ERRORS: usize = 50;
/// No A-share name is this long; a longer one is a column out of place.
const MAX_NAME_CHARS: usize = 20;

const DATE_HEADERS: [&str; 5] = ["date", "start_date", "from", "日期", "生效日期"];
const CODE_HEADERS: [&str; 6] = ["code", "ts_code", "symbol", "代码", "证券代码", "股票代码"];
const NAME_HEADERS: [&str; 5] = ["name", "名称", "简称", "证券简称", "股票简称"];

#[derive(Debug, thiserror::Error)]
pub enum NamesImportError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {bytes} bytes is more than a name history can be ({max} at most)")]
    TooLarge { path: PathBuf, bytes: u64, max: u64 },
    #[error("{path} is a folder; give the CSV file")]
    NotAFile { path: PathBuf },
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// What is wrong with one line (line 0: the file as a whole).
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum LineProblem {
    NotUtf8,
    EmptyFile,
    NoDataRows,
    MissingColumns {
        columns: Vec<String>,
    },
    FieldCount {
        fields: usize,
        expected: usize,
    },
    BadDate {
        value: String,
    },
    FutureDate {
        date: String,
    },
    UnknownCode {
        code: String,
        reason: String,
    },
    EmptyName,
    NameTooLong {
        name: String,
    },
    /// The same code and date with another name earlier in the file.
    Conflict {
        code: String,
        date: String,
        first_line: usize,
        first_name: String,
    },
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineProblem::NotUtf8 => f.write_str("not UTF-8 text; save the file as UTF-8"),
            LineProblem::EmptyFile => f.write_str("file is empty; expected rows date,code,name"),
            LineProblem::NoDataRows => f.write_str("no data rows after the header"),
            LineProblem::MissingColumns { columns } => write!(
                f,
                "the header lacks column(s) {} (expected date,code,name; or no header at all)",
                columns.join(", ")
            ),
            LineProblem::FieldCount { fields, expected } => {
                write!(f, "{fields} field(s), expected {expected} (date,code,name)")
            }
            LineProblem::BadDate { value } => {
                write!(f, "date {value:?} is not YYYYMMDD or YYYY-MM-DD")
            }
            LineProblem::FutureDate { date } => write!(f, "date {date} is in the future"),
            LineProblem::UnknownCode { code, reason } => {
                write!(f, "unknown code {code:?}: {reason}")
            }
            LineProblem::EmptyName => f.write_str("the name is empty"),
            LineProblem::NameTooLong { name } => write!(
                f,
                "name {name:?} is longer than any stock's ({MAX_NAME_CHARS} characters at most)"
            ),
            LineProblem::Conflict {
                code,
                date,
                first_line,
                first_name,
            } => write!(
                f,
                "{code} on {date} is already named {first_name:?} on line {first_line}"
            ),
        }
    }
}

/// One rejected line: what is wrong, typed, and `message`, the same in English.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct BadLine {
    pub line: usize,
    #[serde(flatten)]
    pub problem: LineProblem,
    pub message: String,
}

impl BadLine {
    fn new(line: usize, problem: LineProblem) -> Self {
        BadLine {
            line,
            message: problem.to_string(),
            problem,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum NamesImportStatus {
    Imported {
        /// Distinct (code, date) rows in the file.
        rows: usize,
        stocks: usize,
        #[serde(flatten)]
        write: SpanWrite,
    },
    /// Nothing from the file was stored.
    Rejected {
        /// The first [`MAX_LISTED_ERRORS`] bad lines.
        errors: Vec<BadLine>,
        bad_lines: usize,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct NamesImportReport {
    pub path: String,
    #[serde(flatten)]
    pub status: NamesImportStatus,
}

impl NamesImportReport {
    pub fn rejected(&self) -> bool {
        matches!(self.status, NamesImportStatus::Rejected { .. })
    }
}

/// Parses a file's bytes into name spans, or every bad line. `today` (`YYYYMMDD`) refuses
/// names dated in the future.
pub fn parse_names(bytes: &[u8], today: u32) -> Result<Vec<NameChange>, Vec<BadLine>> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let line = bytes[..e.valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1;
            return Err(vec![BadLine::new(line, LineProblem::NotUtf8)]);
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
        .peekable();
    let Some(&(first_no, first)) = lines.peek() else {
        return Err(vec![BadLine::new(0, LineProblem::EmptyFile)]);
    };
    let first_fields: Vec<&str> = first.split(',').map(unquote).collect();
    // a first line with a date or a stock code in it is data; otherwise it is the header
    let (date_col, code_col, name_col, width) = if first_fields
        .iter()
        .any(|f| crate::date::parse_date(f).is_some() || StockCode::parse(f).is_ok())
    {
        (0, 1, 2, 3)
    } else {
        lines.next();
        let find = |names: &[&str]| {
            first_fields
                .iter()
                .position(|h| names.iter().any(|n| h.eq_ignore_ascii_case(n)))
        };
        match (
            find(&DATE_HEADERS),
            find(&CODE_HEADERS),
            find(&NAME_HEADERS),
        ) {
            (Some(d), Some(c), Some(n)) => (d, c, n, first_fields.len()),
            (d, c, n) => {
                let columns = [(d, "date"), (c, "code"), (n, "name")]
                    .iter()
                    .filter(|(col, _)| col.is_none())
                    .map(|(_, name)| name.to_string())
                    .collect();
                return Err(vec![BadLine::new(
                    first_no,
                    LineProblem::MissingColumns { columns },
                )]);
            }
        }
    };
    let mut errors = Vec::new();
    let mut rows: Vec<NameChange> = Vec::new();
    // (code, date) → (line, index in rows)
    let mut seen: HashMap<(String, u32), (usize, usize)> = HashMap::new();
    let mut codes: HashMap<String, Result<String, LineProblem>> = HashMap::new();
    let mut any = false;
    for (line_no, line) in lines {
        any = true;
        let fields: Vec<&str> = line.split(',').map(unquote).collect();
        if fields.len() != width {
            errors.push(BadLine::new(
                line_no,
                LineProblem::FieldCount {
                    fields: fields.len(),
                    expected: width,
                },
            ));
            continue;
        }
        let raw_code = fields[code_col];
        let code = codes
            .entry(raw_code.to_string())
            .or_insert_with(|| {
                StockCode::parse(raw_code)
                    .map(|c| c.digits().to_string())
                    .map_err(|e| LineProblem::UnknownCode {
                        code: raw_code.to_string(),
                        reason: e.to_string(),
                    })
            })
            .clone();
        let row = parse_row(fields[date_col], code, fields[name_col], today);
        let change = match row {
            Ok(c) => c,
            Err(problem) => {
                errors.push(BadLine::new(line_no, problem));
                continue;
            }
        };
        let key = (change.code.clone(), change.from);
        match seen.get(&key) {
            // the same row twice says nothing new
            Some(&(_, i)) if rows[i].name == change.name => {}
            Some(&(first_line, i)) => errors.push(BadLine::new(
                line_no,
                LineProblem::Conflict {
                    code: change.code.clone(),
                    date: crate::date::iso(change.from),
                    first_line,
                    first_name: rows[i].name.clone(),
                },
            )),
            None => {
                seen.insert(key, (line_no, rows.len()));
                rows.push(change);
            }
        }
    }
    if !any && errors.is_empty() {
        return Err(vec![BadLine::new(0, LineProblem::NoDataRows)]);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    rows.sort_by(|a, b| (&a.code, a.from).cmp(&(&b.code, b.from)));
    Ok(rows)
}

fn parse_row(
    date: &str,
    code: Result<String, LineProblem>,
    name: &str,
    today: u32,
) -> Result<NameChange, LineProblem> {
    let from = crate::date::parse_date(date).ok_or_else(|| LineProblem::BadDate {
        value: date.to_string(),
    })?;
    if from > today {
        return Err(LineProblem::FutureDate {
            date: crate::date::iso(from),
        });
    }
    let code = code?;
    let name = clean_name(name);
    if name.is_empty() {
        return Err(LineProblem::EmptyName);
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(LineProblem::NameTooLong { name });
    }
    Ok(NameChange { code, from, name })
}

fn unquote(s: &str) -> &str {
    let t = s.trim();
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
        .trim()
}

/// Reads, checks and (when every line is good) stores the file, all in one transaction.
pub async fn import_names(
    store: &HistoryStore,
    path: &Path,
    today: u32,
    now: DateTime<Utc>,
) -> Result<NamesImportReport, NamesImportError> {
    let io = |source| NamesImportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(NamesImportError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(NamesImportError::TooLarge {
            path: path.to_path_buf(),
            bytes: meta.len(),
            max: MAX_FILE_BYTES,
        });
    }
    let bytes = std::fs::read(path).map_err(io)?;
    let status = match parse_names(&bytes, today) {
        Err(errors) => NamesImportStatus::Rejected {
            bad_lines: errors.len(),
            errors: errors.into_iter().take(MAX_LISTED_ERRORS).collect(),
        },
        Ok(rows) => {
            let mut stocks: Vec<&str> = rows.iter().map(|r| r.code.as_str()).collect();
            stocks.dedup();
            let stocks = stocks.len();
            let write = store.add_names(&rows, IMPORT_SOURCE, now).await?;
            NamesImportStatus::Imported {
                rows: rows.len(),
                stocks,
                write,
            }
        }
    };
    Ok(NamesImportReport {
        path: path.display().to_string(),
        status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TODAY: u32 = 20261201;

    fn parsed(text: &str) -> Vec<(String, u32, String)> {
        parse_names(text.as_bytes(), TODAY)
            .unwrap_or_else(|e| panic!("{e:?}"))
            .into_iter()
            .map(|c| (c.code, c.from, c.name))
            .collect()
    }

    fn problems(text: &[u8]) -> Vec<(usize, String)> {
        parse_names(text, TODAY)
            .unwrap_err()
            .into_iter()
            .map(|b| (b.line, b.message))
            .collect()
    }

    #[test]
    fn rows_with_or_without_a_header_in_either_date_spelling() {
        let want = vec![
            ("000005".to_string(), 19900101, "世纪星源".to_string()),
            ("000005".to_string(), 20210501, "ST星源".to_string()),
            ("600519".to_string(), 20010827, "贵州茅台".to_string()),
        ];
        for text in [
            "date,code,name\n19900101,000005,世纪星源\n2021-05-01,000005.SZ,ST星源\n20010827,sh600519,贵州茅台\n",
            "\u{feff}19900101,000005,世纪星源\r\n2021-05-01,000005,ＳＴ星源\r\n\r\n20010827,600519,贵州茅台",
            "name,code,date,note\n世纪星源,000005,19900101,x\n\"ST星源\",000005,20210501,\n贵州茅台,600519,20010827,\n",
            "日期,代码,名称\n19900101,000005,世纪星源\n20210501,000005,ST星源\n20010827,600519,贵州茅台\n",
        ] {
            assert_eq!(parsed(text), want, "{text}");
        }
    }

    #[test]
    fn the_same_row_twice_is_one_row() {
        assert_eq!(
            parsed("20210501,000005,ST星源\n20210501,000005,ST星源\n").len(),
            1
        );
    }

    #[test]
    fn every_bad_line_is_named() {
        let text = "date,code,name\n\
                    20210501,000005,ST星源\n\
                    2021-13-01,000005,ST星源\n\
                    20210501,123456,某某\n\
                    20210502,000005\n\
                    20210503,000005,\n\
                    20991231,000005,未来\n\
                    20210501,000005,世纪星源\n";
        assert_eq!(
            problems(text.as_bytes()),
            [
                (3, "date \"2021-13-01\" is not YYYYMMDD or YYYY-MM-DD".to_string()),
                (
                    4,
                    "unknown code \"123456\": 123456 is not an A-share stock code on any exchange (funds, bonds and ETFs are not supported)"
                        .to_string()
                ),
                (5, "2 field(s), expected 3 (date,code,name)".to_string()),
                (6, "the name is empty".to_string()),
                (7, "date 2099-12-31 is in the future".to_string()),
                (
                    8,
                    "000005 on 2021-05-01 is already named \"ST星源\" on line 2".to_string()
                ),
            ]
        );
    }

    #[test]
    fn whole_file_problems() {
        assert_eq!(
            problems(b""),
            [(0, "file is empty; expected rows date,code,name".to_string())]
        );
        assert_eq!(
            problems(b"date,code,name\n"),
            [(0, "no data rows after the header".to_string())]
        );
        assert_eq!(
            problems(b"day,code,title\n20210501,000005,x\n"),
            [(
                1,
                "the header lacks column(s) date, name (expected date,code,name; or no header at all)"
                    .to_string()
            )]
        );
        // GBK bytes on the second line
        assert_eq!(
            problems(b"date,code,name\n20210501,000005,\xd6\xd0\xb9\xfa\n"),
            [(2, "not UTF-8 text; save the file as UTF-8".to_string())]
        );
        assert_eq!(
            problems("20210501,000005,这是一个长得不像任何股票名称的名字真的很长很长\n".as_bytes())
                [0]
            .0,
            1
        );
    }
}
