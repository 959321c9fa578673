use super::*;

fn spec(in_sample: usize, out_of_sample: usize, step: usize) -> WalkForwardSpec {
    WalkForwardSpec {
        in_sample,
        out_of_sample,
        step,
    }
}

fn span(is: (usize, usize), oos: (usize, usize), partial: bool) -> WindowSpan {
    WindowSpan {
        in_sample: is,
        out_of_sample: oos,
        partial,
    }
}

#[test]
fn specs_parse_with_the_step_defaulting_to_out_of_sample() {
    assert_eq!(WalkForwardSpec::parse("250,60").unwrap(), spec(250, 60, 60));
    assert_eq!(
        WalkForwardSpec::parse(" 250 , 60 , 90 ").unwrap(),
        spec(250, 60, 90)
    );
    for bad in [
        "",
        "250",
        "250,60,60,1",
        "250,-60",
        "a,b",
        "250,60.5",
        "250,,60",
    ] {
        assert_eq!(
            WalkForwardSpec::parse(bad).unwrap_err(),
            WalkForwardError::BadSpec(bad.to_owned()),
            "{bad:?}"
        );
    }
}

#[test]
fn windows_roll_by_the_step_and_the_last_one_may_be_partial() {
    let cases: [(usize, WalkForwardSpec, Vec<WindowSpan>); 6] = [
        // Exactly one window.
        (5, spec(3, 2, 2), vec![span((0, 3), (3, 5), false)]),
        // Exactly two full windows.
        (
            7,
            spec(3, 2, 2),
            vec![span((0, 3), (3, 5), false), span((2, 5), (5, 7), false)],
        ),
        // One day more: a third window with one out-of-sample day.
        (
            8,
            spec(3, 2, 2),
            vec![
                span((0, 3), (3, 5), false),
                span((2, 5), (5, 7), false),
                span((4, 7), (7, 8), true),
            ],
        ),
        // A step longer than out-of-sample leaves gaps between the tests.
        (
            10,
            spec(3, 2, 4),
            vec![span((0, 3), (3, 5), false), span((4, 7), (7, 9), false)],
        ),
        // 250,60,60 over 430 days: 250–310, 310–370, 370–430.
        (
            430,
            spec(250, 60, 60),
            vec![
                span((0, 250), (250, 310), false),
                span((60, 310), (310, 370), false),
                span((120, 370), (370, 430), false),
            ],
        ),
        (
            431,
            spec(250, 60, 60),
            vec![
                span((0, 250), (250, 310), false),
                span((60, 310), (310, 370), false),
                span((120, 370), (370, 430), false),
                span((180, 430), (430, 431), true),
            ],
        ),
    ];
    for (days, s, want) in cases {
        assert_eq!(windows(days, s).unwrap(), want, "{days} days, {s:?}");
    }
}

#[test]
fn bad_windows_are_clear_errors() {
    // One day short of in-sample + out-of-sample.
    assert_eq!(
        windows(309, spec(250, 60, 60)).unwrap_err(),
        WalkForwardError::TooShort {
            days: 309,
            needed: 310,
            in_sample: 250,
            out_of_sample: 60
        }
    );
    assert!(windows(310, spec(250, 60, 60)).is_ok());
    assert_eq!(
        windows(100, spec(0, 10, 10)).unwrap_err(),
        WalkForwardError::Zero {
            what: "样本内长度"
        }
    );
    assert_eq!(
        windows(100, spec(10, 0, 0)).unwrap_err(),
        WalkForwardError::Zero {
            what: "样本外长度"
        }
    );
    assert_eq!(
        windows(100, spec(10, 10, 9)).unwrap_err(),
        WalkForwardError::StepBelowOutOfSample {
            step: 9,
            out_of_sample: 10
        }
    );
    // The window cap, exactly: 1 + 200 days gives 200 windows of 1/1; one more is too many.
    assert_eq!(windows(201, spec(1, 1, 1)).unwrap().len(), MAX_WINDOWS);
    assert_eq!(
        windows(202, spec(1, 1, 1)).unwrap_err(),
        WalkForwardError::TooManyWindows {
            count: 201,
            max: MAX_WINDOWS
        }
    );
    let text = windows(309, spec(250, 60, 60)).unwrap_err().to_string();
    assert!(text.contains("309") && text.contains("310"), "{text}");
}

