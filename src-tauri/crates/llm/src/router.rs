//! Heavy/light model routing (seed §12): cheap model for simple turns, the main model
//! for analysis and synthesis. Conservative: when in doubt, heavy.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use regex::Regex;
use wyckoff_protocol::{Message, Tier, UserOrigin};

use crate::{ChatRequest, ChunkStream, LlmError, Provider, Serving};

/// User messages longer than this (in characters) go to the heavy model.
pub const LONG_MESSAGE_CHARS: usize = 80;

static ANALYSIS_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)分析|诊断|策略|研报|决策|回测|漏斗|筛选|持仓|复盘|analy[sz]e|diagnos|strategy|backtest|screen|funnel|portfolio",
    )
    .ok()
});

/// The runtime appends the current Beijing time to user messages; it is not part of
/// what the user asked and must not make short messages look long.
fn strip_time_marker(text: &str) -> &str {
    match text.find("[当前北京时间：") {
        Some(i) => text[..i].trim_end(),
        None => text,
    }
}

/// Which tier should answer the next model call of this conversation.
///
/// Heavy when: there are no messages; there is no user request; two or more tool
/// results of the current turn (since the last user request) await synthesis; the
/// request mentions analysis work; or it is longer than 80 characters. Light otherwise.
pub fn classify_turn(messages: &[Message]) -> Tier {
    let start = messages.iter().rposition(|m| {
        matches!(
            m,
            Message::User {
                origin: UserOrigin::User | UserOrigin::SystemNotification,
                ..
            }
        )
    });
    let Some(start) = start else {
        return Tier::Heavy;
    };
    let tool_results = messages[start + 1..]
        .iter()
        .filter(|m| matches!(m, Message::Tool { .. }))
        .count();
    if tool_results >= 2 {
        return Tier::Heavy;
    }
    let text = strip_time_marker(messages[start].text());
    // A broken regex would be a bug; failing towards heavy keeps answers good.
    let analysis = ANALYSIS_RE.as_ref().is_none_or(|re| re.is_match(text));
    if analysis || text.chars().count() > LONG_MESSAGE_CHARS {
        return Tier::Heavy;
    }
    Tier::Light
}

const NONE: u8 = 0;
const HEAVY: u8 = 1;
const LIGHT: u8 = 2;

pub struct RoutingProvider {
    heavy: Arc<dyn Provider>,
    light: Arc<dyn Provider>,
    last: AtomicU8,
}

impl RoutingProvider {
    pub fn new(heavy: Arc<dyn Provider>, light: Arc<dyn Provider>) -> Self {
        RoutingProvider {
            heavy,
            light,
            last: AtomicU8::new(NONE),
        }
    }

    /// Without a light model there is no router: the heavy model serves every turn.
    pub fn route(heavy: Arc<dyn Provider>, light: Option<Arc<dyn Provider>>) -> Arc<dyn Provider> {
        match light {
            Some(light) => Arc::new(RoutingProvider::new(heavy, light)),
            None => heavy,
        }
    }

    fn pick(&self, tier: Tier) -> (u8, &Arc<dyn Provider>) {
        match tier {
            Tier::Heavy => (HEAVY, &self.heavy),
            Tier::Light => (LIGHT, &self.light),
        }
    }

    fn current(&self) -> &Arc<dyn Provider> {
        if self.last.load(Ordering::Relaxed) == LIGHT {
            &self.light
        } else {
            &self.heavy
        }
    }
}

#[async_trait]
impl Provider for RoutingProvider {
    fn name(&self) -> &str {
        self.current().name()
    }

    fn model(&self) -> &str {
        self.current().model()
    }

    /// The smaller window: the same conversation may go to either model.
    fn context_window(&self) -> u32 {
        self.heavy.context_window().min(self.light.context_window())
    }

    fn last_tier(&self) -> Option<Tier> {
        match self.last.load(Ordering::Relaxed) {
            HEAVY => Some(Tier::Heavy),
            LIGHT => Some(Tier::Light),
            _ => None,
        }
    }

    fn serving(&self, req: &ChatRequest) -> Serving {
        let tier = classify_turn(&req.messages);
        let (_, provider) = self.pick(tier);
        Serving {
            tier: Some(tier),
            ..provider.serving(req)
        }
    }

    async fn stream(&self, req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        let tier = classify_turn(&req.messages);
        let (code, provider) = self.pick(tier);
        self.last.store(code, Ordering::Relaxed);
        tracing::debug!(
            ?tier,
            provider = provider.name(),
            model = provider.model(),
            "routed turn"
        );
        provider.stream(req).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_protocol::ToolCall;

    fn tool(id: &str) -> Message {
        Message::tool_result(&ToolCall::new(id, "t", serde_json::json!({})), "{}", false)
    }

    fn call_msg(n: usize) -> Message {
        Message::Assistant {
            content: String::new(),
            tool_calls: (0..n)
                .map(|i| ToolCall::new(format!("c{i}"), "t", serde_json::json!({})))
                .collect(),
            reasoning: None,
            reasoning_signature: None,
        }
    }

    #[test]
    fn classification_table() {
        use Tier::{Heavy, Light};
        let long = "x".repeat(81);
        let exactly_80 = "好".repeat(80);
        let cases: Vec<(&str, Vec<Message>, Tier)> = vec![
            ("no messages", vec![], Heavy),
            ("no user message", vec![Message::assistant("hi")], Heavy),
            ("short chat", vec![Message::user("好的")], Light),
            ("continue", vec![Message::user("继续")], Light),
            ("keyword zh", vec![Message::user("帮我分析一下茅台")], Heavy),
            ("keyword 持仓", vec![Message::user("看看持仓")], Heavy),
            ("keyword 复盘", vec![Message::user("今天复盘")], Heavy),
            ("keyword en", vec![Message::user("Backtest it")], Heavy),
            (
                "keyword screen",
                vec![Message::user("screen stocks")],
                Heavy,
            ),
            ("long", vec![Message::user(long.clone())], Heavy),
            (
                "80 chars is not long",
                vec![Message::user(exactly_80.clone())],
                Light,
            ),
            (
                "time marker does not count",
                vec![Message::user(
                    "好的\n\n[当前北京时间：2026-01-05 10:00（星期一，UTC+8）] and a lot more padding to pass eighty chars",
                )],
                Light,
            ),
            (
                "two tool results this turn",
                vec![Message::user("好的"), call_msg(2), tool("c0"), tool("c1")],
                Heavy,
            ),
            (
                "one tool result this turn",
                vec![Message::user("好的"), call_msg(1), tool("c0")],
                Light,
            ),
            (
                "tool results of earlier turns do not count",
                vec![
                    Message::user("好的"),
                    call_msg(2),
                    tool("c0"),
                    tool("c1"),
                    Message::assistant("done"),
                    Message::user("谢谢"),
                ],
                Light,
            ),
            (
                "internal retry stays in the turn",
                vec![
                    Message::user("好的"),
                    call_msg(1),
                    tool("c0"),
                    Message::user_with_origin("please call a tool", UserOrigin::InternalRetry),
                    call_msg(1),
                    tool("c1"),
                ],
                Heavy,
            ),
            (
                "summary is not a request",
                vec![Message::user_with_origin("summary", UserOrigin::Summary)],
                Heavy,
            ),
        ];
        for (name, msgs, expected) in cases {
            assert_eq!(classify_turn(&msgs), expected, "{name}");
        }
    }
}
