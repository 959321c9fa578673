//! No look-ahead in the known-on dates: for every as-of date D checked, the marks the
//! replay says were known at D are exactly the marks the engine places from the bars up to D
//! alone, every mark's known-on date is on or after its bar, and replaying only the bars up to
//! D gives the same known-on dates as replaying the whole tape — on the bundled stocks and on
//! random tapes with climaxes.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;

use proptest::prelude::*;
use wyckoff_engine::dates::{civil_from_days, days_from_civil};
use wyckoff_engine::known_on::{KnownMark, Mark, Replay, fired_triggers, replay, standing_marks};
use wyckoff_engine::{Bar, L4Config};

fn same_set(what: &str, date: u32, known: &[&Mark], alone: &[Mark]) {
    assert_eq!(
        known.len(),
        alone.len(),
        "{what} as of {date}: known {known:?}\nalone {alone:?}"
    );
    for m in alone {
        assert!(
            known.contains(&m),
            "{what} as of {date}: {m:?} placed from the bars alone but not known"
        );
    }
}

/// The full replay cut at `date`: what it knew by then, with later revisions not yet made.
fn cut(r: &Replay, date: u32) -> Vec<KnownMark> {
    r.marks
        .iter()
        .filter(|k| k.since <= date)
        .map(|k| KnownMark {
            ended: k.ended.filter(|e| e.on() <= date),
            ..k.clone()
        })
        .collect()
}

/// Checks every index in `checked` (as-of bar indices) and replays the prefix at each of
/// `replayed`.
fn check(what: &str, bars: &[Bar], checked: &[usize], replayed: &[usize]) {
    let l4 = L4Config::all_enabled(wyckoff_engine::Board::Main);
    let r = replay(bars, &l4);
    for k in &r.marks {
        assert!(k.known_on >= k.bar_date, "{what}: {k:?}");
        assert!(k.since >= k.known_on, "{what}: {k:?}");
        assert_eq!(k.bar_date, k.mark.bar_date(), "{what}: {k:?}");
        if let Some(e) = k.ended {
            assert!(e.on() > k.since, "{what}: {k:?}");
        }
        if let Mark::Event { dates, .. } | Mark::Trigger { dates, .. } = &k.mark {
            assert!(dates.iter().all(|d| *d <= k.known_on), "{what}: {k:?}");
        }
    }
    // Triggers fired on each day, each from the bars up to that day alone.
    let fired: Vec<Vec<Mark>> = (0..bars.len())
        .map(|i| fired_triggers(&bars[..=i], &l4))
        .collect();
    for &i in checked {
        let date = bars[i].date;
        let known: Vec<&KnownMark> = r.known_at(date).collect();
        let (triggers, standing): (Vec<&Mark>, Vec<&Mark>) = known
            .iter()
            .map(|k| &k.mark)
            .partition(|m| matches!(m, Mark::Trigger { .. }));
        same_set(what, date, &standing, &standing_marks(&bars[..=i]));
        let fired_by_then: Vec<Mark> = fired[..=i].iter().flatten().cloned().collect();
        same_set(what, date, &triggers, &fired_by_then);
    }
    for &i in replayed {
        let date = bars[i].date;
        assert_eq!(
            replay(&bars[..=i], &l4).marks,
            cut(&r, date),
            "{what}: replaying up to {date} disagrees with the whole tape's replay"
        );
    }
}

/// The edges, the bars around the lookbacks' sizes, and every `stride`-th bar.
fn sample(n: usize, stride: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).step_by(stride).collect();
    v.extend([
        0,
        1,
        2,
        59,
        60,
        61,
        249,
        250,
        251,
        n.saturating_sub(2),
        n.saturating_sub(1),
    ]);
    v.retain(|&i| i < n);
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn bundled_stocks_have_no_look_ahead() {
    let universe = common::real_universe();
    let mut marks_seen = 0;
    for s in &universe.stocks {
        // The last 750 bars (three years) of each stock keep the test quick in debug builds;
        // the replay starts from scratch at the slice's first bar like any other tape.
        let bars = &s.bars[s.bars.len().saturating_sub(750)..];
        let n = bars.len();
        check(&s.code, bars, &sample(n, 7), &[0, n / 3, n - 1]);
        marks_seen += replay(bars, &L4Config::default()).marks.len();
    }
    // The stocks do carry schematics and triggers: the property is not vacuous.
    assert!(marks_seen > 100, "{marks_seen}");
}

/// Dates with gaps of 1..=4 days.
fn dates(n: usize) -> Vec<u32> {
    let mut d = days_from_civil(20100104).unwrap_or(0);
    (0..n)
        .map(|i| {
            d += 1 + (i % 4 == 3) as i64 * 2;
            civil_from_days(d)
        })
        .collect()
}

/// A random walk with drifts and, now and then, a climactic bar: a wide down (or up) day on
/// heavy volume, so that schematics form, get revised and get replaced.
fn climactic_tapes() -> impl Strategy<Value = Vec<Bar>> {
    prop::collection::vec(
        (
            -0.05f64..0.05,
            0.0f64..0.03,
            0.0f64..0.03,
            0.5f64..1.5,
            0u8..100,
        ),
        120..420,
    )
    .prop_map(|rows| {
        let ds = dates(rows.len());
        let mut close = 20.0;
        let mut drift = -0.01;
        rows.iter()
            .zip(ds)
            .enumerate()
            .map(|(i, (&(r, up, down, vol, event), date))| {
                if i % 60 == 0 {
                    drift = -drift;
                }
                let open = close;
                let (ret, volume) = match event {
                    0..=2 => (-0.09, 6.0),
                    3..=5 => (0.09, 6.0),
                    _ => (drift + r, vol),
                };
                close = (close * (1.0 + ret)).max(0.5);
                let (high, low) = match event {
                    0..=2 => (open * 1.005, close * 0.97),
                    3..=5 => (close * 1.03, open * 0.995),
                    _ => (open.max(close) * (1.0 + up), open.min(close) * (1.0 - down)),
                };
                Bar {
                    date,
                    open,
                    high,
                    low,
                    close,
                    volume: volume * 1e6,
                    amount: volume * 1e6 * close,
                    turnover: None,
                }
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_tapes_have_no_look_ahead(bars in climactic_tapes()) {
        let n = bars.len();
        let every: Vec<usize> = (0..n).collect();
        check("random tape", &bars, &every, &[0, n / 2, n - 1]);
    }
}
