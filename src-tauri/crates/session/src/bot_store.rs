//! What the chat bots keep in `wyckoff.db` (migration 7200): the bots, their paired
//! senders, pairing codes waiting for the owner, one conversation per chat (per sender in
//! a group), tokens per sender and day, every update seen, approval codes and the bots'
//! audit lines. The rules (who may talk, when a limit is reached, which tool writes) are
//! pure functions here with table tests; the desk applies them (`desk_bots`).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;
use wyckoff_agent::ToolSpec;

/// How long an unknown sender's pairing code waits for the owner.
pub const PAIRING_TTL: Duration = Duration::hours(1);
/// Pairing codes waiting per bot at most: strangers cannot flood the owner's list.
pub const MAX_PENDING_PAIRINGS: usize = 3;
/// Characters of a pairing code.
pub const PAIRING_CODE_LEN: usize = 8;
/// Characters of an approval request's one-time code.
pub const APPROVAL_CODE_LEN: usize = 6;
/// A sender's tokens per day unless the bot says otherwise.
pub const DEFAULT_DAILY_TOKENS: i64 = 200_000;
/// A sender's messages to the model per minute unless the bot says otherwise.
pub const DEFAULT_PER_MINUTE: i64 = 6;
/// No 0/O, 1/I: a code is read off a phone and typed into a terminal.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

#[derive(Debug, thiserror::Error)]
pub enum BotError {
    #[error("no bot named '{0}' (see `wyckoff bot list`)")]
    UnknownBot(String),
    #[error("a bot named '{0}' already exists")]
    Exists(String),
    #[error("{0}")]
    Invalid(String),
    #[error("no pairing code '{0}' is waiting (it may have expired after an hour)")]
    UnknownCode(String),
    #[error("bot '{bot}' has no paired sender '{sender}'")]
    UnknownSender { bot: String, sender: String },
    #[error("bot store: {0}")]
    Db(#[from] sqlx::Error),
    #[error("bot store migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// The chat platforms a bot can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BotKind {
    Telegram,
    Dingtalk,
    Feishu,
    Wecom,
}

impl BotKind {
    pub const ALL: [BotKind; 4] = [
        BotKind::Telegram,
        BotKind::Dingtalk,
        BotKind::Feishu,
        BotKind::Wecom,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BotKind::Telegram => "telegram",
            BotKind::Dingtalk => "dingtalk",
            BotKind::Feishu => "feishu",
            BotKind::Wecom => "wecom",
        }
    }

    pub fn parse(text: &str) -> Option<BotKind> {
        BotKind::ALL.into_iter().find(|k| k.as_str() == text.trim())
    }
}

/// A configured bot (its token is in the keychain, never here).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotInfo {
    pub name: String,
    pub kind: BotKind,
    /// The platform's API base, when not its public one (tests, relays).
    pub api_url: Option<String>,
    pub daily_tokens: i64,
    pub per_minute: i64,
    pub next_update: i64,
    pub created_at: String,
}

/// A sender the owner paired with a bot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairedSender {
    pub bot: String,
    pub sender_id: String,
    pub label: String,
    /// May decide approval requests from the chat (with the request's one-time code).
    pub approver: bool,
    pub paired_at: String,
}

/// A pairing code waiting for the owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingPairing {
    pub code: String,
    pub bot: String,
    pub sender_id: String,
    pub chat_id: String,
    pub label: String,
    pub created_at: String,
    pub expires_at: String,
}

/// One line of the bots' audit log (secrets masked before it is stored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotAuditLine {
    pub id: i64,
    pub at: String,
    pub bot: String,
    pub kind: String,
    pub sender_id: Option<String>,
    pub chat_id: Option<String>,
    pub detail: String,
}

/// Whether a tool changes anything: what a chat may not run without the owner. A tool
/// that asks for approval writes, and so does one that changes the owner's data unasked
/// (chart notes); an MCP tool writes unless its server says it only reads (a read-only
/// MCP tool is the only kind marked concurrency-safe), trusted or not.
pub fn is_writer(spec: &ToolSpec) -> bool {
    spec.requires_approval
        || spec.writes
        || (spec.name.starts_with("mcp__") && !spec.concurrency_safe)
}

