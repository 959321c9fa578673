//! Trading dates are `u32` `YYYYMMDD` (the engine's `Bar::date`); helpers to convert and parse.

use chrono::{Datelike, NaiveDate};

/// `20240102` from a calendar date.
pub fn to_yyyymmdd(d: NaiveDate) -> u32 {
    // year is always positive for market dates; month/day fit easily
    (d.year().max(0) as u32) * 10_000 + d.month() * 100 + d.day()
}

/// Calendar date from `YYYYMMDD`; `None` when it is not a real date.
pub fn from_yyyymmdd(v: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt((v / 10_000) as i32, (v / 100) % 100, v % 100)
}

/// Whether `YYYYMMDD` is a real date, exactly as [`from_yyyymmdd`] decides, in plain
/// arithmetic: every cached bar's date is checked on each whole-market read.
pub fn is_valid_yyyymmdd(v: u32) -> bool {
    let (y, m, d) = (v / 10_000, (v / 100) % 100, v % 100);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    // chrono's last representable year
    y <= 262_142 && (1..=days).contains(&d)
}

/// `2024-01-02` for display and for sources that want dashes.
pub fn iso(v: u32) -> String {
    format!("{:04}-{:02}-{:02}", v / 10_000, (v / 100) % 100, v % 100)
}

/// Strict parse of `YYYYMMDD` or `YYYY-MM-DD` (a real calendar date; no other shapes).
pub fn parse_date(s: &str) -> Option<u32> {
    let s = s.trim();
    let digits: String = match s.len() {
        8 if s.bytes().all(|b| b.is_ascii_digit()) => s.to_string(),
        10 if s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-' => {
            let d: String = s.chars().filter(|c| *c != '-').collect();
            if d.len() != 8 || !d.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            d
        }
        _ => return None,
    };
    let v: u32 = digits.parse().ok()?;
    // round-trip through a real date, so 20230230 is rejected
    from_yyyymmdd(v).map(to_yyyymmdd).filter(|r| *r == v)
}

/// A set of `YYYYMMDD` dates: a bit per day slot of 1900–2199 (a whole-market read adds
/// millions of dates, mostly the same few thousand), any other value kept aside.
#[derive(Debug, Clone)]
pub struct DateSet {
    bits: Vec<u64>,
    other: Vec<u32>,
}

const FIRST_YEAR: u32 = 1900;
const YEARS: u32 = 300;
/// 12 × 31: every month gets 31 slots, so slot order is date order.
const SLOTS_A_YEAR: u32 = 372;

impl Default for DateSet {
    fn default() -> Self {
        DateSet {
            bits: vec![0; (YEARS * SLOTS_A_YEAR).div_ceil(64) as usize],
            other: Vec::new(),
        }
    }
}

/// Dates that come in order (a series') mostly share their month and their word with the
/// one before: the month's first slot is worked out once a month, and the bits are
/// gathered in a register and stored once a word.
impl Extend<u32> for DateSet {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, dates: I) {
        let mut month = None;
        let mut word = None;
        let mut bits = 0u64;
        for v in dates {
            let ym = v / 100;
            let first = match month {
                Some((m, first)) if m == ym => first,
                _ => {
                    let first = Self::month_slot(ym);
                    month = Some((ym, first));
                    first
                }
            };
            let Some(s) = first.and_then(|f| Self::day_slot(f, v - ym * 100)) else {
                self.other.push(v);
                continue;
            };
            if word != Some(s / 64) {
                if let Some(w) = word {
                    self.bits[w] |= bits;
                }
                word = Some(s / 64);
                bits = 0;
            }
            bits |= 1 << (s % 64);
        }
        if let Some(w) = word {
            self.bits[w] |= bits;
        }
    }
}

impl DateSet {
    fn slot(v: u32) -> Option<usize> {
        Self::month_slot(v / 100).and_then(|first| Self::day_slot(first, v % 100))
    }

    /// The first slot of month `YYYYMM`, when it is in range.
    fn month_slot(ym: u32) -> Option<usize> {
        let (y, m) = (ym / 100, ym % 100);
        let in_range = (FIRST_YEAR..FIRST_YEAR + YEARS).contains(&y) && (1..=12).contains(&m);
        in_range.then(|| ((y - FIRST_YEAR) * SLOTS_A_YEAR + (m - 1) * 31) as usize)
    }

    fn day_slot(month_first: usize, d: u32) -> Option<usize> {
        (1..=31).contains(&d).then(|| month_first + d as usize - 1)
    }

    pub fn insert(&mut self, v: u32) {
        match Self::slot(v) {
            Some(s) => self.bits[s / 64] |= 1 << (s % 64),
            None => self.other.push(v),
        }
    }

