#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use wyckoff_session::domain::market::IndustriesImportStatus;
use wyckoff_session::reports::MapNote;

use super::*;
use crate::commands::error::CommandErrorKind;
use crate::commands::test_desk;

/// The bundled stocks in three industries.
const CSV: &str = "code,industry\n000001,金融\n601318,金融\n000783,金融\n000338,制造\n000778,制造\n603220,制造\n002572,消费\n300027,消费\n";

fn pct(later: f64, earlier: f64) -> f64 {
    (later / earlier - 1.0) * 100.0
}

#[tokio::test]
async fn the_map_pages_figures_follow_the_imported_industries_and_agree_with_the_days_map() {
    let home = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(home.path()).await;

    // no industries: the day's limit figures, no sector table, a note saying how to get one
    let map = day_map(&desk, None).await.unwrap();
    assert_eq!(map.trade_date, "2020-06-16");
    assert!(map.sectors.is_none());
    assert!(
        map.notes.contains(&MapNote::NoIndustries),
        "{:?}",
        map.notes
    );
    let empty = series(&desk, None, Some(5)).await.unwrap();
    assert!(empty.trails.is_empty());
    assert!(empty.notes.contains(&MapNote::NoIndustries));
    let e = members(&desk, "金融", None).await.unwrap_err();
    assert_eq!(e.kind, CommandErrorKind::InvalidInput, "{e:?}");

    // a path is needed; a CSV imports
    let e = import(&desk, "  ").await.unwrap_err();
    assert_eq!(e.kind, CommandErrorKind::InvalidInput);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("industries.csv");
    std::fs::write(&file, CSV).unwrap();
    let report = import(&desk, &format!(" {} ", file.display()))
        .await
        .unwrap();
    let IndustriesImportStatus::Imported {
        stocks, industries, ..
    } = report.status
    else {
        panic!("{report:?}");
    };
    assert_eq!((stocks, industries), (8, 3));
    assert_eq!(desk.industry_loads().await.unwrap().len(), 1);

    // the file is dated today, after the bars: the map says its industries are a later
    // load's, asked for the newest day or for that day by date
    let newest = day_map(&desk, None).await.unwrap();
    assert!(
        newest
            .notes
            .contains(&MapNote::IndustriesFromLaterLoad { stocks: 8 }),
        "{:?}",
        newest.notes
    );
    let map = day_map(&desk, Some("2020-06-16")).await.unwrap();
    assert!(
        map.notes
            .contains(&MapNote::IndustriesFromLaterLoad { stocks: 8 }),
        "{:?}",
        map.notes
    );
    let sectors = map.sectors.as_ref().expect("a sector table");
    let names: BTreeSet<&str> = sectors.rows.iter().map(|r| r.industry.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["制造", "消费", "金融"]));

    // an industry's members: each figure recomputed from the cached bars
    let m = members(&desk, "金融", None).await.unwrap();
    assert_eq!(m.trade_date, "2020-06-16");
    let codes: BTreeSet<&str> = m.members.iter().map(|x| x.code.as_str()).collect();
    assert_eq!(codes, BTreeSet::from(["000001", "000783", "601318"]));
    let bars = desk
        .market()
        .cached_stock_bars(codes.iter().map(|c| (*c).to_string()).collect())
        .await
        .unwrap();
    let ladder: BTreeSet<&str> = map.limits.ladder.iter().map(|s| s.code.as_str()).collect();
    for x in &m.members {
        let b = &bars[&x.code];
        let i = b.iter().position(|b| b.date == 20200616).unwrap();
        let change = pct(b[i].close, b[i - 1].close);
        let short = pct(b[i].close, b[i - 5].close);
        assert!((x.change_pct.unwrap() - change).abs() < 1e-9, "{x:?}");
        assert!((x.return_short_pct.unwrap() - short).abs() < 1e-9, "{x:?}");
        assert_eq!(x.limit_up, ladder.contains(x.code.as_str()), "{x:?}");
    }
    let shorts: Vec<f64> = m
        .members
        .iter()
        .map(|x| x.return_short_pct.unwrap())
        .collect();
    assert!(shorts.windows(2).all(|w| w[0] >= w[1]), "{shorts:?}");
    // the members' traded value adds up to the industry's
    let row = sectors.rows.iter().find(|r| r.industry == "金融").unwrap();
    let sum: f64 = m.members.iter().map(|x| x.amount).sum();
    assert!((sum - row.amount).abs() < 1e-6 * row.amount.max(1.0));
    let e = members(&desk, "没有这个行业", None).await.unwrap_err();
    assert_eq!(e.kind, CommandErrorKind::InvalidInput);
    assert!(e.message.contains("没有这个行业"), "{}", e.message);

    // the range: one entry per trading day, each the day's own map's counts
    let s = series(&desk, None, Some(5)).await.unwrap();
    assert_eq!(s.limits.len(), 5);
    assert_eq!(s.limits.last().unwrap().date, 20200616);
    for d in &s.limits {
        let date = wyckoff_session::time::iso(d.date);
        let one = day_map(&desk, Some(&date)).await.unwrap().limits;
        assert_eq!(
            (d.limit_up, d.limit_down, d.failed, d.highest_board),
            (one.limit_up, one.limit_down, one.failed, one.highest_board),
            "{date}"
        );
    }
    // a trail per industry over at most the last 20 days, ending at the day's own figures
    assert_eq!(s.trails.len(), 3);
    for t in &s.trails {
        assert!(t.points.len() <= 20, "{t:?}");
        assert!(t.points.windows(2).all(|w| w[0].date < w[1].date));
        let row = sectors
            .rows
            .iter()
            .find(|r| r.industry == t.industry)
            .unwrap();
        assert_eq!(t.rotation, row.rotation);
        // the same figures, the index chained from another first day (rounding apart)
        if let Some(last) = t.points.last().filter(|p| p.date == "2020-06-16") {
            assert!(
                (last.rs_ratio - row.rs_ratio.unwrap()).abs() < 1e-9,
                "{t:?}"
            );
            assert!(
                (last.rs_momentum - row.rs_momentum.unwrap()).abs() < 1e-9,
                "{t:?}"
            );
        }
    }
    assert!(
        s.trails.iter().any(|t| !t.points.is_empty()),
        "{:?}",
        s.trails
    );

    // a year of days: the first one's ladder still reads its warm-up from the map's tail
    let year = series(&desk, None, Some(250)).await.unwrap();
    assert_eq!(year.limits.len(), 250);
    assert_eq!(year.limits.last().unwrap().date, 20200616);
    for d in [&year.limits[0], &year.limits[1], &year.limits[249]]
        .into_iter()
        .chain(year.limits.iter().filter(|d| d.date == 20200203))
    {
        let date = wyckoff_session::time::iso(d.date);
        let one = day_map(&desk, Some(&date)).await.unwrap().limits;
        assert_eq!(*d, one, "{date}");
    }

    // bad requests are refused, naming what is wrong
    for days in [0, 251] {
        let e = series(&desk, None, Some(days)).await.unwrap_err();
        assert_eq!(e.kind, CommandErrorKind::InvalidInput, "{days}");
    }
    let e = day_map(&desk, Some("2020-02-30")).await.unwrap_err();
    assert_eq!(e.kind, CommandErrorKind::InvalidInput);
    assert!(e.message.contains("2020-02-30"));
}

#[tokio::test]
async fn a_path_that_is_no_membership_file_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(home.path()).await;
    let dir = tempfile::tempdir().unwrap();
    let e = import(&desk, &dir.path().display().to_string())
        .await
        .unwrap_err();
    assert_eq!(e.kind, CommandErrorKind::InvalidInput);
    assert!(e.message.contains("no TDX files here"), "{}", e.message);
    assert!(desk.industry_loads().await.unwrap().is_empty());
}
