//! Parsing a 10,000-chunk OpenAI-format SSE stream into StreamChunks (target: < 5 µs
//! per chunk on the 2-core dev machine). Criterion reports the time per stream and,
//! through `Throughput::Elements`, chunks per second; µs/chunk = time / 10,000.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use wyckoff_llm::{OpenAiDecoder, StreamChunk, decode_all};

const CHUNKS: usize = 10_000;

/// A realistic stream: text deltas, a tool call in fragments, usage, `[DONE]`.
fn stream_bytes() -> Vec<u8> {
    let mut s = String::with_capacity(CHUNKS * 200);
    let text_chunks = CHUNKS - 1_003;
    for i in 0..text_chunks {
        let piece = if i % 3 == 0 {
            "积累阶段的"
        } else {
            " volume spread "
        };
        s.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"deepseek-chat\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{piece}\"}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    s.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"analyze_stock\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n");
    for i in 0..1_000 {
        let frag = if i == 0 {
            "{\\\"code\\\":\\\""
        } else if i == 999 {
            "\\\"}"
        } else {
            "6"
        };
        s.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{frag}\"}}}}]}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    s.push_str(
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    );
    s.push_str("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":9000,\"prompt_cache_hit_tokens\":800}}\n\n");
    s.push_str("data: [DONE]\n\n");
    s.into_bytes()
}

fn bench(c: &mut Criterion) {
    let bytes = stream_bytes();
    // Network reads rarely align with events: feed in 1,460-byte pieces (one TCP segment).
    let pieces: Vec<&[u8]> = bytes.chunks(1460).collect();

    // Sanity: the stream decodes to what it should.
    let out =
        decode_all(OpenAiDecoder::new("bench", None), pieces.iter().copied()).unwrap_or_default();
    let texts = out
        .iter()
        .filter(|c| matches!(c, StreamChunk::TextDelta(_)))
        .count();
    assert_eq!(texts, CHUNKS - 1_003, "bench stream did not decode");
    assert!(out.iter().any(|c| matches!(c, StreamChunk::ToolCalls(calls) if calls.len() == 1 && calls[0].args_error.is_none())));

    let mut group = c.benchmark_group("sse_parse");
    group.throughput(Throughput::Elements(CHUNKS as u64));
    group.sample_size(30);
    group.bench_function("openai_10k_chunks", |b| {
        b.iter(|| {
            let out = decode_all(OpenAiDecoder::new("bench", None), pieces.iter().copied());
            black_box(out)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