#[test]
fn the_verdict_says_when_out_of_sample_falls_apart() {
    // The reference's warning: one window of sixteen positive.
    let mut returns = vec![-1.0; 16];
    returns[3] = 2.0;
    let v = verdict(&returns, 0, -12.0, -9.5, &[30.0, 40.0]);
    assert!(v.falls_apart);
    assert_eq!((v.windows_run, v.positive_windows), (16, 1));
    assert!(v.text.contains("仅 1/16 个测试窗口为正"), "{}", v.text);
    assert!(v.text.contains("远低于样本内 35.0%"), "{}", v.text);
    assert!(v.text.starts_with("样本外失效"), "{}", v.text);

    // Half positive exactly is not "fewer than half"; efficiency exactly 0.5 is not below.
    let v = verdict(&[1.0, -1.0], 0, 5.0, 10.0, &[20.0]);
    assert!(!v.falls_apart, "{v:?}");
    assert_eq!(v.efficiency, Some(0.5));
    assert!(v.text.starts_with("样本外大体成立"), "{}", v.text);
    assert!(v.text.contains("1/2 个测试窗口为正"), "{}", v.text);

    // Every window positive, but far below what in-sample promised.
    let v = verdict(&[1.0, 1.0, 1.0], 0, 3.0, 4.0, &[20.0]);
    assert!(v.falls_apart);
    assert_eq!(v.efficiency, Some(0.2));
    assert!(v.text.contains("远低于样本内 20.0%"), "{}", v.text);
    assert!(!v.text.contains("仅"), "{}", v.text);

    // A losing in-sample gives no efficiency; a third positive falls apart by the count.
    let v = verdict(&[1.0, -1.0, -1.0], 0, -2.0, -3.0, &[-5.0]);
    assert_eq!(v.efficiency, None);
    assert!(v.falls_apart);
    assert!(v.text.contains("仅 1/3"), "{}", v.text);

    // No window chose anything.
    let v = verdict(&[], 3, 0.0, 0.0, &[]);
    assert!(!v.falls_apart);
    assert_eq!((v.windows_run, v.windows_without_choice), (0, 3));
    assert!(v.text.contains("无法做样本外检验"), "{}", v.text);

    // Windows without a choice are said, not counted as tests.
    let v = verdict(&[1.0, 2.0], 1, 3.0, 4.0, &[5.0]);
    assert!(v.text.contains("2/2 个测试窗口为正"), "{}", v.text);
    assert!(
        v.text
            .ends_with("另有 1 个窗口样本内没有可选组合，未做样本外检验"),
        "{}",
        v.text
    );
    let v = verdict(&[1.0, 2.0], 0, 3.0, 4.0, &[5.0]);
    assert!(!v.text.contains("另有"), "{}", v.text);
}

#[test]
fn chained_segments_compound() {
    let mut chain = Vec::new();
    chain_onto(&mut chain, [(1, 100_000.0), (2, 110_000.0)].into_iter(), 1);
    chain_onto(&mut chain, [(3, 100_000.0), (4, 90_000.0)].into_iter(), 2);
    let eq: Vec<f64> = chain.iter().map(|p| p.equity).collect();
    assert_eq!(eq, [100_000.0, 110_000.0, 110_000.0, 99_000.0]);
    assert_eq!(chain[3].window, 2);
}

#[cfg(feature = "synthetic")]
mod on_a_synthetic_market {
    use super::*;
    use crate::Bar;
    use crate::backtest::sweep::{RawSweepArgs, SweepGrid};
    use crate::backtest::{FunnelSignals, run_backtest};
    use crate::synthetic::{MarketShape, market};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn universe() -> Universe {
        market(MarketShape {
            stocks: 150,
            bars: 450,
            start: 20220103,
            seed: 28,
        })
    }

    fn days(u: &Universe) -> Vec<u32> {
        u.stocks[0].bars.iter().map(|b| b.date).collect()
    }

