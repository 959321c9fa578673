//! Who serves a chat bot, and what its chat is told of decisions made elsewhere.
//!
//! A platform hands each update to one poller, so one process serves a bot: the app
//! while it is open and the daemon (or `wyckoff bot run`) share one data home, and the
//! first to take a bot's lease serves it. The other stands by and takes over when the
//! holder stops or dies (a process is alive while it holds its `run/<owner>.lock`, the
//! test every other lease of the desk uses). Nothing is handed over while a holder lives.
//!
//! A bot's approval request decided in the app, the CLI or by expiry is told to its chat
//! by the process serving the bot, once: the verdict with the call's result in one line,
//! then the conversation's follow-up answer when it has one. A background task a bot's
//! turn started (a screen, a backtest, a report) goes the same way once it finished and
//! its conversation answered the completion: the task's line, then that answer.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use wyckoff_protocol::{InboxRequest, InboxStatus, Message, TaskNotice, TaskOutcome, UserOrigin};

use crate::bot_store::BotError;
use crate::{Desk, SessionError};

/// How often a standing-by process looks whether the bot's lease is free.
pub const STANDBY_POLL: Duration = Duration::from_secs(5);

/// How long a decision's chat message waits for the conversation's follow-up answer
/// before it goes without one (no model, or a turn that never ends).
const FOLLOW_UP_GRACE: chrono::Duration = chrono::Duration::minutes(3);

/// How long a bot's background task may go without a completion in its conversation
/// before the chat stops waiting for one (the task was lost with a process, or its
/// conversation never took the completion).
const TASK_TELL_LIMIT: chrono::Duration = chrono::Duration::days(1);

/// The process serving a bot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotServer {
    /// The process's lease id.
    pub owner: String,
    /// `app`, `daemon` or `cli`.
    pub front: String,
    /// RFC 3339.
    pub taken_at: String,
    /// This process serves it.
    pub here: bool,
}

/// A message for a bot's chat: a decision made outside the chat, or a finished task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotFollowUp {
    pub about: FollowUpAbout,
    pub chat_id: String,
    pub text: String,
}

/// What a chat's follow-up tells of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowUpAbout {
    /// An approval request (its id) decided outside the chat.
    Decision(String),
    /// Background tasks (their ids) a bot's turn started, answered by one turn.
    Tasks(Vec<String>),
}

impl std::fmt::Display for FollowUpAbout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FollowUpAbout::Decision(id) => write!(f, "request {id}"),
            FollowUpAbout::Tasks(ids) => write!(f, "task {}", ids.join(", ")),
        }
    }
}

impl Desk {
    fn alive(&self, owner: &str) -> bool {
        owner == self.services().owner()
            || wyckoff_config::lease::is_alive_at(self.services().home().root(), owner)
    }

    /// The live process serving `bot`, if any (a dead holder's row is no server).
    pub async fn bot_server(&self, bot: &str) -> Result<Option<BotServer>, SessionError> {
        let row: Option<(String, String, String)> =
            sqlx::query_as("SELECT owner, front, taken_at FROM bot_serving WHERE bot = ?")
                .bind(bot)
                .fetch_optional(self.services().pool())
                .await
                .map_err(BotError::from)?;
        Ok(row
            .filter(|(owner, ..)| self.alive(owner))
            .map(|(owner, front, taken_at)| BotServer {
                here: owner == self.services().owner(),
                owner,
                front,
                taken_at,
            }))
    }

