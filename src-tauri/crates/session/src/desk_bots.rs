//! The chat bots' door to the desk. A bot front end (`wyckoff-bot`) speaks its platform;
//! everything that decides or stores is here: nothing from a chat reaches the model
//! until the owner paired its sender; each sender has a daily token budget and a rate
//! limit; a bot's conversations run unattended with no writer offered, so a writer's
//! call waits in the approval inbox for the owner (or a sender the owner marked approver,
//! with the request's one-time code); every inbound message, pairing and decision is in
//! the audit log, secrets masked.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use wyckoff_config::BotSecret;
use wyckoff_protocol::{Decider, DeskEvent, InboxStatus, RuntimeEvent};

use crate::approvals::Answer;
use crate::bot_store::{
    Allowance, BotAuditLine, BotError, BotInfo, BotKind, BotStore, PairedSender, PendingPairing,
    allowance, mask,
};
use crate::{Attendance, Desk, SessionError};

/// How long a decision from a chat waits for the conversation's answer to it.
const FOLLOW_UP_WAIT: std::time::Duration = std::time::Duration::from_secs(180);

/// One message from a chat, as the platform gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    pub bot: String,
    /// The platform's update id: a message is handled once whatever is redelivered.
    pub update_id: i64,
    pub chat_id: String,
    /// A group chat: its senders are paired and answered one by one.
    pub group: bool,
    pub sender_id: String,
    /// The sender's name as the platform shows it (for the owner's pairing list).
    pub sender_label: String,
    pub text: String,
}

/// What becomes of an inbound message before any model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Seen before (a redelivery): nothing is answered.
    Duplicate,
    /// An unknown sender: this code (new or still waiting) is all it gets.
    Pairing(PendingPairing),
    /// An unknown sender while the bot has as many codes waiting as it may: no answer.
    PairingFull,
    /// A paired sender.
    Paired(PairedSender),
}

/// An approval request a bot's turn queued, with its one-time code for an approver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotApprovalAsk {
    pub request_id: String,
    pub display_name: String,
    pub code: String,
}

/// What to send back for a message that went to the model (or was stopped by a limit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BotAnswer {
    /// The turn's answer: its tool calls one line each, then the model's text.
    Answer {
        conversation_id: String,
        tool_lines: Vec<String>,
        text: String,
        approvals: Vec<BotApprovalAsk>,
    },
    /// The day's tokens are spent.
    BudgetSpent { used: i64, budget: i64 },
    /// Too many messages this minute.
    RateLimited { limit: i64 },
    /// The turn could not run or failed; said as it is.
    Failed { message: String },
}

/// A bot with what the owner sees of it (the token's presence, never its value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotSummary {
    #[serde(flatten)]
    pub bot: BotInfo,
    pub token_set: bool,
    pub senders: Vec<PairedSender>,
}

impl Desk {
    fn bots(&self) -> &BotStore {
        &self.services().bots
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock().now()
    }

    async fn bot_audit(
        &self,
        bot: &str,
        kind: &str,
        sender: Option<&str>,
        chat: Option<&str>,
        detail: &str,
    ) -> Result<(), SessionError> {
        let token = self.bot_token(bot);
        // App credentials are kept as `ID:SECRET` (a Telegram token is shaped alike): the
        // part after the colon is masked on its own too.
        let secrets: Vec<&str> = token
            .as_deref()
            .into_iter()
            .flat_map(|t| std::iter::once(t).chain(t.split_once(':').map(|(_, s)| s)))
            .collect();
        self.bots()
            .audit(self.now(), bot, kind, sender, chat, &mask(detail, &secrets))
            .await?;
        Ok(())
    }

    /// Adds a bot (its token goes to the keychain with [`Desk::set_bot_token`]).
    pub async fn bot_add(
        &self,
        name: &str,
        kind: BotKind,
        api_url: Option<&str>,
        daily_tokens: Option<i64>,
        per_minute: Option<i64>,
    ) -> Result<BotInfo, SessionError> {
        let bot = self
            .bots()
            .add(
                name,
                kind,
                api_url,
                daily_tokens.unwrap_or(crate::bot_store::DEFAULT_DAILY_TOKENS),
                per_minute.unwrap_or(crate::bot_store::DEFAULT_PER_MINUTE),
                self.now(),
            )
            .await?;
        self.bot_audit(name, "added", None, None, kind.as_str())
            .await?;
        Ok(bot)
    }

    pub async fn bot(&self, name: &str) -> Result<BotInfo, SessionError> {
        Ok(self.bots().get(name).await?)
    }