/// What a sender may do with one more message to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowance {
    Go,
    /// The day's tokens are spent (used, budget).
    BudgetSpent {
        used: i64,
        budget: i64,
    },
    /// Too many messages this minute (sent, limit).
    RateLimited {
        sent: i64,
        limit: i64,
    },
}

/// The budget is spent once the day's tokens reach it; the rate limit lets `limit`
/// messages through per minute and stops the next.
pub fn allowance(used_today: i64, budget: i64, sent_last_minute: i64, limit: i64) -> Allowance {
    if used_today >= budget {
        Allowance::BudgetSpent {
            used: used_today,
            budget,
        }
    } else if sent_last_minute >= limit {
        Allowance::RateLimited {
            sent: sent_last_minute,
            limit,
        }
    } else {
        Allowance::Go
    }
}

/// A code of `len` characters from `random` bytes (one character per byte, so the
/// alphabet of 32 keeps every character equally likely).
pub fn code_from(random: &[u8], len: usize) -> String {
    random
        .iter()
        .take(len)
        .map(|b| char::from(CODE_ALPHABET[usize::from(*b) % CODE_ALPHABET.len()]))
        .collect()
}

fn random_code(len: usize) -> String {
    let mut bytes = Vec::with_capacity(32);
    while bytes.len() < len {
        bytes.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    }
    code_from(&bytes, len)
}

/// Codes are typed by hand: case and spaces do not matter.
pub fn normalize_code(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .flat_map(char::to_uppercase)
        .collect()
}

/// Masks anything secret-shaped, and the given secrets wherever they appear.
pub fn mask(text: &str, secrets: &[&str]) -> String {
    let mut out = wyckoff_config::redact::redact_secrets(text);
    for s in secrets.iter().filter(|s| s.len() >= 4) {
        out = out.replace(s, "***");
    }
    out
}

type BotRow = (String, String, Option<String>, i64, i64, i64, String);
type AuditRow = (
    i64,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    String,
);

fn bot_from(row: BotRow) -> Result<BotInfo, BotError> {
    let (name, kind, api_url, daily_tokens, per_minute, next_update, created_at) = row;
    let kind = BotKind::parse(&kind)
        .ok_or_else(|| BotError::Invalid(format!("bot '{name}' has an unknown kind '{kind}'")))?;
    Ok(BotInfo {
        name,
        kind,
        api_url,
        daily_tokens,
        per_minute,
        next_update,
        created_at,
    })
}

/// Bot names become keychain accounts and environment variable names.
pub fn check_name(name: &str) -> Result<(), BotError> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(BotError::Invalid(format!(
            "bot name '{name}': use 1–40 letters, digits, '-' or '_'"
        )))
    }
}

#[derive(Clone)]
pub struct BotStore {
    pool: SqlitePool,
}

