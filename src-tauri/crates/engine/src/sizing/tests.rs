use proptest::prelude::*;

use super::*;
use crate::phases::tests::{OK, case};

const DAY: u32 = 20240102;

fn input(board: Board, entry: f64, stop: f64, equity: f64, cash: f64) -> SizingInput {
    SizingInput {
        board,
        date: DAY,
        entry_e6: price_e6(entry).unwrap(),
        stop_e6: price_e6(stop).unwrap(),
        equity_fen: fen_of(equity).unwrap(),
        cash_fen: fen_of(cash).unwrap(),
        risk_bp: 100,
        max_position_bp: 2_000,
        held_value_fen: 0,
        regime: None,
    }
}

#[test]
fn shares_risk_and_caps_by_hand() {
    let base = input(Board::Main, 10.0, 9.5, 100_000.0, 100_000.0);
    // (input, shares, risk at the stop in fen, cost in fen, caps that bound)
    let cases: Vec<(SizingInput, u64, i64, i64, Vec<Cap>)> = vec![
        // 1 % of 100,000 = 1,000.00 at 0.50 a share. 1,900 shares: 950.00, the buy's fees
        // 5.00 (the minimum) + 0.19, the sale at 9.50 (18,050.00) 5.00 + stamp 9.03 (half
        // a fen up from 9.025) + 0.18 → 969.40. 2,000 shares are 1,000.00 before fees.
        (base, 1_900, 96_940, 1_900_519, vec![]),
        // A 0.10 stop: the risk alone allows 9,000 (991.12; 9,100 lose 1,002.13), the 20 %
        // position budget (20,000.00) 1,900 (19,005.19; 2,000 cost 20,005.20).
        (
            SizingInput {
                stop_e6: 9_900_000,
                ..base
            },
            1_900,
            19_000 + 519 + 500 + 941 + 19,
            1_900_519,
            vec![Cap::PositionBudget {
                max_position_bp: 2_000,
                held_value_fen: 0,
                budget_fen: 2_000_000,
                shares: 1_900,
            }],
        ),
        // An add: 15,000.00 already held of the 20 % (20,000.00) leaves 5,000.00, 400
        // shares (4,005.04; 500 cost 5,005.05). 400 to the 9.90 stop lose 40.00, the buy's
        // 5.00 + 0.04, the sale's (3,960.00) 5.00 + 1.98 + 0.04.
        (
            SizingInput {
                stop_e6: 9_900_000,
                held_value_fen: 1_500_000,
                ..base
            },
            400,
            4_000 + 504 + 500 + 198 + 4,
            400_504,
            vec![Cap::PositionBudget {
                max_position_bp: 2_000,
                held_value_fen: 1_500_000,
                budget_fen: 500_000,
                shares: 400,
            }],
        ),
        // A position already at (or past) its cap takes nothing more.
        (
            SizingInput {
                held_value_fen: 2_000_000,
                ..base
            },
            0,
            0,
            0,
            vec![Cap::PositionBudget {
                max_position_bp: 2_000,
                held_value_fen: 2_000_000,
                budget_fen: 0,
                shares: 0,
            }],
        ),
        (
            SizingInput {
                held_value_fen: 2_500_000,
                ..base
            },
            0,
            0,
            0,
            vec![Cap::PositionBudget {
                max_position_bp: 2_000,
                held_value_fen: 2_500_000,
                budget_fen: 0,
                shares: 0,
            }],
        ),
        // Cash 10,000.00: 900 shares cost 9,005.09, 1,000 cost 10,005.10.
        (
            SizingInput {
                cash_fen: 1_000_000,
                ..base
            },
            900,
            45_000 + 509 + 500 + 428 + 9,
            900_509,
            vec![Cap::Cash {
                cash_fen: 1_000_000,
                shares: 900,
            }],
        ),
        // CAUTION: half the budget (500.00): 900 shares lose 464.46.
        (
            SizingInput {
                regime: Some(Regime::Caution),
                ..base
            },
            900,
            46_446,
            900_509,
            vec![Cap::Regime {
                regime: Regime::Caution,
                scale_pct: 50,
                budget_fen: 50_000,
                shares: 900,
            }],
        ),
        // NEUTRAL and RISK_ON leave the budget whole.
        (
            SizingInput {
                regime: Some(Regime::Neutral),
                ..base
            },
            1_900,
            96_940,
            1_900_519,
            vec![],
        ),
        (
            SizingInput {
                regime: Some(Regime::RiskOn),
                ..base
            },
            1_900,
            96_940,
            1_900_519,
            vec![],
        ),
        // RISK_OFF: no new buy.
        (
            SizingInput {
                regime: Some(Regime::RiskOff),
                ..base
            },
            0,
            0,
            0,
            vec![Cap::Regime {
                regime: Regime::RiskOff,
                scale_pct: 0,
                budget_fen: 0,
                shares: 0,
            }],
        ),
        // STAR buys any share from 200: 487 at 50.00 to a 48.00 stop lose 998.09 (974.00,
        // buy 6.09 + 0.24, sale 5.84 + 11.69 + 0.23); 488 lose 1,000.14. The main board
        // stops at 400.
        (
            SizingInput {
                max_position_bp: 5_000,
                ..input(Board::Star, 50.0, 48.0, 100_000.0, 100_000.0)
            },
            487,
            99_809,
            2_435_000 + 633,
            vec![],
        ),
        (
            SizingInput {
                max_position_bp: 5_000,
                ..input(Board::Main, 50.0, 48.0, 100_000.0, 100_000.0)
            },
            400,
            80_000 + 500 + 20 + 500 + 960 + 19,
            2_000_520,
            vec![],
        ),
        // 300.00 at risk, 2.00 a share: STAR's 200-share minimum is out of reach; BSE
        // takes 143 (299.57; 144 lose 301.60).
        (
            SizingInput {
                max_position_bp: BP as u32,
                ..input(Board::Star, 50.0, 48.0, 30_000.0, 30_000.0)
            },
            0,
            0,
            0,
            vec![],
        ),
        (
            SizingInput {
                max_position_bp: BP as u32,
                ..input(Board::Bse, 50.0, 48.0, 30_000.0, 30_000.0)
            },
            143,
            28_600 + 507 + 500 + 343 + 7,
            715_000 + 507,
            vec![],
        ),
        // ...and its 20 % position budget (6,000.00) allows 119 (5,955.06; 120 cost
        // 6,005.06).
        (
            input(Board::Bse, 50.0, 48.0, 30_000.0, 30_000.0),
            119,
            23_800 + 506 + 500 + 286 + 6,
            595_000 + 506,
            vec![Cap::PositionBudget {
                max_position_bp: 2_000,
                held_value_fen: 0,
                budget_fen: 600_000,
                shares: 119,
            }],
        ),
    ];
    for (i, (inp, shares, risk, cost, bound)) in cases.into_iter().enumerate() {
        let s = size(&inp).unwrap();
        assert_eq!(
            (s.shares, s.risk_fen, s.cost_fen, &s.bound),
            (shares, risk, cost, &bound),
            "case {i}: {s:?}"
        );
        assert_eq!(s.amount_fen + s.buy_fees_fen, s.cost_fen, "case {i}");
        assert_eq!(
            s.risk_pct,
            (s.risk_fen as f64 * 100.0 / inp.equity_fen as f64 * 1e4).round() / 1e4
        );
    }
}

