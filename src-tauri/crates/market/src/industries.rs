//! Industry and concept membership: which industry each stock belongs to (the funnel's L3
//! and the sector table read it), and the concept and style blocks it is in, each load kept
//! with the Beijing day it was loaded. A screen of day D reads the latest load on or before
//! D; with none that early, the nearest later one, and the universe report counts it.
//!
//! `wyckoff data industries import PATH` takes:
//! - a CSV of `code,industry` rows (header optional: `code`/`代码`/`ts_code`/`symbol` and
//!   `industry`/`行业`/`industry_name`; UTF-8, or GBK as spreadsheets save it);
//! - a TDX (通达信) install folder, or its `T0002/hq_cache` folder, or one of its files:
//!   `tdxhy.cfg` gives each stock's TDX industry code (`market|code|T-code|…`, GBK; market
//!   0 Shenzhen, 1 Shanghai, 2 Beijing) and `incon.dat`'s `#TDXNHY` section names the codes
//!   (`T1001|银行`; T + 2 digits is the first level, T + 4 the second, T + 6 the third).
//!   A stock's industry is its second-level one (about 60 industries, the grain the sector
//!   table and L3 work at), or its own code's name where incon.dat has no second level.
//!   `block_gn.dat` (concepts) and `block_fg.dat` (style blocks) are the binary block
//!   files: a 384-byte header, a little-endian u16 block count, then per block 9 bytes of
//!   GBK name, u16 stock count, u16 block type and 400 slots of 7 bytes (6 ASCII digits,
//!   NUL) — 2 813 bytes a block.
//!
//! The TDX layouts are not documented by TDX; they are the ones every open reader of these
//! files agrees on, and the parser refuses anything that does not fit them, naming the file
//! and line (or block). Codes that are not A-share stocks (B shares, indices, funds, which
//! these files also list) are skipped and counted, not errors. A file with any bad line
//! imports nothing; importing what the latest load of the same source already holds adds
//! nothing and says so.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;
use specta::Type;
use sqlx::{QueryBuilder, Sqlite, SqlitePool};

use crate::cache::CacheError;
use crate::code::StockCode;
use crate::facade::MarketData;

/// Larger files are refused before they are read (a whole market's tdxhy.cfg is ~300 KB,
/// block_gn.dat a few MB).
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// Bad lines listed in a report; the rest are counted.
pub const MAX_LISTED_ERRORS: usize = 50;
/// No industry or concept name is this long; a longer one is a column out of place.
const MAX_NAME_CHARS: usize = 30;
/// Rows per INSERT (SQLite's bound-parameter limit is 32 766).
pub(crate) const ROWS_PER_INSERT: usize = 2_000;

const CODE_HEADERS: [&str; 7] = [
    "code",
    "ts_code",
    "symbol",
    "代码",
    "证券代码",
    "股票代码",
    "stock",
];
const INDUSTRY_HEADERS: [&str; 6] = [
    "industry",
    "industry_name",
    "行业",
    "所属行业",
    "行业名称",
    "sector",
];

/// TDX block files: header, then per block name, count, type and 400 code slots.
const BLOCK_HEADER: usize = 384;
const BLOCK_NAME: usize = 9;
const BLOCK_SLOTS: usize = 400;
const BLOCK_SLOT: usize = 7;
const BLOCK_RECORD: usize = BLOCK_NAME + 4 + BLOCK_SLOTS * BLOCK_SLOT;

/// What a membership row says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum MemberKind {
    /// The stock's industry (one per stock).
    Industry,
    /// A concept block (概念, block_gn.dat).
    Concept,
    /// A style block (风格, block_fg.dat).
    Style,
}

impl MemberKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MemberKind::Industry => "industry",
            MemberKind::Concept => "concept",
            MemberKind::Style => "style",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "industry" => Some(MemberKind::Industry),
            "concept" => Some(MemberKind::Concept),
            "style" => Some(MemberKind::Style),
            _ => None,
        }
    }
}

/// One stock in one industry or block.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Member {
    pub kind: MemberKind,
    /// Six digits.
    pub code: String,
    pub name: String,
}

/// Where a load came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum IndustrySource {
    Csv,
    Tdx,
    /// Tushare `stock_basic`'s `industry`: today's membership, undated.
    Tushare,
    /// Tushare's Shenwan level-1 membership with each stock's in and out dates.
    TushareSw,
}

impl IndustrySource {
    pub fn as_str(self) -> &'static str {
        match self {
            IndustrySource::Csv => "csv",
            IndustrySource::Tdx => "tdx",
            IndustrySource::Tushare => "tushare",
            IndustrySource::TushareSw => "tushare_sw",
        }
    }
}

/// What is wrong with one line of one file (line 0: the file as a whole; in a binary
/// block file, `line` is the block's 1-based number).
// named apart from the names import's `LineProblem` in the app's typed bindings (a
// container's name is not in the JSON)
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(
    rename = "IndustryLineProblem",
    tag = "problem",
    rename_all = "snake_case"
)]
pub enum LineProblem {
    EmptyFile,
    NoDataRows,
    MissingColumns {
        columns: Vec<String>,
    },
    FieldCount {
        fields: usize,
        expected: usize,
    },
    BadCode {
        code: String,
        /// Why, typed, for a front end to word in its language.
        why: BadCodeWhy,
        /// Why, in English.
        reason: String,
    },
    EmptyName,
    NameTooLong {
        name: String,
    },
    /// The same stock with another industry earlier in the file.
    Conflict {
        code: String,
        first_line: usize,
        first_industry: String,
    },
    /// tdxhy.cfg: a market field other than 0, 1 or 2.
    BadMarket {
        market: String,
    },
    /// tdxhy.cfg: an industry code incon.dat does not name.
    UnknownIndustryCode {
        code: String,
    },
    /// incon.dat: a line of the #TDXNHY section that is not `code|name`.
    BadInconLine,
    /// incon.dat without a #TDXNHY section.
    NoTdxIndustrySection,
    /// A block file shorter than its block count says.
    Truncated {
        blocks: usize,
        needed: usize,
        bytes: usize,
    },
    /// A block that says it holds more stocks than a block can.
    BadBlockCount {
        block: String,
        stocks: usize,
    },
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineProblem::EmptyFile => f.write_str("file is empty; expected rows code,industry"),
            LineProblem::NoDataRows => f.write_str("no data rows after the header"),
            LineProblem::MissingColumns { columns } => write!(
                f,
                "the header lacks column(s) {} (expected code,industry; or no header at all)",
                columns.join(", ")
            ),
            LineProblem::FieldCount { fields, expected } => {
                write!(f, "{fields} field(s), expected {expected}")
            }
            LineProblem::BadCode { code, reason, .. } => write!(f, "code {code:?}: {reason}"),
            LineProblem::EmptyName => f.write_str("the industry is empty"),
            LineProblem::NameTooLong { name } => write!(
                f,
                "name {name:?} is longer than any industry's ({MAX_NAME_CHARS} characters at most)"
            ),
            LineProblem::Conflict {
                code,
                first_line,
                first_industry,
            } => write!(
                f,
                "{code} is already in industry {first_industry:?} on line {first_line}"
            ),
            LineProblem::BadMarket { market } => write!(
                f,
                "market {market:?} is not 0 (Shenzhen), 1 (Shanghai) or 2 (Beijing)"
            ),
            LineProblem::UnknownIndustryCode { code } => write!(
                f,
                "industry code {code:?} is not named in incon.dat's #TDXNHY section"
            ),
            LineProblem::BadInconLine => f.write_str("not a `code|name` line of #TDXNHY"),
            LineProblem::NoTdxIndustrySection => {
                f.write_str("no #TDXNHY section: this incon.dat names no TDX industries")
            }
            LineProblem::Truncated {
                blocks,
                needed,
                bytes,
            } => write!(
                f,
                "{blocks} block(s) need {needed} bytes, the file has {bytes}: truncated or not a TDX block file"
            ),
            LineProblem::BadBlockCount { block, stocks } => write!(
                f,
                "block {block:?} says it holds {stocks} stocks, more than a block can ({BLOCK_SLOTS})"
            ),
        }
    }
}

