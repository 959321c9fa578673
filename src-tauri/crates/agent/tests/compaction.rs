#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Compaction: token estimate, the cut (tool-call pairs never split), condensation per
//! tool, the LLM compactor with its fallback, and the runtime compacting a long turn.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::compaction::condense::{SHRUNK_MAX, condense_tool_result};
use wyckoff_agent::compaction::estimate::{
    reference_text_tokens, request_tokens, should_compact, text_tokens,
};
use wyckoff_agent::compaction::plan::{has_orphan_results, plan, plan_cut, tail_start};
use wyckoff_agent::compaction::summary::{
    COMPACTION_PROMPT, MAX_SUMMARY_CHARS, SUMMARY_ACK, local_summary,
};
use wyckoff_agent::scripted::{self, ScriptedProvider, Step};
use wyckoff_agent::{
    AgentError, CollectingSink, CompactionArchive, Compactor, FileArchive, HeadlessApprover,
    LlmCompactor, MemoryFlush, Runtime, RuntimeConfig, SystemClock, ToolRegistry, ToolSpec,
    TurnOutcome,
};
use wyckoff_llm::{LlmError, Provider};
use wyckoff_protocol::{ErrorKind, Message, RuntimeEvent, ToolCall, ToolSchema, UserOrigin};

// ---------- conversation shorthand ----------

/// `U` user, `A` assistant text, `S` summary, `C:a,b` assistant calling a and b,
/// `T:a` result of a, `N` notification.
fn conv(spec: &str) -> Vec<Message> {
    spec.split_whitespace()
        .enumerate()
        .map(|(i, tok)| match tok.split_once(':') {
            Some(("C", ids)) => Message::Assistant {
                content: String::new(),
                tool_calls: ids
                    .split(',')
                    .map(|id| ToolCall::new(id, "analyze_stock", json!({"code": "600519"})))
                    .collect(),
                reasoning: None,
                reasoning_signature: None,
            },
            Some(("T", id)) => Message::Tool {
                tool_call_id: id.to_owned(),
                name: "analyze_stock".to_owned(),
                content: format!("{{\"code\":\"600519\",\"i\":{i}}}"),
                is_error: false,
            },
            _ => match tok {
                "U" => Message::user(format!("用户问题 {i}")),
                "A" => Message::assistant(format!("回答 {i}")),
                "S" => Message::user_with_origin("[对话摘要]\n旧摘要", UserOrigin::Summary),
                "N" => Message::user_with_origin("后台任务完成", UserOrigin::SystemNotification),
                other => panic!("bad token {other}"),
            },
        })
        .collect()
}

/// The largest valid tail start by brute force: ≤ len−4, not on a tool result, no
/// orphan result after it.
fn brute_tail_start(m: &[Message]) -> usize {
    let mut s = m.len().saturating_sub(4);
    loop {
        let ok = !matches!(m.get(s), Some(Message::Tool { .. })) && !has_orphan_results(&m[s..]);
        if ok || s == 0 {
            return s;
        }
        s -= 1;
    }
}

#[test]
fn tail_start_table() {
    let cases: &[(&str, usize, Option<usize>)] = &[
        // (conversation, tail_start, plan_cut)
        ("", 0, None),
        ("U A", 0, None),
        ("U A U A", 0, None),
        ("U A U A U A", 2, None),
        ("U A U A U A U", 3, Some(3)),
        // the 4-message cut lands on a result: its call comes along
        ("U A U C:a T:a A U A", 3, Some(3)),
        // parallel calls: cut on the 2nd and 3rd result
        ("U A U A U C:a,b,c T:a T:b T:c A", 5, Some(5)),
        ("U A U A U A C:a,b,c T:a T:b T:c", 6, Some(6)),
        // a chain of rounds: only the last pair straddles
        ("U A U C:a T:a C:b T:b C:c T:c A", 5, Some(5)),
        // the call is inside the last four already
        ("U A U A U C:a T:a A", 4, Some(4)),
        // one huge tool round: everything from its call is kept
        ("U A U C:a,b,c,d,e,f T:a T:b T:c T:d T:e T:f", 3, Some(3)),
        ("U C:a,b,c,d,e,f T:a T:b T:c T:d T:e T:f", 1, None),
        // an earlier summary is just head
        ("S A U A U A U A", 4, Some(4)),
        // a result whose call is nowhere (already broken): the tail never starts on it
        ("U A U A T:x U A A", 3, Some(3)),
        // notifications are user-role messages like any other
        ("U A N U C:a T:a A", 3, Some(3)),
        // ids reused across turns (`call_0`): each result belongs to the nearest call
        ("U C:a T:a A U A U C:a T:a A", 6, Some(6)),
        ("U C:a T:a A U A U A C:a T:a", 6, Some(6)),
        ("U C:a T:a A U A U A U C:a T:a", 7, Some(7)),
    ];
    for (spec, want, want_cut) in cases {
        let m = conv(spec);
        assert_eq!(tail_start(&m), *want, "{spec}");
        assert_eq!(plan_cut(&m), *want_cut, "{spec}");
        let t = &m[*want..];
        assert!(!matches!(t.first(), Some(Message::Tool { .. })), "{spec}");
    }
}