    /// Days 250–449 (200 trading days): windows 80/40 → 3 full windows.
    fn grid(u: &Universe) -> SweepGrid {
        let d = days(u);
        let (start, end) = (d[250].to_string(), d[449].to_string());
        SweepGrid::parse(
            &RawSweepArgs {
                start: Some(&start),
                end: Some(&end),
                hold_days: Some("3,8"),
                stop_loss_pct: Some("-8,-4"),
                top_n: Some("2,4"),
                ..RawSweepArgs::default()
            },
            d[449],
        )
        .unwrap()
    }

    const SPEC: WalkForwardSpec = WalkForwardSpec {
        in_sample: 80,
        out_of_sample: 40,
        step: 40,
    };

    fn run(u: &Universe) -> WalkForwardReport {
        run_walk_forward(
            u,
            &grid(u),
            SPEC,
            SweepMetric::Return,
            &crate::Never,
            &|_| {},
        )
        .unwrap()
    }

    fn perturb(bars: &mut [Bar], after: u32) {
        for b in bars.iter_mut().filter(|b| b.date > after) {
            b.close *= 1.7;
            b.open *= 0.6;
            b.high = b.high.max(b.close).max(b.open);
            b.low = b.low.min(b.close).min(b.open);
            b.volume *= 9.0;
        }
    }

    #[test]
    fn the_in_sample_choice_never_sees_out_of_sample_bars() {
        let u = universe();
        let base = run(&u);
        assert_eq!(base.windows.len(), 3);
        // For each window: perturb every bar (stocks and indexes) after its in-sample end;
        // its choice and every earlier window's stay the same.
        for cut_at in 0..3 {
            let cut = base.windows[cut_at].in_sample_end;
            let mut changed = u.clone();
            for s in &mut changed.stocks {
                perturb(&mut s.bars, cut);
            }
            let b = &mut changed.benchmarks;
            for bars in [&mut b.sse, &mut b.csi300, &mut b.chinext]
                .into_iter()
                .flatten()
            {
                perturb(bars, cut);
            }
            let other = run(&changed);
            for k in 0..=cut_at {
                let (w0, w1) = (&base.windows[k], &other.windows[k]);
                let at = format!("window {} (cut after window {})", k + 1, cut_at + 1);
                assert!(w0.chosen.is_some(), "{at} chose");
                assert_eq!(w0.chosen_row, w1.chosen_row, "{at}");
                assert_eq!(w0.chosen, w1.chosen, "{at}");
                assert_eq!(w0.in_sample_metric, w1.in_sample_metric, "{at}");
                assert_eq!(w0.in_sample, w1.in_sample, "{at}");
            }
            // The perturbation is visible: this window's out-of-sample result changed.
            assert_ne!(
                base.windows[cut_at].out_of_sample,
                other.windows[cut_at].out_of_sample,
                "cut after window {}",
                cut_at + 1
            );
        }
        // And the choice is not trivial: the combinations differ in sample.
        let cells = crate::backtest::sweep::run_sweep(
            &u,
            &SweepGrid {
                start: base.windows[1].in_sample_start,
                end: base.windows[1].in_sample_end,
                ..grid(&u)
            },
            &crate::Never,
            &|_| {},
        )
        .unwrap();
        let returns: Vec<f64> = cells
            .iter()
            .map(|c| c.result.metrics.total_return_pct)
            .collect();
        assert!(returns.iter().any(|r| *r != returns[0]), "{returns:?}");
    }

