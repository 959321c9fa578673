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