    /// Takes `bot`'s lease for this process (`front` says which kind it is). `None`: this
    /// process serves it now (it was free, its holder is gone, or it was this process's);
    /// otherwise the live holder, and nothing changed. Atomic across processes: SQLite
    /// serialises the writes, and a takeover names the holder it replaces.
    pub async fn bot_take_serving(
        &self,
        bot: &str,
        front: &str,
    ) -> Result<Option<BotServer>, SessionError> {
        let mine = self.services().owner().to_owned();
        let now = self.clock().now().to_rfc3339();
        let pool = self.services().pool();
        for _ in 0..2 {
            let inserted = sqlx::query(
                "INSERT INTO bot_serving (bot, owner, front, taken_at) VALUES (?, ?, ?, ?)
                 ON CONFLICT(bot) DO NOTHING",
            )
            .bind(bot)
            .bind(&mine)
            .bind(front)
            .bind(&now)
            .execute(pool)
            .await
            .map_err(BotError::from)?
            .rows_affected();
            if inserted == 1 {
                return Ok(None);
            }
            let held: Option<(String, String, String)> =
                sqlx::query_as("SELECT owner, front, taken_at FROM bot_serving WHERE bot = ?")
                    .bind(bot)
                    .fetch_optional(pool)
                    .await
                    .map_err(BotError::from)?;
            let Some((holder, held_front, taken_at)) = held else {
                continue;
            };
            if holder == mine {
                return Ok(None);
            }
            if self.alive(&holder) {
                return Ok(Some(BotServer {
                    owner: holder,
                    front: held_front,
                    taken_at,
                    here: false,
                }));
            }
            let taken = sqlx::query(
                "UPDATE bot_serving SET owner = ?, front = ?, taken_at = ? WHERE bot = ? AND owner = ?",
            )
            .bind(&mine)
            .bind(front)
            .bind(&now)
            .bind(bot)
            .bind(&holder)
            .execute(pool)
            .await
            .map_err(BotError::from)?
            .rows_affected();
            if taken == 1 {
                tracing::info!(bot, gone = %holder, "took over serving from a process that is gone");
                return Ok(None);
            }
        }
        Ok(self.bot_server(bot).await?.filter(|s| !s.here))
    }

    /// Gives `bot`'s lease back if this process holds it (another may take it at once).
    pub async fn bot_release_serving(&self, bot: &str) -> Result<(), SessionError> {
        sqlx::query("DELETE FROM bot_serving WHERE bot = ? AND owner = ?")
            .bind(bot)
            .bind(self.services().owner())
            .execute(self.services().pool())
            .await
            .map_err(BotError::from)?;
        Ok(())
    }

    /// Waits until this process holds `bot`'s lease: true then, false when `stop` came
    /// first or the lease could not be read. The holder is said once in the log.
    pub async fn bot_hold_serving(&self, bot: &str, front: &str, stop: &CancellationToken) -> bool {
        let mut said = false;
        loop {
            match self.bot_take_serving(bot, front).await {
                Ok(None) => return true,
                Ok(Some(holder)) => {
                    if !said {
                        tracing::info!(
                            bot,
                            holder = %holder.owner,
                            front = %holder.front,
                            "served by another process; standing by"
                        );
                        said = true;
                    }
                }
                Err(e) => {
                    tracing::error!(bot, "cannot take the bot's lease: {e}");
                    return false;
                }
            }
            tokio::select! {
                () = stop.cancelled() => return false,
                () = tokio::time::sleep(STANDBY_POLL) => {}
            }
        }
    }