    /// Every date in either set.
    pub fn union(mut self, other: DateSet) -> DateSet {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
        self.other.extend(other.other);
        self
    }

    /// Every date in the set once, ascending.
    pub fn into_sorted(mut self) -> Vec<u32> {
        let mut out = Vec::new();
        for (word_idx, &word) in self.bits.iter().enumerate() {
            let mut w = word;
            while w != 0 {
                let slot = (word_idx * 64) as u32 + w.trailing_zeros();
                w &= w - 1;
                let (y, in_year) = (FIRST_YEAR + slot / SLOTS_A_YEAR, slot % SLOTS_A_YEAR);
                out.push(y * 10_000 + (in_year / 31 + 1) * 100 + in_year % 31 + 1);
            }
        }
        if self.other.is_empty() {
            return out;
        }
        self.other.sort_unstable();
        self.other.dedup();
        // two ascending runs with nothing in common
        let mut sorted = Vec::with_capacity(out.len() + self.other.len());
        let (mut a, mut b) = (
            out.into_iter().peekable(),
            self.other.into_iter().peekable(),
        );
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            let next = if x < y { a.next() } else { b.next() };
            sorted.extend(next);
        }
        sorted.extend(a.chain(b));
        sorted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_set_gives_each_date_once_in_order_inside_and_outside_its_range() {
        let dates = [
            20240102,
            19000101,
            21991231,
            18991231,
            22000101,
            20240102,
            20231231,
            20240131,
            20240201,
            20000229,
            0,
            u32::MAX,
            20241399,
            20240100,
            20241232,
            19991231,
        ];
        let mut set = DateSet::default();
        for d in dates {
            set.insert(d);
        }
        let mut want = dates.to_vec();
        want.sort_unstable();
        want.dedup();
        assert_eq!(set.clone().into_sorted(), want);
        assert_eq!(DateSet::default().into_sorted(), Vec::<u32>::new());
        // split in two and joined again
        let (mut left, mut right) = (DateSet::default(), DateSet::default());
        for (i, d) in dates.into_iter().enumerate() {
            if i % 2 == 0 {
                left.insert(d)
            } else {
                right.insert(d)
            }
        }
        assert_eq!(left.union(right).into_sorted(), want);
        // in bulk, in any order, and in order (runs that share a word)
        let mut bulk = DateSet::default();
        bulk.extend(dates);
        assert_eq!(bulk.into_sorted(), want);
        let days: Vec<u32> = (1..=12)
            .flat_map(|m| (1..=28).map(move |d| 20240000 + m * 100 + d))
            .chain([20250101, 20991231, 21000101])
            .collect();
        let mut run = DateSet::default();
        run.extend(days.iter().copied());
        // days out of range in a month just seen
        run.extend([days[5], 20240132, 20240100, 30000101]);
        let mut want_run = days.clone();
        want_run.extend([20240100, 20240132, 30000101]);
        want_run.sort_unstable();
        assert_eq!(run.into_sorted(), want_run);
    }

    #[test]
    fn the_plain_date_check_agrees_with_chrono_everywhere_it_is_asked() {
        let mut checked = 0u32;
        let years = (0u32..=3000).chain([262_140, 262_141, 262_142, 262_143, 262_144, 429_496]);
        for y in years {
            for m in 0..=13 {
                for d in 0..=32 {
                    let Some(v) = y.checked_mul(10_000).map(|x| x + m * 100 + d) else {
                        continue;
                    };
                    assert_eq!(is_valid_yyyymmdd(v), from_yyyymmdd(v).is_some(), "{v}");
                    checked += 1;
                }
            }
        }
        assert!(is_valid_yyyymmdd(20240229) && !is_valid_yyyymmdd(20230229));
        assert!(!is_valid_yyyymmdd(19000229) && is_valid_yyyymmdd(20000229));
        assert!(!is_valid_yyyymmdd(u32::MAX));
        assert_eq!(checked, 3007 * 14 * 33);
    }

    #[test]
    fn parses_both_shapes_strictly() {
        assert_eq!(parse_date("20240102"), Some(20240102));
        assert_eq!(parse_date("2024-01-02"), Some(20240102));
        assert_eq!(parse_date(" 2024-01-02 "), Some(20240102));
        for bad in [
            "2024-1-2",
            "20230230",
            "2023-02-30",
            "2024/01/02",
            "202401021",
            "",
            "abcdefgh",
            "2024-01-0x",
            "20241301",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn round_trips() {
        let d = NaiveDate::from_ymd_opt(2020, 6, 16).unwrap();
        assert_eq!(to_yyyymmdd(d), 20200616);
        assert_eq!(from_yyyymmdd(20200616), Some(d));
        assert_eq!(iso(20200616), "2020-06-16");
        assert_eq!(from_yyyymmdd(20200631), None);
    }
}
