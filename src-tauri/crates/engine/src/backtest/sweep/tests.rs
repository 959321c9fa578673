use super::*;
use crate::triggers::TriggerKind;

#[test]
fn value_specs_are_lists_ranges_or_both() {
    let p = Param::StopLossPct;
    let cases: [(&str, bool, &[f64]); 8] = [
        ("5,10,20", true, &[5.0, 10.0, 20.0]),
        ("5..20:5", true, &[5.0, 10.0, 15.0, 20.0]),
        // The last step stops at or before TO.
        ("5..18:5", true, &[5.0, 10.0, 15.0]),
        ("5..20:5,30", true, &[5.0, 10.0, 15.0, 20.0, 30.0]),
        ("-8..-7:0.5", false, &[-8.0, -7.5, -7.0]),
        // Decimal steps land on TO and print as written.
        ("0..0.3:0.1", false, &[0.0, 0.1, 0.2, 0.3]),
        (" 7 , 3 ", true, &[7.0, 3.0]),
        ("4..4:1", true, &[4.0]),
    ];
    for (spec, integer, want) in cases {
        assert_eq!(parse_numbers(p, spec, integer).unwrap(), want, "{spec}");
    }
}

#[test]
fn bad_value_specs_say_what_is_wrong() {
    let p = Param::HoldDays;
    let cases: [(&str, SweepError); 10] = [
        (
            "10..5:1",
            SweepError::RangeBackwards {
                param: p,
                spec: "10..5:1".into(),
                from: 10.0,
                to: 5.0,
            },
        ),
        (
            "5..10:0",
            SweepError::StepNotPositive {
                param: p,
                spec: "5..10:0".into(),
            },
        ),
        (
            "5..10:-1",
            SweepError::StepNotPositive {
                param: p,
                spec: "5..10:-1".into(),
            },
        ),
        (
            "5..10",
            SweepError::BadRange {
                param: p,
                spec: "5..10".into(),
            },
        ),
        (
            "..10:1",
            SweepError::BadRange {
                param: p,
                spec: "..10:1".into(),
            },
        ),
        (
            "ten",
            SweepError::NotANumber {
                param: p,
                value: "ten".into(),
            },
        ),
        (
            "nan",
            SweepError::NotANumber {
                param: p,
                value: "nan".into(),
            },
        ),
        (
            "5.5",
            SweepError::NotAnInteger {
                param: p,
                value: "5.5".into(),
            },
        ),
        (
            "5,,10",
            SweepError::EmptyValue {
                param: p,
                spec: "5,,10".into(),
            },
        ),
        (
            "0..100000:1",
            SweepError::TooManyCombinations {
                count: 100_001,
                max: MAX_COMBINATIONS,
            },
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(parse_numbers(p, spec, true), Err(want), "{spec}");
    }
    // The message names the parameter, its flag and the fault.
    let e = parse_numbers(p, "10..5:1", true).unwrap_err().to_string();
    assert!(
        e.contains("hold_days (--hold-days)") && e.contains("起点 10 大于终点 5"),
        "{e}"
    );
}

fn raw<'a>() -> RawSweepArgs<'a> {
    RawSweepArgs {
        start: Some("2022-01-04"),
        end: Some("2022-06-30"),
        ..RawSweepArgs::default()
    }
}

#[test]
fn one_value_is_a_single_backtest_clamped_as_ever() {
    let g = SweepGrid::parse(
        &RawSweepArgs {
            hold_days: Some("70"),
            stop_loss_pct: Some("5"),
            top_n: Some("-1"),
            entry_price_mode: Some("tail_1455"),
            ..raw()
        },
        20260101,
    )
    .unwrap();
    assert!(g.is_single());
    let single = BacktestArgs::parse(
        &RawBacktestArgs {
            start: Some("2022-01-04"),
            end: Some("2022-06-30"),
            hold_days: Some(70),
            stop_loss_pct: Some(5.0),
            top_n: Some(-1),
            entry_price_mode: Some("tail_1455"),
            ..RawBacktestArgs::default()
        },
        20260101,
    )
    .unwrap();
    assert_eq!(g.args([0; AXES]), single);
    assert_eq!(
        (single.hold_days, single.stop_loss_pct, single.top_n),
        (60, -5.0, 0)
    );
    // Nothing given: the §14.11 defaults.
    let d = SweepGrid::parse(&raw(), 20260101).unwrap();
    assert_eq!(
        d.args([0; AXES]),
        BacktestArgs::parse(
            &RawBacktestArgs {
                start: Some("2022-01-04"),
                end: Some("2022-06-30"),
                ..RawBacktestArgs::default()
            },
            20260101
        )
        .unwrap()
    );
}

#[test]
fn several_values_are_checked_sorted_and_combined() {
    let g = SweepGrid::parse(
        &RawSweepArgs {
            hold_days: Some("20,5,10"),
            stop_loss_pct: Some("5,-8"),
            entry_price_mode: Some("close,open"),
            triggers: Some("spring+evr, spring+evr+trend_pb+sos"),
            ..raw()
        },
        20260101,
    )
    .unwrap();
    assert_eq!(g.hold_days, [5, 10, 20]);
    assert_eq!(g.stop_loss_pct, [-8.0, -5.0]);
    assert_eq!(g.entry_price_mode, [EntryMode::Close, EntryMode::Open]);
    assert_eq!(
        g.triggers,
        [
            TriggerSet::of(&[TriggerKind::Spring, TriggerKind::Evr]),
            TriggerSet::of(&[
                TriggerKind::Spring,
                TriggerKind::Evr,
                TriggerKind::TrendPullback,
                TriggerKind::Sos
            ]),
        ]
    );
    assert_eq!(g.len(), 24);
    assert_eq!(
        g.swept(),
        [
            Param::HoldDays,
            Param::StopLossPct,
            Param::EntryPriceMode,
            Param::Triggers
        ]
    );
    let cells = g.cells();
    assert_eq!(cells.len(), 24);
    assert_eq!(cells[0], [0, 0, 0, 0, 0, 0]);
    assert_eq!(cells[1], [0, 0, 0, 0, 0, 1]);
    assert_eq!(cells[23], [2, 1, 0, 0, 1, 1]);
    let a = g.args(cells[23]);
    assert_eq!(
        (a.hold_days, a.stop_loss_pct, a.entry_price_mode),
        (20, -5.0, EntryMode::Open)
    );
    assert!(g.trigger_union().contains(TriggerKind::Sos));
}

#[test]
fn bad_grids_are_specific_errors() {
    let bad = |r: RawSweepArgs<'_>| SweepGrid::parse(&r, 20260101).unwrap_err();
    assert_eq!(
        bad(RawSweepArgs {
            hold_days: Some("50,70"),
            ..raw()
        }),
        SweepError::OutOfRange {
            param: Param::HoldDays,
            value: "70".into(),
            allowed: "1–60"
        }
    );
    assert_eq!(
        bad(RawSweepArgs {
            top_n: Some("0..25:5"),
            ..raw()
        }),
        SweepError::OutOfRange {
            param: Param::TopN,
            value: "25".into(),
            allowed: "0–20"
        }
    );
    // 5 and −5 are the same stop.
    assert_eq!(
        bad(RawSweepArgs {
            stop_loss_pct: Some("5,-5"),
            ..raw()
        }),
        SweepError::Duplicate {
            param: Param::StopLossPct,
            value: "-5".into()
        }
    );
    assert_eq!(
        bad(RawSweepArgs {
            entry_price_mode: Some("close,tail_1455"),
            ..raw()
        }),
        SweepError::Duplicate {
            param: Param::EntryPriceMode,
            value: "close".into()
        }
    );
    assert_eq!(
        bad(RawSweepArgs {
            entry_price_mode: Some("open,midday"),
            ..raw()
        }),
        SweepError::Backtest(BacktestError::BadEntryMode("midday".into()))
    );
    assert_eq!(
        bad(RawSweepArgs {
            triggers: Some("spring,wedge"),
            ..raw()
        }),
        SweepError::Backtest(BacktestError::UnknownTrigger("wedge".into()))
    );
    assert!(matches!(
        bad(RawSweepArgs {
            entry_price_mode: Some("open..close:1"),
            ..raw()
        }),
        SweepError::RangeOfNames { .. }
    ));
    assert!(matches!(
        bad(RawSweepArgs {
            start: Some("2022-07-01"),
            ..raw()
        }),
        SweepError::Backtest(BacktestError::StartAfterEnd { .. })
    ));
}

#[test]
fn the_combination_cap_is_exactly_a_thousand() {
    let at_cap = RawSweepArgs {
        hold_days: Some("1..10:1"),
        top_n: Some("1..10:1"),
        take_profit_pct: Some("0..9:1"),
        ..raw()
    };
    assert_eq!(
        SweepGrid::parse(&at_cap, 20260101).unwrap().len(),
        MAX_COMBINATIONS
    );
    let over = RawSweepArgs {
        take_profit_pct: Some("0..9:1,20"),
        ..at_cap
    };
    let e = SweepGrid::parse(&over, 20260101).unwrap_err();
    assert_eq!(
        e,
        SweepError::TooManyCombinations {
            count: 1_100,
            max: 1_000
        }
    );
    assert!(e.to_string().contains("1100") && e.to_string().contains("1000"));
}

#[test]
fn metrics_parse_and_point_the_right_way() {
    for (text, want) in [
        ("sharpe", SweepMetric::Sharpe),
        ("return", SweepMetric::Return),
        ("Annualised", SweepMetric::Annualized),
        ("max-drawdown", SweepMetric::MaxDrawdown),
        ("win_rate", SweepMetric::WinRate),
        ("profit_factor", SweepMetric::ProfitFactor),
    ] {
        assert_eq!(SweepMetric::parse(text), Ok(want), "{text}");
    }
    assert!(SweepMetric::parse("luck").is_err());
    assert!(!SweepMetric::MaxDrawdown.higher_is_better());
    assert!(SweepMetric::Sharpe.higher_is_better());
}

/// A 3 × 3 grid over two axes (hold days × stop-loss).
fn grid3() -> Vec<Coords> {
    (0..9).map(|k| [k / 3, k % 3, 0, 0, 0, 0]).collect()
}

#[test]
fn stability_is_where_the_bests_neighbours_sit_between_the_worst_and_the_best() {
    // (values in grid order, higher is better, best row, score, neighbour rows)
    type Case = (
        [Option<f64>; 9],
        bool,
        Option<usize>,
        Option<f64>,
        &'static [usize],
    );
    let s = Some;
    let cases: [Case; 8] = [
        // A plateau: the centre's neighbours (1, 3, 5, 7) nearly as good as the centre.
        (
            [
                s(0.),
                s(8.),
                s(0.),
                s(8.),
                s(9.),
                s(8.),
                s(0.),
                s(8.),
                s(0.),
            ],
            true,
            Some(4),
            Some(0.89),
            &[1, 3, 5, 7],
        ),
        // A lone spike: the neighbours are the worst cells.
        (
            [
                s(1.),
                s(1.),
                s(1.),
                s(1.),
                s(9.),
                s(1.),
                s(1.),
                s(1.),
                s(1.),
            ],
            true,
            Some(4),
            Some(0.0),
            &[1, 3, 5, 7],
        ),
        // Half-way: worst 2, best 10, neighbours mean 6.
        (
            [
                s(2.),
                s(6.),
                s(2.),
                s(4.),
                s(10.),
                s(8.),
                s(2.),
                s(6.),
                s(2.),
            ],
            true,
            Some(4),
            Some(0.5),
            &[1, 3, 5, 7],
        ),
        // The drawdown: lowest is best; corner 0's neighbours are 1 and 3.
        (
            [
                s(5.),
                s(6.),
                s(30.),
                s(7.),
                s(30.),
                s(30.),
                s(30.),
                s(30.),
                s(30.),
            ],
            false,
            Some(0),
            // g: best −5, worst −30, neighbours mean −6.5 → (−6.5+30)/(−5+30) = 0.94
            Some(0.94),
            &[1, 3],
        ),
        // A neighbour without a value counts as the worst cell; ties go to the first cell.
        (
            [s(4.), None, s(0.), s(4.), s(4.), s(0.), s(0.), s(0.), s(0.)],
            true,
            Some(0),
            // best 4, worst 0, neighbours (0, 4) mean 2 → 0.5
            Some(0.5),
            &[1, 3],
        ),
        // Negative values: best −1, worst −5, neighbours −3 → 0.5.
        (
            [
                s(-5.),
                s(-3.),
                s(-5.),
                s(-3.),
                s(-1.),
                s(-3.),
                s(-5.),
                s(-3.),
                s(-5.),
            ],
            true,
            Some(4),
            Some(0.5),
            &[1, 3, 5, 7],
        ),
        // Every cell the same: as stable as can be.
        ([s(3.); 9], true, Some(0), Some(1.0), &[1, 3]),
        // No values at all: no best.
        ([None; 9], true, None, None, &[]),
    ];
    for (values, higher, best, score, neighbours) in cases {
        let (b, st) = best_and_stability(&grid3(), &values, higher);
        assert_eq!(b, best, "{values:?}");
        assert_eq!(
            st.as_ref().map(|s| (s.score * 100.0).round() / 100.0),
            score,
            "{values:?}"
        );
        if let Some(st) = st {
            assert_eq!(st.neighbours, neighbours, "{values:?}");
        }
    }
    // The figures are in the metric's own units.
    let (_, st) = best_and_stability(
        &grid3(),
        &[
            s(5.),
            s(6.),
            s(30.),
            s(7.),
            s(30.),
            s(30.),
            s(30.),
            s(30.),
            s(30.),
        ],
        false,
    );
    let st = st.unwrap();
    assert_eq!(
        (st.neighbour_mean, st.neighbour_worst, st.grid_worst),
        (6.5, 7.0, 30.0)
    );
}

#[cfg(feature = "synthetic")]
mod on_a_synthetic_market {
    use super::*;
    use crate::backtest::{FunnelSignals, run_backtest};
    use crate::synthetic::{MarketShape, market};
    use std::sync::Mutex;
    use std::sync::atomic::AtomicBool;

    fn universe() -> Universe {
        market(MarketShape {
            stocks: 150,
            bars: 330,
            start: 20220103,
            seed: 28,
        })
    }

    fn grid(u: &Universe) -> SweepGrid {
        let days: Vec<u32> = u.stocks[0].bars.iter().map(|b| b.date).collect();
        SweepGrid {
            start: days[250],
            end: days[329],
            board: BoardFilter::All,
            hold_days: vec![3, 8],
            stop_loss_pct: vec![-8.0, -4.0],
            take_profit_pct: vec![0.0],
            top_n: vec![2, 4],
            entry_price_mode: vec![EntryMode::Open, EntryMode::Close],
            triggers: vec![
                TriggerSet::FUNNEL_DEFAULT,
                TriggerSet::of(&[TriggerKind::Sos, TriggerKind::Lps, TriggerKind::Compression]),
            ],
            sizing: PositionSizing::EqualSlots,
        }
    }

    fn single(u: &Universe, a: &BacktestArgs) -> (BacktestResult, usize) {
        let mut signals =
            FunnelSignals::with_triggers(u, a.board, a.triggers, &crate::Never).unwrap();
        let r = run_backtest(u, a, &mut signals).unwrap();
        (r, signals.gated_days)
    }

    #[test]
    fn every_checked_cell_equals_the_single_backtest_with_its_parameters() {
        let u = universe();
        let g = grid(&u);
        let seen = Mutex::new(Vec::new());
        let cells = run_sweep(&u, &g, &crate::Never, &|p| seen.lock().unwrap().push(p)).unwrap();
        assert_eq!(cells.len(), 32);
        // Cells of both trigger sets, both entries, both ends of every numeric axis.
        for k in [0, 5, 10, 15, 19, 22, 26, 31] {
            let c = &cells[k];
            assert_eq!(c.coords, g.cells()[k]);
            let (want, gated) = single(&u, &g.args(c.coords));
            assert_eq!(c.result, want, "cell {k} {:?}", c.coords);
            assert_eq!(c.regime_gated_days, gated, "cell {k}");
        }
        // The sweep is not trivially flat: the trigger sets trade differently.
        assert!(!cells[0].result.trades.is_empty());
        assert_ne!(cells[0].result.trades, cells[1].result.trades);
        // Progress: every day screened once, every combination once.
        let seen = seen.into_inner().unwrap();
        let days = cells[0].result.trading_days;
        let count = |f: fn(&SweepProgress) -> bool| seen.iter().filter(|p| f(p)).count();
        assert_eq!(count(|p| matches!(p, SweepProgress::Signals { .. })), days);
        assert_eq!(
            count(|p| matches!(p, SweepProgress::Combinations { .. })),
            32
        );
        assert!(seen.contains(&SweepProgress::Combinations {
            done: 32,
            total: 32
        }));
        // The report: a row per cell, the best by Sharpe among them.
        let r = SweepReport::new(&g, &cells, SweepMetric::Return);
        assert_eq!(r.rows.len(), 32);
        let best = r.best.unwrap();
        let top = r
            .rows
            .iter()
            .map(|row| row.metrics.total_return_pct)
            .fold(f64::MIN, f64::max);
        assert_eq!(r.rows[best].metrics.total_return_pct, top);
        assert_eq!(r.stability.as_ref().unwrap().neighbours.len(), 5);
        // The period's point-in-time notes come up with the report: the synthetic list has
        // no name history and only today's caps, for every stock of the period.
        assert_eq!(r.as_of_notes, cells[0].result.as_of_notes);
        assert_eq!(
            (
                r.as_of_notes.stocks,
                r.as_of_notes.st_from_today,
                r.as_of_notes.cap_from_today
            ),
            (150, 150, 150)
        );
        assert_eq!(r.notes, r.as_of_notes.lines());
        assert!(r.notes.iter().any(|n| n.contains("ST 状态取自今日名称")));
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["kind"], "sweep");
        assert_eq!(serde_json::from_value::<SweepReport>(json).unwrap(), r);
    }

    #[test]
    fn a_risk_sized_sweep_sizes_every_cell_as_its_single_backtest() {
        use crate::risk_limits::RiskLimits;
        use crate::sizing::LimitsSource;
        let u = universe();
        let limits = RiskLimits {
            max_positions: 3,
            ..RiskLimits::default()
        };
        let sizing = PositionSizing::parse(Some("risk"), Some(0.5))
            .unwrap()
            .under(limits, LimitsSource::Settings);
        let g = grid(&u).with_sizing(sizing).unwrap();
        let cells = run_sweep(&u, &g, &crate::Never, &|_| {}).unwrap();
        for k in [0, 7, 19, 31] {
            let c = &cells[k];
            let a = g.args(c.coords);
            assert_eq!(a.sizing, sizing);
            assert_eq!(c.result, single(&u, &a).0, "cell {k}");
        }
        // Every trade risk-sized within 0.5 % of the equity it was bought with.
        let trades: Vec<_> = cells.iter().flat_map(|c| &c.result.trades).collect();
        assert!(!trades.is_empty());
        for t in trades {
            let r = t.entry_risk.unwrap();
            assert!(r.risk <= r.equity * 0.005 + 1e-6, "{t:?}");
        }
        // The report names the sizing and each row's held-back picks; equal slots differ.
        let r = SweepReport::new(&g, &cells, SweepMetric::Return);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["grid"]["sizing"]["type"], "risk");
        assert_eq!(json["grid"]["sizing"]["limits_from"], "settings");
        assert!(r.notes[0].starts_with("按风险定仓"), "{:?}", r.notes);
        assert!(r.notes[1].contains("最多 3 只"), "{:?}", r.notes);
        assert!(
            r.rows
                .iter()
                .any(|row| row.skipped_entries.contains_key("positions_limit")),
            "a 4-slot cell meets the 3-position limit"
        );
        assert_eq!(serde_json::from_value::<SweepReport>(json).unwrap(), r);
        let equal = run_sweep(&u, &grid(&u), &crate::Never, &|_| {}).unwrap();
        assert_ne!(equal[0].result.trades, cells[0].result.trades);
        // A cell without a stop-loss cannot be risk-sized.
        let no_stop = SweepGrid {
            stop_loss_pct: vec![-8.0, 0.0],
            ..grid(&u)
        };
        assert_eq!(
            no_stop.with_sizing(sizing).unwrap_err(),
            BacktestError::RiskSizingNeedsStop
        );
    }

    #[test]
    fn a_cancelled_sweep_reports_nothing() {
        let u = universe();
        let g = grid(&u);
        let stop = AtomicBool::new(false);
        let r = run_sweep(&u, &g, &stop, &|p| {
            if matches!(p, SweepProgress::Signals { done: 10, .. }) {
                stop.store(true, Ordering::Relaxed);
            }
        });
        assert_eq!(r.unwrap_err(), BacktestError::Cancelled);
    }
}
