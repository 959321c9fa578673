//! What a turn's events say about the messages it adds, kept while the turn streams so
//! each message is stored with it: a delegate call's sub-agent progress (a reopened
//! conversation's pane shows the sub-agent's tool rows, not only its final status) and a
//! background task's notice (a reopened conversation words it from its fields).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use wyckoff_agent::EventSink;
use wyckoff_protocol::{Grounding, RuntimeEvent, SubAgentStep, TaskNotice};

/// Passes every event on; keeps the `sub_agent` ones per delegate call and the
/// `task_notice` ones in order.
pub(crate) struct MessageExtras {
    inner: Arc<dyn EventSink>,
    steps: Mutex<HashMap<String, Vec<SubAgentStep>>>,
    notices: Mutex<VecDeque<TaskNotice>>,
    /// The final answer's grounding, from the `done` event.
    grounding: Mutex<Option<Grounding>>,
}

impl MessageExtras {
    pub(crate) fn new(inner: Arc<dyn EventSink>) -> Self {
        MessageExtras {
            inner,
            steps: Mutex::new(HashMap::new()),
            notices: Mutex::new(VecDeque::new()),
            grounding: Mutex::new(None),
        }
    }

    /// The grounding the turn's `done` event carried, handed over once.
    pub(crate) fn take_grounding(&self) -> Option<Grounding> {
        self.grounding.lock().ok().and_then(|mut g| g.take())
    }

    /// The notice of the next notification message: the runtime sends each notice just
    /// before it adds that message, in the same order.
    pub(crate) fn next_notice(&self) -> Option<TaskNotice> {
        self.notices.lock().ok().and_then(|mut n| n.pop_front())
    }

    /// The steps of delegate call `call_id` so far (empty for any other call), handed
    /// over once: its result message is stored with them.
    pub(crate) fn take(&self, call_id: &str) -> Vec<SubAgentStep> {
        self.steps
            .lock()
            .ok()
            .and_then(|mut s| s.remove(call_id))
            .unwrap_or_default()
    }
}

/// Adds one step: streamed text joins the text before it (one step, not one per delta);
/// `done` repeats the text the result already holds and is left out.
fn push(steps: &mut Vec<SubAgentStep>, kind: &str, text: &str) {
    match (kind, steps.last_mut()) {
        ("done", _) => {}
        ("text", Some(last)) if last.kind == "text" => last.text.push_str(text),
        _ => steps.push(SubAgentStep {
            kind: kind.to_owned(),
            text: text.to_owned(),
        }),
    }
}

impl EventSink for MessageExtras {
    fn emit(&self, event: RuntimeEvent) {
        match &event {
            RuntimeEvent::SubAgent {
                call_id,
                kind,
                text,
                ..
            } => {
                if let Ok(mut steps) = self.steps.lock() {
                    push(steps.entry(call_id.clone()).or_default(), kind, text);
                }
            }
            RuntimeEvent::TaskNotice { notice } => {
                if let Ok(mut notices) = self.notices.lock() {
                    notices.push_back(notice.clone());
                }
            }
            RuntimeEvent::Done {
                grounding: Some(g), ..
            } => {
                if let Ok(mut slot) = self.grounding.lock() {
                    *slot = Some(g.clone());
                }
            }
            _ => {}
        }
        self.inner.emit(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_agent::CollectingSink;

    fn sub(call_id: &str, kind: &str, text: &str) -> RuntimeEvent {
        RuntimeEvent::SubAgent {
            agent: "research".into(),
            call_id: call_id.into(),
            kind: kind.into(),
            text: text.into(),
        }
    }

    fn step(kind: &str, text: &str) -> SubAgentStep {
        SubAgentStep {
            kind: kind.into(),
            text: text.into(),
        }
    }

    #[test]
    fn keeps_each_calls_steps_and_passes_every_event_on() {
        let inner = Arc::new(CollectingSink::default());
        let sink = MessageExtras::new(inner.clone());
        let events = [
            sub("d1", "tool_start", "analyze_stock"),
            sub("d2", "tool_start", "portfolio"),
            sub("d1", "tool_result", "analyze_stock 12ms"),
            sub("d1", "text", "000001 "),
            sub("d1", "text", "偏弱"),
            RuntimeEvent::TextDelta { text: "x".into() },
            sub("d1", "tool_error", "update_portfolio: 无权调用"),
            sub("d1", "done", "000001 偏弱"),
        ];
        for e in events.clone() {
            sink.emit(e);
        }
        assert_eq!(inner.events(), events);
        assert_eq!(
            sink.take("d1"),
            [
                step("tool_start", "analyze_stock"),
                step("tool_result", "analyze_stock 12ms"),
                step("text", "000001 偏弱"),
                step("tool_error", "update_portfolio: 无权调用"),
            ]
        );
        assert!(sink.take("d1").is_empty(), "handed over once");
        assert_eq!(sink.take("d2"), [step("tool_start", "portfolio")]);
        assert!(sink.take("call_other").is_empty());
    }

    #[test]
    fn keeps_task_notices_in_order_and_hands_each_over_once() {
        let inner = Arc::new(CollectingSink::default());
        let sink = MessageExtras::new(inner.clone());
        let notice = |id: &str| TaskNotice {
            task_id: id.into(),
            tool_name: "screen_stocks".into(),
            display_name: "全市场扫描".into(),
            outcome: wyckoff_protocol::TaskOutcome::Completed,
            summary: None,
            error: None,
        };
        for id in ["bg_1", "bg_2"] {
            sink.emit(RuntimeEvent::TaskNotice { notice: notice(id) });
        }
        assert_eq!(inner.events().len(), 2, "passed on");
        assert_eq!(sink.next_notice(), Some(notice("bg_1")));
        assert_eq!(sink.next_notice(), Some(notice("bg_2")));
        assert_eq!(sink.next_notice(), None);
    }
}