/// Tool-call groups of every width, inserted at every position, every prefix of the
/// conversation: the cut agrees with brute force and never leaves an orphan result.
#[test]
fn pairs_straddling_the_cut_at_every_position() {
    for width in 1..=4 {
        for at in 0..12 {
            let mut spec: Vec<String> = Vec::new();
            for i in 0..12 {
                if i == at {
                    let ids: Vec<String> = (0..width).map(|k| format!("g{k}")).collect();
                    spec.push(format!("C:{}", ids.join(",")));
                    spec.extend(ids.iter().map(|id| format!("T:{id}")));
                }
                spec.push(if i % 2 == 0 { "U" } else { "A" }.to_owned());
                if i % 3 == 2 {
                    spec.push(format!("C:s{i}"));
                    spec.push(format!("T:s{i}"));
                }
            }
            let full = conv(&spec.join(" "));
            for len in 0..=full.len() {
                let m = &full[..len];
                if has_orphan_results(m) {
                    continue; // a prefix cut inside a group is not a conversation
                }
                let s = tail_start(m);
                assert_eq!(s, brute_tail_start(m), "width {width} at {at} len {len}");
                assert!(!has_orphan_results(&m[s..]), "orphan: {width}/{at}/{len}");
                assert!(len < 4 || m.len() - s >= 4);
                assert!(!matches!(m.get(s), Some(Message::Tool { .. })));
            }
        }
    }
}

#[test]
fn trigger_at_a_quarter_of_the_window_counting_prompt_and_tools() {
    let m = conv("U A U A U A U A");
    let e = request_tokens("系统提示", &[], &m);
    let w = u32::try_from(e * 4).unwrap();
    assert!(plan(&m, "系统提示", &[], w).is_some());
    assert!(plan(&m, "系统提示", &[], w + 1).is_none());
    let p = plan(&m, "系统提示", &[], w).unwrap();
    assert_eq!((p.tail_start, p.estimate, p.threshold), (4, e, e));
    // A long system prompt alone pushes the same messages over.
    let sys = "威科夫".repeat(2_000);
    assert!(plan(&m, &sys, &[], w).is_some());
    assert!(plan(&m, &sys, &[], 10 * w).is_some());
    // So do tool schemas.
    let tools: Vec<ToolSchema> = (0..20)
        .map(|i| ToolSchema {
            name: format!("tool_{i}"),
            description: "分析个股的量价结构与威科夫阶段".repeat(10),
            parameters: json!({"type":"object","properties":{"code":{"type":"string"}}}),
        })
        .collect();
    assert!(request_tokens("", &tools, &m) > request_tokens("", &[], &m) + 20 * 100);
    assert!(plan(&m, "", &tools, 10 * w).is_some());
    assert!(!should_compact(99, 400) && should_compact(100, 400));
}

// ---------- token estimate ----------

