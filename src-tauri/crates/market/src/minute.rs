//! Minute bars (5, 15, 30 and 60 minutes): one compact checksummed BLOB per (stock, period)
//! in `market_minute_series`, apart from the daily series, and what each source was seen to
//! reach back to in `market_minute_reach`.
//!
//! Minute bars are stored as the source traded them (unadjusted). A bar is labelled by the
//! time it ends (`10:30` is 09:30–10:30), as both vendors label them. A bar that had not
//! ended when it was fetched is never stored: only closed bars reach the cache.
//!
//! Layout (little-endian), version 1:
//!
//! ```text
//! u8 version (1)   u32 total length   u32 bar count n
//! u8 price decimals p   u8 amount decimals a   u8 volume step (0: shares, 2: lots of 100)
//! u8 source count s   s × (u8 length, UTF-8 name)
//! n × bar, each a run of LEB128 varints (z = zigzag for signed values):
//!   minutes since the previous bar's end (the first: since 2000-01-01 00:00)
//!   flags: source index << 1 | amount known
//!   z(open − previous close)   z(close − open)   high − max(open, close)
//!   min(open, close) − low     volume / 10^step
//!   [z(amount − volume × (open + high + low + close) / 4), when the amount is known]
//! u64 checksum of every byte before it
//! ```
//!
//! Prices are integers of 10^-p yuan and amounts of 10^-a yuan, `p` and `a` the fewest
//! decimals that give every value of the series back bit for bit (at most 6 and 2; values
//! finer than that are rounded to them, which no vendor sends). Neighbouring bars differ by
//! little, so a 60-minute bar of a ¥1,500 stock takes ~15 bytes and a 5-minute bar of a ¥10
//! stock ~9.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};
use serde::{Deserialize, Serialize};
use sqlx::{Row, SqlitePool};

use crate::series::checksum;

pub const VERSION: u8 = 1;
const MAX_PRICE_DECIMALS: u8 = 6;
const MAX_AMOUNT_DECIMALS: u8 = 2;
const POW10: [f64; 7] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6];

/// A minute bar period.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
pub enum MinutePeriod {
    #[serde(rename = "5m")]
    M5,
    #[serde(rename = "15m")]
    M15,
    #[serde(rename = "30m")]
    M30,
    #[serde(rename = "60m")]
    M60,
}

impl MinutePeriod {
    pub const ALL: [MinutePeriod; 4] = [
        MinutePeriod::M5,
        MinutePeriod::M15,
        MinutePeriod::M30,
        MinutePeriod::M60,
    ];

    pub fn minutes(self) -> u16 {
        match self {
            MinutePeriod::M5 => 5,
            MinutePeriod::M15 => 15,
            MinutePeriod::M30 => 30,
            MinutePeriod::M60 => 60,
        }
    }

    /// `5m`, `15m`, `30m`, `60m`.
    pub fn label(self) -> &'static str {
        match self {
            MinutePeriod::M5 => "5m",
            MinutePeriod::M15 => "15m",
            MinutePeriod::M30 => "30m",
            MinutePeriod::M60 => "60m",
        }
    }

    /// `60m`, `60`, `m60` or `60min`; anything else is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim().to_ascii_lowercase();
        let t = t.trim_start_matches('m');
        let t = t.trim_end_matches("min").trim_end_matches('m');
        MinutePeriod::ALL
            .into_iter()
            .find(|p| t == p.minutes().to_string())
    }

    fn from_minutes(m: i64) -> Option<Self> {
        MinutePeriod::ALL
            .into_iter()
            .find(|p| i64::from(p.minutes()) == m)
    }
}

impl std::fmt::Display for MinutePeriod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// One closed minute bar, unadjusted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct MinuteBar {
    /// When the bar ended, Beijing time, as `YYYYMMDDHHMM` (202412021030).
    #[specta(type = f64)]
    pub time: u64,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
    /// Shares.
    pub volume: f64,
    /// CNY; `None` when the source gave none (Tencent).
    pub amount: Option<f64>,
}

impl MinuteBar {
    /// `YYYYMMDD` of the bar.
    pub fn date(&self) -> u32 {
        (self.time / 10_000) as u32
    }
    /// `HHMM` of the bar's end.
    pub fn hhmm(&self) -> u16 {
        (self.time % 10_000) as u16
    }