    /// The decisions on `bot`'s requests made outside its chats that its chats were not
    /// told of yet, each as the chat's message. A decision waits for its conversation's
    /// follow-up answer (told and no turn running there) for a grace period, then goes
    /// alone. Call [`Desk::bot_follow_up_sent`] once a message was delivered.
    pub async fn bot_follow_ups(&self, bot: &str) -> Result<Vec<BotFollowUp>, SessionError> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT a.request_id, a.chat_id FROM bot_approval a
             JOIN approval_inbox i ON i.id = a.request_id
             WHERE a.bot = ? AND i.status <> 'pending'
             AND NOT EXISTS (SELECT 1 FROM bot_approval_told t WHERE t.request_id = a.request_id)
             ORDER BY i.decided_at, a.request_id",
        )
        .bind(bot)
        .fetch_all(self.services().pool())
        .await
        .map_err(BotError::from)?;
        let now = self.clock().now();
        let mut out = Vec::new();
        for (request_id, chat_id) in rows {
            let request = self.services().inbox().get(&request_id).await?;
            let decided_at = request
                .decided_at
                .as_deref()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc));
            let late = decided_at.is_none_or(|t| now - t >= FOLLOW_UP_GRACE);
            let answer = match self.follow_up_answer(&request).await? {
                FollowUp::Answered(text) => Some(text),
                FollowUp::Pending if !late => continue,
                FollowUp::Pending | FollowUp::None => None,
            };
            // The decision and the follow-up may have been stored by another process: a
            // session this one holds open would go on without them, so the chat's next
            // turn reopens it from the store.
            if !self.hub().is_running(&request.conversation_id) {
                self.hub().forget(&request.conversation_id);
            }
            let mut text = verdict_line(&request);
            if let Some(answer) = answer.filter(|a| !a.trim().is_empty()) {
                text = format!("{text}\n\n{}", answer.trim());
            }
            out.push(BotFollowUp {
                about: FollowUpAbout::Decision(request_id),
                chat_id,
                text,
            });
        }
        out.extend(self.bot_task_follow_ups(bot).await?);
        Ok(out)
    }

    /// The background tasks `bot`'s turns started whose completion their conversation
    /// answered since (no turn running there): the task's line and that answer, one
    /// message per answering turn. A task left without a completion for a day is given up.
    async fn bot_task_follow_ups(&self, bot: &str) -> Result<Vec<BotFollowUp>, SessionError> {
        let rows: Vec<(String, String, String, String)> = sqlx::query_as(
            "SELECT task_id, chat_id, conversation_id, started_at FROM bot_task
             WHERE bot = ? AND told_at IS NULL ORDER BY started_at, task_id",
        )
        .bind(bot)
        .fetch_all(self.services().pool())
        .await
        .map_err(BotError::from)?;
        let now = self.clock().now();
        let mut out: Vec<BotFollowUp> = Vec::new();
        // One answering turn may take several completions: its answer goes once, with
        // each task's line, keyed by the conversation and the answer's place in it.
        let mut answered: Vec<(String, usize)> = Vec::new();
        for (task_id, chat_id, conversation, started_at) in rows {
            let stale = DateTime::parse_from_rfc3339(&started_at)
                .map(|t| now - t.with_timezone(&Utc) >= TASK_TELL_LIMIT)
                .unwrap_or(true);
            let told = match self.task_answer(&conversation, &task_id).await? {
                TaskTold::Pending if !stale => continue,
                TaskTold::Pending | TaskTold::Gone => {
                    tracing::info!(bot, task = %task_id, "no completion to tell the chat of");
                    self.bot_tasks_told(&[task_id]).await?;
                    continue;
                }
                TaskTold::Answered { notice, answer, at } => (notice, answer, at),
            };
            let (notice, answer, at) = told;
            let line = task_line(&notice);
            let key = (conversation, at);
            if let Some(i) = answered.iter().position(|k| *k == key)
                && let Some(f) = out.get_mut(i)
                && let FollowUpAbout::Tasks(ids) = &mut f.about
            {
                ids.push(task_id);
                f.text = match f.text.split_once("\n\n") {
                    Some((lines, rest)) => format!("{lines}\n{line}\n\n{rest}"),
                    None => format!("{}\n{line}", f.text),
                };
                continue;
            }
            let text = match answer.as_deref().map(str::trim).filter(|a| !a.is_empty()) {
                Some(answer) => format!("{line}\n\n{answer}"),
                None => line,
            };
            answered.push(key);
            out.push(BotFollowUp {
                about: FollowUpAbout::Tasks(vec![task_id]),
                chat_id,
                text,
            });
        }
        Ok(out)
    }

    /// The task's completion in its conversation and the answer to it, once the turn that
    /// took it ended.
    async fn task_answer(
        &self,
        conversation: &str,
        task_id: &str,
    ) -> Result<TaskTold, SessionError> {
        if self.hub().is_running(conversation) || self.turn_leased(conversation).await? {
            return Ok(TaskTold::Pending);
        }
        let messages = match self
            .services()
            .conversations()
            .load_messages(conversation)
            .await
        {
            Ok(m) => m,
            // The conversation was deleted: nothing to tell.
            Err(_) => return Ok(TaskTold::Gone),
        };
        let Some((at, notice)) = messages.iter().enumerate().find_map(|(i, m)| {
            m.task_notice
                .as_ref()
                .filter(|n| n.task_id == task_id)
                .map(|n| (i, n.clone()))
        }) else {
            return Ok(TaskTold::Pending);
        };
        // The answering turn's text: its last words before the next message the user
        // typed (its tool rounds leave assistant messages without text on the way).
        let mut answer = None;
        let mut answer_at = at;
        for (i, m) in messages.iter().enumerate().skip(at + 1) {
            match &m.message {
                Message::User {
                    origin: UserOrigin::User,
                    ..
                } => break,
                Message::Assistant { content, .. } if !content.trim().is_empty() => {
                    answer = Some(content.clone());
                    answer_at = i;
                }
                _ => {}
            }
        }
        Ok(TaskTold::Answered {
            notice,
            answer,
            at: answer_at,
        })
    }

    /// The chat was told of these tasks (or never will be): never again.
    async fn bot_tasks_told(&self, task_ids: &[String]) -> Result<(), SessionError> {
        let now = self.clock().now().to_rfc3339();
        for task_id in task_ids {
            sqlx::query("UPDATE bot_task SET told_at = ? WHERE task_id = ? AND told_at IS NULL")
                .bind(&now)
                .bind(task_id)
                .execute(self.services().pool())
                .await
                .map_err(BotError::from)?;
        }
        Ok(())
    }

    /// A bot's turn in `chat_id` started these background tasks (`told`: their
    /// completions were answered within the turn, so the chat already has them).
    pub(crate) async fn bot_tasks_started(
        &self,
        bot: &str,
        chat_id: &str,
        conversation: &str,
        started: &[String],
        told: &[String],
    ) -> Result<(), SessionError> {
        let now = self.clock().now().to_rfc3339();
        for task_id in started {
            sqlx::query(
                "INSERT INTO bot_task (task_id, bot, chat_id, conversation_id, started_at)
                 VALUES (?, ?, ?, ?, ?) ON CONFLICT(task_id) DO NOTHING",
            )
            .bind(task_id)
            .bind(bot)
            .bind(chat_id)
            .bind(conversation)
            .bind(&now)
            .execute(self.services().pool())
            .await
            .map_err(BotError::from)?;
        }
        self.bot_tasks_told(told).await
    }

    /// The follow-up was delivered to its chat: never again.
    pub async fn bot_follow_up_told(&self, about: &FollowUpAbout) -> Result<(), SessionError> {
        match about {
            FollowUpAbout::Decision(request_id) => self.bot_follow_up_sent(request_id).await,
            FollowUpAbout::Tasks(task_ids) => self.bot_tasks_told(task_ids).await,
        }
    }

    /// The chat was told of the request's decision (or decided it itself): never again.
    pub async fn bot_follow_up_sent(&self, request_id: &str) -> Result<(), SessionError> {
        sqlx::query(
            "INSERT INTO bot_approval_told (request_id, told_at) VALUES (?, ?)
             ON CONFLICT(request_id) DO NOTHING",
        )
        .bind(request_id)
        .bind(self.clock().now().to_rfc3339())
        .execute(self.services().pool())
        .await
        .map_err(BotError::from)?;
        Ok(())
    }

    /// Whether a live process holds `conversation`'s turn lease (a turn runs there).
    async fn turn_leased(&self, conversation: &str) -> Result<bool, SessionError> {
        let owner: Option<(String,)> =
            sqlx::query_as("SELECT owner FROM conversation_lease WHERE conversation_id = ?")
                .bind(conversation)
                .fetch_optional(self.services().pool())
                .await
                .map_err(BotError::from)?;
        Ok(owner.is_some_and(|(owner,)| self.alive(&owner)))
    }

    /// The conversation's answer to the decision's notice, once it has one.
    async fn follow_up_answer(&self, request: &InboxRequest) -> Result<FollowUp, SessionError> {
        let conversation = &request.conversation_id;
        if self.turn_leased(conversation).await? {
            return Ok(FollowUp::Pending);
        }
        let messages = match self
            .services()
            .conversations()
            .load_messages(conversation)
            .await
        {
            Ok(m) => m,
            // The conversation was deleted: the verdict goes alone.
            Err(_) => return Ok(FollowUp::None),
        };
        let Some(at) = messages.iter().position(|m| {
            m.approval_notice
                .as_ref()
                .is_some_and(|n| n.request_id == request.id)
        }) else {
            return Ok(FollowUp::Pending);
        };
        let answer = messages[at + 1..]
            .iter()
            .rev()
            .find_map(|m| match &m.message {
                Message::Assistant { content, .. } if !content.trim().is_empty() => {
                    Some(content.clone())
                }
                _ => None,
            });
        Ok(answer.map_or(FollowUp::None, FollowUp::Answered))
    }
}