#[test]
fn estimate_counts_cjk_and_never_undercuts_the_reference() {
    assert_eq!(text_tokens(""), 0);
    let zh = "贵州茅台放量突破".repeat(100); // 800 CJK chars
    assert!(text_tokens(&zh) >= 1_040, "{}", text_tokens(&zh));
    let en = "price breakout".repeat(100); // 1,400 ASCII chars
    assert_eq!(text_tokens(&en), 700);
    // Per character, Chinese costs more than ASCII.
    assert!(text_tokens(&zh) / 800 >= 1 && text_tokens(&en) * 2 <= 1_400);
    let samples = [
        "a",
        "ab",
        "abc",
        "茅",
        "茅台",
        "600519 贵州茅台 close=1688.00",
        "，。！？「」",
        "ｈｅｌｌｏ全角",
        "ひらがなカタカナ한국어",
        "emoji 😀😀 mixed 中文 text",
        "{\"code\":\"000001\",\"name\":\"平安银行\",\"l2_channel\":\"主升\"}",
        "é ü ß ø",
        "\n\t  ",
    ];
    for s in samples {
        for k in [1, 2, 3, 7, 50] {
            let t = s.repeat(k);
            assert!(
                text_tokens(&t) >= reference_text_tokens(&t),
                "{t:?}: {} < {}",
                text_tokens(&t),
                reference_text_tokens(&t)
            );
        }
    }
    // Messages: tool-call arguments and results count too.
    let m = conv("U C:a T:a");
    assert!(request_tokens("", &[], &m) > request_tokens("", &[], &m[..1]) + 10);
}

// ---------- condensation ----------

fn diagnosis() -> Value {
    json!({
        "code": "600519", "name": "贵州茅台", "data_status": "ok", "as_of": "2025-06-30",
        "latest_date": "2025-06-30", "bar_count": 500, "health": "健康",
        "health_reasons": ["站上MA50", "量能温和"], "latest_close": 1688.0,
        "ma": {"ma5": 1680.1, "ma20": 1650.3, "ma50": 1600.2, "ma200": 1550.0},
        "l2_channel": "主升通道", "track": "trend", "accum_stage": "Accum_C",
        "l4_triggers": ["SOS", "LPS"],
        "l4_trigger_details": (0..20).map(|i| json!({"kind": "SOS", "date": format!("2025-05-{i:02}"), "detail": "放量突破区间上沿，量比 2.3"})).collect::<Vec<_>>(),
        "exit_signal": null, "stop_loss_price": 1540.5, "stop_loss_status": "安全",
        "channels": {"detail": "很长的通道说明".repeat(40)},
        "formatted_text": "诊断全文".repeat(200),
    })
}

fn price() -> Value {
    let rows: Vec<Value> = (1..=60)
        .map(|d| json!({"date": format!("2025-04-{d:02}"), "open": 10.0, "high": 10.5, "low": 9.8, "close": 10.0 + f64::from(d) / 100.0, "volume": 123456, "amount": 1234567.0, "pct_chg": 0.5}))
        .collect();
    json!({"code": "000001", "name": "平安银行", "mode": "price", "days": 60,
           "latest_close": 10.6, "latest_date": "2025-04-60", "data_status": "ok", "data": rows})
}

fn portfolio_diag() -> Value {
    let rows: Vec<Value> = (0..10)
        .map(|i| {
            json!({"code": format!("60000{i}"), "name": format!("股票{i}"), "health": "警惕",
            "l2_channel": "震荡", "accum_stage": "Accum_B", "exit_signal": "sos_failure",
            "stop_loss_status": "接近", "pnl_pct": -3.2, "weight_pct": 10.0,
            "formatted_text": "诊断全文".repeat(50), "targets": [1, 2, 3]})
        })
        .collect();
    json!({"portfolio_id": "default", "free_cash": 10000.0, "position_count": 10,
           "successful_count": 10, "failed_count": 0, "total_market_value": 90000.0,
           "data_status": "ok", "as_of": "2025-06-30", "source": "local cache", "diagnostics": rows})
}

fn assert_json_within(s: &str, max: usize) -> Value {
    assert!(
        s.chars().count() <= max,
        "{} > {max}: {s}",
        s.chars().count()
    );
    serde_json::from_str(s).unwrap_or_else(|e| panic!("invalid JSON ({e}): {s}"))
}

#[test]
fn analyze_stock_keeps_the_real_diagnosis_fields() {
    let content = diagnosis().to_string();
    let out = condense_tool_result("analyze_stock", &content, SHRUNK_MAX);
    let v = assert_json_within(&out, SHRUNK_MAX);
    for k in [
        "code",
        "name",
        "health",
        "l2_channel",
        "track",
        "accum_stage",
        "l4_triggers",
        "stop_loss_status",
        "data_status",
        "as_of",
    ] {
        assert!(v.get(k).is_some(), "{k} missing: {out}");
    }
    assert_eq!(v["l4_triggers"], json!(["SOS", "LPS"]));
    assert!(v.get("formatted_text").is_none() && v.get("channels").is_none());
    // exit_signal kept when set
    let mut d = diagnosis();
    d["exit_signal"] = json!("sos_failure");
    let v: Value =
        serde_json::from_str(&condense_tool_result("analyze_stock", &d.to_string(), 600)).unwrap();
    assert_eq!(v["exit_signal"], "sos_failure");
}