/// Why a code is no A-share stock code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename = "IndustryBadCodeWhy", rename_all = "snake_case")]
pub enum BadCodeWhy {
    /// Not six digits (in a TDX file, where codes have no exchange prefix).
    NotSixDigits,
    /// Not a code in any spelling the desk reads (600519, 600519.SH, sh600519).
    Format,
    /// A well-formed code of something else: a fund, a bond, an ETF, a B share.
    NotAStock,
    /// An exchange suffix the code does not trade on.
    ExchangeMismatch,
}

impl BadCodeWhy {
    fn of(e: &crate::code::CodeError) -> Self {
        use crate::code::CodeError;
        match e {
            CodeError::NotAStock { .. } => BadCodeWhy::NotAStock,
            CodeError::ExchangeMismatch { .. } => BadCodeWhy::ExchangeMismatch,
            CodeError::Format(_) | CodeError::UnknownIndex(_) => BadCodeWhy::Format,
        }
    }
}

/// One rejected line: the file, what is wrong (typed) and `message`, the same in English.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(rename = "IndustryBadLine")]
pub struct BadLine {
    pub file: String,
    pub line: usize,
    #[serde(flatten)]
    pub problem: LineProblem,
    pub message: String,
}

impl BadLine {
    fn new(file: &str, line: usize, problem: LineProblem) -> Self {
        BadLine {
            file: file.to_string(),
            line,
            message: problem.to_string(),
            problem,
        }
    }
}

/// A parsed file or folder, before it is stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub members: Vec<Member>,
    /// Rows for codes that are not A-share stocks (B shares, indices, funds), skipped.
    pub not_stocks: usize,
    /// tdxhy.cfg rows with no industry code.
    pub without_industry: usize,
    /// The files read, as named in the report.
    pub files: Vec<String>,
}

/// Text as UTF-8 (a BOM dropped), or as GBK/GB18030 when it is not UTF-8: TDX writes GBK
/// and spreadsheets often save CSV so.
fn decode_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(t) => t.strip_prefix('\u{feff}').unwrap_or(t).to_string(),
        Err(_) => encoding_rs::GB18030.decode(bytes).0.into_owned(),
    }
}

fn unquote(s: &str) -> &str {
    let t = s.trim();
    t.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(t)
        .trim()
}

/// A name as stored: trimmed, NULs dropped, full-width spaces folded.
fn clean(s: &str) -> String {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\0' || c == '\u{3000}')
        .to_string()
}

fn check_name(name: &str) -> Result<(), LineProblem> {
    if name.is_empty() {
        return Err(LineProblem::EmptyName);
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(LineProblem::NameTooLong {
            name: name.to_string(),
        });
    }
    Ok(())
}

/// A `code,industry` CSV: one industry per stock.
pub fn parse_csv(bytes: &[u8], file: &str) -> Result<Parsed, Vec<BadLine>> {
    let text = decode_text(bytes);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
        .peekable();
    let Some(&(first_no, first)) = lines.peek() else {
        return Err(vec![BadLine::new(file, 0, LineProblem::EmptyFile)]);
    };
    let first_fields: Vec<&str> = first.split(',').map(unquote).collect();
    // a first line with a stock code in it is data; otherwise it is the header
    let (code_col, ind_col, width) = if first_fields.iter().any(|f| StockCode::parse(f).is_ok()) {
        (0, 1, 2)
    } else {
        lines.next();
        let find = |names: &[&str]| {
            first_fields
                .iter()
                .position(|h| names.iter().any(|n| h.eq_ignore_ascii_case(n)))
        };
        match (find(&CODE_HEADERS), find(&INDUSTRY_HEADERS)) {
            (Some(c), Some(i)) => (c, i, first_fields.len()),
            (c, i) => {
                let columns = [(c, "code"), (i, "industry")]
                    .iter()
                    .filter(|(col, _)| col.is_none())
                    .map(|(_, n)| n.to_string())
                    .collect();
                return Err(vec![BadLine::new(
                    file,
                    first_no,
                    LineProblem::MissingColumns { columns },
                )]);
            }
        }
    };
    let mut errors = Vec::new();
    let mut out = Parsed {
        files: vec![file.to_string()],
        ..Parsed::default()
    };
    // code → (line, industry)
    let mut seen: HashMap<String, (usize, String)> = HashMap::new();
    let mut any = false;
    for (line_no, line) in lines {
        any = true;
        let fields: Vec<&str> = line.split(',').map(unquote).collect();
        if fields.len() != width {
            errors.push(BadLine::new(
                file,
                line_no,
                LineProblem::FieldCount {
                    fields: fields.len(),
                    expected: width,
                },
            ));
            continue;
        }
        let raw = fields[code_col];
        let code = match StockCode::parse(raw) {
            Ok(c) => c.digits().to_string(),
            Err(e) => {
                errors.push(BadLine::new(
                    file,
                    line_no,
                    LineProblem::BadCode {
                        code: raw.to_string(),
                        why: BadCodeWhy::of(&e),
                        reason: e.to_string(),
                    },
                ));
                continue;
            }
        };
        let name = clean(fields[ind_col]);
        if let Err(p) = check_name(&name) {
            errors.push(BadLine::new(file, line_no, p));
            continue;
        }
        match seen.get(&code) {
            // the same row twice says nothing new
            Some((_, held)) if *held == name => {}
            Some((first_line, held)) => errors.push(BadLine::new(
                file,
                line_no,
                LineProblem::Conflict {
                    code: code.clone(),
                    first_line: *first_line,
                    first_industry: held.clone(),
                },
            )),
            None => {
                seen.insert(code.clone(), (line_no, name.clone()));
                out.members.push(Member {
                    kind: MemberKind::Industry,
                    code,
                    name,
                });
            }
        }
    }
    if !any && errors.is_empty() {
        return Err(vec![BadLine::new(file, 0, LineProblem::NoDataRows)]);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    out.members.sort();
    Ok(out)
}

/// incon.dat's `#TDXNHY` section: TDX industry code → name.
pub fn parse_incon(bytes: &[u8], file: &str) -> Result<HashMap<String, String>, Vec<BadLine>> {
    let text = decode_text(bytes);
    let mut names = HashMap::new();
    let mut errors = Vec::new();
    let mut in_section = false;
    let mut found = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('#') {
            // `######` ends a section, `#NAME` starts one
            in_section = line == "#TDXNHY";
            found |= in_section;
            continue;
        }
        if !in_section || line.is_empty() {
            continue;
        }
        // some installs add a description after a space
        let entry = line.split_whitespace().next().unwrap_or("");
        match entry.split_once('|') {
            Some((code, name)) if code.starts_with('T') && !clean(name).is_empty() => {
                names.insert(code.to_string(), clean(name));
            }
            _ => errors.push(BadLine::new(file, i + 1, LineProblem::BadInconLine)),
        }
    }
    if !found {
        return Err(vec![BadLine::new(
            file,
            0,
            LineProblem::NoTdxIndustrySection,
        )]);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(names)
}

/// The industry a TDX code stands for: its second level (`T` + 4 digits) when incon.dat
/// names it, else the code's own name.
fn tdx_industry<'a>(code: &str, names: &'a HashMap<String, String>) -> Option<&'a str> {
    code.get(..5)
        .filter(|_| code.len() >= 5)
        .and_then(|level2| names.get(level2))
        .or_else(|| names.get(code))
        .map(String::as_str)
}

