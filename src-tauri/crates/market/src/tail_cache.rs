//! The screen's tail cache: the last bars of every stock, as the whole-market tail read
//! hands them to the universe, in one contiguous checksummed file beside the database,
//! read by `mmap` in one pass.
//!
//! It is derived and rebuildable: the database stays the source of truth. A file is used
//! only when it was built from this database (its identity, made once by migration 3600) at
//! the write generation the database is at now (migration 2600's triggers move it on every
//! write of bars or of the stock list, by any process), by a build of the same format and
//! bar checks, holds at least the bars asked for, and its checksum holds over every byte.
//! Anything else is a [`Miss`]: the caller reads the database as it would without a cache.
//!
//! A file is written whole to a temporary name and renamed over the old one, so a reader
//! never sees a half-written file and a mapped file is never changed under its reader.
//!
//! Layout (little-endian): a 96-byte header; the sorted dates of every admitted series
//! (u32 each, padded to 8 bytes); per stock (by key) its key's place in the strings, its
//! usable bars before the tail, its bars and its corrupt rows (24 bytes); the corrupt rows
//! (date, reason's place in the strings: 16 bytes); the strings (padded to 8 bytes); the
//! bars (64 bytes each); then the checksum: an XXH3-64 of the XXH3-64s of everything before
//! the bars and of each stock's bars, in file order (every byte is covered, and a reader
//! checks each stock's bars on the core that decodes them, while they are at hand).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use wyckoff_engine::Bar;
use xxhash_rust::xxh3::Xxh3;

use crate::cache::{CorruptRow, LoadedBars};

/// Whether the cache is in use: `WYCKOFF_TAIL_CACHE=off` (or `0`) leaves it alone, so
/// every read goes to the database (to compare the two, or to rule the cache out).
pub fn enabled() -> bool {
    std::env::var("WYCKOFF_TAIL_CACHE")
        .map(|v| !matches!(v.trim(), "0" | "off" | "false" | "no"))
        .unwrap_or(true)
}

/// The file's name in the data home, beside the database.
pub const FILE: &str = "market-tail.cache";

const MAGIC: &[u8; 8] = b"WYKTAIL\0";
/// Moves whenever the layout or the meaning of a field changes.
const FORMAT: u32 = 2;
const HEADER: usize = 96;
const STOCK: usize = 24;
const CORRUPT: usize = 16;
const BAR: usize = 64;
const TRAILER: usize = 8;
/// Bar flag: the source gave a turnover.
const HAS_TURNOVER: u32 = 1;

/// What a file must match to stand for the database: written into it when built, compared
/// when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The database's identity (`market_meta.identity`).
    pub identity: String,
    /// The database's write generation the bars were read at (read before them).
    pub generation: i64,
    /// Bars kept of each stock (at most; fewer when a stock has fewer).
    pub tail: u32,
    /// The newest bar date stored for any stock: a read as of this day or later sees the
    /// same bars as one of the latest day.
    pub last_date: u32,
}

/// The whole-market tail read as the universe takes it: each stock's key and loaded bars
/// (by key), and the sorted dates of every admitted series.
#[derive(Debug, Clone, Default)]
pub struct TailRows {
    pub rows: Vec<(String, LoadedBars)>,
    pub dates: Vec<u32>,
}

/// Why the file was not used; the caller reads the database instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Miss {
    #[error("no tail cache file")]
    Absent,
    #[error("tail cache unreadable: {0}")]
    Unreadable(String),
    #[error("tail cache written by another format or build")]
    OtherBuild,
    #[error("tail cache is of another database or an older write generation")]
    Stale,
    #[error("tail cache holds {held} bars a stock, {asked} asked for")]
    TooShort { held: u32, asked: usize },
    #[error("tail cache ends at {last_date}, a read as of {as_of} needs earlier bars")]
    AsOfEarlier { last_date: u32, as_of: u32 },
    #[error("tail cache damaged: {0}")]
    Corrupt(String),
}

