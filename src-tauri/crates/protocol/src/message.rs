use serde::{Deserialize, Serialize};
use serde_json::Value;
use specta::Type;

/// Why a user-role message exists. The model sees all of them as user turns, but the
/// runtime treats them differently (the loop guard ignores notifications, compaction
/// never mistakes a summary for a request, retries are dropped when the turn ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum UserOrigin {
    #[default]
    User,
    /// Injected by the runtime (e.g. a background task finished); not user input.
    SystemNotification,
    /// A corrective instruction from the loop guard; removed when the turn ends.
    InternalRetry,
    /// The compaction summary that replaced older messages.
    Summary,
}

impl UserOrigin {
    fn is_user(&self) -> bool {
        matches!(self, UserOrigin::User)
    }
}

/// A user message a skill wrote: what the user typed and which skill expanded it. Stored
/// beside the message (whose content is the expansion the model got), so a reopened
/// conversation shows what was typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SkillUse {
    pub name: String,
    /// A built-in skill rather than a file in the skills folder.
    pub builtin: bool,
    pub typed: String,
}

/// One step of a delegated sub-agent's progress, as its `sub_agent` event carried it
/// (kind: text | tool_round | tool_start | tool_result | tool_error | failed | retry |
/// warning; `done`, which repeats the result, is not kept). Stored
/// beside the delegate call's result, so a reopened conversation's pane shows the
/// sub-agent's tool rows as they were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SubAgentStep {
    pub kind: String,
    pub text: String,
}

/// A provider-neutral chat message. Providers translate these both ways.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        content: String,
        #[serde(default, skip_serializing_if = "UserOrigin::is_user")]
        origin: UserOrigin,
    },
    Assistant {
        #[serde(default)]
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// Reasoning text (DeepSeek/Kimi `reasoning_content`, Claude thinking, Gemini
        /// thoughts). Some vendors require it to be sent back on later turns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// Opaque signature that vouches for `reasoning` (Claude thinking blocks).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_signature: Option<String>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        /// The serialized result, exactly as the model sees it.
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl Message {
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
            origin: UserOrigin::User,
        }
    }

    pub fn user_with_origin(content: impl Into<String>, origin: UserOrigin) -> Self {
        Message::User {
            content: content.into(),
            origin,
        }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Message::Assistant {
            content: content.into(),
            tool_calls: Vec::new(),
            reasoning: None,
            reasoning_signature: None,
        }
    }

    pub fn tool_result(call: &ToolCall, content: impl Into<String>, is_error: bool) -> Self {
        Message::Tool {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            content: content.into(),
            is_error,
        }
    }

    /// The visible text of the message (tool results included).
    pub fn text(&self) -> &str {
        match self {
            Message::User { content, .. }
            | Message::Assistant { content, .. }
            | Message::Tool { content, .. } => content,
        }
    }

    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            Message::Assistant { tool_calls, .. } => tool_calls,
            _ => &[],
        }
    }
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Parsed JSON arguments. `Value::Null` when `args_error` is set.
    pub args: Value,
    /// Set when the model's argument text was not valid JSON: the parse error and the
    /// raw text, so the runtime can hand the model a precise error to correct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_error: Option<String>,
    /// Gemini thought signature (base64), echoed back on later turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            args,
            args_error: None,
            thought_signature: None,
        }
    }
}

/// A provider-neutral tool definition (JSON Schema parameters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_are_tagged_by_role() {
        let m = Message::user("hi");
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"role":"user","content":"hi"})
        );
        let n = Message::user_with_origin("done", UserOrigin::SystemNotification);
        assert_eq!(
            serde_json::to_value(&n).unwrap(),
            json!({"role":"user","content":"done","origin":"system_notification"})
        );
        let call = ToolCall::new("c1", "analyze_stock", json!({"code":"000001"}));
        let t = Message::tool_result(&call, "{}", false);
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"role":"tool","tool_call_id":"c1","name":"analyze_stock","content":"{}"})
        );
    }

    #[test]
    fn assistant_round_trips_with_calls_and_reasoning() {
        let m = Message::Assistant {
            content: String::new(),
            tool_calls: vec![ToolCall::new("a", "portfolio", json!({"mode":"view"}))],
            reasoning: Some("think".into()),
            reasoning_signature: None,
        };
        let s = serde_json::to_string(&m).unwrap();
        let back: Message = serde_json::from_str(&s).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.tool_calls().len(), 1);
    }
}
