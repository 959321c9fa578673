//! The grounding check on a 2,000-character Chinese answer with ~60 figures against 20
//! real-sized tool results (diagnoses with their text, 30-day price tables, screens).
//!
//! Target: `grounding/answer_2000_tools_20` under 5 ms.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use wyckoff_agent::grounding::{self, ToolInput};

fn diagnosis(code: &str, k: usize) -> Value {
    json!({
        "code": code, "name": "贵州茅台", "data_status": "ok", "as_of": "2025-06-30",
        "latest_date": "2025-06-30", "bar_count": 500, "health": "健康",
        "health_reasons": ["站上MA50", "量能温和", "相对强度领先大盘"], "latest_close": 1688.0 + k as f64,
        "ma": {"ma5": 1680.1, "ma20": 1650.3, "ma50": 1600.2, "ma200": 1550.0},
        "ma_pattern": "多头排列", "l2_channel": "主升通道", "accum_stage": "Accum_C",
        "l4_trigger_details": (0..6).map(|i| json!({"kind": "SOS", "date": format!("2025-06-{:02}", i + 1), "detail": "放量突破区间上沿，量比 2.3，收盘站稳"})).collect::<Vec<_>>(),
        "stop_loss_price": 1540.5, "stop_loss_status": "安全",
        "formatted_text": "【诊断】主升通道，吸筹C阶段，SOS后回踩LPS缩量企稳，止损1540.5，目标位1850。".repeat(12),
    })
}

fn price(code: &str, k: usize) -> Value {
    let rows: Vec<Value> = (1..=30)
        .map(|d| json!({"date": format!("2025-06-{d:02}"), "open": 10.0, "high": 10.5, "low": 9.8, "close": 10.0 + f64::from(d) / 100.0 + k as f64, "volume": 1234567 + d, "amount": 12345678.9, "pct_chg": 0.5}))
        .collect();
    json!({"code": code, "name": "平安银行", "days": 30, "latest_close": 10.3, "latest_date": "2025-06-30", "data": rows})
}

fn screen() -> Value {
    let rows: Vec<Value> = (0..50)
        .map(|i| json!({"code": format!("{:06}", 600000 + i * 7), "name": "某股", "score": 0.5 + f64::from(i) / 100.0, "stage": "Markup"}))
        .collect();
    json!({"as_of": "2025-06-30", "passed": rows.len(), "candidates": rows})
}

fn answer() -> String {
    let mut s = String::new();
    let mut k = 0;
    while s.chars().count() < 2000 {
        s.push_str(&format!(
            "600519 最新收盘 {:.2} 元，较 MA20 的 1650.3 高出约 2.3%，成交额 1.23亿，\
             2025-06-0{} 出现 SOS，止损 1540.5，目标 1850。平安银行 000001 收于 {:.2}，涨幅 0.5%。\n",
            1688.0 + f64::from(k),
            k % 9 + 1,
            10.3 + f64::from(k),
        ));
        k += 1;
    }
    s.chars().take(2000).collect()
}

fn bench(c: &mut Criterion) {
    let results: Vec<(String, Value)> = (0..20)
        .map(|k| {
            let v = match k % 3 {
                0 => diagnosis("600519", k),
                1 => price("000001", k),
                _ => screen(),
            };
            (format!("call_{k}"), v)
        })
        .collect();
    let tools: Vec<ToolInput<'_>> = results
        .iter()
        .map(|(id, v)| ToolInput {
            call_id: id,
            tool: "analyze_stock",
            result: v,
        })
        .collect();
    let text = answer();
    let g = grounding::check(&text, &tools, &["分析 600519 和 000001"]);
    eprintln!(
        "claims {} sourced {} derived {} unsupported {}",
        g.claims.len(),
        g.sourced,
        g.derived,
        g.unsupported
    );
    c.bench_function("grounding/answer_2000_tools_20", |b| {
        b.iter(|| grounding::check(black_box(&text), black_box(&tools), &["分析 600519"]))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
