//! One stock's (or index's) whole bar history as a single columnar BLOB, so reading the
//! whole market back is one row per stock instead of one row per bar.
//!
//! Layout (all little-endian), version 1:
//!
//! ```text
//! u8  version (1)          u32 bar count n          u8 flags (bit 0: turnover column)
//! u8  source count s       s × (u16 length, UTF-8 name)
//! n × u32 date             n × f64 open, high, low, close, volume, amount (NaN = unknown)
//! [n × f64 turnover (NaN = unknown)]                 n × u8 source index
//! u64 checksum of every byte before it
//! ```
//!
//! Version 2 (written since; version 1 is still read) stores every column losslessly in
//! as few bytes as it allows, ~20–30 bytes a bar instead of ~53:
//!
//! ```text
//! u8  version (2)          u32 total length          u32 bar count n
//! u8  source count s       s × (u16 length, UTF-8 name)
//! 11 columns: date, open, high, low, close, volume, amount, amount known (0/1),
//!   turnover known (0/1), turnover (0 when unknown), source index; each column is
//!   u8 tag 0: i8 exponent e, i64 base, u8 width w, n × w-byte offsets:
//!             value = (base + offset) / 10^e  (× 10^-e when e < 0), exact to the bit
//!   u8 tag 1: n × f64 (a column no exponent represents exactly, e.g. NaN or -0.0)
//! u64 checksum of every byte before it
//! ```
//!
//! Version 3 (written since) is version 2 with one byte after the source names: the
//! version of the bar sanity rules (`sanity::RULES`) every bar passed when the series was
//! written, or 0 when some bar did not. The checksum seals it, so no read checks the bars of
//! a series sealed under today's rules again, and a read that wants only the last bars
//! decodes just the dates of the older ones (still in order); a series sealed under other
//! rules, or not at all, is decoded and checked in full.
//!
//! Version 4 (written since) is version 3 with a 12th column after the source index: each
//! bar's unadjusted close as its source gave it, 0 when unknown (a series stored before
//! version 4, bars imported or bundled without one, or a raw fetch that failed). Forward
//! adjustment is re-based after every dividend, so the adjusted columns of past days change;
//! a day's unadjusted close never does, which is why it is the raw close that is kept, not a
//! factor relative to today's base (that factor is `close / raw_close` of the same bar).
//! Versions 1 to 3 read back with every raw close unknown.
//!
//! A blob whose length, checksum, version, source index or date order is wrong is
//! rejected as a whole: its bars are never handed out.

use wyckoff_engine::Bar;

pub const VERSION: u8 = 4;
const VERSION_3: u8 = 3;
const VERSION_2: u8 = 2;
const VERSION_1: u8 = 1;
const TAG_INT: u8 = 0;
const TAG_F64: u8 = 1;
/// Decimal exponents tried for a column, most compact first after exact integers.
const EXPONENTS: [i8; 11] = [0, 1, 2, 3, 4, 5, 6, -1, -2, -3, -4];
const POW10: [f64; 7] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6];
const FLAG_TURNOVER: u8 = 1;
const F64_COLUMNS: usize = 6;

/// What a decode can tell its reader beyond the bars.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Decoded {
    /// Leading bars of which only the dates were decoded.
    pub dates_only: usize,
    /// Every bar passed today's sanity rules ([`crate::sanity::RULES`]) when the series
    /// was sealed, and the checksum says it is as sealed: no bar needs checking again.
    pub sound: bool,
}

/// Bars plus, per bar, an index into `sources` (where the bar came from).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub bars: Vec<Bar>,
    /// Per bar: false when the source gave no traded amount (`bar.amount` is 0.0 then).
    pub amount_known: Vec<bool>,
    pub source_of: Vec<u8>,
    pub sources: Vec<String>,
    /// Per bar: the unadjusted close its source gave (always positive), `None` when unknown.
    pub raw_close: Vec<Option<f64>>,
}

/// A usable unadjusted close: positive and finite (anything else is unknown, not zero).
fn usable_raw(v: f64) -> Option<f64> {
    (v.is_finite() && v > 0.0).then_some(v)
}

/// The raw close on `date` in `raw` (sorted by date), if any.
fn raw_on(raw: &[(u32, f64)], date: u32) -> Option<f64> {
    raw.binary_search_by_key(&date, |(d, _)| *d)
        .ok()
        .and_then(|i| usable_raw(raw[i].1))
}