    pub async fn bot_list(&self) -> Result<Vec<BotSummary>, SessionError> {
        let mut out = Vec::new();
        for bot in self.bots().list().await? {
            let senders = self.bots().senders(&bot.name).await?;
            out.push(BotSummary {
                token_set: self.bot_token(&bot.name).is_some(),
                bot,
                senders,
            });
        }
        Ok(out)
    }

    /// Removes the bot, its senders and its token (its conversations stay).
    pub async fn bot_remove(&self, name: &str) -> Result<(), SessionError> {
        self.bots().remove(name).await?;
        if let Err(e) = self
            .services()
            .secrets
            .delete_bot(&BotSecret(name.to_owned()))
        {
            tracing::warn!(bot = %name, "the bot's token was not removed from the keychain: {e}");
        }
        self.bot_audit(name, "removed", None, None, "").await
    }

    /// Stores the bot's token in the keychain.
    pub async fn set_bot_token(&self, name: &str, token: &str) -> Result<(), SessionError> {
        self.bots().get(name).await?;
        self.services()
            .secrets
            .set_bot(&BotSecret(name.to_owned()), token)
            .map_err(|e| SessionError::InvalidOption(e.to_string()))?;
        self.bot_audit(name, "token_set", None, None, "").await
    }

    /// The bot's token: `WYCKOFF_BOT_TOKEN_<NAME>`, else the keychain.
    pub fn bot_token(&self, name: &str) -> Option<String> {
        self.services()
            .secrets
            .get_bot(&BotSecret(name.to_owned()))
            .map(|(v, _)| v.expose().to_owned())
    }

    /// Pairing codes waiting for the owner now.
    pub async fn bot_pending_pairings(&self) -> Result<Vec<PendingPairing>, SessionError> {
        Ok(self.bots().pending_pairings(None, self.now()).await?)
    }

    /// The owner approves a pairing code: its sender may talk to its bot from now on.
    pub async fn bot_pair(&self, code: &str) -> Result<PairedSender, SessionError> {
        let sender = self.bots().pair(code, self.now()).await?;
        self.bot_audit(
            &sender.bot,
            "paired",
            Some(&sender.sender_id),
            None,
            &format!("by the owner: {}", sender.label),
        )
        .await?;
        Ok(sender)
    }

    /// The owner lets a paired sender decide approval requests from the chat (or not).
    pub async fn bot_set_approver(
        &self,
        bot: &str,
        sender: &str,
        approver: bool,
    ) -> Result<(), SessionError> {
        self.bots().set_approver(bot, sender, approver).await?;
        let kind = if approver {
            "approver_on"
        } else {
            "approver_off"
        };
        self.bot_audit(bot, kind, Some(sender), None, "by the owner")
            .await
    }

    pub async fn bot_unpair(&self, bot: &str, sender: &str) -> Result<(), SessionError> {
        self.bots().unpair(bot, sender).await?;
        self.bot_audit(bot, "unpaired", Some(sender), None, "by the owner")
            .await
    }

    /// The bots' audit log, oldest first.
    pub async fn bot_audit_log(&self) -> Result<Vec<BotAuditLine>, SessionError> {
        Ok(self.bots().audit_log().await?)
    }

    /// The update id to ask the platform for next (every earlier one was seen).
    pub async fn bot_next_update(&self, name: &str) -> Result<i64, SessionError> {
        Ok(self.bots().get(name).await?.next_update)
    }

    /// An update with no message in it (an edit, a join): seen, nothing to answer.
    pub async fn bot_skip_update(&self, bot: &str, update_id: i64) -> Result<(), SessionError> {
        self.bots()
            .see_update(bot, update_id, "", self.now())
            .await?;
        Ok(())
    }

    /// The first gate of every inbound message: recorded once (a redelivery is a
    /// duplicate), audited (masked), and let on only for a paired sender. An unknown
    /// sender gets a pairing code and nothing else; in a group the sender is judged, never
    /// the chat.
    pub async fn bot_admit(&self, msg: &Inbound) -> Result<Admission, SessionError> {
        let now = self.now();
        if !self
            .bots()
            .see_update(&msg.bot, msg.update_id, &msg.sender_id, now)
            .await?
        {
            return Ok(Admission::Duplicate);
        }
        self.bot_audit(
            &msg.bot,
            "inbound",
            Some(&msg.sender_id),
            Some(&msg.chat_id),
            &msg.text,
        )
        .await?;
        if let Some(sender) = self.bots().sender(&msg.bot, &msg.sender_id).await? {
            return Ok(Admission::Paired(sender));
        }
        match self
            .bots()
            .pairing_code(
                &msg.bot,
                &msg.sender_id,
                &msg.chat_id,
                &msg.sender_label,
                now,
            )
            .await?
        {
            Some((pairing, fresh)) => {
                if fresh {
                    self.bot_audit(
                        &msg.bot,
                        "pairing_code",
                        Some(&msg.sender_id),
                        Some(&msg.chat_id),
                        &format!("code issued to {}", msg.sender_label),
                    )
                    .await?;
                }
                Ok(Admission::Pairing(pairing))
            }
            None => {
                self.bot_audit(
                    &msg.bot,
                    "pairing_refused",
                    Some(&msg.sender_id),
                    Some(&msg.chat_id),
                    "too many pairing codes waiting",
                )
                .await?;
                Ok(Admission::PairingFull)
            }
        }
    }