#[test]
fn analyze_stock_price_mode_keeps_headline_and_last_five_rows() {
    let out = condense_tool_result("analyze_stock", &price().to_string(), SHRUNK_MAX);
    let v = assert_json_within(&out, SHRUNK_MAX);
    assert_eq!(v["code"], "000001");
    assert_eq!(v["latest_close"], 10.6);
    assert_eq!(v["latest_date"], "2025-04-60");
    let rows = v["data"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[4]["date"], "2025-04-60");
}

#[test]
fn portfolio_keeps_diagnostics_or_positions_summary() {
    let out = condense_tool_result("portfolio", &portfolio_diag().to_string(), 2_000);
    let v = assert_json_within(&out, 2_000);
    assert_eq!(v["position_count"], 10);
    assert_eq!(v["free_cash"], 10000.0);
    let rows = v["diagnostics"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    assert_eq!(rows[0]["health"], "警惕");
    assert!(rows[0].get("formatted_text").is_none());

    let view = json!({"portfolio_id": "default", "free_cash": 5000.0, "position_count": 30,
        "positions": (0..30).map(|i| json!({"code": format!("00000{}", i % 10), "name": "某股", "shares": 100, "cost_price": 9.9, "note": "x".repeat(100)})).collect::<Vec<_>>(),
        "message": "共 30 只持仓"});
    let out = condense_tool_result("portfolio", &view.to_string(), SHRUNK_MAX);
    let v = assert_json_within(&out, SHRUNK_MAX);
    assert_eq!(v["portfolio_id"], "default");
    assert!(v["positions"].as_array().is_some_and(|r| !r.is_empty()));
}

#[test]
fn generic_results_keep_error_message_status_code_name_result() {
    let big = json!({"error": "数据源超时", "message": "请稍后重试", "status": "failed",
        "code": "600519", "name": "贵州茅台", "result": "partial", "raw": "x".repeat(5_000)});
    let out = condense_tool_result("web_fetch", &big.to_string(), 400);
    let v = assert_json_within(&out, 400);
    assert_eq!(
        v,
        json!({"error": "数据源超时", "message": "请稍后重试", "status": "failed",
        "code": "600519", "name": "贵州茅台", "result": "partial"})
    );
    // nothing to keep: the text itself, cut, still JSON
    let out = condense_tool_result(
        "web_fetch",
        &json!({"html": "<p>".repeat(900)}).to_string(),
        300,
    );
    assert!(assert_json_within(&out, 300).is_string());
    // not JSON at all
    let out = condense_tool_result("exec_command", &"日志行\n".repeat(500), 200);
    assert!(assert_json_within(&out, 200).is_string());
    // small results stay as they are
    let small = "{\"ok\":true}";
    assert_eq!(condense_tool_result("x", small, 400), small);
}

#[test]
fn condensed_output_is_valid_json_at_every_budget() {
    let fixtures = [
        ("analyze_stock", diagnosis().to_string()),
        ("analyze_stock", price().to_string()),
        ("portfolio", portfolio_diag().to_string()),
        (
            "analyze_stock",
            json!([1, 2, 3, "很长的文字".repeat(50), {"a": "b"}]).to_string(),
        ),
        (
            "other",
            json!({"message": "\"引号\"\\反斜杠\n换行".repeat(80)}).to_string(),
        ),
        ("other", "\"未闭合的 JSON".repeat(40)),
    ];
    for (tool, content) in &fixtures {
        for max in [0, 5, 16, 17, 20, 33, 50, 80, 120, 220, 400, 600, 1000] {
            let out = condense_tool_result(tool, content, max);
            assert_json_within(&out, max.max(16));
        }
    }
}

// ---------- the LLM compactor ----------

/// A conversation of `rounds` analyses with Chinese text and large tool results.
fn long_conversation(rounds: usize) -> Vec<Message> {
    let mut m = Vec::new();
    for r in 0..rounds {
        let code = format!("{:06}", 600_000 + r);
        m.push(Message::user(format!(
            "请分析 {code} 的威科夫结构，我偏好不追涨，单只仓位不超过两成。"
        )));
        let calls = vec![
            ToolCall::new(format!("a{r}"), "analyze_stock", json!({"code": code})),
            ToolCall::new(
                format!("p{r}"),
                "analyze_stock",
                json!({"code": code, "mode": "price"}),
            ),
        ];
        m.push(Message::Assistant {
            content: "先看诊断和价格。".into(),
            tool_calls: calls.clone(),
            reasoning: None,
            reasoning_signature: None,
        });
        let mut d = diagnosis();
        d["code"] = json!(code);
        m.push(Message::tool_result(&calls[0], d.to_string(), false));
        m.push(Message::tool_result(&calls[1], price().to_string(), false));
        m.push(Message::assistant(format!(
            "{code} 处于吸筹 C 阶段，出现 SOS 与 LPS，止损 1540.5，建议回踩再看。"
        )));
    }
    m
}

#[derive(Default)]
struct RecordingFlush {
    seen: Mutex<Vec<(usize, usize)>>, // (messages flushed, summary requests so far)
    fail: bool,
    provider: Option<Arc<ScriptedProvider>>,
}

#[async_trait::async_trait]
impl MemoryFlush for RecordingFlush {
    async fn flush(&self, messages: &[Message], _p: &dyn Provider) -> Result<(), AgentError> {
        let before = self.provider.as_ref().map_or(0, |p| p.requests().len());
        self.seen.lock().unwrap().push((messages.len(), before));
        if self.fail {
            return Err(AgentError::Invalid("flush broke".into()));
        }
        Ok(())
    }
}

fn summary_text() -> String {
    "用户关注 600000 等标的的威科夫结构，偏好不追涨、单只仓位不超过两成；已完成诊断：吸筹 C 阶段，SOS 与 LPS 出现，止损 1540.5；待办：等回踩确认。".to_owned()
}

async fn compact_once(
    summary: Vec<Step>,
    flush: Arc<RecordingFlush>,
    archive: Arc<FileArchive>,
    messages: &mut Vec<Message>,
) -> (
    Option<wyckoff_agent::CompactionReport>,
    Arc<ScriptedProvider>,
) {
    let provider = Arc::new(ScriptedProvider::new(vec![summary]));
    let flush = Arc::new(RecordingFlush {
        provider: Some(provider.clone()),
        fail: flush.fail,
        ..RecordingFlush::default()
    });
    let compactor = LlmCompactor::new("conv-1")
        .with_archive(archive)
        .with_memory_flush(flush.clone())
        .with_context_window(8_000);
    let report = compactor
        .maybe_compact(messages, "你是威科夫分析助手。", &[], provider.as_ref())
        .await
        .unwrap();
    let seen = flush.seen.lock().unwrap().clone();
    if report.is_some() {
        assert_eq!(seen.len(), 1, "flushed once");
        assert_eq!(seen[0].1, 0, "flush runs before the summary request");
    }
    (report, provider)
}

fn assert_compacted(before: &[Message], after: &[Message], summary_contains: &str) {
    assert!(matches!(
        &after[0],
        Message::User { origin: UserOrigin::Summary, content } if content.contains(summary_contains)
    ));
    assert_eq!(after[1], Message::assistant(SUMMARY_ACK));
    let tail = &after[2..];
    assert_eq!(
        tail,
        &before[before.len() - tail.len()..],
        "tail kept verbatim"
    );
    assert!(tail.len() >= 4);
    assert!(!has_orphan_results(after));
    assert!(!matches!(tail[0], Message::Tool { .. }));
}

#[tokio::test]
async fn llm_summary_replaces_the_head_and_archives_it() {
    let dir = tempfile::tempdir().unwrap();
    let archive = Arc::new(FileArchive::new(dir.path().join("context-archive")));
    let original = long_conversation(12);
    let mut messages = original.clone();
    let (report, provider) = compact_once(
        scripted::text(&summary_text()),
        Arc::default(),
        archive.clone(),
        &mut messages,
    )
    .await;
    let report = report.expect("compacted");
    assert!(!report.summary_fallback);
    assert_eq!(report.before_messages as usize, original.len());
    assert_eq!(report.after_messages as usize, messages.len());
    assert_compacted(&original, &messages, "吸筹 C 阶段");
    let reference = report.archive_ref.clone().unwrap();
    assert!(reference.starts_with("archive://conv-1/ctx_"));
    assert!(messages[0].text().contains(&reference));
    assert!(messages[0].text().contains("涉及标的：600000"));
    // The summary request: the reference prompt, the head as text, condensed results.
    let req = &provider.requests()[0];
    assert_eq!(req.system, COMPACTION_PROMPT);
    assert!(req.tools.is_empty());
    let head_text = req.messages[0].text();
    assert!(head_text.contains("[tool:analyze_stock]") && head_text.contains("l2_channel"));
    assert!(
        !head_text.contains("诊断全文诊断全文"),
        "big results condensed"
    );
    // The archive reopens exactly the removed messages.
    let head_len = original.len() - (messages.len() - 2);
    assert_eq!(
        archive.load(&reference).await.unwrap(),
        original[..head_len]
    );
    // Compacting again carries the first archive reference along.
    messages.extend(long_conversation(12));
    let before = messages.clone();
    let (report2, _) = compact_once(
        scripted::text(&summary_text()),
        Arc::default(),
        archive.clone(),
        &mut messages,
    )
    .await;
    let r2 = report2
        .expect("second compaction")
        .archive_ref
        .expect("second archive");
    assert_ne!(r2, reference);
    assert!(messages[0].text().contains(&reference) && messages[0].text().contains(&r2));
    assert_compacted(&before, &messages, "吸筹");
}

#[tokio::test]
async fn long_summary_is_cut_to_500_characters() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = long_conversation(12);
    let long = "摘要".repeat(600);
    let (report, _) = compact_once(
        scripted::text(&long),
        Arc::default(),
        Arc::new(FileArchive::new(dir.path())),
        &mut messages,
    )
    .await;
    assert!(!report.unwrap().summary_fallback);
    let body = messages[0]
        .text()
        .strip_prefix("[对话摘要]\n")
        .unwrap()
        .split("\n\n[可恢复归档]")
        .next()
        .unwrap();
    assert_eq!(body.chars().count(), MAX_SUMMARY_CHARS);
}

