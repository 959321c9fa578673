use super::*;
use crate::L4Config;
use crate::indicators::test_support::{bar, dates, from_closes};
use crate::known_on::replay;
use crate::phases::tests::{OK, case};

fn input(bars: &[Bar]) -> AlertInput<'_> {
    AlertInput {
        code: "600000",
        name: "t",
        bars,
        holding: None,
        stop_loss: None,
        target: None,
        bench: None,
    }
}

fn check(c: AlertCondition, bars: &[Bar]) -> Outcome {
    evaluate(&c, &input(bars))
}

#[test]
fn price_levels_fire_on_the_close_at_or_past_the_level() {
    let bars = from_closes(&[10.0, 11.0], 100.0);
    let d = bars[1].date;
    let table = [
        (
            AlertCondition::PriceAbove { level: 11.0 },
            Outcome::Fired {
                bar_date: d,
                figures: AlertFigures::PriceAbove {
                    close: 11.0,
                    level: 11.0,
                },
            },
        ),
        (
            AlertCondition::PriceAbove { level: 11.01 },
            Outcome::Quiet { bar_date: d },
        ),
        (
            AlertCondition::PriceBelow { level: 11.0 },
            Outcome::Fired {
                bar_date: d,
                figures: AlertFigures::PriceBelow {
                    close: 11.0,
                    level: 11.0,
                },
            },
        ),
        (
            AlertCondition::PriceBelow { level: 10.99 },
            Outcome::Quiet { bar_date: d },
        ),
    ];
    for (c, want) in table {
        assert_eq!(check(c.clone(), &bars), want, "{c:?}");
    }
}

#[test]
fn day_change_fires_at_or_past_the_percentage() {
    // 8 → 10 is +25 %, 16 → 12 is −25 %: exact in binary.
    let up = from_closes(&[8.0, 10.0], 100.0);
    let down = from_closes(&[16.0, 12.0], 100.0);
    let d = up[1].date;
    let table = [
        (
            &up,
            AlertCondition::ChangeAbove { pct: 25.0 },
            Outcome::Fired {
                bar_date: d,
                figures: AlertFigures::ChangeAbove {
                    change_pct: 25.0,
                    threshold_pct: 25.0,
                    close: 10.0,
                    prev_close: 8.0,
                },
            },
        ),
        (
            &up,
            AlertCondition::ChangeAbove { pct: 25.0001 },
            Outcome::Quiet { bar_date: d },
        ),
        (
            &up,
            AlertCondition::ChangeBelow { pct: -25.0 },
            Outcome::Quiet { bar_date: d },
        ),
        (
            &down,
            AlertCondition::ChangeBelow { pct: -25.0 },
            Outcome::Fired {
                bar_date: d,
                figures: AlertFigures::ChangeBelow {
                    change_pct: -25.0,
                    threshold_pct: -25.0,
                    close: 12.0,
                    prev_close: 16.0,
                },
            },
        ),
        (
            &down,
            AlertCondition::ChangeBelow { pct: -25.0001 },
            Outcome::Quiet { bar_date: d },
        ),
    ];
    for (bars, c, want) in table {
        assert_eq!(check(c.clone(), bars), want, "{c:?}");
    }
}

#[test]
fn volume_ratio_compares_with_the_twenty_bars_before_the_evaluated_one() {
    // 22 bars: the first (10,000) is outside the window, the 20 before the last trade 100
    // each, the last 300: ratio exactly 3.
    let mut vols = vec![10_000.0];
    vols.extend([100.0; 20]);
    vols.push(300.0);
    let ds = dates(vols.len());
    let bars: Vec<Bar> = ds
        .iter()
        .zip(&vols)
        .map(|(&d, &v)| bar(d, 10.0, v))
        .collect();
    let d = bars[21].date;
    assert_eq!(
        check(AlertCondition::VolumeRatio { k: 3.0 }, &bars),
        Outcome::Fired {
            bar_date: d,
            figures: AlertFigures::VolumeRatio {
                volume: 300.0,
                avg_volume_20: 100.0,
                ratio: 3.0,
                k: 3.0
            }
        }
    );
    assert_eq!(
        check(AlertCondition::VolumeRatio { k: 3.0001 }, &bars),
        Outcome::Quiet { bar_date: d }
    );
    // 21 bars is exactly enough; 20 is not, and says so.
    assert!(matches!(
        check(AlertCondition::VolumeRatio { k: 3.0 }, &bars[1..]),
        Outcome::Fired { .. }
    ));
    assert_eq!(
        check(AlertCondition::VolumeRatio { k: 3.0 }, &bars[2..]),
        Outcome::Missing(MissingData::TooFewBars {
            needed: 21,
            have: 20
        })
    );
    let silent: Vec<Bar> = ds.iter().map(|&d| bar(d, 10.0, 0.0)).collect();
    assert_eq!(
        check(AlertCondition::VolumeRatio { k: 1.0 }, &silent),
        Outcome::Missing(MissingData::NoVolume)
    );
}