/// `raw` sorted by date, the last of a date winning.
fn sorted_raw(raw: &[(u32, f64)]) -> Vec<(u32, f64)> {
    let mut out = raw.to_vec();
    out.sort_by_key(|(d, _)| *d);
    out.reverse();
    out.dedup_by_key(|(d, _)| *d);
    out.reverse();
    out
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeriesError {
    #[error("stored series is empty or truncated ({0} bytes)")]
    Truncated(usize),
    #[error("stored series has unknown format version {0}")]
    Version(u8),
    #[error("stored series length is {got} bytes, its header says {want}")]
    Length { got: usize, want: usize },
    #[error("stored series checksum mismatch (damaged on disk)")]
    Checksum,
    #[error("stored series names an unknown source #{0}")]
    SourceIndex(u8),
    #[error("stored series has a source name that is not UTF-8")]
    SourceName,
    #[error("stored series dates are not strictly ascending at {0}")]
    Order(u32),
    #[error("stored series has an unknown column encoding {0}")]
    Column(u8),
    #[error("a series can hold at most 255 distinct sources")]
    TooManySources,
}

impl Series {
    /// Merges `bars` (ascending or not) into the series; a bar on an existing date
    /// replaces it. `amount_known == false` marks every new bar's amount as unknown. A
    /// replaced bar's raw close is kept: see [`Series::merge_with_raw`].
    pub fn merge(
        &mut self,
        bars: &[Bar],
        source: &str,
        amount_known: bool,
    ) -> Result<(), SeriesError> {
        self.merge_with_raw(bars, &[], source, amount_known)
    }

    /// [`Series::merge`] with the unadjusted closes `raw` (date, close; any order) that
    /// came with `bars`. A new bar takes its raw close from `raw`, else keeps the one its
    /// date already had: a day's unadjusted close does not change when the adjusted prices
    /// are re-based or come from elsewhere.
    pub fn merge_with_raw(
        &mut self,
        bars: &[Bar],
        raw: &[(u32, f64)],
        source: &str,
        amount_known: bool,
    ) -> Result<(), SeriesError> {
        let raw = sorted_raw(raw);
        let src = match self.sources.iter().position(|s| s == source) {
            Some(i) => i,
            None => {
                self.sources.push(source.to_string());
                self.sources.len() - 1
            }
        };
        let src = u8::try_from(src).map_err(|_| SeriesError::TooManySources)?;
        let mut incoming: Vec<Bar> = bars.to_vec();
        crate::sanity::sort_dedup(&mut incoming);
        let old_bars = std::mem::take(&mut self.bars);
        let old_known = std::mem::take(&mut self.amount_known);
        let old_src = std::mem::take(&mut self.source_of);
        let mut old_raw = std::mem::take(&mut self.raw_close);
        // a series decoded from an older layout may not have the column yet
        old_raw.resize(old_bars.len(), None);
        let cap = old_bars.len() + incoming.len();
        self.bars.reserve(cap);
        self.amount_known.reserve(cap);
        self.source_of.reserve(cap);
        self.raw_close.reserve(cap);
        let (mut i, mut j) = (0, 0);
        while i < old_bars.len() || j < incoming.len() {
            let mut replaced_raw = None;
            let take_new = match (old_bars.get(i), incoming.get(j)) {
                (Some(o), Some(n)) => {
                    if o.date == n.date {
                        replaced_raw = old_raw[i];
                        i += 1; // replaced by the new bar
                    }
                    n.date <= o.date
                }
                (None, Some(_)) => true,
                _ => false,
            };
            if take_new {
                let mut bar = incoming[j];
                if !amount_known {
                    // an unknown amount reads back as 0.0, never as a guess
                    bar.amount = 0.0;
                }
                self.raw_close.push(raw_on(&raw, bar.date).or(replaced_raw));
                self.bars.push(bar);
                self.amount_known.push(amount_known);
                self.source_of.push(src);
                j += 1;
            } else {
                self.bars.push(old_bars[i]);
                self.amount_known.push(old_known[i]);
                self.source_of.push(old_src[i]);
                self.raw_close.push(old_raw[i]);
                i += 1;
            }
        }
        self.drop_unused_sources();
        Ok(())
    }

    /// The series `bars` make on their own (what a re-based refetch stores: never two
    /// adjustment bases in one series), keeping the raw closes this one had on their dates
    /// unless `raw` gives them.
    pub fn replaced_by(
        &self,
        bars: &[Bar],
        raw: &[(u32, f64)],
        source: &str,
        amount_known: bool,
    ) -> Result<Series, SeriesError> {
        let mut kept = self.raw_closes();
        kept.extend(sorted_raw(raw));
        let mut out = Series::default();
        out.merge_with_raw(bars, &kept, source, amount_known)?;
        Ok(out)
    }

    /// Sets the raw close of each bar whose date `raw` names (a later fetch of the same
    /// day wins); returns how many bars got one. Dates without a bar are ignored.
    pub fn attach_raw(&mut self, raw: &[(u32, f64)]) -> usize {
        self.raw_close.resize(self.bars.len(), None);
        let mut set = 0;
        for (date, close) in sorted_raw(raw) {
            let Some(close) = usable_raw(close) else {
                continue;
            };
            if let Ok(i) = self.bars.binary_search_by_key(&date, |b| b.date) {
                self.raw_close[i] = Some(close);
                set += 1;
            }
        }
        set
    }

    /// The known raw closes, (date, close) ascending.
    pub fn raw_closes(&self) -> Vec<(u32, f64)> {
        self.bars
            .iter()
            .zip(&self.raw_close)
            .filter_map(|(b, r)| r.map(|r| (b.date, r)))
            .collect()
    }

    /// Keeps only the bars dated on or before `end`.
    pub fn truncate_after(&mut self, end: u32) {
        let n = self.bars.partition_point(|b| b.date <= end);
        self.bars.truncate(n);
        self.amount_known.truncate(n);
        self.source_of.truncate(n);
        self.raw_close.truncate(n);
    }

    fn drop_unused_sources(&mut self) {
        let mut used = vec![false; self.sources.len()];
        for s in &self.source_of {
            if let Some(u) = used.get_mut(usize::from(*s)) {
                *u = true;
            }
        }
        if used.iter().all(|u| *u) {
            return;
        }
        let mut remap = vec![0u8; self.sources.len()];
        let mut kept = Vec::new();
        for (i, name) in self.sources.iter().enumerate() {
            if used[i] {
                remap[i] = kept.len() as u8;
                kept.push(name.clone());
            }
        }
        for s in &mut self.source_of {
            *s = remap[usize::from(*s)];
        }
        self.sources = kept;
    }

    /// The version-1 layout (f64 columns); only tests and the migration test write it.
    pub fn encode_v1(&self) -> Vec<u8> {
        let n = self.bars.len();
        let turnover = self.bars.iter().any(|b| b.turnover.is_some());
        let cols = F64_COLUMNS + usize::from(turnover);
        let names: usize = self.sources.iter().map(|s| 2 + s.len()).sum();
        let mut out = Vec::with_capacity(7 + names + n * (4 + 8 * cols + 1) + 8);
        out.push(VERSION_1);
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.push(if turnover { FLAG_TURNOVER } else { 0 });
        out.push(self.sources.len() as u8);
        for s in &self.sources {
            out.extend_from_slice(&(s.len().min(usize::from(u16::MAX)) as u16).to_le_bytes());
            out.extend_from_slice(&s.as_bytes()[..s.len().min(usize::from(u16::MAX))]);
        }
        for b in &self.bars {
            out.extend_from_slice(&b.date.to_le_bytes());
        }
        let column = |out: &mut Vec<u8>, f: &dyn Fn(usize) -> f64| {
            for i in 0..n {
                out.extend_from_slice(&f(i).to_le_bytes());
            }
        };
        let b = &self.bars;
        column(&mut out, &|i| b[i].open);
        column(&mut out, &|i| b[i].high);
        column(&mut out, &|i| b[i].low);
        column(&mut out, &|i| b[i].close);
        column(&mut out, &|i| b[i].volume);
        column(&mut out, &|i| {
            if self.amount_known[i] {
                b[i].amount
            } else {
                f64::NAN
            }
        });
        if turnover {
            column(&mut out, &|i| b[i].turnover.unwrap_or(f64::NAN));
        }
        out.extend_from_slice(&self.source_of);
        let sum = checksum(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    pub fn decode(blob: &[u8]) -> Result<Self, SeriesError> {
        Ok(Self::decode_sealed(blob)?.0)
    }

    /// [`Series::decode`], and whether the series was sealed as sound under today's sanity
    /// rules (see [`Decoded::sound`]).
    pub fn decode_sealed(blob: &[u8]) -> Result<(Self, bool), SeriesError> {
        let mut series = Series::default();
        let decoded = series.decode_tail_into(blob, None, usize::MAX)?;
        Ok((series, decoded.sound))
    }

    /// [`Series::decode`] into this series' buffers, reusing their memory (a whole-market
    /// read that keeps only each stock's tail decodes every series into one scratch series
    /// per thread), for a read that wants only the last `keep` bars dated on or before
    /// `as_of`: when the blob is sealed as sound under today's sanity rules, the bars
    /// before those have only their dates decoded. On error the contents are unspecified.
    pub fn decode_tail_into(
        &mut self,
        blob: &[u8],
        as_of: Option<u32>,
        keep: usize,
    ) -> Result<Decoded, SeriesError> {
        match blob.first() {
            None => Err(SeriesError::Truncated(0)),
            Some(&VERSION) => self.decode_v2(blob, Layout::V4, as_of, keep),
            Some(&VERSION_3) => self.decode_v2(blob, Layout::V3, as_of, keep),
            Some(&VERSION_2) => self.decode_v2(blob, Layout::V2, as_of, keep),
            Some(&VERSION_1) => {
                *self = Self::decode_v1(blob)?;
                Ok(Decoded::default())
            }
            Some(&v) => Err(SeriesError::Version(v)),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let n = self.bars.len();
        let mut out = Vec::with_capacity(16 + n * 32);
        out.push(VERSION);
        out.extend_from_slice(&0u32.to_le_bytes()); // total length, filled in below
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.push(self.sources.len() as u8);
        for s in &self.sources {
            out.extend_from_slice(&(s.len().min(usize::from(u16::MAX)) as u16).to_le_bytes());
            out.extend_from_slice(&s.as_bytes()[..s.len().min(usize::from(u16::MAX))]);
        }
        let sound = self
            .bars
            .iter()
            .all(|b| crate::sanity::check_bar(b).is_none());
        out.push(if sound { crate::sanity::RULES } else { 0 });
        let b = &self.bars;
        let mut col = Vec::with_capacity(n);
        let mut put = |out: &mut Vec<u8>, f: &dyn Fn(usize) -> f64| {
            col.clear();
            col.extend((0..n).map(f));
            encode_column(out, &col);
        };
        put(&mut out, &|i| f64::from(b[i].date));
        put(&mut out, &|i| b[i].open);
        put(&mut out, &|i| b[i].high);
        put(&mut out, &|i| b[i].low);
        put(&mut out, &|i| b[i].close);
        put(&mut out, &|i| b[i].volume);
        put(&mut out, &|i| {
            if self.amount_known[i] {
                b[i].amount
            } else {
                0.0
            }
        });
        put(&mut out, &|i| f64::from(u8::from(self.amount_known[i])));
        put(&mut out, &|i| f64::from(u8::from(b[i].turnover.is_some())));
        put(&mut out, &|i| b[i].turnover.unwrap_or(0.0));
        put(&mut out, &|i| f64::from(self.source_of[i]));
        // 0 = unknown; a series built by hand may lack the column
        put(&mut out, &|i| {
            self.raw_close
                .get(i)
                .copied()
                .flatten()
                .and_then(usable_raw)
                .unwrap_or(0.0)
        });
        let total = (out.len() + 8) as u32;
        out[1..5].copy_from_slice(&total.to_le_bytes());
        let sum = checksum(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Versions 2 to 4 (see [`Layout`]); see [`Series::decode_tail_into`] for `as_of`,
    /// `keep` and what it returns.
    fn decode_v2(
        &mut self,
        blob: &[u8],
        layout: Layout,
        as_of: Option<u32>,
        keep: usize,
    ) -> Result<Decoded, SeriesError> {
        let sealed = layout != Layout::V2;
        let mut r = Reader { buf: blob, pos: 1 };
        let want = r.u32()? as usize;
        if blob.len() != want {
            return Err(SeriesError::Length {
                got: blob.len(),
                want,
            });
        }
        let body = want.checked_sub(8).ok_or(SeriesError::Truncated(want))?;
        let mut stored = [0u8; 8];
        stored.copy_from_slice(&blob[body..]);
        if checksum(&blob[..body]) != u64::from_le_bytes(stored) {
            return Err(SeriesError::Checksum);
        }
        r.buf = &blob[..body];
        let n = r.u32()? as usize;
        // Strictly ascending dates take at least a byte a bar: a larger count is damage,
        // refused before anything is allocated for it.
        if n > body {
            return Err(SeriesError::Truncated(blob.len()));
        }
        let source_count = r.u8()?;
        let Series {
            bars,
            amount_known,
            source_of,
            sources,
            raw_close,
        } = self;
        sources.clear();
        for _ in 0..source_count {
            let len = usize::from(r.u16()?);
            let bytes = r.take(len)?;
            sources.push(String::from_utf8(bytes.to_vec()).map_err(|_| SeriesError::SourceName)?);
        }
        let sound = sealed && r.u8()? == crate::sanity::RULES;
        // Each column is written straight into its field: no column is buffered, since
        // reading the whole market decodes millions of bars.
        bars.clear();
        bars.resize(
            n,
            Bar {
                date: 0,
                open: 0.0,
                high: 0.0,
                low: 0.0,
                close: 0.0,
                volume: 0.0,
                amount: 0.0,
                turnover: None,
            },
        );
        let mut bad_date = None;
        let mut prev = 0u32;
        decode_column(&mut r, n, 0, |i, v| {
            let d = v as u32;
            if bad_date.is_none() && (f64::from(d) != v || (i > 0 && d <= prev)) {
                bad_date = Some(d);
            }
            prev = d;
            bars[i].date = d;
        })?;
        if let Some(d) = bad_date {
            return Err(SeriesError::Order(d));
        }
        // sealed sound: the bars before the wanted ones are neither decoded nor checked
        let from = match sound {
            true => as_of
                .map_or(n, |a| bars.partition_point(|b| b.date <= a))
                .saturating_sub(keep),
            false => 0,
        };
        decode_column(&mut r, n, from, |i, v| bars[i].open = v)?;
        decode_column(&mut r, n, from, |i, v| bars[i].high = v)?;
        decode_column(&mut r, n, from, |i, v| bars[i].low = v)?;
        decode_column(&mut r, n, from, |i, v| bars[i].close = v)?;
        decode_column(&mut r, n, from, |i, v| bars[i].volume = v)?;
        decode_column(&mut r, n, from, |i, v| bars[i].amount = v)?;
        amount_known.clear();
        amount_known.resize(n, false);
        decode_column(&mut r, n, from, |i, v| amount_known[i] = v != 0.0)?;
        // the flag column marks the bars that have one; the next column fills them in
        decode_column(&mut r, n, from, |i, v| {
            bars[i].turnover = (v != 0.0).then_some(0.0);
        })?;
        decode_column(&mut r, n, from, |i, v| {
            if let Some(t) = &mut bars[i].turnover {
                *t = v;
            }
        })?;
        source_of.clear();
        source_of.resize(n, 0);
        let mut bad_source = None;
        decode_column(&mut r, n, 0, |i, v| {
            let s = v as u8;
            if f64::from(s) != v || usize::from(s) >= sources.len() {
                bad_source.get_or_insert(s);
            }
            source_of[i] = s;
        })?;
        if let Some(s) = bad_source {
            return Err(SeriesError::SourceIndex(s));
        }
        raw_close.clear();
        raw_close.resize(n, None);
        if layout == Layout::V4 {
            decode_column(&mut r, n, from, |i, v| raw_close[i] = usable_raw(v))?;
        }
        if r.pos != body {
            return Err(SeriesError::Length {
                got: blob.len(),
                want: r.pos + 8,
            });
        }
        Ok(Decoded {
            dates_only: from,
            sound,
        })
    }

    fn decode_v1(blob: &[u8]) -> Result<Self, SeriesError> {
        let mut r = Reader { buf: blob, pos: 1 };
        let n = r.u32()? as usize;
        let flags = r.u8()?;
        let source_count = r.u8()?;
        let mut sources = Vec::with_capacity(usize::from(source_count));
        for _ in 0..source_count {
            let len = usize::from(r.u16()?);
            let bytes = r.take(len)?;
            sources.push(String::from_utf8(bytes.to_vec()).map_err(|_| SeriesError::SourceName)?);
        }
        let turnover = flags & FLAG_TURNOVER != 0;
        let cols = F64_COLUMNS + usize::from(turnover);
        let want = r.pos + n * (4 + 8 * cols + 1) + 8;
        if blob.len() != want {
            return Err(SeriesError::Length {
                got: blob.len(),
                want,
            });
        }
        let body = want - 8;
        let mut stored = [0u8; 8];
        stored.copy_from_slice(&blob[body..]);
        if checksum(&blob[..body]) != u64::from_le_bytes(stored) {
            return Err(SeriesError::Checksum);
        }
        let dates = r.take(n * 4)?;
        let mut f64col = || r.take(n * 8);
        let (open, high, low, close, volume, amount) = (
            f64col()?,
            f64col()?,
            f64col()?,
            f64col()?,
            f64col()?,
            f64col()?,
        );
        let turn = if turnover { Some(r.take(n * 8)?) } else { None };
        let source_of = r.take(n)?.to_vec();
        if let Some(bad) = source_of.iter().find(|s| usize::from(**s) >= sources.len()) {
            return Err(SeriesError::SourceIndex(*bad));
        }
        let at8 = |col: &[u8], i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&col[i * 8..i * 8 + 8]);
            f64::from_le_bytes(b)
        };
        let mut bars = Vec::with_capacity(n);
        let mut amount_known = Vec::with_capacity(n);
        let mut prev = 0u32;
        for i in 0..n {
            let mut d = [0u8; 4];
            d.copy_from_slice(&dates[i * 4..i * 4 + 4]);
            let date = u32::from_le_bytes(d);
            if i > 0 && date <= prev {
                return Err(SeriesError::Order(date));
            }
            prev = date;
            let amt = at8(amount, i);
            amount_known.push(!amt.is_nan());
            bars.push(Bar {
                date,
                open: at8(open, i),
                high: at8(high, i),
                low: at8(low, i),
                close: at8(close, i),
                volume: at8(volume, i),
                amount: if amt.is_nan() { 0.0 } else { amt },
                turnover: turn.map(|t| at8(t, i)).filter(|t| !t.is_nan()),
            });
        }
        Ok(Series {
            raw_close: vec![None; bars.len()],
            bars,
            amount_known,
            source_of,
            sources,
        })
    }
}

/// The column layouts that share [`Series::decode_v2`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// No sanity byte, no raw closes.
    V2,
    /// The sanity byte.
    V3,
    /// The sanity byte and the raw close column.
    V4,
}

/// `x` stored as `int` with exponent `e`, computed the one way the decoder computes it.
fn scaled(int: i64, e: i8) -> f64 {
    if e >= 0 {
        int as f64 / POW10[e as usize]
    } else {
        int as f64 * POW10[e.unsigned_abs() as usize]
    }
}

/// The integers of `col` at exponent `e`, when every value comes back bit for bit.
fn as_ints(col: &[f64], e: i8, out: &mut Vec<i64>) -> bool {
    out.clear();
    for &v in col {
        let x = if e >= 0 {
            v * POW10[e as usize]
        } else {
            v / POW10[e.unsigned_abs() as usize]
        };
        let int = x.round();
        // within ±2^53 the integer is exact in an f64
        if int.is_nan() || int.abs() >= 9.0e15 {
            return false;
        }
        let int = int as i64;
        if scaled(int, e).to_bits() != v.to_bits() {
            return false;
        }
        out.push(int);
    }
    true
}

fn encode_column(out: &mut Vec<u8>, col: &[f64]) {
    let mut ints = Vec::with_capacity(col.len());
    let mut best: Option<(i8, i64, u8, Vec<i64>)> = None;
    for e in EXPONENTS {
        // the smallest exact decimal exponent is the narrowest; only coarser steps can beat it
        if e > 0 && best.is_some() {
            continue;
        }
        if !as_ints(col, e, &mut ints) {
            // a negative exponent only helps while the coarser step is still exact
            if e < 0 && best.is_some() {
                break;
            }
            continue;
        }
        let lo = ints.iter().copied().min().unwrap_or(0);
        let hi = ints.iter().copied().max().unwrap_or(0);
        let range = hi.wrapping_sub(lo) as u64;
        let width = (8 - range.leading_zeros() / 8) as u8;
        if best.as_ref().is_none_or(|b| width < b.2) {
            best = Some((e, lo, width, std::mem::take(&mut ints)));
        }
    }
    match best {
        Some((e, base, width, ints)) => {
            out.push(TAG_INT);
            out.push(e as u8);
            out.extend_from_slice(&base.to_le_bytes());
            out.push(width);
            for i in ints {
                let off = i.wrapping_sub(base) as u64;
                out.extend_from_slice(&off.to_le_bytes()[..usize::from(width)]);
            }
        }
        None => {
            out.push(TAG_F64);
            for v in col {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

/// Decodes one column of `n` values, handing each from index `from` on to `put` with its
/// index (the ones before are skipped, not read).
fn decode_column(
    r: &mut Reader<'_>,
    n: usize,
    from: usize,
    mut put: impl FnMut(usize, f64),
) -> Result<(), SeriesError> {
    match r.u8()? {
        TAG_INT => {
            let e = r.u8()? as i8;
            if e.unsigned_abs() as usize >= POW10.len() {
                return Err(SeriesError::Column(e as u8));
            }
            let b = r.take(8)?;
            let mut base = [0u8; 8];
            base.copy_from_slice(b);
            let base = i64::from_le_bytes(base);
            let width = usize::from(r.u8()?);
            if width > 8 {
                return Err(SeriesError::Column(width as u8));
            }
            let bytes = r.take(n * width)?;
            let value = |off: u64| scaled(base.wrapping_add(off as i64), e);
            match width {
                0 => {
                    let v = value(0);
                    (from..n).for_each(|i| put(i, v));
                }
                1 => bytes
                    .iter()
                    .enumerate()
                    .skip(from)
                    .for_each(|(i, b)| put(i, value(u64::from(*b)))),
                2 => bytes
                    .chunks_exact(2)
                    .enumerate()
                    .skip(from)
                    .for_each(|(i, c)| {
                        put(i, value(u64::from(u16::from_le_bytes([c[0], c[1]]))));
                    }),
                4 => bytes
                    .chunks_exact(4)
                    .enumerate()
                    .skip(from)
                    .for_each(|(i, c)| {
                        put(
                            i,
                            value(u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
                        );
                    }),
                w => bytes
                    .chunks_exact(w)
                    .enumerate()
                    .skip(from)
                    .for_each(|(i, c)| {
                        let mut v = [0u8; 8];
                        v[..w].copy_from_slice(c);
                        put(i, value(u64::from_le_bytes(v)));
                    }),
            }
        }
        TAG_F64 => r
            .take(n * 8)?
            .chunks_exact(8)
            .enumerate()
            .skip(from)
            .for_each(|(i, c)| {
                let mut v = [0u8; 8];
                v.copy_from_slice(c);
                put(i, f64::from_le_bytes(v));
            }),
        tag => return Err(SeriesError::Column(tag)),
    }
    Ok(())
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SeriesError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or(SeriesError::Truncated(self.buf.len()))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, SeriesError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, SeriesError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, SeriesError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// A fast 64-bit checksum over 8-byte words (detects damage; not cryptographic).
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = 0xCBF2_9CE4_8422_2325 ^ (bytes.len() as u64);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(b)).wrapping_mul(K).rotate_left(29);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(K).rotate_left(29);
    }
    h ^ (h >> 32)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn bar(date: u32, close: f64, turnover: Option<f64>) -> Bar {
        Bar {
            date,
            open: close,
            high: close + 1.0,
            low: close - 1.0,
            close,
            volume: 1000.0,
            amount: close * 1000.0,
            turnover,
        }
    }

    fn sample() -> Series {
        let mut s = Series::default();
        s.merge(
            &[bar(20240102, 10.0, None), bar(20240103, 11.0, None)],
            "bundled",
            false,
        )
        .unwrap();
        s.merge(
            &[bar(20240103, 11.5, Some(1.2)), bar(20240104, 12.0, None)],
            "eastmoney",
            true,
        )
        .unwrap();
        s
    }

    #[test]
    fn merge_replaces_same_dates_and_keeps_order_and_provenance() {
        let s = sample();
        let dates: Vec<u32> = s.bars.iter().map(|b| b.date).collect();
        assert_eq!(dates, [20240102, 20240103, 20240104]);
        assert_eq!(s.bars[1].close, 11.5);
        assert_eq!(s.amount_known, [false, true, true]);
        let src: Vec<&str> = s
            .source_of
            .iter()
            .map(|i| s.sources[*i as usize].as_str())
            .collect();
        assert_eq!(src, ["bundled", "eastmoney", "eastmoney"]);
        // a source whose bars were all replaced is forgotten
        let mut t = s.clone();
        t.merge(&[bar(20240102, 9.0, None)], "tencent", true)
            .unwrap();
        assert_eq!(t.sources, ["eastmoney", "tencent"]);
    }

    #[test]
    fn round_trip_is_exact() {
        let s = sample();
        let back = Series::decode(&s.encode()).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.bars[1].turnover, Some(1.2));
        assert_eq!(back.bars[0].amount, 0.0);
        let empty = Series::default();
        assert_eq!(Series::decode(&empty.encode()).unwrap(), empty);
    }

    #[test]
    fn damaged_blobs_are_rejected() {
        let good = sample().encode();
        let mut flipped = good.clone();
        let mid = good.len() / 2;
        flipped[mid] ^= 0x10;
        let mut version = good.clone();
        version[0] = 9;
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (vec![], "truncated"),
            (good[..good.len() - 3].to_vec(), "length"),
            ([good.clone(), vec![0]].concat(), "length"),
            (flipped, "checksum"),
            (version, "version"),
        ];
        for (blob, want) in cases {
            let err = Series::decode(&blob).unwrap_err().to_string();
            assert!(err.contains(want), "{want}: {err}");
        }
    }

    #[test]
    fn out_of_order_dates_or_bad_source_index_are_rejected_even_with_a_valid_checksum() {
        let mut s = sample();
        s.bars.swap(0, 1);
        assert!(matches!(
            Series::decode(&s.encode()),
            Err(SeriesError::Order(_))
        ));
        let mut s = sample();
        s.source_of[0] = 7;
        assert!(matches!(
            Series::decode(&s.encode()),
            Err(SeriesError::SourceIndex(7))
        ));
    }

    #[test]
    fn version_1_blobs_still_read_the_same_bars() {
        let s = sample();
        assert_eq!(s.encode_v1()[0], 1);
        assert_eq!(Series::decode(&s.encode_v1()).unwrap(), s);
    }

    #[test]
    fn values_no_decimal_exponent_holds_round_trip_bit_for_bit() {
        let mut s = Series::default();
        let mut odd = bar(20240102, 10.0, Some(-0.0));
        odd.open = 10.000_000_000_1;
        odd.high = f64::NAN;
        odd.volume = 1e300;
        odd.amount = 1.0 / 3.0;
        s.merge(&[odd, bar(20240103, 12.5, None)], "x", true)
            .unwrap();
        let back = Series::decode(&s.encode()).unwrap();
        for (a, b) in back.bars.iter().zip(&s.bars) {
            for (x, y) in [
                (a.open, b.open),
                (a.high, b.high),
                (a.volume, b.volume),
                (a.amount, b.amount),
                (a.turnover.unwrap_or(7.0), b.turnover.unwrap_or(7.0)),
            ] {
                assert_eq!(x.to_bits(), y.to_bits());
            }
        }
        assert_eq!(back.bars[1].turnover, None);
    }

    #[test]
    fn bundled_bars_round_trip_exactly_in_under_40_bytes_a_bar() {
        let mut bars = 0;
        let mut bytes = 0;
        for series in crate::bundled::daily_bars().unwrap() {
            let mut s = Series::default();
            s.merge(&series.bars, crate::bundled::BARS_SOURCE, true)
                .unwrap();
            let blob = s.encode();
            let back = Series::decode(&blob).unwrap();
            assert_eq!(back, s, "{}", series.code);
            bars += s.bars.len();
            bytes += blob.len();
        }
        assert!(bars > 10_000);
        let per_bar = bytes as f64 / bars as f64;
        assert!(per_bar < 40.0, "{per_bar:.1} bytes a bar");
    }

    /// `body` (a blob without its checksum) with its length and checksum made right.
    pub(crate) fn resealed(mut body: Vec<u8>) -> Vec<u8> {
        let total = (body.len() + 8) as u32;
        body[1..5].copy_from_slice(&total.to_le_bytes());
        let sum = checksum(&body);
        body.extend_from_slice(&sum.to_le_bytes());
        body
    }

    /// A version-4 blob body (no checksum) of a series without any raw close, less its raw
    /// close column: the body of the same series in version 3.
    pub(crate) fn without_raw_column(mut body: Vec<u8>) -> Vec<u8> {
        // tag 0, exponent 0, base 0, width 0: every value 0 (unknown), no bytes a bar
        let column = [[TAG_INT, 0].as_slice(), &0i64.to_le_bytes(), &[0]].concat();
        assert!(body.ends_with(&column), "the series has raw closes");
        body.truncate(body.len() - column.len());
        body
    }

    /// Where a version-3 or 4 blob keeps the sanity rules its bars passed.
    pub(crate) fn rules_byte(s: &Series) -> usize {
        10 + s.sources.iter().map(|n| 2 + n.len()).sum::<usize>()
    }

    /// The real 000001 bundle (3,700+ bars) as one stored series.
    pub(crate) fn bundled_series() -> Series {
        let bundled = crate::bundled::daily_bars().unwrap();
        let mut s = Series::default();
        s.merge(&bundled[0].bars, crate::bundled::BARS_SOURCE, true)
            .unwrap();
        s
    }

    #[test]
    fn a_series_sealed_sound_decodes_only_the_wanted_tail_and_every_date() {
        let s = bundled_series();
        let n = s.bars.len();
        assert!(n > 3000, "{n}");
        let blob = s.encode();
        let at = rules_byte(&s);
        assert_eq!(blob[at], crate::sanity::RULES);
        let dates = |x: &Series| x.bars.iter().map(|b| b.date).collect::<Vec<_>>();
        let mut scratch = Series::default();
        for (as_of, keep) in [(None, 320), (Some(s.bars[1000].date), 320), (None, 1)] {
            let decoded = scratch.decode_tail_into(&blob, as_of, keep).unwrap();
            let from = decoded.dates_only;
            let cut = as_of.map_or(n, |a| s.bars.partition_point(|b| b.date <= a));
            assert_eq!(from, cut - keep);
            assert!(decoded.sound);
            assert_eq!(dates(&scratch), dates(&s));
            assert_eq!(scratch.bars[from..], s.bars[from..]);
            assert_eq!(scratch.amount_known[from..], s.amount_known[from..]);
            assert_eq!(scratch.source_of, s.source_of);
            // the older bars were not decoded
            assert!(scratch.bars[..from].iter().all(|b| b.close == 0.0));
        }
        // wanting more than there is decodes it all
        let sound_in_full = Decoded {
            dates_only: 0,
            sound: true,
        };
        assert_eq!(
            scratch.decode_tail_into(&blob, None, n).unwrap(),
            sound_in_full
        );
        assert_eq!(Series::decode_sealed(&blob).unwrap(), (s.clone(), true));
        assert_eq!(scratch, s);

        // a bar that fails the checks: not sealed, decoded and left to be checked in full
        let mut insane = s.clone();
        insane.bars[10].low = insane.bars[10].high * 2.0;
        let blob = insane.encode();
        assert_eq!(blob[at], 0);
        let unsealed = Decoded::default();
        assert_eq!(
            scratch.decode_tail_into(&blob, None, 320).unwrap(),
            unsealed
        );
        assert_eq!(scratch, insane);
        assert_eq!(Series::decode_sealed(&blob).unwrap(), (insane, false));

        // sealed under other rules: checked in full again
        let mut body = s.encode();
        body.truncate(body.len() - 8);
        body[at] = crate::sanity::RULES + 1;
        let other_rules = resealed(body.clone());
        assert_eq!(
            scratch.decode_tail_into(&other_rules, None, 320).unwrap(),
            unsealed
        );
        assert_eq!(scratch, s);

        // version 3 (no raw closes) still reads, every raw close unknown
        let mut v3_body = without_raw_column(body.clone());
        v3_body[at] = crate::sanity::RULES;
        v3_body[0] = VERSION_3;
        let v3 = resealed(v3_body);
        let decoded = scratch.decode_tail_into(&v3, None, 320).unwrap();
        assert!(decoded.sound);
        assert_eq!(Series::decode(&v3).unwrap(), s);

        // version 2 (no such byte) still reads, in full
        let mut body = without_raw_column(body);
        body.remove(at);
        body[0] = VERSION_2;
        let v2 = resealed(body);
        assert_eq!(scratch.decode_tail_into(&v2, None, 320).unwrap(), unsealed);
        assert_eq!(scratch, s);
        assert_eq!(Series::decode(&v2).unwrap(), s);
    }

    #[test]
    fn truncate_after_keeps_the_prefix() {
        let mut s = sample();
        s.truncate_after(20240103);
        assert_eq!(s.bars.len(), 2);
        assert_eq!(s.source_of.len(), 2);
        assert_eq!(s.raw_close.len(), 2);
    }

    fn raw_of(s: &Series) -> Vec<(u32, Option<f64>)> {
        s.bars
            .iter()
            .map(|b| b.date)
            .zip(s.raw_close.iter().copied())
            .collect()
    }

    #[test]
    fn raw_closes_round_trip_and_survive_a_replacement_of_their_bars() {
        let mut s = Series::default();
        // qfq 10.0 and 11.0 of raw 10.5 and 11.55 (a factor of 1/1.05); no raw on the 4th
        s.merge_with_raw(
            &[
                bar(20240102, 10.0, None),
                bar(20240103, 11.0, None),
                bar(20240104, 12.0, None),
            ],
            &[
                (20240103, 11.55),
                (20240102, 10.5),
                (20240105, 9.0),
                (20240104, -1.0),
            ],
            "eastmoney",
            true,
        )
        .unwrap();
        let want = [
            (20240102, Some(10.5)),
            (20240103, Some(11.55)),
            (20240104, None),
        ];
        assert_eq!(raw_of(&s), want);
        let back = Series::decode(&s.encode()).unwrap();
        assert_eq!(back, s);
        assert_eq!(raw_of(&back), want);

        // the same days again, re-based (a dividend) and without raw closes: kept
        let mut rebased = back.clone();
        rebased
            .merge(
                &[bar(20240102, 9.5, None), bar(20240103, 10.45, None)],
                "tencent",
                false,
            )
            .unwrap();
        assert_eq!(rebased.bars[0].close, 9.5);
        assert_eq!(raw_of(&rebased), want);
        // a replacement keeps them too, and takes the new ones it is given
        let replaced = back
            .replaced_by(
                &[
                    bar(20240103, 10.45, None),
                    bar(20240104, 11.4, None),
                    bar(20240105, 12.0, None),
                ],
                &[(20240104, 12.0), (20240105, 12.0)],
                "eastmoney",
                true,
            )
            .unwrap();
        assert_eq!(
            raw_of(&replaced),
            [
                (20240103, Some(11.55)),
                (20240104, Some(12.0)),
                (20240105, Some(12.0))
            ]
        );
        // attached later, to the days that have a bar
        let mut later = back;
        assert_eq!(later.attach_raw(&[(20240104, 12.6), (20240110, 1.0)]), 1);
        assert_eq!(
            later.raw_closes(),
            [(20240102, 10.5), (20240103, 11.55), (20240104, 12.6)]
        );
        assert_eq!(Series::decode(&later.encode()).unwrap(), later);
    }

    #[test]
    fn a_tail_read_decodes_the_raw_closes_of_the_tail() {
        let mut s = bundled_series();
        let n = s.bars.len();
        let raw: Vec<(u32, f64)> = s.bars.iter().map(|b| (b.date, b.close * 1.25)).collect();
        assert_eq!(s.attach_raw(&raw), n);
        let blob = s.encode();
        let mut scratch = Series::default();
        let decoded = scratch.decode_tail_into(&blob, None, 10).unwrap();
        assert_eq!(decoded.dates_only, n - 10);
        assert_eq!(scratch.raw_close[n - 10..], s.raw_close[n - 10..]);
        assert!(scratch.raw_close[..n - 10].iter().all(Option::is_none));
        assert_eq!(Series::decode(&blob).unwrap(), s);
    }
}
