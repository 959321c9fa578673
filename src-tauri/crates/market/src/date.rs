//! Trading dates are `u32` `YYYYMMDD` (the engine's `Bar::date`). The conversions and the
//! parse are wyckoff-time's, re-exported here; the set of dates is the market's own.

pub use wyckoff_time::date::{from_yyyymmdd, is_valid_yyyymmdd, iso, parse_date, to_yyyymmdd};

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
}
