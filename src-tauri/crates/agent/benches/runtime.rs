//! Runtime overhead, with an in-memory provider and no-op tools:
//! - `turn/deltas/N`: a turn streaming N text deltas (per-delta cost = slope);
//! - `dispatch/execute`: one tool call through validation, gate, tool, serialization;
//! - `turn/tool_round/N`: a turn whose first round calls N no-op tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::{self, ScriptedProvider, Step};
use wyckoff_agent::{
    FnTool, HeadlessApprover, NullSink, Runtime, RuntimeConfig, SystemClock, ToolRegistry, ToolSpec,
};
use wyckoff_llm::{FinishReason, StreamChunk};
use wyckoff_protocol::{ToolCall, Usage};

fn registry() -> Arc<ToolRegistry> {
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(FnTool::new(
        ToolSpec::new("analyze_stock", "个股分析").concurrency_safe(),
        "noop",
        json!({"type": "object", "properties": {"code": {"type": "string"}, "days": {"type": "integer"}}, "required": ["code"]}),
        |args, _| async move { Ok(json!({"code": args["code"], "phase": "吸筹"})) },
    )));
    reg.register(Arc::new(FnTool::new(
        ToolSpec::new("note", "笔记"),
        "noop",
        json!({"type": "object", "properties": {"i": {"type": "integer"}}}),
        |_, _| async move { Ok(json!({"ok": true})) },
    )));
    Arc::new(reg)
}

fn runtime(script: Vec<Vec<Step>>, reg: Arc<ToolRegistry>) -> Runtime {
    let config = RuntimeConfig {
        loop_guard: false,
        ..RuntimeConfig::default()
    };
    Runtime::new(
        Arc::new(ScriptedProvider::new(script)),
        reg,
        config,
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
}

fn deltas(n: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = (0..n)
        .map(|i| Step::Chunk(StreamChunk::TextDelta(format!("威科夫{i} "))))
        .collect();
    steps.push(Step::Chunk(StreamChunk::Usage(Usage::default())));
    steps.push(Step::Chunk(StreamChunk::Finish(FinishReason::Stop)));
    steps
}

fn bench_deltas(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let reg = registry();
    let mut group = c.benchmark_group("turn/deltas");
    for n in [1usize, 1_000] {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter_batched(
                || runtime(vec![deltas(n)], reg.clone()),
                |runtime| {
                    rt.block_on(async {
                        let mut messages = Vec::new();
                        runtime
                            .run_turn(
                                &mut messages,
                                "sys",
                                "你好",
                                Arc::new(NullSink),
                                CancellationToken::new(),
                            )
                            .await
                    })
                },
                criterion::BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn bench_dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let reg = registry();
    let env = runtime(vec![], reg.clone()).exec_env(Arc::new(NullSink), CancellationToken::new());
    let call = ToolCall::new(
        "c1",
        "analyze_stock",
        json!({"code": "600519", "days": "30"}),
    );
    c.bench_function("dispatch/execute", |b| {
        b.iter(|| rt.block_on(reg.execute(&call, &env)))
    });

    let mut group = c.benchmark_group("turn/tool_round");
    for (name, tool) in [("serial", "note"), ("concurrent", "analyze_stock")] {
        let n = 20usize;
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new(name, n), |b| {
            b.iter_batched(
                || {
                    let calls: Vec<ToolCall> = (0..n)
                        .map(|i| {
                            ToolCall::new(
                                format!("c{i}"),
                                tool,
                                json!({"code": format!("{i:06}"), "i": i})
                                    .as_object()
                                    .map(|o| {
                                        let mut o = o.clone();
                                        if tool == "note" {
                                            o.remove("code");
                                        } else {
                                            o.remove("i");
                                        }
                                        serde_json::Value::Object(o)
                                    })
                                    .unwrap(),
                            )
                        })
                        .collect();
                    runtime(
                        vec![scripted::tool_calls("", calls), scripted::text("ok")],
                        reg.clone(),
                    )
                },
                |runtime| {
                    rt.block_on(async {
                        let mut messages = Vec::new();
                        runtime
                            .run_turn(
                                &mut messages,
                                "sys",
                                "批量",
                                Arc::new(NullSink),
                                CancellationToken::new(),
                            )
                            .await
                    })
                },
                criterion::BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench_deltas, bench_dispatch);
criterion_main!(benches);
