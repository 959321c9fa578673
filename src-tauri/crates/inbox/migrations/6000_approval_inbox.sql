-- The approval inbox (issue 24): a call that needs approval, made in a run with nobody to
-- ask, waits here with its exact arguments until it is allowed, denied or expires.
CREATE TABLE IF NOT EXISTS approval_inbox (
    id TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL,
    -- The model's tool call id in that conversation.
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    display_name TEXT NOT NULL,
    args_json TEXT NOT NULL,
    preview_json TEXT,
    -- `conversation`, or `schedule:NAME` for a schedule's run.
    requested_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    decided_at TEXT,
    decided_by_json TEXT,
    result TEXT
);
CREATE INDEX IF NOT EXISTS approval_inbox_status ON approval_inbox (status, created_at);

-- Every approval decision from every path (dialog, always-allow, --approve, the inbox,
-- expiry). Arguments are stored with secrets masked.
CREATE TABLE IF NOT EXISTS approval_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    conversation_id TEXT,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_json TEXT NOT NULL,
    decision TEXT NOT NULL,
    decided_by_json TEXT NOT NULL
);
