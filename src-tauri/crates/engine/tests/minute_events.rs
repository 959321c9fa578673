//! The Wyckoff detector read by bar position (what a minute chart uses, whose bars are not
//! days): on the real bundled daily bars, at many cut points, it places the same events at
//! the same bars and prices as the daily reading, whatever dates the bars carry.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use wyckoff_engine::Bar;
use wyckoff_engine::phases::{events_by_index, wyckoff_structure};

#[test]
fn events_by_position_are_the_daily_readings_events_whatever_the_bars_dates() {
    let universe = common::real_universe();
    let mut seen = 0;
    for stock in &universe.stocks {
        let bars = &stock.bars;
        for cut in (120..=bars.len()).step_by(45) {
            let view = &bars[..cut];
            let st = wyckoff_structure(view);
            let mut want: Vec<(u32, String, f64)> = [st.accumulation, st.distribution]
                .into_iter()
                .flatten()
                .flat_map(|s| s.events)
                .map(|e| (e.date, format!("{:?}", e.event), e.price))
                .collect();
            want.sort_by_key(|w| w.0);
            let got: Vec<(u32, String, f64)> = events_by_index(view)
                .into_iter()
                .map(|(i, e, p)| (view[i].date, format!("{e:?}"), p))
                .collect();
            assert_eq!(got, want, "{} cut at {}", stock.code, view[cut - 1].date);
            // bars stamped with anything (here all the same) read the same by position
            let undated: Vec<Bar> = view.iter().map(|b| Bar { date: 0, ..*b }).collect();
            let by_position: Vec<(usize, String, f64)> = events_by_index(&undated)
                .into_iter()
                .map(|(i, e, p)| (i, format!("{e:?}"), p))
                .collect();
            let dated: Vec<(usize, String, f64)> = events_by_index(view)
                .into_iter()
                .map(|(i, e, p)| (i, format!("{e:?}"), p))
                .collect();
            assert_eq!(by_position, dated, "{}", stock.code);
            seen += got.len();
        }
    }
    assert!(seen > 0, "the real bars carry events");
    assert!(events_by_index(&[]).is_empty());
}

/// The 60-minute fixture the CLI and app tests serve (`tests/data/minute_60m_accumulation.csv`,
/// test data shaped on the accumulation rules, not market prices), read as `Bar`s by position.
fn accumulation_fixture() -> Vec<(u64, Bar)> {
    include_str!("data/minute_60m_accumulation.csv")
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[i].parse::<f64>().unwrap();
            let time: u64 = f[0].parse().unwrap();
            (
                time,
                Bar {
                    date: (time / 10_000) as u32,
                    open: n(1),
                    high: n(2),
                    low: n(3),
                    close: n(4),
                    volume: n(5),
                    amount: n(6),
                    turnover: None,
                },
            )
        })
        .collect()
}

#[test]
fn the_minute_fixture_reads_as_an_accumulation_with_its_climax_and_spring() {
    let fixture = accumulation_fixture();
    let bars: Vec<Bar> = fixture.iter().map(|(_, b)| *b).collect();
    assert_eq!(bars.len(), 120);
    let events = events_by_index(&bars);
    let found: Vec<(u64, String)> = events
        .iter()
        .map(|(i, e, _)| (fixture[*i].0, format!("{e:?}")))
        .collect();
    // the selling climax is the one bar on six times the volume, closing near its low
    let climax = bars.iter().position(|b| b.volume >= 500_000.0).unwrap();
    let sc = events
        .iter()
        .find(|(_, e, _)| format!("{e:?}") == "SC")
        .expect("a selling climax");
    assert_eq!(sc.0, climax, "{found:?}");
    assert_eq!(sc.2, bars[climax].low);
    // the spring is the bar that undercut the climax low and was reclaimed
    let spring = events
        .iter()
        .find(|(_, e, _)| format!("{e:?}") == "Spring")
        .expect("a spring");
    assert!(bars[spring.0].low < bars[climax].low * 0.995, "{found:?}");
    assert!(spring.0 > climax);
    for want in ["AR", "ST", "SOS"] {
        assert!(found.iter().any(|(_, e)| e == want), "{want} in {found:?}");
    }
    // no distribution is read in a decline followed by a base
    assert!(
        found
            .iter()
            .all(|(_, e)| !["BC", "UTAD", "SOW", "LPSY"].contains(&e.as_str()))
    );
}