#[test]
fn exactly_one_lot_fits_or_none() {
    // 100 shares at 10.00 cost 1,000.00 + 5.00 + 0.01: cash of exactly that buys one lot,
    // a fen less buys nothing, and says why.
    let base = SizingInput {
        max_position_bp: BP as u32,
        ..input(Board::Main, 10.0, 5.0, 100_000.0, 1_005.01)
    };
    assert_eq!(size(&base).unwrap().shares, 100);
    let short = size(&SizingInput {
        cash_fen: 100_500,
        ..base
    })
    .unwrap();
    assert_eq!(short.shares, 0);
    assert_eq!(
        short.bound,
        vec![Cap::Cash {
            cash_fen: 100_500,
            shares: 0
        }]
    );
    assert_eq!(
        short.why_none().unwrap(),
        "现金 1005.00 元不够买最小的 100 股（含费用）"
    );
    // The risk budget at the edge: 100 shares at 10.00 to a 9.00 stop lose 100.00 + the
    // buy's 5.01 + the sale's 5.00 + 0.45 + 0.01 = 110.47, 1 % of 11,047.00.
    let edge = input(Board::Main, 10.0, 9.0, 11_047.0, 11_047.0);
    let edge = SizingInput {
        max_position_bp: BP as u32,
        ..edge
    };
    let one = size(&edge).unwrap();
    assert_eq!((one.shares, one.risk_fen), (100, 11_047));
    let none = size(&SizingInput {
        equity_fen: 1_104_699,
        ..edge
    })
    .unwrap();
    assert_eq!((none.shares, none.risk_shares, none.bound.len()), (0, 0, 0));
    assert_eq!(
        none.why_none().unwrap(),
        "风险预算 110.46 元不够买最小的 100 股（含双边费用）"
    );
}