    #[test]
    fn a_position_stuck_at_the_in_sample_end_is_valued_there_not_sold_later() {
        let mut u = universe();
        let d = days(&u);
        // Every stock closes at its limit-down on window 1's last in-sample day (day 329):
        // whatever a combination holds then cannot be sold that day.
        let cut = d[329];
        for s in &mut u.stocks {
            let limit = s.board.limit_fraction(s.is_st(), cut);
            if let Some(i) = s.bars.iter().position(|b| b.date == cut)
                && i > 0
            {
                let (_, down) = crate::backtest::limit_prices(s.bars[i - 1].close, limit);
                let b = &mut s.bars[i];
                b.close = down;
                b.low = b.low.min(down);
                b.high = b.high.max(b.open);
            }
        }
        let base = run(&u);
        let w = &base.windows[0];
        assert_eq!(w.in_sample_end, cut);
        // The choice, run plainly over its in-sample days, sells after the cut.
        let chosen = w.chosen.as_ref().unwrap();
        let args = crate::backtest::BacktestArgs {
            start: w.in_sample_start,
            end: w.in_sample_end,
            board: crate::funnel::BoardFilter::All,
            hold_days: chosen.hold_days,
            stop_loss_pct: chosen.stop_loss_pct,
            take_profit_pct: chosen.take_profit_pct,
            top_n: chosen.top_n,
            entry_price_mode: chosen.entry_price_mode,
            triggers: chosen.triggers,
            sizing: Default::default(),
        };
        let mut signals = FunnelSignals::new(&u, crate::funnel::BoardFilter::All);
        let plain = run_backtest(&u, &args, &mut signals).unwrap();
        assert!(
            plain.trades.iter().any(|t| t.exit_date > cut),
            "a position was stuck at the cut: {:?}",
            plain.trades.last()
        );
        // Perturbing what comes after changes nothing in sample.
        let mut changed = u.clone();
        for s in &mut changed.stocks {
            perturb(&mut s.bars, cut);
        }
        let other = run(&changed);
        assert_eq!(other.windows[0].chosen, w.chosen);
        assert_eq!(other.windows[0].in_sample, w.in_sample);
    }

