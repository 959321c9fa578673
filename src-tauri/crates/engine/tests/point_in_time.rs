//! The funnel as of a past day reads each stock's facts of that day: its ST status from the
//! name it carried then, its listing (a stock delisted before the day is not in the market),
//! and says which facts fell back to today's — over the real bundled bars.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::real_universe;
use wyckoff_engine::funnel::L1Reject;
use wyckoff_engine::{
    BoardFilter, Funnel, FunnelConfig, FunnelResult, NameSpan, ScreenArgs, StockSeries, Universe,
    screen,
};

/// The day 000001's bars give a Spring candidate.
const DAY: u32 = 20190116;

fn at(day: u32) -> ScreenArgs {
    ScreenArgs {
        board: BoardFilter::All,
        limit: 0,
        as_of: Some(day),
    }
}

fn history(spans: &[(u32, &str)]) -> Vec<NameSpan> {
    spans
        .iter()
        .map(|&(from, name)| NameSpan {
            from,
            name: name.into(),
        })
        .collect()
}

/// The real universe with 000001's bars also under `code`, named `today`, with `spans`.
fn with_copy(u: &mut Universe, code: &str, today: &str, spans: &[(u32, &str)]) {
    let mut s: StockSeries = u.stocks[0].clone();
    assert_eq!(s.code, "000001");
    s.code = code.into();
    s.name = today.into();
    s.name_history = history(spans);
    u.stocks.push(s);
    u.stocks.sort_by(|a, b| a.code.cmp(&b.code));
}

fn candidate_codes(r: &FunnelResult) -> Vec<&str> {
    r.candidates.iter().map(|c| c.code.as_str()).collect()
}

fn l1_st(r: &FunnelResult) -> usize {
    r.layers[0]
        .reasons
        .get(L1Reject::St.as_str())
        .copied()
        .unwrap_or(0)
}

#[test]
fn the_st_gate_reads_the_name_in_force_on_the_screened_day() {
    let base = screen(&real_universe(), &at(DAY)).unwrap();
    assert!(candidate_codes(&base).contains(&"000001"), "{base:?}");
    assert_eq!(l1_st(&base), 0);

    let mut u = real_universe();
    // ST only from 2021 (named ST today): healthy on the day, so screened like 000001
    with_copy(
        &mut u,
        "000005",
        "ST星源",
        &[(19900101, "世纪星源"), (20210501, "ST星源")],
    );
    // ST in 2019, healthy today: turned away on the day
    with_copy(
        &mut u,
        "600000",
        "浦发银行",
        &[(20180101, "*ST浦发"), (20200101, "浦发银行")],
    );
    let r = screen(&u, &at(DAY)).unwrap();
    let codes = candidate_codes(&r);
    assert!(codes.contains(&"000005"), "{codes:?}");
    assert!(!codes.contains(&"600000"), "{codes:?}");
    assert_eq!(l1_st(&r), 1);
    // The candidate carries the name it had on the day.
    let listed = r.candidates.iter().find(|c| c.code == "000005").unwrap();
    assert_eq!(listed.name, "世纪星源");
    // The eight stocks without a name history read today's names: said, and counted.
    let n = &r.as_of_notes;
    assert_eq!((n.stocks, n.st_from_today), (10, 8), "{n:?}");
    assert!(
        r.data_quality
            .warnings
            .iter()
            .any(|w| w.contains("10 只股票中 8 只的 ST 状态取自今日名称")),
        "{:?}",
        r.data_quality.warnings
    );

    // Today's names alone would have done the opposite.
    for s in &mut u.stocks {
        s.name_history.clear();
    }
    let today = screen(&u, &at(DAY)).unwrap();
    let codes = candidate_codes(&today);
    assert!(
        !codes.contains(&"000005") && codes.contains(&"600000"),
        "{codes:?}"
    );
    assert_eq!(today.as_of_notes.st_from_today, 10);
}

#[test]
fn a_screen_of_the_newest_day_reads_todays_facts_as_its_own() {
    let mut u = real_universe();
    for s in &mut u.stocks {
        s.market_cap_yi = Some(100.0);
    }
    let newest = screen(
        &u,
        &ScreenArgs {
            as_of: None,
            ..at(DAY)
        },
    )
    .unwrap();
    assert_eq!(newest.as_of_notes.st_from_today, 0);
    assert_eq!(newest.as_of_notes.cap_from_today, 0);
    assert!(!newest.as_of_notes.no_delisting_records);
    assert!(
        !newest
            .data_quality
            .warnings
            .iter()
            .any(|w| w.contains("今日")),
        "{:?}",
        newest.data_quality.warnings
    );
    let past = screen(&u, &at(DAY)).unwrap();
    let n = &past.as_of_notes;
    assert_eq!((n.stocks, n.st_from_today, n.cap_from_today), (8, 8, 8));
    assert!(n.no_delisting_records);
    let w = past.data_quality.warnings.join("\n");
    assert!(w.contains("8 只股票的市值门槛按今日市值判断"), "{w}");
    assert!(w.contains("幸存者偏差"), "{w}");

    // A one-day read of tails cut at the day, told the data's newest day, says the same.
    let cut = Universe {
        stocks: u
            .stocks
            .iter()
            .map(|s| StockSeries {
                bars: s.bars_as_of(DAY).to_vec(),
                ..s.clone()
            })
            .collect(),
        ..Universe::default()
    };
    let last = u
        .stocks
        .iter()
        .filter_map(|s| s.bars.last().map(|b| b.date))
        .max()
        .unwrap();
    let cfg = FunnelConfig::default();
    let told = Funnel::prepare(&cut, &cfg)
        .with_current_day(last)
        .screen(&at(DAY))
        .unwrap();
    assert_eq!(told.as_of_notes, past.as_of_notes);
    // Not told, the cut looks like today's data: nothing would be said.
    let blind = Funnel::prepare(&cut, &cfg).screen(&at(DAY)).unwrap();
    assert_eq!(blind.as_of_notes.st_from_today, 0);
}