impl BotStore {
    /// Uses the shared pool (runs the bots' migration).
    pub async fn new(pool: SqlitePool) -> Result<BotStore, BotError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&pool).await?;
        Ok(BotStore { pool })
    }

    pub async fn add(
        &self,
        name: &str,
        kind: BotKind,
        api_url: Option<&str>,
        daily_tokens: i64,
        per_minute: i64,
        now: DateTime<Utc>,
    ) -> Result<BotInfo, BotError> {
        check_name(name)?;
        if daily_tokens <= 0 || per_minute <= 0 {
            return Err(BotError::Invalid(
                "the daily token budget and the rate limit must be above 0".into(),
            ));
        }
        // A WeCom bot's address is its long connection's WebSocket (an http(s) one is
        // taken as the same address's ws(s)).
        let websocket = kind == BotKind::Wecom
            && api_url.is_some_and(|u| u.starts_with("wss://") || u.starts_with("ws://"));
        if let Some(url) = api_url
            && !(url.starts_with("https://") || url.starts_with("http://") || websocket)
        {
            return Err(BotError::Invalid(format!(
                "--api-url '{url}': give an http(s) URL{}",
                if kind == BotKind::Wecom {
                    " or a ws(s) one"
                } else {
                    ""
                }
            )));
        }
        let done = sqlx::query(
            "INSERT INTO bot (name, kind, api_url, daily_tokens, per_minute, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING",
        )
        .bind(name)
        .bind(kind.as_str())
        .bind(api_url.map(|u| u.trim_end_matches('/')))
        .bind(daily_tokens)
        .bind(per_minute)
        .bind(now.to_rfc3339())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(BotError::Exists(name.to_owned()));
        }
        self.get(name).await
    }

    pub async fn get(&self, name: &str) -> Result<BotInfo, BotError> {
        let row: Option<BotRow> = sqlx::query_as(
            "SELECT name, kind, api_url, daily_tokens, per_minute, next_update, created_at FROM bot WHERE name = ?",
        )
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        bot_from(row.ok_or_else(|| BotError::UnknownBot(name.to_owned()))?)
    }

    pub async fn list(&self) -> Result<Vec<BotInfo>, BotError> {
        let rows: Vec<BotRow> = sqlx::query_as(
            "SELECT name, kind, api_url, daily_tokens, per_minute, next_update, created_at FROM bot ORDER BY name",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(bot_from).collect()
    }

    /// Removes the bot with its senders, codes, chats and counters (its conversations
    /// stay, as conversations do).
    pub async fn remove(&self, name: &str) -> Result<(), BotError> {
        self.get(name).await?;
        let mut tx = self.pool.begin().await?;
        for delete in [
            "DELETE FROM bot_sender WHERE bot = ?",
            "DELETE FROM bot_pairing WHERE bot = ?",
            "DELETE FROM bot_chat WHERE bot = ?",
            "DELETE FROM bot_usage WHERE bot = ?",
            "DELETE FROM bot_update WHERE bot = ?",
            "DELETE FROM bot_approval WHERE bot = ?",
        ] {
            sqlx::query(delete).bind(name).execute(&mut *tx).await?;
        }
        sqlx::query("DELETE FROM bot WHERE name = ?")
            .bind(name)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records an update as seen; `false` when it was seen before (it is not handled
    /// again), and the offset moves past it either way.
    pub async fn see_update(
        &self,
        bot: &str,
        update_id: i64,
        sender_id: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, BotError> {
        let mut tx = self.pool.begin().await?;
        let fresh = sqlx::query(
            "INSERT INTO bot_update (bot, update_id, sender_id, at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(bot)
        .bind(update_id)
        .bind(sender_id)
        .bind(now.to_rfc3339())
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        sqlx::query("UPDATE bot SET next_update = MAX(next_update, ?) WHERE name = ?")
            .bind(update_id.saturating_add(1))
            .bind(bot)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(fresh)
    }

    pub async fn mark_admitted(&self, bot: &str, update_id: i64) -> Result<(), BotError> {
        sqlx::query("UPDATE bot_update SET admitted = 1 WHERE bot = ? AND update_id = ?")
            .bind(bot)
            .bind(update_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Messages of the sender that went to the model since `since`.
    pub async fn admitted_since(
        &self,
        bot: &str,
        sender_id: &str,
        since: DateTime<Utc>,
    ) -> Result<i64, BotError> {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM bot_update WHERE bot = ? AND sender_id = ? AND admitted = 1 AND at > ?",
        )
        .bind(bot)
        .bind(sender_id)
        .bind(since.to_rfc3339())
        .fetch_one(&self.pool)
        .await?;
        Ok(n)
    }

    pub async fn sender(
        &self,
        bot: &str,
        sender_id: &str,
    ) -> Result<Option<PairedSender>, BotError> {
        let row: Option<(String, String, String, bool, String)> = sqlx::query_as(
            "SELECT bot, sender_id, label, approver, paired_at FROM bot_sender WHERE bot = ? AND sender_id = ?",
        )
        .bind(bot)
        .bind(sender_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(
            |(bot, sender_id, label, approver, paired_at)| PairedSender {
                bot,
                sender_id,
                label,
                approver,
                paired_at,
            },
        ))
    }

    pub async fn senders(&self, bot: &str) -> Result<Vec<PairedSender>, BotError> {
        let rows: Vec<(String, String, String, bool, String)> = sqlx::query_as(
            "SELECT bot, sender_id, label, approver, paired_at FROM bot_sender WHERE bot = ? ORDER BY paired_at",
        )
        .bind(bot)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(bot, sender_id, label, approver, paired_at)| PairedSender {
                    bot,
                    sender_id,
                    label,
                    approver,
                    paired_at,
                },
            )
            .collect())
    }

    pub async fn set_approver(
        &self,
        bot: &str,
        sender_id: &str,
        approver: bool,
    ) -> Result<(), BotError> {
        let done =
            sqlx::query("UPDATE bot_sender SET approver = ? WHERE bot = ? AND sender_id = ?")
                .bind(approver)
                .bind(bot)
                .bind(sender_id)
                .execute(&self.pool)
                .await?;
        if done.rows_affected() == 0 {
            return Err(BotError::UnknownSender {
                bot: bot.to_owned(),
                sender: sender_id.to_owned(),
            });
        }
        Ok(())
    }

    pub async fn unpair(&self, bot: &str, sender_id: &str) -> Result<(), BotError> {
        let done = sqlx::query("DELETE FROM bot_sender WHERE bot = ? AND sender_id = ?")
            .bind(bot)
            .bind(sender_id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(BotError::UnknownSender {
                bot: bot.to_owned(),
                sender: sender_id.to_owned(),
            });
        }
        Ok(())
    }

    /// Pairing codes still waiting at `now`, oldest first (`bot`: of that bot only).
    pub async fn pending_pairings(
        &self,
        bot: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Vec<PendingPairing>, BotError> {
        let rows: Vec<(String, String, String, String, String, String, String)> = sqlx::query_as(
            "SELECT code, bot, sender_id, chat_id, label, created_at, expires_at FROM bot_pairing WHERE status = 'pending' AND expires_at > ? AND (? IS NULL OR bot = ?) ORDER BY created_at",
        )
        .bind(now.to_rfc3339())
        .bind(bot)
        .bind(bot)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(code, bot, sender_id, chat_id, label, created_at, expires_at)| PendingPairing {
                    code,
                    bot,
                    sender_id,
                    chat_id,
                    label,
                    created_at,
                    expires_at,
                },
            )
            .collect())
    }

    /// The sender's waiting code, or a new one; `None` when the bot already has
    /// [`MAX_PENDING_PAIRINGS`] codes waiting for other senders.
    pub async fn pairing_code(
        &self,
        bot: &str,
        sender_id: &str,
        chat_id: &str,
        label: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<(PendingPairing, bool)>, BotError> {
        let pending = self.pending_pairings(Some(bot), now).await?;
        if let Some(p) = pending.iter().find(|p| p.sender_id == sender_id) {
            return Ok(Some((p.clone(), false)));
        }
        if pending.len() >= MAX_PENDING_PAIRINGS {
            return Ok(None);
        }
        let code = random_code(PAIRING_CODE_LEN);
        let expires = now + PAIRING_TTL;
        sqlx::query(
            "INSERT INTO bot_pairing (code, bot, sender_id, chat_id, label, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&code)
        .bind(bot)
        .bind(sender_id)
        .bind(chat_id)
        .bind(label)
        .bind(now.to_rfc3339())
        .bind(expires.to_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(Some((
            PendingPairing {
                code,
                bot: bot.to_owned(),
                sender_id: sender_id.to_owned(),
                chat_id: chat_id.to_owned(),
                label: label.to_owned(),
                created_at: now.to_rfc3339(),
                expires_at: expires.to_rfc3339(),
            },
            true,
        )))
    }

    /// The owner approves a waiting code: its sender becomes an allowed sender of its bot.
    pub async fn pair(&self, code: &str, now: DateTime<Utc>) -> Result<PairedSender, BotError> {
        let code = normalize_code(code);
        let pending = self.pending_pairings(None, now).await?;
        let p = pending
            .into_iter()
            .find(|p| p.code == code)
            .ok_or_else(|| BotError::UnknownCode(code.clone()))?;
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE bot_pairing SET status = 'approved' WHERE code = ?")
            .bind(&p.code)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO bot_sender (bot, sender_id, label, paired_at) VALUES (?, ?, ?, ?) ON CONFLICT(bot, sender_id) DO UPDATE SET label = excluded.label",
        )
        .bind(&p.bot)
        .bind(&p.sender_id)
        .bind(&p.label)
        .bind(now.to_rfc3339())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.sender(&p.bot, &p.sender_id)
            .await?
            .ok_or_else(|| BotError::UnknownSender {
                bot: p.bot.clone(),
                sender: p.sender_id.clone(),
            })
    }

    pub async fn chat_conversation(
        &self,
        bot: &str,
        chat_id: &str,
        sender_id: &str,
    ) -> Result<Option<String>, BotError> {
        let row: Option<(String,)> = sqlx::query_as(
            "SELECT conversation_id FROM bot_chat WHERE bot = ? AND chat_id = ? AND sender_id = ?",
        )
        .bind(bot)
        .bind(chat_id)
        .bind(sender_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.0))
    }

    pub async fn set_chat_conversation(
        &self,
        bot: &str,
        chat_id: &str,
        sender_id: &str,
        conversation_id: &str,
    ) -> Result<(), BotError> {
        sqlx::query(
            "INSERT INTO bot_chat (bot, chat_id, sender_id, conversation_id) VALUES (?, ?, ?, ?) ON CONFLICT(bot, chat_id, sender_id) DO UPDATE SET conversation_id = excluded.conversation_id",
        )
        .bind(bot)
        .bind(chat_id)
        .bind(sender_id)
        .bind(conversation_id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The chat (bot, chat id) a conversation belongs to, if a bot's.
    pub async fn conversation_chat(
        &self,
        conversation_id: &str,
    ) -> Result<Option<(String, String)>, BotError> {
        Ok(
            sqlx::query_as("SELECT bot, chat_id FROM bot_chat WHERE conversation_id = ? LIMIT 1")
                .bind(conversation_id)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    pub async fn tokens_on(&self, bot: &str, sender_id: &str, day: &str) -> Result<i64, BotError> {
        let row: Option<(i64,)> = sqlx::query_as(
            "SELECT tokens FROM bot_usage WHERE bot = ? AND sender_id = ? AND day = ?",
        )
        .bind(bot)
        .bind(sender_id)
        .bind(day)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map_or(0, |r| r.0))
    }

    pub async fn add_tokens(
        &self,
        bot: &str,
        sender_id: &str,
        day: &str,
        tokens: i64,
    ) -> Result<(), BotError> {
        sqlx::query(
            "INSERT INTO bot_usage (bot, sender_id, day, tokens) VALUES (?, ?, ?, ?) ON CONFLICT(bot, sender_id, day) DO UPDATE SET tokens = tokens + excluded.tokens",
        )
        .bind(bot)
        .bind(sender_id)
        .bind(day)
        .bind(tokens)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// A one-time code for an approval request a bot's turn queued (the one it has).
    pub async fn approval_code(
        &self,
        request_id: &str,
        bot: &str,
        chat_id: &str,
        now: DateTime<Utc>,
    ) -> Result<(String, bool), BotError> {
        let code = random_code(APPROVAL_CODE_LEN);
        let fresh = sqlx::query(
            "INSERT INTO bot_approval (request_id, bot, chat_id, code, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(request_id)
        .bind(bot)
        .bind(chat_id)
        .bind(&code)
        .bind(now.to_rfc3339())
        .execute(&self.pool)
        .await?
        .rows_affected()
            == 1;
        let (code,): (String,) =
            sqlx::query_as("SELECT code FROM bot_approval WHERE request_id = ?")
                .bind(request_id)
                .fetch_one(&self.pool)
                .await?;
        Ok((code, fresh))
    }

    /// Uses the request's one-time code: `true` once, for the right code of a request of
    /// this bot that was not used yet.
    pub async fn use_approval_code(
        &self,
        request_id: &str,
        bot: &str,
        code: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, BotError> {
        let done = sqlx::query(
            "UPDATE bot_approval SET used_at = ? WHERE request_id = ? AND bot = ? AND code = ? AND used_at IS NULL",
        )
        .bind(now.to_rfc3339())
        .bind(request_id)
        .bind(bot)
        .bind(normalize_code(code))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn audit(
        &self,
        now: DateTime<Utc>,
        bot: &str,
        kind: &str,
        sender_id: Option<&str>,
        chat_id: Option<&str>,
        detail: &str,
    ) -> Result<(), BotError> {
        sqlx::query(
            "INSERT INTO bot_audit (at, bot, kind, sender_id, chat_id, detail) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(now.to_rfc3339())
        .bind(bot)
        .bind(kind)
        .bind(sender_id)
        .bind(chat_id)
        .bind(detail)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn audit_log(&self) -> Result<Vec<BotAuditLine>, BotError> {
        let rows: Vec<AuditRow> = sqlx::query_as(
            "SELECT id, at, bot, kind, sender_id, chat_id, detail FROM bot_audit ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(id, at, bot, kind, sender_id, chat_id, detail)| BotAuditLine {
                    id,
                    at,
                    bot,
                    kind,
                    sender_id,
                    chat_id,
                    detail,
                },
            )
            .collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn writers_are_the_tools_that_ask_or_write_unasked_and_mcp_tools_not_marked_read_only() {
        let plain = ToolSpec::new("analyze_stock", "分析");
        let asks = ToolSpec::new("update_portfolio", "调仓").requires_approval();
        let mcp_reader = ToolSpec::new("mcp__s__get", "MCP").concurrency_safe();
        let mcp_trusted_writer = ToolSpec::new("mcp__s__put", "MCP");
        // Changes the owner's chart notes without asking: safe to run beside others, yet
        // a chat may not.
        let writes_unasked = ToolSpec::new("annotate_chart", "图表标注")
            .concurrency_safe()
            .writes();
        let cases = [
            (plain, false),
            (asks, true),
            (mcp_reader, false),
            (mcp_trusted_writer, true),
            (writes_unasked, true),
        ];
        for (spec, writer) in cases {
            assert_eq!(is_writer(&spec), writer, "{}", spec.name);
        }
    }

    #[test]
    fn the_budget_and_the_rate_hold_at_their_limit() {
        let cases = [
            ((0, 100, 0, 3), Allowance::Go),
            ((99, 100, 2, 3), Allowance::Go),
            (
                (100, 100, 0, 3),
                Allowance::BudgetSpent {
                    used: 100,
                    budget: 100,
                },
            ),
            (
                (150, 100, 5, 3),
                Allowance::BudgetSpent {
                    used: 150,
                    budget: 100,
                },
            ),
            (
                (10, 100, 3, 3),
                Allowance::RateLimited { sent: 3, limit: 3 },
            ),
        ];
        for ((used, budget, sent, limit), want) in cases {
            assert_eq!(allowance(used, budget, sent, limit), want);
        }
    }

    #[test]
    fn codes_use_the_unambiguous_alphabet_and_their_length() {
        let code = code_from(&[0, 31, 32, 255, 7, 8, 9, 10, 11], PAIRING_CODE_LEN);
        assert_eq!(code, "A9A9HJKL");
        let random = random_code(PAIRING_CODE_LEN);
        assert_eq!(random.len(), PAIRING_CODE_LEN);
        assert!(
            random.bytes().all(|b| CODE_ALPHABET.contains(&b)),
            "{random}"
        );
        assert_eq!(normalize_code(" ab12-cd "), "AB12CD");
    }

    #[test]
    fn masking_hides_given_secrets_and_secret_shapes() {
        let cases = [
            (
                "token 123456:ABCDEF here",
                vec!["123456:ABCDEF"],
                "token *** here",
            ),
            ("key sk-abcdef123456", vec![], "key sk-***"),
            ("分析 000001", vec!["123456:ABCDEF"], "分析 000001"),
        ];
        for (text, secrets, want) in cases {
            assert_eq!(mask(text, &secrets), want);
        }
    }

    async fn store() -> (tempfile::TempDir, BotStore) {
        let dir = tempfile::tempdir().unwrap();
        let pool = wyckoff_memory::open_pool(dir.path().join("wyckoff.db"))
            .await
            .unwrap();
        let store = BotStore::new(pool).await.unwrap();
        (dir, store)
    }

    #[tokio::test]
    async fn at_most_three_codes_wait_per_bot_and_a_code_expires_after_an_hour() {
        let (_dir, store) = store().await;
        let t0 = DateTime::parse_from_rfc3339("2026-12-07T01:00:00Z")
            .unwrap()
            .to_utc();
        store
            .add("tg", BotKind::Telegram, None, 100, 6, t0)
            .await
            .unwrap();
        let mut codes = Vec::new();
        for sender in ["1", "2", "3"] {
            let (p, fresh) = store
                .pairing_code("tg", sender, sender, sender, t0)
                .await
                .unwrap()
                .unwrap();
            assert!(fresh);
            codes.push(p.code);
        }
        // The same sender asks again: its waiting code, not a new one.
        let (again, fresh) = store
            .pairing_code("tg", "2", "2", "2", t0)
            .await
            .unwrap()
            .unwrap();
        assert_eq!((again.code.as_str(), fresh), (codes[1].as_str(), false));
        // A fourth stranger gets nothing while three wait.
        assert!(
            store
                .pairing_code("tg", "4", "4", "4", t0)
                .await
                .unwrap()
                .is_none()
        );
        // At the hour the codes are gone: they pair nobody, and a new stranger gets one.
        let later = t0 + PAIRING_TTL;
        assert!(matches!(
            store.pair(&codes[0], later).await,
            Err(BotError::UnknownCode(_))
        ));
        assert!(
            store
                .pairing_code("tg", "4", "4", "4", later)
                .await
                .unwrap()
                .is_some()
        );
        // Just before it, a code pairs its sender, once.
        let sender = store
            .pair(&codes[2].to_lowercase(), later - Duration::seconds(1))
            .await
            .unwrap();
        assert_eq!((sender.sender_id.as_str(), sender.approver), ("3", false));
        assert!(store.pair(&codes[2], t0).await.is_err());
        assert!(store.sender("tg", "1").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn an_update_is_seen_once_and_an_approval_code_used_once() {
        let (_dir, store) = store().await;
        let t0 = DateTime::parse_from_rfc3339("2026-12-07T01:00:00Z")
            .unwrap()
            .to_utc();
        store
            .add("tg", BotKind::Telegram, None, 100, 6, t0)
            .await
            .unwrap();
        assert!(store.see_update("tg", 10, "1", t0).await.unwrap());
        assert!(!store.see_update("tg", 10, "1", t0).await.unwrap());
        assert!(store.see_update("tg", 7, "1", t0).await.unwrap());
        // The offset never goes back.
        assert_eq!(store.get("tg").await.unwrap().next_update, 11);
        let (code, fresh) = store.approval_code("r1", "tg", "1", t0).await.unwrap();
        assert!(fresh);
        assert_eq!(
            store.approval_code("r1", "tg", "1", t0).await.unwrap(),
            (code.clone(), false)
        );
        assert!(
            !store
                .use_approval_code("r1", "other", &code, t0)
                .await
                .unwrap()
        );
        assert!(
            !store
                .use_approval_code("r1", "tg", "WRONG1", t0)
                .await
                .unwrap()
        );
        assert!(
            store
                .use_approval_code("r1", "tg", &code, t0)
                .await
                .unwrap()
        );
        assert!(
            !store
                .use_approval_code("r1", "tg", &code, t0)
                .await
                .unwrap()
        );
    }

    #[test]
    fn names_must_fit_accounts_and_env_vars() {
        for (name, ok) in [
            ("tg", true),
            ("my_bot-2", true),
            ("", false),
            ("a b", false),
        ] {
            assert_eq!(check_name(name).is_ok(), ok, "{name}");
        }
    }
}
