#![allow(clippy::unwrap_used, clippy::expect_used)]

use wyckoff_market::MarketConfig;

use super::*;

/// date, open, high, low, close, volume
type Ohlcv = (u32, f64, f64, f64, f64, f64);

fn bar(date: u32, open: f64, high: f64, low: f64, close: f64, volume: f64) -> Bar {
    Bar {
        date,
        open,
        high,
        low,
        close,
        volume,
        amount: volume * close,
        turnover: None,
    }
}

#[test]
fn weeks_and_months_fold_first_open_extremes_last_close_summed_volume() {
    // Mon 2024-12-30 .. Fri 2025-01-03 is one ISO week across New Year; 2025-01-06 starts the next.
    let days = [
        bar(20241230, 10.0, 11.0, 9.5, 10.5, 100.0),
        bar(20241231, 10.5, 12.0, 10.0, 11.0, 200.0),
        bar(20250102, 11.0, 11.5, 9.0, 9.5, 300.0),
        bar(20250106, 9.5, 10.0, 9.2, 9.8, 50.0),
    ];
    let cases: [(Period, Vec<Ohlcv>); 3] = [
        (
            Period::Day,
            days.iter()
                .map(|b| (b.date, b.open, b.high, b.low, b.close, b.volume))
                .collect(),
        ),
        (
            Period::Week,
            vec![
                (20250102, 10.0, 12.0, 9.0, 9.5, 600.0),
                (20250106, 9.5, 10.0, 9.2, 9.8, 50.0),
            ],
        ),
        (
            Period::Month,
            vec![
                (20241231, 10.0, 12.0, 9.5, 11.0, 300.0),
                (20250106, 11.0, 11.5, 9.0, 9.8, 350.0),
            ],
        ),
    ];
    for (period, want) in cases {
        let got: Vec<_> = aggregate(&days, period)
            .iter()
            .map(|b| (b.date, b.open, b.high, b.low, b.close, b.volume))
            .collect();
        assert_eq!(got, want, "{period:?}");
    }
}

#[test]
fn moving_averages_start_when_the_window_fills() {
    let close = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let lines = moving_averages(&close, &[1, 3, 6, 7]);
    let got: Vec<_> = lines
        .iter()
        .map(|l| (l.window, l.start, l.values.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 0, close.to_vec()),
            (3, 2, vec![2.0, 3.0, 4.0, 5.0]),
            (6, 5, vec![3.5]),
        ],
        "a window longer than the series draws no line"
    );
}

#[test]
fn chart_bar_for_a_day_is_the_bucket_that_contains_it() {
    let dates = [20250103, 20250110, 20250117];
    for (day, want) in [
        (20250101, Some(20250103)),
        (20250103, Some(20250103)),
        (20250108, Some(20250110)),
        (20250117, Some(20250117)),
        (20250120, None),
    ] {
        assert_eq!(bar_date_for(&dates, day), want, "{day}");
    }
}

fn event(event: EventCode, date: u32) -> wyckoff_engine::phases::SchematicEvent {
    wyckoff_engine::phases::SchematicEvent {
        event,
        date,
        price: 1.0,
        dates: vec![date],
    }
}

#[test]
fn phase_bands_open_on_their_first_event_and_end_before_the_next() {
    use wyckoff_engine::phases::SchematicKind;
    let s = Schematic {
        kind: SchematicKind::Accumulation,
        phase: wyckoff_engine::Phase::D,
        phase_since: 20200401,
        support: Some(1.0),
        resistance: Some(2.0),
        events: vec![
            event(EventCode::SC, 20200110),
            event(EventCode::AR, 20200120),
            event(EventCode::ST, 20200210),
            event(EventCode::ST, 20200301),
            event(EventCode::SOS, 20200401),
            event(EventCode::LPS, 20200415),
        ],
    };
    let bands: Vec<_> = phase_bands(&s, 20200630)
        .into_iter()
        .map(|b| (b.phase, b.from, b.to))
        .collect();
    assert_eq!(
        bands,
        vec![
            ("A".to_string(), 20200110, 20200209),
            ("B".to_string(), 20200210, 20200400),
            ("D".to_string(), 20200401, 20200630),
        ]
    );
}