/// Whether six ASCII digits are an A-share stock (on `exchange`, when the file says which):
/// `Ok(None)` for a well-formed code of something else (a B share, an index, a fund).
fn stock_digits(raw: &str, exchange: Option<&str>) -> Result<Option<String>, LineProblem> {
    if raw.len() != 6 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(LineProblem::BadCode {
            code: raw.to_string(),
            why: BadCodeWhy::NotSixDigits,
            reason: "not six digits".into(),
        });
    }
    let spelled = match exchange {
        Some(ex) => format!("{raw}.{ex}"),
        None => raw.to_string(),
    };
    Ok(StockCode::parse(&spelled)
        .ok()
        .map(|c| c.digits().to_string()))
}

/// tdxhy.cfg with incon.dat's names.
pub fn parse_tdxhy(
    bytes: &[u8],
    file: &str,
    names: &HashMap<String, String>,
) -> Result<Parsed, Vec<BadLine>> {
    let text = decode_text(bytes);
    let mut out = Parsed::default();
    let mut errors = Vec::new();
    let mut seen: HashMap<String, (usize, String)> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        if fields.len() < 3 {
            errors.push(BadLine::new(
                file,
                line_no,
                LineProblem::FieldCount {
                    fields: fields.len(),
                    expected: 3,
                },
            ));
            continue;
        }
        let exchange = match fields[0] {
            "0" => "SZ",
            "1" => "SH",
            "2" => "BJ",
            _ => "",
        };
        if exchange.is_empty() {
            errors.push(BadLine::new(
                file,
                line_no,
                LineProblem::BadMarket {
                    market: fields[0].to_string(),
                },
            ));
            continue;
        }
        let code = match stock_digits(fields[1], Some(exchange)) {
            Ok(Some(c)) => c,
            Ok(None) => {
                out.not_stocks += 1;
                continue;
            }
            Err(p) => {
                errors.push(BadLine::new(file, line_no, p));
                continue;
            }
        };
        let t_code = fields[2];
        if t_code.is_empty() {
            out.without_industry += 1;
            continue;
        }
        let Some(name) = tdx_industry(t_code, names) else {
            errors.push(BadLine::new(
                file,
                line_no,
                LineProblem::UnknownIndustryCode {
                    code: t_code.to_string(),
                },
            ));
            continue;
        };
        match seen.get(&code) {
            Some((_, held)) if held == name => {}
            Some((first_line, held)) => errors.push(BadLine::new(
                file,
                line_no,
                LineProblem::Conflict {
                    code: code.clone(),
                    first_line: *first_line,
                    first_industry: held.clone(),
                },
            )),
            None => {
                seen.insert(code.clone(), (line_no, name.to_string()));
                out.members.push(Member {
                    kind: MemberKind::Industry,
                    code,
                    name: name.to_string(),
                });
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if out.members.is_empty() {
        return Err(vec![BadLine::new(file, 0, LineProblem::NoDataRows)]);
    }
    out.files.push(file.to_string());
    Ok(out)
}

/// A TDX binary block file (block_gn.dat, block_fg.dat): every stock of every block as
/// `kind`.
pub fn parse_blocks(bytes: &[u8], file: &str, kind: MemberKind) -> Result<Parsed, Vec<BadLine>> {
    let whole = |p| Err(vec![BadLine::new(file, 0, p)]);
    if bytes.is_empty() {
        return whole(LineProblem::EmptyFile);
    }
    let Some(count) = bytes.get(BLOCK_HEADER..BLOCK_HEADER + 2) else {
        return whole(LineProblem::Truncated {
            blocks: 0,
            needed: BLOCK_HEADER + 2,
            bytes: bytes.len(),
        });
    };
    let blocks = usize::from(u16::from_le_bytes([count[0], count[1]]));
    let needed = BLOCK_HEADER + 2 + blocks * BLOCK_RECORD;
    if bytes.len() < needed {
        return whole(LineProblem::Truncated {
            blocks,
            needed,
            bytes: bytes.len(),
        });
    }
    let mut out = Parsed::default();
    let mut errors = Vec::new();
    let mut members = BTreeSet::new();
    for b in 0..blocks {
        let at = BLOCK_HEADER + 2 + b * BLOCK_RECORD;
        let record = &bytes[at..at + BLOCK_RECORD];
        let raw_name = &record[..BLOCK_NAME];
        let end = raw_name.iter().position(|&c| c == 0).unwrap_or(BLOCK_NAME);
        let name = clean(&encoding_rs::GB18030.decode(&raw_name[..end]).0);
        let stocks = usize::from(u16::from_le_bytes([
            record[BLOCK_NAME],
            record[BLOCK_NAME + 1],
        ]));
        if let Err(p) = check_name(&name) {
            errors.push(BadLine::new(file, b + 1, p));
            continue;
        }
        if stocks > BLOCK_SLOTS {
            errors.push(BadLine::new(
                file,
                b + 1,
                LineProblem::BadBlockCount {
                    block: name,
                    stocks,
                },
            ));
            continue;
        }
        for s in 0..stocks {
            let slot = &record[BLOCK_NAME + 4 + s * BLOCK_SLOT..][..BLOCK_SLOT];
            let end = slot.iter().position(|&c| c == 0).unwrap_or(BLOCK_SLOT);
            let raw = String::from_utf8_lossy(&slot[..end]).into_owned();
            match stock_digits(&raw, None) {
                Ok(Some(code)) => {
                    members.insert(Member {
                        kind,
                        code,
                        name: name.clone(),
                    });
                }
                Ok(None) => out.not_stocks += 1,
                Err(p) => {
                    errors.push(BadLine::new(file, b + 1, p));
                    break;
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    out.members = members.into_iter().collect();
    out.files.push(file.to_string());
    Ok(out)
}

/// The TDX files under a folder: the install root, `T0002`, or `T0002/hq_cache`.
#[derive(Debug, Clone, Default, PartialEq)]
struct TdxFiles {
    tdxhy: Option<PathBuf>,
    incon: Option<PathBuf>,
    gn: Option<PathBuf>,
    fg: Option<PathBuf>,
    /// Where incon.dat was looked for, for the error when it is missing.
    incon_looked: Vec<PathBuf>,
}

fn find_tdx(dir: &Path) -> TdxFiles {
    let caches = [
        dir.join("T0002").join("hq_cache"),
        dir.join("hq_cache"),
        dir.to_path_buf(),
    ];
    let cache = caches
        .iter()
        .find(|c| c.join("tdxhy.cfg").is_file() || c.join("block_gn.dat").is_file())
        .cloned();
    let Some(cache) = cache else {
        return TdxFiles::default();
    };
    let file = |name: &str| Some(cache.join(name)).filter(|p| p.is_file());
    // incon.dat sits at the install root; a copied hq_cache may carry it beside tdxhy.cfg
    let mut incon_looked = vec![dir.join("incon.dat"), cache.join("incon.dat")];
    if let Some(root) = cache.parent().and_then(Path::parent) {
        incon_looked.push(root.join("incon.dat"));
    }
    incon_looked.dedup();
    TdxFiles {
        tdxhy: file("tdxhy.cfg"),
        incon: incon_looked.iter().find(|p| p.is_file()).cloned(),
        gn: file("block_gn.dat"),
        fg: file("block_fg.dat"),
        incon_looked,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum IndustriesImportError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {bytes} bytes is more than a membership file can be ({max} at most)")]
    TooLarge { path: PathBuf, bytes: u64, max: u64 },
    #[error(
        "{path}: no TDX files here (looked for T0002/hq_cache/tdxhy.cfg, hq_cache/tdxhy.cfg, tdxhy.cfg and block_gn.dat); give a TDX install folder or a code,industry CSV file"
    )]
    NotTdxFolder { path: PathBuf },
    #[error(
        "{tdxhy}: industry names come from incon.dat's #TDXNHY section, and no incon.dat was found (looked for {looked})"
    )]
    NoIncon { tdxhy: PathBuf, looked: String },
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// Why a membership path could not be read as a whole, typed so a front end words it in
/// its own language (the error's `Display` is English).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum IndustriesFailure {
    /// The file or folder could not be read (`detail`: the system's words).
    Unreadable { path: String, detail: String },
    /// Bigger than a membership file can be.
    TooLarge { path: String, megabytes: u32 },
    /// Neither a TDX install's industry and block files nor a file.
    NotTdxFolder { path: String },
    /// A `tdxhy.cfg` without the `incon.dat` that names its industries.
    NoIncon { tdxhy: String },
    /// The database could not store the load.
    Store { detail: String },
}

impl IndustriesImportError {
    /// What went wrong, typed.
    pub fn failure(&self) -> IndustriesFailure {
        let shown = |p: &Path| p.display().to_string();
        match self {
            IndustriesImportError::Io { path, source } => IndustriesFailure::Unreadable {
                path: shown(path),
                detail: source.to_string(),
            },
            IndustriesImportError::TooLarge { path, max, .. } => IndustriesFailure::TooLarge {
                path: shown(path),
                megabytes: u32::try_from(max / (1024 * 1024)).unwrap_or(u32::MAX),
            },
            IndustriesImportError::NotTdxFolder { path } => {
                IndustriesFailure::NotTdxFolder { path: shown(path) }
            }
            IndustriesImportError::NoIncon { tdxhy, .. } => IndustriesFailure::NoIncon {
                tdxhy: shown(tdxhy),
            },
            IndustriesImportError::Cache(e) => IndustriesFailure::Store {
                detail: e.to_string(),
            },
        }
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, IndustriesImportError> {
    let io = |source| IndustriesImportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(IndustriesImportError::TooLarge {
            path: path.to_path_buf(),
            bytes: meta.len(),
            max: MAX_FILE_BYTES,
        });
    }
    std::fs::read(path).map_err(io)
}

/// Reads a CSV file, a TDX file or a TDX folder: the membership, or every bad line.
pub fn read_path(
    path: &Path,
) -> Result<(IndustrySource, Result<Parsed, Vec<BadLine>>), IndustriesImportError> {
    let meta = std::fs::metadata(path).map_err(|source| IndustriesImportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let shown = |p: &Path| p.display().to_string();
    if meta.is_file() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let kind = match name.as_str() {
            "block_gn.dat" => Some(MemberKind::Concept),
            "block_fg.dat" => Some(MemberKind::Style),
            _ => None,
        };
        if let Some(kind) = kind {
            let bytes = read_file(path)?;
            return Ok((
                IndustrySource::Tdx,
                parse_blocks(&bytes, &shown(path), kind),
            ));
        }
        if name != "tdxhy.cfg" {
            let bytes = read_file(path)?;
            return Ok((IndustrySource::Csv, parse_csv(&bytes, &shown(path))));
        }
    }
    // a folder, or tdxhy.cfg itself (its folder has the rest)
    let dir = if meta.is_file() {
        path.parent().unwrap_or(Path::new("."))
    } else {
        path
    };
    let files = find_tdx(dir);
    if files.tdxhy.is_none() && files.gn.is_none() {
        return Err(IndustriesImportError::NotTdxFolder {
            path: path.to_path_buf(),
        });
    }
    let mut out = Parsed::default();
    let mut errors = Vec::new();
    fn take(out: &mut Parsed, errors: &mut Vec<BadLine>, parsed: Result<Parsed, Vec<BadLine>>) {
        match parsed {
            Ok(p) => {
                out.members.extend(p.members);
                out.not_stocks += p.not_stocks;
                out.without_industry += p.without_industry;
                out.files.extend(p.files);
            }
            Err(e) => errors.extend(e),
        }
    }
    if let Some(tdxhy) = &files.tdxhy {
        let Some(incon) = &files.incon else {
            return Err(IndustriesImportError::NoIncon {
                tdxhy: tdxhy.clone(),
                looked: files
                    .incon_looked
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let bytes = read_file(incon)?;
        match parse_incon(&bytes, &shown(incon)) {
            Ok(names) => {
                let bytes = read_file(tdxhy)?;
                take(
                    &mut out,
                    &mut errors,
                    parse_tdxhy(&bytes, &shown(tdxhy), &names),
                );
                out.files.push(shown(incon));
            }
            Err(e) => errors.extend(e),
        }
    }
    for (file, kind) in [
        (&files.gn, MemberKind::Concept),
        (&files.fg, MemberKind::Style),
    ] {
        if let Some(file) = file {
            let bytes = read_file(file)?;
            take(
                &mut out,
                &mut errors,
                parse_blocks(&bytes, &shown(file), kind),
            );
        }
    }
    if !errors.is_empty() {
        return Ok((IndustrySource::Tdx, Err(errors)));
    }
    out.members.sort();
    out.members.dedup();
    Ok((IndustrySource::Tdx, Ok(out)))
}

/// The store's name of a source's load of one kind: `csv`, `tdx` (industries),
/// `tdx:concept`, `tdx:style`.
fn load_key(source: IndustrySource, kind: MemberKind) -> String {
    match kind {
        MemberKind::Industry => source.as_str().to_string(),
        k => format!("{}:{}", source.as_str(), k.as_str()),
    }
}

/// One stored load: one source's rows of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct LoadInfo {
    pub id: i64,
    pub kind: MemberKind,
    /// Beijing day of the import, `YYYYMMDD`.
    pub loaded_on: u32,
    pub source: IndustrySource,
    pub path: String,
    pub stocks: usize,
    pub industries: usize,
    pub concepts: usize,
    pub recorded_at: String,
}

/// What storing a parsed membership did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(tag = "write", rename_all = "snake_case")]
pub enum LoadWrite {
    /// A new load dated today.
    Added,
    /// Today's load of this source held something else; it now holds this.
    Replaced,
    /// The latest load of this source holds exactly this; the report's `loaded_on` is its day.
    Unchanged,
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum IndustriesImportStatus {
    Imported {
        source: IndustrySource,
        /// Stocks with an industry.
        stocks: usize,
        industries: usize,
        /// Distinct concept and style blocks.
        concepts: usize,
        /// (stock, block) rows of the concept and style blocks.
        concept_rows: usize,
        not_stocks: usize,
        without_industry: usize,
        files: Vec<String>,
        loaded_on: u32,
        #[serde(flatten)]
        write: LoadWrite,
    },
    /// Nothing was stored.
    Rejected {
        /// The first [`MAX_LISTED_ERRORS`] bad lines.
        errors: Vec<BadLine>,
        bad_lines: usize,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct IndustriesImportReport {
    pub path: String,
    #[serde(flatten)]
    pub status: IndustriesImportStatus,
}

impl IndustriesImportReport {
    pub fn rejected(&self) -> bool {
        matches!(self.status, IndustriesImportStatus::Rejected { .. })
    }
}

/// The industry membership a day reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndustryView {
    /// Six-digit code → industry.
    pub industry: HashMap<String, String>,
    /// The load read; `None` when the store holds none with industries.
    pub load: Option<LoadInfo>,
    /// The load is dated after the day asked for (none that early exists).
    pub later_than_day: bool,
    /// From a dated load: the codes no span covers on the day, read from their first
    /// span after it.
    pub later_codes: HashSet<String>,
}

impl IndustryView {
    /// Whether `code`'s industry is a later membership standing in for the day's.
    pub fn later_for(&self, code: &str) -> bool {
        self.later_than_day || self.later_codes.contains(code)
    }
}

/// The membership tables in `wyckoff.db`.
#[derive(Debug, Clone)]
pub struct IndustryStore {
    pool: SqlitePool,
}

type LoadRow = (i64, i64, String, String, i64, i64, i64, String);

fn load_from_row(
    (id, loaded_on, source, path, stocks, industries, concepts, recorded_at): LoadRow,
) -> LoadInfo {
    let n = |v: i64| usize::try_from(v).unwrap_or(0);
    let (from, kind) = source
        .split_once(':')
        .unwrap_or((source.as_str(), "industry"));
    LoadInfo {
        id,
        kind: MemberKind::parse(kind).unwrap_or(MemberKind::Industry),
        loaded_on: u32::try_from(loaded_on).unwrap_or(0),
        source: match from {
            "tdx" => IndustrySource::Tdx,
            "tushare" => IndustrySource::Tushare,
            "tushare_sw" => IndustrySource::TushareSw,
            _ => IndustrySource::Csv,
        },
        path,
        stocks: n(stocks),
        industries: n(industries),
        concepts: n(concepts),
        recorded_at,
    }
}

impl IndustryStore {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Every load, oldest first.
    pub async fn loads(&self) -> Result<Vec<LoadInfo>, CacheError> {
        let rows: Vec<LoadRow> = sqlx::query_as(
            "SELECT id, loaded_on, source, path, stocks, industries, concepts, recorded_at
             FROM market_industry_load ORDER BY loaded_on, id",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(load_from_row).collect())
    }

    /// The rows of one load, sorted.
    pub async fn members(&self, load_id: i64) -> Result<Vec<Member>, CacheError> {
        let rows: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT kind, code, name FROM market_industry_member WHERE load_id = ?
             ORDER BY kind, code, name",
        )
        .bind(load_id)
        .fetch_all(&self.pool)
        .await?;
        let mut out: Vec<Member> = rows
            .into_iter()
            .filter_map(|(kind, code, name)| {
                Some(Member {
                    kind: MemberKind::parse(&kind)?,
                    code,
                    name,
                })
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// Stores `members` as the loads of `day` from `source`, one per kind (industries,
    /// concepts, styles: a concepts file alone leaves the industries as they are), each
    /// unless the latest load of that source and kind holds exactly it; with the day of the
    /// newest load that holds them. One transaction.
    pub async fn record(
        &self,
        day: u32,
        source: IndustrySource,
        path: &str,
        members: &[Member],
        now: DateTime<Utc>,
    ) -> Result<(LoadWrite, u32), CacheError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let mut sorted = members.to_vec();
        sorted.sort();
        sorted.dedup();
        let mut writes = Vec::new();
        for kind in [MemberKind::Industry, MemberKind::Concept, MemberKind::Style] {
            let group: Vec<Member> = sorted.iter().filter(|m| m.kind == kind).cloned().collect();
            if group.is_empty() {
                continue;
            }
            let key = load_key(source, kind);
            writes.push(record_group(&mut tx, day, &key, path, &group, now).await?);
        }
        tx.commit().await?;
        let held_since = writes.iter().map(|(_, d)| *d).max().unwrap_or(day);
        let write = if writes.iter().all(|(w, _)| *w == LoadWrite::Unchanged) {
            LoadWrite::Unchanged
        } else if writes.iter().any(|(w, _)| *w == LoadWrite::Replaced) {
            LoadWrite::Replaced
        } else {
            LoadWrite::Added
        };
        Ok((
            write,
            if write == LoadWrite::Unchanged {
                held_since
            } else {
                day
            },
        ))
    }

    /// The industries day `day` reads (the latest when `None`), as [`pick_industries`]
    /// chooses: a dated load's spans in force that day, or an undated load (flagged when
    /// it is later than the day).
    pub async fn industries_as_of(&self, day: Option<u32>) -> Result<IndustryView, CacheError> {
        let loads: Vec<LoadInfo> = self
            .loads()
            .await?
            .into_iter()
            .filter(|l| l.kind == MemberKind::Industry)
            .collect();
        let (load, later) = match pick_industries(&loads, day) {
            IndustryPick::None => return Ok(IndustryView::default()),
            IndustryPick::Dated(load) => {
                let spans = self.spans(load.id).await?;
                let (industry, later_codes) = crate::industry_spans::spans_on(&spans, day);
                return Ok(IndustryView {
                    industry,
                    load: Some(load.clone()),
                    later_than_day: false,
                    later_codes,
                });
            }
            IndustryPick::Undated(load, later) => (load.clone(), later),
        };
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT code, name FROM market_industry_member WHERE load_id = ? AND kind = 'industry'",
        )
        .bind(load.id)
        .fetch_all(&self.pool)
        .await?;
        Ok(IndustryView {
            industry: rows.into_iter().collect(),
            load: Some(load),
            later_than_day: later,
            later_codes: HashSet::new(),
        })
    }
}

/// Stores one kind's rows as the load of `day` under `key`, unless the latest load of that
/// key holds exactly them.
async fn record_group(
    tx: &mut sqlx::SqliteConnection,
    day: u32,
    key: &str,
    path: &str,
    sorted: &[Member],
    now: DateTime<Utc>,
) -> Result<(LoadWrite, u32), CacheError> {
    if let Some((id, loaded_on)) = latest_load(tx, key).await? {
        let held: Vec<(String, String, String)> =
            sqlx::query_as("SELECT kind, code, name FROM market_industry_member WHERE load_id = ?")
                .bind(id)
                .fetch_all(&mut *tx)
                .await?;
        let mut held: Vec<Member> = held
            .into_iter()
            .filter_map(|(kind, code, name)| {
                Some(Member {
                    kind: MemberKind::parse(&kind)?,
                    code,
                    name,
                })
            })
            .collect();
        held.sort();
        if held == sorted {
            return Ok((LoadWrite::Unchanged, loaded_on));
        }
    }
    let (_, write) = write_load(tx, day, key, path, sorted, now).await?;
    Ok((write, day))
}

/// The id and day of the latest load stored under `key`, if any.
pub(crate) async fn latest_load(
    tx: &mut sqlx::SqliteConnection,
    key: &str,
) -> Result<Option<(i64, u32)>, CacheError> {
    let latest: Option<(i64, i64)> = sqlx::query_as(
        "SELECT id, loaded_on FROM market_industry_load WHERE source = ?
         ORDER BY loaded_on DESC, id DESC LIMIT 1",
    )
    .bind(key)
    .fetch_optional(&mut *tx)
    .await?;
    Ok(latest.map(|(id, day)| (id, u32::try_from(day).unwrap_or(0))))
}

/// Stores `members` as the load of `day` under `key` (read from `path`), in place of any
/// load of that day and key: the load's row with its counts (stocks with an industry,
/// industries, concept and style blocks), then its members. Returns the new load's id and
/// whether it replaced one.
pub(crate) async fn write_load(
    tx: &mut sqlx::SqliteConnection,
    day: u32,
    key: &str,
    path: &str,
    members: &[Member],
    now: DateTime<Utc>,
) -> Result<(i64, LoadWrite), CacheError> {
    let deleted =
        sqlx::query("DELETE FROM market_industry_load WHERE loaded_on = ? AND source = ?")
            .bind(i64::from(day))
            .bind(key)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    let distinct = |pick: &dyn Fn(&Member) -> Option<&str>| -> i64 {
        members
            .iter()
            .filter_map(pick)
            .collect::<BTreeSet<&str>>()
            .len() as i64
    };
    let industry = |m: &Member| m.kind == MemberKind::Industry;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO market_industry_load
           (loaded_on, source, path, stocks, industries, concepts, recorded_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(i64::from(day))
    .bind(key)
    .bind(path)
    .bind(distinct(&|m| industry(m).then_some(m.code.as_str())))
    .bind(distinct(&|m| industry(m).then_some(m.name.as_str())))
    .bind(distinct(&|m| (!industry(m)).then_some(m.name.as_str())))
    .bind(now.to_rfc3339())
    .fetch_one(&mut *tx)
    .await?;
    for chunk in members.chunks(ROWS_PER_INSERT) {
        let mut qb = QueryBuilder::<Sqlite>::new(
            "INSERT INTO market_industry_member (load_id, kind, code, name) ",
        );
        qb.push_values(chunk, |mut row, m| {
            row.push_bind(id)
                .push_bind(m.kind.as_str())
                .push_bind(m.code.as_str())
                .push_bind(m.name.as_str());
        });
        qb.build().execute(&mut *tx).await?;
    }
    let write = if deleted > 0 {
        LoadWrite::Replaced
    } else {
        LoadWrite::Added
    };
    Ok((id, write))
}

/// The load a day reads among `loads` (oldest first): the last on or before `day`, else
/// the first after it (`true`: later than the day); the newest when `day` is `None`.
pub fn pick_load(loads: &[LoadInfo], day: Option<u32>) -> (Option<&LoadInfo>, bool) {
    match day {
        None => (loads.last(), false),
        Some(d) => match loads.iter().rev().find(|l| l.loaded_on <= d) {
            Some(l) => (Some(l), false),
            None => (loads.first(), !loads.is_empty()),
        },
    }
}

/// Which industry load a day reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndustryPick<'a> {
    None,
    /// A load with dated spans (Tushare Shenwan): it answers any day.
    Dated(&'a LoadInfo),
    /// An undated load; `true` when it is later than the day.
    Undated(&'a LoadInfo, bool),
}

/// The industry load day `day` reads among `loads` (oldest first; the latest when `None`).
/// The newest dated load answers every day, since it knows past membership; an undated
/// import made after it takes over from its own day on (the user's newer file wins where
/// it applies). With no dated load, [`pick_load`] decides.
pub fn pick_industries(loads: &[LoadInfo], day: Option<u32>) -> IndustryPick<'_> {
    let dated = loads
        .iter()
        .rev()
        .find(|l| l.source == IndustrySource::TushareSw);
    let undated: Vec<LoadInfo> = loads
        .iter()
        .filter(|l| l.source != IndustrySource::TushareSw)
        .cloned()
        .collect();
    let Some(dated) = dated else {
        return match pick_load(&undated, day) {
            (None, _) => IndustryPick::None,
            (Some(l), later) => loads
                .iter()
                .find(|x| x.id == l.id)
                .map_or(IndustryPick::None, |x| IndustryPick::Undated(x, later)),
        };
    };
    let newer = loads.iter().rfind(|l| {
        l.source != IndustrySource::TushareSw
            && (l.loaded_on, l.id) > (dated.loaded_on, dated.id)
            && day.is_none_or(|d| l.loaded_on <= d)
    });
    match newer {
        Some(l) => IndustryPick::Undated(l, false),
        None => IndustryPick::Dated(dated),
    }
}

/// Where the universe's industries came from, for the caller to tell the user.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IndustryCoverage {
    /// The imported load read, if any.
    pub load: Option<LoadInfo>,
    /// Loaded stocks with an industry.
    pub stocks_with_industry: usize,
    /// Of them, those whose industry came from a load dated after the as-of day (no
    /// earlier load exists): today's membership standing in for the day's.
    pub from_later_load: usize,
    /// Of them, those whose industry came from the stock list (Tushare `stock_basic`,
    /// today's), not from an import.
    pub from_stock_list: usize,
}

impl IndustryCoverage {
    /// The data-note line: what the industries are and which fell back; or how to get
    /// some when no stock has one.
    pub fn note(&self) -> String {
        if self.stocks_with_industry == 0 {
            return "no industries: the funnel's L3 (industry resonance) and the sector table need them — run `wyckoff data industries import PATH` (a code,industry CSV or a TDX install folder), or sync the stock list with a Tushare token".into();
        }
        let mut s = format!("{} stocks with an industry", self.stocks_with_industry);
        if let Some(l) = &self.load {
            s.push_str(&format!(
                " (imported {} from {}, {})",
                crate::date::iso(l.loaded_on),
                l.source.as_str(),
                l.path
            ));
        }
        if self.from_later_load > 0 {
            s.push_str(&format!(
                "; {} read from a load dated after the day (none earlier exists)",
                self.from_later_load
            ));
        }
        if self.from_stock_list > 0 {
            s.push_str(&format!(
                "; {} from today's stock list",
                self.from_stock_list
            ));
        }
        s
    }
}

/// Reads, checks and (when every line is good) stores a membership file or folder, dated
/// `today`.
pub async fn import_industries(
    store: &IndustryStore,
    path: &Path,
    today: u32,
    now: DateTime<Utc>,
) -> Result<IndustriesImportReport, IndustriesImportError> {
    let (source, parsed) = read_path(path)?;
    let status = match parsed {
        Err(errors) => IndustriesImportStatus::Rejected {
            bad_lines: errors.len(),
            errors: errors.into_iter().take(MAX_LISTED_ERRORS).collect(),
        },
        Ok(p) => {
            let (write, loaded_on) = store
                .record(today, source, &path.display().to_string(), &p.members, now)
                .await?;
            let industries: BTreeSet<&str> = p
                .members
                .iter()
                .filter(|m| m.kind == MemberKind::Industry)
                .map(|m| m.name.as_str())
                .collect();
            let blocks: BTreeMap<(MemberKind, &str), usize> = p
                .members
                .iter()
                .filter(|m| m.kind != MemberKind::Industry)
                .fold(BTreeMap::new(), |mut acc, m| {
                    *acc.entry((m.kind, m.name.as_str())).or_default() += 1;
                    acc
                });
            IndustriesImportStatus::Imported {
                source,
                stocks: p
                    .members
                    .iter()
                    .filter(|m| m.kind == MemberKind::Industry)
                    .count(),
                industries: industries.len(),
                concepts: blocks.len(),
                concept_rows: blocks.values().sum(),
                not_stocks: p.not_stocks,
                without_industry: p.without_industry,
                files: p.files,
                loaded_on,
                write,
            }
        }
    };
    Ok(IndustriesImportReport {
        path: path.display().to_string(),
        status,
    })
}

impl MarketData {
    /// The membership tables of this data home.
    pub fn industries(&self) -> IndustryStore {
        IndustryStore::new(self.pool().clone())
    }

    /// Imports a `code,industry` CSV or a TDX install's industry and block files (see
    /// [`crate::industries`]), dated today (Beijing).
    pub async fn import_industries(
        &self,
        path: &Path,
    ) -> Result<IndustriesImportReport, IndustriesImportError> {
        let today = crate::date::to_yyyymmdd(self.clock().now_beijing().date());
        import_industries(&self.industries(), path, today, self.clock().now()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_cannot_be_read_says_why_typed() {
        let too_large = IndustriesImportError::TooLarge {
            path: "/x/a.csv".into(),
            bytes: MAX_FILE_BYTES + 1,
            max: MAX_FILE_BYTES,
        };
        assert_eq!(
            too_large.failure(),
            IndustriesFailure::TooLarge {
                path: "/x/a.csv".into(),
                megabytes: 32
            }
        );
        let no_incon = IndustriesImportError::NoIncon {
            tdxhy: "/tdx/T0002/hq_cache/tdxhy.cfg".into(),
            looked: "incon.dat".into(),
        };
        assert_eq!(
            no_incon.failure(),
            IndustriesFailure::NoIncon {
                tdxhy: "/tdx/T0002/hq_cache/tdxhy.cfg".into()
            }
        );
        let Err(missing) = read_path(Path::new("/no/such/industries.csv")) else {
            panic!("a missing file was read");
        };
        assert!(
            matches!(
                missing.failure(),
                IndustriesFailure::Unreadable { ref path, .. } if path == "/no/such/industries.csv"
            ),
            "{:?}",
            missing.failure()
        );
    }

    fn industries(p: &Parsed) -> Vec<(String, String)> {
        p.members
            .iter()
            .filter(|m| m.kind == MemberKind::Industry)
            .map(|m| (m.code.clone(), m.name.clone()))
            .collect()
    }

    fn problems(r: Result<Parsed, Vec<BadLine>>) -> Vec<(usize, String)> {
        r.unwrap_err()
            .into_iter()
            .map(|b| (b.line, b.message))
            .collect()
    }

    #[test]
    fn a_csv_with_or_without_a_header_in_utf8_or_gbk() {
        let want = vec![
            ("000001".to_string(), "银行".to_string()),
            ("600519".to_string(), "白酒".to_string()),
        ];
        let gbk = encoding_rs::GBK
            .encode("代码,行业\n000001,银行\n600519,白酒\n")
            .0;
        for bytes in [
            "code,industry\n000001,银行\n600519.SH,白酒\n"
                .as_bytes()
                .to_vec(),
            "\u{feff}000001,银行\r\n\r\nsh600519,\"白酒\"\r\n000001,银行\n"
                .as_bytes()
                .to_vec(),
            "name,industry,code\n平安银行,银行,000001\n贵州茅台,白酒,600519\n"
                .as_bytes()
                .to_vec(),
            gbk.into_owned(),
        ] {
            let p = parse_csv(&bytes, "f.csv").unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(industries(&p), want);
        }
    }

    #[test]
    fn every_bad_csv_line_is_named() {
        let text = "code,industry\n\
                    000001,银行\n\
                    123456,某行业\n\
                    600519\n\
                    600000,\n\
                    000001,保险\n\
                    000002,这是一个长得不像任何行业名称的名字真的很长很长很长很长很长很长\n";
        let got = problems(parse_csv(text.as_bytes(), "f.csv"));
        assert_eq!(
            got.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
            [3, 4, 5, 6, 7]
        );
        assert!(got[0].1.starts_with("code \"123456\": "), "{got:?}");
        assert_eq!(got[1].1, "1 field(s), expected 2");
        assert_eq!(got[2].1, "the industry is empty");
        assert_eq!(got[3].1, "000001 is already in industry \"银行\" on line 2");
        assert_eq!(
            problems(parse_csv(b"", "f.csv")),
            [(0, "file is empty; expected rows code,industry".to_string())]
        );
        assert_eq!(
            problems(parse_csv(b"code,industry\n", "f.csv")),
            [(0, "no data rows after the header".to_string())]
        );
        assert_eq!(
            problems(parse_csv(b"code,sector_id\n000001,1\n", "f.csv"))[0].0,
            1
        );
    }

    const INCON: &str = "#ZJHHY\nA01|农业\n######\n#TDXNHY\nT01|能源\nT0101|煤炭\nT010101|煤炭开采\nT10|金融\nT1001|银行\nT1002|证券\nT05|消费\nT050101|白酒零售\n######\n#SWHY\n480000|银行\n######\n";

    fn incon() -> HashMap<String, String> {
        parse_incon(&encoding_rs::GBK.encode(INCON).0, "incon.dat").unwrap()
    }

    #[test]
    fn incon_names_only_the_tdx_industry_section() {
        let names = incon();
        assert_eq!(names.get("T1001").map(String::as_str), Some("银行"));
        assert_eq!(names.get("T010101").map(String::as_str), Some("煤炭开采"));
        assert!(!names.contains_key("A01") && !names.contains_key("480000"));
        assert_eq!(
            problems(
                parse_incon(b"#TDXNHY\nT01|x\nnonsense\n######\n", "incon.dat")
                    .map(|_| Parsed::default())
            ),
            [(3, "not a `code|name` line of #TDXNHY".to_string())]
        );
        assert_eq!(
            problems(parse_incon(b"#SWHY\n1|x\n", "incon.dat").map(|_| Parsed::default())),
            [(
                0,
                "no #TDXNHY section: this incon.dat names no TDX industries".to_string()
            )]
        );
    }

    #[test]
    fn tdxhy_reads_the_second_level_industry_and_skips_what_is_no_stock() {
        let names = incon();
        let text = "0|000001|T1001|||X500102\n\
                    1|600519|T050101|||X210205\n\
                    1|601088|T010101||\n\
                    1|510300|T1001||\n\
                    1|000300|T1001||\n\
                    0|000004||||\n";
        let p = parse_tdxhy(&encoding_rs::GBK.encode(text).0, "tdxhy.cfg", &names).unwrap();
        assert_eq!(
            industries(&p),
            [
                ("000001".to_string(), "银行".to_string()),
                // no second level T0501 named: the code's own name
                ("600519".to_string(), "白酒零售".to_string()),
                ("601088".to_string(), "煤炭".to_string()),
            ]
        );
        // 510300 (an ETF) and 000300 on Shanghai (an index) are not A-share stocks
        assert_eq!((p.not_stocks, p.without_industry), (2, 1));
        let bad = "0|000001|T1001\n7|600519|T1001\n1|60051|T1001\n1|600000|T9999\n0|000002\n";
        assert_eq!(
            problems(parse_tdxhy(bad.as_bytes(), "tdxhy.cfg", &names)),
            [
                (
                    2,
                    "market \"7\" is not 0 (Shenzhen), 1 (Shanghai) or 2 (Beijing)".to_string()
                ),
                (3, "code \"60051\": not six digits".to_string()),
                (
                    4,
                    "industry code \"T9999\" is not named in incon.dat's #TDXNHY section"
                        .to_string()
                ),
                (5, "2 field(s), expected 3".to_string()),
            ]
        );
    }

    /// A block file as TDX lays it out.
    pub(crate) fn block_file(blocks: &[(&str, &[&str])]) -> Vec<u8> {
        let mut out = vec![0u8; BLOCK_HEADER];
        out.extend((blocks.len() as u16).to_le_bytes());
        for (name, codes) in blocks {
            let mut rec = vec![0u8; BLOCK_RECORD];
            let n = encoding_rs::GBK.encode(name).0;
            rec[..n.len()].copy_from_slice(&n);
            rec[BLOCK_NAME..BLOCK_NAME + 2].copy_from_slice(&(codes.len() as u16).to_le_bytes());
            rec[BLOCK_NAME + 2..BLOCK_NAME + 4].copy_from_slice(&2u16.to_le_bytes());
            for (i, c) in codes.iter().enumerate() {
                let at = BLOCK_NAME + 4 + i * BLOCK_SLOT;
                rec[at..at + c.len()].copy_from_slice(c.as_bytes());
            }
            out.extend(rec);
        }
        out
    }

    #[test]
    fn block_files_give_every_stock_of_every_block() {
        let bytes = block_file(&[
            ("白酒概念", &["600519", "000858", "510300"]),
            ("银行", &["000001"]),
        ]);
        let p = parse_blocks(&bytes, "block_gn.dat", MemberKind::Concept).unwrap();
        let got: Vec<(&str, &str)> = p
            .members
            .iter()
            .map(|m| (m.code.as_str(), m.name.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("000001", "银行"),
                ("000858", "白酒概念"),
                ("600519", "白酒概念")
            ]
        );
        assert!(p.members.iter().all(|m| m.kind == MemberKind::Concept));
        assert_eq!(p.not_stocks, 1);
        // cut short: the whole file is refused and says why
        let short = &bytes[..bytes.len() - 10];
        assert_eq!(
            problems(parse_blocks(short, "block_gn.dat", MemberKind::Concept))[0].0,
            0
        );
        assert!(
            problems(parse_blocks(short, "block_gn.dat", MemberKind::Concept))[0]
                .1
                .contains("truncated")
        );
        // a slot that is no code names its block
        let bad = block_file(&[("A", &["600519"]), ("B", &["60x519"])]);
        assert_eq!(
            problems(parse_blocks(&bad, "block_gn.dat", MemberKind::Concept)),
            [(2, "code \"60x519\": not six digits".to_string())]
        );
    }

    fn load(id: i64, day: u32) -> LoadInfo {
        LoadInfo {
            id,
            kind: MemberKind::Industry,
            loaded_on: day,
            source: IndustrySource::Csv,
            path: String::new(),
            stocks: 1,
            industries: 1,
            concepts: 0,
            recorded_at: String::new(),
        }
    }

    #[test]
    fn a_day_reads_the_last_load_on_or_before_it_else_the_first_after() {
        let loads = [load(1, 20240105), load(2, 20240301)];
        let id = |(l, later): (Option<&LoadInfo>, bool)| (l.map(|l| l.id), later);
        let cases = [
            (None, (Some(2), false)),
            (Some(20240301), (Some(2), false)),
            (Some(20240229), (Some(1), false)),
            (Some(20240105), (Some(1), false)),
            (Some(20231231), (Some(1), true)),
        ];
        for (day, want) in cases {
            assert_eq!(id(pick_load(&loads, day)), want, "{day:?}");
        }
        assert_eq!(id(pick_load(&[], Some(20240101))), (None, false));
    }

    #[test]
    fn a_dated_load_answers_every_day_until_a_newer_import_takes_over_from_its_day() {
        let sourced = |id, day, source| LoadInfo {
            source,
            ..load(id, day)
        };
        let csv_old = sourced(1, 20240105, IndustrySource::Csv);
        let sw = sourced(2, 20240301, IndustrySource::TushareSw);
        let tdx_new = sourced(3, 20240601, IndustrySource::Tdx);
        let pick = |loads: &[LoadInfo], day| match pick_industries(loads, day) {
            IndustryPick::None => "none".to_string(),
            IndustryPick::Dated(l) => format!("dated {}", l.id),
            IndustryPick::Undated(l, later) => format!("undated {} later={later}", l.id),
        };
        let all = [csv_old.clone(), sw.clone(), tdx_new.clone()];
        let cases: [(&[LoadInfo], Option<u32>, &str); 8] = [
            (&all, None, "undated 3 later=false"),
            (&all, Some(20240601), "undated 3 later=false"),
            // before the newer import: the dated spans, even before the dated load's day
            (&all, Some(20240531), "dated 2"),
            (&all, Some(20240201), "dated 2"),
            (&all, Some(20200101), "dated 2"),
            (&all[..2], None, "dated 2"),
            // no dated load: the last on or before the day, else the first after it
            (
                &[csv_old.clone(), tdx_new.clone()],
                Some(20240301),
                "undated 1 later=false",
            ),
            (
                std::slice::from_ref(&csv_old),
                Some(20200101),
                "undated 1 later=true",
            ),
        ];
        for (loads, day, want) in cases {
            assert_eq!(pick(loads, day), want, "{day:?}");
        }
        assert_eq!(pick(&[], Some(20240101)), "none");
    }
}