impl Miss {
    /// A file worth building anew for the read that missed (one as of an earlier day than
    /// the cache's last one needs other bars, not a new file).
    pub fn calls_for_rebuild(&self) -> bool {
        !matches!(self, Miss::AsOfEarlier { .. })
    }
}

/// Why a file could not be written (the read it was for goes on).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write the tail cache {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("tail cache too large: {0}")]
    TooLarge(&'static str),
}

/// A tag of what decides a file's meaning besides its layout: this crate's version and the
/// bar checks a stored series is sealed with.
fn build_tag() -> u64 {
    let mut h = Xxh3::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(&[crate::sanity::RULES]);
    h.update(&FORMAT.to_le_bytes());
    h.digest()
}

fn pad8(n: usize) -> usize {
    n.next_multiple_of(8)
}

/// The header's numbers, as written or as read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Header {
    stamp: Stamp,
    stocks: u32,
    dates: u32,
    corrupt: u32,
    bars: u64,
    strings: u64,
}

impl Header {
    fn file_len(&self) -> Option<usize> {
        let dates = pad8(usize::try_from(self.dates).ok()?.checked_mul(4)?);
        let stocks = usize::try_from(self.stocks).ok()?.checked_mul(STOCK)?;
        let corrupt = usize::try_from(self.corrupt).ok()?.checked_mul(CORRUPT)?;
        let strings = pad8(usize::try_from(self.strings).ok()?);
        let bars = usize::try_from(self.bars).ok()?.checked_mul(BAR)?;
        [dates, stocks, corrupt, strings, bars, TRAILER]
            .into_iter()
            .try_fold(HEADER, |a, b| a.checked_add(b))
    }

    fn encode(&self) -> [u8; HEADER] {
        let mut h = [0u8; HEADER];
        h[0..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&FORMAT.to_le_bytes());
        h[12..16].copy_from_slice(&self.stamp.tail.to_le_bytes());
        h[16..24].copy_from_slice(&self.stamp.generation.to_le_bytes());
        h[24..32].copy_from_slice(&build_tag().to_le_bytes());
        let id = self.stamp.identity.as_bytes();
        let n = id.len().min(32);
        h[32..32 + n].copy_from_slice(&id[..n]);
        h[64..68].copy_from_slice(&self.stamp.last_date.to_le_bytes());
        h[68..72].copy_from_slice(&self.stocks.to_le_bytes());
        h[72..76].copy_from_slice(&self.dates.to_le_bytes());
        h[76..80].copy_from_slice(&self.corrupt.to_le_bytes());
        h[80..88].copy_from_slice(&self.bars.to_le_bytes());
        h[88..96].copy_from_slice(&self.strings.to_le_bytes());
        h
    }

    fn decode(b: &[u8]) -> Result<Header, Miss> {
        if b.len() < HEADER + TRAILER {
            return Err(Miss::Corrupt(format!(
                "{} bytes, shorter than a header",
                b.len()
            )));
        }
        if &b[0..8] != MAGIC || u32_at(b, 8) != FORMAT || u64_at(b, 24) != build_tag() {
            return Err(Miss::OtherBuild);
        }
        let id = &b[32..64];
        let id = &id[..id.iter().position(|&c| c == 0).unwrap_or(id.len())];
        Ok(Header {
            stamp: Stamp {
                identity: String::from_utf8_lossy(id).into_owned(),
                generation: i64::from_le_bytes(arr8(b, 16)),
                tail: u32_at(b, 12),
                last_date: u32_at(b, 64),
            },
            stocks: u32_at(b, 68),
            dates: u32_at(b, 72),
            corrupt: u32_at(b, 76),
            bars: u64_at(b, 80),
            strings: u64_at(b, 88),
        })
    }
}

fn arr8(b: &[u8], at: usize) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    a
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(arr8(b, at))
}

fn f64_at(b: &[u8], at: usize) -> f64 {
    f64::from_bits(u64_at(b, at))
}