    #[test]
    fn a_risk_sized_walk_forward_runs_each_choice_risk_sized_out_of_sample() {
        use crate::sizing::{LimitsSource, PositionSizing};
        let u = universe();
        let limits = crate::risk_limits::RiskLimits {
            max_heat_bp: 300,
            ..Default::default()
        };
        let sizing = PositionSizing::parse(Some("risk"), Some(1.0))
            .unwrap()
            .under(limits, LimitsSource::Settings);
        let g = grid(&u).with_sizing(sizing).unwrap();
        let r =
            run_walk_forward(&u, &g, SPEC, SweepMetric::Return, &crate::Never, &|_| {}).unwrap();
        let mut skipped = 0;
        for w in &r.windows {
            let chosen = w.chosen.as_ref().unwrap();
            let args = crate::backtest::BacktestArgs {
                start: w.out_of_sample_start,
                end: w.out_of_sample_end,
                board: crate::funnel::BoardFilter::All,
                hold_days: chosen.hold_days,
                stop_loss_pct: chosen.stop_loss_pct,
                take_profit_pct: chosen.take_profit_pct,
                top_n: chosen.top_n,
                entry_price_mode: chosen.entry_price_mode,
                triggers: chosen.triggers,
                sizing,
            };
            let mut signals = FunnelSignals::new(&u, crate::funnel::BoardFilter::All);
            let single = run_backtest(&u, &args, &mut signals).unwrap();
            assert_eq!(w.out_of_sample.as_ref(), Some(&single.metrics));
            assert_eq!(w.out_of_sample_skipped, single.skipped_entries);
            skipped += w.out_of_sample_skipped.len();
        }
        assert!(skipped > 0, "the 3 % heat limit holds some buy back");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["grid"]["sizing"]["limits"]["max_heat_bp"], 300);
        assert!(r.notes.iter().any(|n| n.contains("账户限制（取自设置）")));
        let equal = run(&u);
        assert_ne!(
            equal.out_of_sample_curve, r.out_of_sample_curve,
            "risk sizing changes the out-of-sample run"
        );
    }

    #[test]
    fn each_window_runs_its_choice_out_of_sample_as_a_single_backtest() {
        let u = universe();
        let seen = Mutex::new(Vec::new());
        let r = run_walk_forward(
            &u,
            &grid(&u),
            SPEC,
            SweepMetric::Return,
            &crate::Never,
            &|p| seen.lock().unwrap().push(p),
        )
        .unwrap();
        let d = days(&u);
        assert_eq!(
            (r.first_day, r.last_day, r.trading_days),
            (d[250], d[449], 200)
        );
        assert_eq!(r.combinations, 8);
        let spans = [
            (250, 329, 330, 369),
            (290, 369, 370, 409),
            (330, 409, 410, 449),
        ];
        let mut chained = 0;
        for (w, (a, b, c, e)) in r.windows.iter().zip(spans) {
            assert_eq!(
                (
                    w.in_sample_start,
                    w.in_sample_end,
                    w.out_of_sample_start,
                    w.out_of_sample_end
                ),
                (d[a], d[b], d[c], d[e])
            );
            let chosen = w.chosen.as_ref().unwrap();
            let args = crate::backtest::BacktestArgs {
                start: w.out_of_sample_start,
                end: w.out_of_sample_end,
                board: crate::funnel::BoardFilter::All,
                hold_days: chosen.hold_days,
                stop_loss_pct: chosen.stop_loss_pct,
                take_profit_pct: chosen.take_profit_pct,
                top_n: chosen.top_n,
                entry_price_mode: chosen.entry_price_mode,
                triggers: chosen.triggers,
                sizing: Default::default(),
            };
            let mut signals = FunnelSignals::new(&u, crate::funnel::BoardFilter::All);
            let single = run_backtest(&u, &args, &mut signals).unwrap();
            assert_eq!(w.out_of_sample.as_ref(), Some(&single.metrics));
            assert_eq!(single.as_of_notes.st_from_today, 150);
            // The chain's segment is this run, scaled to continue the previous one.
            let seg: Vec<&ChainedPoint> = r
                .out_of_sample_curve
                .iter()
                .filter(|p| p.window == w.index)
                .collect();
            assert_eq!(seg.len(), single.equity_curve.len());
            chained += seg.len();
        }
        assert_eq!(chained, 120);
        assert_eq!(r.in_sample_curve.len(), 240);
        assert_eq!(r.verdict.windows_run, 3);
        // The whole period's point-in-time notes: no name history, today's caps.
        assert_eq!(
            (
                r.as_of_notes.stocks,
                r.as_of_notes.st_from_today,
                r.as_of_notes.cap_from_today
            ),
            (150, 150, 150)
        );
        assert_eq!(r.notes, r.as_of_notes.lines());
        assert!(r.notes.iter().any(|n| n.contains("市值门槛按今日市值")));
        let last = r.out_of_sample_curve.last().unwrap().equity;
        assert!(
            (r.verdict.out_of_sample_return_pct - (last / INITIAL_CASH - 1.0) * 100.0).abs() < 1e-9
        );
        // Progress: every day screened once, then window i of 3.
        let seen = seen.into_inner().unwrap();
        let screens = seen
            .iter()
            .filter(|p| matches!(p, WalkForwardProgress::Signals { .. }))
            .count();
        assert_eq!(screens, 200);
        let windows: Vec<_> = seen
            .iter()
            .filter(|p| matches!(p, WalkForwardProgress::Window { .. }))
            .copied()
            .collect();
        assert_eq!(
            windows,
            (1..=3)
                .map(|index| WalkForwardProgress::Window { index, total: 3 })
                .collect::<Vec<_>>()
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["kind"], "walk_forward");
        assert_eq!(
            serde_json::from_value::<WalkForwardReport>(json).unwrap(),
            r
        );
    }

    #[test]
    fn too_short_a_period_fails_before_any_screen_and_a_cancel_reports_nothing() {
        let u = universe();
        let seen = Mutex::new(0);
        let e = run_walk_forward(
            &u,
            &grid(&u),
            spec(150, 60, 60),
            SweepMetric::Sharpe,
            &crate::Never,
            &|_| *seen.lock().unwrap() += 1,
        )
        .unwrap_err();
        assert!(matches!(
            e,
            WalkForwardError::TooShort {
                days: 200,
                needed: 210,
                ..
            }
        ));
        assert_eq!(*seen.lock().unwrap(), 0);
        let stop = AtomicBool::new(false);
        let e = run_walk_forward(&u, &grid(&u), SPEC, SweepMetric::Sharpe, &stop, &|p| {
            if matches!(p, WalkForwardProgress::Window { index: 2, .. }) {
                stop.store(true, Ordering::Relaxed);
            }
        })
        .unwrap_err();
        assert_eq!(e, WalkForwardError::Backtest(BacktestError::Cancelled));
    }
}