#[test]
fn missing_data_is_said_never_guessed() {
    let one = from_closes(&[10.0], 100.0);
    let every = [
        AlertCondition::PriceAbove { level: 1.0 },
        AlertCondition::PriceBelow { level: 1.0 },
        AlertCondition::ChangeAbove { pct: 1.0 },
        AlertCondition::ChangeBelow { pct: 1.0 },
        AlertCondition::VolumeRatio { k: 1.0 },
        AlertCondition::Event { event: None },
        AlertCondition::PhaseChange,
        AlertCondition::HealthChange,
        AlertCondition::StopLoss,
        AlertCondition::TargetReached,
    ];
    for c in &every {
        assert_eq!(
            check(c.clone(), &[]),
            Outcome::Missing(MissingData::NoBars),
            "{c:?}"
        );
    }
    for c in [
        AlertCondition::ChangeAbove { pct: 1.0 },
        AlertCondition::ChangeBelow { pct: 1.0 },
        AlertCondition::PhaseChange,
        AlertCondition::HealthChange,
    ] {
        assert_eq!(
            check(c.clone(), &one),
            Outcome::Missing(MissingData::TooFewBars { needed: 2, have: 1 }),
            "{c:?}"
        );
    }
    let zero_prev = from_closes(&[0.0, 10.0], 100.0);
    assert_eq!(
        check(AlertCondition::ChangeAbove { pct: 1.0 }, &zero_prev),
        Outcome::Missing(MissingData::NoPreviousClose)
    );
}

#[test]
fn stop_loss_fires_when_the_close_reaches_the_holding_stop() {
    let bars = from_closes(&[11.0, 10.0], 100.0);
    let d = bars[1].date;
    let with_stop = |stop| AlertInput {
        stop_loss: stop,
        ..input(&bars)
    };
    assert_eq!(
        evaluate(&AlertCondition::StopLoss, &with_stop(Some(10.0))),
        Outcome::Fired {
            bar_date: d,
            figures: AlertFigures::StopLoss {
                close: 10.0,
                stop_loss: 10.0
            }
        }
    );
    assert_eq!(
        evaluate(&AlertCondition::StopLoss, &with_stop(Some(9.99))),
        Outcome::Quiet { bar_date: d }
    );
    assert_eq!(
        evaluate(&AlertCondition::StopLoss, &with_stop(None)),
        Outcome::Quiet { bar_date: d }
    );
}

#[test]
fn target_fires_when_the_close_reaches_the_holding_target() {
    let bars = from_closes(&[10.0, 12.5], 100.0);
    let d = bars[1].date;
    let with_target = |target| AlertInput {
        target,
        // a stop set beside it does not make the target fire or stay quiet
        stop_loss: Some(9.0),
        ..input(&bars)
    };
    let table = [
        // at the target: fires (close ≥ target)
        (
            Some(12.5),
            Outcome::Fired {
                bar_date: d,
                figures: AlertFigures::TargetReached {
                    close: 12.5,
                    target: 12.5,
                },
            },
        ),
        // past it
        (
            Some(12.0),
            Outcome::Fired {
                bar_date: d,
                figures: AlertFigures::TargetReached {
                    close: 12.5,
                    target: 12.0,
                },
            },
        ),
        // a fen short
        (Some(12.51), Outcome::Quiet { bar_date: d }),
        // no target set
        (None, Outcome::Quiet { bar_date: d }),
    ];
    for (target, want) in table {
        assert_eq!(
            evaluate(&AlertCondition::TargetReached, &with_target(target)),
            want,
            "{target:?}"
        );
    }
    // the stop-loss stays quiet at the same close (12.5 > 9)
    assert_eq!(
        evaluate(&AlertCondition::StopLoss, &with_target(Some(12.0))),
        Outcome::Quiet { bar_date: d }
    );
}