/// The file's checksum (see the layout above), built as the sections go by.
struct Checksum(Xxh3);

impl Checksum {
    /// `prefix`: the XXH3-64 of every byte before the bars.
    fn new(prefix: u64) -> Self {
        let mut h = Xxh3::new();
        h.update(&prefix.to_le_bytes());
        Checksum(h)
    }

    /// The next stock's bars, as stored.
    fn stock(&mut self, bars: &[u8]) {
        self.stock_digest(xxhash_rust::xxh3::xxh3_64(bars));
    }

    fn stock_digest(&mut self, digest: u64) {
        self.0.update(&digest.to_le_bytes());
    }

    fn digest(&self) -> u64 {
        self.0.digest()
    }
}

/// Writes bytes on while hashing them.
struct Hashing<W: Write> {
    out: W,
    hash: Xxh3,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hash.update(bytes);
        self.out.write_all(bytes)
    }

    fn pad_to_8(&mut self, written: usize) -> std::io::Result<()> {
        self.put(&[0u8; 8][..pad8(written) - written])
    }
}

fn count<T: TryFrom<usize>>(n: usize, what: &'static str) -> Result<T, WriteError> {
    T::try_from(n).map_err(|_| WriteError::TooLarge(what))
}

/// Writes the rows (each stock's last `stamp.tail` bars or fewer, as read) to `path`
/// through a temporary file renamed over it: a reader sees the old file or the new one.
pub fn write(path: &Path, stamp: &Stamp, rows: &TailRows) -> Result<(), WriteError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{FILE}.{}.{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let written = File::create(&tmp)
        .map_err(io)
        .and_then(|f| write_to(BufWriter::with_capacity(1 << 20, f), stamp, rows))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(io));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn write_to<W: Write>(out: W, stamp: &Stamp, rows: &TailRows) -> Result<(), WriteError> {
    let mut strings = Vec::new();
    let mut corrupt = 0usize;
    let mut bars = 0usize;
    for (key, loaded) in &rows.rows {
        strings.extend_from_slice(key.as_bytes());
        for c in &loaded.corrupt {
            strings.extend_from_slice(c.reason.as_bytes());
        }
        corrupt += loaded.corrupt.len();
        bars += loaded.bars.len();
    }
    let header = Header {
        stamp: stamp.clone(),
        stocks: count(rows.rows.len(), "stocks")?,
        dates: count(rows.dates.len(), "dates")?,
        corrupt: count(corrupt, "corrupt rows")?,
        bars: count(bars, "bars")?,
        strings: count(strings.len(), "strings")?,
    };
    // the places in the strings are u32
    count::<u32>(strings.len(), "strings")?;
    let mut w = Hashing {
        out,
        hash: Xxh3::new(),
    };
    let io = |source| WriteError::Io {
        path: PathBuf::from(FILE),
        source,
    };
    (|| -> std::io::Result<()> {
        w.put(&header.encode())?;
        for d in &rows.dates {
            w.put(&d.to_le_bytes())?;
        }
        w.pad_to_8(rows.dates.len() * 4)?;
        let mut at = 0usize;
        let mut places = Vec::with_capacity(corrupt);
        for (key, loaded) in &rows.rows {
            let mut e = [0u8; STOCK];
            e[0..4].copy_from_slice(&(at as u32).to_le_bytes());
            e[4..8].copy_from_slice(&(key.len() as u32).to_le_bytes());
            e[8..16].copy_from_slice(&(loaded.earlier as u64).to_le_bytes());
            e[16..20].copy_from_slice(&(loaded.bars.len() as u32).to_le_bytes());
            e[20..24].copy_from_slice(&(loaded.corrupt.len() as u32).to_le_bytes());
            w.put(&e)?;
            at += key.len();
            for c in &loaded.corrupt {
                places.push((c.date, at, c.reason.len()));
                at += c.reason.len();
            }
        }
        for (date, at, len) in places {
            let mut e = [0u8; CORRUPT];
            e[0..8].copy_from_slice(&date.to_le_bytes());
            e[8..12].copy_from_slice(&(at as u32).to_le_bytes());
            e[12..16].copy_from_slice(&(len as u32).to_le_bytes());
            w.put(&e)?;
        }
        w.put(&strings)?;
        w.pad_to_8(strings.len())?;
        let mut sum = Checksum::new(w.hash.digest());
        let mut buf = Vec::new();
        for (_, loaded) in &rows.rows {
            buf.clear();
            for b in &loaded.bars {
                buf.extend_from_slice(&encode_bar(b));
            }
            sum.stock(&buf);
            w.out.write_all(&buf)?;
        }
        w.out.write_all(&sum.digest().to_le_bytes())?;
        w.out.flush()
    })()
    .map_err(io)
}