#[test]
fn a_delisted_stock_is_screened_up_to_its_last_day_and_not_after() {
    let mut u = real_universe();
    // 000001's bars up to a last trading day, delisted then
    let mut gone = u.stocks[0].clone();
    let last = gone.bars_as_of(DAY).last().unwrap().date;
    gone.code = "600002".into();
    gone.name = "退市齐鲁".into();
    gone.name_history = history(&[(19900101, "齐鲁石化")]);
    gone.bars
        .truncate(gone.bars.partition_point(|b| b.date <= last));
    gone.delist_date = Some(last);
    u.stocks.push(gone);
    let days: Vec<u32> = u.stocks[0]
        .bars
        .iter()
        .map(|b| b.date)
        .filter(|d| *d >= last)
        .take(4)
        .collect();
    let in_scope = |r: &FunnelResult| {
        r.candidates.iter().any(|c| c.code == "600002")
            || r.skipped.iter().any(|s| s.code == "600002")
    };
    // On its last day: in the market, and a candidate exactly as 000001 is.
    let on_last = screen(&u, &at(last)).unwrap();
    assert_eq!(on_last.as_of_notes.delisted, 0);
    assert_eq!(
        candidate_codes(&on_last).contains(&"600002"),
        candidate_codes(&on_last).contains(&"000001")
    );
    assert!(candidate_codes(&on_last).contains(&"600002"));
    assert_eq!(on_last.data_quality.in_scope, 9);
    // After it: out of scope, not a stale stock scored on its last bar, and said.
    for &day in &days[1..] {
        let r = screen(&u, &at(day)).unwrap();
        assert!(!in_scope(&r), "{day}: {r:?}");
        assert_eq!(r.data_quality.in_scope, 8, "{day}");
        assert_eq!(r.as_of_notes.delisted, 1, "{day}");
        assert!(
            r.data_quality.warnings.iter().any(|w| w.contains("已退市")),
            "{day}: {:?}",
            r.data_quality.warnings
        );
        // A list that records a delisting is not said to lack them.
        assert!(!r.as_of_notes.no_delisting_records);
    }
    // Without the delisting record the same bars would still be scored a few days on.
    let mut unknown = u.clone();
    unknown.stocks.last_mut().unwrap().delist_date = None;
    let r = screen(&unknown, &at(days[1])).unwrap();
    assert!(in_scope(&r));
}

#[test]
fn the_size_gate_reads_the_cap_recorded_for_the_day() {
    // below the floor no turnover lets a stock through (000001 is liquid enough to pass
    // the small-cap gate by its turnover)
    let l1_small = |r: &FunnelResult| {
        r.layers[0]
            .reasons
            .get(L1Reject::CapBelowFloor.as_str())
            .copied()
            .unwrap_or(0)
    };
    // 000001 is large today; with no cap recorded, today's passes the gate on the day
    let mut u = real_universe();
    for s in &mut u.stocks {
        s.market_cap_yi = Some(2_000.0);
    }
    let today = screen(&u, &at(DAY)).unwrap();
    assert!(candidate_codes(&today).contains(&"000001"));
    assert_eq!(l1_small(&today), 0);
    assert_eq!(today.as_of_notes.cap_from_today, 8);

    // recorded at 8 亿 (below the 10 亿 floor) on the day: too small then, and
    // only the seven others still read today's cap
    let close_then = u.stocks[0].bars_as_of(20190110).last().unwrap().close;
    let close_on_day = u.stocks[0].bars_as_of(DAY).last().unwrap().close;
    let cap_yi = 8.0 * close_then / close_on_day;
    u.stocks[0].cap_history = vec![wyckoff_engine::CapSample {
        date: 20190110,
        cap_yi,
    }];
    let then = screen(&u, &at(DAY)).unwrap();
    assert!(!candidate_codes(&then).contains(&"000001"), "{then:?}");
    assert_eq!(l1_small(&then), 1);
    assert_eq!(then.as_of_notes.cap_from_today, 7);
}