#[test]
fn bad_inputs_are_named() {
    let base = input(Board::Main, 10.0, 9.5, 100_000.0, 100_000.0);
    let err = |i: SizingInput| size(&i).unwrap_err().to_string();
    assert_eq!(
        err(SizingInput {
            stop_e6: 12_000_000,
            ..base
        }),
        "止损价 12.00 不低于买入价 10.00：做多的止损必须低于买入价"
    );
    assert!(matches!(
        size(&SizingInput {
            stop_e6: 10_000_000,
            ..base
        }),
        Err(SizingError::StopNotBelowEntry { .. })
    ));
    assert_eq!(
        err(SizingInput {
            equity_fen: 0,
            ..base
        }),
        "权益必须大于 0（收到 0.00 元）"
    );
    assert_eq!(
        err(SizingInput {
            cash_fen: -1,
            ..base
        }),
        "现金不能为负（收到 -0.01 元）"
    );
    assert_eq!(
        err(SizingInput {
            held_value_fen: -1,
            ..base
        }),
        "已持有市值不能为负（收到 -0.01 元）"
    );
    assert_eq!(
        size(&SizingInput {
            held_value_fen: 2_000_000,
            ..base
        })
        .unwrap()
        .why_none()
        .unwrap(),
        "单只仓位上限已用去 20000.00 元（已持有），剩余 0.00 元不够买最小的 100 股（含费用）"
    );
    assert_eq!(
        err(SizingInput { risk_bp: 0, ..base }),
        "risk_pct 必须在 0.01%–100% 之间（收到 0%）"
    );
    assert!(matches!(
        size(&SizingInput {
            max_position_bp: 10_001,
            ..base
        }),
        Err(SizingError::BadPercent {
            what: "max_position_pct",
            ..
        })
    ));
    assert!(matches!(
        size(&SizingInput {
            entry_e6: 0,
            ..base
        }),
        Err(SizingError::BadEntry { .. })
    ));
}

#[test]
fn the_regime_scale_follows_the_funnels_gate() {
    let cases = [
        (Regime::RiskOn, 100),
        (Regime::Neutral, 100),
        (Regime::Caution, 50),
        (Regime::PanicRepairConfirmed, 50),
        (Regime::BearRebound, 50),
        (Regime::PanicRepair, 50),
        (Regime::RiskOff, 0),
        (Regime::Crash, 0),
        (Regime::Unknown, 0),
    ];
    for (regime, pct) in cases {
        assert_eq!(regime_scale_pct(regime), pct, "{regime:?}");
    }
}

#[test]
fn percents_and_prices_at_the_boundary() {
    assert_eq!(pct_to_bp(1.0), Some(100));
    assert_eq!(pct_to_bp(0.8), Some(80));
    assert_eq!(pct_to_bp(100.0), Some(10_000));
    assert_eq!(pct_to_bp(0.0), None);
    assert_eq!(pct_to_bp(-1.0), None);
    assert_eq!(pct_to_bp(100.5), None);
    assert_eq!(pct_to_bp(f64::NAN), None);
    assert_eq!(price_e6(10.5), Some(10_500_000));
    assert_eq!(price_e6(0.0), None);
    assert_eq!(price_e6(f64::INFINITY), None);
    assert_eq!(fen_of(1_005.01), Some(100_501));
}