    /// The chat's conversation (per sender in a group), if it has one.
    async fn bot_conversation(&self, msg: &Inbound) -> Result<Option<String>, BotError> {
        self.bots()
            .chat_conversation(&msg.bot, &msg.chat_id, &chat_sender(msg))
            .await
    }

    /// `/new`: the chat's next message starts a fresh conversation (the old one stays).
    pub async fn bot_new_conversation(&self, msg: &Inbound) -> Result<(), SessionError> {
        let sender = self.paired(msg).await?;
        let kind = self.bots().get(&msg.bot).await?.kind;
        let id = self.create_bot_conversation(msg, kind, &sender).await?;
        self.bot_audit(
            &msg.bot,
            "new_conversation",
            Some(&msg.sender_id),
            Some(&msg.chat_id),
            &id,
        )
        .await
    }

    async fn paired(&self, msg: &Inbound) -> Result<PairedSender, SessionError> {
        self.bots()
            .sender(&msg.bot, &msg.sender_id)
            .await?
            .ok_or_else(|| {
                SessionError::Bots(BotError::UnknownSender {
                    bot: msg.bot.clone(),
                    sender: msg.sender_id.clone(),
                })
            })
    }

    async fn create_bot_conversation(
        &self,
        msg: &Inbound,
        kind: BotKind,
        sender: &PairedSender,
    ) -> Result<String, SessionError> {
        let model = self.services().check_model(self.hub().overrides())?;
        let title = format!("{} · {} · {}", kind.as_str(), msg.bot, sender.label);
        let conversation = self
            .services()
            .conversations()
            .create(&title, &model)
            .await?;
        self.bots()
            .set_chat_conversation(&msg.bot, &msg.chat_id, &chat_sender(msg), &conversation.id)
            .await?;
        Ok(conversation.id)
    }

