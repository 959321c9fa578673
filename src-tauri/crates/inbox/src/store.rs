//! The inbox and the audit log in `wyckoff.db` (migration 6000).

use std::time::Duration;

#[cfg(test)]
use chrono::TimeDelta;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;
use sqlx::SqlitePool;
use wyckoff_agent::AuditRecord;
use wyckoff_protocol::{
    ApprovalPreview, AuditDecision, AuditEntry, Decider, InboxRequest, InboxStatus,
};

use crate::policy::{self, Answer, Verdict};

#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    #[error("no approval request '{0}' (see `wyckoff approvals list`)")]
    NotFound(String),
    #[error("approval request '{id}' was already {}; nothing changed", status.as_str())]
    AlreadyDecided { id: String, status: InboxStatus },
    #[error("stored approval request '{id}' is damaged: {why}")]
    Corrupt { id: String, why: String },
    #[error("approval inbox: {0}")]
    Db(#[from] sqlx::Error),
    #[error("approval inbox migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl InboxError {
    /// The user asked for something that cannot be done (exit 2, nothing changed).
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            InboxError::NotFound(_) | InboxError::AlreadyDecided { .. }
        )
    }
}

/// A call to queue.
#[derive(Debug, Clone)]
pub struct NewRequest {
    pub conversation_id: String,
    pub call_id: String,
    pub tool: String,
    pub display_name: String,
    pub args: Value,
    pub preview: Option<ApprovalPreview>,
    pub requested_by: String,
}

/// Called with each request just queued (the push relay tells the channels that take
/// approvals), before `queue` returns.
pub type QueuedHook = std::sync::Arc<
    dyn Fn(InboxRequest) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
        + Send
        + Sync,
>;

#[derive(Clone)]
pub struct InboxStore {
    pool: SqlitePool,
    on_queued: Option<QueuedHook>,
}

type RequestRow = (
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

type AuditRow = (
    i64,
    String,
    Option<String>,
    String,
    String,
    String,
    String,
    String,
);

pub(crate) fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn parse_time(id: &str, text: &str) -> Result<DateTime<Utc>, InboxError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.to_utc())
        .map_err(|e| InboxError::Corrupt {
            id: id.to_owned(),
            why: format!("time '{text}': {e}"),
        })
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