/// A textbook accumulation cut `after` bars past its Spring.
fn spring_tape(after: usize) -> Vec<Bar> {
    let c = case(&OK);
    c.bars[..=c.spring + after].to_vec()
}

#[test]
fn the_structure_stop_is_the_latest_spring_or_lps_low_under_the_entry() {
    let c = case(&OK);
    // Five bars after the Spring (low 12.30), before the SOS.
    let bars = spring_tape(5);
    let entry = price_e6(bars[bars.len() - 1].close).unwrap();
    let s = structure_stop(&bars, entry).unwrap();
    assert_eq!(
        s,
        Stop {
            stop_e6: 12_300_000,
            source: StopSource::Spring {
                date: c.bars[c.spring].date
            }
        }
    );
    // After the LPS (low 14.50 × 0.99 = 14.355, down to the fen) the LPS is the latest.
    let bars = &c.bars[..=c.lps + 3];
    let entry = price_e6(bars[bars.len() - 1].close).unwrap();
    assert_eq!(
        structure_stop(bars, entry).unwrap(),
        Stop {
            stop_e6: 14_350_000,
            source: StopSource::Lps {
                date: c.bars[c.lps].date
            }
        }
    );
    // An entry under the LPS low falls back to the Spring's.
    assert_eq!(
        structure_stop(bars, 14_000_000).unwrap().source,
        StopSource::Spring {
            date: c.bars[c.spring].date
        }
    );
    // Under every level there is none.
    assert_eq!(structure_stop(bars, 5_000_000), None);
}

#[test]
fn the_default_stop_is_the_tighter_of_structure_and_atr() {
    let bars = spring_tape(5);
    let entry = price_e6(bars[bars.len() - 1].close).unwrap();
    let a = atr(&bars, ATR_PERIOD).unwrap();
    let atr_e6 = price_e6(a).unwrap();
    for k in [0.5, 1.0, 2.0, 3.0] {
        let atr_level = (entry - (k * atr_e6 as f64).round() as i64) / 10_000 * 10_000;
        let choice = choose_stop(&bars, entry, StopRule::Tighter { atr_k: k }).unwrap();
        assert_eq!(choice.considered.len(), 2, "k {k}");
        assert_eq!(choice.considered[0].stop_e6, 12_300_000);
        assert_eq!(choice.considered[1].stop_e6, atr_level, "k {k}");
        assert_eq!(choice.chosen.stop_e6, atr_level.max(12_300_000), "k {k}");
        let atr_only = choose_stop(&bars, entry, StopRule::Atr { atr_k: k }).unwrap();
        assert_eq!(atr_only.chosen.stop_e6, atr_level);
        assert_eq!(atr_only.chosen.source, StopSource::Atr { atr_e6, k });
    }
    let structure = choose_stop(&bars, entry, StopRule::Structure).unwrap();
    assert_eq!(structure.chosen.stop_e6, 12_300_000);
    // A price given is taken as it is, and must be under the entry.
    let given = choose_stop(
        &bars,
        entry,
        StopRule::Price {
            stop_e6: 13_000_000,
        },
    )
    .unwrap();
    assert_eq!(given.chosen.source, StopSource::Given);
    assert!(matches!(
        choose_stop(&bars, entry, StopRule::Price { stop_e6: entry }),
        Err(SizingError::StopNotBelowEntry { .. })
    ));
    assert!(matches!(
        choose_stop(&bars, entry, StopRule::Atr { atr_k: 0.0 }),
        Err(SizingError::BadAtrK(_))
    ));
    // Too few bars for an ATR and no structure: no stop, and the message says what to do.
    let short = &bars[..5];
    let e = choose_stop(short, entry, StopRule::default()).unwrap_err();
    assert!(matches!(e, SizingError::NoStop { .. }), "{e:?}");
    assert!(e.to_string().contains("--stop"), "{e}");
    assert!(matches!(
        choose_stop(short, entry, StopRule::Atr { atr_k: 2.0 }),
        Err(SizingError::NoAtrStop { have: 5, .. })
    ));
}