    /// Why the bar cannot be used, or `None`.
    pub fn problem(&self) -> Option<String> {
        let prices = [self.open, self.high, self.low, self.close];
        if prices.iter().any(|p| !p.is_finite() || *p <= 0.0) {
            return Some("a price is not positive".into());
        }
        if self.high < self.open.max(self.close) || self.low > self.open.min(self.close) {
            return Some(format!(
                "high {} / low {} do not contain open {} and close {}",
                self.high, self.low, self.open, self.close
            ));
        }
        if !self.volume.is_finite() || self.volume < 0.0 {
            return Some("volume is negative".into());
        }
        if self.amount.is_some_and(|a| !a.is_finite() || a < 0.0) {
            return Some("amount is negative".into());
        }
        if to_datetime(self.time).is_none() {
            return Some(format!("time {} is not a date and time", self.time));
        }
        None
    }
}

/// `YYYYMMDDHHMM` as a date and time.
pub fn to_datetime(time: u64) -> Option<NaiveDateTime> {
    let date = u32::try_from(time / 10_000).ok()?;
    let hhmm = time % 10_000;
    crate::date::from_yyyymmdd(date)?.and_hms_opt((hhmm / 100) as u32, (hhmm % 100) as u32, 0)
}

/// A date and time as `YYYYMMDDHHMM`.
pub fn from_datetime(t: NaiveDateTime) -> u64 {
    u64::from(crate::date::to_yyyymmdd(t.date())) * 10_000
        + u64::from(t.hour()) * 100
        + u64::from(t.minute())
}

/// `2024-12-02 10:30`.
pub fn time_label(time: u64) -> String {
    format!(
        "{} {:02}:{:02}",
        crate::date::iso((time / 10_000) as u32),
        (time % 10_000) / 100,
        time % 100
    )
}

fn epoch_days() -> i64 {
    NaiveDate::from_ymd_opt(2000, 1, 1).map_or(730_119, |d| i64::from(d.num_days_from_ce()))
}

fn to_minutes(time: u64) -> Option<i64> {
    let t = to_datetime(time)?;
    let days = i64::from(t.date().num_days_from_ce()) - epoch_days();
    Some(days * 1440 + i64::from(t.hour()) * 60 + i64::from(t.minute()))
}

fn from_minutes(m: i64) -> Option<u64> {
    let days = m.div_euclid(1440) + epoch_days();
    let date = NaiveDate::from_num_days_from_ce_opt(i32::try_from(days).ok()?)?;
    let min = m.rem_euclid(1440);
    Some(u64::from(crate::date::to_yyyymmdd(date)) * 10_000 + (min / 60 * 100 + min % 60) as u64)
}

/// A stock's minute bars of one period, each with its source.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MinuteSeries {
    /// Strictly ascending by time.
    pub bars: Vec<MinuteBar>,
    pub source_of: Vec<u8>,
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MinuteError {
    #[error("stored minute series is truncated ({0} bytes)")]
    Truncated(usize),
    #[error("stored minute series has unknown format version {0}")]
    Version(u8),
    #[error("stored minute series checksum mismatch (damaged on disk)")]
    Checksum,
    #[error("stored minute series is damaged: {0}")]
    Damaged(String),
    #[error("a minute bar at {time} cannot be stored: {why}")]
    BadBar { time: String, why: String },
    #[error("a minute series can hold at most 127 distinct sources")]
    TooManySources,
    #[error("minute bar store: {0}")]
    Db(String),
}

