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

use crate::policy::{self, Answer, AnswerTime, Verdict};

#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    #[error("no approval request '{0}' (see `wyckoff approvals list`)")]
    NotFound(String),
    #[error("approval request '{id}' was already {}; nothing changed", status.as_str())]
    AlreadyDecided { id: String, status: InboxStatus },
    /// A precondition of running the allowed call failed: nothing was decided.
    #[error(
        "approval request '{id}' is still pending: the call cannot run now ({why}); nothing was decided, allow it again later"
    )]
    NotRun { id: String, why: String },
    /// What the call would do is not what was shown when it was queued: the request now
    /// shows what it would do, to be looked at and answered again.
    #[error(
        "approval request '{id}' is still pending: what it would do changed since it was queued; look at the new preview and allow it again if you still want it"
    )]
    PreviewChanged {
        id: String,
        /// Boxed: a preview is large and errors travel by value.
        preview: Option<Box<ApprovalPreview>>,
    },
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
            InboxError::NotFound(_)
                | InboxError::AlreadyDecided { .. }
                | InboxError::NotRun { .. }
                | InboxError::PreviewChanged { .. }
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
    Option<String>,
    String,
    String,
    String,
    String,
    String,
);

/// A decision as stored: the request after it, and the audit line it wrote (an allow
/// whose call could not run is taken back with it, see [`InboxStore::release`]).
#[derive(Debug, Clone)]
pub struct Answered {
    pub request: InboxRequest,
    audit_row: i64,
}

