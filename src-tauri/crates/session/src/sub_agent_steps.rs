//! A delegate call's sub-agent progress, kept while the turn streams it so the call's
//! result is stored with it: a reopened conversation's pane shows the sub-agent's tool
//! rows, not only its final status.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use wyckoff_agent::EventSink;
use wyckoff_protocol::{RuntimeEvent, SubAgentStep};

/// Passes every event on and keeps the `sub_agent` ones per delegate call.
pub(crate) struct SubAgentSteps {
    inner: Arc<dyn EventSink>,
    steps: Mutex<HashMap<String, Vec<SubAgentStep>>>,
}

impl SubAgentSteps {
    pub(crate) fn new(inner: Arc<dyn EventSink>) -> Self {
        SubAgentSteps {
            inner,
            steps: Mutex::new(HashMap::new()),
        }
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

impl EventSink for SubAgentSteps {
    fn emit(&self, event: RuntimeEvent) {
        if let RuntimeEvent::SubAgent {
            call_id,
            kind,
            text,
            ..
        } = &event
            && let Ok(mut steps) = self.steps.lock()
        {
            push(steps.entry(call_id.clone()).or_default(), kind, text);
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
        let sink = SubAgentSteps::new(inner.clone());
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
}