impl From<sqlx::Error> for MinuteError {
    fn from(e: sqlx::Error) -> Self {
        MinuteError::Db(e.to_string())
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// The fewest decimals (≤ `max`) at which every value comes back bit for bit; `max` when
/// none does (then values are rounded to it).
fn decimals(values: impl Iterator<Item = f64> + Clone, max: u8) -> u8 {
    (0..=max)
        .find(|&d| {
            values.clone().all(|v| {
                let int = (v * POW10[usize::from(d)]).round();
                int.abs() < 9.0e15 && int / POW10[usize::from(d)] == v
            })
        })
        .unwrap_or(max)
}

fn to_int(v: f64, d: u8) -> i64 {
    (v * POW10[usize::from(d)]).round() as i64
}

fn from_int(v: i64, d: u8) -> f64 {
    v as f64 / POW10[usize::from(d)]
}

/// The amount (in 10^-a yuan) a bar's volume at its average price would trade: what the
/// stored amount is kept relative to.
fn predicted_amount(vol_shares: i64, ohlc: [i64; 4], p: u8, a: u8) -> i64 {
    let avg4 = i128::from(ohlc.iter().sum::<i64>());
    let num = i128::from(vol_shares) * avg4 * 10i128.pow(u32::from(a));
    let den = 4 * 10i128.pow(u32::from(p));
    i64::try_from(num / den).unwrap_or(0)
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn u8(&mut self) -> Result<u8, MinuteError> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or(MinuteError::Truncated(self.buf.len()))?;
        self.pos += 1;
        Ok(b)
    }
    fn u32(&mut self) -> Result<u32, MinuteError> {
        let s = self
            .buf
            .get(self.pos..self.pos + 4)
            .ok_or(MinuteError::Truncated(self.buf.len()))?;
        self.pos += 4;
        let mut b = [0u8; 4];
        b.copy_from_slice(s);
        Ok(u32::from_le_bytes(b))
    }
    fn varint(&mut self) -> Result<u64, MinuteError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(MinuteError::Damaged("varint longer than 64 bits".into()))
    }
    fn signed(&mut self) -> Result<i64, MinuteError> {
        Ok(unzigzag(self.varint()?))
    }
}

impl MinuteSeries {
    /// Merges `bars` from `source`: a bar at a time already held replaces it.
    pub fn merge(&mut self, bars: &[MinuteBar], source: &str) -> Result<(), MinuteError> {
        for b in bars {
            if let Some(why) = b.problem() {
                return Err(MinuteError::BadBar {
                    time: time_label(b.time),
                    why,
                });
            }
        }
        let src = match self.sources.iter().position(|s| s == source) {
            Some(i) => i,
            None => {
                self.sources.push(source.to_owned());
                self.sources.len() - 1
            }
        };
        let src = u8::try_from(src)
            .ok()
            .filter(|s| *s < 128)
            .ok_or(MinuteError::TooManySources)?;
        let mut by_time: BTreeMap<u64, (MinuteBar, u8)> = self
            .bars
            .iter()
            .zip(&self.source_of)
            .map(|(b, s)| (b.time, (*b, *s)))
            .collect();
        for b in bars {
            by_time.insert(b.time, (*b, src));
        }
        self.bars = by_time.values().map(|(b, _)| *b).collect();
        self.source_of = by_time.values().map(|(_, s)| *s).collect();
        Ok(())
    }

