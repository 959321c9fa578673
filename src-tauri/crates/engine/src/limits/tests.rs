use super::*;
use crate::{Board, NameSpan};

fn bar(date: u32, open: f64, high: f64, low: f64, close: f64) -> Bar {
    Bar {
        date,
        open,
        high,
        low,
        close,
        volume: 1e6,
        amount: 1e7,
        turnover: None,
    }
}

fn flat(date: u32, close: f64) -> Bar {
    bar(date, close, close, close, close)
}

#[test]
fn a_stock_day_against_its_limits() {
    let prev = flat(20240102, 10.00);
    // (today, prev raw, raw, limit %) → (state, basis), by hand
    let cases = [
        // 10.00 × 1.1 = 11.00
        (
            bar(20240103, 10.2, 11.0, 10.1, 11.0),
            Some(10.0),
            Some(11.0),
            Some(10),
            LimitState::LimitUp { one_price: false },
            PriceBasis::Raw,
        ),
        (
            flat(20240103, 11.0),
            Some(10.0),
            Some(11.0),
            Some(10),
            LimitState::LimitUp { one_price: true },
            PriceBasis::Raw,
        ),
        // one fen short is not the limit
        (
            bar(20240103, 10.2, 10.99, 10.1, 10.99),
            Some(10.0),
            Some(10.99),
            Some(10),
            LimitState::Open,
            PriceBasis::Raw,
        ),
        // touched, closed below: 炸板
        (
            bar(20240103, 10.2, 11.0, 10.1, 10.6),
            Some(10.0),
            Some(10.6),
            Some(10),
            LimitState::Failed,
            PriceBasis::Raw,
        ),
        (
            flat(20240103, 9.0),
            Some(10.0),
            Some(9.0),
            Some(10),
            LimitState::LimitDown { one_price: true },
            PriceBasis::Raw,
        ),
        (
            bar(20240103, 9.8, 9.9, 9.5, 9.5),
            Some(10.0),
            Some(9.5),
            Some(5),
            LimitState::LimitDown { one_price: false },
            PriceBasis::Raw,
        ),
        // no limit today (a listing's first days)
        (
            flat(20240103, 15.0),
            Some(10.0),
            Some(15.0),
            None,
            LimitState::Unlimited,
            PriceBasis::Raw,
        ),
        // only yesterday's raw close: its scale (here 2: adjusted is half the real price)
        (
            flat(20240103, 11.0),
            Some(20.0),
            None,
            Some(10),
            LimitState::LimitUp { one_price: true },
            PriceBasis::PreviousScale,
        ),
        // neither: adjusted prices within a fen
        (
            flat(20240103, 10.99),
            None,
            None,
            Some(10),
            LimitState::LimitUp { one_price: true },
            PriceBasis::Adjusted,
        ),
        (
            flat(20240103, 10.98),
            None,
            None,
            Some(10),
            LimitState::Open,
            PriceBasis::Adjusted,
        ),
    ];
    for (i, (today, prev_raw, raw, pct, state, basis)) in cases.into_iter().enumerate() {
        let got = classify(&DayInput {
            prev,
            bar: today,
            prev_raw,
            raw,
            limit_pct: pct,
        });
        assert_eq!(got, (state, basis), "case {i}");
    }
}

#[test]
fn a_real_close_a_fen_short_is_not_sealed_on_a_heavily_adjusted_history() {
    // adjusted 4.00 → 4.396 is real 10.00 → 10.99 (a scale of 2.5, so adjusted prices carry a
    // fen of slack); the limit is 11.00, touched by the high and missed by the close: 炸板
    let day = |raw_close: f64, close: f64| DayInput {
        prev: flat(20240102, 4.00),
        bar: bar(20240103, 4.1, 4.4, 4.05, close),
        prev_raw: Some(10.00),
        raw: Some(raw_close),
        limit_pct: Some(10),
    };
    assert_eq!(
        classify(&day(10.99, 4.396)),
        (LimitState::Failed, PriceBasis::Raw)
    );
    assert_eq!(
        classify(&day(11.00, 4.4)),
        (LimitState::LimitUp { one_price: false }, PriceBasis::Raw)
    );
}