async fn offline(dir: &std::path::Path) -> MarketData {
    MarketData::open_with(MarketConfig::offline(dir))
        .await
        .unwrap()
}

/// The bundled real bars of 平安银行: columns line up, every event sits on a drawn bar and
/// is the engine's own reading, the diagnosis and freshness come along.
#[tokio::test]
async fn chart_of_a_bundled_stock_carries_the_engines_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let md = offline(tmp.path()).await;
    let daily = md.daily_bars("000001", None).await.unwrap().bars;
    let expected = wyckoff_structure(&daily);
    for period in [Period::Day, Period::Week, Period::Month] {
        let c = build_chart(&md, "000001", period).await.unwrap();
        let n = c.bars.dates.len();
        assert!(n > 0);
        for col in [
            &c.bars.open,
            &c.bars.high,
            &c.bars.low,
            &c.bars.close,
            &c.bars.volume,
        ] {
            assert_eq!(col.len(), n);
        }
        assert!(c.bars.dates.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(c.as_of, daily.last().map(|b| b.date));
        assert_eq!(c.bars.dates.last().copied(), c.as_of);
        assert_eq!(c.name.as_deref(), Some("平安银行"));
        assert_eq!(c.diagnosis.code, "000001");
        for e in &c.reading.events {
            assert!(c.bars.dates.contains(&e.bar_date), "{e:?}");
            assert!(e.bar_date >= e.date);
            // both languages name the event and cite the same supporting days
            assert!(e.why_zh.contains(&format!("（{}）", e.label)), "{e:?}");
            let cited = |text: &str| -> Vec<String> {
                text.split(|c: char| !(c.is_ascii_digit() || c == '-'))
                    .filter(|t| t.len() == 10 && t.as_bytes()[4] == b'-' && t.as_bytes()[7] == b'-')
                    .map(str::to_owned)
                    .collect()
            };
            assert_eq!(cited(&e.why), cited(&e.why_zh), "{e:?}");
        }
        for l in &c.ma {
            assert_eq!(l.start as usize + l.values.len(), n);
        }
        let history = schematic_history(&daily);
        let mut want: Vec<(String, u32)> = history
            .iter()
            .flat_map(|(s, _)| s.events.iter().map(|e| (format!("{:?}", e.event), e.date)))
            .collect();
        want.sort_by_key(|(_, d)| *d);
        want.dedup();
        let got: Vec<(String, u32)> = c
            .reading
            .events
            .iter()
            .map(|e| (e.label.clone(), e.date))
            .collect();
        assert_eq!(got, want, "{period:?}");
        assert!(!got.is_empty(), "15 years of 平安银行 hold some schematic");
        // the range lines are the reading at the last close only
        assert_eq!(c.reading.phase.is_some(), expected.active.is_some());
        if expected.active.is_none() {
            assert_eq!((c.reading.support, c.reading.resistance), (None, None));
        }
        if period == Period::Day {
            assert_eq!(n, daily.len());
        } else {
            assert!(n < daily.len());
        }
    }
    // the bundled data ends in 2020: far behind today, so it is said to be stale
    let c = build_chart(&md, "000001", Period::Day).await.unwrap();
    assert!(c.stale, "{}", c.data_status);
}