    pub fn encode(&self) -> Result<Vec<u8>, MinuteError> {
        let n = self.bars.len();
        let b = &self.bars;
        let prices = b.iter().flat_map(|x| [x.open, x.high, x.low, x.close]);
        let p = decimals(prices, MAX_PRICE_DECIMALS);
        let a = decimals(b.iter().filter_map(|x| x.amount), MAX_AMOUNT_DECIMALS);
        let lots = b.iter().all(|x| x.volume % 100.0 == 0.0);
        let step: u8 = if lots { 2 } else { 0 };
        let mut out = Vec::with_capacity(16 + n * 16);
        out.push(VERSION);
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.extend_from_slice(&[p, a, step]);
        out.push(self.sources.len() as u8);
        for s in &self.sources {
            let name = &s.as_bytes()[..s.len().min(255)];
            out.push(name.len() as u8);
            out.extend_from_slice(name);
        }
        let mut prev_min = 0i64;
        let mut prev_close = 0i64;
        for (i, bar) in b.iter().enumerate() {
            let m = to_minutes(bar.time).ok_or_else(|| MinuteError::BadBar {
                time: bar.time.to_string(),
                why: "not a date and time".into(),
            })?;
            if i > 0 && m <= prev_min {
                return Err(MinuteError::BadBar {
                    time: time_label(bar.time),
                    why: "times are not strictly ascending".into(),
                });
            }
            put_varint(&mut out, (m - prev_min) as u64);
            prev_min = m;
            let src = self.source_of.get(i).copied().unwrap_or(0);
            put_varint(
                &mut out,
                (u64::from(src) << 1) | u64::from(bar.amount.is_some()),
            );
            let [o, h, l, c] = [bar.open, bar.high, bar.low, bar.close].map(|v| to_int(v, p));
            put_varint(&mut out, zigzag(o - prev_close));
            put_varint(&mut out, zigzag(c - o));
            put_varint(&mut out, (h - o.max(c)).max(0) as u64);
            put_varint(&mut out, (o.min(c) - l).max(0) as u64);
            let vol = bar.volume.round() as i64;
            let vol_units = if lots { vol / 100 } else { vol };
            put_varint(&mut out, vol_units.max(0) as u64);
            if let Some(amount) = bar.amount {
                let pred = predicted_amount(vol, [o, h, l, c], p, a);
                put_varint(&mut out, zigzag(to_int(amount, a) - pred));
            }
            prev_close = c;
        }
        let total = (out.len() + 8) as u32;
        out[1..5].copy_from_slice(&total.to_le_bytes());
        let sum = checksum(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        Ok(out)
    }

    pub fn decode(blob: &[u8]) -> Result<Self, MinuteError> {
        match blob.first() {
            None => return Err(MinuteError::Truncated(0)),
            Some(&VERSION) => {}
            Some(&v) => return Err(MinuteError::Version(v)),
        }
        let mut r = Reader { buf: blob, pos: 1 };
        let total = r.u32()? as usize;
        if total != blob.len() || total < 8 {
            return Err(MinuteError::Truncated(blob.len()));
        }
        let body = total - 8;
        let mut stored = [0u8; 8];
        stored.copy_from_slice(&blob[body..]);
        if checksum(&blob[..body]) != u64::from_le_bytes(stored) {
            return Err(MinuteError::Checksum);
        }
        r.buf = &blob[..body];
        let n = r.u32()? as usize;
        // every bar takes at least seven bytes: a larger count is damage
        if n > body {
            return Err(MinuteError::Truncated(blob.len()));
        }
        let (p, a, step) = (r.u8()?, r.u8()?, r.u8()?);
        if p > MAX_PRICE_DECIMALS || a > MAX_AMOUNT_DECIMALS || (step != 0 && step != 2) {
            return Err(MinuteError::Damaged("bad scale byte".into()));
        }
        let count = r.u8()?;
        let mut sources = Vec::with_capacity(usize::from(count));
        for _ in 0..count {
            let len = usize::from(r.u8()?);
            let bytes = r
                .buf
                .get(r.pos..r.pos + len)
                .ok_or(MinuteError::Truncated(blob.len()))?;
            r.pos += len;
            sources.push(
                String::from_utf8(bytes.to_vec())
                    .map_err(|_| MinuteError::Damaged("source name".into()))?,
            );
        }
        let mut bars = Vec::with_capacity(n);
        let mut source_of = Vec::with_capacity(n);
        let (mut min, mut prev_close) = (0i64, 0i64);
        for _ in 0..n {
            let delta = r.varint()?;
            if delta == 0 && !bars.is_empty() {
                return Err(MinuteError::Damaged("times out of order".into()));
            }
            min += i64::try_from(delta).map_err(|_| MinuteError::Damaged("time".into()))?;
            let time = from_minutes(min).ok_or_else(|| MinuteError::Damaged("time".into()))?;
            let flags = r.varint()?;
            let src = (flags >> 1) as usize;
            if src >= sources.len() {
                return Err(MinuteError::Damaged(format!("unknown source #{src}")));
            }
            let o = prev_close + r.signed()?;
            let c = o + r.signed()?;
            let h = o.max(c) + r.varint()? as i64;
            let l = o.min(c) - r.varint()? as i64;
            let units = r.varint()? as i64;
            let vol = if step == 2 { units * 100 } else { units };
            let amount = if flags & 1 == 1 {
                let pred = predicted_amount(vol, [o, h, l, c], p, a);
                Some(from_int(pred + r.signed()?, a))
            } else {
                None
            };
            bars.push(MinuteBar {
                time,
                open: from_int(o, p),
                high: from_int(h, p),
                low: from_int(l, p),
                close: from_int(c, p),
                volume: vol as f64,
                amount,
            });
            source_of.push(src as u8);
            prev_close = c;
        }
        if r.pos != body {
            return Err(MinuteError::Damaged("bytes after the last bar".into()));
        }
        Ok(MinuteSeries {
            bars,
            source_of,
            sources,
        })
    }
}

/// What the cache holds of one stock at one period.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MinuteCoverage {
    /// `600519`.
    pub code: String,
    pub period: MinutePeriod,
    #[specta(type = f64)]
    pub first_time: u64,
    #[specta(type = f64)]
    pub last_time: u64,
    pub bars: u32,
    /// Size of the stored series: `bytes / bars` is what a bar costs on disk.
    pub bytes: u32,
}