fn fired_events(o: &Outcome) -> Vec<(String, String)> {
    match o {
        Outcome::Fired {
            figures: AlertFigures::Event { events },
            ..
        } => events
            .iter()
            .map(|e| (e.event.clone(), e.bar_date.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn events_fire_on_the_close_they_became_known_not_with_hindsight() {
    let c = case(&OK);
    let d = |i: usize| iso(c.bars[i].date);
    let upto = |i: usize| &c.bars[..=i];
    let any = AlertCondition::Event { event: None };
    let named = |n: &str| AlertCondition::Event {
        event: Some(n.to_owned()),
    };

    // The climax is known on its own bar.
    let sc = check(any.clone(), upto(c.sc));
    assert!(
        fired_events(&sc).contains(&("SC".into(), d(c.sc))),
        "{sc:?}"
    );
    // The ST is a swing low: not known on its bar nor the next, known two bars later with
    // its own bar's date.
    assert!(fired_events(&check(named("ST"), upto(c.st))).is_empty());
    assert!(fired_events(&check(named("st"), upto(c.st + 1))).is_empty());
    let st = check(named("st"), upto(c.st + 2));
    assert_eq!(fired_events(&st), vec![("ST".into(), d(c.st))]);
    match &st {
        Outcome::Fired {
            bar_date,
            figures: AlertFigures::Event { events },
        } => {
            assert_eq!(*bar_date, c.bars[c.st + 2].date);
            assert_eq!(events[0].known_on, d(c.st + 2));
            assert_eq!(events[0].schematic, "accumulation");
            assert_eq!(events[0].price, c.bars[c.st].low);
        }
        other => panic!("{other:?}"),
    }
    // A named rule ignores other events; the next close does not fire the spring again.
    assert_eq!(
        fired_events(&check(named("SPRING"), upto(c.spring))),
        vec![("Spring".into(), d(c.spring))]
    );
    assert!(fired_events(&check(named("Spring"), upto(c.spring + 1))).is_empty());
    assert!(fired_events(&check(named("UTAD"), upto(c.spring))).is_empty());
    assert_eq!(
        fired_events(&check(named("SOS"), upto(c.sos))),
        vec![("SOS".into(), d(c.sos))]
    );

    // Over every close, what fires is exactly what the replay says became known that day.
    let r = replay(&c.bars, &L4Config::default());
    for end in 0..c.bars.len() {
        let date = c.bars[end].date;
        let mut want: Vec<(String, String)> = r
            .marks
            .iter()
            .filter(|k| k.known_on == date && k.since == date)
            .filter_map(|k| match &k.mark {
                Mark::Event { event, date, .. } => Some((event_name(*event), iso(*date))),
                _ => None,
            })
            .collect();
        let mut got = fired_events(&check(any.clone(), upto(end)));
        want.sort();
        got.sort();
        assert_eq!(got, want, "as of {date}");
    }
}

#[test]
fn event_names_parse_in_any_case_and_unknown_ones_do_not() {
    assert_eq!(parse_event("utad"), Some(EventCode::UTAD));
    assert_eq!(parse_event(" LPSY "), Some(EventCode::LPSY));
    assert_eq!(parse_event("Spring"), Some(EventCode::Spring));
    assert_eq!(parse_event("springs"), None);
    assert_eq!(parse_event(""), None);
}

#[test]
fn phase_change_fires_when_the_spring_opens_phase_c() {
    let c = case(&OK);
    let state = |p: &str| {
        Some(PhaseState {
            schematic: "accumulation".into(),
            phase: p.into(),
        })
    };
    assert_eq!(
        check(AlertCondition::PhaseChange, &c.bars[..=c.spring]),
        Outcome::Fired {
            bar_date: c.bars[c.spring].date,
            figures: AlertFigures::PhaseChange {
                from: state("B"),
                to: state("C"),
                prev_date: iso(c.bars[c.spring - 1].date),
            }
        }
    );
    assert_eq!(
        check(AlertCondition::PhaseChange, &c.bars[..=c.spring + 1]),
        Outcome::Quiet {
            bar_date: c.bars[c.spring + 1].date
        }
    );
}

#[test]
fn health_change_fires_when_a_holding_closes_through_its_cost_stop() {
    // Held at cost 10: a flat tape is healthy; a close at 9 is under the −7 % stop (9.3).
    let mut closes = vec![10.0; 30];
    closes.push(9.0);
    let bars = from_closes(&closes, 1000.0);
    let holding = Holding {
        cost: Some(10.0),
        buy_dt: Some(bars[0].date),
    };
    let held = |bars| AlertInput {
        holding: Some(&holding),
        ..input(bars)
    };
    match evaluate(&AlertCondition::HealthChange, &held(&bars)) {
        Outcome::Fired {
            bar_date,
            figures:
                AlertFigures::HealthChange {
                    from,
                    to,
                    prev_date,
                    reasons,
                },
        } => {
            assert_eq!(bar_date, bars[30].date);
            assert_eq!((from.as_str(), to.as_str()), ("🟢健康", "🔴危险"));
            assert_eq!(prev_date, iso(bars[29].date));
            assert!(
                reasons.iter().any(|r| r.contains("已穿止损")),
                "{reasons:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        evaluate(&AlertCondition::HealthChange, &held(&bars[..30])),
        Outcome::Quiet {
            bar_date: bars[29].date
        }
    );
}

#[test]
fn cooldown_holds_back_firings_fewer_trading_days_away_on_either_side() {
    let ds = dates(6);
    let d = |i: usize| ds[i];
    let table: [(u32, &[u32], u32, Option<u32>); 10] = [
        // (evaluated bar, earlier firings, cooldown days, what holds it back)
        (d(3), &[], 1, None),
        (d(3), &[d(3)], 1, Some(d(3))),
        (d(4), &[d(3)], 1, None),
        (d(4), &[d(3)], 2, Some(d(3))),
        (d(5), &[d(3)], 2, None),
        (d(2), &[d(3)], 1, None),
        (d(2), &[d(3)], 2, Some(d(3))),
        (d(5), &[d(0), d(3), d(4)], 3, Some(d(4))),
        (d(5), &[d(0)], 5, None),
        (d(5), &[d(1)], 5, Some(d(1))),
    ];
    for (bar, fired, days, want) in table {
        assert_eq!(
            cooldown_blocker(&ds, bar, fired, days),
            want,
            "{bar} {fired:?} {days}"
        );
    }
}

#[test]
fn cut_takes_the_bars_up_to_the_as_of_date() {
    // Monday 2020-01-06 to Monday 2020-01-13.
    let bars = from_closes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 1.0);
    assert_eq!(cut(&bars, None).len(), 6);
    assert_eq!(cut(&bars, Some(bars[1].date)).len(), 2);
    // The Saturday after Friday's bar reads as of Friday.
    assert_eq!(bars[4].date, 20200110);
    assert_eq!(cut(&bars, Some(20200111)).len(), 5);
    assert_eq!(cut(&bars, Some(bars[0].date - 1)).len(), 0);
    assert_eq!(cut(&bars, Some(20201340)).len(), 0);
}

#[test]
fn one_stock_check_answers_every_rule_as_each_alone_does() {
    let c = case(&OK);
    let rules = [
        AlertCondition::PhaseChange,
        AlertCondition::Event { event: None },
        AlertCondition::Event {
            event: Some("Spring".into()),
        },
        AlertCondition::PriceAbove { level: 1.0 },
        AlertCondition::PhaseChange,
    ];
    for end in [c.sc, c.st + 2, c.spring, c.spring + 1, c.sos] {
        let bars = &c.bars[..=end];
        let together = StockCheck::new(input(bars));
        for rule in &rules {
            // a fresh check for each rule: nothing one rule reads leaks into another
            let alone = check(rule.clone(), bars);
            assert_eq!(together.evaluate(rule), alone, "{rule:?} as of {end}");
        }
    }
}
