-- Background task results (seed §7), so a restart loses nothing.
CREATE TABLE IF NOT EXISTS agent_background_task (
    task_id       TEXT PRIMARY KEY,
    session_id    TEXT,
    tool_name     TEXT NOT NULL,
    display_name  TEXT NOT NULL,
    status        TEXT NOT NULL,
    progress_json TEXT NOT NULL DEFAULT '{}',
    started_at    TEXT NOT NULL,
    finished_at   TEXT,
    result_json   TEXT,
    summary       TEXT,
    error         TEXT,
    -- 1 once the completion notification reached a turn.
    notified      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS idx_agent_background_task_session
    ON agent_background_task (session_id, started_at);