/// A decided request whose conversation has not been told yet.
#[derive(Debug, Clone)]
pub struct Untold {
    pub request: InboxRequest,
    /// Why it was denied, as the user said.
    pub reason: Option<String>,
}

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

    /// What answering request `id` would do at `at`, changing nothing: the request and
    /// the verdict. Unknown or already decided: an error.
    pub async fn verdict(
        &self,
        id: &str,
        answer: Answer,
        at: AnswerTime,
    ) -> Result<(InboxRequest, Verdict), InboxError> {
        let request = self.get(id).await?;
        let expires = parse_time(&request.id, &request.expires_at)?;
        match policy::verdict(request.status, expires, at.judged, answer) {
            Verdict::AlreadyDecided(status) => Err(InboxError::AlreadyDecided {
                id: request.id,
                status,
            }),
            verdict => Ok((request, verdict)),
        }
    }

    /// Answers a request by `by`: the new status (allowed, denied, or expired when the
    /// answer came too late, judged at `at.judged`) is stored with its audit line, both
    /// at the real time `at.recorded`, in one transaction. `reason`: why it was denied
    /// (kept for the conversation's notice). Unknown or already decided: an error,
    /// nothing changed.
    pub async fn answer(
        &self,
        id: &str,
        answer: Answer,
        by: Decider,
        reason: Option<&str>,
        at: AnswerTime,
    ) -> Result<Answered, InboxError> {
        let (request, verdict) = self.verdict(id, answer, at).await?;
        let (status, by) = match verdict {
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
        let reason = reason
            .map(str::trim)
            .filter(|r| !r.is_empty() && status == InboxStatus::Denied);
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        // Only a pending row moves: a second process answering at the same time loses.
        let moved = sqlx::query(
            "UPDATE approval_inbox SET status = ?, decided_at = ?, decided_by_json = ?, reason = ? WHERE id = ? AND status = 'pending'",
        )
        .bind(status.as_str())
        .bind(stamp(at.recorded))
        .bind(to_json(&by))
        .bind(reason)
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
        let call_id = self.call_id_in(&mut tx, &request.id).await?;
        let audit_row = insert_audit(
            &mut tx,
            at.recorded,
            Some(&request.conversation_id),
            Some(&request.id),
            &call_id,
            &request.tool,
            &request.args,
            decision,
            &by,
        )
        .await?;
        tx.commit().await?;
        Ok(Answered {
            request: self.get(&request.id).await?,
            audit_row,
        })
    }

    /// Takes back an allow whose call could not run (its conversation was busy, its
    /// session could not be opened): the request is pending again and the allow leaves
    /// the audit log, which records what took effect. Only an allow that has no result
    /// yet moves back.
    pub async fn release(&self, answered: &Answered) -> Result<(), InboxError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let moved = sqlx::query(
            "UPDATE approval_inbox SET status = 'pending', decided_at = NULL, decided_by_json = NULL, reason = NULL WHERE id = ? AND status = 'allowed' AND result IS NULL",
        )
        .bind(&answered.request.id)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 1 {
            sqlx::query("DELETE FROM approval_audit WHERE id = ?")
                .bind(answered.audit_row)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Shows `preview` with a pending request from now on (what it would do changed).
    pub async fn set_preview(
        &self,
        id: &str,
        preview: Option<&ApprovalPreview>,
    ) -> Result<(), InboxError> {
        sqlx::query(
            "UPDATE approval_inbox SET preview_json = ? WHERE id = ? AND status = 'pending'",
        )
        .bind(preview.map(to_json))
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Decided requests whose conversation has not been told yet, oldest decision first.
    /// Told means the conversation holds the notice (the follow-up turn stores it before
    /// the model is called), so this survives the process that decided: a decision made
    /// with no model to tell it, or whose process ended before its follow-up turn ran.
    /// An allowed call still running (no result yet) and deleted conversations are left
    /// out.
    pub async fn untold(&self) -> Result<Vec<Untold>, InboxError> {
        let rows: Vec<(String, Option<String>)> = sqlx::query_as(
            "SELECT i.id, i.reason \
             FROM approval_inbox i \
             WHERE i.status <> 'pending' AND i.decided_at IS NOT NULL \
             AND (i.status <> 'allowed' OR i.result IS NOT NULL) \
             AND EXISTS (SELECT 1 FROM conversation c WHERE c.id = i.conversation_id) \
             AND NOT EXISTS (SELECT 1 FROM conversation_message m \
                 WHERE m.conversation_id = i.conversation_id AND m.approval_notice IS NOT NULL \
                 AND json_extract(m.approval_notice, '$.request_id') = i.id) \
             ORDER BY i.decided_at, i.rowid",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut untold = Vec::with_capacity(rows.len());
        for (id, reason) in rows {
            untold.push(Untold {
                request: self.get(&id).await?,
                reason,
            });
        }
        Ok(untold)
    }

    /// The model's call id of request `id`.
    async fn call_id_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
        id: &str,
    ) -> Result<String, InboxError> {
        let (call_id,): (String,) =
            sqlx::query_as("SELECT call_id FROM approval_inbox WHERE id = ?")
                .bind(id)
                .fetch_one(&mut **tx)
                .await?;
        Ok(call_id)
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

    /// Adds one decision of a gate to the audit log (arguments masked). A queued call's
    /// line names the inbox request it became (queued just before, by this gate).
    pub async fn record(&self, record: &AuditRecord, now: DateTime<Utc>) -> Result<(), InboxError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let request_id: Option<String> = if record.decision == AuditDecision::Queued {
            sqlx::query_as::<_, (String,)>(
                "SELECT id FROM approval_inbox WHERE conversation_id = ? AND call_id = ? ORDER BY rowid DESC LIMIT 1",
            )
            .bind(&record.conversation_id)
            .bind(&record.call_id)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| r.0)
        } else {
            None
        };
        insert_audit(
            &mut tx,
            now,
            Some(&record.conversation_id),
            request_id.as_deref(),
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
            "SELECT id, at, conversation_id, request_id, call_id, tool, args_json, decision, decided_by_json FROM approval_audit ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(
                |(id, at, conversation_id, request_id, call_id, tool, args, decision, by)| {
                    let corrupt = |why: String| InboxError::Corrupt {
                        id: format!("audit #{id}"),
                        why,
                    };
                    Ok(AuditEntry {
                        id,
                        at,
                        conversation_id,
                        request_id,
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

/// One audit line; its row id.
#[allow(clippy::too_many_arguments)]
async fn insert_audit(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    now: DateTime<Utc>,
    conversation_id: Option<&str>,
    request_id: Option<&str>,
    call_id: &str,
    tool: &str,
    args: &Value,
    decision: AuditDecision,
    by: &Decider,
) -> Result<i64, InboxError> {
    let mut masked = args.clone();
    wyckoff_config::redact::redact_json(&mut masked);
    let row = sqlx::query(
        "INSERT INTO approval_audit (at, conversation_id, request_id, call_id, tool, args_json, decision, decided_by_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(stamp(now))
    .bind(conversation_id)
    .bind(request_id)
    .bind(call_id)
    .bind(tool)
    .bind(to_json(&masked))
    .bind(decision.as_str())
    .bind(to_json(by))
    .execute(&mut **tx)
    .await?;
    Ok(row.last_insert_rowid())
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
            .answer(
                &queued.id,
                Answer::Deny,
                Decider::App,
                None,
                AnswerTime::new(now, None),
            )
            .await
            .unwrap()
            .request;
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
            .answer(
                &a.id,
                Answer::Allow,
                Decider::Cli,
                None,
                AnswerTime::new(limit, None),
            )
            .await
            .unwrap()
            .request;
        assert_eq!(expired.status, InboxStatus::Expired);
        assert_eq!(expired.decided_by, Some(Decider::Expiry));
        let allowed = store
            .answer(
                &b.id,
                Answer::Allow,
                Decider::Cli,
                None,
                AnswerTime::new(limit - TimeDelta::seconds(1), None),
            )
            .await
            .unwrap()
            .request;
        assert_eq!(allowed.status, InboxStatus::Allowed);
        for id in [&a.id, &b.id] {
            assert!(matches!(
                store
                    .answer(
                        id,
                        Answer::Deny,
                        Decider::Cli,
                        None,
                        AnswerTime::new(now, None)
                    )
                    .await,
                Err(InboxError::AlreadyDecided { .. })
            ));
        }
        assert!(matches!(
            store
                .answer(
                    "apr-none",
                    Answer::Allow,
                    Decider::Cli,
                    None,
                    AnswerTime::new(now, None)
                )
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

    /// The gate's queued line and the inbox's decision line of one call both name the
    /// request and the model's call.
    #[tokio::test]
    async fn every_audit_line_of_a_call_names_its_request_and_its_call() {
        let (_dir, store) = store().await;
        let now = at("2026-12-04T07:00:00Z");
        let queued = store
            .queue(call(json!({"command": "ls"})), now, policy::DEFAULT_EXPIRY)
            .await
            .unwrap();
        let gate_line = AuditRecord {
            conversation_id: "c1".into(),
            call_id: "call_1".into(),
            tool: "exec_command".into(),
            args: json!({"command": "ls"}),
            decision: AuditDecision::Queued,
            decided_by: Decider::Policy {
                approve: "queue".into(),
            },
        };
        store.record(&gate_line, now).await.unwrap();
        // A dialog's decision has no request.
        let dialog = AuditRecord {
            call_id: "call_2".into(),
            decision: AuditDecision::Allowed,
            decided_by: Decider::Dialog,
            ..gate_line.clone()
        };
        store.record(&dialog, now).await.unwrap();
        store
            .answer(
                &queued.id,
                Answer::Deny,
                Decider::Cli,
                None,
                AnswerTime::new(now, None),
            )
            .await
            .unwrap();
        let ids: Vec<(Option<String>, String, AuditDecision)> = store
            .log()
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.request_id, e.call_id, e.decision))
            .collect();
        assert_eq!(
            ids,
            vec![
                (
                    Some(queued.id.clone()),
                    "call_1".into(),
                    AuditDecision::Queued
                ),
                (None, "call_2".into(), AuditDecision::Allowed),
                (Some(queued.id), "call_1".into(), AuditDecision::Denied),
            ]
        );
    }

    /// A back-dated answer is judged and recorded at the clock's time.
    #[tokio::test]
    async fn a_back_dated_answer_is_refused_and_recorded_at_the_real_time() {
        let (_dir, store) = store().await;
        let created = at("2026-12-04T07:00:00Z");
        let hour = std::time::Duration::from_secs(3600);
        let queued = store.queue(call(json!({})), created, hour).await.unwrap();
        let clock = at("2026-12-04T09:00:00Z");
        let back = AnswerTime::new(clock, Some(at("2020-01-01T00:00:00Z")));
        let (_, verdict) = store
            .verdict(&queued.id, Answer::Allow, back)
            .await
            .unwrap();
        assert_eq!(verdict, Verdict::Expire);
        let answered = store
            .answer(&queued.id, Answer::Allow, Decider::Cli, None, back)
            .await
            .unwrap()
            .request;
        assert_eq!(answered.status, InboxStatus::Expired);
        assert_eq!(answered.decided_at.as_deref(), Some("2026-12-04T09:00:00Z"));
        assert_eq!(store.log().await.unwrap()[0].at, "2026-12-04T09:00:00Z");
    }

    /// An allow whose call could not run goes back to pending and out of the log; a
    /// denial keeps its reason.
    #[tokio::test]
    async fn a_released_allow_is_pending_again_and_a_reason_is_kept() {
        let (_dir, store) = store().await;
        let now = at("2026-12-04T07:00:00Z");
        let time = AnswerTime::new(now, None);
        let a = store
            .queue(call(json!({})), now, policy::DEFAULT_EXPIRY)
            .await
            .unwrap();
        let allowed = store
            .answer(&a.id, Answer::Allow, Decider::Cli, None, time)
            .await
            .unwrap();
        store.release(&allowed).await.unwrap();
        let again = store.get(&a.id).await.unwrap();
        assert_eq!(again.status, InboxStatus::Pending);
        assert_eq!(again.decided_at, None);
        assert!(store.log().await.unwrap().is_empty());
        // Allowed again, it holds; a release after the call ran changes nothing.
        let allowed = store
            .answer(&a.id, Answer::Allow, Decider::Cli, None, time)
            .await
            .unwrap();
        store.set_result(&a.id, "ran").await.unwrap();
        store.release(&allowed).await.unwrap();
        assert_eq!(store.get(&a.id).await.unwrap().status, InboxStatus::Allowed);
        assert_eq!(store.log().await.unwrap().len(), 1);

        let b = store
            .queue(call(json!({})), now, policy::DEFAULT_EXPIRY)
            .await
            .unwrap();
        store
            .answer(&b.id, Answer::Deny, Decider::Cli, Some(" 先不动 "), time)
            .await
            .unwrap();
        // No conversation `c1` exists: nothing to tell.
        assert!(store.untold().await.unwrap().is_empty());
        sqlx::query("INSERT INTO conversation (id, created_at, updated_at) VALUES ('c1', '', '')")
            .execute(&store.pool)
            .await
            .unwrap();
        let untold: Vec<(String, Option<String>)> = store
            .untold()
            .await
            .unwrap()
            .into_iter()
            .map(|u| (u.request.id, u.reason))
            .collect();
        assert_eq!(
            untold,
            vec![(a.id.clone(), None), (b.id.clone(), Some("先不动".into()))]
        );
        // Told: the conversation holds the notice.
        let notice = serde_json::json!({"request_id": b.id});
        sqlx::query("INSERT INTO conversation_message (conversation_id, seq, role, message, created_at, approval_notice) VALUES ('c1', 1, 'user', '{}', '', ?)")
            .bind(notice.to_string())
            .execute(&store.pool)
            .await
            .unwrap();
        let untold: Vec<String> = store
            .untold()
            .await
            .unwrap()
            .into_iter()
            .map(|u| u.request.id)
            .collect();
        assert_eq!(untold, vec![a.id]);
    }
}
