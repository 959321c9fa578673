//! Retention for what grows without bound in the data home: scratchpads, offloaded tool
//! results, compaction archives and finished background-task rows older than
//! `retention_days` are removed at start-up — never a file a stored conversation still
//! points to (a tool result whose `result_ref` is in one of its messages; the archives of
//! a conversation that still exists), never a running task, and never a task whose id is
//! in a stored message of its conversation (the tool's `task_id`, its notification).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sqlx::SqlitePool;

/// Prefix of an offloaded tool result's reference in a message (`tool-result://<file>`).
const RESULT_REF: &str = "tool-result://";

/// What a pass removed (and kept because a conversation points to it).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RetentionReport {
    pub removed: Vec<PathBuf>,
    /// Ids of the background-task rows removed.
    pub removed_tasks: Vec<String>,
    /// Expired files and task rows kept because a stored conversation points to them.
    pub kept_referenced: usize,
}

/// Tool-result references (`tool-result://<file>`) found in stored messages, and the ids
/// of the conversations that exist.
async fn referenced(pool: &SqlitePool) -> Result<(HashSet<String>, HashSet<String>), sqlx::Error> {
    let mut refs = HashSet::new();
    let texts: Vec<String> = sqlx::query_scalar(
        "SELECT message FROM conversation_message WHERE message LIKE '%tool-result://%'",
    )
    .fetch_all(pool)
    .await?;
    for text in texts {
        let mut rest = text.as_str();
        while let Some(i) = rest.find(RESULT_REF) {
            let tail = &rest[i + RESULT_REF.len()..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
                .unwrap_or(tail.len());
            refs.insert(tail[..end].to_owned());
            rest = &tail[end..];
        }
    }
    let conversations: Vec<String> = sqlx::query_scalar("SELECT id FROM conversation")
        .fetch_all(pool)
        .await?;
    Ok((refs, conversations.into_iter().collect()))
}

/// Removes finished background-task rows that finished before `cutoff`, unless a stored
/// message of the task's conversation names the task. Running rows are never touched; a
/// database without the task table (first start) has nothing to remove.
async fn prune_tasks(
    pool: &SqlitePool,
    cutoff: SystemTime,
    report: &mut RetentionReport,
) -> Result<(), sqlx::Error> {
    let has_table: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'agent_background_task'",
    )
    .fetch_one(pool)
    .await?;
    if has_table == 0 {
        return Ok(());
    }
    let cutoff = chrono::DateTime::<chrono::Utc>::from(cutoff);
    let finished: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT task_id, session_id, finished_at FROM agent_background_task WHERE status IN ('completed', 'failed', 'cancelled')",
    )
    .fetch_all(pool)
    .await?;
    for (task_id, session_id, finished_at) in finished {
        let expired = finished_at
            .as_deref()
            .and_then(|f| chrono::DateTime::parse_from_rfc3339(f).ok())
            .is_some_and(|f| f < cutoff);
        if !expired {
            continue;
        }
        let referenced = match &session_id {
            Some(conversation) => {
                let hits: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM conversation_message WHERE conversation_id = ? AND instr(message, ?) > 0",
                )
                .bind(conversation)
                .bind(&task_id)
                .fetch_one(pool)
                .await?;
                hits > 0
            }
            None => false,
        };
        if referenced {
            report.kept_referenced += 1;
            continue;
        }
        sqlx::query("DELETE FROM agent_background_task WHERE task_id = ? AND status IN ('completed', 'failed', 'cancelled')")
            .bind(&task_id)
            .execute(pool)
            .await?;
        report.removed_tasks.push(task_id);
    }
    Ok(())
}

fn older_than(path: &Path, cutoff: SystemTime) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t < cutoff)
}

fn files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default()
}

