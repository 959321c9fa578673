//! A synthetic A-share market for benchmarks and scale tests (cargo feature `synthetic`).
//!
//! Every number here is made up by a seeded random walk: it is test data, labelled as such
//! in its names (合成…), never shipped and never shown to a user as market data. The same
//! seed gives the same market, so benchmark runs compare like with like.

use crate::{Bar, Benchmarks, Board, StockSeries, Universe};

/// Size of a synthetic market: the full-market scale is 5,640 stocks × 500 bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarketShape {
    pub stocks: usize,
    pub bars: usize,
    /// First trading day, `YYYYMMDD`; days advance over weekdays.
    pub start: u32,
    pub seed: u64,
}

impl MarketShape {
    /// 5,640 stocks × 500 bars from 2023-01-02.
    pub fn full_market() -> Self {
        Self {
            stocks: 5_640,
            bars: 500,
            start: 20230102,
            seed: 42,
        }
    }
}

/// SplitMix64: small, fast, deterministic; good enough for test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Approximately standard normal (sum of uniforms).
    pub fn normal(&mut self) -> f64 {
        (0..6).map(|_| self.unit()).sum::<f64>() - 3.0
    }
}

/// `n` weekdays from `start` (inclusive if it is a weekday), as `YYYYMMDD`.
pub fn weekdays(start: u32, n: usize) -> Vec<u32> {
    let (mut y, mut m, mut d) = (start / 10_000, (start / 100) % 100, start % 100);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        // Zeller-style weekday: 0 = Monday … 6 = Sunday (Sakamoto's method).
        let t = [0u32, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4];
        let yy = if m < 3 { y - 1 } else { y };
        let dow = (yy + yy / 4 - yy / 100 + yy / 400 + t[(m - 1) as usize] + d) % 7; // 0 = Sunday
        if (1..=5).contains(&dow) {
            out.push(y * 10_000 + m * 100 + d);
        }
        d += 1;
        if d > days_in_month(y, m) {
            d = 1;
            m += 1;
            if m > 12 {
                m = 1;
                y += 1;
            }
        }
    }
    out
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        2 => 28,
        _ => 31,
    }
}

const INDUSTRIES: [&str; 12] = [
    "银行",
    "白酒",
    "半导体",
    "医药",
    "电力",
    "汽车",
    "软件",
    "化工",
    "地产",
    "有色",
    "军工",
    "光伏",
];

/// Code of the `i`-th synthetic stock; boards in roughly the real market's proportions.
fn code_for(i: usize) -> (String, Board) {
    let (slot, k) = (i % 20, i / 20);
    match slot {
        0..=6 => (format!("{:06}", 600_000 + k * 7 + slot), Board::Main),
        7..=12 => (format!("{:06}", 1 + k * 6 + slot - 7), Board::Main),
        13..=16 => (
            format!("{:06}", 300_000 + k * 4 + slot - 13),
            Board::Chinext,
        ),
        17..=18 => (format!("{:06}", 688_000 + k * 2 + slot - 17), Board::Star),
        _ => (format!("{:06}", 830_000 + k), Board::Bse),
    }
}

/// One random-walk series with occasional volume spikes and regime drifts.
pub fn random_walk(rng: &mut Rng, dates: &[u32], start_price: f64, base_volume: f64) -> Vec<Bar> {
    let mut close = start_price;
    let mut drift = 0.0;
    let mut bars = Vec::with_capacity(dates.len());
    for &date in dates {
        if rng.unit() < 0.02 {
            drift = (rng.unit() - 0.45) * 0.004;
        }
        let ret = (drift + rng.normal() * 0.018).clamp(-0.095, 0.095);
        let open = close * (1.0 + rng.normal() * 0.004);
        let new_close = (close * (1.0 + ret)).max(0.5);
        let high = open.max(new_close) * (1.0 + rng.unit() * 0.015);
        let low = open.min(new_close) * (1.0 - rng.unit() * 0.015);
        let spike = if rng.unit() < 0.03 { 3.0 } else { 1.0 };
        let volume = (base_volume * (0.6 + rng.unit() * 0.8) * spike).round();
        bars.push(Bar {
            date,
            open: round2(open),
            high: round2(high),
            low: round2(low),
            close: round2(new_close),
            volume,
            amount: (volume * new_close).round(),
            turnover: None,
        });
        close = new_close;
    }
    bars
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A deterministic synthetic market of `shape`, with the three benchmark indices.
pub fn market(shape: MarketShape) -> Universe {
    let dates = weekdays(shape.start, shape.bars);
    let mut rng = Rng::new(shape.seed);
    let mut stocks: Vec<StockSeries> = (0..shape.stocks)
        .map(|i| {
            let (code, board) = code_for(i);
            let price = 3.0 + rng.unit() * 60.0;
            let volume = 2.0e6 + rng.unit() * 3.0e7;
            let bars = random_walk(&mut rng, &dates, price, volume);
            StockSeries {
                name: if i % 97 == 5 {
                    format!("ST合成{i}")
                } else {
                    format!("合成{i}")
                },
                code,
                board,
                industry: Some(INDUSTRIES[i % INDUSTRIES.len()].to_owned()),
                market_cap_yi: Some(15.0 + rng.unit() * 800.0),
                list_date: Some(20100104),
                bars,
                name_history: Vec::new(),
                delist_date: None,
                cap_history: Vec::new(),
            }
        })
        .collect();
    stocks.sort_by(|a, b| a.code.cmp(&b.code));
    let benchmarks = Benchmarks {
        sse: Some(random_walk(&mut rng, &dates, 3_100.0, 3.0e10)),
        csi300: Some(random_walk(&mut rng, &dates, 3_900.0, 1.5e10)),
        chinext: Some(random_walk(&mut rng, &dates, 2_100.0, 1.0e10)),
    };
    Universe {
        stocks,
        benchmarks,
        trading_days: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weekdays_skip_weekends() {
        // 2024-01-05 is a Friday; the next weekday is Monday 2024-01-08.
        assert_eq!(weekdays(20240105, 3), vec![20240105, 20240108, 20240109]);
        assert_eq!(weekdays(20240229, 2), vec![20240229, 20240301]);
        assert_eq!(weekdays(20231229, 2), vec![20231229, 20240101]);
    }

    #[test]
    fn same_seed_same_market_and_bars_are_sane() {
        let shape = MarketShape {
            stocks: 50,
            bars: 60,
            start: 20240102,
            seed: 7,
        };
        let a = market(shape);
        assert_eq!(a, market(shape));
        assert_eq!(a.stocks.len(), 50);
        for s in &a.stocks {
            assert_eq!(s.bars.len(), 60);
            assert!(s.name.contains("合成"));
            for b in &s.bars {
                assert!(b.low <= b.open.min(b.close) && b.high >= b.open.max(b.close));
                assert!(b.low > 0.0 && b.volume > 0.0);
            }
        }
        assert!(a.stocks.windows(2).all(|w| w[0].code < w[1].code));
        for s in &a.stocks {
            assert_eq!(Board::from_code(&s.code), s.board, "{}", s.code);
        }
    }
}
