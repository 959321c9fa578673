//! The stock page's payload and build time: `stock_chart` for each bundled stock (day, week,
//! month) over a fresh offline home, and for a 5,000-bar series (the bundled 平安银行 history
//! repeated with shifted dates, written through CSV import). Figures, not assertions:
//! `cargo bench -p wyckoff-desk --bench stock_chart`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::Instant;

use wyckoff_desk_lib::{Period, build_chart};
use wyckoff_session::domain::market::{MarketConfig, MarketData};

const RUNS: usize = 7;

async fn measure(md: &MarketData, code: &str, period: Period) {
    let mut times = Vec::with_capacity(RUNS);
    let mut bytes = 0;
    let mut bars = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let chart = build_chart(md, code, period).await.unwrap();
        let json = serde_json::to_vec(&chart).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        bytes = json.len();
        bars = chart.bars.dates.len();
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{code} {period:?}: {bars} bars, payload {:.1} KiB ({:.0} B/bar), build+serialise median {:.1} ms",
        bytes as f64 / 1024.0,
        bytes as f64 / bars.max(1) as f64,
        times[RUNS / 2]
    );
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let home = tempfile::tempdir().unwrap();
        let md = MarketData::open_with(MarketConfig::offline(home.path()))
            .await
            .unwrap();
        for code in ["000001", "601318"] {
            for period in [Period::Day, Period::Week, Period::Month] {
                measure(&md, code, period).await;
            }
        }
        // 5,000 bars: 平安银行's history, then the same bars again on later business days.
        let daily = md.daily_bars("000001", None).await.unwrap().bars;
        let csv = home.path().join("000002.csv");
        let mut text = String::from("date,code,open,high,low,close,volume,amount\n");
        let mut day = chrono::NaiveDate::from_ymd_opt(2000, 1, 3).unwrap();
        for b in daily.iter().cycle().take(5000) {
            while chrono::Datelike::weekday(&day).num_days_from_monday() > 4 {
                day = day.succ_opt().unwrap();
            }
            text.push_str(&format!(
                "{},000002,{},{},{},{},{},{}\n",
                day.format("%Y-%m-%d"),
                b.open,
                b.high,
                b.low,
                b.close,
                b.volume,
                b.amount
            ));
            day = day.succ_opt().unwrap();
        }
        std::fs::write(&csv, text).unwrap();
        md.import_csv(&csv, &mut |_| {}).await.unwrap();
        measure(&md, "000002", Period::Day).await;
    });
}