#[tokio::test]
async fn failed_or_short_summary_falls_back_and_keeps_the_tail() {
    let failing = vec![
        vec![Step::FailStart(LlmError::new(
            ErrorKind::RateLimit,
            "scripted",
            "429",
        ))],
        vec![Step::Error(LlmError::new(
            ErrorKind::Server,
            "scripted",
            "500",
        ))],
        scripted::text("好的"),
        scripted::text("   "),
        vec![], // empty stream
    ];
    for summary in failing {
        let dir = tempfile::tempdir().unwrap();
        let original = long_conversation(12);
        let mut messages = original.clone();
        let flush = Arc::new(RecordingFlush {
            fail: true, // a broken flush does not stop compaction either
            ..RecordingFlush::default()
        });
        let (report, _) = compact_once(
            summary,
            flush,
            Arc::new(FileArchive::new(dir.path())),
            &mut messages,
        )
        .await;
        let report = report.unwrap();
        assert!(report.summary_fallback);
        assert!(report.archive_ref.is_some());
        assert_compacted(&original, &messages, "前序对话已压缩为摘要。");
        assert!(messages[0].text().contains("用户关注："));
        assert!(messages[0].text().contains("工具结果要点："));
    }
}

#[tokio::test(start_paused = true)]
async fn stalled_summary_times_out_after_30_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let original = long_conversation(12);
    let mut messages = original.clone();
    let stalled = vec![
        Step::Chunk(wyckoff_llm::StreamChunk::TextDelta("部分摘要".into())),
        Step::Sleep(Duration::from_secs(31)),
        Step::Chunk(wyckoff_llm::StreamChunk::TextDelta(summary_text())),
    ];
    let started = tokio::time::Instant::now();
    let (report, _) = compact_once(
        stalled,
        Arc::default(),
        Arc::new(FileArchive::new(dir.path())),
        &mut messages,
    )
    .await;
    assert!(report.unwrap().summary_fallback);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(31),
        "{waited:?}"
    );
    assert_compacted(&original, &messages, "前序对话已压缩为摘要。");
}