#[test]
fn an_ex_date_takes_the_ex_rights_reference_price() {
    // 0.50 dividend: raw 10.00 → reference 9.50 → limit 10.45; adjusted prev 9.50
    let input = DayInput {
        prev: flat(20240102, 9.50),
        bar: bar(20240103, 9.6, 10.45, 9.6, 10.45),
        prev_raw: Some(10.00),
        raw: Some(10.45),
        limit_pct: Some(10),
    };
    assert_eq!(
        classify(&input),
        (LimitState::LimitUp { one_price: false }, PriceBasis::Raw)
    );
    // on the previous raw close itself (11.00) it would not be
    let no_ex = DayInput {
        prev: flat(20240102, 10.00),
        ..input
    };
    assert_eq!(classify(&no_ex).0, LimitState::Open);
}

fn stock(code: &str, name: &str, bars: Vec<Bar>) -> StockSeries {
    StockSeries {
        code: code.into(),
        name: name.into(),
        board: Board::from_code(code),
        industry: None,
        market_cap_yi: None,
        list_date: None,
        bars,
        name_history: Vec::new(),
        delist_date: None,
        cap_history: Vec::new(),
    }
}

const D0: u32 = 20240102;
const D1: u32 = 20240103;
const D2: u32 = 20240104;
const D3: u32 = 20240105;

/// Every board, an ST name as of the day, a new listing, a one-price day, a stock on
/// adjusted prices only, one whose raw close is a day late and one far from any limit.
fn market() -> (Vec<StockSeries>, RawCloseMap) {
    let mut stocks = vec![
        // main: up, one-price up (2 boards), open, open
        stock(
            "600001",
            "甲",
            vec![
                flat(D0, 10.00),
                bar(D1, 10.1, 11.0, 10.1, 11.00),
                flat(D2, 12.10),
                bar(D3, 12.1, 12.2, 11.9, 12.00),
            ],
        ),
        // main, ST on D1 and D2 only: +5 % up, −5 % down, then +10 % up
        stock(
            "000002",
            "乙",
            vec![
                flat(D0, 10.00),
                bar(D1, 10.0, 10.5, 10.0, 10.50),
                bar(D2, 10.4, 10.4, 9.98, 9.98),
                bar(D3, 10.0, 10.98, 10.0, 10.98),
            ],
        ),
        // ChiNext: 炸板, then +20 % up, then +1.45 %
        stock(
            "300001",
            "丙",
            vec![
                flat(D0, 20.00),
                bar(D1, 20.0, 24.0, 20.0, 23.00),
                bar(D2, 23.0, 27.6, 23.0, 27.60),
                bar(D3, 27.6, 28.5, 27.5, 28.00),
            ],
        ),
        // STAR on adjusted prices half the real ones: +20 % up, +5 %, +20 % up (no raw on D3)
        stock(
            "688001",
            "丁",
            vec![
                flat(D0, 5.00),
                bar(D1, 5.0, 6.0, 5.0, 6.00),
                bar(D2, 6.0, 6.4, 6.0, 6.30),
                bar(D3, 6.3, 7.56, 6.3, 7.56),
            ],
        ),
        // BSE: +30 % up, one-price −30 % down, flat
        stock(
            "830001",
            "戊",
            vec![
                flat(D0, 10.00),
                bar(D1, 10.0, 13.0, 10.0, 13.00),
                flat(D2, 9.10),
                bar(D3, 9.1, 9.2, 9.0, 9.10),
            ],
        ),
        // ChiNext listed on D0: +50 %, +25 %, −25 % without a limit
        stock(
            "301001",
            "己",
            vec![
                flat(D0, 20.00),
                bar(D1, 20.0, 31.0, 20.0, 30.00),
                bar(D2, 30.0, 38.0, 30.0, 37.50),
                bar(D3, 37.5, 37.5, 28.0, 28.13),
            ],
        ),
        // main, no raw close at all: up on adjusted prices, then open
        stock(
            "600003",
            "庚",
            vec![
                flat(D0, 10.00),
                bar(D1, 10.0, 11.0, 10.0, 11.00),
                bar(D2, 11.0, 11.6, 11.0, 11.50),
                bar(D3, 11.5, 11.6, 11.4, 11.50),
            ],
        ),
        // main: 炸板, then open
        stock(
            "600004",
            "辛",
            vec![
                flat(D0, 10.00),
                bar(D1, 10.0, 11.0, 10.0, 10.80),
                bar(D2, 10.8, 10.8, 10.0, 10.00),
                bar(D3, 10.0, 10.1, 9.9, 10.00),
            ],
        ),
        // main, far from every limit
        stock(
            "600005",
            "壬",
            vec![
                flat(D0, 10.00),
                flat(D1, 10.10),
                flat(D2, 10.20),
                flat(D3, 10.10),
            ],
        ),
    ];
    stocks[1].name = "乙".into(); // today's name: no ST
    stocks[1].name_history = vec![
        NameSpan {
            from: 20200101,
            name: "乙".into(),
        },
        NameSpan {
            from: D1,
            name: "*ST乙".into(),
        },
        NameSpan {
            from: D3,
            name: "乙".into(),
        },
    ];
    stocks[5].list_date = Some(D0);
    let mut raw = RawCloseMap::new();
    for s in &stocks {
        let closes: Vec<(u32, f64)> = match s.code.as_str() {
            "600003" => continue,
            "688001" => s.bars[..3]
                .iter()
                .map(|b| (b.date, b.close * 2.0))
                .collect(),
            _ => s.bars.iter().map(|b| (b.date, b.close)).collect(),
        };
        raw.insert(s.code.clone(), closes);
    }
    (stocks, raw)
}