    /// Runs `prompt` for a paired sender in the chat's conversation, through the same
    /// pipeline as a typed message, unattended (a writer's call waits in the inbox), after
    /// the sender's budget and rate limit allow it. Its tokens count against the budget.
    pub async fn bot_ask(&self, msg: &Inbound, prompt: &str) -> Result<BotAnswer, SessionError> {
        let sender = self.paired(msg).await?;
        let bot = self.bots().get(&msg.bot).await?;
        let now = self.now();
        let day = wyckoff_time::beijing::beijing_date(now);
        let used = self
            .bots()
            .tokens_on(&bot.name, &msg.sender_id, &day)
            .await?;
        let sent = self
            .bots()
            .admitted_since(
                &bot.name,
                &msg.sender_id,
                now - chrono::Duration::minutes(1),
            )
            .await?;
        match allowance(used, bot.daily_tokens, sent, bot.per_minute) {
            Allowance::Go => {}
            Allowance::BudgetSpent { used, budget } => {
                self.bot_audit(
                    &bot.name,
                    "budget_spent",
                    Some(&msg.sender_id),
                    Some(&msg.chat_id),
                    &format!("{used} of {budget} tokens today"),
                )
                .await?;
                return Ok(BotAnswer::BudgetSpent { used, budget });
            }
            Allowance::RateLimited { limit, .. } => {
                self.bot_audit(
                    &bot.name,
                    "rate_limited",
                    Some(&msg.sender_id),
                    Some(&msg.chat_id),
                    &format!("{limit} messages a minute"),
                )
                .await?;
                return Ok(BotAnswer::RateLimited { limit });
            }
        }
        self.bots().mark_admitted(&bot.name, msg.update_id).await?;
        let conversation = match self.bot_conversation(msg).await? {
            Some(id) => id,
            None => match self.create_bot_conversation(msg, bot.kind, &sender).await {
                Ok(id) => id,
                Err(e) => {
                    return Ok(BotAnswer::Failed {
                        message: e.to_string(),
                    });
                }
            },
        };
        let mut events = self.subscribe();
        let requested_by = format!("bot:{}", bot.name);
        let started = match self
            .hub()
            .start_turn_as(
                Some(&conversation),
                prompt,
                Some(requested_by.clone()),
                Attendance::Unattended {
                    requested_by: requested_by.clone(),
                },
            )
            .await
        {
            Ok(s) => s,
            Err(e) => {
                return Ok(BotAnswer::Failed {
                    message: e.to_string(),
                });
            }
        };
        let turn = started.meta.turn;
        let end = started.end.await.map_err(|_| {
            SessionError::InvalidOption("the turn ended without its outcome".into())
        })?;
        let mut tool_lines = Vec::new();
        // Background tasks this turn started, and completions it answered itself (the
        // chat gets those in this answer; the others once they finish).
        let (mut tasks_started, mut tasks_answered) = (Vec::new(), Vec::new());
        while let Ok(event) = events.try_recv() {
            if let DeskEvent::Turn {
                conversation_id,
                turn: t,
                event,
                ..
            } = event
                && conversation_id == conversation
                && t == turn
            {
                match &event {
                    RuntimeEvent::BackgroundTask { task } if !task.status.is_finished() => {
                        tasks_started.push(task.task_id.clone());
                    }
                    RuntimeEvent::TaskNotice { notice } => {
                        tasks_answered.push(notice.task_id.clone());
                    }
                    _ => {}
                }
                if let Some(line) = tool_line(&event) {
                    tool_lines.push(line);
                }
            }
        }
        tasks_started.dedup();
        self.bot_tasks_started(
            &bot.name,
            &msg.chat_id,
            &conversation,
            &tasks_started,
            &tasks_answered,
        )
        .await?;
        let text = match end.outcome {
            wyckoff_agent::TurnOutcome::Done { text, usage, .. } => {
                let tokens = i64::from(usage.input_tokens) + i64::from(usage.output_tokens);
                self.bots()
                    .add_tokens(&bot.name, &msg.sender_id, &day, tokens)
                    .await?;
                text
            }
            wyckoff_agent::TurnOutcome::Cancelled => {
                return Ok(BotAnswer::Failed {
                    message: "the turn was cancelled".into(),
                });
            }
            wyckoff_agent::TurnOutcome::Failed { message, .. } => {
                return Ok(BotAnswer::Failed { message });
            }
        };
        let mut approvals = Vec::new();
        for request in self.services().inbox().list(self.now()).await? {
            if request.conversation_id != conversation
                || request.status != InboxStatus::Pending
                || request.requested_by != requested_by
            {
                continue;
            }
            let (code, fresh) = self
                .bots()
                .approval_code(&request.id, &bot.name, &msg.chat_id, self.now())
                .await?;
            if fresh {
                approvals.push(BotApprovalAsk {
                    request_id: request.id,
                    display_name: request.display_name,
                    code,
                });
            }
        }
        Ok(BotAnswer::Answer {
            conversation_id: conversation,
            tool_lines,
            text,
            approvals,
        })
    }

