//! A-share trading fees of one side of a trade: commission 0.025 % with a 5 CNY minimum on
//! both sides, stamp duty on sells 0.1 % (0.05 % from 2023-08-28), transfer fee 0.001 % on
//! both sides, each rounded to the fen half away from zero.
//!
//! The one schedule: the journal books fills recorded without their fees with [`fees_for`]
//! (exact, in fen), and the backtest and forward tracking charge the same rates on their
//! `f64` amounts ([`crate::backtest::fees`]). The two differ only on a half-fen tie: the
//! backtest's amount is a float product (4.52 × 10,500 = 47,459.99999999999), so a
//! commission of exactly 11.865 is 11.87 here and 11.86 there.

use serde::{Deserialize, Serialize};

/// The rates below are parts of the traded amount per this many.
pub const RATE_BASE: i64 = 100_000;
/// Commission, both sides: 0.025 %.
pub const COMMISSION_RATE: i64 = 25;
/// Transfer fee, both sides: 0.001 %.
pub const TRANSFER_RATE: i64 = 1;
pub const COMMISSION_MIN_FEN: i64 = 500;
/// Stamp duty on sells halved from this day (2023-08-28).
pub const STAMP_HALVED_FROM: u32 = 20230828;

/// Stamp duty rate of one side on `date` (parts per [`RATE_BASE`]): sells only, 0.1 %,
/// 0.05 % from 2023-08-28.
pub fn stamp_rate(sell: bool, date: u32) -> i64 {
    match (sell, date >= STAMP_HALVED_FROM) {
        (false, _) => 0,
        (true, false) => 100,
        (true, true) => 50,
    }
}

/// One fill's fees in fen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, specta::Type)]
pub struct Fees {
    /// 佣金 (with any 其他费/规费 a broker lists apart).
    pub commission_fen: i64,
    /// 印花税.
    pub stamp_fen: i64,
    /// 过户费.
    pub transfer_fen: i64,
}

impl Fees {
    pub fn total_fen(&self) -> i64 {
        self.commission_fen + self.stamp_fen + self.transfer_fen
    }
}

/// Fees of one side of a trade of `amount_fen` on `date` (`YYYYMMDD`).
pub fn fees_for(amount_fen: i64, sell: bool, date: u32) -> Fees {
    let a = i128::from(amount_fen.max(0));
    let part = |rate: i64| div_round(a * i128::from(rate), i128::from(RATE_BASE)) as i64;
    Fees {
        commission_fen: part(COMMISSION_RATE).max(COMMISSION_MIN_FEN),
        stamp_fen: part(stamp_rate(sell, date)),
        transfer_fen: part(TRANSFER_RATE),
    }
}

/// `a / b` rounded half away from zero (`b > 0`).
pub fn div_round(a: i128, b: i128) -> i128 {
    let q = a / b;
    let r = a % b;
    if 2 * r.abs() >= b { q + a.signum() } else { q }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fees_by_hand() {
        // (amount fen, sell, date) → (commission, stamp, transfer) fen
        let cases = [
            // buy 1000 × 10.00 = 10,000.00: 0.025 % = 2.50 → the 5.00 minimum;
            // transfer 0.001 % = 0.10; no stamp on a buy
            ((1_000_000, false, 20240301), (500, 0, 10)),
            // sell 1000 × 12.00 = 12,000.00 on 2024-03-01: commission 3.00 → 5.00;
            // stamp 0.05 % = 6.00; transfer 0.12
            ((1_200_000, true, 20240301), (500, 600, 12)),
            // the same sell on 2023-08-25, before the halving: stamp 0.1 % = 12.00
            ((1_200_000, true, 20230825), (500, 1200, 12)),
            // sell 10,000 × 35.67 = 356,700.00 on 2023-08-25: commission 89.175 → 89.18
            // (half up), stamp 356.70, transfer 3.567 → 3.57
            ((35_670_000, true, 20230825), (8918, 35_670, 357)),
            // buy 3,000 × 68.88 = 206,640.00: commission 51.66, transfer 2.0664 → 2.07
            ((20_664_000, false, 20240102), (5166, 0, 207)),
            // on 2023-08-28 itself the halved rate applies: 12,000.00 × 0.05 % = 6.00
            ((1_200_000, true, 20230828), (500, 600, 12)),
            // 0.001 % of 1,234.56 = 0.0123 → 0.01
            ((123_456, false, 20240102), (500, 0, 1)),
            // buy 10,500 × 4.52 = 47,460.00: commission 11.865, a half-fen tie → 11.87
            ((4_746_000, false, 20191120), (1187, 0, 47)),
            // 1,234,567.89: commission 308.6419… → 308.64, stamp 617.28, transfer 12.35
            ((123_456_789, true, 20240102), (30_864, 61_728, 1235)),
            // just over the minimum: 20,001.00 × 0.025 % = 5.00025 → 5.00
            ((2_000_100, false, 20220104), (500, 0, 20)),
            ((4_000_000, false, 20220104), (1000, 0, 40)),
            // a negative amount is no trade: the minimum commission only
            ((-100, true, 20240102), (500, 0, 0)),
        ];
        for ((amount, sell, date), (c, s, t)) in cases {
            let f = fees_for(amount, sell, date);
            assert_eq!(
                f,
                Fees {
                    commission_fen: c,
                    stamp_fen: s,
                    transfer_fen: t
                },
                "{amount} {sell} {date}"
            );
            assert_eq!(f.total_fen(), c + s + t);
        }
    }

    #[test]
    fn the_backtests_f64_rates_are_the_literal_rates() {
        let f = |rate: i64| rate as f64 / RATE_BASE as f64;
        assert_eq!(f(COMMISSION_RATE), 0.000_25);
        assert_eq!(f(TRANSFER_RATE), 0.000_01);
        assert_eq!(f(stamp_rate(true, 20230825)), 0.001);
        assert_eq!(f(stamp_rate(true, 20230828)), 0.0005);
        assert_eq!(stamp_rate(false, 20230825), 0);
    }

    #[test]
    fn the_backtest_agrees_away_from_half_fen_ties() {
        for (amount_fen, sell, date) in [
            (1_000_000_i64, false, 20240301),
            (1_200_000, true, 20240301),
            (1_200_000, true, 20220301),
            (20_664_000, false, 20240102),
            (98_765_432, true, 20240102),
            (4_321_099, true, 20200101),
        ] {
            let (c, s, t) = crate::backtest::fees(amount_fen as f64 / 100.0, sell, date);
            let f = fees_for(amount_fen, sell, date);
            let fen = |x: f64| (x * 100.0).round() as i64;
            assert_eq!(
                (f.commission_fen, f.stamp_fen, f.transfer_fen),
                (fen(c), fen(s), fen(t)),
                "{amount_fen}"
            );
        }
        // 4.52 × 10,500 is 47,459.99999999999 in f64: its commission falls just below the
        // half fen of 11.865.
        assert_eq!(
            crate::backtest::fees(4.52 * 10_500.0, false, 20191120).0,
            11.86
        );
        assert_eq!(fees_for(4_746_000, false, 20191120).commission_fen, 1187);
    }

    #[test]
    fn rounds_half_away_from_zero() {
        assert_eq!(div_round(5, 10), 1);
        assert_eq!(div_round(4, 10), 0);
        assert_eq!(div_round(-5, 10), -1);
        assert_eq!(div_round(-4, 10), 0);
        assert_eq!(div_round(15, 10), 2);
    }
}