enum TaskTold {
    /// Not finished, not answered yet, or its answering turn still runs.
    Pending,
    /// Its conversation is gone.
    Gone,
    /// Its completion and the answering turn's text (`at`: where that text is).
    Answered {
        notice: TaskNotice,
        answer: Option<String>,
        at: usize,
    },
}

enum FollowUp {
    /// Not told yet, or its follow-up turn still runs.
    Pending,
    /// Told, and the follow-up turn said nothing (or failed).
    None,
    Answered(String),
}

/// The decision in one line: who decided, and the call's result in one line.
pub fn verdict_line(request: &InboxRequest) -> String {
    let name = &request.display_name;
    let id = &request.id;
    match request.status {
        InboxStatus::Allowed => match request.result.as_deref().map(one_line) {
            Some(result) if !result.is_empty() => {
                format!("✅ 已批准并执行 {name}（{id}）：{result}")
            }
            _ => format!("✅ 已批准并执行 {name}（{id}）。"),
        },
        InboxStatus::Denied => format!("❌ 已拒绝 {name}（{id}），未执行。"),
        InboxStatus::Expired => format!("⌛ {name}（{id}）无人审批已过期，未执行。"),
        InboxStatus::Pending => format!("⏳ {name}（{id}）仍在等待审批。"),
    }
}