fn codes(day: &LimitDay) -> Vec<(&str, u32)> {
    day.ladder
        .iter()
        .map(|s| (s.code.as_str(), s.boards))
        .collect()
}

#[test]
fn counts_ladder_and_premium_match_a_count_by_hand() {
    let (stocks, raw) = market();
    let series = limit_series(&stocks, &raw, D1, D3);
    let days: Vec<u32> = series.days.iter().map(|d| d.date).collect();
    assert_eq!(days, vec![D1, D2, D3]);
    let [d1, d2, d3] = [&series.days[0], &series.days[1], &series.days[2]];

    // D1: up 600001, 000002 (ST 5 %), 688001, 830001, 600003; failed 300001, 600004;
    // 301001 is a listing's second day
    assert_eq!(d1.stocks, 9);
    assert_eq!((d1.limit_up, d1.limit_down, d1.failed), (5, 0, 2));
    assert_eq!(
        (d1.one_price_up, d1.one_price_down, d1.unlimited),
        (0, 0, 1)
    );
    assert_eq!(d1.seal_rate, Some(5.0 / 7.0));
    assert_eq!(d1.highest_board, 1);
    assert_eq!(
        codes(d1),
        vec![
            ("000002", 1),
            ("600001", 1),
            ("600003", 1),
            ("688001", 1),
            ("830001", 1)
        ]
    );
    assert_eq!(d1.ladder[0].name, "*ST乙");
    assert!(d1.ladder[0].name_known);
    assert!(!d1.ladder[1].name_known);
    // D0 is before the range: no premium for D1's yesterday (nothing was classified on D0)
    assert_eq!((d1.premium_pct, d1.premium_stocks), (None, 0));
    assert_eq!((d1.adjusted_days, d1.previous_scale_days), (1, 0));
    assert_eq!(d1.st_from_today, 8);

    // D2: one-price up 600001 (2 boards), up 300001; ST 000002 and one-price BSE 830001 down
    assert_eq!((d2.limit_up, d2.limit_down, d2.failed), (2, 2, 0));
    assert_eq!(
        (d2.one_price_up, d2.one_price_down, d2.unlimited),
        (1, 1, 1)
    );
    assert_eq!(d2.seal_rate, Some(1.0));
    assert_eq!(d2.highest_board, 2);
    assert_eq!(codes(d2), vec![("600001", 2), ("300001", 1)]);
    assert!(d2.ladder[0].one_price);
    assert_eq!(d2.at_least(2), 1);
    // yesterday's five limit-ups, close over close
    let by_hand = [
        12.10 / 11.00,
        9.98 / 10.50,
        6.30 / 6.00,
        9.10 / 13.00,
        11.50 / 11.00,
    ]
    .iter()
    .map(|r| (r - 1.0) * 100.0)
    .sum::<f64>()
        / 5.0;
    assert_eq!(d2.premium_stocks, 5);
    assert!((d2.premium_pct.unwrap() - by_hand).abs() < 1e-9);

    // D3: 000002 no longer ST: +10 % is its limit; 688001 up on yesterday's scale
    assert_eq!((d3.limit_up, d3.limit_down, d3.failed), (2, 0, 0));
    assert_eq!(codes(d3), vec![("000002", 1), ("688001", 1)]);
    assert_eq!(d3.previous_scale_days, 1);
    assert_eq!(d3.highest_board, 1);
    let by_hand = ((12.00 / 12.10 - 1.0) + (28.00 / 27.60 - 1.0)) * 100.0 / 2.0;
    assert_eq!(d3.premium_stocks, 2);
    assert!((d3.premium_pct.unwrap() - by_hand).abs() < 1e-9);
}