#[tokio::test]
async fn unknown_and_malformed_codes_are_specific_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let md = offline(tmp.path()).await;
    match build_chart(&md, "12345", Period::Day).await {
        Err(ChartError::InvalidCode { .. }) => {}
        other => panic!("{other:?}"),
    }
    match build_chart(&md, "688999", Period::Day).await {
        Err(ChartError::UnknownCode { code }) => assert_eq!(code, "688999"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_held_stock_gets_its_cost_and_stop_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let md = offline(tmp.path()).await;
    md.portfolio()
        .apply(
            wyckoff_market::PortfolioOp::Add {
                code: "000001".into(),
                name: "平安银行".into(),
                shares: 1000,
                cost_price: 12.5,
                buy_dt: Some("2020-01-02".into()),
            },
            md.clock().now(),
        )
        .await
        .unwrap();
    let c = build_chart(&md, "000001", Period::Day).await.unwrap();
    let h = c.holding.expect("held");
    assert_eq!((h.cost, h.shares), (12.5, 1000));
    assert_eq!(c.diagnosis.cost, Some(12.5));
    // the typed card is the tool's card: the agent and the page read the same diagnosis
    let card = crate::analyze::run(
        &md,
        &json!({"code": "000001", "mode": "diagnose", "cost": 12.5, "buy_dt": "2020-01-02"}),
    )
    .await
    .unwrap();
    assert_eq!(serde_json::to_value(&c.diagnosis).unwrap(), card);
    assert!(c.diagnosis.rest.contains_key("benchmark"), "{card}");
    let not_held = build_chart(&md, "600519", Period::Day).await;
    if let Ok(c) = not_held {
        assert!(c.holding.is_none());
    }
}

/// Every label and band on the bundled 平安银行 chart carries the close it became known on:
/// as known then, the engine given only the bars up to that close places the label and the
/// close before does not; with hindsight, each label was known on or after its own day.
#[tokio::test]
async fn marks_carry_the_close_they_became_known_on() {
    use wyckoff_engine::known_on::standing_marks;
    let tmp = tempfile::tempdir().unwrap();
    let md = offline(tmp.path()).await;
    let daily = md.daily_bars("000001", None).await.unwrap().bars;
    let c = build_chart(&md, "000001", Period::Day).await.unwrap();
    let r = &c.reading;
    let placed = |e: &ChartEvent, end: usize| {
        standing_marks(&daily[..end]).iter().any(|m| {
            matches!(m, Mark::Event { event, date, .. }
                if format!("{event:?}") == e.label && *date == e.date)
        })
    };
    assert!(!r.known_events.is_empty());
    for e in &r.known_events {
        let k = e.known_on.expect("known");
        assert!(k >= e.date, "{e:?}");
        let end = daily.partition_point(|b| b.date <= k);
        assert!(placed(e, end), "not placed as of its known-on close: {e:?}");
        if let Some(end) = e.ended {
            assert!(end.on() > k, "{e:?}");
        }
    }
    // Known-on is the first such close: the close before it did not place that label then
    // (a label may come back later as a new mark, which is listed again).
    for e in r
        .known_events
        .iter()
        .filter(|e| e.date < e.known_on.unwrap())
    {
        let end = daily.partition_point(|b| b.date < e.known_on.unwrap());
        let earlier = r
            .known_events
            .iter()
            .any(|o| o.label == e.label && o.date == e.date && o.known_on < e.known_on);
        assert!(earlier || !placed(e, end), "known earlier than said: {e:?}");
    }
    // Provisional labels (an AR a higher close replaced) exist as known then, not in hindsight.
    assert!(
        r.known_events
            .iter()
            .any(|e| matches!(e.ended, Some(MarkEnd::Removed { .. }))),
        "{:?}",
        r.known_events
    );
    for e in &r.events {
        assert!(e.known_on.is_some_and(|k| k >= e.date), "{e:?}");
        assert_eq!(e.ended, None);
    }
    for b in &r.phases {
        assert!(b.known_on.is_some_and(|k| k >= b.from), "{b:?}");
    }
    assert_eq!(r.support.is_some(), r.range_known_on.is_some());
}

/// Replay: the chart as of a past close holds only the bars up to it, and its marks are
/// exactly those the whole chart says were known by then (nothing from later bars).
#[tokio::test]
async fn the_chart_as_of_a_close_knows_only_what_was_known_then() {
    let tmp = tempfile::tempdir().unwrap();
    let md = offline(tmp.path()).await;
    let whole = build_chart(&md, "000001", Period::Day).await.unwrap();
    let dates = &whole.bars.dates;
    let key = |e: &ChartEvent| (e.label.clone(), e.date, e.known_on);
    let mut checked = 0;
    for at in [dates.len() / 3, dates.len() / 2, dates.len() - 40] {
        let d = dates[at];
        let then = build_chart_as_of(&md, "000001", Period::Day, Some(d))
            .await
            .unwrap();
        assert_eq!(then.bars.dates.last(), Some(&d));
        assert_eq!(then.bars.dates.len(), at + 1);
        assert_eq!(then.as_of, Some(d));
        let iso = format!("{}-{:02}-{:02}", d / 10000, d / 100 % 100, d % 100);
        assert_eq!(then.diagnosis.as_of.as_deref(), Some(iso.as_str()));
        let mut known_then: Vec<_> = then.reading.known_events.iter().map(key).collect();
        let mut from_whole: Vec<_> = whole
            .reading
            .known_events
            .iter()
            .filter(|e| e.known_on.is_some_and(|k| k <= d))
            .map(key)
            .collect();
        known_then.sort();
        from_whole.sort();
        assert_eq!(known_then, from_whole, "as of {d}");
        checked += known_then.len();
    }
    assert!(checked > 0, "no mark was known at any of the dates tried");
}

fn card(entry: Option<&str>, lane: Option<&str>, exit: Option<ExitKind>) -> DiagnosisCard {
    DiagnosisCard {
        code: "000001".into(),
        name: "平安银行".into(),
        as_of: Some("2020-06-16".into()),
        health: "YELLOW".into(),
        health_reasons: Vec::new(),
        cost: None,
        candidate_lane: lane.map(str::to_owned),
        candidate_entry_type: entry.map(str::to_owned),
        exit_signal: exit,
        stop_loss_price: None,
        targets: Targets {
            conservative: None,
            aggressive: None,
            candidates: Vec::new(),
        },
        diagnosis_brief: DiagnosisBrief {
            status: "watch".into(),
            label: "观察".into(),
            headline: "观察".into(),
            strengths: Vec::new(),
            risks: Vec::new(),
            direct_buy_allowed: false,
            next_step: "只观察".into(),
        },
        rest: Map::new(),
    }
}

/// The last bar's signals are the card's entry (with its lane) and exit, on the last
/// chart bar; no bar, no signal.
#[test]
fn signals_are_the_cards_entry_and_exit_on_the_last_bar() {
    let sig = |kind: &str, label: &str| ChartSignal {
        kind: kind.into(),
        date: 20200616,
        label: label.into(),
    };
    let cases = [
        (card(None, None, None), Some(20200616), vec![]),
        (
            card(Some("sos"), Some("L4"), None),
            Some(20200616),
            vec![sig("trigger", "sos L4")],
        ),
        (
            card(Some("spring"), None, None),
            Some(20200616),
            vec![sig("trigger", "spring")],
        ),
        (
            card(None, Some("L4"), Some(ExitKind::UpthrustWarning)),
            Some(20200616),
            vec![sig("exit", "upthrust_warning")],
        ),
        (
            card(Some("sos"), Some("L4"), Some(ExitKind::StopLoss)),
            Some(20200616),
            vec![sig("trigger", "sos L4"), sig("exit", "stop_loss")],
        ),
        (
            card(Some("sos"), None, Some(ExitKind::StopLoss)),
            None,
            vec![],
        ),
    ];
    for (c, last, want) in cases {
        assert_eq!(signals(&c, last), want, "{c:?}");
    }
}