fn encode_bar(b: &Bar) -> [u8; BAR] {
    let mut e = [0u8; BAR];
    e[0..4].copy_from_slice(&b.date.to_le_bytes());
    let flags = if b.turnover.is_some() {
        HAS_TURNOVER
    } else {
        0
    };
    e[4..8].copy_from_slice(&flags.to_le_bytes());
    let fields = [
        b.open,
        b.high,
        b.low,
        b.close,
        b.volume,
        b.amount,
        b.turnover.unwrap_or(0.0),
    ];
    for (i, f) in fields.iter().enumerate() {
        e[8 + i * 8..16 + i * 8].copy_from_slice(&f.to_bits().to_le_bytes());
    }
    e
}

fn decode_bar(e: &[u8]) -> Bar {
    Bar {
        date: u32_at(e, 0),
        open: f64_at(e, 8),
        high: f64_at(e, 16),
        low: f64_at(e, 24),
        close: f64_at(e, 32),
        volume: f64_at(e, 40),
        amount: f64_at(e, 48),
        turnover: (u32_at(e, 4) & HAS_TURNOVER != 0).then(|| f64_at(e, 56)),
    }
}

/// The stamp of the file at `path`, from its header alone (not checked further): what a
/// rebuild keeps (how many bars) and whether one is needed.
pub fn peek(path: &Path) -> Result<Stamp, Miss> {
    let mut head = [0u8; HEADER + TRAILER];
    let mut f = File::open(path).map_err(|e| miss_io(&e))?;
    std::io::Read::read_exact(&mut f, &mut head).map_err(|e| Miss::Corrupt(e.to_string()))?;
    Header::decode(&head).map(|h| h.stamp)
}

fn miss_io(e: &std::io::Error) -> Miss {
    if e.kind() == std::io::ErrorKind::NotFound {
        Miss::Absent
    } else {
        Miss::Unreadable(e.to_string())
    }
}

/// Maps the whole file read-only.
#[allow(unsafe_code)]
fn map(file: &File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: the map is read-only and private to this read. The file is ours and every
    // writer puts a new file in place by rename, never changing one in place, so the mapped
    // bytes do not change while they are read; a file damaged by other means fails its
    // checksum or its bounds checks below and is never trusted.
    unsafe { memmap2::MmapOptions::new().populate().map(file) }
}

/// The rows of the file at `path` when it stands for the database as `expect` says, with
/// each stock's last `tail` bars (of the at least as many the file holds) as of `as_of`.
pub fn read(
    path: &Path,
    expect: &Stamp,
    tail: usize,
    as_of: Option<u32>,
) -> Result<TailRows, Miss> {
    let file = File::open(path).map_err(|e| miss_io(&e))?;
    let mapped = map(&file).map_err(|e| Miss::Unreadable(e.to_string()))?;
    decode(&mapped, expect, tail, as_of)
}