#[test]
fn todays_name_would_miss_the_st_limit() {
    let (mut stocks, raw) = market();
    stocks[1].name_history.clear();
    let d1 = &limit_series(&stocks, &raw, D1, D1).days[0];
    // 乙 (today's name, no ST) +5 % is not at a 10 % limit
    assert_eq!(d1.limit_up, 4);
    assert_eq!(d1.st_from_today, 9);
}

#[test]
fn only_stocks_near_a_limit_need_raw_closes() {
    let (stocks, _) = market();
    let got = needs_raw(&stocks, D1, D3);
    assert!(!got.contains(&"600005"), "{got:?}");
    // a listing's unlimited days need none either
    assert!(!got.contains(&"301001"), "{got:?}");
    assert!(
        got.contains(&"600001") && got.contains(&"688001"),
        "{got:?}"
    );
}

#[test]
fn a_range_reads_its_ladder_from_before_it() {
    let (stocks, raw) = market();
    let d2 = &limit_series(&stocks, &raw, D2, D2).days[0];
    assert_eq!(codes(d2), vec![("600001", 2), ("300001", 1)]);
    assert_eq!(d2.premium_stocks, 5);
}

#[test]
fn a_day_alone_is_the_same_day_in_a_range() {
    let (stocks, raw) = market();
    let range = limit_series(&stocks, &raw, D1, D3);
    for (k, day) in [D1, D2, D3].into_iter().enumerate() {
        let alone = limit_series(&stocks, &raw, day, day);
        assert_eq!(alone.days, vec![range.days[k].clone()], "{day}");
    }
}

#[test]
fn a_day_reads_back_only_over_the_run_of_days_near_a_limit_before_it() {
    const D4: u32 = 20240108;
    const D5: u32 = 20240109;
    let stocks = vec![
        // limit-up three days before the day, then a quiet day: its run ended there
        stock(
            "600011",
            "甲",
            vec![
                flat(D0, 10.00),
                flat(D1, 11.00),
                bar(D2, 11.0, 11.1, 10.9, 11.05),
                bar(D3, 11.0, 11.1, 10.9, 11.00),
                bar(D4, 11.0, 11.1, 10.9, 11.05),
                bar(D5, 11.0, 11.1, 10.9, 11.00),
            ],
        ),
        // limit-up every day up to the day: a five-board run, read back to its start
        stock(
            "600012",
            "乙",
            vec![
                flat(D0, 10.00),
                flat(D1, 11.00),
                flat(D2, 12.10),
                flat(D3, 13.31),
                flat(D4, 14.64),
                flat(D5, 16.10),
            ],
        ),
    ];
    let raw: RawCloseMap = stocks
        .iter()
        .map(|s| {
            (
                s.code.clone(),
                s.bars.iter().map(|b| (b.date, b.close)).collect(),
            )
        })
        .collect();
    assert_eq!(needs_raw(&stocks, D5, D5), vec!["600012"]);
    assert_eq!(needs_raw(&stocks, D3, D5), vec!["600012"]);
    // D2's premium asks whether D1 closed at its limit
    assert_eq!(needs_raw(&stocks, D2, D5), vec!["600011", "600012"]);
    let d5 = &limit_series(&stocks, &raw, D5, D5).days[0];
    assert_eq!(codes(d5), vec![("600012", 5)]);
    assert_eq!(d5.premium_stocks, 1);
}

#[test]
fn a_partition_found_from_the_end_is_the_binary_searchs() {
    for n in [0usize, 1, 2, 60, 511, 512, 513, 1500] {
        let bars: Vec<Bar> = (0..n).map(|i| flat(i as u32 * 2, 10.0)).collect();
        for cut in [
            0u32, 1, 2, 59, 60, 61, 1000, 1023, 1024, 1025, 2999, 3000, 5000,
        ] {
            assert_eq!(
                partition_from_end(&bars, |b| b.date < cut),
                bars.partition_point(|b| b.date < cut),
                "{n} bars, cut {cut}"
            );
            assert_eq!(
                partition_from_end(&bars, |b| b.date <= cut),
                bars.partition_point(|b| b.date <= cut),
                "{n} bars, cut {cut}"
            );
        }
    }
}
