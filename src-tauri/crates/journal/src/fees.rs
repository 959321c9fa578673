//! The backtest's fee rules (`wyckoff_engine::backtest::fees`) in integer fen, for fills
//! recorded without their fees: commission 0.025 % with a 5 CNY minimum on both sides,
//! stamp duty on sells 0.1 % (0.05 % from 2023-08-28), transfer fee 0.001 % on both sides,
//! each rounded to the fen half up.

use serde::{Deserialize, Serialize};

use crate::money::div_round;

/// Stamp duty on sells halved from this day (the backtest's `STAMP_HALVED_FROM`).
pub const STAMP_HALVED_FROM: u32 = 20230828;
const COMMISSION_MIN_FEN: i64 = 500;

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
    let commission = (div_round(a * 25, 100_000) as i64).max(COMMISSION_MIN_FEN);
    let stamp = if !sell {
        0
    } else if date >= STAMP_HALVED_FROM {
        div_round(a * 5, 10_000) as i64
    } else {
        div_round(a * 10, 10_000) as i64
    };
    Fees {
        commission_fen: commission,
        stamp_fen: stamp,
        transfer_fen: div_round(a, 100_000) as i64,
    }
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
        ];
        for ((amount, sell, date), (c, s, t)) in cases {
            assert_eq!(
                fees_for(amount, sell, date),
                Fees {
                    commission_fen: c,
                    stamp_fen: s,
                    transfer_fen: t
                },
                "{amount} {sell} {date}"
            );
        }
    }

    #[test]
    fn agrees_with_the_backtests_rules_away_from_half_fen_ties() {
        for (amount_fen, sell, date) in [
            (1_000_000_i64, false, 20240301),
            (1_200_000, true, 20240301),
            (1_200_000, true, 20220301),
            (20_664_000, false, 20240102),
            (98_765_432, true, 20240102),
            (4_321_099, true, 20200101),
        ] {
            let (c, s, t) = wyckoff_engine::backtest::fees(amount_fen as f64 / 100.0, sell, date);
            let f = fees_for(amount_fen, sell, date);
            assert_eq!(
                (f.commission_fen, f.stamp_fen, f.transfer_fen),
                (
                    (c * 100.0).round() as i64,
                    (s * 100.0).round() as i64,
                    (t * 100.0).round() as i64
                ),
                "{amount_fen}"
            );
        }
    }
}
