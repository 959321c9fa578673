//! Compaction planning without the model call, on a 500-message conversation with Chinese
//! text and real-sized tool results (diagnoses, price rows, portfolio diagnostics):
//! - `compaction/plan_500`: estimate (system prompt + 12 tool schemas + messages) and cut;
//! - `compaction/prepare_500`: the above plus the summary request text (head tool results
//!   condensed per tool, newest first, up to the request's character budget for a 128k
//!   window) and the codes for the summary block: everything
//!   [`wyckoff_agent::LlmCompactor`] computes before it calls the model;
//! - `compaction/condense_*`: one tool result condensed to 400 characters;
//! - `compaction/fallback_500`: the deterministic summary of the head.
//!
//! Target: `prepare_500` under 5 ms.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use wyckoff_agent::compaction::{self, condense, plan, summary};
use wyckoff_protocol::{Message, ToolCall, ToolSchema};

fn diagnosis(code: &str) -> Value {
    json!({
        "code": code, "name": "贵州茅台", "data_status": "ok", "as_of": "2025-06-30",
        "latest_date": "2025-06-30", "bar_count": 500, "health": "健康",
        "health_reasons": ["站上MA50", "量能温和", "相对强度领先大盘"], "latest_close": 1688.0,
        "ma": {"ma5": 1680.1, "ma20": 1650.3, "ma50": 1600.2, "ma200": 1550.0},
        "ma_pattern": "多头排列", "l2_channel": "主升通道", "track": "trend", "accum_stage": "Accum_C",
        "l4_triggers": ["SOS", "LPS"],
        "l4_trigger_details": (0..6).map(|i| json!({"kind": "SOS", "date": format!("2025-06-{:02}", i + 1), "detail": "放量突破区间上沿，量比 2.3，收盘站稳"})).collect::<Vec<_>>(),
        "exit_signal": null, "stop_loss_price": 1540.5, "stop_loss_status": "安全",
        "formatted_text": "【诊断】主升通道，吸筹C阶段，SOS后回踩LPS缩量企稳，止损1540.5，目标位1850。".repeat(12),
    })
}

fn price(code: &str) -> Value {
    let rows: Vec<Value> = (1..=30)
        .map(|d| json!({"date": format!("2025-06-{d:02}"), "open": 10.0, "high": 10.5, "low": 9.8, "close": 10.0 + f64::from(d) / 100.0, "volume": 1234567, "amount": 12345678.9, "pct_chg": 0.5}))
        .collect();
    json!({"code": code, "name": "平安银行", "mode": "price", "days": 30,
           "latest_close": 10.3, "latest_date": "2025-06-30", "data_status": "ok", "data": rows})
}

fn portfolio() -> Value {
    let rows: Vec<Value> = (0..8)
        .map(|i| {
            json!({"code": format!("60000{i}"), "name": format!("持仓{i}"), "health": "警惕",
            "l2_channel": "震荡", "accum_stage": "Accum_B", "exit_signal": "sos_failure",
            "stop_loss_status": "接近", "pnl_pct": -3.2, "weight_pct": 12.5,
            "formatted_text": "跌破冰线需减仓观察。".repeat(8)})
        })
        .collect();
    json!({"portfolio_id": "default", "free_cash": 10000.0, "position_count": 8,
           "successful_count": 8, "failed_count": 0, "data_status": "ok", "diagnostics": rows})
}

/// 100 rounds of: user question, assistant with two parallel calls, their two results,
/// the assistant's answer — 500 messages.
fn conversation() -> Vec<Message> {
    let mut m = Vec::with_capacity(500);
    for r in 0..100 {
        let code = format!("{:06}", 600_000 + r);
        m.push(Message::user(format!(
            "请用威科夫方法分析 {code}，看看现在是否处于吸筹末期，我不追涨，单只仓位不超过两成。"
        )));
        let second = if r % 5 == 0 {
            "portfolio"
        } else {
            "analyze_stock"
        };
        let calls = vec![
            ToolCall::new(
                format!("call_{r}_a"),
                "analyze_stock",
                json!({"code": code}),
            ),
            ToolCall::new(
                format!("call_{r}_b"),
                second,
                json!({"code": code, "mode": "price", "days": 30}),
            ),
        ];
        m.push(Message::Assistant {
            content: "先看诊断和近期价格。".into(),
            tool_calls: calls.clone(),
            reasoning: None,
            reasoning_signature: None,
        });
        m.push(Message::tool_result(
            &calls[0],
            diagnosis(&code).to_string(),
            false,
        ));
        let second_result = if second == "portfolio" {
            portfolio()
        } else {
            price(&code)
        };
        m.push(Message::tool_result(
            &calls[1],
            second_result.to_string(),
            false,
        ));
        m.push(Message::assistant(format!(
            "{code} 处于主升通道，吸筹 C 阶段，出现 SOS 与 LPS；止损 1540.5，建议等缩量回踩再分批建仓，单只不超过两成。"
        )));
    }
    m
}

fn tools() -> Vec<ToolSchema> {
    (0..12)
        .map(|i| ToolSchema {
            name: format!("tool_{i}"),
            description: "分析个股的量价结构、威科夫阶段与止损位；返回诊断字段。".repeat(3),
            parameters: json!({"type": "object", "properties": {"code": {"type": "string", "description": "六位股票代码"}, "mode": {"type": "string", "enum": ["diagnose", "price"]}}, "required": ["code"]}),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let messages = conversation();
    assert_eq!(messages.len(), 500);
    let tools = tools();
    let system = "你是威科夫分析助手，面向 A 股，回答用中文。".repeat(20);
    let window = 128_000;
    let p = plan::plan(&messages, &system, &tools, window).expect("over 25 %");
    let head = &messages[..p.tail_start];
    eprintln!(
        "500 messages: estimate {} tokens, threshold {}, head {}, tail {}, summary request {} chars",
        p.estimate,
        p.threshold,
        head.len(),
        messages.len() - p.tail_start,
        summary::serialize_head_within(head, compaction::summary_input_chars(window))
            .chars()
            .count()
    );

    let mut g = c.benchmark_group("compaction");
    g.bench_function("plan_500", |b| {
        b.iter(|| plan::plan(black_box(&messages), &system, &tools, window))
    });
    g.bench_function("prepare_500", |b| {
        b.iter(|| {
            let p = plan::plan(black_box(&messages), &system, &tools, window).unwrap();
            let head = &messages[..p.tail_start];
            let text =
                summary::serialize_head_within(head, compaction::summary_input_chars(window));
            let codes = summary::codes_in(head, 8);
            (text, codes)
        })
    });
    let diag = diagnosis("600519").to_string();
    let bars = price("000001").to_string();
    g.bench_function("condense_diagnosis", |b| {
        b.iter(|| condense::condense_tool_result("analyze_stock", black_box(&diag), 400))
    });
    g.bench_function("condense_price", |b| {
        b.iter(|| condense::condense_tool_result("analyze_stock", black_box(&bars), 400))
    });
    g.bench_function("fallback_500", |b| {
        b.iter(|| summary::local_summary(black_box(head)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