#[tokio::test]
async fn under_the_threshold_nothing_happens() {
    let provider = ScriptedProvider::new(vec![]);
    let mut messages = long_conversation(2);
    let before = messages.clone();
    let report = LlmCompactor::new("c")
        .maybe_compact(&mut messages, "sys", &[], &provider)
        .await
        .unwrap();
    assert!(report.is_none());
    assert_eq!(messages, before);
    assert!(provider.requests().is_empty());
}

#[test]
fn local_summary_shape() {
    assert_eq!(local_summary(&[]), "无前序对话。");
    let s = local_summary(&long_conversation(10));
    assert!(
        s.starts_with("前序对话已压缩为摘要。\n涉及标的：600000, 000001, 600001"),
        "{s}"
    );
    assert!(!s.contains("123456"), "a volume is not a code: {s}");
    assert!(s.chars().count() <= 1_200);
}

#[tokio::test]
async fn file_archive_refuses_bad_references() {
    let dir = tempfile::tempdir().unwrap();
    let a = FileArchive::new(dir.path());
    for bad in [
        "archive://../x",
        "archive://c/../../etc",
        "http://c/x",
        "archive://c",
        "archive://c/x/y",
    ] {
        assert!(a.load(bad).await.is_err(), "{bad}");
    }
}

// ---------- the runtime compacting a long turn ----------

