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
//! A blob whose length, checksum, version, source index or date order is wrong is
//! rejected as a whole: its bars are never handed out.

use wyckoff_engine::Bar;

pub const VERSION: u8 = 1;
const FLAG_TURNOVER: u8 = 1;
const F64_COLUMNS: usize = 6;

/// Bars plus, per bar, an index into `sources` (where the bar came from).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub bars: Vec<Bar>,
    /// Per bar: false when the source gave no traded amount (`bar.amount` is 0.0 then).
    pub amount_known: Vec<bool>,
    pub source_of: Vec<u8>,
    pub sources: Vec<String>,
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
    #[error("a series can hold at most 255 distinct sources")]
    TooManySources,
}

impl Series {
    /// Merges `bars` (ascending or not) into the series; a bar on an existing date
    /// replaces it. `amount_known == false` marks every new bar's amount as unknown.
    pub fn merge(
        &mut self,
        bars: &[Bar],
        source: &str,
        amount_known: bool,
    ) -> Result<(), SeriesError> {
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
        let cap = old_bars.len() + incoming.len();
        self.bars.reserve(cap);
        self.amount_known.reserve(cap);
        self.source_of.reserve(cap);
        let (mut i, mut j) = (0, 0);
        while i < old_bars.len() || j < incoming.len() {
            let take_new = match (old_bars.get(i), incoming.get(j)) {
                (Some(o), Some(n)) => {
                    if o.date == n.date {
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
                self.bars.push(bar);
                self.amount_known.push(amount_known);
                self.source_of.push(src);
                j += 1;
            } else {
                self.bars.push(old_bars[i]);
                self.amount_known.push(old_known[i]);
                self.source_of.push(old_src[i]);
                i += 1;
            }
        }
        self.drop_unused_sources();
        Ok(())
    }

    /// Keeps only the bars dated on or before `end`.
    pub fn truncate_after(&mut self, end: u32) {
        let n = self.bars.partition_point(|b| b.date <= end);
        self.bars.truncate(n);
        self.amount_known.truncate(n);
        self.source_of.truncate(n);
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

    pub fn encode(&self) -> Vec<u8> {
        let n = self.bars.len();
        let turnover = self.bars.iter().any(|b| b.turnover.is_some());
        let cols = F64_COLUMNS + usize::from(turnover);
        let names: usize = self.sources.iter().map(|s| 2 + s.len()).sum();
        let mut out = Vec::with_capacity(7 + names + n * (4 + 8 * cols + 1) + 8);
        out.push(VERSION);
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
        let mut r = Reader { buf: blob, pos: 0 };
        let version = r.u8()?;
        if version != VERSION {
            return Err(SeriesError::Version(version));
        }
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
            bars,
            amount_known,
            source_of,
            sources,
        })
    }
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
mod tests {
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
    fn truncate_after_keeps_the_prefix() {
        let mut s = sample();
        s.truncate_after(20240103);
        assert_eq!(s.bars.len(), 2);
        assert_eq!(s.source_of.len(), 2);
    }
}