/// How far back a source's reply reached when it was last asked for everything it has.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MinuteReach {
    pub source: String,
    pub period: MinutePeriod,
    /// The stock it was asked about.
    pub code: String,
    #[specta(type = f64)]
    pub earliest: u64,
    #[specta(type = f64)]
    pub latest: u64,
    pub bars: u32,
    /// When it was asked (RFC 3339).
    pub asked_at: String,
}

/// The minute bar tables of `wyckoff.db`.
#[derive(Debug, Clone)]
pub struct MinuteStore {
    pool: SqlitePool,
}

impl MinuteStore {
    /// Over a pool on which this crate's migrations ran.
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// The stored series of `code` (6 digits) at `period`; empty when none.
    pub async fn load(
        &self,
        code: &str,
        period: MinutePeriod,
    ) -> Result<MinuteSeries, MinuteError> {
        let row =
            sqlx::query("SELECT data FROM market_minute_series WHERE code = ?1 AND period = ?2")
                .bind(code)
                .bind(i64::from(period.minutes()))
                .fetch_optional(&self.pool)
                .await?;
        match row {
            None => Ok(MinuteSeries::default()),
            Some(r) => MinuteSeries::decode(&r.get::<Vec<u8>, _>(0)),
        }
    }

    /// Merges `bars` from `source` into the stored series in one transaction; returns how
    /// many bars are new (times the series did not hold).
    pub async fn merge(
        &self,
        code: &str,
        period: MinutePeriod,
        bars: &[MinuteBar],
        source: &str,
    ) -> Result<usize, MinuteError> {
        let mut tx = self.pool.begin().await?;
        let row =
            sqlx::query("SELECT data FROM market_minute_series WHERE code = ?1 AND period = ?2")
                .bind(code)
                .bind(i64::from(period.minutes()))
                .fetch_optional(&mut *tx)
                .await?;
        let mut series = match row {
            None => MinuteSeries::default(),
            Some(r) => MinuteSeries::decode(&r.get::<Vec<u8>, _>(0))?,
        };
        let before = series.bars.len();
        series.merge(bars, source)?;
        let added = series.bars.len() - before;
        let blob = series.encode()?;
        let (first, last) = match (series.bars.first(), series.bars.last()) {
            (Some(f), Some(l)) => (f.time, l.time),
            _ => return Ok(0),
        };
        sqlx::query(
            "INSERT INTO market_minute_series (code, period, first_time, last_time, bars, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(code, period) DO UPDATE SET first_time = excluded.first_time,
               last_time = excluded.last_time, bars = excluded.bars, data = excluded.data",
        )
        .bind(code)
        .bind(i64::from(period.minutes()))
        .bind(first as i64)
        .bind(last as i64)
        .bind(series.bars.len() as i64)
        .bind(blob)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(added)
    }