/// The rows of the stocks among `wanted` (by key) in the file at `path`, each with its
/// last `tail` bars, as [`read`] (of the latest bars) hands them out: the file is checked
/// whole, only the wanted stocks are decoded. A stock the file does not hold had no stored
/// series when it was built.
pub fn read_some(
    path: &Path,
    expect: &Stamp,
    tail: usize,
    wanted: &HashSet<String>,
) -> Result<Vec<Row>, Miss> {
    let file = File::open(path).map_err(|e| miss_io(&e))?;
    let mapped = map(&file).map_err(|e| Miss::Unreadable(e.to_string()))?;
    decode_some(&mapped, expect, tail, None, &|key| wanted.contains(key)).map(|r| r.rows)
}

/// A stock's key and what was read of it.
type Row = (String, LoadedBars);

/// [`read`] over the file's bytes.
fn decode(b: &[u8], expect: &Stamp, tail: usize, as_of: Option<u32>) -> Result<TailRows, Miss> {
    decode_some(b, expect, tail, as_of, &|_| true)
}

/// [`decode`] of the stocks whose key `wanted` says yes (the others are passed over).
fn decode_some(
    b: &[u8],
    expect: &Stamp,
    tail: usize,
    as_of: Option<u32>,
    wanted: &(dyn Fn(&str) -> bool + Sync),
) -> Result<TailRows, Miss> {
    let h = Header::decode(b)?;
    if h.stamp.identity != expect.identity || h.stamp.generation != expect.generation {
        return Err(Miss::Stale);
    }
    if (h.stamp.tail as usize) < tail {
        return Err(Miss::TooShort {
            held: h.stamp.tail,
            asked: tail,
        });
    }
    if let Some(a) = as_of
        && a < h.stamp.last_date
    {
        return Err(Miss::AsOfEarlier {
            last_date: h.stamp.last_date,
            as_of: a,
        });
    }
    let len = h
        .file_len()
        .ok_or_else(|| Miss::Corrupt("section sizes overflow".into()))?;
    if b.len() != len {
        return Err(Miss::Corrupt(format!(
            "{} bytes where the header says {len}",
            b.len()
        )));
    }
    // the sections, in file order (their sizes checked against the length above)
    let n_dates = h.dates as usize;
    let n_stocks = h.stocks as usize;
    let n_corrupt = h.corrupt as usize;
    let dates_at = HEADER;
    let stocks_at = dates_at + pad8(n_dates * 4);
    let corrupt_at = stocks_at + n_stocks * STOCK;
    let strings_at = corrupt_at + n_corrupt * CORRUPT;
    let bars_at = strings_at + pad8(h.strings as usize);
    let strings = &b[strings_at..strings_at + h.strings as usize];
    let text = |at: u32, len: u32| -> Result<String, Miss> {
        let (at, len) = (at as usize, len as usize);
        strings
            .get(at..at.saturating_add(len))
            .and_then(|s| std::str::from_utf8(s).ok())
            .map(str::to_string)
            .ok_or_else(|| Miss::Corrupt("a string out of bounds or not UTF-8".into()))
    };
    let dates: Vec<u32> = (0..n_dates).map(|i| u32_at(b, dates_at + i * 4)).collect();
    // where each stock's bars and corrupt rows start: running sums, checked against the totals
    let mut places = Vec::with_capacity(n_stocks);
    let (mut bar, mut corrupt) = (0u64, 0u64);
    for i in 0..n_stocks {
        let e = &b[stocks_at + i * STOCK..stocks_at + (i + 1) * STOCK];
        let (bars, rows) = (u64::from(u32_at(e, 16)), u64::from(u32_at(e, 20)));
        places.push((e, bar, corrupt));
        bar += bars;
        corrupt += rows;
    }
    if bar != h.bars || corrupt != u64::from(h.corrupt) {
        return Err(Miss::Corrupt(
            "stock entries disagree with the totals".into(),
        ));
    }
    // a stock's entry and all its bars as stored: its key, its last `tail` bars and its
    // corrupt rows (`None`: not wanted)
    let stock = |e: &[u8], all: &[u8], first_corrupt: u64| {
        let key = text(u32_at(e, 0), u32_at(e, 4))?;
        if !wanted(&key) {
            return Ok(None);
        }
        let held = all.len() / BAR;
        let keep = held.min(tail);
        let skip = held - keep;
        let bars: Vec<Bar> = all[skip * BAR..]
            .chunks_exact(BAR)
            .map(decode_bar)
            .collect();
        let corrupt = (0..u32_at(e, 20) as usize)
            .map(|j| {
                let c = corrupt_at + (first_corrupt as usize + j) * CORRUPT;
                Ok(CorruptRow {
                    code: key.clone(),
                    date: i64::from_le_bytes(arr8(b, c)),
                    reason: text(u32_at(b, c + 8), u32_at(b, c + 12))?,
                })
            })
            .collect::<Result<Vec<_>, Miss>>()?;
        let loaded = LoadedBars {
            bars,
            corrupt,
            earlier: usize::try_from(u64_at(e, 8)).unwrap_or(usize::MAX) + skip,
            // what the universe does not use is not kept
            amount_missing: 0,
            sources: Vec::new(),
        };
        Ok(Some((key, loaded)))
    };
    // Each stock's bars hashed and (when wanted) decoded in one pass on every core; a
    // damaged file says so by its checksum first, whatever else its bytes would say.
    let decoded: Vec<(u64, Result<Option<Row>, Miss>)> = places
        .into_par_iter()
        .map(|(e, first_bar, first_corrupt)| {
            let held = u32_at(e, 16) as usize;
            let start = bars_at + first_bar as usize * BAR;
            let all = &b[start..start + held * BAR];
            let digest = xxhash_rust::xxh3::xxh3_64(all);
            (digest, stock(e, all, first_corrupt))
        })
        .collect();
    let mut sum = Checksum::new(xxhash_rust::xxh3::xxh3_64(&b[..bars_at]));
    for (digest, _) in &decoded {
        sum.stock_digest(*digest);
    }
    if sum.digest() != u64_at(b, len - TRAILER) {
        return Err(Miss::Corrupt("checksum mismatch".into()));
    }
    let rows = decoded
        .into_iter()
        .map(|(_, row)| row)
        .collect::<Result<Vec<_>, Miss>>()?;
    Ok(TailRows {
        rows: rows.into_iter().flatten().collect(),
        dates,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn bar(date: u32, close: f64, turnover: Option<f64>) -> Bar {
        Bar {
            date,
            open: close * 0.99,
            high: close * 1.01,
            low: close * 0.98,
            close,
            volume: 1.0e6 + f64::from(date % 97),
            amount: close * 1.0e6,
            turnover,
        }
    }

    fn stamp(generation: i64) -> Stamp {
        Stamp {
            identity: "0123456789abcdef0123456789abcdef".into(),
            generation,
            tail: 4,
            last_date: 20240110,
        }
    }

    /// Three stocks: a full one (with turnovers, one of them NaN), a short one and one
    /// with corrupt rows and no bars.
    fn sample() -> TailRows {
        let full: Vec<Bar> = (5..=10)
            .map(|d| {
                bar(
                    20240100 + d,
                    10.0 + f64::from(d) / 3.0,
                    Some(f64::from(d) * 0.1),
                )
            })
            .collect();
        let mut full_tail = full[2..].to_vec();
        full_tail[1].turnover = Some(f64::NAN);
        full_tail[2].turnover = None;
        let rows = vec![
            (
                "000001.SZ".to_string(),
                LoadedBars {
                    bars: full_tail,
                    earlier: 2 + 300,
                    ..LoadedBars::default()
                },
            ),
            (
                "600000.SH".to_string(),
                LoadedBars {
                    bars: vec![bar(20240109, 7.25, None)],
                    ..LoadedBars::default()
                },
            ),
            (
                "600001.SH".to_string(),
                LoadedBars {
                    corrupt: vec![
                        CorruptRow {
                            code: "600001.SH".into(),
                            date: 20240108,
                            reason: "low 3 above high 2 — 低".into(),
                        },
                        CorruptRow {
                            code: "600001.SH".into(),
                            date: 0,
                            reason: "checksum".into(),
                        },
                    ],
                    ..LoadedBars::default()
                },
            ),
        ];
        TailRows {
            rows,
            dates: (1..=10).map(|d| 20240100 + d).collect(),
        }
    }

    fn bytes(rows: &TailRows, stamp: &Stamp) -> Vec<u8> {
        let mut out = Vec::new();
        write_to(&mut out, stamp, rows).unwrap();
        out
    }

    /// Bars compared bit for bit (a NaN turnover included).
    fn same(a: &TailRows, b: &TailRows) {
        assert_eq!(a.dates, b.dates);
        assert_eq!(a.rows.len(), b.rows.len());
        for ((ka, la), (kb, lb)) in a.rows.iter().zip(&b.rows) {
            assert_eq!(ka, kb);
            assert_eq!(la.earlier, lb.earlier, "{ka}");
            assert_eq!(la.corrupt, lb.corrupt, "{ka}");
            let bits = |bars: &[Bar]| {
                bars.iter()
                    .map(|b| {
                        (
                            b.date,
                            [b.open, b.high, b.low, b.close, b.volume, b.amount].map(f64::to_bits),
                            b.turnover.map(f64::to_bits),
                        )
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&la.bars), bits(&lb.bars), "{ka}");
        }
    }

    #[test]
    fn a_written_file_reads_back_bit_for_bit_through_the_file_and_its_map() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let rows = sample();
        write(&path, &stamp(7), &rows).unwrap();
        let back = read(&path, &stamp(7), 4, None).unwrap();
        same(&back, &rows);
        assert_eq!(peek(&path).unwrap(), stamp(7));
        // a rewrite replaces it whole and leaves no temporary file behind
        write(&path, &stamp(8), &rows).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert_eq!(read(&path, &stamp(7), 4, None).unwrap_err(), Miss::Stale);
        same(&read(&path, &stamp(8), 4, None).unwrap(), &rows);
    }

    #[test]
    fn fewer_bars_asked_for_come_from_the_end_and_the_rest_count_as_earlier() {
        let rows = sample();
        let b = bytes(&rows, &stamp(1));
        let two = decode(&b, &stamp(1), 2, None).unwrap();
        let (_, full) = &rows.rows[0];
        let (_, cut) = &two.rows[0];
        assert_eq!(cut.bars.len(), 2);
        assert_eq!(cut.bars[0].date, full.bars[2].date);
        assert_eq!(cut.earlier, full.earlier + 2);
        // a stock with fewer bars than asked keeps them all
        assert_eq!(two.rows[1].1.bars.len(), 1);
        assert_eq!(two.rows[1].1.earlier, 0);
        assert_eq!(
            decode(&b, &stamp(1), 5, None).unwrap_err(),
            Miss::TooShort { held: 4, asked: 5 }
        );
    }

    #[test]
    fn some_stocks_read_as_the_whole_file_gives_them_and_the_others_are_still_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let rows = sample();
        write(&path, &stamp(7), &rows).unwrap();
        let wanted: HashSet<String> = ["600000.SH", "600001.SH", "999999.SH"]
            .into_iter()
            .map(String::from)
            .collect();
        let some = read_some(&path, &stamp(7), 4, &wanted).unwrap();
        let whole = read(&path, &stamp(7), 4, None).unwrap();
        same(
            &TailRows {
                rows: some,
                dates: whole.dates.clone(),
            },
            &TailRows {
                rows: whole.rows[1..].to_vec(),
                dates: whole.dates.clone(),
            },
        );
        // a bar of a stock not asked for, changed: the file is damaged all the same
        let mut b = bytes(&rows, &stamp(7));
        let first_bar = b.len() - TRAILER - 5 * BAR;
        b[first_bar + 33] ^= 0x04;
        std::fs::write(&path, &b).unwrap();
        assert_eq!(
            read_some(&path, &stamp(7), 4, &wanted).unwrap_err(),
            Miss::Corrupt("checksum mismatch".into())
        );
    }

    #[test]
    fn another_generation_or_database_is_stale() {
        let b = bytes(&sample(), &stamp(3));
        assert_eq!(decode(&b, &stamp(4), 4, None).unwrap_err(), Miss::Stale);
        let other = Stamp {
            identity: "ffffffffffffffffffffffffffffffff".into(),
            ..stamp(3)
        };
        assert_eq!(decode(&b, &other, 4, None).unwrap_err(), Miss::Stale);
        assert!(Miss::Stale.calls_for_rebuild());
    }

    #[test]
    fn a_read_as_of_an_earlier_day_misses_and_one_as_of_the_last_day_or_later_hits() {
        let rows = sample();
        let b = bytes(&rows, &stamp(3));
        let miss = decode(&b, &stamp(3), 4, Some(20240109)).unwrap_err();
        assert!(matches!(miss, Miss::AsOfEarlier { .. }));
        assert!(!miss.calls_for_rebuild());
        same(&decode(&b, &stamp(3), 4, Some(20240110)).unwrap(), &rows);
        same(&decode(&b, &stamp(3), 4, Some(20250101)).unwrap(), &rows);
    }

    #[test]
    fn a_changed_byte_anywhere_fails_the_checksum() {
        let b = bytes(&sample(), &stamp(3));
        // past the fields compared before the checksum: the bodies (a date, a key, bars)
        // and the trailer
        let strings_at = HEADER + 40 + 3 * STOCK + 2 * CORRUPT;
        for at in [
            HEADER + 1,
            strings_at + 1,
            b.len() / 2,
            b.len() - BAR + 9,
            b.len() - 1,
        ] {
            let mut bad = b.clone();
            bad[at] ^= 0x10;
            assert_eq!(
                decode(&bad, &stamp(3), 4, None).unwrap_err(),
                Miss::Corrupt("checksum mismatch".into()),
                "byte {at}"
            );
        }
    }

    #[test]
    fn a_truncated_or_lengthened_file_is_damaged() {
        let b = bytes(&sample(), &stamp(3));
        for len in [b.len() - 1, b.len() - BAR, HEADER + 3] {
            assert!(
                matches!(decode(&b[..len], &stamp(3), 4, None), Err(Miss::Corrupt(_))),
                "{len} bytes"
            );
        }
        let mut longer = b.clone();
        longer.extend_from_slice(&[0; 8]);
        assert!(matches!(
            decode(&longer, &stamp(3), 4, None),
            Err(Miss::Corrupt(_))
        ));
        assert!(matches!(
            decode(&b[..10], &stamp(3), 4, None),
            Err(Miss::Corrupt(_))
        ));
        // on disk too
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, &b[..b.len() - 100]).unwrap();
        assert!(matches!(
            read(&path, &stamp(3), 4, None),
            Err(Miss::Corrupt(_))
        ));
    }

    #[test]
    fn another_format_or_build_and_a_missing_file_miss() {
        let mut b = bytes(&sample(), &stamp(3));
        b[8] = b[8].wrapping_add(1);
        assert_eq!(
            decode(&b, &stamp(3), 4, None).unwrap_err(),
            Miss::OtherBuild
        );
        let mut b = bytes(&sample(), &stamp(3));
        b[24] ^= 1;
        assert_eq!(
            decode(&b, &stamp(3), 4, None).unwrap_err(),
            Miss::OtherBuild
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        assert_eq!(read(&path, &stamp(3), 4, None).unwrap_err(), Miss::Absent);
        assert_eq!(peek(&path).unwrap_err(), Miss::Absent);
    }

    #[test]
    fn a_file_that_cannot_be_written_is_an_error_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // the target is a directory: the rename fails
        let path = dir.path().join(FILE);
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("x"), b"x").unwrap();
        assert!(write(&path, &stamp(1), &sample()).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