impl InboxStore {
    /// Uses the shared `wyckoff.db` pool (runs this crate's migrations).
    pub async fn new(pool: SqlitePool) -> Result<InboxStore, InboxError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&pool).await?;
        Ok(InboxStore {
            pool,
            on_queued: None,
        })
    }

    /// Runs `hook` for every request this store (and its clones) queues.
    pub fn with_on_queued(mut self, hook: QueuedHook) -> InboxStore {
        self.on_queued = Some(hook);
        self
    }

    /// Stores a call as pending until `now + expiry`.
    pub async fn queue(
        &self,
        request: NewRequest,
        now: DateTime<Utc>,
        expiry: Duration,
    ) -> Result<InboxRequest, InboxError> {
        let id = format!("apr-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let expires = policy::expires_at(now, expiry);
        sqlx::query(
            "INSERT INTO approval_inbox (id, conversation_id, call_id, tool, display_name, args_json, preview_json, requested_by, created_at, expires_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')",
        )
        .bind(&id)
        .bind(&request.conversation_id)
        .bind(&request.call_id)
        .bind(&request.tool)
        .bind(&request.display_name)
        .bind(to_json(&request.args))
        .bind(request.preview.as_ref().map(to_json))
        .bind(&request.requested_by)
        .bind(stamp(now))
        .bind(stamp(expires))
        .execute(&self.pool)
        .await?;
        let queued = self.get(&id).await?;
        if let Some(hook) = &self.on_queued {
            hook(queued.clone()).await;
        }
        Ok(queued)
    }

    pub async fn get(&self, id: &str) -> Result<InboxRequest, InboxError> {
        let row: Option<RequestRow> = sqlx::query_as(
            "SELECT id, conversation_id, tool, display_name, args_json, preview_json, requested_by, created_at, expires_at, status, decided_at, decided_by_json, result FROM approval_inbox WHERE id = ?",
        )
        .bind(id.trim())
        .fetch_optional(&self.pool)
        .await?;
        row.map(request_of)
            .transpose()?
            .ok_or_else(|| InboxError::NotFound(id.trim().to_owned()))
    }

    /// Every request, newest first, each shown with its status at `now` (pending ones
    /// past their expiry show as expired).
    pub async fn list(&self, now: DateTime<Utc>) -> Result<Vec<InboxRequest>, InboxError> {
        let rows: Vec<RequestRow> = sqlx::query_as(
            "SELECT id, conversation_id, tool, display_name, args_json, preview_json, requested_by, created_at, expires_at, status, decided_at, decided_by_json, result FROM approval_inbox ORDER BY created_at DESC, id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|row| {
                let mut request = request_of(row)?;
                let expires = parse_time(&request.id, &request.expires_at)?;
                request.status = policy::status_at(request.status, expires, now);
                Ok(request)
            })
            .collect()
    }

    /// Answers a request at `now` by `by`: the new status (allowed, denied, or expired
    /// when the answer came too late) is stored with its audit line in one transaction.
    /// Unknown or already decided: an error, nothing changed.
    pub async fn answer(
        &self,
        id: &str,
        answer: Answer,
        by: Decider,
        now: DateTime<Utc>,
    ) -> Result<InboxRequest, InboxError> {
        let request = self.get(id).await?;
        let expires = parse_time(&request.id, &request.expires_at)?;
        let (status, by) = match policy::verdict(request.status, expires, now, answer) {
            Verdict::AlreadyDecided(status) => {
                return Err(InboxError::AlreadyDecided {
                    id: request.id,
                    status,
                });
            }
            Verdict::Expire => (InboxStatus::Expired, Decider::Expiry),
            Verdict::Apply(status) => (status, by),
        };
        let decision = match status {
            InboxStatus::Allowed => AuditDecision::Allowed,
            InboxStatus::Denied => AuditDecision::Denied,
            InboxStatus::Expired | InboxStatus::Pending => AuditDecision::Expired,
        };
        let mut tx = self.pool.begin().await?;
        // Only a pending row moves: a second process answering at the same time loses.
        let moved = sqlx::query(
            "UPDATE approval_inbox SET status = ?, decided_at = ?, decided_by_json = ? WHERE id = ? AND status = 'pending'",
        )
        .bind(status.as_str())
        .bind(stamp(now))
        .bind(to_json(&by))
        .bind(&request.id)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 0 {
            drop(tx);
            let now_status = self.get(&request.id).await?.status;
            return Err(InboxError::AlreadyDecided {
                id: request.id,
                status: now_status,
            });
        }
        insert_audit(
            &mut tx,
            now,
            Some(&request.conversation_id),
            &request.id,
            &request.tool,
            &request.args,
            decision,
            &by,
        )
        .await?;
        tx.commit().await?;
        self.get(&request.id).await
    }

    /// Keeps what an allowed call returned (as the model got it).
    pub async fn set_result(&self, id: &str, result: &str) -> Result<(), InboxError> {
        sqlx::query("UPDATE approval_inbox SET result = ? WHERE id = ?")
            .bind(result)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Adds one decision to the audit log (arguments masked).
    pub async fn record(&self, record: &AuditRecord, now: DateTime<Utc>) -> Result<(), InboxError> {
        let mut tx = self.pool.begin().await?;
        insert_audit(
            &mut tx,
            now,
            Some(&record.conversation_id),
            &record.call_id,
            &record.tool,
            &record.args,
            record.decision,
            &record.decided_by,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The audit log, oldest first.
    pub async fn log(&self) -> Result<Vec<AuditEntry>, InboxError> {
        let rows: Vec<AuditRow> = sqlx::query_as(
            "SELECT id, at, conversation_id, call_id, tool, args_json, decision, decided_by_json FROM approval_audit ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(
                |(id, at, conversation_id, call_id, tool, args, decision, by)| {
                    let corrupt = |why: String| InboxError::Corrupt {
                        id: format!("audit #{id}"),
                        why,
                    };
                    Ok(AuditEntry {
                        id,
                        at,
                        conversation_id,
                        call_id,
                        tool,
                        args: serde_json::from_str(&args).map_err(|e| corrupt(e.to_string()))?,
                        decision: AuditDecision::parse(&decision)
                            .ok_or_else(|| corrupt(format!("decision '{decision}'")))?,
                        decided_by: serde_json::from_str(&by)
                            .map_err(|e| corrupt(e.to_string()))?,
                    })
                },
            )
            .collect()
    }
}

#[allow(clippy::too_many_arguments)]
async fn insert_audit(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    now: DateTime<Utc>,
    conversation_id: Option<&str>,
    call_id: &str,
    tool: &str,
    args: &Value,
    decision: AuditDecision,
    by: &Decider,
) -> Result<(), InboxError> {
    let mut masked = args.clone();
    wyckoff_config::redact::redact_json(&mut masked);
    sqlx::query(
        "INSERT INTO approval_audit (at, conversation_id, call_id, tool, args_json, decision, decided_by_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(stamp(now))
    .bind(conversation_id)
    .bind(call_id)
    .bind(tool)
    .bind(to_json(&masked))
    .bind(decision.as_str())
    .bind(to_json(by))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

fn request_of(row: RequestRow) -> Result<InboxRequest, InboxError> {
    let (
        id,
        conversation_id,
        tool,
        display_name,
        args,
        preview,
        requested_by,
        created_at,
        expires_at,
        status,
        decided_at,
        decided_by,
        result,
    ) = row;
    let corrupt = |why: String| InboxError::Corrupt {
        id: id.clone(),
        why,
    };
    let args = serde_json::from_str(&args).map_err(|e| corrupt(format!("arguments: {e}")))?;
    let preview = preview
        .map(|p| serde_json::from_str(&p))
        .transpose()
        .map_err(|e| corrupt(format!("preview: {e}")))?;
    let status =
        InboxStatus::parse(&status).ok_or_else(|| corrupt(format!("status '{status}'")))?;
    let decided_by = decided_by
        .map(|d| serde_json::from_str(&d))
        .transpose()
        .map_err(|e| corrupt(format!("decided by: {e}")))?;
    Ok(InboxRequest {
        id,
        conversation_id,
        tool,
        display_name,
        args,
        preview,
        requested_by,
        created_at,
        expires_at,
        status,
        decided_at,
        decided_by,
        result,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    async fn store() -> (tempfile::TempDir, InboxStore) {
        let dir = tempfile::tempdir().unwrap();
        let pool = wyckoff_memory::open_pool(&dir.path().join("wyckoff.db"))
            .await
            .unwrap();
        (dir, InboxStore::new(pool).await.unwrap())
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn call(args: Value) -> NewRequest {
        NewRequest {
            conversation_id: "c1".into(),
            call_id: "call_1".into(),
            tool: "exec_command".into(),
            display_name: "执行命令".into(),
            args,
            preview: Some(ApprovalPreview::Command {
                command: "ls".into(),
                cwd: "/tmp".into(),
                timeout_secs: 60,
                detaches: vec![],
            }),
            requested_by: "schedule:close".into(),
        }
    }

    #[tokio::test]
    async fn keeps_exact_arguments_and_masks_them_in_the_log() {
        let (_dir, store) = store().await;
        let secret = "sk-live-abcdefghijklmnopqrstuvwx";
        let args = json!({"command": format!("curl -H 'Authorization: Bearer {secret}' x"), "api_key": secret});
        let now = at("2026-12-04T07:00:00Z");
        let queued = store
            .queue(call(args.clone()), now, policy::DEFAULT_EXPIRY)
            .await
            .unwrap();
        assert_eq!(queued.args, args);
        assert_eq!(queued.expires_at, "2026-12-05T07:00:00Z");
        assert_eq!(queued.requested_by, "schedule:close");
        assert!(matches!(
            queued.preview,
            Some(ApprovalPreview::Command { .. })
        ));
        let denied = store
            .answer(&queued.id, Answer::Deny, Decider::App, now)
            .await
            .unwrap();
        assert_eq!(denied.status, InboxStatus::Denied);
        assert_eq!(denied.decided_by, Some(Decider::App));
        let log = store.log().await.unwrap();
        assert_eq!(log.len(), 1);
        assert_eq!(log[0].decision, AuditDecision::Denied);
        let logged = log[0].args.to_string();
        assert!(!logged.contains(secret), "{logged}");
        // The inbox itself keeps what runs.
        assert_eq!(store.get(&queued.id).await.unwrap().args, args);
    }

    #[tokio::test]
    async fn answers_once_and_expire_at_the_limit() {
        let (_dir, store) = store().await;
        let now = at("2026-12-04T07:00:00Z");
        let hour = std::time::Duration::from_secs(3600);
        let a = store.queue(call(json!({})), now, hour).await.unwrap();
        let b = store.queue(call(json!({})), now, hour).await.unwrap();
        let limit = at("2026-12-04T08:00:00Z");
        assert_eq!(
            store
                .list(limit)
                .await
                .unwrap()
                .iter()
                .map(|r| r.status)
                .collect::<Vec<_>>(),
            vec![InboxStatus::Expired, InboxStatus::Expired]
        );
        let expired = store
            .answer(&a.id, Answer::Allow, Decider::Cli, limit)
            .await
            .unwrap();
        assert_eq!(expired.status, InboxStatus::Expired);
        assert_eq!(expired.decided_by, Some(Decider::Expiry));
        let allowed = store
            .answer(
                &b.id,
                Answer::Allow,
                Decider::Cli,
                limit - TimeDelta::seconds(1),
            )
            .await
            .unwrap();
        assert_eq!(allowed.status, InboxStatus::Allowed);
        for id in [&a.id, &b.id] {
            assert!(matches!(
                store.answer(id, Answer::Deny, Decider::Cli, now).await,
                Err(InboxError::AlreadyDecided { .. })
            ));
        }
        assert!(matches!(
            store
                .answer("apr-none", Answer::Allow, Decider::Cli, now)
                .await,
            Err(InboxError::NotFound(_))
        ));
        let decisions: Vec<(AuditDecision, Decider)> = store
            .log()
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.decision, e.decided_by))
            .collect();
        assert_eq!(
            decisions,
            vec![
                (AuditDecision::Expired, Decider::Expiry),
                (AuditDecision::Allowed, Decider::Cli)
            ]
        );
    }
}