    /// Every stored series' coverage, by code then period.
    pub async fn coverage(&self) -> Result<Vec<MinuteCoverage>, MinuteError> {
        let rows = sqlx::query(
            "SELECT code, period, first_time, last_time, bars, length(data)
             FROM market_minute_series ORDER BY code, period",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(MinuteCoverage {
                    code: r.get(0),
                    period: MinutePeriod::from_minutes(r.get(1))?,
                    first_time: r.get::<i64, _>(2) as u64,
                    last_time: r.get::<i64, _>(3) as u64,
                    bars: r.get::<i64, _>(4) as u32,
                    bytes: r.get::<i64, _>(5) as u32,
                })
            })
            .collect())
    }

    /// Records how far back `source`'s reply for `code` at `period` reached.
    pub async fn record_reach(&self, reach: &MinuteReach) -> Result<(), MinuteError> {
        sqlx::query(
            "INSERT INTO market_minute_reach (source, period, code, earliest, latest, bars, asked_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(source, period) DO UPDATE SET code = excluded.code,
               earliest = excluded.earliest, latest = excluded.latest, bars = excluded.bars,
               asked_at = excluded.asked_at",
        )
        .bind(&reach.source)
        .bind(i64::from(reach.period.minutes()))
        .bind(&reach.code)
        .bind(reach.earliest as i64)
        .bind(reach.latest as i64)
        .bind(i64::from(reach.bars))
        .bind(&reach.asked_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The last reach seen per source and period.
    pub async fn reaches(&self) -> Result<Vec<MinuteReach>, MinuteError> {
        let rows = sqlx::query(
            "SELECT source, period, code, earliest, latest, bars, asked_at
             FROM market_minute_reach ORDER BY source, period",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(MinuteReach {
                    source: r.get(0),
                    period: MinutePeriod::from_minutes(r.get(1))?,
                    code: r.get(2),
                    earliest: r.get::<i64, _>(3) as u64,
                    latest: r.get::<i64, _>(4) as u64,
                    bars: r.get::<i64, _>(5) as u32,
                    asked_at: r.get(6),
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(time: u64, o: f64, h: f64, l: f64, c: f64, v: f64, a: Option<f64>) -> MinuteBar {
        MinuteBar {
            time,
            open: o,
            high: h,
            low: l,
            close: c,
            volume: v,
            amount: a,
        }
    }

    #[test]
    fn periods_parse() {
        for (t, p) in [
            ("60m", Some(MinutePeriod::M60)),
            ("m5", Some(MinutePeriod::M5)),
            ("15", Some(MinutePeriod::M15)),
            ("30min", Some(MinutePeriod::M30)),
            ("1m", None),
            ("day", None),
            ("", None),
        ] {
            assert_eq!(MinutePeriod::parse(t), p, "{t}");
        }
    }

    #[test]
    fn minutes_round_trip_across_days_and_years() {
        for t in [
            200_001_010_000,
            202_412_021_030,
            202_412_311_500,
            202_501_020_935,
        ] {
            assert_eq!(from_minutes(to_minutes(t).unwrap()), Some(t));
        }
        assert_eq!(to_minutes(202_413_011_030), None);
    }

    #[test]
    fn series_round_trips_bit_for_bit_with_mixed_sources() {
        let mut s = MinuteSeries::default();
        let em = [
            bar(
                202_412_021_030,
                1520.0,
                1525.5,
                1518.01,
                1522.88,
                345_600.0,
                Some(525_812_345.0),
            ),
            bar(
                202_412_021_130,
                1522.88,
                1523.0,
                1510.0,
                1511.1,
                210_000.0,
                Some(318_000_000.5),
            ),
        ];
        let tx = [
            bar(
                202_412_021_400,
                1511.0,
                1512.0,
                1500.0,
                1501.0,
                123_456.0,
                None,
            ),
            bar(202_412_031_030, 9.87, 9.99, 9.8, 9.9, 1.0, None),
        ];
        s.merge(&em, "eastmoney").unwrap();
        s.merge(&tx, "tencent").unwrap();
        let blob = s.encode().unwrap();
        let back = MinuteSeries::decode(&blob).unwrap();
        assert_eq!(back, s);
        for (a, b) in back.bars.iter().zip(&s.bars) {
            assert_eq!(a.close.to_bits(), b.close.to_bits());
            assert_eq!(a.amount.map(f64::to_bits), b.amount.map(f64::to_bits));
        }
        assert_eq!(back.sources, ["eastmoney", "tencent"]);
        assert_eq!(back.source_of, [0, 0, 1, 1]);
        // a later fetch of the same time replaces it
        s.merge(
            &[bar(
                202_412_021_400,
                1511.0,
                1513.0,
                1500.0,
                1502.0,
                1.0,
                None,
            )],
            "eastmoney",
        )
        .unwrap();
        assert_eq!(s.bars.len(), 4);
        assert_eq!(s.bars[2].close, 1502.0);
        assert_eq!(s.source_of[2], 0);
    }

    #[test]
    fn damage_is_refused() {
        let mut s = MinuteSeries::default();
        s.merge(
            &[bar(
                202_412_021_030,
                10.0,
                10.5,
                9.5,
                10.2,
                100.0,
                Some(1020.0),
            )],
            "x",
        )
        .unwrap();
        let blob = s.encode().unwrap();
        let mut bad = blob.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x40;
        assert_eq!(MinuteSeries::decode(&bad), Err(MinuteError::Checksum));
        assert!(matches!(
            MinuteSeries::decode(&blob[..blob.len() - 1]),
            Err(MinuteError::Truncated(_))
        ));
        let mut v9 = blob;
        v9[0] = 9;
        assert_eq!(MinuteSeries::decode(&v9), Err(MinuteError::Version(9)));
    }

    #[test]
    fn impossible_bars_are_refused_by_name() {
        let mut s = MinuteSeries::default();
        let err = s
            .merge(
                &[bar(202_412_021_030, 10.0, 9.0, 9.5, 10.2, 100.0, None)],
                "x",
            )
            .unwrap_err();
        assert!(err.to_string().contains("2024-12-02 10:30"), "{err}");
        assert!(s.bars.is_empty());
    }
}
