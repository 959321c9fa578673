//! The overview's and the portfolio page's commands over a full-market-sized cache: 3,000
//! stocks × 250 daily bars (the bundled histories, scaled per code, written through CSV
//! import) plus the 8 bundled stocks, and a portfolio of the 8. Figures, not assertions:
//! `cargo bench -p wyckoff-desk --bench workspace`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::Instant;

use wyckoff_desk_lib::{
    PortfolioEdit, apply_portfolio_edit, build_data_status, build_overview, load_portfolio,
};
use wyckoff_session::testing::offline_desk;

const RUNS: usize = 5;
const STOCKS: usize = 3_000;
const BARS: usize = 250;
const BUNDLED: [&str; 8] = [
    "000001", "000338", "000778", "000783", "002572", "300027", "601318", "603220",
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

async fn time<F, Fut, T>(what: &str, f: F) -> T
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut times = Vec::with_capacity(RUNS);
    let mut last = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        last = Some(f().await);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!("{what}: median {:.0} ms over {RUNS} runs", median(times));
    last.unwrap()
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let home = tempfile::tempdir().unwrap();
        // The commands ask a desk; no keychain, and no live source (the cache is all).
        let desk = offline_desk(home.path()).await.unwrap();
        let md = desk.market();
        let mut histories = Vec::new();
        for code in BUNDLED {
            let bars = md.daily_bars(code, None).await.unwrap().bars;
            histories.push(bars[bars.len() - BARS..].to_vec());
        }
        let csv = home.path().join("market.csv");
        let mut text = String::from("date,code,open,high,low,close,volume,amount\n");
        for i in 0..STOCKS {
            let scale = 1.0 + (i % 50) as f64 / 100.0;
            for b in &histories[i % histories.len()] {
                text.push_str(&format!(
                    "{},{},{:.3},{:.3},{:.3},{:.3},{},{}\n",
                    wyckoff_session::domain::market::date::iso(b.date),
                    // SSE main-board prefixes 600/601/603 (602 is no stock code)
                    [600_000, 601_000, 603_000][i / 1000] + i % 1000,
                    b.open * scale,
                    b.high * scale,
                    b.low * scale,
                    b.close * scale,
                    b.volume,
                    b.amount
                ));
            }
        }
        std::fs::write(&csv, text).unwrap();
        let t = Instant::now();
        let report = md.import_csv(&csv, &mut |_| {}).await.unwrap();
        println!(
            "import {STOCKS} stocks × {BARS} bars: {:.1} s ({} stocks, {} bars written)",
            t.elapsed().as_secs_f64(),
            report.stocks,
            report.bars
        );
        assert!(
            !report.anything_rejected(),
            "{}",
            serde_json::to_string(&report.outcomes).unwrap()
        );
        for code in BUNDLED {
            apply_portfolio_edit(
                &desk,
                &PortfolioEdit::Add {
                    code: code.into(),
                    shares: 1000,
                    cost_price: 10.0,
                    buy_dt: "2020-01-02".into(),
                },
            )
            .await
            .unwrap();
        }

        let o = time("market_overview (indices, 水温, breadth)", || {
            build_overview(&desk)
        })
        .await;
        let o = o.unwrap();
        println!(
            "  breadth available: {}, sample {:?}",
            o.breadth.available, o.breadth.sample_size
        );
        let s = time("data_status (status + damaged scan)", || {
            build_data_status(md)
        })
        .await;
        println!("  stocks cached: {}", s.unwrap().stocks_cached);
        let p = time("portfolio_page (8 holdings diagnosed)", || {
            load_portfolio(&desk)
        })
        .await;
        println!("  positions: {}", p.unwrap().positions.len());
    });
}