fn board() -> impl Strategy<Value = Board> {
    prop_oneof![
        Just(Board::Main),
        Just(Board::Chinext),
        Just(Board::Star),
        Just(Board::Bse)
    ]
}

fn regime() -> impl Strategy<Value = Option<Regime>> {
    prop_oneof![
        Just(None),
        Just(Some(Regime::RiskOn)),
        Just(Some(Regime::Neutral)),
        Just(Some(Regime::Caution)),
        Just(Some(Regime::BearRebound)),
        Just(Some(Regime::RiskOff)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// The risk at the stop never exceeds the budget, the shares are a buy the board
    /// accepts, the cost stays within the cash and the position budget — and one more
    /// step of the board's lot would break one of them.
    #[test]
    fn within_every_limit_and_the_largest_such_buy(
        board in board(),
        entry_fen in 50i64..100_000,
        stop_frac in 1u32..1_000,
        equity_fen in 100_000i64..1_000_000_000,
        cash_per_mille in 0i64..1_500,
        risk_bp in 1u32..500,
        max_position_bp in 100u32..=10_000,
        held_per_mille in prop_oneof![Just(0i64), 0i64..1_200],
        regime in regime(),
        date in prop_oneof![Just(20230825u32), Just(20240102u32)],
    ) {
        let entry_e6 = entry_fen * E6_PER_FEN;
        // anywhere from a fen under the entry to near zero
        let stop_e6 = (entry_e6 - (entry_e6 * i64::from(stop_frac) / 1_000).max(E6_PER_FEN))
            .max(1);
        prop_assume!(stop_e6 < entry_e6);
        let cash_fen = equity_fen * cash_per_mille / 1_000;
        // the shares of the stock already held: none, or up to past the position cap
        let held_value_fen = equity_fen * i64::from(max_position_bp) / BP * held_per_mille / 1_000;
        let inp = SizingInput {
            board, date, entry_e6, stop_e6, equity_fen, cash_fen, risk_bp, max_position_bp,
            held_value_fen, regime,
        };
        let s = size(&inp).unwrap();
        let lot = board.lot_rule();
        let scale = i64::from(regime.map_or(100, regime_scale_pct));
        let budget = equity_fen * i64::from(risk_bp) / BP * scale / 100;
        let position = (equity_fen * i64::from(max_position_bp) / BP - held_value_fen).max(0);
        // recomputed from the fee schedule, not from the module's helpers
        let amount = |n: u64, p: i64| div_round(i128::from(n) * i128::from(p), 10_000) as i64;
        let cost = |n: u64| if n == 0 { 0 } else {
            amount(n, entry_e6) + fees_for(amount(n, entry_e6), false, date).total_fen()
        };
        let risk_e6 = |n: u64| if n == 0 { 0 } else {
            i128::from(n) * i128::from(entry_e6 - stop_e6)
                + 10_000 * i128::from(
                    fees_for(amount(n, entry_e6), false, date).total_fen()
                        + fees_for(amount(n, stop_e6), true, date).total_fen(),
                )
        };
        prop_assert!(s.shares == 0 || lot.is_valid(s.shares), "{s:?}");
        prop_assert!(risk_e6(s.shares) <= i128::from(budget) * 10_000, "{s:?}");
        prop_assert!(s.risk_fen <= budget, "{s:?}");
        prop_assert!(s.risk_fen <= s.risk_budget_fen, "{s:?}");
        prop_assert_eq!(s.cost_fen, cost(s.shares));
        prop_assert!(s.cost_fen <= cash_fen, "{s:?}");
        prop_assert!(s.cost_fen <= position, "{s:?}");
        let next = if s.shares == 0 { lot.minimum } else { s.shares + lot.step };
        prop_assert!(
            risk_e6(next) > i128::from(budget) * 10_000
                || cost(next) > cash_fen
                || cost(next) > position,
            "{next} would fit too: {s:?}"
        );
        for cap in &s.bound {
            prop_assert!(cap.shares() < s.risk_shares, "{s:?}");
        }
        prop_assert_eq!(s.shares, s.bound.iter().map(Cap::shares).fold(s.risk_shares, u64::min));
    }
}