#[tokio::test]
async fn runtime_compacts_during_a_long_tool_turn_and_stays_valid() {
    let dir = tempfile::tempdir().unwrap();
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("analyze_stock", "个股分析").concurrency_safe(),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        |args, _ctx| async move {
            let mut d = diagnosis();
            d["code"] = args["code"].clone();
            Ok(d)
        },
    ));
    // Twelve rounds of two parallel analyses, then the answer.
    let mut script = Vec::new();
    for r in 0..12 {
        script.push(scripted::tool_calls(
            "继续分析。",
            vec![
                call(
                    &format!("x{r}"),
                    "analyze_stock",
                    json!({"code": format!("{:06}", 600_000 + r)}),
                ),
                call(
                    &format!("y{r}"),
                    "analyze_stock",
                    json!({"code": format!("{:06}", 1 + r)}),
                ),
            ],
        ));
    }
    script.push(scripted::text("综合结论：600000 吸筹末期，等待回踩。"));
    let provider = Arc::new(ScriptedProvider::new(script));
    // Summaries from their own provider: one good, then failures (fallback path).
    let summarizer = Arc::new(ScriptedProvider::new(vec![
        scripted::text(&summary_text()),
        scripted::text(&summary_text()),
    ]));
    let compactor = Arc::new(
        LlmCompactor::new("long-turn")
            .with_archive(Arc::new(FileArchive::new(dir.path().join("archive"))))
            .with_summary_provider(summarizer.clone())
            .with_context_window(16_000),
    );
    let runtime = Runtime::new(
        provider.clone(),
        Arc::new(reg),
        RuntimeConfig {
            max_rounds_per_segment: 50,
            ..RuntimeConfig::default()
        },
        Arc::new(HeadlessApprover::Never),
        Some(dir.path().join("scratchpad")),
        Arc::new(SystemClock),
    )
    .with_compactor(compactor);
    let sink = CollectingSink::new();
    let mut messages = vec![
        Message::user("之前的问题"),
        Message::assistant("之前的回答"),
    ];
    let outcome = runtime
        .run_turn(
            &mut messages,
            "你是威科夫分析助手。",
            "逐个分析这些股票",
            sink.clone(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(outcome, TurnOutcome::Done { .. }), "{outcome:?}");
    let events = sink.events();
    assert_one_terminal(&events);
    let compactions: Vec<&RuntimeEvent> = events
        .iter()
        .filter(|e| matches!(e, RuntimeEvent::Compaction { .. }))
        .collect();
    assert!(compactions.len() >= 2, "{} compactions", compactions.len());
    for e in &compactions {
        if let RuntimeEvent::Compaction {
            before_messages,
            after_messages,
            archive_ref,
            ..
        } = e
        {
            assert!(after_messages < before_messages);
            assert!(
                archive_ref
                    .as_deref()
                    .unwrap()
                    .starts_with("archive://long-turn/")
            );
        }
    }
    // Summaries ran out after two: later ones fell back, the turn went on.
    if compactions.len() > 2 {
        assert!(compactions.iter().any(|e| matches!(
            e,
            RuntimeEvent::Compaction {
                summary_fallback: true,
                ..
            }
        )));
    }
    // Every request the model saw was a valid conversation under the window.
    for req in provider.requests() {
        assert!(!has_orphan_results(&req.messages));
        assert_valid_conversation(&req.messages);
        assert!(!matches!(req.messages.first(), Some(Message::Tool { .. })));
    }
    let last = provider.requests().last().unwrap().clone();
    assert!(matches!(
        &last.messages[0],
        Message::User {
            origin: UserOrigin::Summary,
            ..
        }
    ));
    assert!(request_tokens(&last.system, &last.tools, &last.messages) < 16_000);
    assert_valid_conversation(&messages);
    assert!(!has_orphan_results(&messages));
    assert_eq!(
        messages.last().unwrap().text(),
        "综合结论：600000 吸筹末期，等待回踩。"
    );
    // The scratchpad recorded the compactions.
    let pad = std::fs::read_dir(dir.path().join("scratchpad"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(
        std::fs::read_to_string(pad)
            .unwrap()
            .contains("\"type\":\"compaction\"")
    );
}

#[test]
fn summary_input_keeps_the_newest_within_budget() {
    use wyckoff_agent::compaction::summary::{serialize_head, serialize_head_within};
    let mut head = vec![Message::user_with_origin(
        "[对话摘要]\n最早的摘要",
        UserOrigin::Summary,
    )];
    head.extend(long_conversation(30));
    let full = serialize_head(&head);
    let cut = serialize_head_within(&head, 3_000);
    assert!(cut.chars().count() <= 3_000 + 40, "{}", cut.chars().count());
    assert!(full.chars().count() > cut.chars().count());
    assert!(cut.starts_with("[summary] [对话摘要]\n最早的摘要\n[更早的 "));
    assert!(cut.ends_with(&*full.lines().last().unwrap().to_owned()));
    assert!(cut.contains("600029") && !cut.contains("请分析 600000"));
    assert_eq!(serialize_head_within(&head, usize::MAX), full);
    assert_eq!(wyckoff_agent::compaction::summary_input_chars(8_000), 4_000);
    assert_eq!(
        wyckoff_agent::compaction::summary_input_chars(30_000),
        10_000
    );
    assert_eq!(
        wyckoff_agent::compaction::summary_input_chars(1_000_000),
        24_000
    );
}

/// Seed §10: the scratchpad's `compaction` record holds the message lists before and
/// after, so the trace alone shows what was removed (also in the archive it names) and
/// the summary that replaced it.
#[tokio::test]
async fn the_scratchpad_shows_what_compaction_removed_and_what_replaced_it() {
    let dir = tempfile::tempdir().unwrap();
    let archive = Arc::new(FileArchive::new(dir.path().join("archive")));
    let provider = Arc::new(ScriptedProvider::new(vec![scripted::text("好的，继续。")]));
    let summarizer = Arc::new(ScriptedProvider::new(vec![scripted::text(&summary_text())]));
    let compactor = Arc::new(
        LlmCompactor::new("pad-conv")
            .with_archive(archive.clone())
            .with_summary_provider(summarizer)
            .with_context_window(8_000),
    );
    let runtime = Runtime::new(
        provider.clone(),
        Arc::new(ToolRegistry::new()),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        Some(dir.path().join("scratchpad")),
        Arc::new(SystemClock),
    )
    .with_compactor(compactor);
    let mut messages = long_conversation(12);
    let mut before_turn = messages.clone();
    before_turn.push(Message::user("接着说"));
    let outcome = runtime
        .run_turn(
            &mut messages,
            "你是威科夫分析助手。",
            "接着说",
            CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(outcome, TurnOutcome::Done { .. }), "{outcome:?}");

    let pad = std::fs::read_dir(dir.path().join("scratchpad"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let records: Vec<Value> = std::fs::read_to_string(pad)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let c = records
        .iter()
        .find(|r| r["type"] == "compaction")
        .expect("a compaction record");
    let list = |key: &str| -> Vec<Message> { serde_json::from_value(c[key].clone()).unwrap() };
    let (before, after) = (list("before"), list("after"));
    assert_eq!(before, before_turn, "the conversation as it was");
    assert_eq!(c["before_messages"], before.len());
    assert_eq!(c["after_messages"], after.len());
    // After: exactly what the model was sent, the summary first.
    assert_eq!(after, provider.requests()[0].messages);
    assert!(matches!(
        &after[0],
        Message::User { origin: UserOrigin::Summary, content } if content.contains("吸筹 C 阶段")
    ));
    assert_eq!(c["summary_fallback"], false);
    // What was removed is the head the archive reference reopens.
    let kept = after.len() - 2;
    let removed = &before[..before.len() - kept];
    assert_eq!(&after[2..], &before[before.len() - kept..]);
    let reference = c["archive_ref"].as_str().unwrap();
    assert_eq!(archive.load(reference).await.unwrap(), removed);
}