/// A finished background task in one line, worded as the app's notice.
pub fn task_line(notice: &TaskNotice) -> String {
    let name = &notice.display_name;
    let id = &notice.task_id;
    let error = notice
        .error
        .as_deref()
        .map(one_line)
        .filter(|e| !e.is_empty());
    match (notice.outcome, error) {
        (TaskOutcome::Completed, _) => format!("✅ 后台任务完成：{name}（{id}）"),
        (TaskOutcome::Failed, Some(e)) => format!("✗ 后台任务失败：{name}（{id}）：{e}"),
        (TaskOutcome::Failed, None) => format!("✗ 后台任务失败：{name}（{id}）"),
        (TaskOutcome::Cancelled, _) => format!("✗ 后台任务已取消：{name}（{id}）"),
    }
}

/// A tool result as one line: a JSON result's `summary` or `message` when it has one,
/// else its text with the whitespace folded, at most 160 characters.
pub fn one_line(result: &str) -> String {
    const MAX: usize = 160;
    let parsed = serde_json::from_str::<serde_json::Value>(result).ok();
    let picked = parsed.as_ref().and_then(|v| {
        ["summary", "message", "status"]
            .iter()
            .find_map(|k| v.get(*k).and_then(|s| s.as_str()))
    });
    let text = picked.unwrap_or(result);
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= MAX {
        folded
    } else {
        let cut: String = folded.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(status: InboxStatus, result: Option<&str>) -> InboxRequest {
        InboxRequest {
            id: "req1".into(),
            conversation_id: "c".into(),
            tool: "update_portfolio".into(),
            display_name: "更新持仓".into(),
            args: serde_json::json!({}),
            preview: None,
            requested_by: "bot:tg".into(),
            created_at: "2026-12-07T01:00:00Z".into(),
            expires_at: "2026-12-08T01:00:00Z".into(),
            status,
            decided_at: Some("2026-12-07T02:00:00Z".into()),
            decided_by: None,
            result: result.map(str::to_owned),
        }
    }

    #[test]
    fn a_decision_is_said_in_one_line() {
        let cases = [
            (
                InboxStatus::Allowed,
                Some("{\"summary\":\"现金 5000\"}"),
                "✅ 已批准并执行 更新持仓（req1）：现金 5000",
            ),
            (
                InboxStatus::Allowed,
                None,
                "✅ 已批准并执行 更新持仓（req1）。",
            ),
            (
                InboxStatus::Allowed,
                Some("  "),
                "✅ 已批准并执行 更新持仓（req1）。",
            ),
            (
                InboxStatus::Denied,
                None,
                "❌ 已拒绝 更新持仓（req1），未执行。",
            ),
            (
                InboxStatus::Expired,
                None,
                "⌛ 更新持仓（req1）无人审批已过期，未执行。",
            ),
        ];
        for (status, result, want) in cases {
            assert_eq!(verdict_line(&request(status, result)), want);
        }
    }

    #[test]
    fn a_finished_task_is_said_in_one_line() {
        let notice = |outcome, error: Option<&str>| TaskNotice {
            task_id: "bg_1_screen_stocks".into(),
            tool_name: "screen_stocks".into(),
            display_name: "全市场扫描".into(),
            outcome,
            summary: Some("候选 1 只".into()),
            error: error.map(str::to_owned),
        };
        let cases = [
            (
                notice(TaskOutcome::Completed, None),
                "✅ 后台任务完成：全市场扫描（bg_1_screen_stocks）",
            ),
            (
                notice(TaskOutcome::Failed, Some("没有行情\n数据")),
                "✗ 后台任务失败：全市场扫描（bg_1_screen_stocks）：没有行情 数据",
            ),
            (
                notice(TaskOutcome::Failed, None),
                "✗ 后台任务失败：全市场扫描（bg_1_screen_stocks）",
            ),
            (
                notice(TaskOutcome::Cancelled, Some("用户取消")),
                "✗ 后台任务已取消：全市场扫描（bg_1_screen_stocks）",
            ),
        ];
        for (notice, want) in cases {
            assert_eq!(task_line(&notice), want);
        }
    }

    #[test]
    fn a_result_is_one_line() {
        let cases = [
            ("", ""),
            ("done", "done"),
            ("a\n  b\tc", "a b c"),
            (
                r#"{"summary":"持仓已更新：600519 100 股","rows":[1,2]}"#,
                "持仓已更新：600519 100 股",
            ),
            (r#"{"message":"ok"}"#, "ok"),
            (r#"{"rows":[1]}"#, r#"{"rows":[1]}"#),
        ];
        for (given, want) in cases {
            assert_eq!(one_line(given), want, "{given}");
        }
        let long = "字".repeat(400);
        let cut = one_line(&long);
        assert_eq!(cut.chars().count(), 160);
        assert!(cut.ends_with('…'));
    }
}