    /// `/approve ID CODE`, `/deny ID CODE` from a chat: only a paired sender the owner
    /// marked approver, with the request's one-time code (used once), decides; anyone else
    /// is refused and the attempt audited. The decision goes the inbox's one way (stored,
    /// audited, the allowed call run, the conversation told). What to tell the chat.
    pub async fn bot_decide(
        &self,
        msg: &Inbound,
        request_id: &str,
        code: Option<&str>,
        allow: bool,
    ) -> Result<String, SessionError> {
        let verb = if allow { "approve" } else { "deny" };
        let sender = self.paired(msg).await?;
        if !sender.approver {
            self.bot_audit(
                &msg.bot,
                "decision_refused",
                Some(&msg.sender_id),
                Some(&msg.chat_id),
                &format!("{verb} {request_id}: not an approver"),
            )
            .await?;
            return Ok("只有主人指定的审批人可以在聊天里审批；请在桌面端或命令行处理。".into());
        }
        let code_ok = match code {
            Some(code) => {
                self.bots()
                    .use_approval_code(request_id, &msg.bot, code, self.now())
                    .await?
            }
            None => false,
        };
        if !code_ok {
            self.bot_audit(
                &msg.bot,
                "decision_refused",
                Some(&msg.sender_id),
                Some(&msg.chat_id),
                &format!("{verb} {request_id}: wrong or used code"),
            )
            .await?;
            return Ok(format!(
                "审批码不对或已用过：请用 /{verb} {request_id} 加上请求附带的一次性审批码。"
            ));
        }
        let answer = if allow { Answer::Allow } else { Answer::Deny };
        let by = Decider::Bot {
            bot: msg.bot.clone(),
            sender: msg.sender_id.clone(),
            label: sender.label.clone(),
        };
        let decided =
            crate::approvals::answer(self.hub(), request_id, answer, by, None, self.now()).await;
        if decided.is_ok() {
            // Decided in this chat: the reply below tells it, not a later follow-up.
            self.bot_follow_up_sent(request_id).await?;
        }
        let line = match &decided {
            Ok(d) => format!("{request_id}: {:?}", d.request.status),
            Err(e) => format!("{request_id}: {e}"),
        };
        self.bot_audit(
            &msg.bot,
            "decision",
            Some(&msg.sender_id),
            Some(&msg.chat_id),
            &format!("{verb} {line}"),
        )
        .await?;
        let d = match decided {
            Ok(d) => d,
            Err(e) => return Ok(format!("{request_id} 未处理：{e}")),
        };
        let mut reply = match d.request.status {
            InboxStatus::Allowed if d.failed => format!("已批准 {request_id}，但执行失败。"),
            InboxStatus::Allowed => format!("已批准 {request_id}，已执行。"),
            InboxStatus::Denied => format!("已拒绝 {request_id}。"),
            InboxStatus::Expired => format!("{request_id} 已过期，未执行。"),
            InboxStatus::Pending => format!("{request_id} 仍在等待。"),
        };
        // The conversation is told in a follow-up turn; its answer goes to the chat too.
        if let Some(turn) = d.follow_up
            && let Ok(Ok(end)) = tokio::time::timeout(FOLLOW_UP_WAIT, turn.end).await
            && let wyckoff_agent::TurnOutcome::Done { text, usage, .. } = end.outcome
        {
            let day = wyckoff_time::beijing::beijing_date(self.now());
            let tokens = i64::from(usage.input_tokens) + i64::from(usage.output_tokens);
            self.bots()
                .add_tokens(&msg.bot, &msg.sender_id, &day, tokens)
                .await?;
            if !text.trim().is_empty() {
                reply = format!("{reply}\n\n{}", text.trim());
            }
        }
        Ok(reply)
    }
}

/// Whose conversation a message belongs to: the chat's in a private chat, the sender's
/// own within a group.
fn chat_sender(msg: &Inbound) -> String {
    if msg.group {
        msg.sender_id.clone()
    } else {
        String::new()
    }
}

/// A tool card reduced to one line.
fn tool_line(event: &RuntimeEvent) -> Option<String> {
    match event {
        // The approval gate's own result, not any result that mentions the word.
        RuntimeEvent::ToolResult { name, result, .. }
            if result.get("status").and_then(serde_json::Value::as_str)
                == Some("waiting_for_approval") =>
        {
            Some(format!("⏳ {name}: 等待审批"))
        }
        RuntimeEvent::ToolResult {
            name, elapsed_ms, ..
        } => Some(format!("🔧 {name} ✓ ({elapsed_ms} ms)")),
        RuntimeEvent::ToolError { name, .. } => Some(format!("🔧 {name} ✗")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_card_is_one_line() {
        let result = |name: &str, result: serde_json::Value| RuntimeEvent::ToolResult {
            id: "c1".into(),
            name: name.into(),
            elapsed_ms: 12,
            result,
        };
        let queued = json!({
            "status": "waiting_for_approval",
            "request_id": "r1",
            "expires_at": "2026-12-07T12:00:00Z",
            "message": "操作 [update_portfolio] 需要用户批准"
        });
        let cases = [
            (
                result("analyze_stock", json!({"code": "000001", "phase": "吸筹"})),
                Some("🔧 analyze_stock ✓ (12 ms)"),
            ),
            (
                result("update_portfolio", queued),
                Some("⏳ update_portfolio: 等待审批"),
            ),
            // A result that only mentions the word has run: it is not waiting.
            (
                result(
                    "read_file",
                    json!({"content": "status: waiting_for_approval"}),
                ),
                Some("🔧 read_file ✓ (12 ms)"),
            ),
            (
                RuntimeEvent::ToolError {
                    id: "c2".into(),
                    name: "get_quote".into(),
                    error: "timeout".into(),
                },
                Some("🔧 get_quote ✗"),
            ),
            (
                RuntimeEvent::TextDelta {
                    text: "🔧 not a tool".into(),
                },
                None,
            ),
        ];
        for (event, want) in cases {
            assert_eq!(tool_line(&event).as_deref(), want, "{event:?}");
        }
    }
}