/// Removes expired files under `root` (the data home): `scratchpad/*`,
/// `tool-results/*.json` no stored message refers to, and `context-archive/<conversation>/*`
/// of conversations that no longer exist. `now` and `days` come from the caller.
pub async fn prune(
    root: &Path,
    pool: &SqlitePool,
    now: SystemTime,
    days: u32,
) -> Result<RetentionReport, sqlx::Error> {
    let cutoff = now
        .checked_sub(Duration::from_secs(u64::from(days) * 86_400))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let (refs, conversations) = referenced(pool).await?;
    let mut report = RetentionReport::default();
    let remove = |path: PathBuf, report: &mut RetentionReport| match std::fs::remove_file(&path) {
        Ok(()) => report.removed.push(path),
        Err(e) => tracing::warn!("retention: cannot remove {}: {e}", path.display()),
    };

    for path in files(&root.join("scratchpad")) {
        if older_than(&path, cutoff) {
            remove(path, &mut report);
        }
    }
    for path in files(&root.join("tool-results")) {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        // The index lists what was offloaded; it is small and kept.
        if !name.ends_with(".json") || !older_than(&path, cutoff) {
            continue;
        }
        if refs.contains(name) {
            report.kept_referenced += 1;
        } else {
            remove(path, &mut report);
        }
    }
    let archives = root.join("context-archive");
    for dir in std::fs::read_dir(&archives).into_iter().flatten().flatten() {
        let dir = dir.path();
        let Some(conversation) = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        for path in files(&dir) {
            if !older_than(&path, cutoff) {
                continue;
            }
            if conversations.contains(&conversation) {
                report.kept_referenced += 1;
            } else {
                remove(path, &mut report);
            }
        }
        // An emptied folder goes too (ignore the error when it is not empty).
        let _ = std::fs::remove_dir(&dir);
    }
    prune_tasks(pool, cutoff, &mut report).await?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn touch(path: &Path, age_days: u64, now: SystemTime) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(now - Duration::from_secs(age_days * 86_400))
            .unwrap();
    }

    #[tokio::test]
    async fn old_files_go_unless_a_stored_conversation_points_to_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let pool = wyckoff_memory::open_pool(root.join("wyckoff.db"))
            .await
            .unwrap();
        let store = wyckoff_memory::ConversationStore::new(pool.clone());
        let kept = store.create("kept", "m").await.unwrap();
        store
            .append_message(
                &kept.id,
                None,
                &wyckoff_protocol::Message::user(
                    "result_ref: tool-result://bg_1_screen_stocks_a1.json\n",
                ),
            )
            .await
            .unwrap();
        let now = SystemTime::now();
        let cases = [
            ("scratchpad/old.jsonl", 40, false),
            ("scratchpad/new.jsonl", 2, true),
            ("tool-results/bg_1_screen_stocks_a1.json", 40, true), // referenced
            ("tool-results/orphan.json", 40, false),
            ("tool-results/fresh.json", 1, true),
            ("tool-results/index.jsonl", 90, true),
            (
                &format!("context-archive/{}/ctx_1.jsonl", kept.id),
                40,
                true,
            ),
            ("context-archive/gone-conversation/ctx_2.jsonl", 40, false),
        ];
        for (path, age, _) in &cases {
            touch(&root.join(path), *age, now);
        }
        let report = prune(root, &pool, now, 30).await.unwrap();
        for (path, _, stays) in &cases {
            assert_eq!(root.join(path).exists(), *stays, "{path}");
        }
        assert_eq!(report.removed.len(), 3);
        assert_eq!(report.kept_referenced, 2);
        assert!(!root.join("context-archive/gone-conversation").exists());
    }

    #[tokio::test]
    async fn old_finished_task_rows_go_unless_running_recent_or_named_by_their_conversation() {
        let dir = tempfile::tempdir().unwrap();
        let pool = wyckoff_memory::open_pool(dir.path().join("wyckoff.db"))
            .await
            .unwrap();
        // The manager creates the task table (and would mark running rows interrupted, so
        // the rows go in after it opened).
        let clock: Arc<dyn wyckoff_agent::Clock> = Arc::new(wyckoff_agent::SystemClock);
        wyckoff_agent::BackgroundTaskManager::with_pool(pool.clone(), clock.clone(), None)
            .await
            .unwrap();
        let store = wyckoff_memory::ConversationStore::new(pool.clone());
        let chat = store.create("chat", "m").await.unwrap();
        store
            .append_message(
                &chat.id,
                None,
                &wyckoff_protocol::Message::user(
                    r#"{"status":"background","task_id":"bg_named_screen_stocks"}"#,
                ),
            )
            .await
            .unwrap();
        let now = SystemTime::now();
        let days_ago = |d: u64| {
            chrono::DateTime::<chrono::Utc>::from(now - Duration::from_secs(d * 86_400))
                .to_rfc3339()
        };
        // (task, conversation, status, finished days ago, stays)
        type Row<'a> = (&'a str, Option<&'a str>, &'a str, Option<u64>, bool);
        let rows: [Row; 7] = [
            (
                "bg_old_user_run_backtest",
                None,
                "completed",
                Some(40),
                false,
            ),
            (
                "bg_named_screen_stocks",
                Some(&chat.id),
                "completed",
                Some(40),
                true,
            ),
            (
                "bg_unnamed_screen_stocks",
                Some(&chat.id),
                "failed",
                Some(40),
                false,
            ),
            (
                "bg_gone_generate_ai_report",
                Some("deleted-chat"),
                "cancelled",
                Some(31),
                false,
            ),
            ("bg_running_run_backtest", None, "running", None, true),
            ("bg_queued_run_backtest", None, "queued", None, true),
            ("bg_recent_screen_stocks", None, "completed", Some(2), true),
        ];
        for (task, conversation, status, finished, _) in &rows {
            sqlx::query(
                "INSERT INTO agent_background_task (task_id, session_id, tool_name, display_name, status, started_at, finished_at, result_json) VALUES (?, ?, 'screen_stocks', '扫描', ?, ?, ?, '{\"candidates\":[]}')",
            )
            .bind(task)
            .bind(conversation)
            .bind(status)
            .bind(days_ago(45))
            .bind(finished.map(days_ago))
            .execute(&pool)
            .await
            .unwrap();
        }

        let report = prune(dir.path(), &pool, now, 30).await.unwrap();

        let left: Vec<String> =
            sqlx::query_scalar("SELECT task_id FROM agent_background_task ORDER BY task_id")
                .fetch_all(&pool)
                .await
                .unwrap();
        for (task, _, _, _, stays) in &rows {
            assert_eq!(left.contains(&task.to_string()), *stays, "{task}");
        }
        let mut removed = report.removed_tasks.clone();
        removed.sort();
        assert_eq!(
            removed,
            vec![
                "bg_gone_generate_ai_report",
                "bg_old_user_run_backtest",
                "bg_unnamed_screen_stocks"
            ]
        );
        assert_eq!(report.kept_referenced, 1);
    }

    #[tokio::test]
    async fn a_database_without_the_task_table_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        let pool = wyckoff_memory::open_pool(dir.path().join("wyckoff.db"))
            .await
            .unwrap();
        let report = prune(dir.path(), &pool, SystemTime::now(), 30)
            .await
            .unwrap();
        assert!(report.removed_tasks.is_empty());
    }
}
